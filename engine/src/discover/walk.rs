//! The walk: build the entry, collect the Flux Kustomizations in its output,
//! build their paths, and so on, deciding for each whether its source is
//! this repository.

use std::collections::{BTreeMap, BTreeSet};

use super::{LocalSources, is_flux_kustomization, normalize_url, tier_from};
use crate::model::{Cluster, Entry, SourceRef, Span, Tier, TierId, TierState};
use crate::postbuild;
use crate::render::flux;
use crate::repo::RepoIndex;
use crate::yaml::Node;

/// Why a path an installer fills in is not built: it holds a Terraform
/// expression (`clusters/${var.environment_name}`; Flux's own variables
/// have no dot), whose value is not in the repository.
fn installer_template(path: &str) -> Option<String> {
    let start = path.find("${")?;
    let inner = &path[start + 2..path[start..].find('}').map_or(path.len(), |e| start + e)];
    if !inner.contains('.') {
        return None;
    }
    Some(format!(
        "its path {path} holds the Terraform expression `{inner}`, which the installer fills in: which directory it names is not in the repository; check one with `--entry DIR` (or `clusters: {{NAME: {{entry: DIR}}}}`)"
    ))
}

/// A cluster's entry, with the tier that starts the walk.
#[derive(Debug)]
pub(super) struct EntryPoint {
    pub(super) entry: Entry,
    pub(super) tier: Tier,
    /// Why the cluster's sync object is made outside git, when it is (no
    /// sync Kustomization or FluxInstance in the repository syncs the
    /// entry): the boundary's evidence.
    pub(super) outside: Option<String>,
}

/// One cluster being walked.
#[derive(Debug)]
pub(super) struct Walk {
    pub(super) name: String,
    pub(super) entry: Entry,
    pub(super) tiers: BTreeMap<TierId, Tier>,
    /// The source that is this repository for this cluster.
    pub(super) local_source: SourceRef,
    /// Tiers waiting for a decision on their source.
    pub(super) undecided: BTreeSet<TierId>,
    /// Tiers to build in the next wave.
    pub(super) ready: Vec<TierId>,
    /// GitRepository objects seen in rendered output: source → URL.
    pub(super) git_urls: BTreeMap<SourceRef, String>,
    /// ConfigMaps and Secrets seen so far (postBuild variables).
    pub(super) sources: postbuild::Sources,
    /// Sources configured as this repository.
    pub(super) local: LocalSources,
    /// ArtifactGenerators seen in rendered output (ExternalArtifacts).
    pub(super) generators: Vec<(Node, Span)>,
    /// Why a tier's ExternalArtifact path is not a directory of this
    /// repository (it depends on the path, so per tier).
    pub(super) artifact_reasons: BTreeMap<TierId, String>,
    /// The URLs that name this checkout for certain (normalised:
    /// `repository.url`, a remote a GitRepository names); `None` when
    /// nothing at all says which URL this repository has (then a
    /// GitRepository may be taken for it by its paths).
    pub(super) self_urls: Option<BTreeSet<String>>,
    /// GitRepositories taken for this repository by their paths, not by
    /// their URL (source → the note that says so).
    pub(super) taken: BTreeMap<SourceRef, String>,
    /// The repository names the checkout goes by (its remotes' last path
    /// segments, its directory's name), lowercase: a mirror or fork keeps
    /// the name while its host and owner change.
    pub(super) checkout_names: BTreeSet<String>,
    /// Sources mapped by URL (`--source URL=DIR`), matched once a rendered
    /// GitRepository shows a source's URL.
    pub(super) by_url: Vec<super::UrlSource>,
    /// The mapped URLs some source of this cluster matched.
    pub(super) urls_used: BTreeSet<String>,
    /// Why the cluster's sync object is made outside git, when it is.
    pub(super) outside: Option<String>,
}

impl Walk {
    pub(super) fn new(
        name: String,
        entry: EntryPoint,
        local: LocalSources,
        self_urls: Option<BTreeSet<String>>,
    ) -> Walk {
        let local_source = entry.tier.source_ref.clone();
        let outside = entry.outside;
        let id = entry.tier.id.clone();
        // An entry that already failed (a FluxInstance patch) is not built,
        // nor one already rendered (an installer's objects).
        let prebuilt = match &entry.tier.state {
            TierState::Rendered(objects) => Some(TierState::Rendered(objects.clone())),
            _ => None,
        };
        let ready = match entry.tier.state {
            TierState::RenderFailed(_) | TierState::Rendered(_) => Vec::new(),
            _ => vec![id.clone()],
        };
        let mut tiers = BTreeMap::new();
        tiers.insert(id.clone(), entry.tier);
        let mut walk = Walk {
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
            self_urls,
            taken: BTreeMap::new(),
            checkout_names: BTreeSet::new(),
            by_url: Vec::new(),
            urls_used: BTreeSet::new(),
            outside,
        };
        if let Some(state) = prebuilt {
            walk.record(&id, state);
        }
        walk
    }

    /// Decides which waiting tiers are built from this repository. A
    /// GitRepository with the same URL as the cluster's own source is this
    /// repository too; anything else is left unchecked once nothing more can
    /// be learnt (no build is pending).
    pub(super) fn settle_sources(&mut self, index: &RepoIndex) {
        let local_url = self
            .git_urls
            .get(&self.local_source)
            .map(|u| normalize_url(u));
        let mut still_waiting = BTreeSet::new();
        let mut deferred = BTreeSet::new();
        let undecided = std::mem::take(&mut self.undecided);
        // A path still holding `${VAR}` after the parent's early
        // substitution: the variable may come from a tier not built yet
        // (the cluster-settings ConfigMap of a sibling); try again with the
        // sources seen so far, and wait while other tiers still build.
        let waiting: Vec<TierId> = undecided
            .iter()
            .filter(|id| self.tiers[*id].path.contains("${"))
            .cloned()
            .collect();
        for id in &waiting {
            self.resubstitute(id);
            if self.tiers[id].path.contains("${") {
                deferred.insert(id.clone());
            }
        }
        let others_ready = undecided.iter().any(|id| !deferred.contains(id));
        for id in undecided {
            // A path an installer fills in is never known here: not
            // waited for, not built.
            if let Some(reason) = installer_template(&self.tiers[&id].path) {
                if let Some(tier) = self.tiers.get_mut(&id) {
                    tier.state = TierState::NotChecked(reason);
                }
                continue;
            }
            if deferred.contains(&id) && others_ready {
                still_waiting.insert(id);
                continue;
            }
            let source = self.tiers[&id].source_ref.clone();
            let this_repo = self.is_this_repo(&source, local_url.as_deref())
                || self.taken_by_path(index, &id, &source);
            let configured = self.map_by_url(&id)
                || self
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

    /// A cluster entered by a directory (its sync object is made outside
    /// git) whose Kustomizations name a GitRepository nothing in the
    /// repository defines (`kommander-flux/management`, served in the
    /// cluster): that source is the one the installer syncs, and a path of
    /// it that is a directory here is this repository's. Said in a note.
    fn take_undefined(&mut self, index: &RepoIndex, id: &TierId, source: &SourceRef) -> bool {
        let mapped = self
            .local
            .dir_for(&source.kind, &source.name, Some(&source.namespace))
            .is_some();
        if mapped || !matches!(self.entry, Entry::Directory { .. }) {
            return false;
        }
        let path = self.tiers[id].path.trim_matches('/').to_string();
        if path.is_empty() || !index.is_dir(&path) {
            return false;
        }
        self.taken.insert(
            source.clone(),
            format!(
                "source {source} is defined nowhere in the repository (the cluster's sync is made outside git); its Kustomizations' paths are directories here ({path}/), so it is read as this repository; map it under `sources` in conformance.yaml if it is another"
            ),
        );
        true
    }

    /// A tier whose source a rendered GitRepository shows to have a URL
    /// that `--source` (or `sources: [{url: …}]`) maps: the source's
    /// artifact is the mapped directory, and the tier's path is inside it.
    fn map_by_url(&mut self, id: &TierId) -> bool {
        let Some(tier) = self.tiers.get(id) else {
            return false;
        };
        let source = tier.source_ref.clone();
        let Some(url) = self.git_urls.get(&source) else {
            return false;
        };
        let Some(mapping) = super::mapped::matching(&self.by_url, &source.kind, url).cloned()
        else {
            return false;
        };
        self.urls_used.insert(mapping.url.clone());
        let inside =
            |path: &str| path == mapping.dir || path.starts_with(&format!("{}/", mapping.dir));
        if let Some(tier) = self.tiers.get_mut(id)
            && !inside(&tier.path)
        {
            tier.path = crate::repo::normalize(&mapping.dir, &tier.path).0;
        }
        if self
            .local
            .dir_for(&source.kind, &source.name, Some(&source.namespace))
            .is_none()
        {
            self.local.0.push(super::LocalSource {
                kind: source.kind.clone(),
                name: source.name.clone(),
                namespace: Some(source.namespace.clone()),
                dir: mapping.dir.clone(),
            });
            self.taken
                .insert(source.clone(), mapping.note(&source.to_string()));
        }
        true
    }

    /// Substitutes a tier's Kustomization again with its parent's
    /// postBuild and the sources seen so far.
    fn resubstitute(&mut self, id: &TierId) {
        let Some(tier) = self.tiers.get(id) else {
            return;
        };
        let Some(parent) = tier.parent.clone() else {
            return;
        };
        let Some(post_build) = self.tiers.get(&parent).and_then(|p| p.post_build.clone()) else {
            return;
        };
        let body =
            postbuild::substitute_early(&tier.spec, &parent.namespace, &post_build, &self.sources);
        let fresh = tier_from(&body, tier.defined_at.clone(), Some(parent), &self.local);
        if fresh.id == *id {
            self.tiers.insert(id.clone(), fresh);
        }
    }

    /// When nothing says which URL this repository has (no remote that a
    /// GitRepository names, no `repository.url`), a GitRepository whose
    /// Kustomization's path exists here and holds Flux objects is taken for
    /// this repository, as in a checkout without `.git`; the report says
    /// which was taken and why.
    fn taken_by_path(&mut self, index: &RepoIndex, id: &TierId, source: &SourceRef) -> bool {
        if self.taken.contains_key(source) {
            return true;
        }
        if source.kind != "GitRepository" || self.self_urls.is_some() {
            return false;
        }
        let Some(url) = self.git_urls.get(source).cloned() else {
            return self.take_undefined(index, id, source);
        };
        let tier = &self.tiers[id];
        let path = tier.path.trim_matches('/');
        let below = format!("{path}/");
        let flux_objects = !path.is_empty()
            && index.is_dir(path)
            && index
                .files_with_sources()
                .filter(|(file, _)| file.starts_with(&below))
                .filter_map(|(_, f)| f.docs().as_ref().ok())
                .flatten()
                .any(|d| {
                    d.str_at(&["apiVersion"])
                        .is_some_and(|v| v.contains(".toolkit.fluxcd.io/"))
                });
        if !flux_objects {
            return false;
        }
        // A checkout is one repository. When the GitRepositories of this
        // cluster name several, one whose name is the checkout's is it,
        // and the others are not; once one URL is taken, no other is.
        let name_of = |u: &str| {
            super::normalize_url(u)
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string()
        };
        let named: BTreeSet<String> = self
            .git_urls
            .values()
            .map(|u| name_of(u))
            .filter(|n| self.checkout_names.contains(n))
            .collect();
        if !named.is_empty() && !named.contains(&name_of(&url)) {
            return false;
        }
        let normalized = super::normalize_url(&url);
        if self
            .taken
            .keys()
            .filter_map(|s| self.git_urls.get(s))
            .any(|u| super::normalize_url(u) != normalized)
        {
            return false;
        }
        let note = format!(
            "{source} ({url}) is taken for this repository: nothing says which URL this repository has (no git remote that one of its GitRepositories names, no `repository.url`), and the path ./{path} of {} exists here and holds Flux objects; `repository: {{url: {url}}}` in conformance.yaml says it outright",
            tier.id
        );
        self.taken.insert(source.clone(), note);
        true
    }

    /// Whether a source is the cluster's own: its sync source, or a
    /// GitRepository with the same (normalized) URL, or one whose URL is
    /// a URL this repository is known by.
    pub(super) fn is_this_repo(&self, source: &SourceRef, local_url: Option<&str>) -> bool {
        if *source == self.local_source {
            return true;
        }
        if source.kind != "GitRepository" {
            return false;
        }
        self.git_urls.get(source).is_some_and(|u| {
            let url = normalize_url(u);
            self.self_urls
                .as_ref()
                .is_some_and(|urls| urls.contains(&url))
                || local_url == Some(url.as_str())
        })
    }

    /// An ExternalArtifact that an ArtifactGenerator of this cluster builds
    /// from a directory of this repository: points the tier at that
    /// directory. Otherwise remembers why not.
    pub(super) fn place_generated(
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
            flux::reach(&index.artifact(), dir)
                .dirs
                .iter()
                .all(|d| within.is_empty() || d == within || d.starts_with(&format!("{within}/")))
        };
        let repo = super::artifacts::Repo {
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
            super::artifacts::artifact_dir(doc, at, &source.namespace, &source.name, &path, repo)
        });
        match found {
            Some(Ok(dir)) => {
                if let Some(tier) = self.tiers.get_mut(id) {
                    tier.path = dir;
                }
                true
            }
            Some(Err(why)) => {
                self.artifact_reasons.insert(id.clone(), why.to_string());
                false
            }
            None => false,
        }
    }

    pub(super) fn not_local_reason(&self, id: &TierId) -> String {
        let source = &self.tiers[id].source_ref;
        if let Some(why) = self.artifact_reasons.get(id) {
            return format!("its source {source} is not a directory of this repository: {why}");
        }
        match source.kind.as_str() {
            "GitRepository" => match self.git_urls.get(source) {
                Some(url) => format!(
                    "its source {source} is another git repository ({url}); check it in the same run with `--source {url}=DIR` (DIR: a checkout of it), or `sources: [{{url: {url}, dir: DIR}}]` in conformance.yaml"
                ),
                None => format!(
                    "its source {source} is not defined in this repository's rendered output, so it cannot be shown to be this repository; if it is another repository, check it in the same run with `--source {}/{}/{}=DIR`",
                    source.kind, source.namespace, source.name
                ),
            },
            "OCIRepository" | "Bucket" => format!(
                "its source {source} is an artifact outside git: if it is built from a directory of this repository, map it under `sources` in conformance.yaml (`path:`); if from another checkout, `--source {}/{}/{}=DIR`",
                source.kind, source.namespace, source.name
            ),
            "ExternalArtifact" => format!(
                "its source {source} is an ExternalArtifact and no ArtifactGenerator in this cluster's rendered output produces it (if it is built from a directory of this repository, map it under `sources` in conformance.yaml)"
            ),
            "" => "it has no spec.sourceRef".to_string(),
            other => format!("its source kind {other} is not one Flux builds from git"),
        }
    }

    /// Stores a tier's build and queues the Kustomizations it produced.
    pub(super) fn record(&mut self, id: &TierId, state: TierState) {
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
            if super::artifacts::is_generator(&object.body) {
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
        // The entry's build: Kustomizations defined beside the entry
        // Kustomization's own definition were applied with it.
        if let Some(entry) = self.tiers.get(id).filter(|t| t.parent.is_none()) {
            let dir = super::parent_dir(&entry.defined_at.file);
            for child in &mut found {
                child.with_entry = !entry.defined_at.file.is_empty()
                    && super::parent_dir(&child.defined_at.file) == dir;
            }
        }
        if let Some(tier) = self.tiers.get_mut(id) {
            tier.state = state;
            // The entry renders its own definition (the sync Kustomization
            // in its path), often patched by its kustomization.yaml (`flux
            // bootstrap`'s patches adding spec.decryption): what is applied
            // is the rendered definition, so its spec is the entry's from
            // then on. Its path and source stay what found it.
            if tier.parent.is_none()
                && let Some(own) = found.iter().find(|c| c.id == *id)
            {
                tier.decryption = own.decryption.clone();
                tier.post_build = own.post_build.clone();
                tier.wait = own.wait;
                tier.prune = own.prune;
                tier.suspend = own.suspend;
                tier.depends_on = own.depends_on.clone();
                tier.target_namespace = own.target_namespace.clone();
            }
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

    /// A tier whose local part does not build without its remote bases
    /// still shows, in the local files its build reads, the Flux
    /// Kustomizations it applies: they are built and checked as written
    /// (kustomize-controller applies them from the tier's output once the
    /// remote part is there), so one remote base does not hide them.
    pub(super) fn adopt_local_part(
        &mut self,
        id: &TierId,
        artifact: &crate::repo::Artifact,
        index: &RepoIndex,
    ) {
        let Some(tier) = self.tiers.get(id) else {
            return;
        };
        let post_build = tier.post_build.clone();
        let reads = crate::render::flux::reach(artifact, &tier.path).reads;
        let mut found = Vec::new();
        for file in reads {
            let Some(Ok(docs)) = index.file(&file).map(|f| f.docs()) else {
                continue;
            };
            for doc in docs.iter().filter(|d| is_flux_kustomization(d)) {
                let body = match &post_build {
                    Some(pb) => postbuild::substitute_early(doc, &id.namespace, pb, &self.sources),
                    None => doc.clone(),
                };
                found.push(tier_from(
                    &body,
                    Span::new(&file, doc.line),
                    Some(id.clone()),
                    &self.local,
                ));
            }
        }
        for child in found {
            if !self.tiers.contains_key(&child.id) {
                self.undecided.insert(child.id.clone());
                self.tiers.insert(child.id.clone(), child);
            }
        }
    }

    pub(super) fn objects_of<'a>(&self, state: &'a TierState) -> &'a [crate::model::Object] {
        match state {
            TierState::Rendered(objects) => objects,
            _ => &[],
        }
    }

    pub(super) fn finish(self) -> Cluster {
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
            sync_outside: self.outside,
            charts: Default::default(),
        }
    }
}
