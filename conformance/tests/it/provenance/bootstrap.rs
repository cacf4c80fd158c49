//! What a repository installs before Flux: helmfiles, scripts, Taskfiles, Talos, k3s, Azure, OpenShift.

use super::*;

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
        "\
releases:
  - name: cilium
    namespace: kube-system
    chart: cilium/cilium
  - name: external-secrets
    namespace: external-secrets
    chart: external-secrets/external-secrets
",
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    // `conformance crds` shows where.
    let session =
        conformance::session::Session::open(&conformance::session::RunOptions::at(root)).unwrap();
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
        "\
releases:
  - name: cilium
    namespace: kube-system
    chart: cilium/cilium
",
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
        "\
helmDefaults:
  args: [--include-crds]
releases:
  - name: kube-prometheus-stack
    namespace: o11y
    chart: prometheus-community/kube-prometheus-stack
",
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
        "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
",
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
        "\
apiVersion: cilium.io/v2alpha1
kind: CiliumLoadBalancerIPPool
metadata:
  name: pool
spec:
  blocks: [{cidr: 10.0.0.0/24}]
",
    );
    write(
        root,
        "talos/cni/kustomization.yaml",
        "\
helmCharts:
  - name: cilium
    repo: https://helm.cilium.io
    version: 1.16.0
    releaseName: cilium
    namespace: kube-system
",
    );
    write(
        root,
        "Taskfile.yaml",
        "\
version: '3'
vars:
  TALOS_DIR: '{{.ROOT_DIR}}/talos'
tasks:
  cni:
    cmds:
      - kubectl kustomize --enable-helm {{.TALOS_DIR}}/cni | kubectl apply --server-side -f -
",
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
        "\
machine:
  features:
    kubernetesTalosAPIAccess:
      enabled: true
      allowedRoles: [os:reader]
cluster:
  extraManifests:
    - https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.3.0/experimental-install.yaml
  clusterName: {{ cluster_name }}
",
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
        "\
apiVersion: helm.cattle.io/v1
kind: HelmChartConfig
metadata:
  name: traefik
  namespace: kube-system
spec:
  valuesContent: ''
",
    );
    write(
        root,
        "kubernetes/apps/monitor.yaml",
        &cr("monitoring.coreos.com/v1", "PodMonitor", "default", "m"),
    );
    write(
        root,
        "ansible/inventory/group_vars/kubernetes/k3s.yml",
        "\
k3s_release_version: v1.30.0+k3s1
k3s_server_manifests_urls:
  - url: https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.65.1/example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml
    filename: podmonitors.yaml
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
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
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: cluster-config
data: {}
",
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
        "\
resource fluxConfig 'Microsoft.KubernetesConfiguration/fluxConfigurations@2022-03-01' = {
  name: 'cluster-config'
  scope: aks
  properties: {
    scope: 'cluster'
    namespace: 'cluster-config'
  }
}
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
    // Computed namespaces excuse nothing.
    write(
        root,
        "infra/flux.bicep",
        "\
resource fluxConfig 'Microsoft.KubernetesConfiguration/fluxConfigurations@2022-03-01' = {
  name: 'cluster-config'
  properties: {
    namespace: ns
  }
}
",
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
fn the_network_plugin_ran_before_flux_so_its_kinds_exist_from_the_start() {
    // Issue 49: Flux's controllers need pod networking, so the CNI a
    // HelmRelease takes over ran before Flux (here Talos applies it at
    // bootstrap, which the repository may or may not show): Cilium's kinds
    // beside its HelmRelease are not second-order.
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
        "\
apiVersion: cilium.io/v2alpha1
kind: CiliumLoadBalancerIPPool
metadata:
  name: pool
spec: {}
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
    write(
        root,
        "talos/integrations/cni/cilium.yaml",
        "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cilium-operator
  namespace: kube-system
  annotations:
    meta.helm.sh/release-name: cilium
    meta.helm.sh/release-namespace: kube-system
spec: {}
",
    );
    write(
        root,
        "talos/controlplane.yaml",
        "\
cluster:
  network:
    cni:
      name: custom
      urls:
        - https://raw.githubusercontent.com/example/fleet/main/talos/integrations/cni/cilium.yaml
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
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
                "  dependsOn:
    - name: metallb
",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "config/ca.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: custom-ca
  namespace: openshift-config
data: {}
",
    );
    write(
        root,
        "metallb/subscription.yaml",
        "\
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: metallb-operator-sub
  namespace: openshift-operators
spec:
  channel: stable
  name: metallb-operator
  source: community-operators
  sourceNamespace: openshift-marketplace
",
    );
    write(
        root,
        "metallb-config/pool.yaml",
        "\
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata:
  name: pool
  namespace: openshift-operators
spec:
  addresses: [10.0.0.0/28]
",
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
        "\
apiVersion: config.openshift.io/v1
kind: OAuth
metadata:
  name: cluster
spec: {}
",
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
fn a_flow_style_taskfile_is_read_as_yaml() {
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
        "kubernetes/apps/cm.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: secrets-system
data: {}
",
    );
    let outcome = run(root);
    assert_eq!(errors(&outcome).len(), 1, "{}", all(&outcome));
    // One line of flow-style YAML, its commands quoted, the namespace in a
    // variable of the including Taskfile.
    write(
        root,
        "Taskfile.yaml",
        "{ version: '3', env: { NS: secrets-system }, includes: { bootstrap: .taskfiles/bootstrap }, tasks: {} }\n",
    );
    write(
        root,
        ".taskfiles/bootstrap/Taskfile.yaml",
        "{ version: \"3\", tasks: { secrets: { cmds: [ \"kubectl create namespace {{.NS}}\" ] } } }\n",
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
}

#[test]
fn a_templated_helmfile_with_column_zero_lists_is_read_as_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    chart_with_its_crs(root);
    // Lists at the margin, the chart from the environment's values, a
    // `needs:` list, an `if` around the release.
    write(
        root,
        "bootstrap/helmfile.yaml.gotmpl",
        "\
---
environments:
  default:
    values:
    - ./versions.yaml
---
releases:
{{- if .Values.externalSecrets }}
- name: external-secrets
  namespace: external-secrets
  chart: {{ .Values.charts.externalSecrets }}
  needs: [kube-system/cilium]
{{- end }}
",
    );
    write(
        root,
        "bootstrap/versions.yaml",
        "\
externalSecrets: true
charts:
  externalSecrets: oci://ghcr.io/external-secrets/charts/external-secrets
",
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    let json = conformance::report::json::render(&outcome, "repo", &[]);
    assert!(
        json["bootstrap"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["line"] == 9 && i["provides"] == "chart external-secrets"),
        "{}",
        json["bootstrap"]
    );
}

#[test]
fn a_helmfile_release_whose_crds_are_switched_off_provides_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    chart_with_its_crs(root);
    let helmfile = |values: &str| {
        format!(
            "\
releases:
- name: external-secrets
  namespace: external-secrets
  chart: external-secrets/external-secrets
  values:
  - {values}
"
        )
    };
    write(root, "bootstrap/helmfile.yaml", &helmfile("./values.yaml"));
    write(root, "bootstrap/values.yaml", "installCRDs: false\n");
    let outcome = run(root);
    assert_eq!(errors(&outcome).len(), 1, "{}", all(&outcome));
    // Inline values, and `set:`.
    write(
        root,
        "bootstrap/helmfile.yaml",
        &helmfile("installCRDs: false"),
    );
    assert_eq!(errors(&run(root)).len(), 1);
    write(
        root,
        "bootstrap/helmfile.yaml",
        &format!(
            "\
{}  set:
  - name: installCRDs
    value: false
",
            helmfile("{}")
        ),
    );
    assert_eq!(errors(&run(root)).len(), 1);
    write(root, "bootstrap/values.yaml", "installCRDs: true\n");
    write(root, "bootstrap/helmfile.yaml", &helmfile("./values.yaml"));
    assert!(errors(&run(root)).is_empty());
}

#[test]
fn the_flux_version_of_a_helmfile_flux_instance_release_and_a_script() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "kubernetes/flux");
    write(
        root,
        "bootstrap/helmfile.yaml",
        "\
releases:
- name: flux-instance
  namespace: flux-system
  chart: oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance
  values:
  - ./flux-instance.yaml
",
    );
    write(
        root,
        "bootstrap/flux-instance.yaml",
        "\
instance:
  distribution:
    version: 2.7.2
",
    );
    let session =
        conformance::session::Session::open(&conformance::session::RunOptions::at(root)).unwrap();
    let analysis = session.analysis(&session.model.clusters[0]);
    let installed = analysis.installed.as_ref().expect("a version");
    assert_eq!(installed.written, "2.7.2");
    assert_eq!(installed.at.file, "bootstrap/helmfile.yaml");
    std::fs::remove_file(root.join("bootstrap/helmfile.yaml")).unwrap();
    write(
        root,
        "scripts/bootstrap.sh",
        "#!/bin/sh\nflux install \\\n  --version=v2.4.0 --components-extra=image-reflector-controller\n",
    );
    let session =
        conformance::session::Session::open(&conformance::session::RunOptions::at(root)).unwrap();
    let analysis = session.analysis(&session.model.clusters[0]);
    let installed = analysis.installed.as_ref().expect("a version");
    assert_eq!(installed.written, "v2.4.0");
    assert_eq!(
        (installed.at.file.as_str(), installed.at.line),
        ("scripts/bootstrap.sh", 2)
    );
}

#[test]
fn a_helmfile_that_is_not_yaml_is_read_by_line_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    chart_with_its_crs(root);
    write(
        root,
        "bootstrap/helmfile.yaml",
        "\
releases:
  - name: external-secrets
    namespace: external-secrets
    chart: external-secrets/external-secrets
    values: [a: b: c]
",
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    let json = conformance::report::json::render(&outcome, "repo", &[]);
    let notes = json["bootstrap_notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["file"] == "bootstrap/helmfile.yaml"
            && n["note"].as_str().unwrap().contains("taken line by line")),
        "{notes:?}"
    );
}

#[test]
fn an_uncatalogued_extra_manifest_and_an_unread_command_are_noted() {
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
        "kubernetes/apps/ns.yaml",
        "\
apiVersion: v1
kind: Namespace
metadata:
  name: a
",
    );
    write(
        root,
        "talos/controlplane.yaml",
        "\
cluster:
  extraManifests:
    - https://example.com/operator/v1/crds.yaml
",
    );
    write(
        root,
        "scripts/up.sh",
        "#!/bin/sh\nkubectl apply -k \"${OVERLAY}/crds\"\n",
    );
    let outcome = run(root);
    let json = conformance::report::json::render(&outcome, "repo", &[]);
    let notes = json["bootstrap_notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["file"] == "talos/controlplane.yaml"
            && n["line"] == 3
            && n["note"]
                .as_str()
                .unwrap()
                .contains("provides kinds this tool does not know")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n["file"] == "scripts/up.sh"
            && n["line"] == 2
            && n["note"].as_str().unwrap().starts_with("not read: ")),
        "{notes:?}"
    );
}

#[test]
fn documented_steps_count_where_they_are_written_unless_switched_off() {
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
        "bootstrap/crds/kustomization.yaml",
        "\
resources:
  - widgets.yaml
",
    );
    write(
        root,
        "bootstrap/crds/widgets.yaml",
        "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
  versions:
    - name: v1
      served: true
      storage: true
",
    );
    assert_eq!(errors(&run(root)).len(), 1, "{}", all(&run(root)));
    write(
        root,
        "README.md",
        "\
# Cluster

Bring it up:

```console
$ kubectl apply --server-side --kustomize ./bootstrap/crds
customresourcedefinition.apiextensions.k8s.io/widgets.example.com serverside-applied
```
",
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    let session =
        conformance::session::Session::open(&conformance::session::RunOptions::at(root)).unwrap();
    let item = session
        .bootstrap
        .items
        .iter()
        .find(|i| i.at.file == "README.md")
        .expect("a documented step");
    assert_eq!(item.at.line, 6);
    assert!(item.via.starts_with("documented step: "), "{}", item.via);
    write(
        root,
        "conformance.yaml",
        "\
catalog:
  documented_steps: false
",
    );
    assert_eq!(errors(&run(root)).len(), 1, "{}", all(&run(root)));
}

#[test]
fn a_parsed_script_applies_here_documents_and_what_its_functions_are_called_with() {
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
        &cr("example.com/v1", "Widget", "widgets", "w"),
    );
    write(
        root,
        "bootstrap/crds/kustomization.yaml",
        "\
resources:
  - widgets.yaml
",
    );
    write(
        root,
        "bootstrap/crds/widgets.yaml",
        "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
  versions:
    - name: v1
      served: true
      storage: true
",
    );
    // Before Flux: nothing yet, so the tier's CRD and namespace are missing.
    let before = run(root);
    assert_eq!(errors(&before).len(), 2, "{}", all(&before));
    // A runbook's steps are not the bootstrap.
    write(
        root,
        "docs/runbooks/restore.md",
        "```sh\nkubectl create namespace widgets\nkubectl apply -k bootstrap/crds\n```\n",
    );
    assert_eq!(errors(&run(root)).len(), 2, "{}", all(&run(root)));
    write(
        root,
        "scripts/bootstrap.sh",
        "\
#!/usr/bin/env bash
set -euo pipefail
apply_crds() {
    kustomize build \"$1\" \\
        | yq 'select(.kind == \"CustomResourceDefinition\" or .kind == \"x\" | not | not)' \\
        | kubectl apply --server-side -f -
}
main() {
    kubectl apply -f - <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: widgets
EOF
    cat <<EOF | kubectl apply -f -
apiVersion: v1
kind: Secret
metadata:
  name: ${TOKEN_NAME}
  namespace: widgets
EOF
    apply_crds \"$(git rev-parse --show-toplevel)/bootstrap/crds\"
}
main \"$@\"
",
    );
    let outcome = run(root);
    assert!(errors(&outcome).is_empty(), "{}", all(&outcome));
    let session =
        conformance::session::Session::open(&conformance::session::RunOptions::at(root)).unwrap();
    let at: Vec<(u32, &str)> = session
        .bootstrap
        .items
        .iter()
        .filter(|i| i.at.file == "scripts/bootstrap.sh")
        .map(|i| (i.at.line, i.via.as_str()))
        .collect();
    assert!(
        at.contains(&(9, "kubectl apply -f - (a here-document)")),
        "{at:?}"
    );
    assert!(
        at.iter()
            .any(|(l, via)| *l == 4 && via.contains("bootstrap/crds")),
        "{at:?}"
    );
    assert!(
        !session
            .bootstrap
            .items
            .iter()
            .any(|i| i.at.file.starts_with("docs/")),
        "a runbook counted"
    );
    let json = conformance::report::json::render(&outcome, "repo", &[]);
    let notes = json["bootstrap_notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["file"] == "scripts/bootstrap.sh"
            && n["line"] == 15
            && n["note"].as_str().unwrap().contains("here-document")),
        "{notes:?}"
    );
}

/// Issue 28: an archived helmfile is not the live bootstrap. When the
/// entrypoints name the helmfiles they run, only those run; when nothing
/// names one, conventional locations do, except under an archive folder.
/// Each helmfile left out is noted with the rule that left it out.
#[test]
fn only_the_helmfiles_the_entrypoints_run_are_the_bootstrap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    chart_with_its_crs(root);
    let installs_external_secrets = "\
releases:
  - name: external-secrets
    namespace: external-secrets
    chart: external-secrets/external-secrets
";
    write(
        root,
        "archive/bootstrap/helmfile.d/00-crds.yaml",
        installs_external_secrets,
    );
    // Nothing names a helmfile: the archived one is not read.
    let outcome = run(root);
    assert_eq!(errors(&outcome).len(), 1, "{}", all(&outcome));
    let notes = |outcome: &conformance::check::Outcome| {
        conformance::report::json::render(outcome, "repo", &[])["bootstrap_notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| format!("{}: {}", n["file"], n["note"]))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        notes(&outcome).contains("under an archive folder and no entrypoint runs it"),
        "{}",
        notes(&outcome)
    );
    // A live helmfile in a conventional place counts.
    write(root, "bootstrap/helmfile.yaml", installs_external_secrets);
    assert!(errors(&run(root)).is_empty());
    // The Taskfile names the helmfile it runs, and it is another one: the
    // conventional one is left out too, and the deadlock shows again.
    write(
        root,
        "Taskfile.yaml",
        "\
version: '3'
tasks:
  bootstrap:
    cmds:
      - helmfile --file bootstrap/apps.yaml sync
",
    );
    write(
        root,
        "bootstrap/apps.yaml",
        "\
releases:
  - name: cilium
    namespace: kube-system
    chart: cilium/cilium
",
    );
    let outcome = run(root);
    assert_eq!(errors(&outcome).len(), 1, "{}", all(&outcome));
    assert!(
        notes(&outcome).contains(
            "the entrypoints name the helmfiles they run (bootstrap/apps.yaml), and not this one"
        ),
        "{}",
        notes(&outcome)
    );
    // A stage that only names the program (`which helmfile`, a CLI
    // check) runs no helmfile: the entrypoints still name theirs.
    write(
        root,
        "Taskfile.yaml",
        "\
version: '3'
tasks:
  tools:
    cmds:
      - which gum helm helmfile kubectl
      - check_cli helmfile yq
  bootstrap:
    cmds:
      - helmfile --file bootstrap/apps.yaml sync
",
    );
    let outcome = run(root);
    assert_eq!(errors(&outcome).len(), 1, "{}", all(&outcome));
    // Running the archived one by name makes it live again.
    write(
        root,
        "Taskfile.yaml",
        "\
version: '3'
tasks:
  bootstrap:
    cmds:
      - helmfile --file archive/bootstrap/helmfile.d sync
",
    );
    assert!(errors(&run(root)).is_empty(), "{}", all(&run(root)));
}

/// Issue 28 (validation): a Taskfile (or Talos config, or any bootstrap
/// file) kept under an archive folder (`.archived/`) is not the live
/// bootstrap: what it installs is not credited, and a note says so.
#[test]
fn archived_scripts_are_not_the_bootstrap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    chart_with_its_crs(root);
    let taskfile = "\
version: '3'
tasks:
  bootstrap:
    cmds:
      - helm install external-secrets external-secrets/external-secrets -n external-secrets --create-namespace
";
    write(
        root,
        ".archived/taskfiles/bootstrap/Taskfile.yaml",
        taskfile,
    );
    let outcome = run(root);
    assert_eq!(errors(&outcome).len(), 1, "{}", all(&outcome));
    let notes = conformance::report::json::render(&outcome, "repo", &[])["bootstrap_notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| format!("{}: {}", n["file"], n["note"]))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        notes.lines().any(
            |n| n.contains(".archived/taskfiles/bootstrap/Taskfile.yaml")
                && n.contains("not read as bootstrap: it is under an archive folder")
        ),
        "{notes}"
    );
    // The same Taskfile where it runs installs the chart first.
    write(root, "Taskfile.yaml", taskfile);
    assert!(errors(&run(root)).is_empty(), "{}", all(&run(root)));
}
