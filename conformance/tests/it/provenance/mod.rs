//! Provenance v2 (issue 11): what the repository installs before Flux,
//! HelmRelease CRD policy, charts and operators the catalog does not know,
//! Crossplane packages, the best provider, and objects controllers produce.
//! Each test writes the smallest repository that shows one behaviour.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;

use conformance::rules::Severity;

use crate::support::*;

fn hr(name: &str, ns: &str, chart: &str, extra: &str) -> String {
    format!(
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {name}
  namespace: {ns}
spec:
  interval: 1h
  chart:
    spec:
      chart: {chart}
      sourceRef:
        kind: HelmRepository
        name: charts
        namespace: flux-system
{extra}"
    )
}

fn namespace(name: &str) -> String {
    format!(
        "\
apiVersion: v1
kind: Namespace
metadata:
  name: {name}
"
    )
}

fn cr(api: &str, kind: &str, ns: &str, name: &str) -> String {
    format!(
        "\
apiVersion: {api}
kind: {kind}
metadata:
  name: {name}
  namespace: {ns}
spec: {{}}
"
    )
}

fn errors(outcome: &conformance::check::Outcome) -> Vec<&conformance::rules::Finding> {
    outcome.findings.iter().filter(|f| f.is_error()).collect()
}

/// One tier `external-secrets` with the chart's HelmRelease and an
/// ExternalSecret next to it (the layout helmfile bootstraps make work).
fn chart_with_its_crs(root: &Path) {
    sync(root, "kubernetes/flux");
    helm_repository(root, "kubernetes/flux", "flux-system", "charts");
    write(
        root,
        "kubernetes/flux/apps.yaml",
        &ks(
            "external-secrets",
            "flux-system",
            "./kubernetes/apps/external-secrets",
            "",
        ),
    );
    let app = "kubernetes/apps/external-secrets";
    write(
        root,
        &format!("{app}/ns.yaml"),
        &namespace("external-secrets"),
    );
    write(
        root,
        &format!("{app}/hr.yaml"),
        &hr(
            "external-secrets",
            "external-secrets",
            "external-secrets",
            "",
        ),
    );
    write(
        root,
        &format!("{app}/store.yaml"),
        &cr(
            "external-secrets.io/v1",
            "ExternalSecret",
            "external-secrets",
            "creds",
        ),
    );
}

mod bootstrap;
mod charts;
mod objects;
