//! Discovery bugs: a broken sync, the summary, phantom clusters, declared entries, subdirectory roots, variable sync paths.

use super::*;

/// Issue 13: a typo in the sync path's own kustomization.yaml
/// (`resorces:`) dropped the cluster silently (exit 0 when another cluster
/// was healthy). Flux drops the unknown field when it rewrites the file and
/// builds nothing: the cluster stays, with a render-failed finding at the
/// file and line.
#[test]
fn a_typo_in_the_sync_kustomization_is_render_failed_not_a_lost_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/kustomization.yaml",
        "\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resorces:
  - flux-system
  - apps.yaml
",
    );
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    sync(root, "clusters/dev");
    let outcome = run(root);
    let mut names = cluster_names(&outcome);
    names.sort();
    assert_eq!(names, ["dev", "prod"]);
    let f = outcome
        .findings
        .iter()
        .find(|f| f.cluster() == "prod")
        .unwrap();
    assert_eq!(f.rule(), conformance::rules::RuleId::RenderFailed);
    assert_eq!(f.kustomization(), "flux-system");
    let at = f.at().unwrap();
    assert_eq!(
        (at.file.as_str(), at.line),
        ("clusters/prod/kustomization.yaml", 3)
    );
    assert!(f.message().contains("`resorces`"), "{}", f.message());
}

/// Issue 13: singular and plural in the summary ("1 Kustomizations").
#[test]
fn the_summary_counts_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let outcome = run(root);
    let text = conformance::report::human::summary(&outcome, &[], std::time::Duration::ZERO);
    assert!(
        text.contains("1 cluster (prod), 1 Kustomization (1 rendered"),
        "{text}"
    );
}

/// Issue 12.10: a Kustomization whose path contains its own file is a
/// cluster of its own only when no other cluster already renders it.
#[test]
fn a_self_containing_tier_of_a_cluster_is_no_phantom_cluster() {
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
        "apps/kustomization.yaml",
        "\
resources:
  - web
",
    );
    write(
        root,
        "apps/web/ks.yaml",
        &ks("web", "flux-system", "./apps/web", ""),
    );
    write(root, "apps/web/cm.yaml", &configmap("web"));
    let outcome = run(root);
    assert_eq!(cluster_names(&outcome), ["prod"], "{}", messages(&outcome));
}

/// Issue 12.10: `clusters.<name>.entry` declares a cluster whose sync is
/// not in git (an AKS Flux extension), with its source.
#[test]
fn a_declared_entry_is_a_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "clusters/aks/apps.yaml",
        &ks("apps", "flux-system", "./apps", "").replace(
            "name: flux-system\n    namespace: flux-system",
            "name: cluster-config\n    namespace: flux-system",
        ),
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    write(
        root,
        "conformance.yaml",
        "\
clusters:
  aks-prod:
    entry: clusters/aks
    source:
      name: cluster-config
",
    );
    let outcome = run(root);
    assert_eq!(cluster_names(&outcome), ["aks-prod"]);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
    assert_eq!(objects_of(&outcome, "apps").len(), 1);
}

/// Issue 12.10: a Kustomization path that does not resolve at the root but
/// does below a subdirectory (the artifact is that directory) says so.
#[test]
fn paths_below_a_subdirectory_suggest_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "gitops/clusters/prod");
    write(
        root,
        "gitops/clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(root, "gitops/apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let f = outcome
        .findings
        .iter()
        .find(|f| f.kustomization() == "apps")
        .unwrap();
    assert!(
        f.message().contains("it exists below gitops/"),
        "{}",
        f.message()
    );
}

/// Issue 17: a Kustomization whose GitRepository is another repository was
/// taken for this repository's sync entry because its path happened to
/// contain its file; the real entry (a FluxInstance sync path) was never
/// tried.
#[test]
fn a_kustomization_of_another_repository_is_no_entry() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "clusters/main/flux-instance.yaml",
        "\
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: 2.x
  sync:
    kind: GitRepository
    url: https://github.com/example/fleet.git
    ref: refs/heads/main
    path: clusters/main
",
    );
    write(
        root,
        "clusters/main/kustomization.yaml",
        "\
resources:
  - flux-instance.yaml
  - ../../kubernetes/apps
",
    );
    write(
        root,
        "kubernetes/apps/kustomization.yaml",
        "\
resources:
  - keycloak.yaml
",
    );
    write(
        root,
        "kubernetes/apps/keycloak.yaml",
        &format!(
            "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: keycloak-k8s-resources
  namespace: flux-system
spec:
  url: https://github.com/keycloak/keycloak-k8s-resources
  ref:
    tag: 26.0.0
---
{}",
            ks("keycloak", "flux-system", "./kubernetes", "").replace(
                "name: flux-system\n    namespace: flux-system",
                "name: keycloak-k8s-resources\n    namespace: flux-system"
            )
        ),
    );
    let outcome = run(root);
    assert_eq!(cluster_names(&outcome), ["main"], "{}", messages(&outcome));
    let keycloak = &outcome.model.clusters[0].tiers
        [&conformance::model::TierId::new("flux-system", "keycloak")];
    assert!(
        matches!(keycloak.state, conformance::model::TierState::NotChecked(_)),
        "{:?}",
        keycloak.state
    );
    assert!(
        outcome
            .findings
            .iter()
            .all(|f| f.rule() != conformance::rules::RuleId::RenderFailed),
        "{}",
        messages(&outcome)
    );
}

/// Issue 17: a sync path written `./clusters/${ENVIRONMENT}/${CLUSTER}` and
/// made literal by per-cluster patches found no cluster. Each patch that a
/// build of its own path reads is one cluster.
#[test]
fn a_variable_sync_path_made_literal_by_patches_gives_one_cluster_per_patch() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "flux/base/kustomization.yaml",
        "\
resources:
  - sync.yaml
  - repo.yaml
",
    );
    write(
        root,
        "flux/base/repo.yaml",
        "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-config
  namespace: flux-system
spec:
  interval: 1h
  url: https://github.com/example/fleet
",
    );
    write(
        root,
        "flux/base/sync.yaml",
        &ks(
            "flux-system",
            "flux-system",
            "./clusters/${ENVIRONMENT}/${CLUSTER}",
            "",
        )
        .replace(
            "name: flux-system\n    namespace: flux-system",
            "name: flux-config\n    namespace: flux-system",
        ),
    );
    for (env, cluster) in [("prod", "00"), ("dev", "01")] {
        write(
            root,
            &format!("flux/{env}/{cluster}/patch.yaml"),
            &format!(
                "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  path: ./clusters/{env}/{cluster}
  postBuild:
    substitute:
      ENVIRONMENT: {env}
      CLUSTER: \"{cluster}\"
"
            ),
        );
        write(
            root,
            &format!("clusters/{env}/{cluster}/kustomization.yaml"),
            &format!(
                "\
resources:
  - ../../../flux/base
  - apps.yaml
patches:
  - path: ../../../flux/{env}/{cluster}/patch.yaml
"
            ),
        );
        write(
            root,
            &format!("clusters/{env}/{cluster}/apps.yaml"),
            &ks("apps", "flux-system", "./apps", "").replace(
                "name: flux-system\n    namespace: flux-system",
                "name: flux-config\n    namespace: flux-system",
            ),
        );
    }
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let mut names = cluster_names(&outcome);
    names.sort();
    assert_eq!(names, ["00", "01"], "{}", messages(&outcome));
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
}

/// Issue 28: `${VAR:=default}` (and `:-`, `=`; Flux's envsubst has no
/// bare `-` form) in a child's
/// `spec.path`, which the parent's postBuild substitutes before Flux
/// applies the child: with every source of the parent known and the
/// variable in none, it is unset, so the path takes its default
/// (`./apps/app-false`), as envsubst does; it was reported render-failed.
#[test]
fn a_default_in_a_childs_path_is_taken_when_the_parent_substitutes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks(
            "apps",
            "flux-system",
            "./apps",
            "  postBuild:
    substitute:
      CLUSTER: prod
",
        ),
    );
    let forms = [
        ("a", "./tiers/a-${ENABLED:=false}"),
        ("b", "./tiers/b-${ENABLED:-false}"),
        ("c", "./tiers/c-${ENABLED=false}"),
    ];
    let docs: Vec<String> = forms
        .iter()
        .map(|(n, path)| ks(n, "flux-system", path, ""))
        .collect();
    write(root, "apps/tiers.yaml", &docs.join("---\n"));
    for (n, _) in forms {
        write(root, &format!("tiers/{n}-false/cm.yaml"), &configmap(n));
    }
    let outcome = run(root);
    assert!(
        !outcome.findings.iter().any(|f| f.is_error()),
        "{}",
        all(&outcome)
    );
    let cluster = &outcome.model.clusters[0];
    for (n, _) in forms {
        let tier = cluster
            .tiers
            .values()
            .find(|t| t.id.name == n)
            .unwrap_or_else(|| panic!("{n}: {}", all(&outcome)));
        assert_eq!(tier.path, format!("tiers/{n}-false"), "{}", all(&outcome));
        assert!(
            matches!(tier.state, conformance::model::TierState::Rendered(_)),
            "{n}: {:?}",
            tier.state
        );
    }
}

/// Issue 28: a Secret SOPS encrypted whole (`kind`, `metadata.name` and
/// `namespace` ciphertext, no `encrypted_regex`) in a tier with
/// decryption: Flux decrypts it before applying. Its kind and namespace
/// are unknown, not missing: no schema, CRD or namespace finding, and a
/// note that says the object is opaque.
#[test]
fn an_object_encrypted_whole_is_opaque_not_missing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks(
            "apps",
            "flux-system",
            "./apps",
            "  decryption:
    provider: sops
    secretRef:
      name: sops-age
",
        ),
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    write(
        root,
        "apps/creds.sops.yaml",
        "\
apiVersion: ENC[AES256_GCM,data:TBo=,iv:a,tag:b,type:str]
kind: ENC[AES256_GCM,data:5g8R+fOG,iv:c,tag:d,type:str]
metadata:
    name: ENC[AES256_GCM,data:luIn,iv:e,tag:f,type:str]
    namespace: ENC[AES256_GCM,data:AW+W,iv:g,tag:h,type:str]
stringData:
    token: ENC[AES256_GCM,data:x,iv:i,tag:j,type:str]
sops:
    age:
        - recipient: age1x
          enc: x
    lastmodified: \"2025-01-01T00:00:00Z\"
    mac: ENC[AES256_GCM,data:m,iv:k,tag:l,type:str]
    version: 3.9.0
",
    );
    write(
        root,
        "apps/kustomization.yaml",
        "\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - cm.yaml
  - creds.sops.yaml
",
    );
    let outcome = run(root);
    let about: Vec<String> = outcome
        .findings
        .iter()
        .filter(|f| f.at().is_some_and(|a| a.file == "apps/creds.sops.yaml"))
        .map(|f| format!("{} {}", f.rule().as_str(), f.message()))
        .collect();
    assert!(about.is_empty(), "{about:?}");
    assert!(
        outcome
            .model
            .notes
            .iter()
            .any(|n| n.starts_with("apps/creds.sops.yaml:1") && n.contains("SOPS-encrypted whole")),
        "{:?}",
        outcome.model.notes
    );
}
