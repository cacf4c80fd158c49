//! Kinds in discovered tiers: CRDs beside their resources, preinstalled kinds, charts, the crds audit.

use super::*;

#[test]
fn a_crd_and_its_custom_resource_in_one_tier_pass() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("widgets", "flux-system", "./widgets", ""),
    );
    write(
        root,
        "widgets/crd.yaml",
        "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
",
    );
    write(
        root,
        "widgets/widget.yaml",
        "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: default
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
}

#[test]
fn a_kind_nobody_provides_is_unavailable_unless_declared_preinstalled() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("widgets", "flux-system", "./widgets", ""),
    );
    write(
        root,
        "widgets/widget.yaml",
        "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: default
",
    );
    assert_eq!(rules(&run(root)), [("crd-unavailable", "prod", "widgets")]);
    write(
        root,
        "conformance.yaml",
        "\
catalog:
  preinstalled:
    - example.com
",
    );
    assert!(run(root).findings.is_empty());
}

#[test]
fn chart_kinds_need_a_health_gated_dependency_on_the_helmrelease() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "cm", "cert-manager", "jetstack");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!(
            "{}---\n{}",
            ks(
                "cert-manager",
                "flux-system",
                "./cm",
                "  healthChecks:
    - apiVersion: helm.toolkit.fluxcd.io/v2
      kind: HelmRelease
      name: cert-manager
      namespace: cert-manager
"
            ),
            ks(
                "issuers",
                "flux-system",
                "./issuers",
                "  dependsOn:
    - name: cert-manager
"
            ),
        ),
    );
    write(
        root,
        "cm/release.yaml",
        "\
apiVersion: v1
kind: Namespace
metadata:
  name: cert-manager
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: cert-manager
  namespace: cert-manager
spec:
  interval: 1h
  values:
    crds:
      enabled: true
  chart:
    spec:
      chart: cert-manager
      sourceRef:
        kind: HelmRepository
        name: jetstack
",
    );
    write(
        root,
        "issuers/issuer.yaml",
        "\
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: ca
spec:
  selfSigned: {}
",
    );
    // healthChecks names the HelmRelease: gated, so the ClusterIssuer is fine.
    assert!(run(root).findings.is_empty(), "{:#?}", run(root).findings);
    // Without the healthCheck (and wait: false) the issuers race helm-controller.
    let tiers = std::fs::read_to_string(root.join("clusters/prod/tiers.yaml")).unwrap();
    let ungated = tiers.replace(
        "      name: cert-manager
      namespace: cert-manager
",
        "      name: other
      namespace: cert-manager
",
    );
    write(root, "clusters/prod/tiers.yaml", &ungated);
    assert_eq!(rules(&run(root)), [("health-gate", "prod", "issuers")]);
    // In the same tier as the HelmRelease it can never converge.
    std::fs::rename(
        root.join("issuers/issuer.yaml"),
        root.join("cm/issuer.yaml"),
    )
    .unwrap();
    assert_eq!(
        rules(&run(root)),
        [("second-order-crd", "prod", "cert-manager")]
    );
}

#[test]
fn crds_command_prints_the_audit() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/incidents/cdi-storageprofile-same-tier/repo");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["crds", "--wide", "--cluster", "prod", "--repo"])
        .arg(&repo)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    // Without --wide, the same audit fits 100 columns, grouped by tier.
    let narrow = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["crds", "--cluster", "prod", "--repo"])
        .arg(&repo)
        .output()
        .unwrap();
    let narrow = String::from_utf8(narrow.stdout).unwrap();
    let table: Vec<&str> = narrow.split("\n\n").next().unwrap().lines().collect();
    assert!(table.iter().all(|l| l.chars().count() <= 100), "{narrow}");
    let at = table
        .iter()
        .position(|l| l.contains("cdi.kubevirt.io/StorageProfile"))
        .expect("the kind's line");
    assert!(
        table[at].ends_with("deadlock (second-order-crd)"),
        "{narrow}"
    );
    assert!(
        table[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("      "))
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ")
            .contains("cdi-operator after CDI/cdi in platform-config (same tier)"),
        "{narrow}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("platform-config ")
            && l.contains("cdi.kubevirt.io/StorageProfile")
            && l.contains("cdi-operator after CDI/cdi in platform-config (same tier)")
            && l.ends_with("deadlock (second-order-crd)")),
        "{text}"
    );
    assert!(
        text.contains("  platform-config: StorageProfile\n"),
        "{text}"
    );
}
