//! go-yaml's readings of block scalars where this loader's parser (YAML
//! 1.2) reads otherwise: the extra line break of a folded scalar before a
//! more-indented line, and no final line break for a block scalar that
//! ends a file that has none.

use super::{Node, Value};

/// A literal or folded block scalar (clip or keep) that ends the file with
/// no line break after its last line has no final line break in libyaml's
/// scanner (`yaml_parser_scan_block_scalar` keeps only the breaks it reads),
/// which go-yaml ports: `k: |` then `  a` at the end of the file is `a`,
/// not `a\n`. The YAML 1.2 reading this loader's parser makes adds one.
pub(super) fn go_yaml_block_at_eof(text: &str, docs: &mut [Node]) {
    if text.is_empty() || text.ends_with('\n') || text.ends_with('\r') {
        return;
    }
    let lines: Vec<&str> = text.lines().collect();
    let Some(last) = lines.last().filter(|l| !l.trim().is_empty()) else {
        return;
    };
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let mut body_indent = indent(last);
    let mut block = false;
    for line in lines[..lines.len() - 1].iter().rev() {
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) >= body_indent {
            continue;
        }
        // A less indented line: the header of the block scalar the last
        // line is in, or a line of it (or of the structure above).
        if is_block_indicator(line) {
            block = true;
            break;
        }
        body_indent = indent(line);
        if body_indent == 0 {
            break;
        }
    }
    if !block {
        return;
    }
    if let Some(doc) = docs.last_mut()
        && let Some(Value::String(s)) = last_leaf(doc).map(|n| &mut n.value)
        && s.ends_with('\n')
    {
        s.pop();
    }
}

/// Whether a line ends with a block scalar header (`|`, `>`, with an
/// optional indentation and chomping indicator, then maybe a comment).
fn is_block_indicator(line: &str) -> bool {
    let code = match line.find(" #") {
        Some(i) => &line[..i],
        None => line,
    }
    .trim_end();
    let Some(head) = code
        .rfind(['|', '>'])
        .filter(|&i| i == 0 || code[..i].ends_with(' '))
    else {
        return false;
    };
    let rest = &code[head + 1..];
    rest.len() <= 2
        && rest
            .chars()
            .all(|c| c.is_ascii_digit() || c == '+' || c == '-')
}

/// The node that ends a document: the last value of the last entry, all
/// the way down.
fn last_leaf(node: &mut Node) -> Option<&mut Node> {
    if !matches!(node.value, Value::Map(_) | Value::Seq(_)) {
        return Some(node);
    }
    match &mut node.value {
        Value::Map(entries) => last_leaf(&mut entries.last_mut()?.1),
        Value::Seq(items) => last_leaf(items.last_mut()?),
        _ => None,
    }
}

/// go-yaml v3 (what kustomize and kustomize-controller parse with) keeps an
/// extra line break before a more-indented line in a folded (`>`) block
/// scalar: `a\n  b` in the YAML spec becomes `a\n\n  b`. Flux applies
/// go-yaml's string, so this loader does the same. Only files that contain
/// such a scalar are touched.
pub(super) fn go_yaml_folding(text: &str, docs: &mut [Node]) {
    let lines: Vec<&str> = text.lines().collect();
    let mut fixes: Vec<(u32, Vec<String>)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_end();
        let indicator = t.ends_with(": >")
            || t.ends_with(": >-")
            || t.ends_with(": >+")
            || t.ends_with("- >")
            || t.ends_with("- >-")
            || t.ends_with("- >+");
        if !indicator {
            continue;
        }
        let parent_indent = line.len() - line.trim_start().len();
        let body: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > parent_indent)
            .copied()
            .collect();
        let Some(base) = body
            .iter()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len())
        else {
            continue;
        };
        let mut targets = Vec::new();
        for pair in body.windows(2) {
            let (prev, cur) = (pair[0], pair[1]);
            let indent = |l: &str| l.len() - l.trim_start().len();
            if !prev.trim().is_empty()
                && indent(prev) == base
                && !cur.trim().is_empty()
                && indent(cur) > base
            {
                targets.push(cur[base..].to_string());
            }
        }
        if !targets.is_empty() {
            fixes.push((i as u32 + 1, targets));
        }
    }
    if fixes.is_empty() {
        return;
    }
    for doc in docs {
        apply_folding_fixes(doc, &fixes);
    }
}

fn apply_folding_fixes(node: &mut Node, fixes: &[(u32, Vec<String>)]) {
    match &mut node.value {
        // Not when a line of the value ends in a space: kubectl kustomize
        // then writes the value double-quoted, with no extra break (found
        // by the differential test; the value Flux applies is the one
        // kustomize writes out).
        Value::String(s) if s.contains(" \n") => {}
        Value::String(s) => {
            // The scalar's node starts on the indicator line or the next one.
            if let Some((_, targets)) = fixes
                .iter()
                .find(|(l, _)| *l == node.line || *l + 1 == node.line)
            {
                // In order, each after the last: the same more-indented
                // line can follow a base line more than once.
                let mut from = 0;
                for t in targets {
                    let needle = format!("\n{t}");
                    let Some(pos) = s[from..].find(&needle).map(|p| p + from) else {
                        continue;
                    };
                    if !s[..pos].ends_with('\n') {
                        s.insert(pos, '\n');
                        from = pos + 1 + needle.len();
                    } else {
                        from = pos + needle.len();
                    }
                }
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|i| apply_folding_fixes(i, fixes)),
        Value::Map(entries) => entries
            .iter_mut()
            .for_each(|(_, v)| apply_folding_fixes(v, fixes)),
        _ => {}
    }
}
