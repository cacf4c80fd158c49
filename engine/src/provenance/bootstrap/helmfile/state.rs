//! A helmfile state file read as the YAML it is once rendered
//! ([`super::template`]): every document (helmfile splits a state at
//! `---` and merges the parts), releases at any indentation or style,
//! `bases:` (merged into the file, with their releases), nested
//! `helmfiles:`, the environment's values (`environments.default.values`
//! and top-level `values:`, inline or from files) that `{{ .Values.x }}`
//! reads, and per release `installed:`, `values:` (inline and files,
//! `.gotmpl` ones rendered), `set:`, `createNamespace:` and `hooks:`.
//! helmfile's own reading: `state.go` (`HelmState`, `ReleaseSpec`),
//! `state_file_loader.go` (`bases`, environment values), `helmfile.go`
//! (`SubHelmfileSpec`).

use super::template::{self, UNKNOWN};
use crate::repo::RepoIndex;
use crate::yaml::{Node, Value};

/// One release of a helmfile.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    /// The file it is written in.
    pub file: String,
    /// Its line.
    pub line: u32,
    /// The release name.
    pub name: String,
    /// Its namespace, when written literally.
    pub namespace: Option<String>,
    /// The chart's short name, when written literally.
    pub chart: Option<String>,
    /// Whether it installs its chart's CRDs: false when its values or
    /// `set:` switch them off, or `--skip-crds` is among its args.
    pub crds: bool,
    /// Whether helmfile creates its namespace (`createNamespace`, true by
    /// default).
    pub create_namespace: bool,
    /// Its hooks' commands, each a shell line, with their lines.
    pub hooks: Vec<(u32, String)>,
    /// The Flux version a `flux-instance` release's values pin.
    pub flux: Option<String>,
    /// Its values mappings as read (inline and files), later ones winning.
    pub values: Vec<Node>,
}

/// What a state file says, once read.
#[derive(Debug, Default)]
pub struct State {
    /// The releases (the bases' first).
    pub releases: Vec<Release>,
    /// Nested helmfiles (`helmfiles:`), as repository paths (globs expanded).
    pub nested: Vec<String>,
    /// The `bases:` it is layered on (theirs included), as repository paths.
    pub bases: Vec<String>,
}

/// Why a state file could not be read as YAML.
#[derive(Debug)]
pub struct Unread {
    /// The line of the rendered text the parser stopped at.
    pub line: u32,
    /// The parser's message.
    pub why: String,
}

/// Reads a state file (`rel`, with its text). `depth` bounds `bases:`.
pub fn read(index: &RepoIndex, rel: &str, text: &str) -> Result<State, Unread> {
    read_at(index, rel, text, 0)
}

fn parse(text: &str) -> Result<Vec<Node>, Unread> {
    crate::yaml::parse_text(text).map_err(|e| Unread {
        line: e.line,
        why: e.message,
    })
}

fn read_at(index: &RepoIndex, rel: &str, text: &str, depth: u32) -> Result<State, Unread> {
    let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
    let empty = Node::new(Value::Map(Vec::new()));
    let first = parse(&template::render(text, &empty, "default"))?;
    // The environment's values: the bases', then the file's own.
    let mut values = Node::new(Value::Map(Vec::new()));
    let mut bases = Vec::new();
    for doc in &first {
        for base in doc.get("bases").map(Node::as_seq).unwrap_or_default() {
            if let Some(path) = base.as_str().and_then(|p| local(dir, p)) {
                bases.push(path);
            }
        }
    }
    let mut out = State::default();
    if depth < 4 {
        for base in &bases {
            let Ok(btext) = index.read_text(base) else {
                continue;
            };
            if let Ok(docs) = parse(&template::render(&btext, &empty, "default")) {
                for doc in &docs {
                    environment_values(index, base, doc, &mut values);
                }
            }
            if let Ok(state) = read_at(index, base, &btext, depth + 1) {
                out.releases.extend(state.releases);
                out.nested.extend(state.nested);
                out.bases.extend(state.bases);
            }
        }
    }
    out.bases.extend(bases);
    for doc in &first {
        environment_values(index, rel, doc, &mut values);
    }
    let docs = parse(&template::render(text, &values, "default")).unwrap_or(first);
    for doc in &docs {
        let defaults = doc.get("helmDefaults");
        let default_args = args(defaults);
        let default_ns = defaults
            .and_then(|d| d.get("createNamespace"))
            .and_then(Node::as_bool)
            .unwrap_or(true);
        for r in doc.get("releases").map(Node::as_seq).unwrap_or_default() {
            if let Some(release) = release(index, rel, r, &values, &default_args, default_ns) {
                out.releases.push(release);
            }
        }
        for h in doc.get("helmfiles").map(Node::as_seq).unwrap_or_default() {
            let path = h
                .as_str()
                .map(str::to_string)
                .or_else(|| h.str_at(&["path"]));
            if let Some(path) = path.filter(|p| !template::is_unknown(p)) {
                out.nested.extend(expand_glob(index, dir, &path));
            }
        }
    }
    Ok(out)
}

/// A path written in `dir`'s file, as a repository path (none when it
/// leaves the repository, is remote or templated).
fn local(dir: &str, path: &str) -> Option<String> {
    if template::is_unknown(path) || path.contains("://") || path.starts_with("git::") {
        return None;
    }
    let (normal, escapes) = crate::repo::normalize(dir, path);
    (!escapes).then_some(normal)
}

/// A nested helmfile's path: one file, or a glob of them.
fn expand_glob(index: &RepoIndex, dir: &str, path: &str) -> Vec<String> {
    let Some(pattern) = local(dir, path) else {
        return Vec::new();
    };
    if !pattern.contains(['*', '?', '[']) {
        return vec![pattern];
    }
    let Ok(glob) = globset::Glob::new(&pattern).map(|g| g.compile_matcher()) else {
        return Vec::new();
    };
    index
        .below("")
        .filter(|(p, k)| **k == crate::repo::Kind::File && glob.is_match(p))
        .map(|(p, _)| p.to_string())
        .collect()
}

/// Merges the values of a document's `environments.default.values` and
/// top-level `values:` into `into`.
fn environment_values(index: &RepoIndex, rel: &str, doc: &Node, into: &mut Node) {
    let lists = [
        doc.path(&["environments", "default", "values"]),
        doc.get("values"),
    ];
    let empty = Node::new(Value::Map(Vec::new()));
    for list in lists.into_iter().flatten() {
        for v in values_list(index, rel, list, &empty) {
            merge(into, &v);
        }
    }
}

/// The mappings of a `values:` list: inline ones, and files (relative to
/// the state file, `.gotmpl` ones rendered with `env`).
fn values_list(index: &RepoIndex, rel: &str, list: &Node, env: &Node) -> Vec<Node> {
    let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out = Vec::new();
    for item in list.as_seq() {
        match &item.value {
            Value::Map(_) => out.push(item.clone()),
            Value::String(path) => {
                let Some(file) = local(dir, path) else {
                    continue;
                };
                let Ok(text) = index.read_text(&file) else {
                    continue;
                };
                if let Ok(docs) = crate::yaml::parse_text(&template::render(&text, env, "default"))
                {
                    out.extend(docs.into_iter().filter(Node::is_map));
                }
            }
            _ => {}
        }
    }
    out
}

/// Deep merge, `from` winning (helmfile merges environment values with
/// mergo's override).
fn merge(into: &mut Node, from: &Node) {
    match (&mut into.value, &from.value) {
        (Value::Map(_), Value::Map(entries)) => {
            for (k, v) in entries {
                match into.get_mut(k) {
                    Some(existing) if existing.is_map() && v.is_map() => merge(existing, v),
                    _ => into.set(k, v.clone()),
                }
            }
        }
        _ => *into = from.clone(),
    }
}

/// `args:` of `helmDefaults` (or a release), as words.
fn args(node: Option<&Node>) -> Vec<String> {
    node.and_then(|n| n.get("args"))
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::as_scalar_string)
        .flat_map(|a| a.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

fn literal(node: &Node, key: &str) -> Option<String> {
    node.get(key)
        .and_then(Node::as_scalar_string)
        .filter(|v| !v.is_empty() && !template::is_unknown(v))
}

fn release(
    index: &RepoIndex,
    rel: &str,
    r: &Node,
    env: &Node,
    default_args: &[String],
    default_ns: bool,
) -> Option<Release> {
    let name = literal(r, "name")?;
    // `installed: false` uninstalls the release; a templated one may be
    // either, and is read as installed.
    if r.get("installed").and_then(Node::as_bool) == Some(false) {
        return None;
    }
    let chart = literal(r, "chart").map(|c| crate::provenance::chart::short_name(&c));
    let values = r
        .get("values")
        .map(|v| values_list(index, rel, v, env))
        .unwrap_or_default();
    let sets_off = r
        .get("set")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .any(|s| {
            match (
                s.str_at(&["name"]),
                s.get("value").and_then(Node::as_scalar_string),
            ) {
                (Some(n), Some(v)) => super::super::values::set_switches_off(&n, &v),
                _ => false,
            }
        });
    let release_args = args(Some(r));
    let skip = default_args
        .iter()
        .chain(&release_args)
        .any(|a| a == "--skip-crds");
    let crds = !sets_off && !skip && !values.iter().any(super::super::values::values_switch_off);
    let flux = (chart.as_deref() == Some("flux-instance"))
        .then(|| {
            values
                .iter()
                .rev()
                .find_map(super::super::values::flux_instance_version)
        })
        .flatten();
    let hooks = r
        .get("hooks")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(hook)
        .collect();
    Some(Release {
        file: rel.to_string(),
        line: r.line,
        name,
        namespace: literal(r, "namespace"),
        chart,
        crds,
        create_namespace: r
            .get("createNamespace")
            .and_then(Node::as_bool)
            .unwrap_or(default_ns),
        hooks,
        flux,
        values,
    })
}

/// A hook's command as a shell line: `command` and `args` (`sh -c TEXT`
/// is TEXT).
fn hook(h: &Node) -> Option<(u32, String)> {
    let command = h.get("command").and_then(Node::as_scalar_string)?;
    let args: Vec<String> = h
        .get("args")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::as_scalar_string)
        .collect();
    let shell = ["sh", "bash", "/bin/sh", "/bin/bash"].contains(&command.as_str());
    let text = match args.as_slice() {
        [c, script, ..] if shell && c == "-c" => script.clone(),
        _ => {
            let quoted: Vec<String> = args
                .iter()
                .map(|a| {
                    if a.contains(char::is_whitespace) {
                        format!("'{}'", a.replace('\'', ""))
                    } else {
                        a.clone()
                    }
                })
                .collect();
            format!("{command} {}", quoted.join(" "))
        }
    };
    (!text.contains(UNKNOWN)).then_some((h.line, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_zero_lists_values_files_and_switches() {
        let index = RepoIndex::from_memory(&[
            (
                "bootstrap/helmfile.yaml",
                "---\nbases:\n- ./env.yaml\n---\nhelmDefaults:\n  wait: true\nreleases:\n- name: cert-manager\n  namespace: cert-manager\n  chart: oci://quay.io/jetstack/charts/cert-manager\n  values:\n  - ./values/cert-manager.yaml.gotmpl\n- name: cilium\n  namespace: kube-system\n  chart: '{{ .Values.charts.cilium }}'\n  needs: [cert-manager/cert-manager]\n  set:\n  - name: crds.enabled\n    value: true\n  hooks:\n  - events: [postsync]\n    command: kubectl\n    args: [apply, --filename=../crds/cilium.yaml]\n- name: gone\n  chart: x/gone\n  installed: false\n- name: flux-instance\n  namespace: flux-system\n  chart: oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance\n  createNamespace: false\n  values:\n  - instance:\n      distribution:\n        version: 2.7.2\nhelmfiles:\n- path: ./nested/*.yaml\n",
            ),
            (
                "bootstrap/env.yaml",
                "environments:\n  default:\n    values:\n    - charts:\n        cilium: oci://ghcr.io/cilium/charts/cilium\n      crds: false\n",
            ),
            (
                "bootstrap/values/cert-manager.yaml.gotmpl",
                "crds:\n  enabled: {{ .Values.crds }}\n",
            ),
            ("bootstrap/nested/a.yaml", "releases: []\n"),
        ]);
        let text = index.read_text("bootstrap/helmfile.yaml").unwrap();
        let state = read(&index, "bootstrap/helmfile.yaml", &text).unwrap();
        let names: Vec<&str> = state.releases.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["cert-manager", "cilium", "flux-instance"]);
        let cm = &state.releases[0];
        assert_eq!(cm.chart.as_deref(), Some("cert-manager"));
        assert!(!cm.crds, "crds.enabled false from the environment's values");
        assert_eq!(cm.line, 8);
        let cilium = &state.releases[1];
        assert_eq!(cilium.chart.as_deref(), Some("cilium"));
        assert!(cilium.crds);
        assert_eq!(
            cilium.hooks[0].1,
            "kubectl apply --filename=../crds/cilium.yaml"
        );
        let flux = &state.releases[2];
        assert_eq!(flux.flux.as_deref(), Some("2.7.2"));
        assert!(!flux.create_namespace);
        assert_eq!(state.nested, ["bootstrap/nested/a.yaml"]);
    }
}
