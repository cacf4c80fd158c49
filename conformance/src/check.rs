//! The engine's front door: index a repository, discover and render its
//! clusters, run every rule.

use std::path::{Path, PathBuf};

use crate::config::{Config, ConfigError};
use crate::discover;
use crate::model::Model;
use crate::render::Choice;
use crate::render::Kustomize;
use crate::render::external::MissingRenderer;
use crate::repo::{RepoError, RepoIndex};
use crate::rules::{self, Finding};

/// Why a run could not produce findings (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The repository could not be read.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// No kustomize program to render with.
    #[error(transparent)]
    Renderer(#[from] MissingRenderer),
    /// The repository holds no Flux Kustomization at all.
    #[error(
        "{repo}: no Flux cluster found (no kustomize.toolkit.fluxcd.io Kustomization in any YAML file)"
    )]
    NoClusters { repo: String },
    /// Flux Kustomizations exist, but none is built from this repository.
    #[error(
        "{repo}: no cluster is built from this repository: its Flux Kustomizations use the sources {sources}; if one is an artifact built from a directory of this repository (an OCIRepository pushed by CI), map it under `sources` in conformance.yaml"
    )]
    NoLocalClusters { repo: String, sources: String },
    /// `conformance.yaml` is invalid.
    #[error("invalid configuration: {0}")]
    Config(ConfigError),
    /// The previous revision (`--base`) could not be read.
    #[error(transparent)]
    Base(#[from] crate::base::BaseError),
    /// `--cluster` named a cluster that discovery did not find.
    #[error("no cluster named `{name}` in {repo}; discovered: {known}")]
    UnknownCluster {
        name: String,
        repo: String,
        known: String,
    },
}

impl From<ConfigError> for CheckError {
    fn from(err: ConfigError) -> Self {
        CheckError::Config(err)
    }
}

/// What a check covers.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    pub repo: PathBuf,
    /// Report only these clusters (all when empty). Rules still see every
    /// cluster, so parity is judged against the whole repository.
    pub clusters: Vec<String>,
    /// The renderer; `None`: conformance.yaml's `renderer`, else native.
    pub renderer: Option<Choice>,
    /// The previous revision, for rules that compare (prune-transient).
    pub base: Option<crate::base::Base>,
}

/// The result of a run.
#[derive(Debug)]
pub struct Outcome {
    pub model: Model,
    pub config: Config,
    pub findings: Vec<Finding>,
    /// The renderer that built the tiers.
    pub renderer: String,
    /// Kustomizations the external program built instead (`auto`), and why.
    pub fallbacks: Vec<String>,
}

impl Outcome {
    /// Error findings that count (not waived).
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == rules::Severity::Error && f.waived.is_none())
            .count()
    }

    /// Warning findings that count (not waived).
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == rules::Severity::Warning && f.waived.is_none())
            .count()
    }

    /// Findings accepted by a waiver.
    pub fn waived(&self) -> usize {
        self.findings.iter().filter(|f| f.waived.is_some()).count()
    }
}

/// Indexes, discovers, renders with the chosen renderer, and runs every rule.
pub fn check(options: &CheckOptions) -> Result<Outcome, CheckError> {
    let config = Config::load(&options.repo)?;
    let renderer = options
        .renderer
        .or(config.renderer)
        .unwrap_or_default()
        .backend()?;
    check_with(options, renderer.as_ref())
}

/// As [`check`], with a given renderer.
pub fn check_with(options: &CheckOptions, renderer: &dyn Kustomize) -> Result<Outcome, CheckError> {
    let config = Config::load(&options.repo)?;
    let model = load_model(&options.repo, renderer)?;
    check_config_against(&config, &model)?;
    for wanted in &options.clusters {
        if !model.clusters.iter().any(|c| &c.name == wanted) {
            return Err(CheckError::UnknownCluster {
                name: wanted.clone(),
                repo: options.repo.display().to_string(),
                known: model
                    .clusters
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    let base_model = match &options.base {
        Some(base) => {
            let tree = base.materialise(&options.repo)?;
            Some(load_model(&tree.root, renderer)?)
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let mut findings = rules::run_all(&model, &config, base_model.as_ref());
    stat("rules", started);
    if !options.clusters.is_empty() {
        findings.retain(|f| options.clusters.contains(&f.cluster));
    }
    Ok(Outcome {
        model,
        config,
        findings,
        renderer: renderer.name().to_string(),
        fallbacks: renderer.fallbacks(),
    })
}

/// Checks what conformance.yaml says about clusters against discovery.
pub fn check_config_against(config: &Config, model: &Model) -> Result<(), CheckError> {
    let names: Vec<String> = model.clusters.iter().map(|c| c.name.clone()).collect();
    if let Some((name, line)) = config.unknown_clusters(&names).into_iter().next() {
        return Err(CheckError::Config(ConfigError {
            file: crate::config::FILE_NAME.into(),
            line,
            message: format!(
                "no cluster named `{name}` was discovered; clusters: {}",
                names.join(", ")
            ),
        }));
    }
    Ok(())
}

/// Indexes and discovers a repository.
pub fn load_model(repo: &Path, renderer: &dyn Kustomize) -> Result<Model, CheckError> {
    let started = std::time::Instant::now();
    let index = RepoIndex::load(repo)?;
    stat("index", started);
    let config = Config::load(repo)?;
    let started = std::time::Instant::now();
    let mut model = discover::discover_with(&index, renderer, &config.local_sources());
    stat("discover+render", started);
    let started = std::time::Instant::now();
    for cluster in &mut model.clusters {
        crate::postbuild::apply(cluster);
    }
    stat("postbuild", started);
    if model.clusters.is_empty() {
        // Say which sources the Kustomizations in the repository use, so the
        // user can map an OCI artifact built from this repository.
        let mut sources: Vec<String> = index
            .files()
            .filter_map(|(_, f)| f.docs.as_ref().ok())
            .flatten()
            .filter(|d| discover::is_flux_kustomization(d))
            .filter_map(|d| {
                Some(format!(
                    "{}/{}",
                    d.str_at(&["spec", "sourceRef", "kind"])?,
                    d.str_at(&["spec", "sourceRef", "name"])?
                ))
            })
            .collect();
        sources.sort();
        sources.dedup();
        if sources.len() > 6 {
            let more = sources.len() - 5;
            sources.truncate(5);
            sources.push(format!("and {more} more"));
        }
        return Err(if sources.is_empty() {
            CheckError::NoClusters {
                repo: repo.display().to_string(),
            }
        } else {
            CheckError::NoLocalClusters {
                repo: repo.display().to_string(),
                sources: sources.join(", "),
            }
        });
    }
    Ok(model)
}

/// Phase timings on stderr when `CONFORMANCE_STATS` is set (benchmarks).
fn stat(phase: &str, started: std::time::Instant) {
    if std::env::var_os("CONFORMANCE_STATS").is_some() {
        eprintln!("phase {phase}: {:.3}s", started.elapsed().as_secs_f64());
    }
}
