//! `conformance l1-plan`: what the live-cluster run predicts and applies.

use std::process::ExitCode;

use conformance::l1;
use conformance::session::{RunOptions, Session};

use super::print_text;

/// Print the live-cluster (l1-cluster) plan: the Flux mode's per-tier
/// prediction (converges, race, deadlock), then the apply mode's tiers,
/// stages and assertions.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    /// The cluster; default: l1.cluster in conformance.yaml, else the
    /// first discovered.
    #[arg(long = "cluster", value_name = "NAME")]
    cluster: Option<String>,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    super::settle_repo(&mut args.run);
    let session = Session::open(&args.run)?;
    let name = args
        .cluster
        .or_else(|| session.declared.config.l1.cluster.clone())
        .or_else(|| session.model.clusters.first().map(|c| c.name.clone()))
        .unwrap_or_default();
    let found = session.cluster(&name)?;
    let prediction = l1::predict::predict(
        found,
        &session.declared.catalog,
        &session.declared.index,
        &session.bootstrap,
    );
    let analysis = session.analysis(found);
    let plan = l1::plan(
        &analysis,
        &session.declared.config.l1,
        &session.declared.catalog,
    );
    let image = l1::k3s_image(
        &session.declared.config.l1,
        session.declared.config.kubernetes_of(&name),
    );
    print_text(&format!(
        "{}\nApply mode (L1_MODE=apply): the harness applies tiers itself\n{}",
        l1::predict::render(&prediction),
        l1::render(&plan, &image)
    ))?;
    Ok(ExitCode::SUCCESS)
}
