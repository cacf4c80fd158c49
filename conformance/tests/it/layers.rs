//! The engine's layers only point down (CONTRIBUTING.md): the graph of
//! top-level modules of `conformance/src`, drawn from every `crate::` path
//! outside test code, has no cycle, and no leaf imports anything above it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules that must depend on nothing of the crate but these.
const LEAVES: &[(&str, &[&str])] = &[
    ("yaml", &[]),
    ("builtin", &[]),
    ("config_error", &[]),
    ("exec", &[]),
    ("repo", &["yaml", "progress", "exec"]),
    ("versions", &["repo"]),
    ("model", &["builtin", "yaml"]),
    ("stats", &[]),
    ("progress", &[]),
    ("remote", &["repo", "yaml", "exec"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src is readable")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without its `#[cfg(test)]` module and comments.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(cut) => &text[..cut],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Top-level module -> the top-level modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&root).ok()?;
            let first = rel.components().next()?.as_os_str().to_str()?;
            Some(first.trim_end_matches(".rs").to_string())
        })
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let path = regex::Regex::new(r"crate::([a-z_]+)").expect("regex");
    let group = regex::Regex::new(r"(?s)use crate::\{(.*?)\};").expect("regex");
    let name = regex::Regex::new(r"(?:^|[\s,{])([a-z_]+)(?:::|\s*[,}]|$)").expect("regex");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in &files {
        let rel = p.strip_prefix(&root).expect("below src");
        let first = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a name")
            .trim_end_matches(".rs")
            .to_string();
        if first == "lib" || first == "main" {
            continue;
        }
        let text = code(&std::fs::read_to_string(p).expect("readable"));
        let mut targets: BTreeSet<String> = path
            .captures_iter(&text)
            .map(|c| c[1].to_string())
            .collect();
        for g in group.captures_iter(&text) {
            for n in name.captures_iter(&g[1]) {
                targets.insert(n[1].to_string());
            }
        }
        let entry = out.entry(first.clone()).or_default();
        for t in targets {
            if t != first && modules.contains(&t) {
                entry.insert(t);
            }
        }
    }
    out
}

/// A cycle through `start`, if there is one.
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        at: &str,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in graph.get(at).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, next, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    let mut seen = BTreeSet::new();
    walk(graph, start, start, &mut path, &mut seen).then_some(path)
}

#[test]
fn top_level_modules_form_no_cycle() {
    let graph = graph();
    assert!(graph.len() > 10, "read the modules: {graph:?}");
    for module in graph.keys() {
        if let Some(cycle) = cycle_from(&graph, module) {
            panic!("an import runs back up: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn leaves_import_only_below_them() {
    let graph = graph();
    for (leaf, allowed) in LEAVES {
        let uses = graph.get(*leaf).cloned().unwrap_or_default();
        let extra: Vec<&String> = uses
            .iter()
            .filter(|u| !allowed.contains(&u.as_str()))
            .collect();
        assert!(extra.is_empty(), "{leaf} imports {extra:?}");
    }
}

#[test]
fn nothing_below_the_session_knows_it() {
    let graph = graph();
    for (module, uses) in &graph {
        if ["check", "report", "session"].contains(&module.as_str()) {
            continue;
        }
        for above in ["session", "check", "report"] {
            assert!(!uses.contains(above), "{module} imports {above}");
        }
    }
}
