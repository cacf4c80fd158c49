//! Flux's own kinds: its controllers run the sync, so their CRDs exist before
//! any tier is applied; in a cluster a FluxInstance syncs, so do the Flux
//! Operator's.

use super::{Provenance, ProviderSource, SourceCx};
use crate::model::Entry;

/// Groups served by Flux itself.
pub const FLUX_GROUPS: &[&str] = &[
    "source.toolkit.fluxcd.io",
    "kustomize.toolkit.fluxcd.io",
    "helm.toolkit.fluxcd.io",
    "notification.toolkit.fluxcd.io",
    "image.toolkit.fluxcd.io",
    "source.extensions.fluxcd.io",
];

/// The Flux Operator's group (FluxInstance, ResourceSet, …): installed
/// before anything in a cluster that a FluxInstance syncs, since the
/// operator is what syncs it.
pub const FLUX_OPERATOR_GROUP: &str = "fluxcd.controlplane.io";

/// Flux's kinds (and the operator's, where it syncs the cluster).
#[derive(Debug)]
pub struct Flux;

impl ProviderSource for Flux {
    fn name(&self) -> &'static str {
        "Flux"
    }
    fn initial(&self, cx: &SourceCx, group: &str, _: &str) -> Option<Provenance> {
        let operator_synced = matches!(cx.cluster.entry, Entry::Directory { .. });
        (FLUX_GROUPS.contains(&group) || (group == FLUX_OPERATOR_GROUP && operator_synced))
            .then_some(Provenance::Flux)
    }
}
