//! Template expressions (`{{ … }}`) kept whole through the shell parser:
//! masked as placeholders the shell reads as word characters, and put back
//! in the words read.

/// Template expressions (`{{ … }}`) replaced by placeholders the shell
/// reads as plain word characters, and the expressions by placeholder.
pub(super) fn mask_templates(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut templates = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let expr = &rest[start..start + len + 2];
        out.push_str(&rest[..start]);
        out.push_str(&format!("\u{E000}{}\u{E001}", templates.len()));
        // Keep the line count: a template across lines keeps its newlines.
        for _ in expr.matches('\n') {
            out.push('\n');
        }
        templates.push(expr.to_string());
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    (out, templates)
}

/// Puts the template expressions back.
pub(super) fn unmask(text: &str, templates: &[String]) -> String {
    if !text.contains('\u{E000}') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('\u{E000}') {
        out.push_str(&rest[..start]);
        let after = &rest[start + '\u{E000}'.len_utf8()..];
        let Some(end) = after.find('\u{E001}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        match after[..end]
            .parse::<usize>()
            .ok()
            .and_then(|i| templates.get(i))
        {
            Some(t) => out.push_str(t),
            None => out.push_str(&rest[start..start + '\u{E000}'.len_utf8() + end]),
        }
        rest = &after[end + '\u{E001}'.len_utf8()..];
    }
    out.push_str(rest);
    out
}
