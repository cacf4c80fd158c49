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

#[test]
fn a_helmfile_that_installs_the_chart_first_makes_its_crs_fine() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    chart_with_its_crs(root);
    let outcome = run(root);
    assert_eq!(errors(&outcome).len(), 1, "{}", all(&outcome)); // same-tier chart
    write(
        root,
        "bootstrap/helmfile.yaml",
        "releases:\n  - name: cilium\n    namespace: kube-system\n    chart: cilium/cilium\n  - name: external-secrets\n    namespace: external-secrets\n    chart: external-secrets/external-secrets\n",
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    // `conformance crds` shows where.
    let session = conformance::session::Session::open(root, None).unwrap();
    let cluster = &session.model.clusters[0];
    let text = conformance::report::crds::render(&session.analysis(cluster));
    assert!(
        text.contains("bootstrap (bootstrap/helmfile.yaml:5): helmfile release external-secrets"),
        "{text}"
    );
    let json = conformance::report::json::render(&outcome, "repo", &[]);
    assert!(
        json["bootstrap"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["file"] == "bootstrap/helmfile.yaml"
                && i["provides"] == "chart external-secrets"),
        "{}",
        json["bootstrap"]
    );
}

#[test]
fn a_helmfile_of_other_charts_excuses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    chart_with_its_crs(root);
    write(
        root,
        "bootstrap/helmfile.yaml",
        "releases:\n  - name: cilium\n    namespace: kube-system\n    chart: cilium/cilium\n",
    );
    let outcome = run(root);
    let errors = errors(&outcome);
    assert_eq!(errors.len(), 1, "{}", all(&outcome));
    assert_eq!(errors[0].rule(), conformance::rules::RuleId::SecondOrderCrd);
}

#[test]
fn crds_only_helmfiles_install_crds_not_namespaces() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "kubernetes/flux");
    write(
        root,
        "kubernetes/flux/apps.yaml",
        &ks("apps", "flux-system", "./kubernetes/apps", ""),
    );
    write(
        root,
        "kubernetes/apps/monitor.yaml",
        &cr("monitoring.coreos.com/v1", "ServiceMonitor", "o11y", "m"),
    );
    write(
        root,
        "bootstrap/helmfile.d/00-crds.yaml",
        "helmDefaults:\n  args: [--include-crds]\nreleases:\n  - name: kube-prometheus-stack\n    namespace: o11y\n    chart: prometheus-community/kube-prometheus-stack\n",
    );
    let outcome = run(root);
    // The CRD is there; the namespace is not.
    assert!(
        outcome
            .findings
            .iter()
            .all(|f| f.rule() != conformance::rules::RuleId::CrdUnavailable),
        "{}",
        all(&outcome)
    );
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::NamespaceMissing),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_script_applying_a_local_crd_kustomization_counts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "kubernetes/flux");
    write(
        root,
        "kubernetes/flux/apps.yaml",
        &ks("apps", "flux-system", "./kubernetes/apps", ""),
    );
    write(
        root,
        "kubernetes/apps/widget.yaml",
        &cr("example.com/v1", "Widget", "default", "w"),
    );
    write(
        root,
        "bootstrap/crds/widgets.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n",
    );
    write(
        root,
        "bootstrap/crds/kustomization.yaml",
        "resources: [widgets.yaml]\n",
    );
    assert_eq!(errors(&run(root)).len(), 1);
    write(
        root,
        "scripts/bootstrap.sh",
        "#!/usr/bin/env bash\nROOT_DIR=\"$(git rev-parse --show-toplevel)\"\nkubectl apply --server-side -k \"${ROOT_DIR}/bootstrap/crds\"\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn a_cni_helmcharts_bootstrap_from_a_taskfile_counts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "kubernetes/flux");
    write(
        root,
        "kubernetes/flux/apps.yaml",
        &ks("network", "flux-system", "./kubernetes/network", ""),
    );
    write(
        root,
        "kubernetes/network/pool.yaml",
        "apiVersion: cilium.io/v2alpha1\nkind: CiliumLoadBalancerIPPool\nmetadata:\n  name: pool\nspec:\n  blocks: [{cidr: 10.0.0.0/24}]\n",
    );
    write(
        root,
        "talos/cni/kustomization.yaml",
        "helmCharts:\n  - name: cilium\n    repo: https://helm.cilium.io\n    version: 1.16.0\n    releaseName: cilium\n    namespace: kube-system\n",
    );
    write(
        root,
        "Taskfile.yaml",
        "version: '3'\nvars:\n  TALOS_DIR: '{{.ROOT_DIR}}/talos'\ntasks:\n  cni:\n    cmds:\n      - kubectl kustomize --enable-helm {{.TALOS_DIR}}/cni | kubectl apply --server-side -f -\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn talos_api_access_and_extra_manifests_count() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "kubernetes/flux");
    write(
        root,
        "kubernetes/flux/apps.yaml",
        &ks("apps", "flux-system", "./kubernetes/apps", ""),
    );
    write(
        root,
        "kubernetes/apps/sa.yaml",
        &cr("talos.dev/v1alpha1", "ServiceAccount", "default", "ops"),
    );
    write(
        root,
        "kubernetes/apps/route.yaml",
        &cr("gateway.networking.k8s.io/v1", "HTTPRoute", "default", "r"),
    );
    assert_eq!(errors(&run(root)).len(), 2);
    write(
        root,
        "talos/controlplane.yaml.j2",
        "machine:\n  features:\n    kubernetesTalosAPIAccess:\n      enabled: true\n      allowedRoles: [os:reader]\ncluster:\n  extraManifests:\n    - https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.3.0/experimental-install.yaml\n  clusterName: {{ cluster_name }}\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn k3s_server_manifests_and_k3s_kinds_count() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "kubernetes/flux");
    write(
        root,
        "kubernetes/flux/apps.yaml",
        &ks("apps", "flux-system", "./kubernetes/apps", ""),
    );
    write(
        root,
        "kubernetes/apps/config.yaml",
        "apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata:\n  name: traefik\n  namespace: kube-system\nspec:\n  valuesContent: ''\n",
    );
    write(
        root,
        "kubernetes/apps/monitor.yaml",
        &cr("monitoring.coreos.com/v1", "PodMonitor", "default", "m"),
    );
    write(
        root,
        "ansible/inventory/group_vars/kubernetes/k3s.yml",
        "k3s_release_version: v1.30.0+k3s1\nk3s_server_manifests_urls:\n  - url: https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.65.1/example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml\n    filename: podmonitors.yaml\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

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
                "  dependsOn:\n    - name: longhorn\n",
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
            "  install:\n    crds: Skip\n",
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
                "  dependsOn:\n    - name: cert-manager\n",
            ),
        ]
        .join("---\n"),
    );
    write(root, "cm/ns.yaml", &namespace("cert-manager"));
    write(
        root,
        "cm/values.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-values\n  namespace: cert-manager\ndata:\n  values.yaml: |\n    crds:\n      enabled: true\n",
    );
    write(
        root,
        "cm/hr.yaml",
        &hr(
            "cert-manager",
            "cert-manager",
            "cert-manager",
            "  valuesFrom:\n    - kind: ConfigMap\n      name: cm-values\n",
        ),
    );
    write(
        root,
        "issuers/issuer.yaml",
        "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: ca\nspec:\n  selfSigned: {}\n",
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
                "  dependsOn:\n    - name: db\n",
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
            "  targetNamespace: database\n  install:\n    createNamespace: true\n",
        ),
    );
    write(
        root,
        "db-config/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: database\ndata: {}\n",
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
                "  dependsOn:\n    - name: acme\n",
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
fn a_crossplane_provider_package_provides_its_groups_once_ordered() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let exprs = "  wait: true\n  healthCheckExprs:\n    - apiVersion: pkg.crossplane.io/v1\n      kind: Provider\n      current: status.conditions.filter(c, c.type == 'Healthy').all(c, c.status == 'True')\n";
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("providers", "flux-system", "./providers", exprs),
            ks(
                "buckets",
                "flux-system",
                "./buckets",
                "  dependsOn:\n    - name: providers\n",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "conformance.yaml",
        "catalog:\n  preinstalled: [pkg.crossplane.io]\n",
    );
    write(
        root,
        "providers/s3.yaml",
        "apiVersion: pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-aws-s3\nspec:\n  package: xpkg.upbound.io/upbound/provider-aws-s3:v1.21.0\n",
    );
    write(
        root,
        "buckets/bucket.yaml",
        "apiVersion: s3.aws.upbound.io/v1beta1\nkind: Bucket\nmetadata:\n  name: logs\nspec:\n  forProvider: {region: eu-west-1}\n",
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
                "  dependsOn:\n    - name: providers\n",
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
                "  dependsOn:\n    - name: crds\n",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "crds/es.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: externalsecrets.external-secrets.io\nspec:\n  group: external-secrets.io\n  names: {kind: ExternalSecret, plural: externalsecrets}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n",
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
fn a_substitute_from_secret_an_external_secret_produces_is_ordered_by_its_tier() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "conformance.yaml",
        "catalog:\n  preinstalled: [external-secrets.io]\n",
    );
    let vars =
        "  postBuild:\n    substituteFrom:\n      - kind: Secret\n        name: cluster-secrets\n";
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks(
                "secrets",
                "flux-system",
                "./secrets",
                "  dependsOn:\n    - name: apps\n",
            ),
            ks("apps", "flux-system", "./apps", vars),
        ]
        .join("---\n"),
    );
    write(
        root,
        "secrets/es.yaml",
        "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: cluster-secrets-source\n  namespace: flux-system\nspec:\n  target:\n    name: cluster-secrets\n",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let errors = errors(&outcome);
    assert_eq!(errors.len(), 1, "{}", all(&outcome));
    assert_eq!(
        errors[0].rule(),
        conformance::rules::RuleId::UnresolvedReference
    );
    assert!(
        errors[0]
            .message()
            .contains("Secret/flux-system/cluster-secrets"),
        "{}",
        errors[0].message()
    );
    assert!(
        errors[0].message().contains("can only apply after apps"),
        "{}",
        errors[0].message()
    );
}

#[test]
fn a_helmrelease_that_depends_on_a_release_that_never_installs_provides_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
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
                "  dependsOn:\n    - name: es\n",
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
            "  dependsOn:\n    - name: vault\n      namespace: es\n",
        ),
    );
    write(
        root,
        "users/x.yaml",
        &cr("external-secrets.io/v1", "ExternalSecret", "es2", "x"),
    );
    let outcome = run(root);
    let errors = errors(&outcome);
    assert!(
        errors
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::CrdUnavailable
                && f.kustomization() == "users"),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_substitute_from_object_nothing_creates_fails_the_tier() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let vars =
        "  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-vars\n";
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", vars),
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let errors = errors(&outcome);
    assert_eq!(errors.len(), 1, "{}", all(&outcome));
    assert_eq!(
        errors[0].rule(),
        conformance::rules::RuleId::UnresolvedReference
    );
    assert!(
        errors[0]
            .message()
            .contains("ConfigMap/flux-system/cluster-vars"),
        "{}",
        errors[0].message()
    );
    assert!(
        errors[0].fix().contains("catalog.preinstalled_objects"),
        "{}",
        errors[0].fix()
    );
    // Created by Terraform: fine.
    write(
        root,
        "terraform/flux.tf",
        "resource \"kubernetes_config_map\" \"vars\" {\n  metadata {\n    name      = \"cluster-vars\"\n    namespace = \"flux-system\"\n  }\n}\n",
    );
    assert!(run(root).findings.is_empty(), "{}", all(&run(root)));
    std::fs::remove_file(root.join("terraform/flux.tf")).unwrap();
    // Declared.
    write(
        root,
        "conformance.yaml",
        "catalog:\n  preinstalled_objects: [ConfigMap/flux-system/cluster-vars]\n",
    );
    assert!(run(root).findings.is_empty(), "{}", all(&run(root)));
    std::fs::remove_file(root.join("conformance.yaml")).unwrap();
    // Applied by a script.
    write(
        root,
        "bootstrap/vars.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-vars\n  namespace: flux-system\ndata: {}\n",
    );
    write(
        root,
        "bootstrap/up.sh",
        "kubectl apply -f \"$(dirname \"$0\")/vars.yaml\"\n",
    );
    assert!(run(root).findings.is_empty(), "{}", all(&run(root)));
    std::fs::remove_file(root.join("bootstrap/up.sh")).unwrap();
    // Optional: silent.
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks(
            "apps",
            "flux-system",
            "./apps",
            &format!("{vars}        optional: true\n"),
        ),
    );
    assert!(run(root).findings.is_empty(), "{}", all(&run(root)));
}

#[test]
fn an_azure_flux_configuration_creates_its_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(
        root,
        "apps/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: cluster-config\ndata: {}\n",
    );
    // Nothing creates cluster-config: a true finding.
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::NamespaceMissing),
        "{}",
        all(&outcome)
    );
    // AKS's microsoft.flux extension creates the configuration's namespace.
    write(
        root,
        "infra/flux.bicep",
        "resource fluxConfig 'Microsoft.KubernetesConfiguration/fluxConfigurations@2022-03-01' = {\n  name: 'cluster-config'\n  scope: aks\n  properties: {\n    scope: 'cluster'\n    namespace: 'cluster-config'\n  }\n}\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
    // Computed namespaces excuse nothing.
    write(
        root,
        "infra/flux.bicep",
        "resource fluxConfig 'Microsoft.KubernetesConfiguration/fluxConfigurations@2022-03-01' = {\n  name: 'cluster-config'\n  properties: {\n    namespace: ns\n  }\n}\n",
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::NamespaceMissing),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_talos_custom_cni_from_the_repository_installs_its_chart() {
    // Talos applies the CNI manifests at bootstrap; this repository renders
    // them from the chart its Flux HelmRelease later adopts (Helm's
    // ownership annotations), so Cilium's kinds exist before Flux.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "kubernetes/flux");
    helm_repository(root, "kubernetes/flux", "flux-system", "charts");
    write(
        root,
        "kubernetes/flux/apps.yaml",
        &ks("cilium", "flux-system", "./kubernetes/cilium", ""),
    );
    write(
        root,
        "kubernetes/cilium/hr.yaml",
        &hr("cilium", "kube-system", "cilium", ""),
    );
    write(
        root,
        "kubernetes/cilium/pool.yaml",
        "apiVersion: cilium.io/v2alpha1\nkind: CiliumLoadBalancerIPPool\nmetadata:\n  name: pool\nspec: {}\n",
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::SecondOrderCrd),
        "{}",
        all(&outcome)
    );
    write(
        root,
        "talos/integrations/cni/cilium.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cilium-operator\n  namespace: kube-system\n  annotations:\n    meta.helm.sh/release-name: cilium\n    meta.helm.sh/release-namespace: kube-system\nspec: {}\n",
    );
    write(
        root,
        "talos/controlplane.yaml",
        "cluster:\n  network:\n    cni:\n      name: custom\n      urls:\n        - https://raw.githubusercontent.com/example/fleet/main/talos/integrations/cni/cilium.yaml\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
    // A URL to a file the repository does not hold excuses nothing.
    write(
        root,
        "talos/controlplane.yaml",
        "cluster:\n  network:\n    cni:\n      name: custom\n      urls:\n        - https://raw.githubusercontent.com/example/fleet/main/talos/elsewhere/cilium.yaml\n",
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::SecondOrderCrd),
        "{}",
        all(&outcome)
    );
}

#[test]
fn an_openshift_cluster_serves_its_apis_and_olm_installs_subscriptions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("openshift-config", "flux-system", "./config", ""),
            ks("metallb", "flux-system", "./metallb", "  wait: true\n"),
            ks(
                "metallb-config",
                "flux-system",
                "./metallb-config",
                "  dependsOn:\n    - name: metallb\n",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "config/ca.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: custom-ca\n  namespace: openshift-config\ndata: {}\n",
    );
    write(
        root,
        "metallb/subscription.yaml",
        "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: metallb-operator-sub\n  namespace: openshift-operators\nspec:\n  channel: stable\n  name: metallb-operator\n  source: community-operators\n  sourceNamespace: openshift-marketplace\n",
    );
    write(
        root,
        "metallb-config/pool.yaml",
        "apiVersion: metallb.io/v1beta1\nkind: IPAddressPool\nmetadata:\n  name: pool\n  namespace: openshift-operators\nspec:\n  addresses: [10.0.0.0/28]\n",
    );
    // Nothing shows OpenShift: its namespaces and OLM's kinds are missing.
    let outcome = run(root);
    let rules: Vec<&str> = errors(&outcome).iter().map(|f| f.rule().as_str()).collect();
    assert!(rules.contains(&"namespace-missing"), "{}", all(&outcome));
    assert!(rules.contains(&"crd-unavailable"), "{}", all(&outcome));
    // The repository configures the cluster through config.openshift.io.
    write(
        root,
        "config/oauth.yaml",
        "apiVersion: config.openshift.io/v1\nkind: OAuth\nmetadata:\n  name: cluster\nspec: {}\n",
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    // OLM creates metallb.io once the Subscription is processed; the
    // Subscription's Ready (there is none kstatus reads) does not say so.
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::HealthGate
                && f.message().contains("metallb.io")),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_substitute_from_configmap_the_bootstrap_applies_first_is_there_even_if_a_tier_renders_it() {
    // cluster-template layout: the bootstrap script applies cluster-settings
    // (a bash array looped over, per cluster argument); the tier that
    // substitutes from it also renders it, to manage it afterwards.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "kubernetes/main/flux");
    write(
        root,
        "kubernetes/main/flux/apps.yaml",
        &ks(
            "cluster-apps",
            "flux-system",
            "./kubernetes/main/apps",
            "  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-settings\n",
        ),
    );
    write(
        root,
        "kubernetes/main/apps/kustomization.yaml",
        "resources:\n  - ../vars/cluster-settings.yaml\n  - cm.yaml\n",
    );
    write(
        root,
        "kubernetes/main/vars/cluster-settings.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  ZONE: example.com\n",
    );
    write(
        root,
        "kubernetes/main/apps/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  host: app.${ZONE}\n",
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::UnresolvedReference),
        "{}",
        all(&outcome)
    );
    write(
        root,
        "scripts/bootstrap-apps.sh",
        "#!/usr/bin/env bash\nexport ROOT_DIR=\"$(git rev-parse --show-toplevel)\"\nreadonly CLUSTER=\"${1:?}\"\nlocal -r configmaps=(\n    \"${ROOT_DIR}/kubernetes/${CLUSTER}/vars/cluster-settings.yaml\"\n)\nfor configmap in \"${configmaps[@]}\"; do\n    kubectl --context ${CLUSTER} --namespace flux-system apply --server-side --filename \"${configmap}\"\ndone\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}
