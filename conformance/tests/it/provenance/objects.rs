//! Objects a tier reads (substituteFrom): produced by controllers, applied by the bootstrap, or made by nothing.

use super::*;

#[test]
fn a_substitute_from_secret_an_external_secret_produces_is_ordered_by_its_tier() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "conformance.yaml",
        "\
catalog:
  preinstalled: [external-secrets.io]
",
    );
    let vars = "  postBuild:
    substituteFrom:
      - kind: Secret
        name: cluster-secrets
";
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks(
                "secrets",
                "flux-system",
                "./secrets",
                "  dependsOn:
    - name: apps
",
            ),
            ks("apps", "flux-system", "./apps", vars),
        ]
        .join("---\n"),
    );
    write(
        root,
        "secrets/es.yaml",
        "\
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: cluster-secrets-source
  namespace: flux-system
spec:
  target:
    name: cluster-secrets
",
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
fn a_substitute_from_object_nothing_creates_fails_the_tier() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let vars = "  postBuild:
    substituteFrom:
      - kind: ConfigMap
        name: cluster-vars
";
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
        errors[0].fix().contains("`external:`"),
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
        "\
catalog:
  preinstalled_objects: [ConfigMap/flux-system/cluster-vars]
",
    );
    assert!(run(root).findings.is_empty(), "{}", all(&run(root)));
    std::fs::remove_file(root.join("conformance.yaml")).unwrap();
    // Applied by a script.
    write(
        root,
        "bootstrap/vars.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-vars
  namespace: flux-system
data: {}
",
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
            "  postBuild:
    substituteFrom:
      - kind: ConfigMap
        name: cluster-settings
",
        ),
    );
    write(
        root,
        "kubernetes/main/apps/kustomization.yaml",
        "\
resources:
  - ../vars/cluster-settings.yaml
  - cm.yaml
",
    );
    write(
        root,
        "kubernetes/main/vars/cluster-settings.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-settings
  namespace: flux-system
data:
  ZONE: example.com
",
    );
    write(
        root,
        "kubernetes/main/apps/cm.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: default
data:
  host: app.${ZONE}
",
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
