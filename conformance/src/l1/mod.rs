//! L1: what a live-cluster run (the `l1-cluster` crate) does and expects.
//! Pure data computed from the convergence model, so it is unit-tested
//! without a cluster and printed by `conformance l1-plan`.
//!
//! * [`predict`]: the **Flux mode** (the default). Flux's own controllers
//!   reconcile the repository from an empty cluster; for every tier the
//!   model predicts *converges*, *race* or *deadlock* (and *suspended*,
//!   *never applied*), from a strict cold start of the cluster as L1 builds
//!   it: k3s and Flux, nothing the repository installs outside Flux.
//! * [`observe`]: what the harness records of each Kustomization (its Ready
//!   condition over time) and the comparison of that with the prediction,
//!   which decides each `<cluster>::l1::flux::<tier>` trial.
//! * [`apply`]: the **apply mode** (`L1_MODE=apply`): the harness applies
//!   tiers itself, imitating kustomize-controller, where Flux cannot be
//!   installed.

pub mod apply;
pub mod observe;
pub mod predict;

pub use apply::{Assertion, Plan, PlannedTier, Stage, plan, render, stages};

use crate::config::Config;

/// The k3s image for a cluster: `rancher/k3s` with the tag of its Kubernetes
/// version (`v1.36.4+k3s1` → `v1.36.4-k3s1`), or the pinned default.
pub fn k3s_image(config: &Config, cluster: &str) -> (String, String) {
    if let Some(image) = &config.l1.image {
        return match image.rsplit_once(':') {
            Some((name, tag)) => (name.to_string(), tag.to_string()),
            None => (image.clone(), DEFAULT_K3S_TAG.to_string()),
        };
    }
    let version = config
        .clusters
        .get(cluster)
        .and_then(|c| c.kubernetes.as_ref().map(|v| v.value.clone()));
    let tag = match version {
        Some(v) if v.contains("+k3s") => {
            format!("v{}", v.trim_start_matches('v').replace('+', "-"))
        }
        Some(v) if v.matches('.').count() == 2 => format!("v{}-k3s1", v.trim_start_matches('v')),
        _ => DEFAULT_K3S_TAG.to_string(),
    };
    ("rancher/k3s".to_string(), tag)
}

/// The k3s release used when the configuration names none.
pub const DEFAULT_K3S_TAG: &str = "v1.33.4-k3s1";
