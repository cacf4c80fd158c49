//! What a walk has bound: a function's positional parameters and the
//! loop variables of the iteration being read, and a word with them put in.

/// Positional parameters and loop variables bound while walking.
#[derive(Debug, Clone, Default)]
pub(super) struct Bindings {
    /// `$1`… of the function being read, when called with known arguments.
    pub(super) positional: Option<Vec<String>>,
    /// Loop variables and their value in this unrolled iteration.
    pub(super) vars: Vec<(String, String)>,
}

impl Bindings {
    /// A word with the bound parameters and variables put in.
    pub(super) fn apply(&self, word: &str) -> String {
        if !word.contains('$') {
            return word.to_string();
        }
        let mut w = word.to_string();
        // The innermost (latest) binding of a name wins.
        for (name, value) in self.vars.iter().rev() {
            w = replace_var(&w, name, value);
        }
        if let Some(args) = &self.positional {
            for (i, value) in args.iter().enumerate().take(9).rev() {
                w = replace_var(&w, &(i + 1).to_string(), value);
            }
            if w.contains("$@") || w.contains("${@}") || w.contains("$*") {
                let all = args.join(" ");
                w = w
                    .replace("${@}", &all)
                    .replace("$@", &all)
                    .replace("$*", &all);
            }
        }
        w
    }
}

/// `$NAME`, `${NAME}` and `${NAME:…}` (a default or a check, moot once
/// the value is known) replaced by `value`.
fn replace_var(word: &str, name: &str, value: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(inner) = after.strip_prefix('{')
            && let Some(body) = inner.strip_prefix(name)
            && (body.starts_with('}') || body.starts_with(':'))
            && let Some(close) = body.find('}')
        {
            out.push_str(value);
            rest = &body[close + 1..];
            continue;
        }
        if let Some(body) = after.strip_prefix(name)
            && !body.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            out.push_str(value);
            rest = body;
            continue;
        }
        out.push('$');
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Whether a word still names a positional parameter (`$1`, `${2:-x}`,
/// `$@`, `$*`).
pub(super) fn has_positional(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, b)| {
        *b == b'$'
            && match bytes.get(i + 1) {
                Some(b'{') => bytes
                    .get(i + 2)
                    .is_some_and(|c| c.is_ascii_digit() || *c == b'@' || *c == b'*'),
                Some(c) => c.is_ascii_digit() || *c == b'@' || *c == b'*',
                None => false,
            }
    })
}
