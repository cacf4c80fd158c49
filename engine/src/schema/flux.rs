//! Flux's CRDs, bundled (`flux-crds/`, Flux v2.9, written by
//! `scripts/gen-flux-crds.py` without their descriptions): the schema of
//! Flux's own kinds when the repository does not carry
//! `gotk-components.yaml`.

use std::sync::OnceLock;

use crate::yaml::Node;

/// The bundled CRD files, by the kind each defines.
const FILES: &[(&str, &str, &str)] = &[
    (
        "helm.toolkit.fluxcd.io",
        "HelmRelease",
        include_str!("flux-crds/helm.toolkit.fluxcd.io_helmreleases.yaml"),
    ),
    (
        "image.toolkit.fluxcd.io",
        "ImagePolicy",
        include_str!("flux-crds/image.toolkit.fluxcd.io_imagepolicies.yaml"),
    ),
    (
        "image.toolkit.fluxcd.io",
        "ImageRepository",
        include_str!("flux-crds/image.toolkit.fluxcd.io_imagerepositories.yaml"),
    ),
    (
        "image.toolkit.fluxcd.io",
        "ImageUpdateAutomation",
        include_str!("flux-crds/image.toolkit.fluxcd.io_imageupdateautomations.yaml"),
    ),
    (
        "kustomize.toolkit.fluxcd.io",
        "Kustomization",
        include_str!("flux-crds/kustomize.toolkit.fluxcd.io_kustomizations.yaml"),
    ),
    (
        "notification.toolkit.fluxcd.io",
        "Alert",
        include_str!("flux-crds/notification.toolkit.fluxcd.io_alerts.yaml"),
    ),
    (
        "notification.toolkit.fluxcd.io",
        "Provider",
        include_str!("flux-crds/notification.toolkit.fluxcd.io_providers.yaml"),
    ),
    (
        "notification.toolkit.fluxcd.io",
        "Receiver",
        include_str!("flux-crds/notification.toolkit.fluxcd.io_receivers.yaml"),
    ),
    (
        "source.extensions.fluxcd.io",
        "ArtifactGenerator",
        include_str!("flux-crds/source.extensions.fluxcd.io_artifactgenerators.yaml"),
    ),
    (
        "source.toolkit.fluxcd.io",
        "Bucket",
        include_str!("flux-crds/source.toolkit.fluxcd.io_buckets.yaml"),
    ),
    (
        "source.toolkit.fluxcd.io",
        "ExternalArtifact",
        include_str!("flux-crds/source.toolkit.fluxcd.io_externalartifacts.yaml"),
    ),
    (
        "source.toolkit.fluxcd.io",
        "GitRepository",
        include_str!("flux-crds/source.toolkit.fluxcd.io_gitrepositories.yaml"),
    ),
    (
        "source.toolkit.fluxcd.io",
        "HelmChart",
        include_str!("flux-crds/source.toolkit.fluxcd.io_helmcharts.yaml"),
    ),
    (
        "source.toolkit.fluxcd.io",
        "HelmRepository",
        include_str!("flux-crds/source.toolkit.fluxcd.io_helmrepositories.yaml"),
    ),
    (
        "source.toolkit.fluxcd.io",
        "OCIRepository",
        include_str!("flux-crds/source.toolkit.fluxcd.io_ocirepositories.yaml"),
    ),
];

/// Each file's CRD, parsed on first use (a run reads only the kinds its
/// repository uses).
fn parsed() -> &'static [OnceLock<Option<Node>>] {
    static PARSED: OnceLock<Vec<OnceLock<Option<Node>>>> = OnceLock::new();
    PARSED.get_or_init(|| FILES.iter().map(|_| OnceLock::new()).collect())
}

/// The bundled CRD of a Flux kind.
pub fn crd(group: &str, kind: &str) -> Option<&'static Node> {
    let at = FILES
        .iter()
        .position(|(g, k, _)| *g == group && *k == kind)?;
    parsed()[at]
        .get_or_init(|| {
            crate::yaml::parse_documents(FILES[at].2)
                .ok()?
                .into_iter()
                .find(|d| d.str_at(&["kind"]).as_deref() == Some("CustomResourceDefinition"))
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_crd_parses_and_has_a_schema() {
        for (group, kind, _) in FILES {
            let doc = crd(group, kind).unwrap_or_else(|| panic!("{group}/{kind} does not parse"));
            assert_eq!(doc.str_at(&["spec", "group"]).as_deref(), Some(*group));
            assert_eq!(
                doc.str_at(&["spec", "names", "kind"]).as_deref(),
                Some(*kind)
            );
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
