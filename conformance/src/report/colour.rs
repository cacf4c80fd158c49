//! Colour for the human report on a terminal: the severity of each block,
//! its place and its fix, the summary in bold. Painted on the finished,
//! already escaped text ([`super::text_safe`]), so no repository text can
//! carry an escape sequence of its own; `NO_COLOR` (no-color.org) and
//! `TERM=dumb` turn it off.

use std::io::IsTerminal as _;

/// When to colour (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// On a terminal, unless `NO_COLOR` is set (to anything but empty) or
    /// `TERM` is `dumb`.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl When {
    /// Whether stdout is to be coloured.
    pub fn wanted(self) -> bool {
        match self {
            When::Always => true,
            When::Never => false,
            When::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const CYAN: &str = "\x1b[36m";
const GREEN: &str = "\x1b[32m";
const BLUE: &str = "\x1b[34m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// The human report with colour.
pub fn paint(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        out.push_str(&paint_line(body));
        out.push_str(end);
    }
    out
}

/// One line: what it starts with says what it is.
fn paint_line(line: &str) -> String {
    for (word, colour) in [("error", RED), ("warning", YELLOW), ("waived", CYAN)] {
        if let Some(rest) = line.strip_prefix(word)
            && rest.starts_with('[')
        {
            return format!("{colour}{word}{RESET}{BOLD}{rest}{RESET}");
        }
    }
    if line.starts_with("summary:") || line.starts_with("checked ") {
        return format!("{BOLD}{line}{RESET}");
    }
    if let Some(rest) = line.strip_prefix("  --> ") {
        return format!("  {BLUE}-->{RESET} {rest}");
    }
    for label in ["  = fix (one cause, one fix):", "  = fix:"] {
        if let Some(rest) = line.strip_prefix(label) {
            return format!("{GREEN}{label}{RESET}{rest}");
        }
    }
    if line.starts_with("  = why:") || line.starts_with("    … and ") {
        return format!("{DIM}{line}{RESET}");
    }
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_and_places_are_painted_and_text_is_kept() {
        let text = "summary: 1 error\nerror[dependency-missing]: c/k: x\n  --> a.yaml:3\n  = fix: add it\nplain\n";
        let painted = paint(text);
        assert!(painted.contains("\x1b[1;31merror\x1b[0m\x1b[1m[dependency-missing]"));
        assert!(painted.contains("\x1b[32m  = fix:\x1b[0m add it"));
        let plain: String = {
            let re = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
            re.replace_all(&painted, "").into_owned()
        };
        assert_eq!(plain, text);
    }

    #[test]
    fn never_is_never() {
        assert!(!When::Never.wanted());
        assert!(When::Always.wanted());
    }
}
