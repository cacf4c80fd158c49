//! Why a run could not produce findings (exit status 2), whichever stage
//! stopped it.

use crate::config::ConfigError;
use crate::render::external::MissingRenderer;
use crate::repo::RepoError;

/// Why a run could not produce findings (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The repository could not be read.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// No kustomize program to render with.
    #[error(transparent)]
    Renderer(#[from] MissingRenderer),
    /// The repository holds no Flux Kustomization at all.
    #[error(
        "{repo}: no Flux cluster found (no kustomize.toolkit.fluxcd.io Kustomization in any YAML file); if a fleet repository syncs this one, name the directory it syncs: `clusters: {{NAME: {{entry: DIR}}}}` in conformance.yaml, or `--entry DIR`"
    )]
    NoClusters {
        /// The repository root as given.
        repo: String,
    },
    /// Flux Kustomizations exist, but none is built from this repository.
    #[error(
        "{repo}: no cluster is built from this repository: its Flux Kustomizations use the sources {sources}; if one is an artifact built from a directory of this repository (an OCIRepository pushed by CI), map it under `sources` in conformance.yaml; if a fleet repository syncs a directory of this one, name it: `clusters: {{NAME: {{entry: DIR}}}}`, or `--entry DIR`"
    )]
    NoLocalClusters {
        /// The repository root as given.
        repo: String,
        /// The Flux Kustomizations' sources (`Kind/name`), comma-separated.
        sources: String,
    },
    /// The Flux paths resolve below a directory of the checkout, not at its
    /// root.
    #[error(
        "{repo}: no cluster found at this root, but the Flux Kustomizations' paths resolve below {dir}/: the artifact Flux builds from is that directory; try --repo {hint}"
    )]
    RootBelow {
        /// The repository root as given.
        repo: String,
        /// The directory below the root that the Flux paths resolve under.
        dir: String,
        /// The repository path joined with `dir`, to pass as `--repo`.
        hint: String,
    },
    /// `--entry` named a path that is not a directory of the repository.
    #[error("--entry {dir}: not a directory of {repo}")]
    EntryNotADirectory {
        /// The directory, as given.
        dir: String,
        /// The repository root as given.
        repo: String,
    },
    /// The repository's clusters are defined where this tool does not read
    /// yet (a Flux configuration in Bicep).
    #[error(
        "{repo}: no Flux cluster found: {what}; name the directory the configuration syncs: `clusters: {{NAME: {{entry: DIR}}}}` in conformance.yaml, or `--entry DIR`"
    )]
    NotReadYet {
        /// The repository root as given.
        repo: String,
        /// What defines the clusters, with its place.
        what: String,
    },
    /// The repository is an application catalog and nothing else.
    #[error("{repo}: no Flux cluster found: {note}")]
    Catalog {
        /// The repository root as given.
        repo: String,
        /// What the catalog is and how to check one app.
        note: String,
    },
    /// `--source REF=DIR` could not be read.
    #[error("--source {arg}: {why}")]
    Source {
        /// The argument (or its directory), as given.
        arg: String,
        /// What is wrong with it.
        why: String,
    },
    /// `conformance.yaml` is invalid.
    #[error("invalid configuration: {0}")]
    Config(ConfigError),
    /// The previous revision (`--base`) could not be read.
    #[error(transparent)]
    Base(#[from] crate::base::BaseError),
    /// `--cluster` named a cluster that discovery did not find.
    #[error("no cluster named `{name}` in {repo}; discovered: {known}")]
    UnknownCluster {
        /// The cluster name `--cluster` gave.
        name: String,
        /// The repository root as given.
        repo: String,
        /// The discovered clusters' names, comma-separated.
        known: String,
    },
    /// A subcommand that shows one cluster was not told which, and the
    /// repository has several.
    #[error("{repo} has {count} clusters; name one with --cluster NAME: {known}")]
    ClusterNeeded {
        /// The repository root as given.
        repo: String,
        /// How many clusters were discovered.
        count: usize,
        /// The discovered clusters' names, comma-separated.
        known: String,
    },
}

impl From<ConfigError> for SessionError {
    fn from(err: ConfigError) -> Self {
        SessionError::Config(err)
    }
}
