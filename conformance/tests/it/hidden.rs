//! Issue 49: deadlocks the model did not see, and findings whose severity
//! did not match what breaks. Each test writes the pattern as a small
//! repository of its own (never a real repository's files).

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;

use conformance::rules::{RuleId, Severity};

use crate::support::*;

fn errors(outcome: &conformance::check::Outcome) -> Vec<&conformance::rules::Finding> {
    outcome
        .findings
        .iter()
        .filter(|f| f.severity() == Severity::Error)
        .collect()
}

/// Tier `gateway` (./gateway) applies a Gateway and a Flux Kustomization
/// `gateway-api-crds` of another repository (not read) that applies its
/// CRDs; tier `apps` depends on `gateway` and uses an HTTPRoute.
fn nested_provider(root: &Path) {
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("gateway", "flux-system", "./gateway", "  wait: true\n"),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:\n    - name: gateway\n",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "gateway/crds.yaml",
        &format!(
            "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: gateway-api
  namespace: flux-system
spec:
  interval: 1h
  url: https://github.com/kubernetes-sigs/gateway-api
  ref:
    tag: v1.2.0
---
{}",
            ks_from(
                "gateway-api-crds",
                "./config/crd/standard",
                "GitRepository",
                "gateway-api"
            )
        ),
    );
    write(
        root,
        "gateway/gateway.yaml",
        "\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: main
  namespace: default
spec:
  gatewayClassName: envoy
",
    );
    write(
        root,
        "apps/route.yaml",
        "\
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: app
  namespace: default
spec:
  parentRefs:
    - name: main
",
    );
}

#[test]
fn a_provider_the_consumer_applies_itself_is_never_a_race() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    nested_provider(root);
    let outcome = run(root);
    // Nothing names a provider of the Gateway's kind (gateway-api-crds is
    // another repository, not read, and its name says nothing certain):
    // the kind may come from outside, so a boundary warning, not an error.
    // But never a race with the child gateway applies itself (it exists
    // only after gateway's dry-run), and the fix says how to order it.
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    assert!(
        !outcome
            .findings
            .iter()
            .any(|f| f.rule() == RuleId::ColdStartRace),
        "{}",
        all(&outcome)
    );
    let gateway: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule() == RuleId::CrdUnavailable && f.kustomization() == "gateway")
        .collect();
    assert_eq!(gateway.len(), 1, "{}", all(&outcome));
    assert!(gateway[0].is_boundary(), "{}", all(&outcome));
    assert!(
        gateway[0].fix().contains("gateway-api-crds") && gateway[0].fix().contains("dependsOn"),
        "{}",
        gateway[0].fix()
    );
}

#[test]
fn a_nested_provider_ordered_outside_the_consumer_is_fine() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    nested_provider(root);
    // The fix the finding gives: the CRDs' Kustomization beside gateway,
    // gateway depending on it.
    let crds = std::fs::read_to_string(root.join("gateway/crds.yaml")).unwrap();
    std::fs::remove_file(root.join("gateway/crds.yaml")).unwrap();
    write(root, "clusters/prod/crds.yaml", &crds);
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks(
                "gateway",
                "flux-system",
                "./gateway",
                "  wait: true\n  dependsOn:\n    - name: gateway-api-crds\n",
            ),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:\n    - name: gateway\n",
            ),
        ]
        .join("---\n"),
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
}

#[test]
fn a_nested_provider_beside_another_unread_repository_is_not_certain() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    nested_provider(root);
    // The cluster also syncs another repository this run does not read,
    // which may install the CRDs before gateway: not certain.
    write(
        root,
        "clusters/prod/platform.yaml",
        &format!(
            "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: platform
  namespace: flux-system
spec:
  interval: 1h
  url: https://github.com/example/platform
  ref:
    branch: main
---
{}",
            ks_from("platform", "./", "GitRepository", "platform")
        ),
    );
    let outcome = run(root);
    // Nothing certain: the other repository may provide the kind before
    // gateway's retries give up (a possible race, a warning).
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.kustomization() == "gateway" && f.severity() == Severity::Warning),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_secret_an_external_secret_makes_for_its_own_tier_deadlocks() {
    // Every tier reads cluster-secrets before it builds (a patch of the
    // root adds the substituteFrom); only an ExternalSecret in `store`
    // makes it, and `store` needs it too.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "conformance.yaml",
        "catalog:\n  preinstalled: [external-secrets.io]\n",
    );
    write(
        root,
        "clusters/prod/kustomization.yaml",
        "\
resources:
  - flux-system/gotk-sync.yaml
  - tiers.yaml
patches:
  - target:
      kind: Kustomization
      group: kustomize.toolkit.fluxcd.io
      name: store|apps
    patch: |
      - op: add
        path: /spec/postBuild
        value:
          substituteFrom:
            - kind: Secret
              name: cluster-secrets
",
    );
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("store", "flux-system", "./store", "  wait: true\n"),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:\n    - name: store\n",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "store/es.yaml",
        "\
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: cluster-secrets
  namespace: flux-system
spec:
  secretStoreRef:
    kind: ClusterSecretStore
    name: onepassword
  target:
    name: cluster-secrets
",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let errors = errors(&outcome);
    let store: Vec<_> = errors
        .iter()
        .filter(|f| f.kustomization() == "store")
        .collect();
    assert_eq!(store.len(), 1, "{}", all(&outcome));
    assert!(
        store[0]
            .message()
            .contains("only its own output defines it"),
        "{}",
        store[0].message()
    );
    // apps follows from it.
    assert!(
        errors
            .iter()
            .filter(|f| f.kustomization() == "apps")
            .all(|f| f.caused_by().is_some()),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_crd_health_check_is_ordering() {
    // `operators` installs a chart the catalog does not know; `crds-ready`
    // waits for its CRD with a health check; `config` depends on it.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "charts");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("crds", "flux-system", "./crds", ""),
            ks(
                "crds-ready",
                "flux-system",
                "./empty",
                "  healthChecks:
    - apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      name: widgets.example.com
",
            ),
            ks(
                "config",
                "flux-system",
                "./config",
                "  dependsOn:\n    - name: crds-ready\n",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "crds/crd.yaml",
        "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
",
    );
    write(root, "empty/cm.yaml", &configmap("marker"));
    write(
        root,
        "config/widget.yaml",
        "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: default
",
    );
    let outcome = run(root);
    assert!(
        !outcome
            .findings
            .iter()
            .any(|f| f.rule() == RuleId::ColdStartRace),
        "{}",
        all(&outcome)
    );
    // Without the health check's tier, the same Widget races the CRD.
    let text = std::fs::read_to_string(root.join("clusters/prod/tiers.yaml")).unwrap();
    write(
        root,
        "clusters/prod/tiers.yaml",
        &text.replace("    - name: crds-ready\n", "    - name: nothing-yet\n"),
    );
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == RuleId::ColdStartRace),
        "{}",
        all(&outcome)
    );
}

#[test]
fn the_network_plugin_creates_its_namespaces_before_flux() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "cilium");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks("network", "flux-system", "./network", ""),
    );
    write(
        root,
        "network/cilium.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: cilium
  namespace: kube-system
spec:
  interval: 1h
  chart:
    spec:
      chart: cilium
      sourceRef:
        kind: HelmRepository
        name: cilium
        namespace: flux-system
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: default-deny
  namespace: cilium-secrets
spec:
  endpointSelector: {}
---
apiVersion: cilium.io/v2alpha1
kind: CiliumLoadBalancerIPPool
metadata:
  name: pool
spec:
  blocks:
    - cidr: 10.0.0.0/24
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
    // Not a network plugin: a namespace nothing creates stays an error.
    let text = std::fs::read_to_string(root.join("network/cilium.yaml")).unwrap();
    write(
        root,
        "network/cilium.yaml",
        &text.replace("namespace: cilium-secrets", "namespace: nobody-makes-it"),
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == RuleId::NamespaceMissing),
        "{}",
        all(&outcome)
    );
}

#[test]
fn identical_copies_are_a_warning_different_ones_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks(
                "a",
                "flux-system",
                "./a",
                "  commonMetadata:\n    labels:\n      team: a\n",
            ),
            ks("b", "flux-system", "./b", ""),
        ]
        .join("---\n"),
    );
    write(root, "a/cm.yaml", &configmap("shared"));
    write(root, "b/cm.yaml", &configmap("shared"));
    let outcome = run(root);
    let dup: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule() == RuleId::DuplicateObject)
        .collect();
    assert_eq!(dup.len(), 1, "{}", all(&outcome));
    assert_eq!(dup[0].severity(), Severity::Warning, "{}", all(&outcome));
    write(
        root,
        "b/cm.yaml",
        &configmap("shared").replace("a: b", "a: c"),
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == RuleId::DuplicateObject),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_label_value_that_is_not_a_string_is_a_warning_naming_set_owner_labels() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(
        root,
        "apps/cm.yaml",
        &configmap("a").replace(
            "  namespace: default\n",
            "  namespace: default\n  labels:\n    enabled: true\n",
        ),
    );
    let outcome = run(root);
    let f: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule() == RuleId::SchemaViolation)
        .collect();
    assert_eq!(f.len(), 1, "{}", all(&outcome));
    assert_eq!(f[0].severity(), Severity::Warning);
    assert!(f[0].why().contains("SetOwnerLabels"), "{}", f[0].why());
}

#[test]
fn a_remote_base_is_a_risk_unless_the_team_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(
        root,
        "apps/kustomization.yaml",
        "\
resources:
  - cm.yaml
  - github.com/kubernetes-csi/external-snapshotter/client/config/crd?ref=v8.2.0
",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let remote: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule() == RuleId::RemoteBase)
        .collect();
    assert_eq!(remote.len(), 1, "{}", all(&outcome));
    assert_eq!(remote[0].severity(), Severity::Warning);
    assert!(
        remote[0].why().contains("clones the repository"),
        "{}",
        remote[0].why()
    );
    write(
        root,
        "conformance.yaml",
        "severity:\n  remote-base: error\n",
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == RuleId::RemoteBase),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_flux_range_within_a_pinned_operator_artifact_is_not_known() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks(
            "apps",
            "flux-system",
            "./apps",
            "  postBuild:\n    substitute:\n      A: b\n",
        ),
    );
    write(
        root,
        "clusters/prod/instance.yaml",
        "\
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: 2.x
    registry: ghcr.io/fluxcd
    artifact: oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:v0.20.0
",
    );
    write(
        root,
        "apps/cm.yaml",
        &configmap("a").replace("a: b", "a: ${UNDEFINED_ONE}"),
    );
    let outcome = run(root);
    let hazard: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule() == RuleId::SubstitutionHazard)
        .collect();
    assert_eq!(hazard.len(), 1, "{}", all(&outcome));
    assert_eq!(hazard[0].severity(), Severity::Warning, "{}", all(&outcome));
    assert!(hazard[0].fix().contains("flux:"), "{}", hazard[0].fix());
    // The artifact on `latest`: the range is the newest Flux, strict.
    let text = std::fs::read_to_string(root.join("clusters/prod/instance.yaml")).unwrap();
    write(
        root,
        "clusters/prod/instance.yaml",
        &text.replace(":v0.20.0", ":latest"),
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == RuleId::SubstitutionHazard),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_provider_matched_by_name_that_the_consumer_applies_is_a_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks("platform", "flux-system", "./platform", ""),
    );
    write(
        root,
        "platform/acme.yaml",
        &format!(
            "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: acme
  namespace: flux-system
spec:
  interval: 1h
  url: https://github.com/acme/operator
  ref:
    tag: v1.0.0
---
{}
---
apiVersion: acme.example.com/v1
kind: Widget
metadata:
  name: w
  namespace: default
",
            ks_from("acme-crds", "./config/crd", "GitRepository", "acme")
        ),
    );
    let outcome = run(root);
    // The Widget's deadlock (and the child's own source, which the
    // parent applies: a need of its own, unmet until the child moves with
    // its source).
    let errors: Vec<_> = errors(&outcome)
        .into_iter()
        .filter(|f| f.rule() == RuleId::CrdUnavailable)
        .collect();
    assert_eq!(errors.len(), 1, "{}", all(&outcome));
    assert!(
        errors[0].message().contains("acme-crds"),
        "{}",
        errors[0].message()
    );
    assert!(errors[0].fix().contains("dependsOn"), "{}", errors[0].fix());
}

#[test]
fn clusterctl_init_installs_cluster_api_before_flux() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/mgmt");
    write(
        root,
        "clusters/mgmt/tiers.yaml",
        &ks("clusters", "flux-system", "./workload", ""),
    );
    write(
        root,
        "workload/cluster.yaml",
        "\
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: child
  namespace: default
spec:
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: DockerCluster
    name: child
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerCluster
metadata:
  name: child
  namespace: default
",
    );
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == RuleId::CrdUnavailable),
        "{}",
        all(&outcome)
    );
    write(
        root,
        "README.md",
        "# Management cluster\n\n```shell\nkind create cluster\nclusterctl init --infrastructure docker\n```\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn sveltos_profiles_beside_their_release_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/hub");
    helm_repository(root, "clusters/hub", "flux-system", "sveltos");
    write(
        root,
        "clusters/hub/tiers.yaml",
        &ks("sveltos", "flux-system", "./sveltos", "  wait: true\n"),
    );
    write(
        root,
        "sveltos/release.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: sveltos
  namespace: flux-system
spec:
  interval: 1h
  targetNamespace: projectsveltos
  install:
    createNamespace: true
  chart:
    spec:
      chart: projectsveltos
      sourceRef:
        kind: HelmRepository
        name: sveltos
---
apiVersion: config.projectsveltos.io/v1beta1
kind: ClusterProfile
metadata:
  name: kyverno
spec:
  clusterSelector:
    matchLabels:
      env: prod
",
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == RuleId::SecondOrderCrd),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_feature_gated_cilium_kind_beside_its_release_is_not_known_to_exist() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "cilium");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks("network", "flux-system", "./network", ""),
    );
    write(
        root,
        "network/cilium.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: cilium
  namespace: kube-system
spec:
  interval: 1h
  chart:
    spec:
      chart: cilium
      sourceRef:
        kind: HelmRepository
        name: cilium
        namespace: flux-system
  values:
    bgpControlPlane:
      enabled: true
---
apiVersion: cilium.io/v2alpha1
kind: CiliumBGPPeeringPolicy
metadata:
  name: peers
spec:
  virtualRouters: []
",
    );
    let outcome = run(root);
    // The install before Flux may have had BGP off (then the kind exists
    // only once this release turns it on, after the tier's dry-run) or on:
    // the repository does not show which, so a warning that says how to
    // settle it, never an error.
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    let f: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule() == RuleId::SecondOrderCrd)
        .collect();
    assert_eq!(f.len(), 1, "{}", all(&outcome));
    assert!(
        f[0].fix().contains("preinstalled") && f[0].why().contains("network plugin"),
        "{}",
        all(&outcome)
    );
    // What follows from that warning is no certain failure either (issue
    // 50: consequences follow their root's severity).
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks(
            "apps",
            "flux-system",
            "./apps",
            "  dependsOn:\n    - name: network\n",
        ),
    );
    write(
        root,
        "network/values.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: kube-system\ndata:\n  a: b\n",
    );
    write(
        root,
        "apps/release.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app
  namespace: kube-system
spec:
  interval: 1h
  chart:
    spec:
      chart: app
      sourceRef:
        kind: HelmRepository
        name: cilium
        namespace: flux-system
  valuesFrom:
    - kind: ConfigMap
      name: shared
",
    );
    let outcome = run(root);
    let consequences: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.caused_by().is_some())
        .collect();
    assert!(!consequences.is_empty(), "{}", all(&outcome));
    assert!(
        consequences
            .iter()
            .all(|f| f.severity() == Severity::Warning),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_remote_base_does_not_hide_the_kustomizations_of_the_local_part() {
    // `apps` cannot build its local part offline (a replacement reads an
    // object of the remote base); the Kustomization its local files hold
    // is still built, and the deadlock in it found.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "certs", "flux-system", "jetstack");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(
        root,
        "apps/kustomization.yaml",
        "\
resources:
  - https://github.com/kubernetes-csi/external-snapshotter//deploy/kubernetes/snapshot-controller?ref=v8.2.0
  - certs.yaml
replacements:
  - source:
      kind: Deployment
      name: snapshot-controller
      fieldPath: metadata.name
    targets:
      - select:
          kind: Kustomization
        fieldPaths:
          - metadata.annotations.snap
        options:
          create: true
",
    );
    write(
        root,
        "apps/certs.yaml",
        &ks("certs", "flux-system", "./certs", ""),
    );
    write(
        root,
        "certs/issuer.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: cert-manager
  namespace: flux-system
spec:
  interval: 1h
  chart:
    spec:
      chart: cert-manager
      sourceRef:
        kind: HelmRepository
        name: jetstack
  values:
    crds:
      enabled: true
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: letsencrypt
spec:
  selfSigned: {}
",
    );
    let outcome = run(root);
    assert!(
        errors(&outcome)
            .iter()
            .any(|f| f.rule() == RuleId::SecondOrderCrd && f.kustomization() == "certs"),
        "{}",
        all(&outcome)
    );
}

/// `onepassword` holds the ClusterSecretStore (and reads cluster-secrets
/// before it builds when `needs`); `cs` holds the ExternalSecret that makes
/// cluster-secrets through that store; `apps` reads cluster-secrets.
fn made_secret(root: &Path, needs: bool, apps_after: &str) {
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
                "onepassword",
                "flux-system",
                "./op",
                &format!("  wait: true\n{}", if needs { vars } else { "" }),
            ),
            ks("cs", "flux-system", "./cs", "  wait: true\n"),
            ks(
                "apps",
                "flux-system",
                "./apps",
                &format!("  dependsOn:\n{apps_after}{vars}"),
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "op/store.yaml",
        "\
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata:
  name: onepassword
spec:
  provider:
    onepassword:
      connectHost: http://connect:8080
      auth:
        secretRef:
          connectTokenSecretRef:
            name: connect-token
            namespace: external-secrets
            key: token
",
    );
    write(
        root,
        "cs/es.yaml",
        "\
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: cluster-secrets
  namespace: flux-system
spec:
  secretStoreRef:
    kind: ClusterSecretStore
    name: onepassword
  target:
    name: cluster-secrets
",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
}

#[test]
fn a_secret_made_through_a_store_that_needs_it_deadlocks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    made_secret(root, true, "    - name: cs\n");
    let outcome = run(root);
    let roots: Vec<_> = errors(&outcome)
        .into_iter()
        .filter(|f| f.caused_by().is_none())
        .collect();
    assert_eq!(roots.len(), 1, "{}", all(&outcome));
    assert_eq!(roots[0].kustomization(), "onepassword");
    assert!(
        roots[0]
            .message()
            .contains("ExternalSecret/flux-system/cluster-secrets in cs makes it only once"),
        "{}",
        roots[0].message()
    );
    // The bootstrap creates it: nothing waits for the store.
    write(
        root,
        "scripts/bootstrap.sh",
        "#!/bin/sh\nkubectl create secret generic cluster-secrets -n flux-system --from-env-file=.env\n",
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
}

#[test]
fn a_secret_whose_store_is_not_ordered_before_its_reader_races() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // No loop: the store's tier does not need the Secret. apps waits for
    // cs, but not for the store the ExternalSecret reads through.
    made_secret(root, false, "    - name: cs\n");
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == RuleId::ColdStartRace && f.kustomization() == "apps"),
        "{}",
        all(&outcome)
    );
    // Ordered after both: available.
    made_secret(root, false, "    - name: cs\n    - name: onepassword\n");
    let outcome = run(root);
    assert!(
        !outcome
            .findings
            .iter()
            .any(|f| f.rule() == RuleId::ColdStartRace),
        "{}",
        all(&outcome)
    );
}

#[test]
fn an_ansible_helm_task_installs_its_chart_before_flux() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks("issuers", "flux-system", "./issuers", ""),
    );
    write(
        root,
        "issuers/issuer.yaml",
        "\
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: selfsigned
spec:
  selfSigned: {}
",
    );
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == RuleId::CrdUnavailable),
        "{}",
        all(&outcome)
    );
    write(
        root,
        "ansible/roles/cert-manager/tasks/main.yaml",
        "\
- name: Install cert-manager
  kubernetes.core.helm:
    release_name: cert-manager
    chart_ref: jetstack/cert-manager
    release_namespace: cert-manager
    create_namespace: true
    values:
      crds:
        enabled: true
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn a_release_waiting_for_one_its_tier_applies_follows_from_what_blocks_the_tier() {
    // `apps` depends on `core`, which waits for itself (a Widget beside the
    // release of an unrelated operator chart is not needed: a kind its own
    // runtime trigger creates). apps' HelmRelease waits for a release a
    // child of apps renders: that is no loop of its own, it follows from
    // core.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "charts");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("core", "flux-system", "./core", ""),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:\n    - name: core\n",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "core/cdi.yaml",
        "\
apiVersion: cdi.kubevirt.io/v1beta1
kind: CDI
metadata:
  name: cdi
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: StorageProfile
metadata:
  name: longhorn
spec: {}
",
    );
    write(
        root,
        "apps/child.yaml",
        &ks("gpu", "flux-system", "./gpu", ""),
    );
    let release = |name: &str, extra: &str| {
        format!(
            "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {name}
  namespace: flux-system
spec:
  interval: 1h
  chart:
    spec:
      chart: {name}
      sourceRef:
        kind: HelmRepository
        name: charts
{extra}"
        )
    };
    write(
        root,
        "apps/plex.yaml",
        &release("plex", "  dependsOn:\n    - name: gpu-plugin\n"),
    );
    write(root, "gpu/plugin.yaml", &release("gpu-plugin", ""));
    let outcome = run(root);
    let plex: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.object() == Some("HelmRelease/flux-system/plex"))
        .collect();
    assert!(
        plex.iter().all(|f| f.caused_by().is_some()),
        "{}",
        all(&outcome)
    );
}
