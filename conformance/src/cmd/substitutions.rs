//! `conformance substitutions`: the postBuild substitution audit.

use std::process::ExitCode;

use conformance::report;
use conformance::session::{RunOptions, Session};

use super::{ClusterFilter, print_text};

/// The postBuild substitution audit: one line per Kustomization, then the
/// hazards and unaudited tokens with file:line.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    #[command(flatten)]
    clusters: ClusterFilter,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    super::settle_repo(&mut args.run);
    let session = Session::open(&args.run)?;
    let mut selected = Vec::new();
    for name in &args.clusters.clusters {
        selected.push(session.cluster(name)?);
    }
    if selected.is_empty() {
        selected = session.model.clusters.iter().collect();
    }
    print_text(&report::substitutions::render(&selected))?;
    Ok(ExitCode::SUCCESS)
}
