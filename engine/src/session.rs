//! A run, resolved once: the repository's configuration (read once), the
//! renderer, the repository index and the discovered, rendered and
//! substituted model. Every subcommand opens one [`Session`] and works from
//! it (as nextest's `BaseApp` and ripgrep's `HiArgs` are built once per
//! command); the rules and reports borrow from it.

use std::path::{Path, PathBuf};

use crate::base::Base;
use crate::config::{Config, ConfigError};
use crate::convergence::ClusterAnalysis;
use crate::discover;
use crate::model::{Cluster, Model};
use crate::provenance::Catalog;
use crate::provenance::bootstrap::Bootstrap;
use crate::render::external::MissingRenderer;
use crate::render::{Choice, Kustomize};
use crate::repo::{RepoError, RepoIndex};
use crate::rules;

/// What every run is given, whichever subcommand runs it: the repository
/// and what the command line says over its conformance.yaml. The CLI
/// flattens it into every subcommand that reads a repository; the library
/// builds it with [`RunOptions::at`].
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RunOptions {
    /// The repository root: the checkout of the GitRepository Flux syncs
    /// (spec.path of every Flux Kustomization is relative to it).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// How kustomize builds run: native (built in, default), kustomize (the
    /// kustomize or kubectl program), auto (native, and the program for what
    /// native does not support). Overrides `renderer` in conformance.yaml.
    #[arg(long, value_enum)]
    pub renderer: Option<Choice>,
    /// Fetch remote kustomize bases (URLs, git references) as Flux would, so
    /// their tiers are checked whole; cached in $CONFORMANCE_CACHE_DIR (else
    /// ~/.cache/conformance). Overrides `remote` in conformance.yaml.
    #[arg(long)]
    pub fetch_remote: bool,
    /// Check this directory as a cluster's entry, as `clusters.<name>.entry`
    /// in conformance.yaml declares one (repeatable): for a repository that
    /// a fleet repository syncs, with no Flux Kustomization of its own.
    #[arg(long = "entry", value_name = "DIR")]
    pub entries: Vec<String>,
    /// Read this conformance.yaml instead of the one at the repository
    /// root (a CI job keeping its settings outside the repository).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl RunOptions {
    /// The options of a run on `repo`, everything else as conformance.yaml
    /// says.
    pub fn at(repo: impl Into<PathBuf>) -> RunOptions {
        RunOptions {
            repo: repo.into(),
            ..RunOptions::default()
        }
    }

    /// With this renderer, whatever conformance.yaml says.
    pub fn renderer(mut self, renderer: Choice) -> RunOptions {
        self.renderer = Some(renderer);
        self
    }
}

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
}

impl From<ConfigError> for SessionError {
    fn from(err: ConfigError) -> Self {
        SessionError::Config(err)
    }
}

/// Everything a run needs, built once.
#[derive(Debug)]
pub struct Session {
    /// The repository root as given.
    pub repo: PathBuf,
    /// The repository's conformance.yaml (defaults when absent).
    pub config: Config,
    /// The embedded catalog extended with conformance.yaml's `catalog`.
    pub catalog: Catalog,
    renderer: Box<dyn Kustomize>,
    /// The repository's paths and loaded YAML files.
    pub index: RepoIndex,
    /// The discovered, rendered and substituted clusters.
    pub model: Model,
    /// What the repository installs before Flux.
    pub bootstrap: Bootstrap,
}

impl Session {
    /// Opens a run: reads conformance.yaml (or `--config`), applies the
    /// command line over it, picks the renderer (`--renderer`, else the
    /// configuration's, else native), indexes, discovers and renders.
    pub fn open(options: &RunOptions) -> Result<Session, SessionError> {
        let mut config = match &options.config {
            Some(file) => Config::load_file(file, &rules::is_rule_id)?,
            None => Config::load(&options.repo, &rules::is_rule_id)?,
        };
        if options.fetch_remote {
            config.remote = crate::remote::Setting::Fetch;
        }
        config.declare_entries(&options.entries);
        let backend = options
            .renderer
            .or(config.renderer)
            .unwrap_or_default()
            .backend()?;
        Session::with_renderer(&options.repo, config, backend)
    }

    /// As [`Session::open`], with a configuration and a renderer at hand.
    fn with_renderer(
        repo: &Path,
        config: Config,
        renderer: Box<dyn Kustomize>,
    ) -> Result<Session, SessionError> {
        worker_stacks();
        let started = std::time::Instant::now();
        let mut index = RepoIndex::load(repo)?;
        stat("index", started);
        declared_paths_exist(repo, &index, &config)?;
        let catalog = config.catalog();
        let (model, bootstrap) = load_model(repo, &index, renderer.as_ref(), &config, &catalog)?;
        // The rendered objects are copies: the parsed files are no longer
        // needed (a reader after this parses a file again).
        index.release_documents();
        Ok(Session {
            repo: repo.to_path_buf(),
            catalog,
            config,
            renderer,
            index,
            model,
            bootstrap,
        })
    }

    /// The renderer's name, for reports.
    pub fn renderer_name(&self) -> String {
        self.renderer.name().to_string()
    }

    /// Kustomizations the external program built instead (`auto`), and why.
    pub fn fallbacks(&self) -> Vec<String> {
        self.renderer.fallbacks()
    }

    /// The cluster with this name, or an error listing the discovered ones.
    pub fn cluster(&self, name: &str) -> Result<&Cluster, SessionError> {
        self.model
            .clusters
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| SessionError::UnknownCluster {
                name: name.to_string(),
                repo: self.repo.display().to_string(),
                known: self
                    .model
                    .clusters
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The convergence analysis of one cluster.
    pub fn analysis<'s>(&'s self, cluster: &'s Cluster) -> ClusterAnalysis<'s> {
        let kubernetes = crate::provenance::distribution::kubernetes(
            cluster,
            self.config.kubernetes_declared(),
            &self.index,
            &self.bootstrap,
        );
        let mut analysis = ClusterAnalysis::of(
            cluster,
            &self.catalog,
            &self.index,
            &self.bootstrap,
            kubernetes,
        );
        // `clusters.<name>.flux` in conformance.yaml settles the release.
        if let Some(v) = self
            .config
            .clusters
            .get(&cluster.name)
            .and_then(|c| c.flux.as_ref())
            && let Some(declared) = crate::provenance::installed::Installed::declared(
                &v.value,
                crate::model::Span::new(crate::config::FILE_NAME, v.referenced.line() as u32),
            )
        {
            analysis.installed = Some(declared);
        }
        analysis
    }

    /// What the rules read: the model, the configuration's sections, the
    /// catalog, the index and every cluster's analysis (computed here,
    /// once); `base` is the previous revision's model when the run compares.
    pub fn rule_context<'s>(&'s self, base: Option<&'s Model>) -> rules::Context<'s> {
        let started = std::time::Instant::now();
        crate::progress::show("modelling the cold start");
        let analyses = self
            .model
            .clusters
            .iter()
            .map(|c| self.analysis(c))
            .collect();
        stat("analysis", started);
        rules::Context {
            model: &self.model,
            settings: self.config.rule_settings(),
            catalog: &self.catalog,
            index: &self.index,
            analyses,
            base,
        }
    }

    /// The model of a previous revision, rendered with the same renderer
    /// (and that revision's own conformance.yaml).
    pub fn base_model(&self, base: &Base) -> Result<Model, SessionError> {
        let tree = base.materialise(&self.repo)?;
        let config = Config::load(&tree.root, &rules::is_rule_id)?;
        let index = RepoIndex::load(&tree.root)?;
        let catalog = config.catalog();
        load_model(
            &tree.root,
            &index,
            self.renderer.as_ref(),
            &config,
            &catalog,
        )
        .map(|(m, _)| m)
    }

    /// Checks what conformance.yaml says about clusters against discovery.
    pub fn check_config(&self) -> Result<(), SessionError> {
        let names: Vec<String> = self.model.clusters.iter().map(|c| c.name.clone()).collect();
        if let Some((name, line)) = self.config.unknown_clusters(&names).into_iter().next() {
            // What discovery said about this cluster's vars, if any.
            let said: Vec<&str> = self
                .model
                .notes
                .iter()
                .filter(|n| n.contains(&format!("clusters.{name}.vars")))
                .map(String::as_str)
                .collect();
            let said = if said.is_empty() {
                String::new()
            } else {
                format!(" ({})", said.join("; "))
            };
            return Err(SessionError::Config(ConfigError::new(
                line,
                format!(
                    "no cluster named `{name}` was discovered; clusters: {}{said}",
                    names.join(", ")
                ),
            )));
        }
        for m in &self.config.l1.manifests {
            let (path, _) = crate::repo::normalize("", &m.file.value);
            if !self.index.is_file(&path) {
                return Err(SessionError::Config(crate::config::error_at(
                    &m.file,
                    format!(
                        "l1.manifests file `{}` is not a file of the repository",
                        m.file.value
                    ),
                )));
            }
        }
        Ok(())
    }
}

/// Discovers and renders a repository's clusters, reads its bootstrap,
/// and substitutes (the bootstrap can install a webhook that adds
/// variables to every Kustomization, [`crate::postbuild::injected`]).
pub fn load_model(
    repo: &Path,
    index: &RepoIndex,
    renderer: &dyn Kustomize,
    config: &Config,
    catalog: &crate::provenance::Catalog,
) -> Result<(Model, Bootstrap), SessionError> {
    let started = std::time::Instant::now();
    let mut model = discover::discover_with(index, renderer, &config.declared());
    stat("discover+render", started);
    if model.clusters.is_empty() {
        return Err(no_clusters(repo, index));
    }
    let started = std::time::Instant::now();
    crate::progress::show("reading the bootstrap");
    let scripts = crate::provenance::bootstrap::scripts::read(
        index,
        catalog.documented_steps.unwrap_or(true),
    );
    // Entries one script applies into one cluster are one cluster.
    let merged = crate::provenance::bootstrap::merge::apply(&mut model, &scripts);
    model.notes.extend(merged);
    let bootstrap = Bootstrap::read_with(index, &model, catalog, &scripts);
    stat("bootstrap", started);
    let started = std::time::Instant::now();
    let declared = crate::postbuild::injected::declared(&config.substitution.injected);
    let from_flux: Vec<Vec<crate::postbuild::injected::Injection>> = model
        .clusters
        .iter()
        .map(|c| crate::provenance::bootstrap::helmfile::flux_injections(&model, c))
        .collect();
    for (cluster, from_flux) in model.clusters.iter_mut().zip(from_flux) {
        let mut injections = declared.clone();
        injections.extend(bootstrap.injections_of(&cluster.name));
        // The same webhook installed by the bootstrap and then adopted by
        // its Flux HelmRelease counts once.
        for i in from_flux {
            if !injections.iter().any(|j| j.sources == i.sources) {
                injections.push(i);
            }
        }
        crate::postbuild::apply(cluster, &injections);
    }
    stat("postbuild", started);
    Ok((model, bootstrap))
}

/// Every declared entry (`clusters.<name>.entry`, `--entry`) is a
/// directory of the repository: one that is not would be built as an empty
/// tier and checked as nothing.
fn declared_paths_exist(
    repo: &Path,
    index: &RepoIndex,
    config: &Config,
) -> Result<(), SessionError> {
    for (name, facts) in &config.clusters {
        let Some(entry) = &facts.entry else { continue };
        let (path, escapes) = crate::repo::normalize("", &entry.value);
        if !escapes && !entry.value.starts_with('/') && index.is_dir(&path) {
            continue;
        }
        return Err(if entry.referenced.line() == 0 {
            SessionError::EntryNotADirectory {
                dir: entry.value.clone(),
                repo: repo.display().to_string(),
            }
        } else {
            SessionError::Config(crate::config::error_at(
                entry,
                format!(
                    "clusters.{name}.entry `{}` is not a directory of the repository",
                    entry.value
                ),
            ))
        });
    }
    let mut problems = Vec::new();
    for source in &config.sources {
        if let Err(why) = repository_path(index, &source.path.value, Want::Dir) {
            problems.push(crate::config::error_at(
                &source.path,
                format!("sources: path `{}` {why}", source.path.value),
            ));
        }
    }
    if let Some(file) = &config.kubernetes
        && let Err(why) = repository_path(index, &file.file.value, Want::File)
    {
        problems.push(crate::config::error_at(
            &file.file,
            format!("kubernetes.file `{}` {why}", file.file.value),
        ));
    }
    problems.sort_by_key(|p| p.line);
    let mut problems = problems.into_iter();
    match problems.next() {
        None => Ok(()),
        Some(mut first) => {
            first.more = problems.collect();
            Err(SessionError::Config(first))
        }
    }
}

/// What a path of conformance.yaml must name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    File,
    Dir,
}

/// Why `path` (from conformance.yaml) is not a regular file or directory
/// of the repository: absolute, climbing out, missing, a symlink, or the
/// other kind. Nothing outside the repository is looked at.
fn repository_path(index: &RepoIndex, path: &str, want: Want) -> Result<(), &'static str> {
    if let Some(why) = crate::config::outside_problem(path) {
        return Err(why);
    }
    let rel = crate::repo::normalize("", path).0;
    if rel.is_empty() {
        return if want == Want::Dir {
            Ok(())
        } else {
            Err("is not a regular file")
        };
    }
    match index.kind(&rel) {
        None => Err("does not exist in the repository"),
        Some(crate::repo::Kind::Symlink) => {
            Err("is a symlink; it is not followed (name the file it points to)")
        }
        Some(crate::repo::Kind::Dir) if want == Want::Dir => Ok(()),
        Some(crate::repo::Kind::File) if want == Want::File => Ok(()),
        Some(crate::repo::Kind::Unreadable(_)) => Err("cannot be read"),
        Some(_) if want == Want::Dir => Err("is not a directory"),
        Some(_) => Err("is not a regular file"),
    }
}

/// Why a repository has no cluster: no Flux Kustomization at all, or only
/// ones built from other sources (which are named, so the user can map an
/// OCI artifact built from this repository).
fn no_clusters(repo: &Path, index: &RepoIndex) -> SessionError {
    let repo = repo.display().to_string();
    let mut sources: Vec<String> = index
        .files()
        .filter_map(|(_, f)| f.docs().as_ref().ok())
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
    if let Some(dir) = subdirectory_root(index) {
        return SessionError::RootBelow {
            hint: format!("{}/{dir}", repo.trim_end_matches('/')),
            repo,
            dir,
        };
    }
    if sources.is_empty() {
        SessionError::NoClusters { repo }
    } else {
        SessionError::NoLocalClusters {
            repo,
            sources: sources.join(", "),
        }
    }
}

/// The directory the repository's Flux paths are relative to, when they do
/// not resolve at the root but do below one directory (the artifact is a
/// subdirectory of this checkout).
fn subdirectory_root(index: &RepoIndex) -> Option<String> {
    let paths: Vec<String> = index
        .all_files()
        .filter_map(|(_, f)| f.docs().as_ref().ok())
        .flatten()
        .filter(|d| discover::is_flux_kustomization(d))
        .filter_map(|d| d.str_at(&["spec", "path"]))
        .map(|p| crate::repo::normalize("", &p).0)
        .filter(|p| !p.is_empty() && !p.contains("${"))
        .collect();
    if paths.is_empty() || paths.iter().any(|p| index.is_dir(p)) {
        return None;
    }
    let dirs: Vec<&str> = index
        .below("")
        .filter(|(p, k)| **k == crate::repo::Kind::Dir && p.matches('/').count() < 2)
        .map(|(p, _)| p)
        .collect();
    dirs.into_iter()
        .map(|d| {
            let hits = paths
                .iter()
                .filter(|p| index.is_dir(&crate::repo::join(d, p)))
                .count();
            (hits, d)
        })
        .filter(|(hits, _)| *hits > 0)
        .max_by_key(|(hits, d)| (*hits, std::cmp::Reverse(d.len())))
        .map(|(_, d)| d.to_string())
}

/// Gives rayon's workers (which load, build and walk documents nested up
/// to the loader's depth budget) stacks that depth cannot exhaust. The
/// global pool can only be configured once per process; later calls (and a
/// pool the embedding program built) are left as they are.
fn worker_stacks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rayon::ThreadPoolBuilder::new()
            .stack_size(16 * 1024 * 1024)
            .build_global();
    });
}

pub use crate::stats::stat;
