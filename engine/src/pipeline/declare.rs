//! The first stage: what a run is given. conformance.yaml (or `--config`)
//! with the command line over it, the catalog it extends, the repository
//! index and the renderer; every path conformance.yaml names is checked to
//! be a file or directory of the repository before anything is built.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::SessionError;
use crate::config::Config;
use crate::provenance::Catalog;
use crate::render::{Choice, Kustomize};
use crate::repo::RepoIndex;
use crate::rules;
use crate::stats::stat;

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
    /// Read this checkout as the artifact of a Flux source (repeatable):
    /// REF is `Kind/namespace/name`, `Kind/name` or the source's URL, DIR
    /// a checkout of it (a fleet's infrastructure or apps repository), as
    /// `sources: [{…, dir: DIR}]` in conformance.yaml.
    #[arg(long = "source", value_name = "REF=DIR")]
    pub sources: Vec<String>,
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

/// What a run is given, resolved: the stage every other one reads.
#[derive(Debug)]
pub struct Declared {
    /// The repository root as given.
    pub repo: PathBuf,
    /// The repository's conformance.yaml (defaults when absent), with the
    /// command line over it.
    pub config: Config,
    /// The embedded catalog extended with conformance.yaml's `catalog`.
    pub catalog: Catalog,
    /// The repository's paths and loaded YAML files.
    pub index: RepoIndex,
    /// How kustomize builds run; shared with a previous revision's run
    /// (`--base`), which builds with the same one.
    pub(crate) renderer: Arc<dyn Kustomize>,
}

impl Declared {
    /// The renderer every build of this run uses.
    pub fn renderer(&self) -> &dyn Kustomize {
        self.renderer.as_ref()
    }
}

/// Reads conformance.yaml (or `--config`), applies the command line over
/// it, picks the renderer (`--renderer`, else the configuration's, else
/// native), indexes the repository and checks the paths the configuration
/// names.
pub fn declare(options: &RunOptions) -> Result<Declared, SessionError> {
    worker_stacks();
    let mut config = match &options.config {
        Some(file) => Config::load_file(file, &rules::is_rule_id)?,
        None => Config::load(&options.repo, &rules::is_rule_id)?,
    };
    if options.fetch_remote {
        config.remote = crate::remote::Setting::Fetch;
    }
    config.declare_entries(&options.entries);
    let command_line = super::sources::from_command_line(&options.sources)?;
    let renderer = options
        .renderer
        .or(config.renderer)
        .unwrap_or_default()
        .backend()?;
    let started = std::time::Instant::now();
    let mut index = RepoIndex::load(&options.repo)?;
    super::sources::mount_all(&options.repo, &mut index, &mut config, command_line)?;
    stat("index", started);
    declared_paths_exist(&options.repo, &index, &config)?;
    Ok(Declared {
        repo: options.repo.clone(),
        catalog: config.catalog(),
        config,
        index,
        renderer: Arc::from(renderer),
    })
}

/// What a previous revision's tree (`--base`, materialised at `root`) is
/// given: its own conformance.yaml, as it was, and this run's renderer.
pub fn declare_base(root: &Path, renderer: Arc<dyn Kustomize>) -> Result<Declared, SessionError> {
    let config = Config::load(root, &rules::is_rule_id)?;
    let index = RepoIndex::load(root)?;
    Ok(Declared {
        repo: root.to_path_buf(),
        catalog: config.catalog(),
        config,
        index,
        renderer,
    })
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
    for path in config.sources.iter().filter_map(|s| s.path.as_ref()) {
        if let Err(why) = repository_path(index, &path.value, Want::Dir) {
            problems.push(crate::config::error_at(
                path,
                format!("sources: path `{}` {why}", path.value),
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
    for provided in &config.provides {
        let (file, _) = provided.file_and_line();
        if let Err(why) = repository_path(index, file, Want::File) {
            problems.push(crate::config::error_at(
                &provided.step,
                format!("provides: step `{}`: `{file}` {why}", provided.step.value),
            ));
        }
        for entry in &provided.creates {
            if let Err(why) = crate::provenance::bootstrap::unread::created(&entry.value) {
                problems.push(crate::config::error_at(
                    entry,
                    format!("provides: creates `{}` {why}", entry.value),
                ));
            }
        }
    }
    for entry in &config.external {
        if let Err(why) = crate::provenance::bootstrap::unread::created(&entry.value) {
            problems.push(crate::config::error_at(
                entry,
                format!("external: `{}` {why}", entry.value),
            ));
        }
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
