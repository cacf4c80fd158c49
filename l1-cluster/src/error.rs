//! Why L1 cannot prepare a run: the published manifests it downloads
//! ([`ManifestError`]), the served copy of the repository
//! ([`ServeError`]), the subject of a kstatus trial ([`SubjectError`]).
//! Each says what it was doing and, with `#[source]`, what the system said.

use std::path::PathBuf;

/// An `l1.manifests` entry could not be fetched or verified.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The entry pins no digest: refused, with the digest of what was
    /// downloaded so that pinning is one copy and paste.
    #[error(
        "l1.manifests entry for {file} (conformance.yaml line {line}) has no sha256; {url} downloads with sha256 {got}: pin it with `sha256: {got}` after checking the release"
    )]
    Unpinned {
        /// The repository file the entry replaces.
        file: String,
        /// Its line in conformance.yaml.
        line: u64,
        /// The address it downloads from.
        url: String,
        /// The digest of what was downloaded.
        got: String,
    },
    /// The downloaded bytes are not the pinned ones.
    #[error(
        "{url} has sha256 {got}, but conformance.yaml (line {line}) pins {want}: the published file changed, or the pin is wrong"
    )]
    Mismatch {
        /// The address it was downloaded from.
        url: String,
        /// The digest of what was downloaded.
        got: String,
        /// The line of the pin in conformance.yaml.
        line: u64,
        /// The pinned digest.
        want: String,
    },
    /// curl could not be started.
    #[error("cannot run curl to download {url}: {source}")]
    Curl {
        /// The address.
        url: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// curl ran and failed.
    #[error("downloading {url} failed: {said}")]
    Download {
        /// The address.
        url: String,
        /// What curl said.
        said: String,
    },
    /// Several entries failed: every one is reported, one per line.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Several(Vec<ManifestError>),
}

/// The repository could not be served to the cluster as L1 needs it.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The cluster's sync is not a Kustomization in git.
    #[error(
        "cluster {cluster} has no sync Kustomization in git (a Flux Operator FluxInstance or a managed Flux syncs {path}): the Flux mode does not yet serve Flux Operator repositories; run it with L1_MODE=apply"
    )]
    NoSyncInGit {
        /// The cluster.
        cluster: String,
        /// The directory its sync builds.
        path: String,
    },
    /// The cluster syncs from something other than git.
    #[error(
        "cluster {cluster} syncs from a {kind} ({reference}): the Flux mode serves git only; run it with L1_MODE=apply"
    )]
    NotGit {
        /// The cluster.
        cluster: String,
        /// The source's kind.
        kind: String,
        /// The source, `Kind/namespace/name`.
        reference: String,
    },
    /// The repository could not be copied.
    #[error("copying {} for L1: {source}", repo.display())]
    Copy {
        /// The repository root.
        repo: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// A file's directory could not be created in the copy.
    #[error("{file}: {source}")]
    Directory {
        /// The repository file.
        file: String,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// A file of the copy could not be read.
    #[error("reading {file}: {source}")]
    Read {
        /// The repository file.
        file: String,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// A file of the copy could not be written.
    #[error("writing {file}: {source}")]
    Write {
        /// The repository file.
        file: String,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// A path from the model or the configuration leaves the repository.
    #[error("`{file}` is not a path inside the repository")]
    Outside {
        /// The path as given.
        file: String,
    },
    /// The model's place of the sync GitRepository holds none.
    #[error("{file}:{line}: cannot find the GitRepository")]
    NoGitRepository {
        /// The file.
        file: String,
        /// The line.
        line: u32,
    },
    /// `L1_RETRY_INTERVAL` is not a Go duration.
    #[error("L1_RETRY_INTERVAL `{0}` is not a duration like 20s")]
    Retry(String),
    /// A document could not be edited.
    #[error("{file}:{line}: {source}")]
    Edit {
        /// The file.
        file: String,
        /// The document's line.
        line: u32,
        /// Why.
        #[source]
        source: EditError,
    },
}

/// Why a document of the served copy could not be edited.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// No document holds the line.
    #[error("no document there")]
    NoDocument,
    /// The document is empty once parsed.
    #[error("an empty document")]
    Empty,
    /// The document does not parse.
    #[error(transparent)]
    Parse(#[from] conformance::yaml::YamlError),
}

/// A kstatus trial has no subject in the served model.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SubjectError {
    /// No tier renders the trigger.
    #[error("{trigger} is not rendered by any tier")]
    NotRendered {
        /// The trigger, as `ObjectId` prints it.
        trigger: String,
    },
    /// Nothing in the repository deploys the operator.
    #[error(
        "the repository does not deploy {operator} (no Deployment beside the {crd} CRD, none named {operator})"
    )]
    NotDeployed {
        /// The operator.
        operator: String,
        /// The CRD the trigger's kind is defined by.
        crd: String,
    },
}
