//! The shell lexer the command recognition reads: a line into words
//! (quotes kept together, `=` forms split) and a flag's value.

/// Splits a command line into words (quotes kept together, `=` forms
/// split).
pub(super) fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    // Inside `{{ … }}` (a template expression) or `$( … )`, spaces do not
    // split: the closers still expected.
    let mut open: Vec<&str> = Vec::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '{' && next == Some('{') {
            open.push("}}");
            word.push_str("{{");
            i += 2;
            continue;
        }
        if c == '}' && next == Some('}') && open.last() == Some(&"}}") {
            open.pop();
            word.push_str("}}");
            i += 2;
            continue;
        }
        if c == '(' && (next.is_some() && (word.ends_with('$') || open.last() == Some(&")"))) {
            open.push(")");
            word.push('(');
            i += 1;
            continue;
        }
        if c == ')' && open.last() == Some(&")") {
            open.pop();
            word.push(')');
            i += 1;
            continue;
        }
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, c) if c.is_whitespace() && open.is_empty() => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            (None, c) => word.push(c),
        }
        i += 1;
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The value of a flag in a command's words: `-f X`, `--file X`, `--file=X`.
pub(super) fn flag(words: &[String], short: &[&str], long: &str) -> Option<String> {
    for (i, w) in words.iter().enumerate() {
        if short.contains(&w.as_str()) || w == long {
            return words.get(i + 1).cloned();
        }
        if let Some(v) = w.strip_prefix(&format!("{long}=")) {
            return Some(v.to_string());
        }
    }
    None
}
