//! The third stage: postBuild substitution, once per tier
//! ([`crate::postbuild::apply`]), with the variables that reach each
//! Kustomization at admission: those conformance.yaml declares
//! (`substitution.injected`), those the bootstrap's webhooks inject, and
//! those of a webhook a Flux HelmRelease installs.

use super::{Built, Declared};
use crate::model::Model;
use crate::postbuild::injected::{self, Injection};
use crate::provenance::bootstrap::{Bootstrap, helmfile};
use crate::stats::stat;

/// The clusters as Flux applies them: every tier's objects substituted,
/// and its audit (`tier.substitution`).
#[derive(Debug)]
pub struct Substituted {
    /// The discovered, built and substituted clusters.
    pub model: Model,
    /// What the repository installs before Flux.
    pub bootstrap: Bootstrap,
}

/// Substitutes every tier of every cluster of `built`.
pub fn substitute(declared: &Declared, built: Built) -> Substituted {
    let Built {
        mut model,
        bootstrap,
    } = built;
    let started = std::time::Instant::now();
    let declared = injected::declared(&declared.config.substitution.injected);
    let from_flux: Vec<Vec<Injection>> = model
        .clusters
        .iter()
        .map(|c| helmfile::flux_injections(&model, c))
        .collect();
    for (cluster, from_flux) in model.clusters.iter_mut().zip(from_flux) {
        let mut injections = declared.clone();
        injections.extend(bootstrap.injections_of(&cluster.name));
        // The same webhook installed by the bootstrap and then adopted by
        // its Flux HelmRelease counts once.
        for i in from_flux {
            if !injections.iter().any(|j| j.sources == i.sources) {
                injections.push(i);
            }
        }
        crate::postbuild::apply(cluster, &injections);
    }
    stat("postbuild", started);
    Substituted { model, bootstrap }
}
