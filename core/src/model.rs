//! The model: clusters, their tiers (Flux `Kustomization`s) and what each tier
//! renders. Plain data, built by discovery and read by the rules.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::yaml::Node;

/// A place in the repository: a path relative to the repo root and a 1-based
/// line (0 when the whole file, or a directory, is meant).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// The path, relative to the repository root.
    pub file: String,
    /// The 1-based line, or 0 for the whole file.
    pub line: u32,
}

impl Span {
    /// A place at `line` of `file`.
    pub fn new(file: impl Into<String>, line: u32) -> Self {
        Span {
            file: file.into(),
            line,
        }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}", self.file, self.line)
        } else {
            f.write_str(&self.file)
        }
    }
}

/// Identity of a Kubernetes object: group, version, kind, namespace, name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId {
    /// API group, empty for the core group.
    pub group: String,
    /// API version within the group (`v1`, `v1beta2`).
    pub version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace`; `None` when unset or empty.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectId {
    /// Reads the identity of an object; `None` when apiVersion, kind or
    /// metadata.name is missing.
    pub fn of(node: &Node) -> Option<ObjectId> {
        let api_version = node.str_at(&["apiVersion"])?;
        let kind = node.str_at(&["kind"])?;
        let name = node.str_at(&["metadata", "name"])?;
        let namespace = node
            .str_at(&["metadata", "namespace"])
            .filter(|ns| !ns.is_empty());
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group.to_string(), version.to_string()),
            None => (String::new(), api_version),
        };
        Some(ObjectId {
            group,
            version,
            kind,
            namespace,
            name,
        })
    }

    /// `apiVersion` as written: `group/version`, or the version alone for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// `Kind/namespace/name`, or `Kind/name` for objects without a namespace: the
/// form used in reports and the JSON contract. A kind that shares its name
/// with a built-in kind of another group is written with its group
/// (`talos.dev/ServiceAccount/runners/runner`), so the two are told apart.
impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let shadows_builtin = crate::builtin::builtin()
            .iter()
            .any(|b| b.kind == self.kind && b.group != self.group);
        if shadows_builtin && !self.group.is_empty() {
            write!(f, "{}/", self.group)?;
        }
        match &self.namespace {
            Some(ns) => write!(f, "{}/{}/{}", self.kind, ns, self.name),
            None => write!(f, "{}/{}", self.kind, self.name),
        }
    }
}

/// One rendered object of a tier.
#[derive(Debug, Clone)]
pub struct Object {
    /// Its identity.
    pub id: ObjectId,
    /// Where the object is defined in the repository, when the renderer could
    /// trace it (generated objects have no file).
    pub source: Option<Span>,
    /// The rendered object.
    pub body: Node,
}

/// Identity of a Flux Kustomization: namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TierId {
    /// The Kustomization's namespace.
    pub namespace: String,
    /// The Kustomization's name.
    pub name: String,
}

impl TierId {
    /// A tier identity from its namespace and name.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        TierId {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for TierId {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// One `spec.dependsOn` entry, with the namespace defaulted as Flux does (to
/// the dependent's own namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependsOn {
    /// The Kustomization depended on.
    pub target: TierId,
    /// Whether the entry named its namespace explicitly.
    pub explicit_namespace: bool,
    /// The entry has a `readyExpr` (CEL): it replaces the Ready check
    /// (`checkDependencies`), so the dependency need not be Ready.
    pub ready_expr: bool,
    /// The entry's line in the file that defines the Kustomization.
    pub line: u32,
}

/// `spec.sourceRef`, namespace defaulted to the Kustomization's own.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceRef {
    /// The source's kind, as written (`GitRepository`, `OCIRepository`, …).
    pub kind: String,
    /// The source's namespace.
    pub namespace: String,
    /// The source's name.
    pub name: String,
}

impl fmt::Display for SourceRef {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
    }
}

/// The result of building a tier.
#[derive(Debug, Clone)]
pub enum TierState {
    /// Built: the objects Flux would apply, in build order.
    Rendered(Vec<Object>),
    /// The build failed as Flux's would (or the input is broken).
    RenderFailed(RenderFailure),
    /// Not built, and why (for example, its source is not this repository).
    NotChecked(String),
}

/// Why a tier did not render, with the best location we could find.
#[derive(Debug, Clone)]
pub struct RenderFailure {
    /// What went wrong, in Flux's words where we reproduce them.
    pub message: String,
    /// The file (and line) at fault, when known; otherwise the Kustomization.
    pub at: Option<Span>,
}

/// A remote base or generator input fetched for a build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Where the kustomization writes the address.
    pub at: Span,
    /// The address.
    pub reference: String,
    /// What it gave (`commit 3f2a… of https://…`, `sha256 9c1e… (…)`).
    pub content: String,
    /// Set when the fetch failed now and a cached copy was used: why.
    pub stale: Option<String>,
    /// A configMapGenerator/secretGenerator input, not a base.
    pub input: bool,
}

/// A Flux `Kustomization`: one tier of a cluster.
#[derive(Debug, Clone)]
pub struct Tier {
    /// The Kustomization's namespace and name.
    pub id: TierId,
    /// `spec.path` normalised: relative to the source root, no leading `./`,
    /// empty for the root itself.
    pub path: String,
    /// `spec.dependsOn`, in order.
    pub depends_on: Vec<DependsOn>,
    /// `spec.sourceRef`.
    pub source_ref: SourceRef,
    /// `spec.wait`.
    pub wait: bool,
    /// `spec.prune`.
    pub prune: bool,
    /// `spec.suspend: true`: kustomize-controller does not reconcile it at
    /// all (`Reconcile` returns before the source is even read).
    pub suspend: bool,
    /// `spec.postBuild`, as written.
    pub post_build: Option<Node>,
    /// `spec.decryption`, as written.
    pub decryption: Option<Node>,
    /// `spec.targetNamespace`, when set and not empty.
    pub target_namespace: Option<String>,
    /// Where the Kustomization object is defined.
    pub defined_at: Span,
    /// The tier whose build produced this Kustomization (`None` for the entry).
    pub parent: Option<TierId>,
    /// Defined beside the entry Kustomization's own definition (the same
    /// directory, which `kubectl apply -k DIR` and `flux bootstrap` apply
    /// whole): whatever created the entry created this one with it, so on
    /// a cold start it exists before the entry applies anything.
    pub with_entry: bool,
    /// The Kustomization object as Flux would apply it.
    pub spec: Node,
    /// Remote bases the build left out (not fetched): where each is
    /// written and its address. The tier holds its local part only.
    pub remote_bases: Vec<(Span, String)>,
    /// Remote bases and inputs fetched for the build (`--fetch-remote`):
    /// their content is part of the tier.
    pub fetched: Vec<Fetched>,
    /// A file the build reads is over an input budget (file, line,
    /// budget): the tier is not checked, and `budget-exceeded` says so.
    pub over_budget: Option<RenderFailure>,
    /// Remote references `--fetch-remote` could not fetch here, and why
    /// (no network, a timeout: nothing Flux's build says).
    pub fetch_failures: Vec<(String, String)>,
    /// configMapGenerator/secretGenerator inputs that are URLs: kustomize
    /// fetches them on every build; the tier is built with them empty.
    pub remote_inputs: Vec<(Span, String)>,
    /// Files the build feeds to configMapGenerator/secretGenerator.
    pub generator_inputs: Vec<GeneratorInput>,
    /// Fields of the path's kustomization file that are not kustomization
    /// fields: kustomize-controller drops them when it rewrites the file.
    pub dropped_fields: Vec<(Span, String)>,
    /// How many files the build reads (kustomization files, resources,
    /// patches).
    pub files_read: usize,
    /// What postBuild substitution did and found (set after discovery).
    pub substitution: Audit,
    /// What the build produced.
    pub state: TierState,
}

impl Tier {
    /// The tier whose apply creates this one on a cold start: its parent,
    /// unless the bootstrap created it with the entry ([`Tier::with_entry`]).
    pub fn applied_by(&self) -> Option<&TierId> {
        if self.with_entry {
            None
        } else {
            self.parent.as_ref()
        }
    }

    /// The objects the tier renders; none when it did not render.
    pub fn objects(&self) -> &[Object] {
        match &self.state {
            TierState::Rendered(objects) => objects,
            _ => &[],
        }
    }

    /// Why a rendered tier was checked only in part (its remote bases are
    /// never fetched); `None` for a whole build or a tier that did not
    /// render.
    pub fn partial_reason(&self) -> Option<String> {
        if !matches!(self.state, TierState::Rendered(_))
            || (self.remote_bases.is_empty() && self.fetch_failures.is_empty())
        {
            return None;
        }
        let urls: Vec<&str> = self.remote_bases.iter().map(|(_, u)| u.as_str()).collect();
        if !self.fetch_failures.is_empty() {
            let why: Vec<String> = self
                .fetch_failures
                .iter()
                .map(|(url, why)| format!("{url}: {why}"))
                .collect();
            return Some(format!(
                "only its local part was checked: remote bases or inputs it needs could not be fetched here ({})",
                why.join("; ")
            ));
        }
        Some(format!(
            "only its local part was checked: it needs remote bases ({}), which are not fetched without --fetch-remote (see remote-base)",
            urls.join(", ")
        ))
    }

    /// Whether everything the tier applies is known: it rendered whole (no
    /// remote base left out) and renders no ResourceSet (whose generated
    /// objects are not expanded). A tier that is not fully known may
    /// provide what nothing else does: conclusions drawn from absence are
    /// hedged with it.
    pub fn fully_known(&self) -> bool {
        matches!(self.state, TierState::Rendered(_))
            && self.remote_bases.is_empty()
            && self.resource_sets().is_empty()
    }

    /// The Flux Operator `ResourceSet`s the tier renders: each generates
    /// objects from templates and inputs (Kustomizations, HelmReleases,
    /// namespaces) that this tool does not expand, so what the tier provides
    /// is not fully known.
    pub fn resource_sets(&self) -> Vec<&Object> {
        self.objects()
            .iter()
            .filter(|o| o.id.group == "fluxcd.controlplane.io" && o.id.kind == "ResourceSet")
            .collect()
    }

    /// The remote cluster this tier applies to (`spec.kubeConfig`), as
    /// `namespace/secretRef/name` or `namespace/configMapRef/name` (`kubeConfig` when it
    /// names neither); `None` for this cluster.
    pub fn remote_target(&self) -> Option<String> {
        let kube = self.spec.path(&["spec", "kubeConfig"])?;
        // The Secret/ConfigMap lives in the Kustomization's namespace: two
        // tiers name the same remote cluster only with the same namespace.
        let ns = &self.id.namespace;
        let by = |field: &str| {
            kube.str_at(&[field, "name"])
                .map(|n| format!("{ns}/{field}/{n}"))
        };
        Some(
            by("secretRef")
                .or_else(|| by("configMapRef"))
                .unwrap_or_else(|| "kubeConfig".into()),
        )
    }

    /// How long a failed reconcile waits before the next attempt, as
    /// written: `spec.retryInterval`, else `spec.interval`
    /// (`GetRetryInterval`).
    pub fn retry_interval(&self) -> Option<String> {
        self.spec
            .str_at(&["spec", "retryInterval"])
            .or_else(|| self.spec.str_at(&["spec", "interval"]))
            .filter(|s| !s.is_empty())
    }

    /// `./path` as written in Flux manifests.
    pub fn display_path(&self) -> String {
        format!("./{}", self.path)
    }
}

/// A file a generator of the build reads (`files`, `envs`, `env`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratorInput {
    /// Where the kustomization names it.
    pub at: Span,
    /// The repository path of the file.
    pub file: String,
    /// A secretGenerator's (else a configMapGenerator's).
    pub secret: bool,
}

/// How a cluster was entered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A Flux sync Kustomization in git whose path contains itself
    /// (`clusters/prod/flux-system/gotk-sync.yaml` with `path: ./clusters/prod`).
    SyncKustomization {
        /// The sync Kustomization.
        tier: TierId,
        /// Its `spec.path`, normalised: the directory it syncs.
        path: String,
    },
    /// No sync Kustomization in git (Flux Operator bootstrap: the FluxInstance
    /// syncs this directory). Modelled as the `flux-system` Kustomization that
    /// the FluxInstance creates.
    Directory {
        /// The directory the FluxInstance syncs.
        path: String,
    },
}

impl Entry {
    /// The directory the entry syncs, relative to the repository root.
    pub fn path(&self) -> &str {
        match self {
            Entry::SyncKustomization { path, .. } | Entry::Directory { path } => path,
        }
    }
}

/// One cluster: the tiers reachable from its entry.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The name reports use: the shortest tail of the entry's path that tells the
    /// clusters apart (`clusters/prod` → `prod`).
    pub name: String,
    /// How the cluster was entered.
    pub entry: Entry,
    /// Tiers keyed by identity (sorted, so every iteration is deterministic).
    pub tiers: BTreeMap<TierId, Tier>,
    /// Tier names used in more than one namespace (labelled ns/name).
    pub ambiguous_names: std::collections::BTreeSet<String>,
    /// Why the cluster's sync object is made outside git, when it is (no
    /// sync Kustomization or FluxInstance in the repository syncs its
    /// entry): what refers to something nothing here creates may refer to
    /// what the installer creates.
    pub sync_outside: Option<String>,
    /// What each HelmRelease's chart installs, read from the chart itself
    /// where it could be (the release's id → the contents, or why they
    /// could not be read); a release not listed was not looked up.
    pub charts: BTreeMap<ObjectId, Result<std::sync::Arc<crate::chart::ChartContents>, String>>,
}

impl Cluster {
    /// Whether `ancestor` applies `tier`'s Kustomization on a cold start,
    /// directly or through Kustomizations it applies ([`Tier::applied_by`]).
    pub fn applies(&self, ancestor: &TierId, tier: &TierId) -> bool {
        let mut at = self.tiers.get(tier).and_then(Tier::applied_by);
        // Parents form a chain; a cycle (which Flux could not apply) ends it.
        for _ in 0..self.tiers.len() {
            match at {
                Some(p) if p == ancestor => return true,
                Some(p) => at = self.tiers.get(p).and_then(Tier::applied_by),
                None => return false,
            }
        }
        false
    }

    /// The source object `source` names, when a tier of the cluster
    /// renders it (its `spec.url`, `spec.ref`, …).
    pub fn source_object(&self, source: &SourceRef) -> Option<&Object> {
        self.tiers.values().flat_map(|t| t.objects()).find(|o| {
            o.id.kind == source.kind
                && o.id.name == source.name
                && o.id.namespace.as_deref() == Some(source.namespace.as_str())
        })
    }

    /// Whether a tier is known only from the files its parent's path holds:
    /// not checked, under a parent that did not render (a build that
    /// failed, a remote base, a tier itself known only so). Its spec is as
    /// written, before the parent's postBuild substitution and patches, so
    /// rules that compare or resolve it would judge a guess.
    pub fn known_statically(&self, id: &TierId) -> bool {
        let mut id = id;
        // Parents form a chain; a cycle (which Flux could not apply) ends it.
        for _ in 0..=self.tiers.len() {
            let Some(tier) = self.tiers.get(id) else {
                return false;
            };
            if !matches!(tier.state, TierState::NotChecked(_)) {
                return false;
            }
            let Some(parent) = tier.parent.as_ref().and_then(|p| self.tiers.get(p)) else {
                return false;
            };
            match &parent.state {
                TierState::Rendered(_) => return false,
                TierState::RenderFailed(_) => return true,
                TierState::NotChecked(_)
                    if !parent.remote_bases.is_empty() || parent.over_budget.is_some() =>
                {
                    return true;
                }
                TierState::NotChecked(_) => id = &parent.id,
            }
        }
        false
    }

    /// The name a report uses for a tier: the bare name when it is unique in
    /// the cluster, `namespace/name` otherwise.
    pub fn tier_label(&self, id: &TierId) -> String {
        if self.ambiguous_names.contains(&id.name) {
            id.to_string()
        } else {
            id.name.clone()
        }
    }

    /// The tiers applied to this cluster itself (not through `kubeConfig`
    /// to a remote one), in identity order.
    pub fn local_tiers(&self) -> impl Iterator<Item = &Tier> {
        self.tiers.values().filter(|t| t.remote_target().is_none())
    }
}

/// An object Flux would decrypt: a top-level `sops` mapping with a `mac`.
pub fn is_sops_encrypted(body: &Node) -> bool {
    body.get("sops").is_some_and(|s| s.get("mac").is_some())
}

/// A SOPS document encrypted whole (no `encrypted_regex`): its
/// `apiVersion`, `kind` or `metadata.name`/`namespace` are ciphertext
/// (`ENC[AES256_GCM,…]`). kustomize-controller decrypts it before it
/// applies (`DecryptResource`), so what it is is known only then: identity
/// and schema checks leave it alone.
pub fn is_opaque(body: &Node) -> bool {
    is_sops_encrypted(body)
        && [
            &["apiVersion"][..],
            &["kind"],
            &["metadata", "name"],
            &["metadata", "namespace"],
        ]
        .iter()
        .any(|path| body.str_at(path).is_some_and(|v| v.starts_with("ENC[")))
}

/// Everything discovered in a repository.
#[derive(Debug, Clone)]
pub struct Model {
    /// The repository root as given.
    pub repo: std::path::PathBuf,
    /// The clusters found, one per entry.
    pub clusters: Vec<Cluster>,
    /// What discovery inferred that the report should say (a source's
    /// root read from the layout).
    pub notes: Vec<String>,
    /// Flux Kustomizations in the repository's files that no cluster
    /// applies (forgotten or archived apps): listed once, never a cluster.
    pub unreferenced: Vec<Unreferenced>,
    /// Other checkouts read beside the repository (`--source REF=DIR`):
    /// the directory name their paths start with (`@infra`) and where they
    /// are on disk.
    pub checkouts: Vec<(String, std::path::PathBuf)>,
}

/// A Flux Kustomization that nothing applies.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unreferenced {
    /// Where it is written.
    pub at: Span,
    /// `namespace/name` (no namespace written: as written, empty).
    pub name: String,
    /// The script step (or documented step) that applies it by hand, when
    /// one does: then it is a root of a cluster the repository does not
    /// name, not a forgotten file.
    pub applied_by: Option<Span>,
}

/// What the substitution of one tier found.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    /// Whether the tier has `spec.postBuild`.
    pub post_build: bool,
    /// Whether the substitution pass ran (variables defined, or `Always`).
    pub pass_ran: bool,
    /// Whether every non-optional source was found in the repository.
    pub complete: bool,
    /// Distinct variables referenced by the tier's objects that are defined.
    pub defined: BTreeSet<String>,
    /// `${…}` references that ship literally, in a tier without postBuild
    /// or whose pass is skipped (no variable defined): (object, line, name).
    pub unaudited: Vec<(ObjectId, Option<Span>, String)>,
    /// Problems the substitution found.
    pub hazards: Vec<Hazard>,
    /// Variables added at admission that reach the tier, in words
    /// ([`crate::postbuild::injected`]).
    pub injected: Vec<String>,
}

/// A substitution problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hazard {
    /// The object, when the hazard is in one (not for a bad variable name).
    pub object: Option<ObjectId>,
    /// Where the hazard is: the line in the object's file, or the Kustomization for a bad
    /// variable name.
    pub at: Option<Span>,
    /// What the problem is.
    pub kind: HazardKind,
}

/// What kind of substitution problem a [`Hazard`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HazardKind {
    /// A variable without definition or default.
    Undefined {
        /// The variable.
        name: String,
    },
    /// Flux cannot parse the expression and fails the build.
    Unparsable {
        /// The text from where parsing failed, up to its first `}`.
        expression: String,
        /// The parser's error.
        message: String,
    },
    /// `:?` / `:+`: Flux treats them as `:-`, unlike bash.
    Misleading {
        /// The variable.
        name: String,
        /// The operator as written (`:?` or `:+`).
        op: &'static str,
    },
    /// A variable key that is not a valid name: Flux fails the tier.
    InvalidName {
        /// The key as written.
        name: String,
        /// Where it is defined (`spec.postBuild.substitute`, or a substituteFrom source).
        source: String,
    },
    /// A substring with a negative length (Flux's code panics on it).
    BadSubstring {
        /// The variable.
        name: String,
    },
    /// The substituted value is not valid YAML once Flux reads the object
    /// back (`yaml.YAMLToJSON` in `SubstituteVariables`): the build fails.
    InvalidYaml {
        /// The string as written (never the substituted value, which may
        /// come from a Secret).
        written: String,
        /// The parser's error.
        message: String,
    },
}
