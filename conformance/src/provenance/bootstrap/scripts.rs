//! What the repository's scripts apply before Flux: shell scripts,
//! Taskfiles (`Taskfile*.y*ml`, `.taskfiles/**`), justfiles (`justfile`,
//! `.justfile`, `*.just`) and Makefiles, read line by line (continuations
//! joined). Recognised:
//!
//! * `kubectl apply -k DIR` (`--kustomize`), `kubectl apply -f DIR|FILE|URL`
//!   (`--filename`, `=` forms);
//! * `kustomize build DIR | … kubectl apply -f -`, `kubectl kustomize
//!   [--enable-helm] DIR | … kubectl apply`;
//! * `cat|envsubst <|op inject --in-file|minijinja-cli|sops -d FILE | …
//!   kubectl apply`: the file;
//! * `helmfile … -f FILE sync|apply`, and `helmfile … -f FILE template | …
//!   CustomResourceDefinition … | kubectl apply` (that file's CRDs only);
//! * `kubectl create namespace NS`, `kubectl create configmap|secret NAME -n NS`;
//! * in a file that runs `kubectl apply`, any URL of a manifest the catalog
//!   knows (an array of CRD URLs looped over).
//!
//! Paths are resolved the way the tools would: template and shell variables
//! the file defines (`VAR=…`, Taskfile `vars:`, just `name := …`), the
//! file's own directory (`{{ source_directory() }}`, `$(dirname "$0")`) and
//! the repository root (`$(git rev-parse --show-toplevel)`, `{{.ROOT_DIR}}`),
//! relative to the file's directory, else to the root. What cannot be
//! resolved to a path of the repository is left out.

use std::collections::BTreeMap;

use super::{Item, Provides, manifests};
use crate::model::Span;
use crate::provenance::Catalog;
use crate::repo::{Kind, RepoIndex};

/// Everything the scripts apply.
#[derive(Debug, Clone, Default)]
pub struct Scripts {
    pub commands: Vec<Command>,
    /// Helmfiles a script renders only for their CRDs, by path.
    pub crds_only: Vec<String>,
    /// Helmfiles a script syncs or applies, by path.
    pub synced: Vec<String>,
}

impl Scripts {
    /// Records a command once.
    fn add(&mut self, at: &Span, target: Target) {
        let c = Command {
            at: at.clone(),
            target,
        };
        if !self.commands.contains(&c) {
            self.commands.push(c);
        }
    }
}

/// One applying command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub at: Span,
    pub target: Target,
}

/// What a command applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A kustomization directory (`-k`, `kustomize build`).
    Kustomization(String),
    /// A directory or file (`-f`).
    Path(String),
    /// A directory or file applied with `--namespace NS`: objects that name
    /// no namespace go there.
    PathIn(String, String),
    Url(String),
    Namespace(String),
    /// `kubectl create configmap|secret [generic|tls|docker-registry] NAME
    /// -n NS`: `Kind/namespace/name`.
    Object(String),
}

impl Command {
    /// What the command installs.
    pub fn items(&self, index: &RepoIndex, catalog: &Catalog) -> Vec<Item> {
        let item = |provides: Provides, via: String| Item {
            at: self.at.clone(),
            via,
            provides,
        };
        match &self.target {
            Target::Kustomization(dir) => manifests::read(index, dir)
                .into_iter()
                .map(|p| item(p, format!("kubectl apply -k {dir}")))
                .collect(),
            Target::Path(path) => manifests::read(index, path)
                .into_iter()
                .map(|p| item(p, format!("kubectl apply -f {path}")))
                .collect(),
            Target::PathIn(path, ns) => manifests::read_in(index, path, ns)
                .into_iter()
                .map(|p| item(p, format!("kubectl apply -n {ns} -f {path}")))
                .collect(),
            Target::Url(url) => super::fetched(index, catalog, url)
                .into_iter()
                .map(|p| item(p, format!("kubectl apply -f {url}")))
                .collect(),
            Target::Object(object) => vec![item(
                Provides::Object(object.clone()),
                format!("kubectl create {object}"),
            )],
            Target::Namespace(ns) => vec![item(
                Provides::Namespace(ns.clone()),
                format!("kubectl create namespace {ns}"),
            )],
        }
    }
}

/// Whether a path is a script this module reads.
pub fn is_script(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".sh")
        || lower.ends_with(".bash")
        || lower.ends_with(".just")
        || lower == "justfile"
        || lower == ".justfile"
        || lower == "makefile"
        || lower.ends_with(".mk")
        || (lower.starts_with("taskfile") && (lower.ends_with(".yaml") || lower.ends_with(".yml")))
        || (rel.contains(".taskfiles/") && (lower.ends_with(".yaml") || lower.ends_with(".yml")))
}

/// Reads every script of the repository.
pub fn read(index: &RepoIndex) -> Scripts {
    let mut out = Scripts::default();
    let scripts: Vec<String> = index
        .below("")
        .filter(|(rel, kind)| **kind == Kind::File && is_script(rel))
        .map(|(rel, _)| rel.to_string())
        .collect();
    // Taskfile variables are global across the included Taskfiles (the
    // root's `vars:` reach `.taskfiles/**`).
    let mut task_vars = BTreeMap::new();
    let texts: Vec<(String, String)> = scripts
        .into_iter()
        .filter_map(|rel| index.read_text(&rel).ok().map(|t| (rel, t)))
        .collect();
    for (rel, text) in &texts {
        if is_taskfile(rel) {
            for (k, v) in variables(text) {
                task_vars.entry(k).or_insert(v);
            }
        }
    }
    for (rel, text) in &texts {
        let mut vars = variables(text);
        if is_taskfile(rel) {
            for (k, v) in &task_vars {
                vars.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        scan(index, rel, text, &vars, &mut out);
    }
    out
}

fn is_taskfile(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase();
    name.starts_with("taskfile") || rel.contains(".taskfiles/")
}

/// The directory of a repository path (`""` for the root).
fn dir_of(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Variables a script defines: `NAME=value`, `export NAME=value`, `local -r
/// NAME="value"`, Taskfile `NAME: value` (under `vars:`), just `name :=
/// "value"`.
fn variables(text: &str) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    // `NAME=$( … )` anywhere in a line (`if ! rendered=$(…); then`).
    for line in text.lines() {
        let mut rest = line;
        while let Some(i) = rest.find("=$(") {
            let name: String = rest[..i]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let body = &rest[i + 1..];
            let mut depth = 0usize;
            let mut end = None;
            for (k, c) in body.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = Some(k);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            if !name.is_empty() {
                vars.entry(name).or_insert_with(|| body[..=end].to_string());
            }
            rest = &body[end + 1..];
        }
    }
    for line in text.lines() {
        let t = line
            .trim()
            .trim_start_matches("export ")
            .trim_start_matches("local -r ");
        let t = t
            .trim_start_matches("local ")
            .trim_start_matches("readonly ");
        let (name, value) = if let Some((n, v)) = t.split_once(":=") {
            (n.trim(), v.trim())
        } else if let Some((n, v)) = t.split_once('=') {
            if n.contains(' ') || n.is_empty() {
                continue;
            }
            (n, v)
        } else if let Some((n, v)) = t.split_once(": ") {
            (n.trim(), v.trim())
        } else {
            continue;
        };
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
            continue;
        }
        let value = value.trim_matches(|c| c == '"' || c == '\'').to_string();
        if !value.is_empty() {
            vars.entry(name.to_string()).or_insert(value);
        }
    }
    vars
}

/// Expands what a path argument refers to: the file's directory, the
/// repository root, and variables the file defines. `None` when something
/// unknown remains.
fn expand(
    raw: &str,
    script: &str,
    vars: &BTreeMap<String, String>,
    depth: usize,
) -> Option<String> {
    let mut s = raw.trim_matches(|c| c == '"' || c == '\'').to_string();
    let here = if dir_of(script).is_empty() {
        ".".to_string()
    } else {
        format!("@root/{}", dir_of(script))
    };
    for pattern in [
        "{{ source_directory() }}",
        "{{source_directory()}}",
        "{{ justfile_directory() }}",
        "{{justfile_directory()}}",
        "{{ justfile_dir() }}",
        "{{ source_dir() }}",
        "$(dirname \"$0\")",
        "$(dirname \"${0}\")",
        "$(dirname $0)",
        "{{.TASKFILE_DIR}}",
        "{{ .TASKFILE_DIR }}",
    ] {
        s = s.replace(pattern, &here);
    }
    for pattern in [
        "$(git rev-parse --show-toplevel)",
        "{{.ROOT_DIR}}",
        "{{ .ROOT_DIR }}",
        "{{.USER_WORKING_DIR}}",
    ] {
        s = s.replace(pattern, "@root");
    }
    // ${NAME}, $NAME, {{.NAME}}, {{ .NAME }}, {{ NAME }} (just).
    let mut out = String::new();
    let mut rest = s.as_str();
    while !rest.is_empty() {
        let (start, end, name) = if let Some(i) = rest.find("${") {
            let j = rest[i..].find('}')? + i;
            (i, j + 1, rest[i + 2..j].to_string())
        } else if let Some(i) = rest.find("{{") {
            let j = rest[i..].find("}}")? + i;
            (
                i,
                j + 2,
                rest[i + 2..j].trim().trim_start_matches('.').to_string(),
            )
        } else if let Some(i) = rest.find('$') {
            let name: String = rest[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                return None;
            }
            (i, i + 1 + name.len(), name)
        } else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..start]);
        let positional = |v: &str| {
            let v = v.trim_matches(|c| c == '"' || c == '\'');
            v.strip_prefix("${")
                .or_else(|| v.strip_prefix('$'))
                .and_then(|r| r.chars().next())
                .is_some_and(|c| c.is_ascii_digit() && c != '0')
        };
        let value = match name.as_str() {
            "ROOT_DIR" | "ROOT" | "REPO_ROOT" | "GIT_ROOT" => "@root".to_string(),
            _ if vars.get(&name).is_some_and(|v| positional(v)) => ARGUMENT.to_string(),
            "SCRIPT_DIR" | "DIR" => here.clone(),
            _ if depth < 5 => expand(vars.get(&name)?, script, vars, depth + 1)?,
            _ => return None,
        };
        out.push_str(&value);
        rest = &rest[end..];
    }
    Some(out)
}

/// The repository path an argument names, if it exists.
fn resolve(
    index: &RepoIndex,
    script: &str,
    raw: &str,
    vars: &BTreeMap<String, String>,
) -> Option<String> {
    resolve_all(index, script, raw, vars).into_iter().next()
}

/// Marks a script argument (`CLUSTER="${1:?}"`) in an expanded path.
const ARGUMENT: char = '\u{2}';

/// Every repository path an argument names: one, or, where it holds a
/// script argument (`kubernetes/${CLUSTER}/…` with `CLUSTER="${1}"`), one
/// per directory that makes the path exist (each cluster's).
fn resolve_all(
    index: &RepoIndex,
    script: &str,
    raw: &str,
    vars: &BTreeMap<String, String>,
) -> Vec<String> {
    let Some(expanded) = expand(raw, script, vars, 0) else {
        return Vec::new();
    };
    if !expanded.contains(ARGUMENT) {
        return resolve_expanded(index, script, &expanded)
            .into_iter()
            .collect();
    }
    // The directory names at the argument's place, from what precedes it.
    let (before, after) = expanded.split_once(ARGUMENT).unwrap_or((&expanded, ""));
    let Some(parent) = resolve_expanded(index, script, before.trim_end_matches('/')) else {
        return Vec::new();
    };
    let names: Vec<String> = index
        .below(&parent)
        .filter(|(p, k)| {
            **k == Kind::Dir
                && p[parent.len()..]
                    .trim_start_matches('/')
                    .matches('/')
                    .count()
                    == 0
        })
        .filter_map(|(p, _)| p.rsplit('/').next().map(str::to_string))
        .filter(|n| !n.is_empty() && !n.starts_with('.'))
        .collect();
    let mut out: Vec<String> = names
        .iter()
        .filter_map(|n| {
            let candidate = format!("{before}{n}{after}");
            (!candidate.contains(ARGUMENT))
                .then(|| resolve_expanded(index, script, &candidate))
                .flatten()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn resolve_expanded(index: &RepoIndex, script: &str, expanded: &str) -> Option<String> {
    let expanded = expanded.to_string();
    let candidates: Vec<String> = if let Some(rest) = expanded.strip_prefix("@root") {
        vec![rest.trim_start_matches('/').to_string()]
    } else if expanded.starts_with('/') {
        return None; // an absolute path on the operator's machine
    } else {
        let relative = crate::repo::join(dir_of(script), &expanded);
        vec![relative, expanded.clone()]
    };
    candidates.into_iter().find_map(|c| {
        let (normal, escapes) = crate::repo::normalize("", &c);
        (!escapes
            && index
                .kind(&normal)
                .is_some_and(|k| matches!(k, Kind::File | Kind::Dir)))
        .then_some(normal)
    })
}

/// Splits a command line into words (quotes kept together, `=` forms
/// split).
fn words(line: &str) -> Vec<String> {
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
fn flag(words: &[String], short: &[&str], long: &str) -> Option<String> {
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

fn scan(
    index: &RepoIndex,
    rel: &str,
    text: &str,
    vars: &BTreeMap<String, String>,
    out: &mut Scripts,
) {
    let applies = text.contains("kubectl apply") || text.contains("kubectl create");
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
    let loops = loop_values(text);
    // A path, with a loop variable standing for each of its values.
    let each = |raw: &str| -> Vec<String> {
        let mut raws = vec![raw.to_string()];
        for (var, values) in &loops {
            if raw.contains(&format!("${{{var}}}")) || raw.contains(&format!("${var}")) {
                raws = values
                    .iter()
                    .map(|v| {
                        raw.replace(&format!("${{{var}}}"), v)
                            .replace(&format!("${var}"), v)
                    })
                    .collect();
                break;
            }
        }
        raws.iter()
            .flat_map(|r| resolve_all(index, rel, r, vars))
            .collect()
    };
    for (line_no, line) in &lines {
        let t = line.trim().trim_start_matches("- ").trim();
        if t.starts_with('#') {
            continue;
        }
        let at = Span::new(rel, *line_no);
        // `kubectl [global flags] apply|create …` (`kubectl --context c
        // --namespace ns apply -f …`).
        let kubectl_apply = |w: &[String]| {
            w.iter()
                .position(|x| x.ends_with("kubectl"))
                .is_some_and(|k| w[k + 1..].iter().any(|x| x == "apply" || x == "create"))
        };
        let push = |out: &mut Scripts, target: Target| out.add(&at, target);
        // Each command of the line (`;`, `&&`, `||`), each a pipeline.
        let commands = t
            .replace("||", "\u{1}")
            .replace("&&", "\u{1}")
            .replace(';', "\u{1}");
        for command in commands.split('\u{1}') {
            let stages: Vec<Vec<String>> = command.split('|').map(words).collect();
            for (k, stage) in stages.iter().enumerate() {
                // kubectl create namespace NS
                if let Some(i) = stage.iter().position(|w| w == "create")
                    && stage
                        .get(i + 1)
                        .is_some_and(|w| w == "namespace" || w == "ns")
                    && let Some(ns) = stage.get(i + 2)
                    && stage.iter().any(|w| w.ends_with("kubectl"))
                    && !ns.starts_with('$')
                    && !ns.contains("{{")
                {
                    push(out, Target::Namespace(ns.clone()));
                }
                // kubectl create configmap|secret [TYPE] NAME [-n NS]
                if let Some(i) = stage.iter().position(|w| w == "create")
                    && stage.iter().any(|w| w.ends_with("kubectl"))
                    && let Some(kind) = stage.get(i + 1).and_then(|w| match w.as_str() {
                        "configmap" | "cm" => Some("ConfigMap"),
                        "secret" => Some("Secret"),
                        _ => None,
                    })
                {
                    let mut rest = i + 2;
                    if kind == "Secret"
                        && stage.get(rest).is_some_and(|w| {
                            ["generic", "tls", "docker-registry"].contains(&w.as_str())
                        })
                    {
                        rest += 1;
                    }
                    let name = stage.get(rest).filter(|w| !w.starts_with('-'));
                    let ns =
                        flag(stage, &["-n"], "--namespace").unwrap_or_else(|| "default".into());
                    if let Some(name) = name
                        && !name.contains('$')
                        && !name.contains("{{")
                        && !ns.contains('$')
                        && !ns.contains("{{")
                    {
                        push(out, Target::Object(format!("{kind}/{ns}/{name}")));
                    }
                }
                if kubectl_apply(stage) {
                    if let Some(dir) = flag(stage, &["-k"], "--kustomize")
                        && let Some(p) = resolve(index, rel, &dir, vars)
                    {
                        push(out, Target::Kustomization(p));
                    }
                    if let Some(f) = flag(stage, &["-f"], "--filename") {
                        if f == "-" {
                            // stdin: what earlier stages of the pipeline render.
                            for earlier in &stages[..k] {
                                feed(index, rel, vars, earlier, t, &at, out);
                            }
                        } else if f.starts_with("https://") || f.starts_with("http://") {
                            push(out, Target::Url(f));
                        } else {
                            let ns = flag(stage, &["-n"], "--namespace")
                                .filter(|n| !n.contains('$') && !n.contains("{{"));
                            for p in each(&f) {
                                match &ns {
                                    Some(ns) => push(out, Target::PathIn(p, ns.clone())),
                                    None => push(out, Target::Path(p)),
                                }
                            }
                        }
                    }
                }
                // sops exec-file FILE "kubectl … apply … {}": the decrypted
                // file is applied.
                if let Some(i) = stage.iter().position(|w| w == "exec-file")
                    && stage.iter().any(|w| w.ends_with("sops"))
                    && let Some(file) = stage.get(i + 1)
                    && stage[i + 2..]
                        .iter()
                        .any(|w| w.contains("kubectl") && w.contains("apply"))
                {
                    let command = stage[i + 2..].join(" ");
                    let ns = words(&command)
                        .windows(2)
                        .find(|p| p[0] == "-n" || p[0] == "--namespace")
                        .map(|p| p[1].clone())
                        .filter(|n| !n.contains('$') && !n.contains("{{"));
                    for p in each(file) {
                        match &ns {
                            Some(ns) => push(out, Target::PathIn(p, ns.clone())),
                            None => push(out, Target::Path(p)),
                        }
                    }
                }
                // helmfile -f FILE sync|apply (not piped to kubectl)
                if stage.iter().any(|w| w.ends_with("helmfile"))
                    && stage.iter().any(|w| w == "sync" || w == "apply")
                    && let Some(f) = flag(stage, &["-f"], "--file")
                    && let Some(p) = resolve(index, rel, &f, vars)
                    && !out.synced.contains(&p)
                {
                    out.synced.push(p);
                }
            }
        }
        // URLs of known manifests in a file that applies.
        if applies {
            for w in words(t) {
                let w = w.trim_matches(|c| c == '(' || c == ')' || c == ',');
                if (w.starts_with("https://") || w.starts_with("http://"))
                    && !w.contains("{{")
                    && !w.contains('$')
                {
                    out.add(&at, Target::Url(w.to_string()));
                }
            }
        }
    }
}

/// Loop variables and the values they take: `for x in "${list[@]}"` over a
/// bash array `list=( … )` (one item per word, over several lines), and
/// `for x in a b c`.
fn loop_values(text: &str) -> Vec<(String, Vec<String>)> {
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

/// A variable name worth following (no further expansion inside).
fn depth_ok(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An earlier stage of a pipeline into `kubectl apply -f -`.
fn feed(
    index: &RepoIndex,
    rel: &str,
    vars: &BTreeMap<String, String>,
    stage: &[String],
    line: &str,
    at: &Span,
    out: &mut Scripts,
) {
    let push = |out: &mut Scripts, target: Target| out.add(at, target);
    // The program: past shell keywords and variable assignments.
    const KEYWORDS: &[&str] = &[
        "if", "!", "then", "do", "else", "elif", "while", "until", "time", "exec", "sudo",
        "command", "&&", "||", ";", "{", "(", "-",
    ];
    let first = stage
        .iter()
        .position(|w| {
            let assignment = w.contains('=') && !w.contains('/');
            !KEYWORDS.contains(&w.as_str()) && !assignment
        })
        .unwrap_or(0);
    let program = stage.get(first).map(String::as_str).unwrap_or_default();
    // `echo "${rendered}" | kubectl apply -f -`, with `rendered=$(…)`
    // earlier: what the assignment's command renders.
    if matches!(program, "echo" | "printf")
        && let Some(arg) = stage.get(first + 1)
    {
        let name = arg
            .trim_start_matches('$')
            .trim_start_matches('{')
            .trim_end_matches('}');
        if arg.starts_with('$')
            && depth_ok(name)
            && let Some(value) = vars.get(name)
            && let Some(inner) = value.strip_prefix("$(").and_then(|v| v.strip_suffix(')'))
        {
            for inner_stage in inner.split('|').map(words) {
                feed(index, rel, vars, &inner_stage, line, at, out);
            }
        }
        return;
    }
    let args: Vec<&String> = stage[first.min(stage.len())..]
        .iter()
        .skip(1)
        .filter(|w| !w.starts_with('-'))
        .collect();
    if program.ends_with("kustomize") && stage.get(first + 1).is_some_and(|w| w == "build")
        || program.ends_with("kubectl") && stage.get(first + 1).is_some_and(|w| w == "kustomize")
    {
        if let Some(dir) = args.get(1)
            && let Some(p) = resolve(index, rel, dir, vars)
        {
            push(out, Target::Kustomization(p));
        }
        return;
    }
    if program.ends_with("helmfile") {
        if let Some(f) = flag(stage, &["-f"], "--file")
            && let Some(p) = resolve(index, rel, &f, vars)
        {
            if line.contains("CustomResourceDefinition") {
                if !out.crds_only.contains(&p) {
                    out.crds_only.push(p);
                }
            } else if !out.synced.contains(&p) {
                out.synced.push(p);
            }
        }
        return;
    }
    let file: Option<String> = match program.rsplit('/').next().unwrap_or(program) {
        "cat" | "minijinja-cli" | "envsubst" => args.first().map(|s| s.to_string()),
        "op" => flag(stage, &["-i"], "--in-file"),
        "sops" => args.last().map(|s| s.to_string()),
        _ => None,
    };
    // `envsubst < FILE`
    let file = file.or_else(|| {
        let i = stage.iter().position(|w| w == "<")?;
        stage.get(i + 1).cloned()
    });
    if let Some(f) = file
        && let Some(p) = resolve(index, rel, &f, vars)
    {
        push(out, Target::Path(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_text(files: &[(&str, &str)], script: &str) -> Scripts {
        let index = RepoIndex::from_memory(files);
        let text = files.iter().find(|(p, _)| *p == script).unwrap().1;
        let mut out = Scripts::default();
        scan(&index, script, text, &variables(text), &mut out);
        out
    }

    #[test]
    fn kubectl_forms_and_pipelines() {
        let files = [
            ("bootstrap/crds/kustomization.yaml", "resources: []\n"),
            (
                "bootstrap/ns.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
            ),
            ("bootstrap/helmfile.d/00-crds.yaml", "releases: []\n"),
            (
                "bootstrap/mod.just",
                "base:\n    if ! kustomize build {{ source_directory() }}/crds | just template - | kubectl apply --server-side -f -; then\n        exit 1\n    fi\n    kubectl apply -f \"{{ source_directory() }}/ns.yaml\"\n    helmfile -f {{ source_directory() }}/helmfile.d/00-crds.yaml template -q | yq 'select(.kind == \"CustomResourceDefinition\")' | kubectl apply -f -\n    kubectl create namespace flux-system\n    kubectl create secret generic sops-age -n flux-system --from-file=age.agekey=/dev/stdin\n    kubectl -n flux-system create configmap cluster-info --from-literal=a=b\n    kubectl create secret generic \"$NAME\" -n flux-system\n",
            ),
        ];
        let out = scan_text(&files, "bootstrap/mod.just");
        let targets: Vec<&Target> = out.commands.iter().map(|c| &c.target).collect();
        assert!(
            targets.contains(&&Target::Kustomization("bootstrap/crds".into())),
            "{targets:?}"
        );
        assert!(
            targets.contains(&&Target::Path("bootstrap/ns.yaml".into())),
            "{targets:?}"
        );
        assert!(
            targets.contains(&&Target::Namespace("flux-system".into())),
            "{targets:?}"
        );
        assert!(
            targets.contains(&&Target::Object("Secret/flux-system/sops-age".into())),
            "{targets:?}"
        );
        assert!(targets.contains(&&Target::Object(
            "ConfigMap/flux-system/cluster-info".into()
        )));
        assert!(
            !targets
                .iter()
                .any(|t| matches!(t, Target::Object(o) if o.contains('$'))),
            "{targets:?}"
        );
        assert_eq!(out.crds_only, ["bootstrap/helmfile.d/00-crds.yaml"]);
    }

    #[test]
    fn variables_and_taskfile_vars_resolve() {
        let files = [
            ("kubernetes/bootstrap/kustomization.yaml", "resources: []\n"),
            (
                "Taskfile.yaml",
                "vars:\n  KUBERNETES_DIR: '{{.ROOT_DIR}}/kubernetes'\ntasks:\n  bootstrap:\n    cmds:\n      - kubectl apply --server-side --kustomize {{.KUBERNETES_DIR}}/bootstrap\n",
            ),
            (
                "scripts/crds.sh",
                "ROOT_DIR=\"$(git rev-parse --show-toplevel)\"\nfile=\"${ROOT_DIR}/kubernetes/bootstrap\"\nkubectl apply -k \"${file}\"\n",
            ),
        ];
        let out = scan_text(&files, "Taskfile.yaml");
        assert_eq!(
            out.commands[0].target,
            Target::Kustomization("kubernetes/bootstrap".into())
        );
        let out = scan_text(&files, "scripts/crds.sh");
        assert_eq!(
            out.commands[0].target,
            Target::Kustomization("kubernetes/bootstrap".into())
        );
    }

    #[test]
    fn unresolvable_paths_are_left_out() {
        let files = [(
            "mod.just",
            "apply ks_path:\n    kustomize build \"{{ ks_path }}\" | kubectl apply -f -\n",
        )];
        let out = scan_text(&files, "mod.just");
        assert!(out.commands.is_empty(), "{:?}", out.commands);
    }

    #[test]
    fn arrays_loops_and_script_arguments() {
        let script = "#!/usr/bin/env bash\nexport ROOT_DIR=\"$(git rev-parse --show-toplevel)\"\nreadonly CLUSTER=\"${1:?}\"\nfunction apply_configmaps() {\n    local -r configmaps=(\n        \"${ROOT_DIR}/kubernetes/${CLUSTER}/vars/cluster-settings.yaml\"\n    )\n    for configmap in \"${configmaps[@]}\"; do\n        if kubectl --context ${CLUSTER} --namespace flux-system apply --server-side --filename \"${configmap}\" &>/dev/null; then\n            echo ok\n        fi\n    done\n}\nfunction apply_secrets() {\n    local -r secrets=(\n        \"${ROOT_DIR}/kubernetes/${CLUSTER}/vars/cluster-secrets.sops.yaml\"\n    )\n    for secret in \"${secrets[@]}\"; do\n        if sops exec-file \"${secret}\" \"kubectl --context ${CLUSTER} --namespace flux-system apply --server-side --filename {}\" &>/dev/null; then\n            echo ok\n        fi\n    done\n}\n";
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\ndata: {}\n";
        let files = [
            ("scripts/bootstrap-apps.sh", script),
            ("kubernetes/main/vars/cluster-settings.yaml", cm),
            ("kubernetes/lab/vars/cluster-settings.yaml", cm),
            (
                "kubernetes/main/vars/cluster-secrets.sops.yaml",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-secrets\n  namespace: flux-system\nstringData:\n  A: ENC[AES256_GCM,data:x]\nsops:\n  mac: ENC[x]\n",
            ),
        ];
        let out = scan_text(&files, "scripts/bootstrap-apps.sh");
        let targets: Vec<&Target> = out.commands.iter().map(|c| &c.target).collect();
        for cluster in ["main", "lab"] {
            assert!(
                targets.contains(&&Target::PathIn(
                    format!("kubernetes/{cluster}/vars/cluster-settings.yaml"),
                    "flux-system".into()
                )),
                "{targets:?}"
            );
        }
        assert!(
            targets.contains(&&Target::PathIn(
                "kubernetes/main/vars/cluster-secrets.sops.yaml".into(),
                "flux-system".into()
            )),
            "{targets:?}"
        );
        let index = RepoIndex::from_memory(&files);
        let provides: Vec<Provides> = out
            .commands
            .iter()
            .flat_map(|c| c.items(&index, Catalog::embedded()))
            .map(|i| i.provides)
            .collect();
        assert!(
            provides.contains(&Provides::Object(
                "ConfigMap/flux-system/cluster-settings".into()
            )),
            "{provides:?}"
        );
    }
}
