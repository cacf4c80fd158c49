//! Discovery: find every cluster in a repository and walk its tiers as
//! kustomize-controller would.
//!
//! A cluster is entered by its sync Kustomization: a Flux Kustomization in git
//! whose own build includes the file that defines it
//! (`clusters/prod/flux-system/gotk-sync.yaml`, `path: ./clusters/prod`).
//! Repositories bootstrapped by the Flux Operator have no such object in git;
//! the FluxInstance syncs a directory. Its sync path, when a FluxInstance (or
//! the flux-instance chart's values) is in the repository, is the entry;
//! otherwise every directory holding Flux Kustomizations that no build
//! includes is one.
//!
//! From the entry, discovery builds the path, collects the Flux Kustomizations
//! in the output, builds each of their paths, and so on. Independent builds
//! run in parallel (rayon, one worker per core). A Kustomization whose source
//! is not this repository is kept in the graph but not built, with the reason.
//!
//! The parts, by idea (private modules, named as files): `entries.rs` finds
//! each cluster's entry (sync Kustomizations, directories nothing builds),
//! with `operator.rs` for the Flux Operator's FluxInstance entries and their
//! OCI sources, and `coverage.rs` for the static view of what each path builds;
//! `walk.rs` builds the tiers wave by wave; `tier.rs` reads a Flux
//! Kustomization into a tier; [`artifacts`] places ExternalArtifacts of
//! ArtifactGenerators; [`subtree`] infers the root of a source whose tree
//! is a subdirectory pushed as its own repository.

pub mod artifacts;
mod coverage;
mod entries;
mod layouts;
pub(crate) mod mapped;
mod operator;
pub mod subtree;
mod terraform;
mod tier;
mod unbuilt;
mod walk;
mod waves;

use serde::Deserialize;

pub use mapped::UrlSource;
pub use tier::tier_from;

use crate::model::{Cluster, Model, SourceRef};
use crate::render::Kustomize;
use crate::repo::{Artifact, RepoIndex};
use crate::yaml::Node;
use entries::{cluster_names, find_entries};
use operator::{flux_instances, self_syncing_artifacts};
pub(crate) use unbuilt::unreferenced_notes;
use unbuilt::{adopt_unbuilt_children, adopt_under_unbuilt, unreferenced};
use walk::Walk;

/// `sources[]` in conformance.yaml (and `--source REF=DIR`): a Flux source
/// whose artifact is a directory of this repository (`path`), or another
/// checkout on this machine (`dir`: a fleet's infrastructure or apps
/// repository). The source is named by `kind` and `name` (and `namespace`),
/// or by `url`: every GitRepository, OCIRepository or Bucket with that URL.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceMapping {
    /// `OCIRepository`, `Bucket`, `GitRepository`, `ExternalArtifact`
    /// (with `url`: optional, any of them).
    #[serde(default)]
    pub kind: Option<serde_saphyr::Spanned<String>>,
    /// The source's `metadata.name` (not with `url`).
    #[serde(default)]
    pub name: Option<String>,
    /// Default: any namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The source's `spec.url` (normalised as discovery compares URLs).
    #[serde(default)]
    pub url: Option<serde_saphyr::Spanned<String>>,
    /// The repository directory the artifact is built from (`kubernetes`).
    #[serde(default)]
    pub path: Option<serde_saphyr::Spanned<String>>,
    /// Another checkout that is the artifact (relative to the repository
    /// root, or absolute): read beside the repository under a name of its
    /// own (`@infra`), with its own ignore rules.
    #[serde(default)]
    pub dir: Option<serde_saphyr::Spanned<String>>,
}

/// `repository` in conformance.yaml: the URL (or URLs, for a repository
/// known by several) that Flux fetches this repository from. A GitRepository
/// with one of them is this repository, whatever the checkout's remote is.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepositoryConfig {
    /// `url: https://github.com/example/home-ops`, or a list.
    #[serde(default, deserialize_with = "one_or_many")]
    pub url: Vec<String>,
}

/// `url: <one>` or `url: [<several>]`, with an error that says so.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct Urls;
    impl<'de> serde::de::Visitor<'de> for Urls {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a git URL or a list of git URLs")
        }
        fn visit_str<E: serde::de::Error>(self, url: &str) -> Result<Vec<String>, E> {
            Ok(vec![url.to_string()])
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<String>, A::Error> {
            let mut urls = Vec::new();
            while let Some(url) = seq.next_element::<String>()? {
                urls.push(url);
            }
            Ok(urls)
        }
    }
    d.deserialize_any(Urls)
}

/// Objects SOPS encrypted whole (kind and name included), which the
/// checks cannot identify until Flux decrypts them: one note naming them.
fn opaque_note(clusters: &[Cluster]) -> Option<String> {
    let mut at: Vec<String> = clusters
        .iter()
        .flat_map(|c| c.tiers.values())
        .flat_map(|t| t.objects())
        .filter(|o| crate::model::is_opaque(&o.body))
        .filter_map(|o| o.source.as_ref().map(|s| format!("{}:{}", s.file, s.line)))
        .collect();
    at.sort();
    at.dedup();
    let first = at.first()?;
    let more = match at.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Some(format!(
        "{first}{more}: SOPS-encrypted whole (kind and name included, no encrypted_regex), so what it is is known only once Flux decrypts it; identity and schema checks skip it (encrypt only data and stringData to have it checked)"
    ))
}

/// The directory of a repository file (`""` at the root).
pub(crate) fn parent_dir(file: &str) -> String {
    parent_dir_str(file).to_string()
}

/// The directory of a repository file, borrowed (`""` at the root).
pub(crate) fn parent_dir_str(file: &str) -> &str {
    file.rsplit_once('/')
        .map(|(dir, _)| dir)
        .unwrap_or_default()
}

/// The group of Flux Kustomization objects.
pub(crate) const FLUX_KUSTOMIZATION_GROUP: &str = "kustomize.toolkit.fluxcd.io";

/// Whether a document is a Flux `Kustomization` (not a kustomize config file).
pub(crate) fn is_flux_kustomization(doc: &Node) -> bool {
    doc.str_at(&["kind"]).as_deref() == Some("Kustomization")
        && doc
            .str_at(&["apiVersion"])
            .is_some_and(|v| v.starts_with(&format!("{FLUX_KUSTOMIZATION_GROUP}/")))
}

/// Sources that are this repository although they are not a GitRepository
/// of it: an OCI artifact (or bucket) built from one of its directories
/// (`sources` in conformance.yaml). `spec.path` of their Kustomizations is
/// relative to that directory.
#[derive(Debug, Clone, Default)]
pub struct LocalSources(pub Vec<LocalSource>);

/// One configured source.
#[derive(Debug, Clone)]
pub struct LocalSource {
    /// The source kind (`OCIRepository`, `Bucket`, `GitRepository`, `ExternalArtifact`).
    pub kind: String,
    /// The source's `metadata.name`.
    pub name: String,
    /// `None`: any namespace.
    pub namespace: Option<String>,
    /// The repository directory the artifact is built from.
    pub dir: String,
}

impl LocalSources {
    /// The repository directory of a source, when it is configured.
    pub(crate) fn dir_for(&self, kind: &str, name: &str, namespace: Option<&str>) -> Option<&str> {
        self.0
            .iter()
            .find(|s| {
                s.kind == kind
                    && s.name == name
                    && s.namespace
                        .as_deref()
                        .is_none_or(|ns| namespace.is_none_or(|n| n == ns))
            })
            .map(|s| s.dir.as_str())
    }
}

/// A cluster declared in conformance.yaml (`clusters.<name>.entry`): its
/// sync lives outside git (a managed Flux extension, Terraform, `flux
/// create`), so discovery cannot find it.
#[derive(Debug, Clone)]
pub struct DeclaredEntry {
    /// The cluster's name (the key under `clusters`).
    pub name: String,
    /// The directory it syncs.
    pub path: String,
    /// Its sync source (default `GitRepository flux-system/flux-system`).
    pub source: Option<crate::model::SourceRef>,
}

/// What conformance.yaml tells discovery.
#[derive(Debug, Clone, Default)]
pub struct Declared {
    /// Sources that are this repository (`sources`), or a checkout read
    /// beside it.
    pub sources: LocalSources,
    /// Sources mapped by URL (`sources: [{url: …}]`, `--source URL=DIR`).
    pub by_url: Vec<UrlSource>,
    /// Clusters whose entry is declared rather than discovered.
    pub entries: Vec<DeclaredEntry>,
    /// Per cluster name, the values of the variables its FluxInstance sync
    /// path needs (`clusters.<name>.vars`).
    pub vars: Vec<(String, std::collections::BTreeMap<String, String>)>,
    /// Fetches remote bases (`--fetch-remote`); `None`: they stay unknown.
    pub remote: Option<std::sync::Arc<crate::remote::Fetcher>>,
    /// The URLs this repository is known by (`repository.url`), whatever
    /// the checkout's remote says.
    pub urls: Vec<String>,
}

/// Discovers and renders every cluster of the repository.
pub fn discover(index: &RepoIndex, kustomize: &dyn Kustomize) -> Model {
    discover_with(index, kustomize, &Declared::default())
}

/// As [`discover`], with what conformance.yaml declares (sources that are
/// this repository, clusters whose sync is not in git).
pub fn discover_with(index: &RepoIndex, kustomize: &dyn Kustomize, declared: &Declared) -> Model {
    let instances = flux_instances(index);
    let (local, mut notes, mut urls_used) = local_sources(index, declared, &instances);
    let mut walks = walks(index, declared, &local, &instances, &mut notes);
    let artifacts = artifacts(index, &walks);
    let read_files = waves::build_all(
        &mut walks,
        &artifacts,
        kustomize,
        declared.remote.as_deref(),
        index,
    );
    let taken: std::collections::BTreeSet<String> = walks
        .iter()
        .flat_map(|w| w.taken.values().cloned())
        .collect();
    notes.extend(taken);
    urls_used.extend(walks.iter().flat_map(|w| w.urls_used.iter().cloned()));
    notes.extend(
        declared
            .by_url
            .iter()
            .filter(|m| !urls_used.contains(&m.url))
            .map(mapped::unused_note),
    );
    let clusters: Vec<Cluster> = walks.into_iter().map(Walk::finish).collect();
    let mut clusters = adopt_under_unbuilt(clusters, &mut notes);
    adopt_unbuilt_children(index, &mut clusters, &local);
    let unreferenced = unreferenced(index, &clusters, &read_files);
    notes.extend(unreferenced_notes(&unreferenced));
    notes.extend(index.notes().iter().cloned());
    notes.extend(other_branches(index, &clusters));
    notes.extend(opaque_note(&clusters));
    Model {
        repo: index.root().to_path_buf(),
        clusters,
        notes,
        unreferenced,
        checkouts: index
            .mounts()
            .iter()
            .map(|m| (m.prefix.clone(), m.root.clone()))
            .collect(),
    }
}

/// The sources that are this repository: those conformance.yaml
/// configures, then a FluxInstance's artifact of this repository, then a
/// subdirectory pushed as its own repository (with the note that says it
/// was inferred).
fn local_sources(
    index: &RepoIndex,
    declared: &Declared,
    instances: &[operator::Instance],
) -> (
    LocalSources,
    Vec<String>,
    std::collections::BTreeSet<String>,
) {
    // Configured sources win (by identity, then by URL); a FluxInstance
    // syncing an artifact of this repository adds its own.
    let mut local = declared.sources.clone();
    let (mut notes, used) = mapped::resolve(index, &declared.by_url, &mut local);
    for source in self_syncing_artifacts(instances) {
        if local
            .dir_for(&source.kind, &source.name, source.namespace.as_deref())
            .is_none()
        {
            local.0.push(source);
        }
    }
    // A GitOps tree kept in a subdirectory that is pushed as its own
    // repository: its source's root is that subdirectory.
    let inferred = subtree::infer(index, &local);
    notes.extend(inferred.iter().map(subtree::Inferred::note));
    local.0.extend(inferred.into_iter().map(|i| i.source));
    (local, notes, used)
}

/// One walk per cluster: the declared clusters first (they keep their
/// names), then each discovered entry, named.
fn walks(
    index: &RepoIndex,
    declared: &Declared,
    local: &LocalSources,
    instances: &[operator::Instance],
    notes: &mut Vec<String>,
) -> Vec<Walk> {
    let self_urls = entries::self_urls(index, instances, &declared.urls);
    let (mut entries, entry_notes, named) =
        find_entries(index, local, instances, &self_urls, &declared.vars);
    notes.extend(entry_notes);
    // What a walk may take for this repository by URL alone: only what
    // names this checkout for certain (`repository.url`, a remote that a
    // GitRepository names). A FluxInstance's URL says what a cluster syncs,
    // not which repository this checkout is.
    let known = match self_urls.is_empty() {
        true => None,
        false => Some(entries::checkout_urls(index, &declared.urls)),
    };
    // Declared clusters come first and keep their names; a discovered entry
    // at the same path is the same cluster.
    entries.retain(|e| !declared.entries.iter().any(|d| d.path == e.entry.path()));
    let mut names = cluster_names(
        &entries
            .iter()
            .map(|e| e.entry.path().to_string())
            .collect::<Vec<_>>(),
    );
    for (i, e) in entries.iter().enumerate() {
        if declared.entries.iter().any(|d| d.name == names[i]) {
            names[i] = e.entry.path().to_string();
        }
        // A sync path `clusters.<name>.vars` filled in is that cluster.
        if let Some(name) = named.get(e.entry.path()) {
            names[i] = name.clone();
        }
    }
    let mut walks: Vec<Walk> = declared
        .entries
        .iter()
        .map(|d| {
            let entry = operator::declared_entry(&d.path, d.source.as_ref(), local);
            Walk::new(d.name.clone(), entry, local.clone(), known.clone())
        })
        .collect();
    walks.extend(
        entries
            .into_iter()
            .zip(names)
            .map(|(entry, name)| Walk::new(name, entry, local.clone(), known.clone())),
    );
    // Clusters whose Flux objects Terraform creates (the AKS extension's
    // flux configurations, `kubernetes_manifest`).
    let (installed, terraform_notes) = terraform::clusters(index);
    notes.extend(terraform_notes);
    for cluster in installed {
        // A sync git already holds (the provider committed gotk-sync.yaml)
        // is that cluster, already walked.
        let synced = cluster.objects.iter().all(|o| {
            o.id.kind == "Kustomization"
                && o.body.str_at(&["spec", "path"]).is_some_and(|p| {
                    let path = crate::repo::normalize("", &p).0;
                    walks.iter().any(|w| w.entry.path() == path)
                })
        });
        if synced {
            continue;
        }
        let mut name = cluster.name.clone();
        while walks.iter().any(|w| w.name == name) {
            name = format!("{name}-terraform");
        }
        notes.push(format!(
            "cluster {name} is made by Terraform ({}): {} Flux object{} its resources create, each checked as its sync would apply it",
            cluster.at,
            cluster.objects.len(),
            if cluster.objects.len() == 1 { "" } else { "s" }
        ));
        let entry = operator::installed_entry(&name, cluster.at, cluster.objects, local);
        walks.push(Walk::new(name, entry, local.clone(), known.clone()));
    }
    let names = entries::checkout_names(index);
    for walk in &mut walks {
        walk.checkout_names = names.clone();
        walk.by_url = declared.by_url.clone();
    }
    walks
}

/// The artifact each cluster builds from: its own GitRepository's, whose
/// spec.ignore replaces the default ignore rules.
fn artifacts<'a>(index: &'a RepoIndex, walks: &[Walk]) -> Vec<Artifact<'a>> {
    walks
        .iter()
        .map(|w| {
            let near = w
                .tiers
                .values()
                .find(|t| t.parent.is_none())
                .map(|t| t.defined_at.file.clone())
                .unwrap_or_else(|| format!("{}/", w.entry.path()));
            index.artifact_with(spec_ignore(index, &w.local_source, &near).as_deref())
        })
        .collect()
}

/// Clusters that follow a branch of their own (an environment-branch
/// layout: one cluster syncs `dev`, another `main`) other than the one
/// checked out (`.git/HEAD`): source-controller fetches that branch, so what
/// is checked here is this checkout, not what the cluster runs. A feature
/// branch checked out while every cluster follows `main` is what a pull
/// request check is for, and says nothing.
fn other_branches(index: &RepoIndex, clusters: &[Cluster]) -> Vec<String> {
    let Ok(head) = std::fs::read_to_string(index.root().join(".git/HEAD")) else {
        return Vec::new();
    };
    let Some(current) = head.trim().strip_prefix("ref: refs/heads/") else {
        return Vec::new(); // a detached HEAD names no branch
    };
    let mut branches: Vec<(&Cluster, String, &SourceRef)> = Vec::new();
    for cluster in clusters {
        let Some(entry) = cluster.tiers.values().find(|t| t.parent.is_none()) else {
            continue;
        };
        let source = &entry.source_ref;
        if source.kind != "GitRepository" {
            continue;
        }
        let branch = cluster
            .source_object(source)
            .and_then(|o| o.body.str_at(&["spec", "ref", "branch"]));
        if let Some(branch) = branch {
            branches.push((cluster, branch, source));
        }
    }
    let distinct: std::collections::BTreeSet<&str> =
        branches.iter().map(|(_, b, _)| b.as_str()).collect();
    if distinct.len() < 2 {
        return Vec::new();
    }
    branches
        .iter()
        .filter(|(_, b, _)| b != current)
        .map(|(cluster, branch, source)| {
            format!(
                "cluster {} syncs branch {branch} ({source}), but the checkout is {current}: what is checked is this checkout, not what the cluster runs",
                cluster.name
            )
        })
        .collect()
}

/// The `spec.ignore` of the GitRepository a cluster syncs from, when the
/// repository defines it (in the file of the sync objects, usually). Two
/// clusters may each define a GitRepository of the same namespace/name with
/// their own rules; a cluster's own is the definition nearest its entry
/// file `near` (the same file, then the longest common directory), so
/// same-named sources of two clusters never mix.
fn spec_ignore(index: &RepoIndex, source: &SourceRef, near: &str) -> Option<String> {
    if source.kind != "GitRepository" {
        return None;
    }
    let shared = |file: &str| -> usize {
        if file == near {
            return usize::MAX;
        }
        file.split('/')
            .zip(near.split('/'))
            .take_while(|(a, b)| a == b)
            .count()
    };
    let mut best: Option<(usize, String)> = None;
    for (file, f) in index.files() {
        let Ok(docs) = f.docs().as_ref() else {
            continue;
        };
        for d in docs
            .iter()
            .filter(|d| is_git_repository(d, &source.name, &source.namespace))
        {
            let score = shared(file);
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((score, d.str_at(&["spec", "ignore"]).unwrap_or_default()));
            }
        }
    }
    best.map(|(_, ignore)| ignore).filter(|i| !i.is_empty())
}

/// Whether a document is the GitRepository `namespace/name` (no namespace
/// written: `default`).
fn is_git_repository(d: &Node, name: &str, namespace: &str) -> bool {
    d.str_at(&["kind"]).as_deref() == Some("GitRepository")
        && d.str_at(&["metadata", "name"]).as_deref() == Some(name)
        && d.str_at(&["metadata", "namespace"])
            .unwrap_or_else(|| "default".into())
            == namespace
}

/// The GitRepository documents the repository defines as `namespace/name`
/// (no namespace written: `default`).
pub(super) fn git_repositories<'a>(
    index: &'a RepoIndex,
    name: &'a str,
    namespace: &'a str,
) -> impl Iterator<Item = &'a crate::yaml::Node> + 'a {
    index
        .files()
        .filter_map(|(_, f)| f.docs().as_ref().ok())
        .flatten()
        .filter(move |d| is_git_repository(d, name, namespace))
}

/// Git URLs that name the same repository compare equal: scheme, user,
/// `.git` suffix and trailing slash removed, `host:path` made `host/path`.
pub(crate) fn normalize_url(url: &str) -> String {
    let mut u = url.trim().to_ascii_lowercase();
    if let Some((_, rest)) = u.split_once("://") {
        u = rest.to_string();
    }
    if let Some((user, rest)) = u.split_once('@')
        && !user.contains('/')
    {
        u = rest.to_string();
    }
    if let Some((host, path)) = u.split_once(':')
        && !host.contains('/')
        && !path.starts_with(|c: char| c.is_ascii_digit())
    {
        u = format!("{host}/{path}");
    }
    let u = u.trim_end_matches('/');
    u.strip_suffix(".git").unwrap_or(u).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_urls_normalise() {
        let a = normalize_url("ssh://git@github.com/example/home-ops");
        assert_eq!(a, "github.com/example/home-ops");
        assert_eq!(normalize_url("https://github.com/Example/home-ops.git/"), a);
        assert_eq!(normalize_url("git@github.com:example/home-ops.git"), a);
        assert_eq!(normalize_url("ssh://git@host:2222/x"), "host:2222/x");
    }
}
