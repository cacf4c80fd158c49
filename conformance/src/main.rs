//! The `conformance` command: `check` (every rule, in six report formats),
//! `baseline`, `build`, `diff`, `graph`, `crds`, `substitutions`, `l1-plan`, `config
//! check` and `explain`. Each subcommand is a file of [`cmd`] with its
//! arguments and its `run`; every one that reads a repository flattens
//! [`RunOptions`](conformance::session::RunOptions) and opens one
//! [`Session`](conformance::session::Session) from it.
//!
//! Exit status: 0 when no error-severity finding, 1 when at least one, 2 when
//! the run itself failed (bad arguments, unreadable repository, invalid
//! configuration, no renderer, no cluster), with the cause on stderr.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "conformance",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("CONFORMANCE_COMMIT"), ")"),
    about = "Conformance checks for Flux GitOps repositories"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Discover every cluster, render every Kustomization, run every rule.
    Check(cmd::check::Args),
    /// Write every current finding to a baseline file (default
    /// conformance-baseline.yaml at the repository root): `check --baseline
    /// FILE` then fails only on findings not in it.
    Baseline(cmd::baseline::Args),
    /// Print the objects Flux would apply, after every build step and
    /// postBuild substitution, as YAML in apply order (tiers as a cold start
    /// reconciles them, each in Flux's stages), Secret values redacted.
    Build(cmd::build::Args),
    /// Per cluster and Kustomization, the rendered objects added, removed or
    /// changed since a previous revision (Secret values redacted). Exit 0
    /// whatever changed.
    Diff(cmd::diff::Args),
    /// Print a cluster's tier graph in canonical form (sorted, one line each).
    Graph(cmd::graph::Args),
    /// Audit every kind a cluster uses: per tier, where its API comes from and
    /// whether it exists when the tier is dry-run on a cold cluster.
    Crds(cmd::crds::Args),
    /// The postBuild substitution audit: one line per Kustomization, then the
    /// hazards and unaudited tokens with file:line.
    Substitutions(cmd::substitutions::Args),
    /// Print the live-cluster (l1-cluster) plan: the Flux mode's per-tier
    /// prediction (converges, race, deadlock), then the apply mode's tiers,
    /// stages and assertions.
    L1Plan(cmd::l1_plan::Args),
    /// Validate conformance.yaml (syntax, keys, paths, regexes, dates, and the
    /// cluster names it uses against discovery).
    Config {
        #[command(subcommand)]
        action: cmd::config::Action,
    },
    /// Describe a rule: what it catches, the Flux behaviour behind it, the fix.
    Explain(cmd::explain::Args),
    /// Write a starter conformance.yaml from what a check could not know
    /// (sources to map, objects from outside, unread bootstrap steps), each
    /// entry commented out with its evidence; an existing file is never
    /// overwritten (`--output -` prints it).
    Init(cmd::init::Args),
}

/// A check allocates millions of small nodes from two threads: mimalloc
/// (see conformance/Cargo.toml) is about a third faster than the system
/// allocator and keeps a third less resident.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Progress on stderr only when a person watches it (never in a pipe,
    // a CI log or a test); CONFORMANCE_NO_PROGRESS turns it off.
    if std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("CONFORMANCE_NO_PROGRESS").is_none()
    {
        conformance::progress::enable();
    }
    let code = match dispatch(cli.command) {
        Ok(code) => code,
        Err(err) => {
            conformance::progress::clear();
            eprintln!(
                "conformance: {}",
                conformance::report::text_safe(&format!("{err:#}"))
            );
            ExitCode::from(2)
        }
    };
    if std::env::var_os("CONFORMANCE_STATS").is_some() {
        // Peak resident memory, for the benchmarks (Linux only).
        if let Some(kb) = conformance::stats::status_kb("VmHWM:") {
            eprintln!("peak_rss_kb={kb}");
        }
    }
    code
}

/// Each subcommand runs itself.
fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Check(args) => cmd::check::run(args),
        Command::Baseline(args) => cmd::baseline::run(args),
        Command::Build(args) => cmd::build::run(args),
        Command::Diff(args) => cmd::diff::run(args),
        Command::Graph(args) => cmd::graph::run(args),
        Command::Crds(args) => cmd::crds::run(args),
        Command::Substitutions(args) => cmd::substitutions::run(args),
        Command::L1Plan(args) => cmd::l1_plan::run(args),
        Command::Config { action } => cmd::config::run(action),
        Command::Explain(args) => cmd::explain::run(args),
        Command::Init(args) => cmd::init::run(args),
    }
}
