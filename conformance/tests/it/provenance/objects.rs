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
