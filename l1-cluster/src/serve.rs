//! The tree Flux is served: a copy of the repository with only what L1 must
//! change, each change reported.
//!
//! * files `l1.manifests` maps are replaced by their published copy, and
//!   the cluster's `gotk-components.yaml` by the Flux manifests the harness
//!   installs (so that the `flux-system` Kustomization re-applies what was
//!   installed, not a trimmed sketch of it);
//! * the cluster's sync GitRepository points at the harness's git server:
//!   `spec.url` replaced, `spec.secretRef` removed (the server is
//!   anonymous), a `ref` the server cannot serve (`semver`, `commit`, `name`)
//!   replaced by the branch pushed. Without this the `flux-system`
//!   Kustomization would re-apply the original within one interval;
//! * with `retry` set, every Flux Kustomization of the cluster whose retry
//!   (`spec.retryInterval`, else `spec.interval`, `GetRetryInterval`) is
//!   longer gets `spec.retryInterval: <retry>`, so that a race converges in
//!   seconds rather than after a 30-minute interval.
//!
//! Files are edited as text, line by line, so comments and layout stay;
//! each edit is re-read and checked, and a document whose layout defeats
//! the text edit (flow style) is rewritten from its parsed form instead,
//! which the report says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use conformance::model::{Cluster, Entry, Span, TierId};
use conformance::yaml::{self, Node, Value};

use crate::error::{EditError, ServeError};

/// What to change.
#[derive(Debug, Clone)]
pub struct Changes {
    /// Repository files and their replacement content, with a description
    /// of where it comes from.
    pub replace: Vec<(String, Vec<u8>, String)>,
    /// The URL Flux clones from, and the branch pushed there.
    pub url: String,
    /// The branch pushed there (the one the sync GitRepository follows, else `main`).
    pub branch: String,
    /// The retry interval to shorten to (`None`: leave them).
    pub retry: Option<String>,
}

/// The tree served, and what was changed in it.
#[derive(Debug)]
pub struct Served {
    /// The directory holding the served copy.
    pub dir: PathBuf,
    /// Every change, in words, for the report.
    pub notes: Vec<String>,
    /// The tag the sync GitRepository names (`spec.ref.tag`), to push too.
    pub tag: Option<String>,
}

/// Where the cluster's sync GitRepository is defined, and its `ref`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncSource {
    /// Where the repository defines the GitRepository (`None`: not in git).
    pub at: Option<Span>,
    /// The GitRepository's namespace and name.
    pub id: TierId,
}

/// The sync GitRepository of `cluster`'s entry: the object the entry
/// Kustomization's `sourceRef` names, where the repository defines it.
/// Errors name what L1 cannot serve yet.
pub fn sync_source(cluster: &Cluster) -> Result<SyncSource, ServeError> {
    let tier = match &cluster.entry {
        Entry::SyncKustomization { tier, .. } => &cluster.tiers[tier],
        Entry::Directory { path } => {
            return Err(ServeError::NoSyncInGit {
                cluster: cluster.name.clone(),
                path: path.clone(),
            });
        }
    };
    if tier.source_ref.kind != "GitRepository" {
        return Err(ServeError::NotGit {
            cluster: cluster.name.clone(),
            kind: tier.source_ref.kind.clone(),
            reference: tier.source_ref.to_string(),
        });
    }
    let id = TierId::new(&tier.source_ref.namespace, &tier.source_ref.name);
    let at = cluster
        .tiers
        .values()
        .flat_map(|t| t.objects())
        .find(|o| {
            o.id.kind == "GitRepository"
                && o.id.name == id.name
                && o.id.namespace.as_deref() == Some(id.namespace.as_str())
        })
        .and_then(|o| o.source.clone());
    Ok(SyncSource { at, id })
}

/// The repository file holding the cluster's Flux components (the file
/// defining the `kustomize-controller` Deployment its entry applies).
pub fn components_file(cluster: &Cluster) -> Option<String> {
    let Entry::SyncKustomization { tier, .. } = &cluster.entry else {
        return None;
    };
    cluster.tiers[tier]
        .objects()
        .iter()
        .find(|o| o.id.kind == "Deployment" && o.id.name == "kustomize-controller")
        .and_then(|o| o.source.as_ref().map(|s| s.file.clone()))
}

/// Copies `repo` to `dir` with the `replace` files replaced (the apply
/// mode's tree); what was replaced, in words.
pub fn copy_with(
    repo: &Path,
    dir: &Path,
    replace: &[(String, Vec<u8>, String)],
) -> Result<Vec<String>, ServeError> {
    copy_tree(repo, dir, repo).map_err(|source| ServeError::Copy {
        repo: repo.to_path_buf(),
        source,
    })?;
    let mut notes = Vec::new();
    for (file, bytes, from) in replace {
        let path = inside(dir, file)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ServeError::Directory {
                file: file.clone(),
                source,
            })?;
        }
        std::fs::write(&path, bytes).map_err(|source| ServeError::Write {
            file: file.clone(),
            source,
        })?;
        notes.push(format!("{file} replaced by {from}"));
    }
    Ok(notes)
}

/// Copies `repo` to `dir` and makes the changes.
pub fn serve(
    repo: &Path,
    dir: &Path,
    cluster: &Cluster,
    changes: &Changes,
) -> Result<Served, ServeError> {
    let mut notes = copy_with(repo, dir, &changes.replace)?;
    let source = sync_source(cluster)?;
    // Edits per file, applied from the last document up so that line
    // numbers stay valid.
    let mut edits: BTreeMap<String, Vec<(u32, Edit)>> = BTreeMap::new();
    let mut tag = None;
    if let Some(at) = &source.at {
        let text = read(dir, &at.file)?;
        let doc = document_at(&text, at.line).ok_or_else(|| ServeError::NoGitRepository {
            file: at.file.clone(),
            line: at.line,
        })?;
        let spec = doc.get("spec");
        let reference = spec.and_then(|s| s.get("ref"));
        let mut edit = Edit::default();
        edit.set
            .push(("url".into(), Set::Scalar(changes.url.clone())));
        edit.remove.push("secretRef".into());
        let mut note = format!(
            "GitRepository {}: spec.url {} → {}",
            source.id,
            spec.and_then(|s| s.get("url"))
                .and_then(Node::as_str)
                .unwrap_or("(none)"),
            changes.url
        );
        if spec.and_then(|s| s.get("secretRef")).is_some() {
            note.push_str(", spec.secretRef removed");
        }
        match reference {
            Some(r) if r.get("branch").is_some() && r.as_map().len() == 1 => {}
            Some(r) if r.get("tag").is_some() && r.as_map().len() == 1 => {
                tag = r.get("tag").and_then(Node::as_scalar_string);
            }
            other => {
                edit.set.push((
                    "ref".into(),
                    Set::Block(vec![format!("branch: {}", changes.branch)]),
                ));
                if other.is_some() {
                    note.push_str(&format!(
                        ", spec.ref → branch {} (the test server has one branch)",
                        changes.branch
                    ));
                }
            }
        }
        notes.push(note);
        edits
            .entry(at.file.clone())
            .or_default()
            .push((at.line, edit));
    } else {
        notes.push(format!(
            "GitRepository {} is not in git: the harness creates it, pointing at {}",
            source.id, changes.url
        ));
    }
    if let Some(retry) = &changes.retry {
        let limit = duration_secs(retry).ok_or_else(|| ServeError::Retry(retry.clone()))?;
        let mut shortened = 0;
        for tier in cluster.tiers.values() {
            let spec = tier.spec.get("spec");
            let current = spec
                .and_then(|s| s.get("retryInterval").or_else(|| s.get("interval")))
                .and_then(Node::as_str)
                .and_then(duration_secs);
            if current.is_some_and(|c| c <= limit) || tier.defined_at.file.is_empty() {
                continue;
            }
            let mut edit = Edit::default();
            edit.set
                .push(("retryInterval".into(), Set::Scalar(retry.clone())));
            edits
                .entry(tier.defined_at.file.clone())
                .or_default()
                .push((tier.defined_at.line, edit));
            shortened += 1;
        }
        if shortened > 0 {
            notes.push(format!(
                "spec.retryInterval: {retry} on {shortened} Kustomization(s) whose retry was longer (so that retries come in seconds; nothing else is changed)"
            ));
        }
    }
    for (file, mut list) in edits {
        let mut text = read(dir, &file)?;
        list.sort_by_key(|e| std::cmp::Reverse(e.0));
        for (line, edit) in list {
            let (edited, rewritten) =
                apply_edit(&text, line, &edit).map_err(|source| ServeError::Edit {
                    file: file.clone(),
                    line,
                    source,
                })?;
            if rewritten {
                notes.push(format!(
                    "{file}:{line}: the document was rewritten from its parsed form (its layout defeats a line edit): comments there are gone in the served copy"
                ));
            }
            text = edited;
        }
        std::fs::write(inside(dir, &file)?, text).map_err(|source| ServeError::Write {
            file: file.clone(),
            source,
        })?;
    }
    Ok(Served {
        dir: dir.to_path_buf(),
        notes,
        tag,
    })
}

fn inside(dir: &Path, file: &str) -> Result<PathBuf, ServeError> {
    let (norm, escapes) = conformance::repo::normalize("", file);
    if escapes || norm.is_empty() {
        return Err(ServeError::Outside {
            file: file.to_string(),
        });
    }
    Ok(dir.join(norm))
}

fn read(dir: &Path, file: &str) -> Result<String, ServeError> {
    std::fs::read_to_string(inside(dir, file)?).map_err(|source| ServeError::Read {
        file: file.to_string(),
        source,
    })
}

/// Copies a tree, leaving out `.git` and symbolic links that lead outside
/// `root`.
fn copy_tree(from: &Path, to: &Path, root: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let path = entry.path();
        let target = to.join(&name);
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.file_type().is_symlink() {
            let Ok(real) = std::fs::canonicalize(&path) else {
                continue;
            };
            let Ok(root) = std::fs::canonicalize(root) else {
                continue;
            };
            if !real.starts_with(&root) {
                continue;
            }
            if real.is_dir() {
                copy_tree(&real, &target, &root)?;
            } else {
                std::fs::copy(&real, &target)?;
            }
        } else if meta.is_dir() {
            copy_tree(&path, &target, root)?;
        } else {
            std::fs::copy(&path, &target)?;
        }
    }
    Ok(())
}

/// Go's `time.ParseDuration` for what Flux intervals use (h, m, s, ms).
pub fn duration_secs(text: &str) -> Option<u64> {
    let mut total = 0f64;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += n * scale;
        rest = &rest[unit..];
    }
    Some(total.round() as u64)
}

/// Changes to the `spec` of one document.
#[derive(Debug, Clone, Default)]
struct Edit {
    set: Vec<(String, Set)>,
    remove: Vec<String>,
}

#[derive(Debug, Clone)]
enum Set {
    Scalar(String),
    /// A mapping, one `key: value` per line.
    Block(Vec<String>),
}

/// The document of a multi-document text that holds `line` (1-based).
fn document_at(text: &str, line: u32) -> Option<Node> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = doc_range(&lines, line)?;
    let body = lines[start..end].join("\n");
    yaml::parse_documents(&body).ok()?.into_iter().next()
}

fn is_separator(l: &str) -> bool {
    l == "---" || l.starts_with("--- ") || l == "..." || l.starts_with("---\t")
}

/// The lines [start, end) of the document holding `line`.
fn doc_range(lines: &[&str], line: u32) -> Option<(usize, usize)> {
    let at = (line as usize).checked_sub(1)?;
    if at >= lines.len() {
        return None;
    }
    let start = (0..=at)
        .rev()
        .find(|&i| is_separator(lines[i].trim_end()))
        .map_or(0, |i| i + 1);
    let end = (at + 1..lines.len())
        .find(|&i| is_separator(lines[i].trim_end()))
        .unwrap_or(lines.len());
    Some((start, end))
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start_matches(' ').len()
}

fn blank(l: &str) -> bool {
    let t = l.trim();
    t.is_empty() || t.starts_with('#')
}

/// Applies `edit` to the document holding `line`; `true` when the document
/// had to be rewritten from its parsed form.
fn apply_edit(text: &str, line: u32, edit: &Edit) -> Result<(String, bool), EditError> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = doc_range(&lines, line).ok_or(EditError::NoDocument)?;
    let mut doc: Vec<String> = lines[start..end].iter().map(|l| l.to_string()).collect();
    let edited = edit_lines(&doc, edit);
    let rewritten = match edited {
        Some(new) if verify(&new, edit) => {
            doc = new;
            false
        }
        _ => {
            doc = rewrite(&doc, edit)?;
            true
        }
    };
    let mut out: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
    out.extend(doc);
    out.extend(lines[end..].iter().map(|l| l.to_string()));
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    Ok((joined, rewritten))
}

/// The line edit, when the document's `spec` is a block mapping at the
/// document's root.
fn edit_lines(doc: &[String], edit: &Edit) -> Option<Vec<String>> {
    let mut doc = doc.to_vec();
    let spec = doc
        .iter()
        .position(|l| l.starts_with("spec:") && blank(&l["spec:".len()..]))?;
    let block_end = |doc: &[String]| {
        (spec + 1..doc.len())
            .find(|&i| !blank(&doc[i]) && indent(&doc[i]) == 0)
            .unwrap_or(doc.len())
    };
    let child = (spec + 1..block_end(&doc))
        .find(|&i| !blank(&doc[i]))
        .map(|i| indent(&doc[i]))
        .filter(|&n| n > 0)?;
    let pad = " ".repeat(child);
    // The line of a key of spec and the lines of its value.
    let find = |doc: &[String], key: &str| -> Option<(usize, usize)> {
        let end = block_end(doc);
        let at = (spec + 1..end).find(|&i| {
            indent(&doc[i]) == child && {
                let t = doc[i].trim_start();
                t.strip_prefix(key).is_some_and(|r| r.starts_with(':'))
            }
        })?;
        let mut last = at + 1;
        while last < end && (doc[last].trim().is_empty() || indent(&doc[last]) > child) {
            last += 1;
        }
        // Trailing blank lines belong to what follows.
        while last > at + 1 && doc[last - 1].trim().is_empty() {
            last -= 1;
        }
        Some((at, last))
    };
    for key in &edit.remove {
        if let Some((a, b)) = find(&doc, key) {
            doc.drain(a..b);
        }
    }
    for (key, value) in &edit.set {
        let new: Vec<String> = match value {
            Set::Scalar(v) => vec![format!("{pad}{key}: {}", scalar(v))],
            Set::Block(lines) => std::iter::once(format!("{pad}{key}:"))
                .chain(lines.iter().map(|l| format!("{pad}  {l}")))
                .collect(),
        };
        match find(&doc, key) {
            Some((a, b)) => {
                doc.splice(a..b, new);
            }
            None => {
                doc.splice(spec + 1..spec + 1, new);
            }
        }
    }
    Some(doc)
}

/// A plain scalar when YAML reads it back as the same string (YAML 1.1 too,
/// as Kubernetes' sigs.k8s.io/yaml does: `yes` is a boolean there), else
/// quoted.
fn scalar(v: &str) -> String {
    let yaml11 = matches!(
        v.to_ascii_lowercase().as_str(),
        "y" | "yes" | "n" | "no" | "on" | "off" | "true" | "false" | "null" | "~"
    ) || v.parse::<f64>().is_ok();
    let plain = !v.is_empty()
        && !yaml11
        && !v.contains(": ")
        && !v.contains(" #")
        && !v.starts_with(|c: char| "!&*{}[]|>'\"%@`#,?:-".contains(c))
        && yaml::parse_documents(&format!("k: {v}"))
            .ok()
            .and_then(|d| d.into_iter().next())
            .and_then(|d| d.get("k").and_then(Node::as_str).map(str::to_string))
            .as_deref()
            == Some(v);
    if plain {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "''"))
    }
}

/// Whether the edited document says what the edit meant.
fn verify(doc: &[String], edit: &Edit) -> bool {
    let Ok(parsed) = yaml::parse_documents(&doc.join("\n")) else {
        return false;
    };
    let Some(spec) = parsed.first().and_then(|d| d.get("spec")) else {
        return false;
    };
    edit.remove.iter().all(|k| spec.get(k).is_none())
        && edit.set.iter().all(|(k, v)| match v {
            Set::Scalar(s) => spec.get(k).and_then(Node::as_str) == Some(s.as_str()),
            Set::Block(lines) => spec.get(k).is_some_and(|n| n.as_map().len() == lines.len()),
        })
}

/// The document rewritten from its parsed form, edited.
fn rewrite(doc: &[String], edit: &Edit) -> Result<Vec<String>, EditError> {
    let parsed = yaml::parse_documents(&doc.join("\n"))?;
    let mut node = parsed.into_iter().next().ok_or(EditError::Empty)?;
    let spec = node.map_entry("spec");
    for key in &edit.remove {
        spec.remove(key);
    }
    for (key, value) in &edit.set {
        let value = match value {
            Set::Scalar(s) => Node::new(Value::String(s.clone())),
            Set::Block(lines) => Node::new(Value::Map(
                lines
                    .iter()
                    .filter_map(|l| l.split_once(": "))
                    .map(|(k, v)| (k.to_string(), Node::new(Value::String(v.to_string()))))
                    .collect(),
            )),
        };
        spec.set(key, value);
    }
    Ok(yaml::to_yaml(&node).lines().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(duration_secs("30m"), Some(1800));
        assert_eq!(duration_secs("1h30m"), Some(5400));
        assert_eq!(duration_secs("10m0s"), Some(600));
        assert_eq!(duration_secs("1.5h"), Some(5400));
        assert_eq!(duration_secs("20s"), Some(20));
        assert_eq!(duration_secs("500ms"), Some(1));
        assert_eq!(duration_secs("${INTERVAL}"), None);
        assert_eq!(duration_secs(""), None);
        assert_eq!(duration_secs("5d"), None);
    }

    const SYNC: &str = "# Generated by flux bootstrap
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m0s
  ref:
    branch: main
  secretRef:
    name: flux-system
  url: ssh://git@github.com/example/platform
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m0s # the default
  path: ./clusters/prod
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
";

    fn edit(url: &str) -> Edit {
        Edit {
            set: vec![("url".into(), Set::Scalar(url.into()))],
            remove: vec!["secretRef".into()],
        }
    }

    #[test]
    fn the_sync_source_is_pointed_at_the_test_server_and_nothing_else_moves() {
        let (out, rewritten) =
            apply_edit(SYNC, 4, &edit("http://172.18.0.3:3000/l1/repo.git")).expect("edit");
        assert!(!rewritten);
        assert!(
            out.starts_with("# Generated by flux bootstrap\n---\n"),
            "{out}"
        );
        assert!(
            out.contains("  url: http://172.18.0.3:3000/l1/repo.git\n"),
            "{out}"
        );
        assert!(!out.contains("secretRef"), "{out}");
        assert!(out.contains("  ref:\n    branch: main\n"), "{out}");
        // The Kustomization below is untouched, comment included.
        assert!(out.ends_with(&SYNC[SYNC.find("---\napiVersion: kustomize").expect("doc")..]));
    }

    #[test]
    fn retry_interval_is_added_or_replaced() {
        let e = Edit {
            set: vec![("retryInterval".into(), Set::Scalar("20s".into()))],
            remove: vec![],
        };
        let (out, rewritten) = apply_edit(SYNC, 17, &e).expect("edit");
        assert!(!rewritten);
        assert!(
            out.contains("spec:\n  retryInterval: 20s\n  interval: 10m0s # the default\n"),
            "{out}"
        );
        let (again, _) = apply_edit(
            &out,
            17,
            &Edit {
                set: vec![("retryInterval".into(), Set::Scalar("15s".into()))],
                remove: vec![],
            },
        )
        .expect("edit");
        assert!(
            again.contains("  retryInterval: 15s\n") && !again.contains("20s"),
            "{again}"
        );
    }

    #[test]
    fn a_ref_the_server_cannot_serve_becomes_the_branch() {
        let text = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec:\n  ref:\n    semver: '>=1.0.0'\n  url: https://github.com/example/platform\n";
        let e = Edit {
            set: vec![
                (
                    "url".into(),
                    Set::Scalar("http://10.0.0.2:3000/l1/r.git".into()),
                ),
                ("ref".into(), Set::Block(vec!["branch: main".into()])),
            ],
            remove: vec!["secretRef".into()],
        };
        let (out, rewritten) = apply_edit(text, 1, &e).expect("edit");
        assert!(!rewritten);
        let doc = document_at(&out, 1).expect("doc");
        assert_eq!(
            doc.str_at(&["spec", "ref", "branch"]).as_deref(),
            Some("main")
        );
        assert!(doc.path(&["spec", "ref", "semver"]).is_none(), "{out}");
    }

    #[test]
    fn flow_style_is_rewritten_and_said_so() {
        let text = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: 'ssh://git@github.com/x', secretRef: {name: flux-system}, ref: {branch: main}}\n";
        let (out, rewritten) =
            apply_edit(text, 1, &edit("http://10.0.0.2:3000/l1/r.git")).expect("edit");
        assert!(rewritten);
        let doc = document_at(&out, 1).expect("doc");
        assert_eq!(
            doc.str_at(&["spec", "url"]).as_deref(),
            Some("http://10.0.0.2:3000/l1/r.git")
        );
        assert!(doc.path(&["spec", "secretRef"]).is_none());
        assert_eq!(
            doc.str_at(&["spec", "ref", "branch"]).as_deref(),
            Some("main")
        );
    }

    #[test]
    fn values_that_need_quotes_get_them() {
        assert_eq!(scalar("20s"), "20s");
        assert_eq!(
            scalar("http://10.0.0.2:3000/l1/r.git"),
            "http://10.0.0.2:3000/l1/r.git"
        );
        assert_eq!(scalar("yes"), "'yes'");
        assert_eq!(scalar("a: b"), "'a: b'");
        assert_eq!(scalar("it's"), "it's");
        assert_eq!(scalar("'quoted"), "'''quoted'");
        assert_eq!(scalar("1.10"), "'1.10'");
    }

    #[test]
    fn a_whole_repository_is_served_with_its_changes() {
        let repo = tempfile::tempdir().expect("repo");
        let root = repo.path();
        let write = |p: &str, t: &str| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, t).expect("write");
        };
        write("clusters/prod/flux-system/gotk-sync.yaml", SYNC);
        write(
            "clusters/prod/flux-system/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [gotk-sync.yaml]\n",
        );
        write(
            "clusters/prod/apps.yaml",
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 30m\n  path: ./apps\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
        );
        write(
            "apps/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n",
        );
        write(".git/HEAD", "ref: refs/heads/main\n");
        let session =
            conformance::session::Session::open(&conformance::session::RunOptions::at(root))
                .expect("session");
        let cluster = &session.model.clusters[0];
        let out = tempfile::tempdir().expect("out");
        let changes = Changes {
            replace: vec![(
                "apps/cm.yaml".into(),
                b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: published, namespace: default}\n".to_vec(),
                "https://example.com/cm.yaml (sha256 abc)".into(),
            )],
            url: "http://10.0.0.2:3000/l1/r.git".into(),
            branch: "main".into(),
            retry: Some("20s".into()),
        };
        let served = serve(root, out.path(), cluster, &changes).expect("served");
        assert!(!out.path().join(".git").exists());
        let sync =
            std::fs::read_to_string(out.path().join("clusters/prod/flux-system/gotk-sync.yaml"))
                .expect("sync");
        assert!(sync.contains("url: http://10.0.0.2:3000/l1/r.git") && !sync.contains("secretRef"));
        let apps =
            std::fs::read_to_string(out.path().join("clusters/prod/apps.yaml")).expect("apps");
        assert!(apps.contains("  retryInterval: 20s\n"), "{apps}");
        let cm = std::fs::read_to_string(out.path().join("apps/cm.yaml")).expect("cm");
        assert!(cm.contains("published"));
        // The original is untouched.
        let original = std::fs::read_to_string(root.join("clusters/prod/apps.yaml")).expect("orig");
        assert!(!original.contains("retryInterval"));
        let text = served.notes.join("\n");
        assert!(
            text.contains("apps/cm.yaml replaced by https://example.com/cm.yaml"),
            "{text}"
        );
        assert!(text.contains("spec.secretRef removed"), "{text}");
        assert!(
            text.contains("retryInterval: 20s on 2 Kustomization(s)"),
            "{text}"
        );
        // The served tree is a repository the model reads the same way.
        let again =
            conformance::session::Session::open(&conformance::session::RunOptions::at(out.path()))
                .expect("served session");
        assert_eq!(again.model.clusters[0].tiers.len(), cluster.tiers.len());
    }
}
