//! The layers only point down (CONTRIBUTING.md). Between crates Cargo
//! enforces it (core ← render ← engine ← the command); this test checks the
//! manifests say so, and, inside each crate, that no import runs back up:
//! the leaves import nothing above them, and no module (a file, or a
//! folder's `mod.rs`) imports one that imports it back, at any depth.
//! It also holds the size limits: no source file over 800 lines, no
//! function over 120 (tests aside).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates, lowest first, with the crates each may depend on.
const CRATES: &[(&str, &str, &[&str])] = &[
    ("core", "conformance-core", &[]),
    ("render", "conformance-render", &["conformance-core"]),
    (
        "engine",
        "conformance-engine",
        &["conformance-core", "conformance-render"],
    ),
    (
        "conformance",
        "flux-conformance",
        &[
            "conformance-core",
            "conformance-render",
            "conformance-engine",
        ],
    ),
];

/// Top-level modules of a crate that must depend on nothing of it but these.
const LEAVES: &[(&str, &str, &[&str])] = &[
    ("core", "yaml", &[]),
    ("core", "builtin", &[]),
    ("core", "config_error", &[]),
    ("core", "exec", &[]),
    ("core", "stats", &[]),
    ("core", "progress", &[]),
    ("core", "repo", &["yaml", "progress", "exec"]),
    ("core", "versions", &["repo"]),
    ("core", "chart", &[]),
    ("core", "model", &["builtin", "yaml", "chart"]),
    ("render", "remote", &[]),
    ("render", "postbuild", &[]),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
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

/// A file's module path in its crate (`provenance::bootstrap` for
/// `provenance/bootstrap/mod.rs`); empty for the crate root.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// Module → the modules of the same crate it names (`crate::a::b`,
/// `super::c`, `use crate::{a, b::c}`), each resolved to the longest
/// module path the crate has.
fn graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .map(|p| module_of(p.strip_prefix(src).expect("below src")))
        .collect();
    let resolve = |path: &[String]| -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| modules.contains(p))
    };
    let path_re = regex::Regex::new(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)+)").expect("regex");
    let group_re = regex::Regex::new(r"(?s)use (crate|super)((?:::[a-z_][a-z0-9_]*)*)::\{(.*?)\};")
        .expect("regex");
    let item_re =
        regex::Regex::new(r"(?:^|[\s,{])([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)").expect("regex");
    let mut out: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for p in &files {
        let me = module_of(p.strip_prefix(src).expect("below src"));
        let is_mod_file = p
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs");
        // `super` of a file `a/b.rs` is `a`; of `a/b/mod.rs` it is `a` too.
        let parent: Vec<String> = if is_mod_file || me.is_empty() {
            me[..me.len().saturating_sub(1)].to_vec()
        } else {
            me[..me.len() - 1].to_vec()
        };
        let base = |anchor: &str| -> Vec<String> {
            if anchor == "crate" {
                Vec::new()
            } else {
                parent.clone()
            }
        };
        let text = code(&std::fs::read_to_string(p).expect("readable"));
        let mut named: Vec<Vec<String>> = Vec::new();
        let segments = |s: &str| -> Vec<String> {
            s.split("::")
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        };
        for c in path_re.captures_iter(&text) {
            let mut path = base(&c[1]);
            path.extend(segments(&c[2]));
            named.push(path);
        }
        for c in group_re.captures_iter(&text) {
            let mut prefix = base(&c[1]);
            prefix.extend(segments(&c[2]));
            for item in item_re.captures_iter(&c[3]) {
                let mut path = prefix.clone();
                path.extend(segments(&item[1]));
                named.push(path);
            }
        }
        let entry = out.entry(me.clone()).or_default();
        for path in named {
            let Some(target) = resolve(&path) else {
                continue;
            };
            // A module and its own ancestors or descendants are one
            // subtree: a parent declares its children, a child reads its
            // parent's items.
            let related = target.starts_with(&me) || me.starts_with(&target);
            if !related {
                entry.insert(target);
            }
        }
    }
    out
}

/// The cycles of a graph (strongly connected components of more than one
/// node), each as its members.
fn cycles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    // Kosaraju: finish order on the graph, then components on its reverse.
    let nodes: Vec<&Vec<String>> = g.keys().collect();
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    fn visit<'a>(
        n: &'a Vec<String>,
        g: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        seen: &mut BTreeSet<&'a Vec<String>>,
        order: &mut Vec<&'a Vec<String>>,
    ) {
        if !seen.insert(n) {
            return;
        }
        for m in g.get(n).into_iter().flatten() {
            if let Some((k, _)) = g.get_key_value(m) {
                visit(k, g, seen, order);
            }
        }
        order.push(n);
    }
    for n in &nodes {
        visit(n, g, &mut seen, &mut order);
    }
    let mut reverse: BTreeMap<&Vec<String>, Vec<&Vec<String>>> = BTreeMap::new();
    for (n, ms) in g {
        for m in ms {
            if let Some((k, _)) = g.get_key_value(m) {
                reverse.entry(k).or_default().push(n);
            }
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for n in order.iter().rev() {
        if assigned.contains(n) {
            continue;
        }
        let mut component = Vec::new();
        let mut stack = vec![*n];
        while let Some(x) = stack.pop() {
            if !assigned.insert(x) {
                continue;
            }
            component.push(x.join("::"));
            stack.extend(reverse.get(x).into_iter().flatten());
        }
        if component.len() > 1 {
            component.sort();
            out.push(component);
        }
    }
    out
}

#[test]
fn each_crate_depends_only_on_the_crates_below_it() {
    for (dir, package, allowed) in CRATES {
        let manifest =
            std::fs::read_to_string(workspace().join(dir).join("Cargo.toml")).expect("Cargo.toml");
        let doc: toml_like::Doc = toml_like::parse(&manifest);
        assert_eq!(doc.name.as_deref(), Some(*package), "{dir}/Cargo.toml");
        let ours: Vec<&str> = doc
            .dependencies
            .iter()
            .map(String::as_str)
            .filter(|d| CRATES.iter().any(|(_, p, _)| p == d))
            .collect();
        for dep in &ours {
            assert!(
                allowed.contains(dep),
                "{package} depends on {dep}, which is not below it"
            );
        }
    }
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let mut problems = Vec::new();
    for (dir, _, _) in CRATES {
        let g = graph(&workspace().join(dir).join("src"));
        for cycle in cycles(&g) {
            problems.push(format!("{dir}: {}", cycle.join(" <-> ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import circles:\n{}",
        problems.join("\n")
    );
}

#[test]
fn leaves_import_nothing_above_them() {
    let mut problems = Vec::new();
    for (dir, leaf, allowed) in LEAVES {
        let g = graph(&workspace().join(dir).join("src"));
        let top: BTreeSet<String> = g
            .iter()
            .filter(|(m, _)| m.first().map(String::as_str) == Some(*leaf))
            .flat_map(|(_, targets)| targets.iter().filter_map(|t| t.first().cloned()))
            .filter(|t| t != leaf)
            .collect();
        for t in top {
            if !allowed.contains(&t.as_str()) {
                problems.push(format!("{dir}: {leaf} imports {t}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The two fields of a Cargo manifest this test reads (`[package] name`
/// and the names under `[dependencies]`), line by line: the manifests are
/// ours and plain.
mod toml_like {
    pub struct Doc {
        pub name: Option<String>,
        pub dependencies: Vec<String>,
    }

    pub fn parse(text: &str) -> Doc {
        let mut section = String::new();
        let mut doc = Doc {
            name: None,
            dependencies: Vec::new(),
        };
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.trim_matches(['[', ']']).to_string();
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let key = key.trim().trim_end_matches(".workspace").to_string();
            match section.as_str() {
                "package" if key == "name" => {
                    doc.name = Some(value.trim().trim_matches('"').to_string());
                }
                "dependencies" if !key.starts_with('#') => doc.dependencies.push(key),
                _ => {}
            }
        }
        doc
    }
}

/// The crates whose sources the size limits apply to, and whether the
/// function limit does too (l1-cluster's harness still has three longer
/// functions: `observe::compare_with`, `kstatus::run_inner`, `flux_mode`).
const SOURCES: &[(&str, bool)] = &[
    ("core/src", true),
    ("render/src", true),
    ("engine/src", true),
    ("conformance/src", true),
    ("l1-cluster/src", false),
];

/// The longest file a reader should have to hold (CONTRIBUTING.md).
const MAX_FILE_LINES: usize = 800;

/// The longest function, tests aside (CONTRIBUTING.md).
const MAX_FN_LINES: usize = 120;

/// Each function of `text` outside its `#[cfg(test)]` module: name, first
/// line (1-based) and length in lines, from `fn` to the closing brace at
/// the same indentation (rustfmt's layout).
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    let mut i = 0;
    while i < end {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        let mut rest = line.trim_start();
        for prefix in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        let Some(signature) = rest.strip_prefix("fn ") else {
            i += 1;
            continue;
        };
        let name: String = signature
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The body opens where the signature ends; a declaration (a trait
        // method without a body) ends with `;`.
        let mut open = i;
        while open < end
            && !lines[open].trim_end().ends_with('{')
            && !lines[open].trim_end().ends_with(';')
        {
            open += 1;
        }
        if open >= end || lines[open].trim_end().ends_with(';') {
            i = open + 1;
            continue;
        }
        let close = (open + 1..end)
            .find(|&k| {
                let l = lines[k];
                l.len() - l.trim_start().len() == indent && l.trim_start().starts_with('}')
            })
            .unwrap_or(end);
        out.push((name, i + 1, close - i + 1));
        i = close + 1;
    }
    out
}

#[test]
fn no_file_or_function_is_longer_than_a_reader_can_hold() {
    let mut problems = Vec::new();
    for &(dir, functions_too) in SOURCES {
        let mut files = Vec::new();
        rust_files(&workspace().join(dir), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable");
            let rel = file
                .strip_prefix(workspace())
                .unwrap_or(&file)
                .display()
                .to_string();
            let lines = text.lines().count();
            if lines > MAX_FILE_LINES {
                problems.push(format!("{rel}: {lines} lines (at most {MAX_FILE_LINES})"));
            }
            for (name, at, len) in functions(&text) {
                if functions_too && len > MAX_FN_LINES {
                    problems.push(format!(
                        "{rel}:{at}: fn {name} is {len} lines (at most {MAX_FN_LINES})"
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "too long:\n{}", problems.join("\n"));
}

#[test]
fn the_function_measure_sees_a_long_function() {
    let long = format!(
        "fn short() {{\n}}\n\npub(crate) fn long(\n    a: u8,\n) -> u8 {{\n{}    a\n}}\n",
        "    let _ = 1;\n".repeat(200)
    );
    let found = functions(&long);
    assert_eq!(found[0], ("short".to_string(), 1, 2));
    assert_eq!(found[1].0, "long");
    assert_eq!(found[1].2, 205);
    let in_tests = format!("#[cfg(test)]\nmod tests {{\n{long}}}\n");
    assert!(functions(&in_tests).is_empty());
}
