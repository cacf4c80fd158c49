//! A word as the shell passes it on: quotes removed, and the command
//! substitutions (`$( … )`) inside it.

/// The texts of a word's command substitutions (`$( … )`, not
/// arithmetic `$(( … ))`), outermost only.
pub(super) fn substitutions(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = word.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'$' && bytes[i + 1] == b'(' && bytes.get(i + 2) != Some(&b'(') {
            let start = i + 2;
            let mut depth = 1usize;
            let mut j = start;
            let mut quote: Option<u8> = None;
            while j < bytes.len() {
                match (quote, bytes[j]) {
                    (Some(q), c) if c == q => quote = None,
                    (Some(_), _) => {}
                    (None, b'\'' | b'"') => quote = Some(bytes[j]),
                    (None, b'(') => depth += 1,
                    (None, b')') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if depth == 0 {
                out.push(&word[start..j]);
            }
            i = j + 1;
            continue;
        }
        i += 1;
    }
    out
}

/// A word with its quotes and escapes removed, the way the shell passes it
/// on: `'…'` literal, `"…"` with `\"`, `\\`, `\$` unescaped, and `$(…)`,
/// `${…}` kept whole.
pub(super) fn unquote(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), c) => out.push(c),
            (Some('"'), '"') => quote = None,
            (Some('"'), '\\') => match chars.peek() {
                Some(&n) if matches!(n, '"' | '\\' | '$' | '`') => {
                    out.push(n);
                    chars.next();
                }
                _ => out.push('\\'),
            },
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            (None, '\'' | '"') => quote = Some(c),
            (None, '$') if chars.peek() == Some(&'\'') => {
                // $'…': ANSI-C quoting, read as a literal.
                chars.next();
                quote = Some('\'');
            }
            (_, c) => out.push(c),
        }
    }
    out
}
