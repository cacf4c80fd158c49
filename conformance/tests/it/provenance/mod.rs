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
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  interval: 1h\n  chart:\n    spec:\n      chart: {chart}\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n        namespace: flux-system\n{extra}"
    )
}

fn namespace(name: &str) -> String {
    format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n")
}

fn cr(api: &str, kind: &str, ns: &str, name: &str) -> String {
    format!(
        "apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec: {{}}\n"
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
