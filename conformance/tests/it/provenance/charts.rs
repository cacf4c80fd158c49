//! Charts as providers of kinds and namespaces: CRD switches, createNamespace, probable charts, Crossplane packages, ordering.

use super::*;

#[test]
fn install_crds_skip_on_a_crds_directory_chart_installs_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "charts");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("longhorn", "flux-system", "./longhorn", "  wait: true\n"),
            ks(
                "volumes",
                "flux-system",
                "./volumes",
                "  dependsOn:
    - name: longhorn
",
            ),
        ]
        .join("---\n"),
    );
    write(root, "longhorn/ns.yaml", &namespace("storage"));
    // kube-prometheus-stack ships its CRDs in crds/: Skip installs none.
    write(
        root,
        "longhorn/hr.yaml",
        &hr(
            "kps",
            "storage",
            "kube-prometheus-stack",
            "  install:
    crds: Skip
",
        ),
    );
    write(
        root,
        "volumes/monitor.yaml",
        &cr("monitoring.coreos.com/v1", "ServiceMonitor", "storage", "m"),
    );
    let outcome = run(root);
    let errors = errors(&outcome);
    assert_eq!(errors.len(), 1, "{}", all(&outcome));
    assert!(
        errors[0].message().contains("nothing provides it"),
        "{}",
        errors[0].message()
    );
    // With the default policy it is installed.
    write(
        root,
        "longhorn/hr.yaml",
        &hr("kps", "storage", "kube-prometheus-stack", ""),
    );
    assert!(run(root).findings.is_empty(), "{}", all(&run(root)));
}

#[test]
fn template_crds_follow_the_values_that_gate_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "charts");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("cert-manager", "flux-system", "./cm", "  wait: true\n"),
            ks(
                "issuers",
                "flux-system",
                "./issuers",
                "  dependsOn:
    - name: cert-manager
",
            ),
        ]
        .join("---\n"),
    );
    write(root, "cm/ns.yaml", &namespace("cert-manager"));
    write(
        root,
        "cm/values.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-values
  namespace: cert-manager
data:
  values.yaml: |
    crds:
      enabled: true
",
    );
    write(
        root,
        "cm/hr.yaml",
        &hr(
            "cert-manager",
            "cert-manager",
            "cert-manager",
            "  valuesFrom:
    - kind: ConfigMap
      name: cm-values
",
        ),
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
    assert!(run(root).findings.is_empty(), "{}", all(&run(root)));
    // crds.enabled defaults to false: without the values, no CRDs.
    write(
        root,
        "cm/hr.yaml",
        &hr("cert-manager", "cert-manager", "cert-manager", ""),
    );
    assert_eq!(errors(&run(root)).len(), 1, "{}", all(&run(root)));
}

#[test]
fn create_namespace_provides_the_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "charts");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("db", "flux-system", "./db", "  wait: true\n"),
            ks(
                "db-config",
                "flux-system",
                "./db-config",
                "  dependsOn:
    - name: db
",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "db/hr.yaml",
        &hr(
            "postgres",
            "flux-system",
            "postgresql",
            "  targetNamespace: database
  install:
    createNamespace: true
",
        ),
    );
    write(
        root,
        "db-config/cm.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: database
data: {}
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn an_uncatalogued_chart_that_matches_the_group_is_probable_never_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "charts");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("acme", "flux-system", "./acme", "  wait: true\n"),
            ks(
                "gizmos",
                "flux-system",
                "./gizmos",
                "  dependsOn:
    - name: acme
",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "acme/hr.yaml",
        &hr("acme-operator", "flux-system", "acme-operator", ""),
    );
    write(
        root,
        "gizmos/g.yaml",
        &cr("gizmos.acme.example.com/v1", "Gizmo", "default", "g"),
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    let f = &outcome.findings[0];
    assert_eq!(
        (f.rule(), f.severity()),
        (
            conformance::rules::RuleId::CrdUnavailable,
            Severity::Warning
        )
    );
    assert!(
        f.message().contains("chart acme-operator"),
        "{}",
        f.message()
    );
    assert!(
        f.fix().contains(
            "catalog.charts: [{chart: acme-operator, groups: [gizmos.acme.example.com]}]"
        ),
        "{}",
        f.fix()
    );
}

#[test]
fn a_same_tier_chart_from_the_groups_organisation_is_its_probable_provider() {
    // A generically named chart (`kubernetes-operator`) from the GitHub
    // organisation named after the group's domain (`acmeio` for
    // `acme.io`), beside resources of that group: the same-tier deadlock
    // it probably is, with its fix, not "nothing provides acme.io".
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/helmrepository-flux-system-charts.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: https://acmeio.github.io/helms\n",
    );
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks("controllers", "flux-system", "./controllers", ""),
    );
    write(
        root,
        "controllers/hr.yaml",
        &hr("acme-operator", "flux-system", "kubernetes-operator", ""),
    );
    write(
        root,
        "controllers/peer.yaml",
        &cr("acme.io/v1", "Peer", "default", "p"),
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    let f = outcome
        .findings
        .iter()
        .find(|f| f.rule() == conformance::rules::RuleId::SecondOrderCrd)
        .unwrap_or_else(|| panic!("{}", all(&outcome)));
    assert!(
        f.message().contains("HelmRelease/acme-operator")
            && f.message().contains("chart kubernetes-operator"),
        "{}",
        f.message()
    );
}

#[test]
fn a_crossplane_provider_package_provides_its_groups_once_ordered() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let exprs = "  wait: true
  healthCheckExprs:
    - apiVersion: pkg.crossplane.io/v1
      kind: Provider
      current: status.conditions.filter(c, c.type == 'Healthy').all(c, c.status == 'True')
";
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("providers", "flux-system", "./providers", exprs),
            ks(
                "buckets",
                "flux-system",
                "./buckets",
                "  dependsOn:
    - name: providers
",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "conformance.yaml",
        "\
catalog:
  preinstalled: [pkg.crossplane.io]
",
    );
    write(
        root,
        "providers/s3.yaml",
        "\
apiVersion: pkg.crossplane.io/v1
kind: Provider
metadata:
  name: provider-aws-s3
spec:
  package: xpkg.upbound.io/upbound/provider-aws-s3:v1.21.0
",
    );
    write(
        root,
        "buckets/bucket.yaml",
        "\
apiVersion: s3.aws.upbound.io/v1beta1
kind: Bucket
metadata:
  name: logs
spec:
  forProvider: {region: eu-west-1}
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
    // Unordered, it is a race, and wait: true alone does not gate it.
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("providers", "flux-system", "./providers", "  wait: true\n"),
            ks(
                "buckets",
                "flux-system",
                "./buckets",
                "  dependsOn:
    - name: providers
",
            ),
        ]
        .join("---\n"),
    );
    let outcome = run(root);
    assert_eq!(outcome.findings.len(), 1, "{}", all(&outcome));
    assert_eq!(
        outcome.findings[0].rule(),
        conformance::rules::RuleId::HealthGate
    );
}

#[test]
fn the_best_ordered_provider_wins() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "charts");
    // The chart in the consumer's own tier would be a deadlock; the CRD
    // an ancestor applies makes the kind available.
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("crds", "flux-system", "./crds", ""),
            ks(
                "es",
                "flux-system",
                "./es",
                "  dependsOn:
    - name: crds
",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "crds/es.yaml",
        "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: externalsecrets.external-secrets.io
spec:
  group: external-secrets.io
  names: {kind: ExternalSecret, plural: externalsecrets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
",
    );
    write(root, "es/ns.yaml", &namespace("es"));
    write(
        root,
        "es/hr.yaml",
        &hr("external-secrets", "es", "external-secrets", ""),
    );
    write(
        root,
        "es/x.yaml",
        &cr("external-secrets.io/v1", "ExternalSecret", "es", "x"),
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn a_helmrelease_that_depends_on_a_release_that_never_installs_provides_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "charts");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("base", "flux-system", "./base", "  suspend: true\n"),
            ks("es", "flux-system", "./es", "  wait: true\n"),
            ks(
                "users",
                "flux-system",
                "./users",
                "  dependsOn:
    - name: es
",
            ),
        ]
        .join("---\n"),
    );
    write(root, "base/ns.yaml", &namespace("es"));
    write(root, "base/hr.yaml", &hr("vault", "es", "vault", ""));
    write(root, "es/ns.yaml", &namespace("es2"));
    write(
        root,
        "es/hr.yaml",
        &hr(
            "external-secrets",
            "es2",
            "external-secrets",
            "  dependsOn:
    - name: vault
      namespace: es
",
        ),
    );
    write(
        root,
        "users/x.yaml",
        &cr("external-secrets.io/v1", "ExternalSecret", "es2", "x"),
    );
    // external-secrets waits for vault, which never installs (base is
    // suspended): es, whose Ready waits for its release, is never Ready,
    // so users never starts. The root is reported, at es; users's missing
    // kinds follow from it.
    let outcome = run(root);
    let errors = errors(&outcome);
    assert!(
        errors.iter().any(
            |f| f.rule() == conformance::rules::RuleId::UnresolvedReference
                && f.kustomization() == "es"
                && f.message()
                    .contains("HelmRelease/es/vault (spec.dependsOn)")
                && f.message().contains("suspended")
        ),
        "{}",
        all(&outcome)
    );
    assert!(
        !errors
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::CrdUnavailable
                && f.kustomization() == "users"),
        "{}",
        all(&outcome)
    );
}
