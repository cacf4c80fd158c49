//! A helmfile's Go templating, rendered far enough to read the YAML it
//! yields. helmfile renders a state file (`.gotmpl`, and in helmfile v0
//! every `helmfile.yaml`) with text/template and sprig before parsing it
//! (`state.go` → `tmpl.NewFileRenderer(…).RenderTemplateContentToBuffer`),
//! with `.Values` / `.StateValues` / `.Environment.Values` the environment's
//! values and `.Environment.Name` its name.
//!
//! What is rendered here, line numbers kept:
//! * comments and actions that print nothing (`if`, `else`, `end`,
//!   `range`, `with`, `define`, `$x := …`) are removed, and a line left
//!   blank by that is emptied: both branches of an `if` stay, which is what
//!   a reader of "what could this install" wants;
//! * an action that prints a value the file states (`.Values.a.b`, a
//!   quoted literal, `env "X" | default "y"`, `.Environment.Name`), with
//!   `default`, `quote`, `lower`, `upper`, `trim`, is replaced by it;
//! * any other printing action is replaced by [`UNKNOWN`], a plain scalar
//!   the readers treat as "not known before helmfile runs".

use crate::yaml::{Node, Value};

/// What an action that cannot be rendered here prints.
pub(crate) const UNKNOWN: &str = "__helmfile_template__";

/// Whether a value holds something only helmfile could render.
pub(crate) fn is_unknown(text: &str) -> bool {
    text.contains(UNKNOWN) || text.contains("{{")
}

/// Renders `text` with the environment's `values` (a mapping, possibly
/// empty) and name.
pub fn render(text: &str, values: &Node, environment: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // Whether the current output line held only actions that print nothing.
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let inner = &after[..close];
        // Keep the action's own line breaks, so lines still count.
        let breaks = inner.matches('\n').count();
        let action = inner.trim_start_matches('-').trim_end_matches('-').trim();
        let printed = print(action, values, environment);
        match printed {
            Some(p) => out.push_str(&p),
            None => out.push('\u{0}'),
        }
        for _ in 0..breaks {
            out.push('\n');
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    // A line left with only non-printing actions and blanks is emptied.
    let mut lines: Vec<String> = Vec::new();
    for line in out.split('\n') {
        let bare = line.replace('\u{0}', "");
        // Emptied: a line of actions that print nothing, and one whose
        // only content is an unknown (a `toYaml … | nindent N` block).
        if (line.contains('\u{0}') && bare.trim().is_empty()) || bare.trim() == UNKNOWN {
            lines.push(String::new());
        } else {
            lines.push(bare);
        }
    }
    lines.join("\n")
}

/// What an action prints: `None` for one that prints nothing.
fn print(action: &str, values: &Node, environment: &str) -> Option<String> {
    if action.starts_with("/*") {
        return None;
    }
    let first = action.split_whitespace().next().unwrap_or_default();
    const SILENT: &[&str] = &[
        "if", "else", "end", "range", "with", "define", "block", "break", "continue",
    ];
    if SILENT.contains(&first)
        || action.contains(":=")
        || (first.starts_with('$') && action.contains(" = "))
    {
        return None;
    }
    if first == "template"
        || first == "include"
        || first == "tpl"
        || first == "readFile"
        || first == "exec"
    {
        return Some(UNKNOWN.to_string());
    }
    Some(evaluate(action, values, environment).unwrap_or_else(|| UNKNOWN.to_string()))
}

/// The value of a pipeline, when it is one this renderer knows.
fn evaluate(action: &str, values: &Node, environment: &str) -> Option<String> {
    let stages = split_pipeline(action);
    let (head, rest) = stages.split_first()?;
    let mut value: Option<String> = operand(head, values, environment);
    for stage in rest {
        let words = arguments(stage);
        let (name, args) = words.split_first()?;
        value = match name.as_str() {
            "default" => {
                let fallback = operand(args.first()?, values, environment);
                match value {
                    Some(v) if !v.is_empty() => Some(v),
                    _ => fallback,
                }
            }
            "quote" | "squote" => value,
            "lower" => value.map(|v| v.to_lowercase()),
            "upper" => value.map(|v| v.to_uppercase()),
            "trim" => value.map(|v| v.trim().to_string()),
            "toString" => value,
            _ => return None,
        };
    }
    value
}

/// One operand: a quoted literal, `.Values…`, `.Environment.Name`,
/// `env "X"` / `requiredEnv "X"` (unknown: the environment is the
/// runner's), a number or boolean.
fn operand(text: &str, values: &Node, environment: &str) -> Option<String> {
    let t = text
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    if let Some(lit) = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| t.strip_prefix('`').and_then(|s| s.strip_suffix('`')))
    {
        return Some(lit.to_string());
    }
    if t == ".Environment.Name" {
        return Some(environment.to_string());
    }
    let path = t
        .strip_prefix(".Values.")
        .or_else(|| t.strip_prefix(".StateValues."))
        .or_else(|| t.strip_prefix(".Environment.Values."))
        .or_else(|| t.strip_prefix("$.Values."));
    if let Some(path) = path {
        let keys: Vec<&str> = path.split('.').collect();
        let node = values.path(&keys)?;
        return match &node.value {
            Value::Map(_) | Value::Seq(_) | Value::Null => None,
            _ => node.as_scalar_string(),
        };
    }
    if t == "true" || t == "false" || t.parse::<f64>().is_ok() {
        return Some(t.to_string());
    }
    None
}

/// A pipeline's stages, split at `|` outside quotes.
fn split_pipeline(action: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quote: Option<char> = None;
    for c in action.chars() {
        match (quote, c) {
            (None, '"' | '`') => {
                quote = Some(c);
                out.last_mut().expect("one").push(c);
            }
            (Some(q), _) if q == c => {
                quote = None;
                out.last_mut().expect("one").push(c);
            }
            (None, '|') => out.push(String::new()),
            _ => out.last_mut().expect("one").push(c),
        }
    }
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

/// A stage's words, a quoted literal kept whole.
fn arguments(stage: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in stage.chars() {
        match (quote, c) {
            (None, '"' | '`') => {
                quote = Some(c);
                current.push(c);
            }
            (Some(q), _) if q == c => {
                quote = None;
                current.push(c);
            }
            (None, c) if c.is_whitespace() => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> Node {
        crate::yaml::parse_text("charts:\n  cilium: oci://ghcr.io/x/cilium\ncrds: false\n")
            .expect("yaml")
            .remove(0)
    }

    #[test]
    fn control_lines_are_emptied_and_lines_kept() {
        let text = "releases:\n{{- if eq .Environment.Name \"default\" }}\n- name: a\n  chart: {{ .Values.charts.cilium }}\n{{ end }}\n- name: b\n  installed: {{ .Values.crds }}\n  version: {{ env \"V\" | default \"1.2.3\" }}\n  x: {{ toYaml .Values | nindent 4 }}\n  y:\n    {{ toYaml .Values | nindent 4 }}\n";
        let got = render(text, &values(), "default");
        assert_eq!(
            got,
            "releases:\n\n- name: a\n  chart: oci://ghcr.io/x/cilium\n\n- name: b\n  installed: false\n  version: 1.2.3\n  x: __helmfile_template__\n  y:\n\n"
        );
    }

    #[test]
    fn unknowns_and_comments() {
        let empty = Node::new(Value::Null);
        assert_eq!(
            render("a: {{ requiredEnv \"X\" }}", &empty, "default"),
            "a: __helmfile_template__"
        );
        assert_eq!(
            render("{{/* note\nmore */}}\na: 1", &empty, "default"),
            "\n\na: 1"
        );
        assert_eq!(render("{{ $x := 1 }}a: b", &empty, "default"), "a: b");
        assert_eq!(
            render(
                "a: {{ .Values.missing | default \"x\" | quote }}",
                &empty,
                "default"
            ),
            "a: x"
        );
    }
}
