//! A text into the commands the shell runs ([`units`]), and the values its
//! loop variables take ([`loop_values`]).

use std::collections::BTreeMap;

use super::super::shell::{self, Stage, Unit};
use super::super::words::words;

/// The commands of a text, as the shell runs them: parsed whole (a
/// script, a Taskfile command, a documented step); a justfile or Makefile
/// one recipe line at a time (each line its own shell); a line the parser
/// refuses split at `;`, `&&`, `||` and `|` (continuations joined).
pub(super) fn units(rel: &str, text: &str) -> Vec<Unit> {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase();
    let per_line = name == "justfile"
        || name == ".justfile"
        || name.ends_with(".just")
        || name == "makefile"
        || name.ends_with(".mk");
    if !per_line && let Some(units) = shell::parse(text) {
        return units;
    }
    // Logical lines: continuations joined, each with its first line.
    let mut lines: Vec<(u32, String)> = Vec::new();
    let mut pending: Option<(u32, String)> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let (start, mut acc) = pending.take().unwrap_or((n as u32 + 1, String::new()));
        acc.push(' ');
        acc.push_str(line.trim_end_matches('\\'));
        if line.ends_with('\\') {
            pending = Some((start, acc));
        } else {
            lines.push((start, acc));
        }
    }
    if let Some(p) = pending {
        lines.push(p);
    }
    let mut out = Vec::new();
    for (line, text) in lines {
        let t = text.trim().trim_start_matches("- ").trim();
        if t.starts_with('#') || t.is_empty() {
            continue;
        }
        // A recipe line's prefixes (`@` quiet, `-` ignore errors, `+`).
        let t = if per_line {
            t.trim_start_matches(['@', '-', '+'])
        } else {
            t
        };
        if let Some(units) = shell::parse(t).filter(|u| !u.is_empty()) {
            out.extend(units.into_iter().map(|mut u| {
                u.line = line;
                u
            }));
            continue;
        }
        let commands = t
            .replace("||", "\u{1}")
            .replace("&&", "\u{1}")
            .replace(';', "\u{1}");
        out.push(Unit {
            line,
            pipelines: commands
                .split('\u{1}')
                .map(|c| {
                    c.split('|')
                        .map(|s| Stage {
                            words: words(s),
                            ..Stage::default()
                        })
                        .collect()
                })
                .collect(),
        });
    }
    out
}

/// Loop variables and the values they take: `for x in "${list[@]}"` over a
/// bash array `list=( … )` (one item per word, over several lines), and
/// `for x in a b c`.
pub(super) fn loop_values(text: &str) -> Vec<(String, Vec<String>)> {
    let mut arrays: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i]
            .trim()
            .trim_start_matches("local ")
            .trim_start_matches("readonly ")
            .trim_start_matches("declare ")
            .trim_start_matches("-r ")
            .trim_start_matches("-a ")
            .trim_start_matches("-ra ")
            .trim();
        if let Some((name, rest)) = t.split_once("=(")
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            let mut body = String::from(rest);
            while !body.contains(')') && i + 1 < lines.len() {
                i += 1;
                let l = lines[i].trim();
                if !l.starts_with('#') {
                    body.push(' ');
                    body.push_str(l);
                }
            }
            let body = body.split(')').next().unwrap_or_default();
            arrays.insert(name.to_string(), words(body));
        }
        i += 1;
    }
    let mut out = Vec::new();
    for line in &lines {
        let t = line.trim();
        let Some(rest) = t.strip_prefix("for ") else {
            continue;
        };
        let Some((var, list)) = rest.split_once(" in ") else {
            continue;
        };
        let var = var.trim();
        let list = list.split(';').next().unwrap_or_default().trim();
        let inner = list.trim_matches('"');
        let values = if let Some(name) = inner
            .strip_prefix("${")
            .and_then(|r| r.strip_suffix("[@]}"))
        {
            arrays.get(name).cloned().unwrap_or_default()
        } else if list.contains('$') || list.contains('*') {
            continue;
        } else {
            words(list)
        };
        if !values.is_empty() {
            out.push((var.to_string(), values));
        }
    }
    out
}
