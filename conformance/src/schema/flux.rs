//! Flux's CRDs, bundled (`flux-crds/`, Flux v2.9): the schema of Flux's own
//! kinds when the repository does not carry `gotk-components.yaml`.

use std::sync::OnceLock;

use crate::yaml::Node;

/// The bundled CRD files.
const FILES: &[&str] = &[
    include_str!("flux-crds/helm.toolkit.fluxcd.io_helmreleases.yaml"),
    include_str!("flux-crds/image.toolkit.fluxcd.io_imagepolicies.yaml"),
    include_str!("flux-crds/image.toolkit.fluxcd.io_imagerepositories.yaml"),
    include_str!("flux-crds/image.toolkit.fluxcd.io_imageupdateautomations.yaml"),
    include_str!("flux-crds/kustomize.toolkit.fluxcd.io_kustomizations.yaml"),
    include_str!("flux-crds/notification.toolkit.fluxcd.io_alerts.yaml"),
    include_str!("flux-crds/notification.toolkit.fluxcd.io_providers.yaml"),
    include_str!("flux-crds/notification.toolkit.fluxcd.io_receivers.yaml"),
    include_str!("flux-crds/source.extensions.fluxcd.io_artifactgenerators.yaml"),
    include_str!("flux-crds/source.toolkit.fluxcd.io_buckets.yaml"),
    include_str!("flux-crds/source.toolkit.fluxcd.io_externalartifacts.yaml"),
    include_str!("flux-crds/source.toolkit.fluxcd.io_gitrepositories.yaml"),
    include_str!("flux-crds/source.toolkit.fluxcd.io_helmcharts.yaml"),
    include_str!("flux-crds/source.toolkit.fluxcd.io_helmrepositories.yaml"),
    include_str!("flux-crds/source.toolkit.fluxcd.io_ocirepositories.yaml"),
];

/// The Flux release the bundled CRDs come from.
pub const BUNDLED: &str = "v2.9";

/// Every bundled CRD, parsed once: (group, kind, document).
fn crds() -> &'static [(String, String, Node)] {
    static CRDS: OnceLock<Vec<(String, String, Node)>> = OnceLock::new();
    CRDS.get_or_init(|| {
        FILES
            .iter()
            .filter_map(|text| crate::yaml::parse_documents(text).ok())
            .flatten()
            .filter_map(|doc| {
                let group = doc.str_at(&["spec", "group"])?;
                let kind = doc.str_at(&["spec", "names", "kind"])?;
                Some((group, kind, doc))
            })
            .collect()
    })
}

/// The bundled CRD of a Flux kind.
pub fn crd(group: &str, kind: &str) -> Option<&'static Node> {
    crds()
        .iter()
        .find(|(g, k, _)| g == group && k == kind)
        .map(|(_, _, doc)| doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_crd_parses_and_has_a_schema() {
        assert_eq!(crds().len(), FILES.len());
        for (group, kind, doc) in crds() {
            assert!(
                crate::provenance::flux_versions(group, kind).is_some(),
                "{group}/{kind} is not in FLUX_KINDS"
            );
            let versions = doc
                .path(&["spec", "versions"])
                .map(Node::as_seq)
                .unwrap_or_default();
            let served: Vec<String> = versions
                .iter()
                .filter_map(|v| v.str_at(&["name"]))
                .collect();
            assert!(!served.is_empty(), "{group}/{kind}");
            for v in &served {
                assert!(
                    crate::schema::crd::version_schema(doc, v).is_some(),
                    "{group}/{kind} {v} has no schema"
                );
            }
        }
        assert!(crd("kustomize.toolkit.fluxcd.io", "Kustomization").is_some());
    }
}
