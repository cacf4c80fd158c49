//! `conformance crds`: where every kind a cluster uses comes from.

use std::process::ExitCode;

use conformance::report;
use conformance::session::{RunOptions, Session};

use super::{ClusterArg, print_text};

/// Audit every kind a cluster uses: per tier, where its API comes from and
/// whether it exists when the tier is dry-run on a cold cluster.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    #[command(flatten)]
    cluster: ClusterArg,
    /// One table row per tier and kind however wide (by default a
    /// table wider than 100 columns is grouped by tier).
    #[arg(long)]
    wide: bool,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    super::settle_repo(&mut args.run);
    let session = Session::open(&args.run)?;
    let found = session.cluster_or_only(args.cluster.cluster.as_deref())?;
    print_text(&report::crds::render_with(
        &session.analysis(found),
        args.wide,
    ))?;
    Ok(ExitCode::SUCCESS)
}
