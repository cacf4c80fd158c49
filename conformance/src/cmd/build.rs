//! `conformance build`: the objects Flux would apply, in apply order.

use std::process::ExitCode;

use conformance::report;
use conformance::session::{RunOptions, Session};

use super::{ClusterArg, print};

/// Print the objects Flux would apply, after every build step and
/// postBuild substitution, as YAML in apply order (tiers as a cold start
/// reconciles them, each in Flux's stages), Secret values redacted.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    #[command(flatten)]
    cluster: ClusterArg,
    /// Only this Kustomization (`name` or `namespace/name`).
    #[arg(long = "kustomization", value_name = "NAME")]
    kustomization: Option<String>,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    super::settle_repo(&mut args.run);
    let session = Session::open(&args.run)?;
    let found = session.cluster_or_only(args.cluster.cluster.as_deref())?;
    let analysis = session.analysis(found);
    let (text, broken) = report::manifests::build(
        found,
        &analysis.order.sequence,
        args.kustomization.as_deref(),
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    print(&text)?;
    // A tier that does not build, or was not built, fails the command.
    for line in &broken {
        eprintln!("conformance build: {}", report::text_safe(line));
    }
    Ok(if broken.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
