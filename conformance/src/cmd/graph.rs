//! `conformance graph`: a cluster's tier graph in canonical form.

use std::process::ExitCode;

use conformance::graph::TierGraph;
use conformance::session::{RunOptions, Session};

use super::{ClusterArg, print_text};

/// Print a cluster's tier graph in canonical form (sorted, one line each).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    #[command(flatten)]
    cluster: ClusterArg,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let session = Session::open(&args.run)?;
    let found = session.cluster_or_only(args.cluster.cluster.as_deref())?;
    let mut text = TierGraph::of(found).canonical();
    text.push_str(&conformance::graph::notes(found));
    text.push_str(&session.analysis(found).never_ready_notes());
    print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}
