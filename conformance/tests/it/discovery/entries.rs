//! Entries and clusters: sync Kustomizations, names, overlays, branches, what is not a cluster.

use super::*;

#[test]
fn several_clusters_are_found_and_named_by_their_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for c in ["staging", "production"] {
        sync(root, &format!("clusters/{c}"));
        write(
            root,
            &format!("clusters/{c}/apps.yaml"),
            &ks("apps", "flux-system", "./apps", ""),
        );
    }
    write(root, "apps/app.yaml", &configmap("app"));
    let outcome = run(root);
    let names = cluster_names(&outcome);
    assert_eq!(names, ["production", "staging"]);
    let prod = &outcome.model.clusters[0];
    assert_eq!(
        prod.entry,
        Entry::SyncKustomization {
            tier: TierId::new("flux-system", "flux-system"),
            path: "clusters/production".into()
        }
    );
    let apps = &prod.tiers[&TierId::new("flux-system", "apps")];
    assert_eq!(apps.parent, Some(TierId::new("flux-system", "flux-system")));
    assert_eq!(apps.objects().len(), 1);
    assert_eq!(
        apps.objects()[0].source.as_ref().unwrap().file,
        "apps/app.yaml"
    );
    assert!(outcome.findings.is_empty(), "{:?}", rules(&outcome));
}

#[test]
fn depends_on_defaults_to_the_dependents_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!(
            "{}---\n{}---\n{}",
            ks("infra", "infra-system", "./infra", ""),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:
    - name: infra
      namespace: infra-system
"
            ),
            ks(
                "web",
                "flux-system",
                "./web",
                "  dependsOn:
    - name: infra
"
            ),
        ),
    );
    write(
        root,
        "clusters/prod/ns.yaml",
        "\
apiVersion: v1
kind: Namespace
metadata:
  name: infra-system
",
    );
    write(root, "infra/cm.yaml", &configmap("infra"));
    write(root, "apps/cm.yaml", &configmap("apps"));
    write(root, "web/cm.yaml", &configmap("web"));
    let outcome = run(root);
    // apps names the namespace; web does not, so it means flux-system/infra.
    assert_eq!(
        rules(&outcome),
        [("dependency-missing", "prod", "web")],
        "{:#?}",
        outcome.findings
    );
    let finding = &outcome.findings[0];
    assert!(
        finding.fix().contains("add `namespace: infra-system`"),
        "{}",
        finding.fix()
    );
    assert_eq!(
        finding.at().unwrap().line,
        46,
        "the `- name: infra` entry of web"
    );
}

#[test]
fn an_app_left_out_of_its_overlay_is_disabled_not_a_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // No sync in git; kubernetes/apps/kustomization.yaml lists plex only.
    // kubernetes/apps/old has a Flux Kustomization nobody includes: it is a
    // disabled app inside a directory the cluster builds, not a second cluster.
    write(
        root,
        "kubernetes/flux/cluster/ks.yaml",
        &ks("cluster-apps", "flux-system", "./kubernetes/apps", ""),
    );
    write(
        root,
        "kubernetes/apps/kustomization.yaml",
        "\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ./plex/ks.yaml
",
    );
    write(
        root,
        "kubernetes/apps/plex/ks.yaml",
        &ks("plex", "media", "./kubernetes/apps/plex/app", ""),
    );
    write(root, "kubernetes/apps/plex/app/cm.yaml", &configmap("plex"));
    write(
        root,
        "kubernetes/apps/old/ks.yaml",
        &ks("old", "media", "./kubernetes/apps/old/app", ""),
    );
    write(root, "kubernetes/apps/old/app/cm.yaml", &configmap("old"));
    let outcome = run(root);
    let names = cluster_names(&outcome);
    assert_eq!(names, ["cluster"]);
    assert!(
        !outcome.model.clusters[0]
            .tiers
            .contains_key(&TierId::new("media", "old"))
    );
}

#[test]
fn a_kustomization_defined_by_two_parents_is_one_tier_and_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!(
            "{}---\n{}",
            ks("a", "flux-system", "./a", ""),
            ks("b", "flux-system", "./b", "")
        ),
    );
    write(root, "a/child.yaml", &ks("child", "flux-system", "./c", ""));
    write(
        root,
        "b/child.yaml",
        &ks("child", "flux-system", "./c", "  wait: true\n"),
    );
    write(root, "c/cm.yaml", &configmap("c"));
    let outcome = run(root);
    let prod = &outcome.model.clusters[0];
    assert_eq!(prod.tiers.len(), 4);
    assert_eq!(rules(&outcome), [("duplicate-object", "prod", "b")]);
    assert_eq!(
        outcome.findings[0].object(),
        Some("Kustomization/flux-system/child")
    );
}

#[test]
fn tiers_applied_to_another_cluster_are_kept_apart() {
    // Hub and spoke: two tiers render the same objects, but each into its
    // own remote cluster (spec.kubeConfig, a Secret in its own namespace).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/hub");
    let remote = |name: &str, ns: &str| {
        ks(
            name,
            ns,
            "./spoke",
            "  kubeConfig:
    secretRef:
      name: cluster-kubeconfig
",
        )
    };
    write(
        root,
        "clusters/hub/spokes.yaml",
        &format!(
            "\
apiVersion: v1
kind: Namespace
metadata:
  name: staging
---
apiVersion: v1
kind: Namespace
metadata:
  name: production
---
{}---
{}",
            remote("tenants", "staging"),
            remote("tenants", "production")
        ),
    );
    write(
        root,
        "spoke/ns.yaml",
        "\
apiVersion: v1
kind: Namespace
metadata:
  name: podinfo
",
    );
    write(
        root,
        "spoke/widget.yaml",
        "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: podinfo
",
    );
    let outcome = run(root);
    // No duplicate-object across spokes, no CRD claims about another cluster.
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    let tier = &outcome.model.clusters[0].tiers[&TierId::new("staging", "tenants")];
    assert_eq!(
        tier.remote_target().as_deref(),
        Some("staging/secretRef/cluster-kubeconfig")
    );
}

#[test]
fn hidden_and_unreferenced_directories_are_not_clusters_when_a_sync_exists() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(root, "apps/cm.yaml", &configmap("app"));
    // Archived apps keep their Flux Kustomizations but nothing syncs them.
    write(
        root,
        ".archive/old/ks.yaml",
        &ks("old", "flux-system", "./.archive/old/app", ""),
    );
    write(
        root,
        "unused/ks.yaml",
        &ks("unused", "flux-system", "./unused/app", ""),
    );
    let outcome = run(root);
    let names = cluster_names(&outcome);
    assert_eq!(names, ["prod"]);
}

#[test]
fn an_archived_whole_repository_kustomization_is_not_a_cluster() {
    // A Kustomization without a path, kept in `.archive/` from an old
    // cluster, builds "the whole repository" trivially; nothing syncs it.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(root, "apps/cm.yaml", &configmap("app"));
    write(
        root,
        ".archive/crds.yaml",
        "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: crds
  namespace: flux-system
spec:
  interval: 1h
  url: https://github.com/example/crds.git
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: old-crds
  namespace: flux-system
spec:
  interval: 1h
  prune: false
  sourceRef:
    kind: GitRepository
    name: crds
",
    );
    let outcome = run(root);
    assert_eq!(cluster_names(&outcome), ["prod"]);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
}

#[test]
fn a_bootstrap_sync_that_leaves_flux_system_out_of_its_path_is_still_an_entry() {
    // `flux bootstrap` wrote clusters/dev/flux-system, but the path's own
    // kustomization lists only the tiers: Flux syncs ./clusters/dev all the
    // same, running the version its gotk-components.yaml says.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    sync(root, "clusters/dev");
    write(
        root,
        "clusters/dev/kustomization.yaml",
        "\
resources:
  - apps.yaml
",
    );
    write(
        root,
        "clusters/dev/flux-system/gotk-components.yaml",
        "\
---
# This manifest was generated by flux. DO NOT EDIT.
# Flux Version: v2.6.4
# Components: source-controller,kustomize-controller
apiVersion: v1
kind: Namespace
metadata:
  name: flux-system
",
    );
    write(
        root,
        "clusters/dev/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(
        root,
        "apps/release.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2beta1
kind: HelmRelease
metadata:
  name: app
  namespace: flux-system
spec:
  interval: 1h
  chart:
    spec:
      chart: app
      sourceRef:
        kind: HelmRepository
        name: charts
",
    );
    let outcome = run(root);
    let mut names = cluster_names(&outcome);
    names.sort();
    assert_eq!(names, ["dev", "prod"]);
    // v2beta1 is deprecated in Flux 2.6.4, removed only in 2.7.
    let api: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule().as_str().starts_with("api-") && f.cluster() == "dev")
        .collect();
    assert!(
        !api.is_empty()
            && api
                .iter()
                .all(|f| f.rule() == conformance::rules::RuleId::ApiDeprecated),
        "{:#?}",
        api
    );
}

#[test]
fn a_cluster_that_syncs_another_branch_is_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(root, ".git/HEAD", "ref: refs/heads/main\n");
    let outcome = run(root);
    assert!(outcome.model.notes.is_empty(), "{:?}", outcome.model.notes);
    // A second cluster on a branch of its own (environment branches).
    sync(root, "clusters/dev");
    let sync_file = root.join("clusters/dev/flux-system/gotk-sync.yaml");
    let text = std::fs::read_to_string(&sync_file).unwrap();
    std::fs::write(&sync_file, text.replace("branch: main", "branch: dev")).unwrap();
    // On a feature branch, with both on main, nothing is said.
    write(
        root,
        ".git/HEAD",
        "ref: refs/heads/feature
",
    );
    let sync_text = text.clone();
    std::fs::write(&sync_file, &sync_text).unwrap();
    assert!(run(root).model.notes.is_empty());
    std::fs::write(&sync_file, sync_text.replace("branch: main", "branch: dev")).unwrap();
    write(
        root,
        ".git/HEAD",
        "ref: refs/heads/main
",
    );
    let outcome = run(root);
    assert!(
        outcome
            .model
            .notes
            .iter()
            .any(|n| n.contains("syncs branch dev") && n.contains("checkout is main")),
        "{:?}",
        outcome.model.notes
    );
}

/// Issue 24: a checkout whose git remote is not the URL its GitRepository
/// names (a mirror, a fork, a GitLab copy, a CI cache) finds the same
/// clusters as one cloned from that URL: a remote that no GitRepository
/// names says nothing about which GitRepository is this repository.
#[test]
fn a_checkout_from_a_mirror_finds_the_same_clusters() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "kubernetes/prod/flux/sync.yaml",
        "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: home-ops
  namespace: flux-system
spec:
  interval: 1h
  url: https://github.com/example/home-ops
  ref:
    branch: main
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: cluster
  namespace: flux-system
spec:
  interval: 1h
  prune: true
  path: ./kubernetes/prod
  sourceRef:
    kind: GitRepository
    name: home-ops
",
    );
    write(
        root,
        "kubernetes/prod/apps.yaml",
        "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 1h
  prune: true
  path: ./kubernetes/apps
  sourceRef:
    kind: GitRepository
    name: home-ops
",
    );
    write(root, "kubernetes/apps/cm.yaml", &configmap("a"));
    // An app nothing references any more.
    write(
        root,
        "kubernetes/_archive/old/ks.yaml",
        "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: old
  namespace: flux-system
spec:
  interval: 1h
  prune: true
  path: ./kubernetes/_archive/old/app
  sourceRef:
    kind: GitRepository
    name: home-ops
",
    );
    write(
        root,
        "kubernetes/_archive/old/app/cm.yaml",
        &configmap("old"),
    );
    for remote in [
        "https://github.com/example/home-ops.git",
        "/srv/mirrors/home-ops.git",
        "https://gitlab.example.com/mirrors/home-ops.git",
    ] {
        write(
            root,
            ".git/config",
            &format!(
                "[remote \"origin\"]\n\turl = {remote}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
            ),
        );
        let outcome = run(root);
        assert_eq!(cluster_names(&outcome), ["prod"], "remote {remote}");
        let tiers: Vec<String> = outcome.model.clusters[0]
            .tiers
            .keys()
            .map(|t| t.name.clone())
            .collect();
        assert_eq!(tiers, ["apps", "cluster"], "remote {remote}");
    }
}

/// Issue 28: a deploy script that applies a shared `flux/config` and then
/// `prod/flux/config` builds one cluster. Checked apart, the production
/// half depends on a tier only the base brings and uses its namespace.
/// Two clusters of their own that one script applies (`dev`, `prod`) stay
/// apart.
#[test]
fn entries_one_script_applies_together_are_one_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let sync = |name: &str, path: &str| {
        format!(
            "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m
  url: https://github.com/example/fleet.git
  ref:
    branch: main
---
{}",
            ks(name, "flux-system", path, "")
        )
    };
    write(
        root,
        "flux/config/flux-system/gotk-sync.yaml",
        &sync("flux-system", "./flux/config"),
    );
    write(
        root,
        "flux/config/infra.yaml",
        &ks("infra", "flux-system", "./infra", ""),
    );
    write(
        root,
        "infra/ns.yaml",
        "\
apiVersion: v1
kind: Namespace
metadata:
  name: platform
",
    );
    write(
        root,
        "prod/flux/config/flux-system/gotk-sync.yaml",
        &ks("prod", "flux-system", "./prod/flux/config", ""),
    );
    write(
        root,
        "prod/flux/config/apps.yaml",
        &ks(
            "apps",
            "flux-system",
            "./apps",
            "  dependsOn:
    - name: infra
",
        ),
    );
    write(
        root,
        "apps/cm.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: platform
data:
  a: b
",
    );
    let before = run(root);
    assert_eq!(
        before.model.clusters.len(),
        2,
        "{:?}",
        cluster_names(&before)
    );
    assert!(
        before.findings.iter().any(|f| f.is_error()),
        "the production half alone misses infra: {}",
        all(&before)
    );

    write(
        root,
        "scripts/deploy.sh",
        "#!/bin/sh\nset -e\nkubectl apply -k flux/config\nkubectl apply -k prod/flux/config\n",
    );
    let after = run(root);
    let clusters: Vec<(&str, &str)> = after
        .model
        .clusters
        .iter()
        .map(|c| (c.name.as_str(), c.entry.path()))
        .collect();
    assert_eq!(clusters.len(), 1, "{clusters:?}");
    assert_eq!(clusters[0].1, "prod/flux/config");
    let tiers: Vec<&str> = after.model.clusters[0]
        .tiers
        .keys()
        .map(|t| t.name.as_str())
        .collect();
    assert!(
        tiers.contains(&"infra") && tiers.contains(&"apps"),
        "{tiers:?}"
    );
    assert!(
        !after.findings.iter().any(|f| f.is_error()),
        "{}",
        all(&after)
    );
    assert!(
        after
            .model
            .notes
            .iter()
            .any(|n| n.contains("are one cluster")
                && n.contains(
                    "scripts/deploy.sh applies flux/config (line 3) and prod/flux/config (line 4)"
                )),
        "{:?}",
        after.model.notes
    );

    // dev and prod of their own, applied by one script: two clusters.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for env in ["dev", "prod"] {
        write(
            root,
            &format!("{env}/flux/config/flux-system/gotk-sync.yaml"),
            &sync("flux-system", &format!("./{env}/flux/config")),
        );
        write(root, &format!("{env}/flux/config/cm.yaml"), &configmap(env));
    }
    write(
        root,
        "scripts/deploy.sh",
        "#!/bin/sh\nkubectl --context dev apply -k dev/flux/config\nkubectl --context prod apply -k prod/flux/config\n",
    );
    assert_eq!(run(root).model.clusters.len(), 2);
}

/// Issue 28 (validation): a cluster that applies a FluxInstance of its own
/// (a migration from `flux bootstrap` to the Flux Operator) whose sync path
/// its own build already holds is one cluster, not two copies checked
/// twice; the two owners of what both apply are duplicate-object's.
#[test]
fn a_flux_instance_the_cluster_applies_itself_joins_that_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps/ks.yaml",
        &ks("web", "flux-system", "./web", ""),
    );
    write(root, "web/cm.yaml", &configmap("web"));
    write(
        root,
        "clusters/prod/operator/instance.yaml",
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
  sync:
    kind: GitRepository
    url: https://github.com/example/fleet.git
    ref: refs/heads/main
    path: clusters/prod/apps
",
    );
    let outcome = run(root);
    let clusters: Vec<&str> = outcome
        .model
        .clusters
        .iter()
        .map(|c| c.entry.path())
        .collect();
    assert_eq!(clusters, ["clusters/prod"], "{:?}", outcome.model.notes);
    assert!(
        outcome.model.notes.iter().any(|n| n.contains(
            "applies the FluxInstance that syncs clusters/prod/apps (clusters/prod/operator/instance.yaml:"
        )),
        "{:?}",
        outcome.model.notes
    );
}
