//! The Flux Operator's entries: a FluxInstance (or the flux-instance chart's
//! values) in the repository names the directory it syncs; its
//! `kustomize.patches` patch the sync Kustomization; an OCI sync path that
//! holds the instance's own file shows which directory the artifact is built
//! from.

use super::parent_dir;
use super::walk::EntryPoint;
use super::{LocalSource, LocalSources, tier_from};
use crate::model::{Entry, Span, TierState};
use crate::repo::{self, RepoIndex};
use crate::yaml::{Node, Value};

/// The directories of this repository that a FluxInstance syncs: from
/// FluxInstance objects (`spec.sync`), flux-instance HelmReleases
/// (`spec.values.instance.sync`) and the chart's values files
/// (`instance.sync`). A GitRepository sync path is a directory of this
/// repository when it exists; an OCIRepository or Bucket one only when its
/// source is mapped under `sources` (or inferred).
///
/// A sync path with a variable (`kubernetes/clusters/${CLUSTER}/bootstrap`,
/// substituted where the repository does not say, by the postBuild of the
/// Kustomization that applies the FluxInstance or by the chart's values at
/// install) is each directory the variable can name, with a note that says
/// which variable and which directories.
pub(super) fn flux_instance_sync_dirs<'i, 'a>(
    index: &RepoIndex,
    local: &LocalSources,
    instances: &'i [Instance<'a>],
    vars: &[(String, std::collections::BTreeMap<String, String>)],
    notes: &mut Vec<String>,
) -> Vec<(String, &'i Instance<'a>, Option<String>)> {
    let mut dirs: Vec<(String, &Instance, Option<String>)> = Vec::new();
    for instance in instances {
        let base = match instance.kind.as_str() {
            "GitRepository" => Some(""),
            other => local.dir_for(other, &instance.names.name, Some(&instance.names.namespace)),
        };
        let Some(base) = base else { continue };
        let (dir, escapes) = repo::normalize(base, &instance.path);
        if escapes || dir.is_empty() {
            continue;
        }
        let declared = declared_dirs(&dir, vars);
        let candidates: Vec<(String, Option<String>)> = if !declared.is_empty() {
            let names: Vec<String> = declared.iter().map(|(d, n)| format!("{n}: {d}")).collect();
            notes.push(format!(
                "{}: the FluxInstance sync path `{}` needs {}; filled in from clusters.<name>.vars in conformance.yaml ({})",
                instance.file,
                instance.path,
                variable_names(&dir),
                names.join(", ")
            ));
            declared.into_iter().map(|(d, n)| (d, Some(n))).collect()
        } else if dir.contains("${") {
            let found = variable_dirs(index, &dir);
            let vars = variable_names(&dir);
            notes.push(match found.as_slice() {
                [] => format!(
                    "{}: the FluxInstance sync path `{}` needs {} and names no directory of this repository for any value; declare the cluster's entry in conformance.yaml (`clusters: {{NAME: {{entry: DIR}}}}`)",
                    instance.file, instance.path, vars
                ),
                found => format!(
                    "{}: the FluxInstance sync path `{}` needs {}, which the repository gives where this tool does not read it (a postBuild, the chart's install); checked each directory it can name: {} (set the entry in conformance.yaml to check only one)",
                    instance.file,
                    instance.path,
                    vars,
                    found.join(", ")
                ),
            });
            found.into_iter().map(|d| (d, None)).collect()
        } else {
            vec![(dir, None)]
        };
        for (dir, name) in candidates {
            if index.is_dir(&dir) && !dirs.iter().any(|(d, _, _)| *d == dir) {
                dirs.push((dir, instance, name));
            } else if !index.is_dir(&dir)
                && let Some(name) = name
            {
                notes.push(format!(
                    "{}: clusters.{name}.vars fill the FluxInstance sync path `{}` in as `{dir}`, which is not a directory of this repository",
                    instance.file, instance.path
                ));
            }
        }
    }
    dirs
}

/// The sync path with each declared cluster's variables put in (Flux's
/// envsubst, as the postBuild or the chart would), for the clusters whose
/// `vars` define every variable it uses: (directory, cluster name).
fn declared_dirs(
    path: &str,
    vars: &[(String, std::collections::BTreeMap<String, String>)],
) -> Vec<(String, String)> {
    use crate::postbuild::envsubst::{self, Lookup};
    if !path.contains('$') {
        return Vec::new();
    }
    let Ok(template) = envsubst::parse(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, values) in vars {
        let lookup = |var: &str| match values.get(var) {
            Some(v) => Lookup::Value(v.clone()),
            None => Lookup::Missing,
        };
        if template
            .vars()
            .iter()
            .any(|v| !values.contains_key(&v.name) && !v.op.is_default())
        {
            continue;
        }
        if let Ok(filled) = template.eval(path, &lookup, true) {
            let (dir, escapes) = repo::normalize("", &filled);
            if !escapes && !dir.is_empty() {
                out.push((dir, name.clone()));
            }
        }
    }
    out
}

/// The variables of a path, in words (`CLUSTER`, `CLUSTER and ENV`), as
/// Flux's envsubst reads them.
fn variable_names(path: &str) -> String {
    let mut names: Vec<String> = Vec::new();
    if let Ok(template) = crate::postbuild::envsubst::parse(path) {
        for var in template.vars() {
            if !names.contains(&var.name) {
                names.push(var.name.clone());
            }
        }
    }
    match names.as_slice() {
        [] => "a variable".to_string(),
        [one] => format!("`{one}`"),
        [init @ .., last] => format!(
            "{} and `{last}`",
            init.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The directories of the repository a path with `${VAR}` segments can
/// name: each variable any non-empty segment text, the rest literal.
fn variable_dirs(index: &RepoIndex, path: &str) -> Vec<String> {
    let segments: Vec<&str> = path.split('/').collect();
    let patterns: Vec<Option<regex::Regex>> = segments
        .iter()
        .map(|seg| {
            if !seg.contains("${") {
                return None;
            }
            let mut re = String::from("^");
            let mut rest = *seg;
            while let Some(i) = rest.find("${") {
                re.push_str(&regex::escape(&rest[..i]));
                re.push_str("[^/]+");
                let after = &rest[i + 2..];
                rest = after.find('}').map_or("", |e| &after[e + 1..]);
            }
            re.push_str(&regex::escape(rest));
            re.push('$');
            regex::Regex::new(&re).ok()
        })
        .collect();
    let mut out: Vec<String> = index
        .below("")
        .filter(|(_, kind)| **kind == crate::repo::Kind::Dir)
        .map(|(rel, _)| rel)
        .filter(|rel| {
            let parts: Vec<&str> = rel.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .zip(&patterns)
                    .all(|((p, s), re)| match re {
                        Some(re) => re.is_match(p),
                        None => p == s,
                    })
        })
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

/// A FluxInstance's sync, as written in the repository.
pub(super) struct Instance<'a> {
    /// The file that defines it.
    pub(super) file: &'a str,
    /// `sync.kind`: GitRepository, OCIRepository or Bucket.
    pub(super) kind: String,
    /// `sync.path`, relative to the source's root.
    pub(super) path: String,
    pub(super) patches: Vec<Node>,
    pub(super) names: SyncNames,
    /// `sync.url`: the repository the instance syncs.
    pub(super) url: Option<String>,
}

/// Every FluxInstance sync in the repository: FluxInstance objects
/// (`spec.sync`), flux-instance HelmReleases (`spec.values.instance.sync`)
/// and the chart's values files (`instance.sync`).
pub(super) fn flux_instances(index: &RepoIndex) -> Vec<Instance<'_>> {
    let mut out = Vec::new();
    for (file_name, file) in index.files() {
        let Ok(docs) = file.docs().as_ref() else {
            continue;
        };
        for doc in docs {
            let kind = doc.str_at(&["kind"]).unwrap_or_default();
            let instance = if kind == "FluxInstance"
                && doc
                    .str_at(&["apiVersion"])
                    .is_some_and(|v| v.starts_with("fluxcd.controlplane.io/"))
            {
                doc.path(&["spec"])
            } else if kind == "HelmRelease" {
                doc.path(&["spec", "values", "instance"])
            } else if kind.is_empty() && doc.path(&["apiVersion"]).is_none() {
                doc.path(&["instance"])
            } else {
                None
            };
            let Some(sync) = instance.and_then(|i| i.path(&["sync"])) else {
                continue;
            };
            let Some(path) = sync.str_at(&["path"]) else {
                continue;
            };
            let patches = instance
                .and_then(|i| i.path(&["kustomize", "patches"]))
                .map(|p| p.as_seq().to_vec())
                .unwrap_or_default();
            // The instance's namespace: the object's, or the release's
            // for the chart.
            let namespace = if kind == "FluxInstance" {
                doc.str_at(&["metadata", "namespace"])
            } else if kind == "HelmRelease" {
                doc.str_at(&["spec", "targetNamespace"])
                    .or_else(|| doc.str_at(&["metadata", "namespace"]))
            } else {
                None
            }
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "flux-system".into());
            let names = SyncNames {
                name: sync
                    .str_at(&["name"])
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| namespace.clone()),
                namespace,
            };
            out.push(Instance {
                file: file_name,
                kind: sync.str_at(&["kind"]).unwrap_or_default(),
                path,
                patches,
                names,
                url: sync.str_at(&["url"]),
            });
        }
    }
    out
}

/// Artifacts that a FluxInstance in the repository syncs and that must be
/// built from a directory of it: the sync path, taken inside some
/// directory B of the repository, contains the file that defines the
/// instance (as a sync Kustomization's build contains its own file). The
/// artifact's root is then B; the deepest such B wins.
pub(super) fn self_syncing_artifacts(instances: &[Instance]) -> Vec<LocalSource> {
    let mut out: Vec<LocalSource> = Vec::new();
    let mut conflicting: Vec<LocalSource> = Vec::new();
    for instance in instances {
        if !matches!(instance.kind.as_str(), "OCIRepository" | "Bucket") {
            continue;
        }
        let mut base = parent_dir(instance.file);
        let root = loop {
            let (dir, escapes) = repo::normalize(&base, &instance.path);
            if !escapes && !dir.is_empty() && instance.file.starts_with(&format!("{dir}/")) {
                break Some(base);
            }
            if base.is_empty() {
                break None;
            }
            base = parent_dir(&base);
        };
        let Some(root) = root else { continue };
        let source = LocalSource {
            kind: instance.kind.clone(),
            name: instance.names.name.clone(),
            namespace: Some(instance.names.namespace.clone()),
            dir: root,
        };
        let same = |s: &LocalSource| {
            s.kind == source.kind && s.name == source.name && s.namespace == source.namespace
        };
        match out.iter().find(|s| same(s)) {
            None => out.push(source),
            Some(known) if known.dir == source.dir => {}
            // Instances that disagree on the root: nothing is inferred (the
            // tiers say how to map it under `sources`).
            Some(_) => conflicting.push(source),
        }
    }
    out.retain(|s| {
        !conflicting
            .iter()
            .any(|c| c.kind == s.kind && c.name == s.name && c.namespace == s.namespace)
    });
    out
}

/// The sync objects a FluxInstance creates: a source and a Kustomization,
/// both named `sync.name` or else after the instance's namespace.
pub(super) struct SyncNames {
    pub(super) name: String,
    pub(super) namespace: String,
}

impl Default for SyncNames {
    fn default() -> SyncNames {
        SyncNames {
            name: "flux-system".into(),
            namespace: "flux-system".into(),
        }
    }
}

/// The sync Kustomization of a cluster declared in conformance.yaml
/// (`clusters.<name>.entry`), from its declared source.
/// The entry of a cluster whose Flux objects an installer (Terraform)
/// creates: a tier standing for the installer, already rendered with those
/// objects, from which the walk takes each Kustomization.
pub(super) fn installed_entry(
    name: &str,
    at: Span,
    objects: Vec<crate::model::Object>,
    local: &LocalSources,
) -> EntryPoint {
    let dir = super::parent_dir(&at.file);
    let mut entry = directory_entry(&dir, local, None);
    entry.tier.id = crate::model::TierId::new("terraform", name);
    entry.tier.path = String::new();
    entry.tier.defined_at = at.clone();
    entry.tier.state = TierState::Rendered(objects);
    entry.outside = Some(format!(
        "its Flux objects are created by Terraform ({at}), with whatever else the installer makes"
    ));
    entry
}

pub(super) fn declared_entry(
    dir: &str,
    source: Option<&crate::model::SourceRef>,
    local: &LocalSources,
) -> EntryPoint {
    let mut entry = directory_entry(dir, local, None);
    entry.outside = Some(format!(
        "its entry {dir}/ is declared in conformance.yaml or with --entry: what syncs it is outside this repository"
    ));
    if let Some(source) = source {
        entry.tier.source_ref = source.clone();
        entry.tier.id = crate::model::TierId::new(source.namespace.clone(), source.name.clone());
    }
    entry
}

/// The Kustomization a FluxInstance creates for its sync path, with the
/// instance's `kustomize.patches` applied (they patch it too). `None`: an
/// instance the repository does not show, with the default names.
pub(super) fn directory_entry(
    dir: &str,
    local: &LocalSources,
    instance: Option<&Instance>,
) -> EntryPoint {
    let default_names = SyncNames::default();
    let names = instance.map_or(&default_names, |i| &i.names);
    let mut doc = Node::new(Value::Map(Vec::new()));
    let s = |v: &str| Node::new(Value::String(v.to_string()));
    doc.set("apiVersion", s("kustomize.toolkit.fluxcd.io/v1"));
    doc.set("kind", s("Kustomization"));
    let metadata = doc.map_entry("metadata");
    metadata.set("name", s(&names.name));
    metadata.set("namespace", s(&names.namespace));
    let spec = doc.map_entry("spec");
    // `dir` is a repository path; spec.path is relative to the source's
    // root, which a configured or inferred source may place below it.
    let root = local
        .dir_for("GitRepository", &names.name, Some(&names.namespace))
        .unwrap_or_default();
    let relative = if root.is_empty() {
        dir
    } else if dir == root {
        ""
    } else {
        dir.strip_prefix(&format!("{root}/")).unwrap_or(dir)
    };
    spec.set("path", s(&format!("./{relative}")));
    spec.set("prune", Node::new(Value::Bool(true)));
    let source = spec.map_entry("sourceRef");
    source.set("kind", s("GitRepository"));
    source.set("name", s(&names.name));
    let mut failure = None;
    for patch in instance.map(|i| i.patches.as_slice()).unwrap_or_default() {
        let text = patch.str_at(&["patch"]).unwrap_or_default();
        match crate::render::native::patch_one(&doc, &text, patch.path(&["target"])) {
            Ok(Some(patched)) => doc = patched,
            Ok(None) => {}
            // The operator cannot build its manifests: the instance is not
            // Ready and nothing is synced.
            Err(e) => {
                failure = Some(crate::model::RenderFailure {
                    message: format!(
                        "the FluxInstance's kustomize.patches entry does not apply to the sync Kustomization: {e}"
                    ),
                    at: instance.map(|i| Span::new(i.file, patch.line)),
                });
                break;
            }
        }
    }
    let mut tier = tier_from(&doc, Span::new(dir, 0), None, local);
    if let Some(failure) = failure {
        tier.state = TierState::RenderFailed(failure);
    }
    EntryPoint {
        entry: Entry::Directory {
            path: dir.to_string(),
        },
        tier,
        outside: instance.is_none().then(|| {
            format!(
                "no sync Kustomization or FluxInstance in the repository syncs its entry {dir}/: the cluster's sync object (and what comes with it) is made outside git"
            )
        }),
    }
}
