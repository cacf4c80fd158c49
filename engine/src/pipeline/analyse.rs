//! The fourth stage: every cluster's cold start, modelled once
//! ([`ClusterAnalysis::of`]: order, health, verdicts, where each kind comes
//! from), with the Kubernetes release and the Flux release that
//! conformance.yaml or the repository settle.

use super::Declared;
use crate::convergence::ClusterAnalysis;
use crate::model::{Cluster, Model, Span};
use crate::provenance::bootstrap::Bootstrap;
use crate::provenance::installed::Installed;
use crate::rules;
use crate::stats::stat;

/// The convergence analysis of one cluster.
pub fn analysis<'s>(
    declared: &'s Declared,
    bootstrap: &'s Bootstrap,
    cluster: &'s Cluster,
) -> ClusterAnalysis<'s> {
    let kubernetes = crate::provenance::distribution::kubernetes(
        cluster,
        declared.config.kubernetes_declared(),
        &declared.index,
        bootstrap,
    );
    let mut analysis = ClusterAnalysis::of(
        cluster,
        &declared.catalog,
        &declared.index,
        bootstrap,
        kubernetes,
    );
    // `clusters.<name>.flux` in conformance.yaml settles the release.
    if let Some(v) = declared
        .config
        .clusters
        .get(&cluster.name)
        .and_then(|c| c.flux.as_ref())
        && let Some(declared) = Installed::declared(
            &v.value,
            Span::new(crate::config::FILE_NAME, v.referenced.line() as u32),
        )
    {
        analysis.installed = Some(declared);
    }
    analysis
}

/// What the rules read: the model, the configuration's sections, the
/// catalog, the index and every cluster's analysis (computed here, once);
/// `base` is the previous revision's model when the run compares.
pub fn analyse<'s>(
    declared: &'s Declared,
    model: &'s Model,
    bootstrap: &'s Bootstrap,
    base: Option<&'s Model>,
) -> rules::Context<'s> {
    let started = std::time::Instant::now();
    crate::progress::show("modelling the cold start");
    let analyses = model
        .clusters
        .iter()
        .map(|c| analysis(declared, bootstrap, c))
        .collect();
    stat("analysis", started);
    rules::Context {
        model,
        settings: declared.config.rule_settings(),
        catalog: &declared.catalog,
        index: &declared.index,
        analyses,
        base,
    }
}
