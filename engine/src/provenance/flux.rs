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

/// Every kind Flux's groups (and the Flux Operator's) have served since
/// Flux v2.0, with every version any release served, newest first: read
/// from each controller's `config/crd/bases` at the tags the fluxcd/flux2
/// releases pin (source-controller, kustomize-controller, helm-controller,
/// notification-controller, image-reflector-controller,
/// image-automation-controller, source-watcher) and from
/// controlplaneio-fluxcd/flux-operator's `config/crd/bases`. Which of the
/// versions a given release still serves is `rules/api/flux-apis.txt`.
pub const FLUX_KINDS: &[(&str, &str, &[&str])] = &[
    (
        "source.toolkit.fluxcd.io",
        "GitRepository",
        &["v1", "v1beta2", "v1beta1"],
    ),
    (
        "source.toolkit.fluxcd.io",
        "HelmRepository",
        &["v1", "v1beta2", "v1beta1"],
    ),
    (
        "source.toolkit.fluxcd.io",
        "HelmChart",
        &["v1", "v1beta2", "v1beta1"],
    ),
    (
        "source.toolkit.fluxcd.io",
        "Bucket",
        &["v1", "v1beta2", "v1beta1"],
    ),
    (
        "source.toolkit.fluxcd.io",
        "OCIRepository",
        &["v1", "v1beta2"],
    ),
    ("source.toolkit.fluxcd.io", "ExternalArtifact", &["v1"]),
    (
        "kustomize.toolkit.fluxcd.io",
        "Kustomization",
        &["v1", "v1beta2", "v1beta1"],
    ),
    (
        "helm.toolkit.fluxcd.io",
        "HelmRelease",
        &["v2", "v2beta2", "v2beta1"],
    ),
    (
        "notification.toolkit.fluxcd.io",
        "Alert",
        &["v1beta3", "v1beta2", "v1beta1"],
    ),
    (
        "notification.toolkit.fluxcd.io",
        "Provider",
        &["v1beta3", "v1beta2", "v1beta1"],
    ),
    (
        "notification.toolkit.fluxcd.io",
        "Receiver",
        &["v1", "v1beta2", "v1beta1"],
    ),
    (
        "image.toolkit.fluxcd.io",
        "ImageRepository",
        &["v1", "v1beta2", "v1beta1"],
    ),
    (
        "image.toolkit.fluxcd.io",
        "ImagePolicy",
        &["v1", "v1beta2", "v1beta1"],
    ),
    (
        "image.toolkit.fluxcd.io",
        "ImageUpdateAutomation",
        &["v1", "v1beta2", "v1beta1"],
    ),
    (
        "source.extensions.fluxcd.io",
        "ArtifactGenerator",
        &["v1beta1"],
    ),
    (FLUX_OPERATOR_GROUP, "FluxInstance", &["v1"]),
    (FLUX_OPERATOR_GROUP, "FluxReport", &["v1"]),
    (FLUX_OPERATOR_GROUP, "ResourceSet", &["v1"]),
    (FLUX_OPERATOR_GROUP, "ResourceSetInputProvider", &["v1"]),
];

/// The versions Flux has served for `group`/`kind`, when it is one of its
/// kinds.
pub fn flux_versions(group: &str, kind: &str) -> Option<&'static [&'static str]> {
    FLUX_KINDS
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map(|(_, _, v)| *v)
}

/// Whether `kind` is in one of Flux's groups (or the Flux Operator's) but
/// is none of the kinds Flux serves there (`Kustomizatio`): no CRD defines
/// it, whatever any tier applies.
pub fn unserved_flux_kind(group: &str, kind: &str) -> bool {
    flux_versions(group, kind).is_none() && FLUX_KINDS.iter().any(|(g, _, _)| *g == group)
}

/// The kinds Flux serves in `group` (empty for a group that is not Flux's).
pub fn flux_kinds_of(group: &str) -> Vec<&'static str> {
    FLUX_KINDS
        .iter()
        .filter(|(g, _, _)| *g == group)
        .map(|(_, k, _)| *k)
        .collect()
}

/// Flux's kinds (and the operator's, where it syncs the cluster).
#[derive(Debug)]
pub struct Flux;

impl ProviderSource for Flux {
    fn initial(&self, cx: &SourceCx, group: &str, kind: &str) -> Option<Provenance> {
        let operator_synced = matches!(cx.cluster.entry, Entry::Directory { .. });
        // Only the kinds Flux serves: a misspelt one (`Kustomizatio`) has
        // no CRD, whatever its group.
        let served = flux_versions(group, kind).is_some();
        (served
            && (FLUX_GROUPS.contains(&group) || (group == FLUX_OPERATOR_GROUP && operator_synced)))
            .then_some(Provenance::Flux)
    }
}
