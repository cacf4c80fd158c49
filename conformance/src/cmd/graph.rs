//! `conformance graph`: a cluster's tier graph in canonical form.

use std::process::ExitCode;

use conformance::graph::TierGraph;
use conformance::session::{RunOptions, Session};

use super::{ClusterArg, print, print_text};

/// Print a cluster's tier graph in canonical form (sorted, one line each).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    #[command(flatten)]
    cluster: ClusterArg,
    /// text (canonical: sorted, one node or edge per line, then the tiers
    /// never Ready on a cold start) or dot (Graphviz: `| dot -Tsvg`).
    #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
    format: GraphFormat,
}

/// The formats of `graph` (no doc comments on the variants: clap would
/// print them in `--help`).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    Text,
    Dot,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    super::settle_repo(&mut args.run);
    let session = Session::open(&args.run)?;
    let found = session.cluster_or_only(args.cluster.cluster.as_deref())?;
    if args.format == GraphFormat::Dot {
        let never = session.analysis(found).never_ready();
        print(&conformance::report::dot::render(
            found,
            &TierGraph::of(found),
            &never,
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = TierGraph::of(found).canonical();
    text.push_str(&conformance::graph::notes(found));
    text.push_str(&session.analysis(found).never_ready_notes());
    print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}
