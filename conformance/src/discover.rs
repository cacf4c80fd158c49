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

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::model::{Cluster, DependsOn, Entry, Model, SourceRef, Span, Tier, TierId, TierState};
use crate::postbuild;
use crate::render::{Kustomize, flux};
use crate::repo::{self, RepoIndex};
use crate::yaml::{Node, Value};

/// The group of Flux Kustomization objects.
pub const FLUX_KUSTOMIZATION_GROUP: &str = "kustomize.toolkit.fluxcd.io";

/// Whether a document is a Flux `Kustomization` (not a kustomize config file).
pub fn is_flux_kustomization(doc: &Node) -> bool {
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
    pub kind: String,
    pub name: String,
    /// `None`: any namespace.
    pub namespace: Option<String>,
    /// The repository directory the artifact is built from.
    pub dir: String,
}

impl LocalSources {
    /// The repository directory of a source, when it is configured.
    pub fn dir_for(&self, kind: &str, name: &str, namespace: Option<&str>) -> Option<&str> {
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

/// Discovers and renders every cluster of the repository.
pub fn discover(index: &RepoIndex, kustomize: &dyn Kustomize) -> Model {
    discover_with(index, kustomize, &LocalSources::default())
}

/// As [`discover`], with sources configured as this repository.
pub fn discover_with(index: &RepoIndex, kustomize: &dyn Kustomize, local: &LocalSources) -> Model {
    // Configured sources win; a FluxInstance syncing an artifact of this
    // repository adds its own.
    let instances = flux_instances(index);
    let mut local = local.clone();
    for source in self_syncing_artifacts(&instances) {
        if local
            .dir_for(&source.kind, &source.name, source.namespace.as_deref())
            .is_none()
        {
            local.0.push(source);
        }
    }
    let local = &local;
    let entries = find_entries(index, local, &instances);
    let names = cluster_names(
        &entries
            .iter()
            .map(|e| e.entry.path().to_string())
            .collect::<Vec<_>>(),
    );
    let mut walks: Vec<Walk> = entries
        .into_iter()
        .zip(names)
        .map(|(entry, name)| Walk::new(name, entry, local.clone()))
        .collect();

    loop {
        for walk in &mut walks {
            walk.settle_sources(index);
        }
        let jobs: Vec<(usize, TierId)> = walks
            .iter()
            .enumerate()
            .flat_map(|(i, w)| w.ready.iter().map(move |id| (i, id.clone())))
            .collect();
        if jobs.is_empty() {
            break;
        }
        let results: Vec<(usize, TierId, Result<flux::Built, flux::BuildError>)> = jobs
            .par_iter()
            .map(|(i, id)| {
                let tier = &walks[*i].tiers[id];
                let built = flux::build(index, id, &tier.path, &tier.spec, kustomize);
                (*i, id.clone(), built)
            })
            .collect();
        for walk in &mut walks {
            walk.ready.clear();
        }
        for (i, id, built) in results {
            let state = match built {
                Ok(built) => {
                    if let Some(tier) = walks[i].tiers.get_mut(&id) {
                        tier.generator_inputs = built.generator_inputs;
                        tier.files_read = built.files_read;
                    }
                    TierState::Rendered(built.objects)
                }
                Err(flux::BuildError::Failed(failure)) => TierState::RenderFailed(failure),
                Err(flux::BuildError::RemoteBases(mut remotes)) => {
                    let list: Vec<String> = remotes.iter().map(|(_, url)| url.clone()).collect();
                    if let Some(tier) = walks[i].tiers.get_mut(&id) {
                        for (span, _) in &mut remotes {
                            if span.file.is_empty() {
                                span.file = tier.defined_at.file.clone();
                            }
                        }
                        tier.remote_bases = remotes;
                    }
                    TierState::NotChecked(format!(
                        "it needs remote bases ({}), which are never fetched here (see remote-base)",
                        list.join(", ")
                    ))
                }
            };
            walks[i].record(&id, state);
        }
    }
    Model {
        repo: index.root().to_path_buf(),
        clusters: walks.into_iter().map(Walk::finish).collect(),
    }
}

/// A cluster's entry, with the tier that starts the walk.
#[derive(Debug)]
struct EntryPoint {
    entry: Entry,
    tier: Tier,
}

/// One cluster being walked.
#[derive(Debug)]
struct Walk {
    name: String,
    entry: Entry,
    tiers: BTreeMap<TierId, Tier>,
    /// The source that is this repository for this cluster.
    local_source: SourceRef,
    /// Tiers waiting for a decision on their source.
    undecided: BTreeSet<TierId>,
    /// Tiers to build in the next wave.
    ready: Vec<TierId>,
    /// GitRepository objects seen in rendered output: source → URL.
    git_urls: BTreeMap<SourceRef, String>,
    /// ConfigMaps and Secrets seen so far (postBuild variables).
    sources: postbuild::Sources,
    /// Sources configured as this repository.
    local: LocalSources,
    /// ArtifactGenerators seen in rendered output (ExternalArtifacts).
    generators: Vec<(Node, Span)>,
    /// Why a tier's ExternalArtifact path is not a directory of this
    /// repository (it depends on the path, so per tier).
    artifact_reasons: BTreeMap<TierId, String>,
}

impl Walk {
    fn new(name: String, entry: EntryPoint, local: LocalSources) -> Walk {
        let local_source = entry.tier.source_ref.clone();
        let id = entry.tier.id.clone();
        // An entry that already failed (a FluxInstance patch) is not built.
        let ready = match entry.tier.state {
            TierState::RenderFailed(_) => Vec::new(),
            _ => vec![id.clone()],
        };
        let mut tiers = BTreeMap::new();
        tiers.insert(id, entry.tier);
        Walk {
            name,
            entry: entry.entry,
            tiers,
            local_source,
            undecided: BTreeSet::new(),
            ready,
            git_urls: BTreeMap::new(),
            sources: postbuild::Sources::default(),
            local,
            generators: Vec::new(),
            artifact_reasons: BTreeMap::new(),
        }
    }

    /// Decides which waiting tiers are built from this repository. A
    /// GitRepository with the same URL as the cluster's own source is this
    /// repository too; anything else is left unchecked once nothing more can
    /// be learnt (no build is pending).
    fn settle_sources(&mut self, index: &RepoIndex) {
        let local_url = self
            .git_urls
            .get(&self.local_source)
            .map(|u| normalize_url(u));
        let mut still_waiting = BTreeSet::new();
        for id in std::mem::take(&mut self.undecided) {
            let source = self.tiers[&id].source_ref.clone();
            let this_repo = self.is_this_repo(&source, local_url.as_deref());
            let configured = self
                .local
                .dir_for(&source.kind, &source.name, Some(&source.namespace))
                .is_some();
            let generated = !configured
                && source.kind == "ExternalArtifact"
                && self.place_generated(index, &id, &source, local_url.as_deref());
            if this_repo || configured || generated {
                self.ready.push(id);
            } else {
                still_waiting.insert(id);
            }
        }
        if self.ready.is_empty() {
            for id in &still_waiting {
                let reason = self.not_local_reason(id);
                if let Some(tier) = self.tiers.get_mut(id) {
                    tier.state = TierState::NotChecked(reason);
                }
            }
        } else {
            self.undecided = still_waiting;
        }
    }

    /// Whether a source is the cluster's own: its sync source, or a
    /// GitRepository with the same (normalized) URL.
    fn is_this_repo(&self, source: &SourceRef, local_url: Option<&str>) -> bool {
        *source == self.local_source
            || (source.kind == "GitRepository"
                && local_url.is_some()
                && self
                    .git_urls
                    .get(source)
                    .map(|u| normalize_url(u))
                    .as_deref()
                    == local_url)
    }

    /// An ExternalArtifact that an ArtifactGenerator of this cluster builds
    /// from a directory of this repository: points the tier at that
    /// directory. Otherwise remembers why not.
    fn place_generated(
        &mut self,
        index: &RepoIndex,
        id: &TierId,
        source: &SourceRef,
        local_url: Option<&str>,
    ) -> bool {
        let own_dir = self
            .local
            .dir_for(
                &self.local_source.kind,
                &self.local_source.name,
                Some(&self.local_source.namespace),
            )
            .unwrap_or_default()
            .to_string();
        let repo_dir = |s: &SourceRef| -> Option<String> {
            if self.is_this_repo(s, local_url) {
                return Some(own_dir.clone());
            }
            self.local
                .dir_for(&s.kind, &s.name, Some(&s.namespace))
                .map(str::to_string)
        };
        let is_dir = |dir: &str| index.is_dir(dir);
        let stays_within = |dir: &str, within: &str| {
            flux::reach(index, dir)
                .dirs
                .iter()
                .all(|d| within.is_empty() || d == within || d.starts_with(&format!("{within}/")))
        };
        let repo = crate::artifacts::Repo {
            dir_of: &repo_dir,
            is_dir: &is_dir,
            stays_within: &stays_within,
        };
        let path = self
            .tiers
            .get(id)
            .and_then(|t| t.spec.str_at(&["spec", "path"]))
            .unwrap_or_default();
        let found = self.generators.iter().find_map(|(doc, at)| {
            crate::artifacts::artifact_dir(doc, at, &source.namespace, &source.name, &path, repo)
        });
        match found {
            Some(Ok(dir)) => {
                if let Some(tier) = self.tiers.get_mut(id) {
                    tier.path = dir;
                }
                true
            }
            Some(Err(why)) => {
                self.artifact_reasons.insert(id.clone(), why);
                false
            }
            None => false,
        }
    }

    fn not_local_reason(&self, id: &TierId) -> String {
        let source = &self.tiers[id].source_ref;
        if let Some(why) = self.artifact_reasons.get(id) {
            return format!("its source {source} is not a directory of this repository: {why}");
        }
        match source.kind.as_str() {
            "GitRepository" => match self.git_urls.get(source) {
                Some(url) => format!(
                    "its source {source} is another git repository ({url}); only this repository is checked"
                ),
                None => format!(
                    "its source {source} is not defined in this repository's rendered output, so it cannot be shown to be this repository"
                ),
            },
            "OCIRepository" | "Bucket" => format!(
                "its source {source} is an artifact outside git; only this repository is checked (if the artifact is built from a directory of this repository, map it under `sources` in conformance.yaml)"
            ),
            "ExternalArtifact" => format!(
                "its source {source} is an ExternalArtifact and no ArtifactGenerator in this cluster's rendered output produces it (if it is built from a directory of this repository, map it under `sources` in conformance.yaml)"
            ),
            "" => "it has no spec.sourceRef".to_string(),
            other => format!("its source kind {other} is not one Flux builds from git"),
        }
    }

    /// Stores a tier's build and queues the Kustomizations it produced.
    fn record(&mut self, id: &TierId, state: TierState) {
        let mut found = Vec::new();
        for object in self.objects_of(&state) {
            self.sources.add(object);
        }
        let post_build = self.tiers.get(id).and_then(|t| t.post_build.clone());
        for object in self.objects_of(&state) {
            if object.id.kind == "GitRepository"
                && object.id.group == "source.toolkit.fluxcd.io"
                && let Some(url) = object.body.str_at(&["spec", "url"])
            {
                let ns = object
                    .id
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".into());
                let key = SourceRef {
                    kind: "GitRepository".into(),
                    namespace: ns,
                    name: object.id.name.clone(),
                };
                self.git_urls.insert(key, url);
            }
            if crate::artifacts::is_generator(&object.body) {
                let span = object.source.clone().unwrap_or_else(|| Span::new("", 0));
                self.generators.push((object.body.clone(), span));
            }
            if is_flux_kustomization(&object.body) {
                let span = object.source.clone().unwrap_or_else(|| Span::new("", 0));
                let body = match &post_build {
                    Some(pb) => {
                        postbuild::substitute_early(&object.body, &id.namespace, pb, &self.sources)
                    }
                    None => object.body.clone(),
                };
                found.push(tier_from(&body, span, Some(id.clone()), &self.local));
            }
        }
        if let Some(tier) = self.tiers.get_mut(id) {
            tier.state = state;
        }
        for child in found {
            // A Kustomization rendered twice (the sync object renders itself;
            // two parents may render one name) is one tier: the first
            // definition wins.
            if !self.tiers.contains_key(&child.id) {
                self.undecided.insert(child.id.clone());
                self.tiers.insert(child.id.clone(), child);
            }
        }
    }

    fn objects_of<'a>(&self, state: &'a TierState) -> &'a [crate::model::Object] {
        match state {
            TierState::Rendered(objects) => objects,
            _ => &[],
        }
    }

    fn finish(self) -> Cluster {
        let mut seen = BTreeSet::new();
        let ambiguous_names = self
            .tiers
            .keys()
            .filter(|id| !seen.insert(id.name.clone()))
            .map(|id| id.name.clone())
            .collect();
        Cluster {
            name: self.name,
            entry: self.entry,
            tiers: self.tiers,
            ambiguous_names,
        }
    }
}

/// Reads a Flux Kustomization object into a tier (not yet built).
pub fn tier_from(
    doc: &Node,
    defined_at: Span,
    parent: Option<TierId>,
    local: &LocalSources,
) -> Tier {
    let namespace = doc
        .str_at(&["metadata", "namespace"])
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "default".to_string());
    let name = doc.str_at(&["metadata", "name"]).unwrap_or_default();
    let spec = |key: &str| doc.path(&["spec", key]);
    let depends_on = spec("dependsOn")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|entry| {
            let name = entry.str_at(&["name"])?;
            let explicit = entry.str_at(&["namespace"]).filter(|ns| !ns.is_empty());
            Some(DependsOn {
                target: TierId::new(explicit.clone().unwrap_or_else(|| namespace.clone()), name),
                explicit_namespace: explicit.is_some(),
                line: entry.line,
            })
        })
        .collect();
    let source_ref = SourceRef {
        kind: doc
            .str_at(&["spec", "sourceRef", "kind"])
            .unwrap_or_default(),
        namespace: doc
            .str_at(&["spec", "sourceRef", "namespace"])
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| namespace.clone()),
        name: doc
            .str_at(&["spec", "sourceRef", "name"])
            .unwrap_or_default(),
    };
    // A configured source's artifact is a directory of this repository.
    let base = local
        .dir_for(
            &source_ref.kind,
            &source_ref.name,
            Some(&source_ref.namespace),
        )
        .unwrap_or_default();
    let path = repo::normalize(
        base,
        &spec("path")
            .and_then(Node::as_scalar_string)
            .unwrap_or_default(),
    )
    .0;
    Tier {
        id: TierId::new(namespace, name),
        path,
        depends_on,
        source_ref,
        wait: spec("wait").and_then(Node::as_bool).unwrap_or(false),
        prune: spec("prune").and_then(Node::as_bool).unwrap_or(false),
        post_build: spec("postBuild").cloned(),
        decryption: spec("decryption").cloned(),
        target_namespace: spec("targetNamespace").and_then(Node::as_scalar_string),
        defined_at,
        parent,
        spec: doc.clone(),
        remote_bases: Vec::new(),
        generator_inputs: Vec::new(),
        files_read: 0,
        substitution: Default::default(),
        state: TierState::NotChecked("not built yet".into()),
    }
}

/// A Flux Kustomization as written in a file (before any build).
struct RawKustomization<'a> {
    file: &'a str,
    doc: &'a Node,
    /// The repository directory its source stands for ("" for git).
    base: &'a str,
    /// Whether its source is (or may be) this repository.
    local: bool,
}

impl RawKustomization<'_> {
    fn path(&self) -> String {
        repo::normalize(
            self.base,
            &self.doc.str_at(&["spec", "path"]).unwrap_or_default(),
        )
        .0
    }

    /// `kind/name` of the source (namespaces are not known before the build).
    fn source(&self) -> (String, String) {
        (
            self.doc
                .str_at(&["spec", "sourceRef", "kind"])
                .unwrap_or_default(),
            self.doc
                .str_at(&["spec", "sourceRef", "name"])
                .unwrap_or_default(),
        )
    }

    fn is_git_sourced(&self) -> bool {
        self.local
    }
}

/// Files a path builds (resources), reads (also patches, kustomization
/// files), and the directories it enters.
type ReachSets = (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>);

/// Static view of the repository used to find entries: which files each
/// path builds, without running kustomize.
struct StaticReach<'a> {
    index: &'a RepoIndex,
    /// The raw Kustomizations of each file.
    by_file: BTreeMap<&'a str, Vec<&'a RawKustomization<'a>>>,
    by_path: std::cell::RefCell<BTreeMap<String, ReachSets>>,
}

impl<'a> StaticReach<'a> {
    fn files(&self, path: &str) -> BTreeSet<String> {
        self.reach(path).0
    }

    /// Every file a build of `path` reads (resources, kustomization files, patches).
    fn reads(&self, path: &str) -> BTreeSet<String> {
        self.reach(path).1
    }

    fn reach(&self, path: &str) -> ReachSets {
        if !self.index.is_dir(path) {
            return Default::default();
        }
        self.by_path
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| {
                let r = flux::reach(self.index, path);
                (r.resources, r.reads, r.dirs)
            })
            .clone()
    }

    /// Files built from `start`, following the Flux Kustomizations found in
    /// them that use the same source, as Flux would.
    fn transitive(&self, start_path: String, source: (String, String)) -> BTreeSet<String> {
        let mut seen_paths = BTreeSet::new();
        let mut files = BTreeSet::new();
        let mut queue = vec![start_path];
        while let Some(path) = queue.pop() {
            if !seen_paths.insert(path.clone()) {
                continue;
            }
            for file in self.files(&path) {
                // An empty path would claim the whole repository for this
                // cluster; it stays a tier of the cluster but not a claim.
                let in_file = self
                    .by_file
                    .get(file.as_str())
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                for k in in_file.iter().filter(|k| k.source() == source) {
                    let path = k.path();
                    if !path.is_empty() {
                        queue.push(path);
                    }
                }
                files.insert(file);
            }
        }
        files
    }
}

/// Finds cluster entries: sync Kustomizations first, then directories of
/// Kustomizations that nothing builds.
fn find_entries(
    index: &RepoIndex,
    local: &LocalSources,
    instances: &[Instance],
) -> Vec<EntryPoint> {
    let raw: Vec<RawKustomization> = index
        .files()
        .filter_map(|(file, f)| f.docs.as_ref().ok().map(|docs| (file, docs)))
        .flat_map(|(file, docs)| {
            docs.iter()
                .filter(|d| is_flux_kustomization(d))
                .map(move |doc| {
                    let kind = doc
                        .str_at(&["spec", "sourceRef", "kind"])
                        .unwrap_or_default();
                    let name = doc
                        .str_at(&["spec", "sourceRef", "name"])
                        .unwrap_or_default();
                    let namespace = doc
                        .str_at(&["spec", "sourceRef", "namespace"])
                        .or_else(|| doc.str_at(&["metadata", "namespace"]));
                    let configured = local.dir_for(&kind, &name, namespace.as_deref());
                    RawKustomization {
                        file,
                        doc,
                        base: configured.unwrap_or_default(),
                        local: kind == "GitRepository" || configured.is_some(),
                    }
                })
        })
        .collect();
    let mut by_file: BTreeMap<&str, Vec<&RawKustomization>> = BTreeMap::new();
    for k in &raw {
        by_file.entry(k.file).or_default().push(k);
    }
    let reach = StaticReach {
        index,
        by_file,
        by_path: Default::default(),
    };

    // A sync Kustomization builds the file that defines it. Most specific
    // path first, the conventional flux-system name first among equals; a
    // candidate already inside an accepted cluster belongs to that cluster.
    // A Kustomization with an empty path builds the whole repository and so
    // "contains itself" trivially: it is an entry only when nothing else
    // claims it (step 3).
    let mut candidates: Vec<&RawKustomization> = raw
        .iter()
        .filter(|k| k.is_git_sourced() && reach.files(&k.path()).contains(k.file))
        .collect();
    candidates.sort_by_key(|k| {
        let path = k.path();
        let depth = path.split('/').filter(|s| !s.is_empty()).count();
        let conventional = k.doc.str_at(&["metadata", "name"]).as_deref() == Some("flux-system");
        (std::cmp::Reverse(depth), !conventional, path, k.file)
    });
    let (specific, whole_repo): (Vec<_>, Vec<_>) =
        candidates.into_iter().partition(|k| !k.path().is_empty());

    let mut entries: Vec<EntryPoint> = Vec::new();
    let mut covered: BTreeSet<String> = BTreeSet::new();
    let mut entry_paths = BTreeSet::new();
    let accept_sync = |k: &RawKustomization,
                       entries: &mut Vec<EntryPoint>,
                       covered: &mut BTreeSet<String>,
                       entry_paths: &mut BTreeSet<String>| {
        let path = k.path();
        if covered.contains(k.file) || !entry_paths.insert(path.clone()) {
            return;
        }
        covered.extend(reach.transitive(path.clone(), k.source()));
        let tier = tier_from(k.doc, Span::new(k.file, k.doc.line), None, local);
        entries.push(EntryPoint {
            entry: Entry::SyncKustomization {
                tier: tier.id.clone(),
                path,
            },
            tier,
        });
    };
    for k in specific {
        accept_sync(k, &mut entries, &mut covered, &mut entry_paths);
    }

    // Flux Operator layout: Kustomizations in files that no git-sourced
    // Kustomization reads (as a resource or as a patch). Only a fallback:
    // with a sync Kustomization in git, an unreferenced directory is not a
    // cluster; and hidden directories (`.archive`, `.github`) never are.
    let fallback = entries.is_empty();
    // A FluxInstance (or the flux-instance chart's values) in the repository
    // says which directory it syncs: that is the entry, and no guessing.
    if fallback {
        for (dir, instance) in flux_instance_sync_dirs(index, local, instances) {
            if entry_paths.insert(dir.clone()) {
                entries.push(directory_entry(&dir, local, Some(instance)));
            }
        }
        if !entries.is_empty() {
            return entries;
        }
    }
    let mut read_by_any: BTreeSet<String> = raw
        .iter()
        .filter(|k| k.is_git_sourced() && !k.path().is_empty())
        .flat_map(|k| reach.reads(&k.path()))
        .collect();
    // Files another directory's kustomization includes are part of some
    // build (an overlay of an artifact we cannot follow, say), whatever its
    // source: not a cluster's entry. So is anything inside a directory such
    // a build enters (an app left out of its overlay is disabled, not a
    // cluster).
    let mut build_dirs: BTreeSet<String> = raw
        .iter()
        .filter(|k| k.is_git_sourced() && !k.path().is_empty())
        .flat_map(|k| reach.reach(&k.path()).2)
        .collect();
    for (file, _) in index.files() {
        let name = file.rsplit('/').next().unwrap_or(file);
        if !repo::KUSTOMIZATION_FILE_NAMES.contains(&name) {
            continue;
        }
        let dir = parent_dir(file);
        // A directory's own files are what make it an entry; files in its
        // subdirectories are part of its build like any other.
        let own = |f: &String| dir.is_empty() || *f == dir || parent_dir(f) == dir;
        let (_, reads, dirs) = reach.reach(&dir);
        read_by_any.extend(reads.into_iter().filter(|f| !own(f)));
        build_dirs.extend(dirs.into_iter().filter(|d| dir.is_empty() || *d != dir));
    }
    let inside_a_build = |dir: &str| {
        build_dirs
            .iter()
            .any(|b| !b.is_empty() && (dir == b || dir.starts_with(&format!("{b}/"))))
    };
    let orphan_dirs: BTreeSet<String> = raw
        .iter()
        .filter(|_| fallback)
        .filter(|k| !k.file.split('/').any(|part| part.starts_with('.')))
        .filter(|k| !read_by_any.contains(k.file) && !covered.contains(k.file))
        .filter(|k| !inside_a_build(&parent_dir(k.file)))
        .filter(|k| !(k.is_git_sourced() && k.path().is_empty()))
        .map(|k| parent_dir(k.file))
        .collect();
    for dir in &orphan_dirs {
        let inside_other = orphan_dirs.iter().any(|other| {
            other != dir && {
                let files = reach.files(other);
                raw.iter()
                    .filter(|k| parent_dir(k.file) == *dir)
                    .all(|k| files.contains(k.file))
            }
        });
        if inside_other || !entry_paths.insert(dir.clone()) {
            continue;
        }
        let entry = directory_entry(dir, local, None);
        covered
            .extend(reach.transitive(dir.clone(), ("GitRepository".into(), "flux-system".into())));
        entries.push(entry);
    }

    for k in whole_repo {
        accept_sync(k, &mut entries, &mut covered, &mut entry_paths);
    }
    entries
}

/// The directories of this repository that a FluxInstance syncs: from
/// FluxInstance objects (`spec.sync`), flux-instance HelmReleases
/// (`spec.values.instance.sync`) and the chart's values files
/// (`instance.sync`). A GitRepository sync path is a directory of this
/// repository when it exists; an OCIRepository or Bucket one only when its
/// source is mapped under `sources` (or inferred).
fn flux_instance_sync_dirs<'i, 'a>(
    index: &RepoIndex,
    local: &LocalSources,
    instances: &'i [Instance<'a>],
) -> Vec<(String, &'i Instance<'a>)> {
    let mut dirs: Vec<(String, &Instance)> = Vec::new();
    for instance in instances {
        let base = match instance.kind.as_str() {
            "GitRepository" => Some(""),
            other => local.dir_for(other, &instance.names.name, Some(&instance.names.namespace)),
        };
        let Some(base) = base else { continue };
        let (dir, escapes) = repo::normalize(base, &instance.path);
        if !escapes && !dir.is_empty() && index.is_dir(&dir) && !dirs.iter().any(|(d, _)| *d == dir)
        {
            dirs.push((dir, instance));
        }
    }
    dirs
}

/// A FluxInstance's sync, as written in the repository.
struct Instance<'a> {
    /// The file that defines it.
    file: &'a str,
    /// `sync.kind`: GitRepository, OCIRepository or Bucket.
    kind: String,
    /// `sync.path`, relative to the source's root.
    path: String,
    patches: Vec<Node>,
    names: SyncNames,
}

/// Every FluxInstance sync in the repository: FluxInstance objects
/// (`spec.sync`), flux-instance HelmReleases (`spec.values.instance.sync`)
/// and the chart's values files (`instance.sync`).
fn flux_instances(index: &RepoIndex) -> Vec<Instance<'_>> {
    let mut out = Vec::new();
    for (file_name, file) in index.files() {
        let Ok(docs) = file.docs.as_ref() else {
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
fn self_syncing_artifacts(instances: &[Instance]) -> Vec<LocalSource> {
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
struct SyncNames {
    name: String,
    namespace: String,
}

impl Default for SyncNames {
    fn default() -> SyncNames {
        SyncNames {
            name: "flux-system".into(),
            namespace: "flux-system".into(),
        }
    }
}

/// The Kustomization a FluxInstance creates for its sync path, with the
/// instance's `kustomize.patches` applied (they patch it too). `None`: an
/// instance the repository does not show, with the default names.
fn directory_entry(dir: &str, local: &LocalSources, instance: Option<&Instance>) -> EntryPoint {
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
    spec.set("path", s(&format!("./{dir}")));
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
    }
}

fn parent_dir(file: &str) -> String {
    file.rsplit_once('/')
        .map(|(dir, _)| dir.to_string())
        .unwrap_or_default()
}

/// Names clusters by the shortest unique tail of their entry paths
/// (`clusters/prod` → `prod`; two `…/cluster` paths keep one more segment).
fn cluster_names(paths: &[String]) -> Vec<String> {
    let segments: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| p.split('/').filter(|s| !s.is_empty()).collect())
        .collect();
    let tail = |segs: &[&str], n: usize| -> String {
        if segs.is_empty() {
            return "root".to_string();
        }
        segs[segs.len().saturating_sub(n)..].join("/")
    };
    segments
        .iter()
        .map(|segs| {
            let mut n = 1;
            loop {
                let candidate = tail(segs, n);
                let clashes = segments
                    .iter()
                    .filter(|other| tail(other, n) == candidate)
                    .count();
                if clashes <= 1 || n >= segs.len() {
                    return candidate;
                }
                n += 1;
            }
        })
        .collect()
}

/// Git URLs that name the same repository compare equal: scheme, user,
/// `.git` suffix and trailing slash removed, `host:path` made `host/path`.
pub fn normalize_url(url: &str) -> String {
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
    fn cluster_names_are_shortest_unique_tails() {
        let paths = vec![
            "clusters/prod".to_string(),
            "clusters/dev".to_string(),
            "a/cluster".to_string(),
            "b/cluster".to_string(),
            String::new(),
        ];
        assert_eq!(
            cluster_names(&paths),
            vec!["prod", "dev", "a/cluster", "b/cluster", "root"]
        );
    }

    #[test]
    fn git_urls_normalise() {
        let a = normalize_url("ssh://git@github.com/example/home-ops");
        assert_eq!(a, "github.com/example/home-ops");
        assert_eq!(normalize_url("https://github.com/Example/home-ops.git/"), a);
        assert_eq!(normalize_url("git@github.com:example/home-ops.git"), a);
        assert_eq!(normalize_url("ssh://git@host:2222/x"), "host:2222/x");
    }
}
