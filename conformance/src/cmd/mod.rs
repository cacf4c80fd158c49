//! The subcommands, one file each: its arguments (clap) and `run`, which
//! opens one [`conformance::session::Session`] from the flattened
//! [`RunOptions`](conformance::session::RunOptions) and prints what it
//! found. What they share lives here: the cluster arguments and stdout.

pub mod baseline;
pub mod build;
pub mod check;
pub mod config;
pub mod crds;
pub mod diff;
pub mod explain;
pub mod graph;
pub mod init;
pub mod l1_plan;
pub mod substitutions;

use std::io::Write as _;

use conformance::report;

/// One cluster, for the subcommands that show a single cluster.
#[derive(Debug, clap::Args)]
pub struct ClusterArg {
    /// The cluster (as discovered: the shortest unique tail of its entry
    /// path); not needed when the repository has one.
    #[arg(long = "cluster", value_name = "NAME")]
    pub cluster: Option<String>,
}

/// The clusters a subcommand reports (all when none is named).
#[derive(Debug, clap::Args)]
pub struct ClusterFilter {
    /// Only this cluster (repeatable; all when absent). Rules still see every
    /// cluster, so parity is judged against the whole repository.
    #[arg(long = "cluster", value_name = "NAME")]
    pub clusters: Vec<String>,
}

/// The previous revision a subcommand compares with: `--base REV` or
/// `--base-dir DIR`.
pub fn base(
    rev: Option<String>,
    dir: Option<std::path::PathBuf>,
) -> Option<conformance::base::Base> {
    rev.map(conformance::base::Base::Rev)
        .or(dir.map(conformance::base::Base::Dir))
}

/// `--repo .` (the default) run below the root of a git work tree means
/// that work tree: Flux builds from the repository's root (every
/// `spec.path` is relative to it), so a subdirectory would be checked as a
/// repository of its own, wrongly. The root is used, and stderr says so.
/// Any other `--repo` is taken as given.
pub fn settle_repo(run: &mut conformance::session::RunOptions) {
    if run.repo != std::path::Path::new(".") {
        return;
    }
    own_clone_note();
    let Ok(here) = std::env::current_dir() else {
        return;
    };
    let Some(root) = here
        .ancestors()
        .skip(1)
        .find(|dir| dir.join(".git").exists())
    else {
        return;
    };
    if here.join(".git").exists() {
        return;
    }
    conformance::progress::clear();
    eprintln!(
        "conformance: {} is inside the git repository {}: checking its root, as Flux builds it (`--repo DIR` checks another directory)",
        here.display(),
        root.display()
    );
    run.repo = root.to_path_buf();
}

/// `--repo .` in a clone of this tool checks its fixtures, which are
/// broken on purpose (one per incident): say so, once, on stderr.
fn own_clone_note() {
    let Ok(here) = std::env::current_dir() else {
        return;
    };
    let Some(root) = here
        .ancestors()
        .find(|dir| dir.join("fixtures/incidents").is_dir() && dir.join("workspace-hack").is_dir())
    else {
        return;
    };
    let manifest = std::fs::read_to_string(root.join("conformance/Cargo.toml")).unwrap_or_default();
    if manifest.contains("name = \"flux-conformance\"") {
        eprintln!(
            "conformance: {} is this tool's own repository: its fixtures are broken on purpose, so expect hundreds of errors; check your GitOps repository with `--repo PATH`",
            root.display()
        );
    }
}

/// Writes text meant for people to stdout, with what a terminal would obey
/// escaped ([`report::text_safe`]).
pub fn print_text(text: &str) -> anyhow::Result<()> {
    print(&report::text_safe(text))
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a panic.
pub fn print(text: &str) -> anyhow::Result<()> {
    conformance::progress::clear();
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
