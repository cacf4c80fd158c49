//! `conformance init`: a starter conformance.yaml from what a check could
//! not know ([`conformance::report::starter`]). An existing file is never
//! overwritten.

use std::path::PathBuf;
use std::process::ExitCode;

use conformance::check::{CheckOptions, check};
use conformance::config::FILE_NAME;
use conformance::report;
use conformance::session::RunOptions;

use super::print;

/// Write a starter conformance.yaml from what a check could not know.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    /// Where to write it: `-` for stdout (default: conformance.yaml at the
    /// repository root, which must not exist yet).
    #[arg(long, value_name = "PATH")]
    output: Option<PathBuf>,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    super::settle_repo(&mut args.run);
    let target = args
        .output
        .clone()
        .unwrap_or_else(|| args.run.repo.join(FILE_NAME));
    let to_stdout = target.as_os_str() == "-";
    // Refused before the check runs: a user's file is never replaced.
    if !to_stdout && (target.exists() || target.is_symlink()) {
        anyhow::bail!(
            "{}: already exists, and is not overwritten; print a starter with `conformance init --output -` and merge what you need",
            target.display()
        );
    }
    let repo = args.run.repo.display().to_string();
    let outcome = check(&CheckOptions {
        run: args.run,
        clusters: Vec::new(),
        base: None,
        baseline: None,
    })?;
    let text = report::starter::render(&outcome, &repo);
    if to_stdout {
        print(&text)?;
    } else {
        // `create_new`: a file that appeared meanwhile is not replaced either.
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .map_err(|e| anyhow::anyhow!("{}: {e}", target.display()))?;
        file.write_all(text.as_bytes())?;
        eprintln!("wrote {}", target.display());
    }
    Ok(ExitCode::SUCCESS)
}
