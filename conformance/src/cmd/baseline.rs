//! `conformance baseline`: write every current finding to a baseline file,
//! so that `conformance check --baseline FILE` fails only on new ones
//! ([`conformance::rules::baseline`]).

use std::path::PathBuf;
use std::process::ExitCode;

use conformance::check::{CheckOptions, check};
use conformance::rules::baseline::Baseline;
use conformance::session::RunOptions;

use super::ClusterFilter;

/// The baseline's name at the repository root, when `--file` is not given.
pub const FILE_NAME: &str = "conformance-baseline.yaml";

/// Write every current finding to a baseline file (commit it; `check
/// --baseline FILE` then fails only on findings not in it).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    #[command(flatten)]
    clusters: ClusterFilter,
    /// Where to write it (default: conformance-baseline.yaml at the
    /// repository root). An existing baseline is rewritten; any other file
    /// is refused.
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    super::settle_repo(&mut args.run);
    let target = args
        .file
        .clone()
        .unwrap_or_else(|| args.run.repo.join(FILE_NAME));
    // Refused before the check runs: only a baseline is ever replaced.
    if target.exists() || target.is_symlink() {
        Baseline::read(&target).map_err(|e| {
            anyhow::anyhow!(
                "{e}\n{} is not replaced: it is not a baseline `conformance baseline` wrote; name another file with --file",
                target.display()
            )
        })?;
    }
    let outcome = check(&CheckOptions {
        run: args.run,
        clusters: args.clusters.clusters,
        base: None,
        baseline: None,
    })?;
    let baseline = Baseline::of(&outcome.findings);
    conformance::report::output::write(&target, &baseline.to_yaml())?;
    let counted = |severity: &str| {
        baseline
            .entries
            .iter()
            .filter(|e| e.severity == severity)
            .count()
    };
    eprintln!(
        "wrote {} with {} finding{} ({} error{}, {} warning{}; waived ones are left to their waivers): `conformance check --baseline {}` now fails only on findings not in it",
        target.display(),
        baseline.entries.len(),
        conformance::report::plural(baseline.entries.len()),
        counted("error"),
        conformance::report::plural(counted("error")),
        counted("warning"),
        conformance::report::plural(counted("warning")),
        target.display()
    );
    Ok(ExitCode::SUCCESS)
}
