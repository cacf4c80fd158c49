//! Sources that are not this repository, OCI artifacts and ExternalArtifacts built from it, subtrees pushed as their own repository.

use super::*;

#[test]
fn sources_that_are_not_this_repository_are_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/sources.yaml",
        "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: same-repo
  namespace: flux-system
spec:
  interval: 1h
  url: ssh://git@github.com/example/fleet
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: other
  namespace: flux-system
spec:
  interval: 1h
  url: https://github.com/example/other
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1h
  url: oci://ghcr.io/example/fleet
",
    );
    let mut tiers = ks("local", "flux-system", "./apps", "");
    tiers = tiers.replace(
        "name: flux-system\n    namespace",
        "name: same-repo\n    namespace",
    );
    let mut remote = ks("remote", "flux-system", "./does-not-exist-here", "");
    remote = remote.replace(
        "name: flux-system\n    namespace",
        "name: other\n    namespace",
    );
    let oci =
        ks("oci", "flux-system", "./", "").replace("kind: GitRepository", "kind: OCIRepository");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!("{tiers}---\n{remote}---\n{oci}"),
    );
    write(root, "apps/cm.yaml", &configmap("apps"));
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    let prod = &outcome.model.clusters[0];
    let state = |name: &str| &prod.tiers[&TierId::new("flux-system", name)].state;
    assert!(matches!(state("local"), TierState::Rendered(objects) if objects.len() == 1));
    match state("remote") {
        TierState::NotChecked(reason) => assert!(
            reason.contains("https://github.com/example/other"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    match state("oci") {
        TierState::NotChecked(reason) => assert!(reason.contains("OCIRepository"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn oci_artifacts_built_from_the_repository_are_mapped_with_sources() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A FluxInstance syncs an OCI artifact that CI builds from kubernetes/.
    let oci = |name: &str, path: &str| ks_from(name, path, "OCIRepository", "flux-system");
    write(
        root,
        "kubernetes/clusters/prod/ks.yaml",
        &oci("cluster", "./apps"),
    );
    write(
        root,
        "kubernetes/apps/app/ks.yaml",
        &oci("app", "./apps/app/manifests"),
    );
    write(
        root,
        "kubernetes/apps/kustomization.yaml",
        "\
resources:
  - app/ks.yaml
",
    );
    write(
        root,
        "kubernetes/apps/app/manifests/cm.yaml",
        &configmap("app"),
    );
    // Unmapped: the cluster is found (kubernetes/apps/app is part of the
    // apps overlay, not a second cluster), and since every path the
    // artifact's Kustomizations name exists only below kubernetes/, that is
    // taken as its root, and the report says so.
    let outcome = run(root);
    let names = cluster_names(&outcome);
    assert_eq!(names, ["prod"]);
    let tier = &outcome.model.clusters[0].tiers[&TierId::new("flux-system", "cluster")];
    assert!(
        matches!(&tier.state, TierState::Rendered(_)),
        "{:?}",
        tier.state
    );
    assert!(
        outcome.model.notes.iter().any(|n| n.contains(
            "source OCIRepository/flux-system/flux-system is read as directory kubernetes/"
        )),
        "{:?}",
        outcome.model.notes
    );
    // A path that exists at the root too: the root might be the artifact,
    // so nothing is guessed, and the OCI tier says why it is not checked
    // and how to map it.
    write(root, "apps/cm.yaml", &configmap("root"));
    let outcome = run(root);
    let tier = &outcome.model.clusters[0].tiers[&TierId::new("flux-system", "cluster")];
    assert!(
        matches!(&tier.state, TierState::NotChecked(why) if why.contains("OCIRepository/flux-system") && why.contains("`sources`")),
        "{:?}",
        tier.state
    );
    std::fs::remove_dir_all(root.join("apps")).unwrap();
    write(
        root,
        "conformance.yaml",
        "\
sources:
  - kind: OCIRepository
    name: flux-system
    path: kubernetes
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    let cluster = &outcome.model.clusters[0];
    assert_eq!(
        cluster.entry,
        Entry::Directory {
            path: "kubernetes/clusters/prod".into()
        }
    );
    let app = &cluster.tiers[&TierId::new("flux-system", "app")];
    assert_eq!(app.path, "kubernetes/apps/app/manifests");
    assert!(
        matches!(&app.state, TierState::Rendered(o) if o.len() == 1),
        "{:?}",
        app.state
    );
}

#[test]
fn external_artifacts_of_an_artifact_generator_are_built_from_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let external =
        |name: &str, path: &str, artifact: &str| ks_from(name, path, "ExternalArtifact", artifact);
    write(
        root,
        "clusters/prod/apps.yaml",
        &format!(
            "{}---\n{}",
            external("apps", "./prod", "apps"),
            external("other", "./", "split")
        ),
    );
    write(
        root,
        "clusters/prod/artifacts.yaml",
        "\
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: gen
  namespace: flux-system
spec:
  sources:
    - alias: repo
      kind: GitRepository
      name: flux-system
  artifacts:
    - name: apps
      copy:
        - from: \"@repo/deploy/apps/base/**\"
          to: \"@artifact/base/\"
        - from: \"@repo/deploy/apps/prod/**\"
          to: \"@artifact/prod/\"
    - name: split
      copy:
        - from: \"@repo/deploy/apps/prod/values.yaml\"
          to: \"@artifact/values.yaml\"
",
    );
    write(
        root,
        "deploy/apps/prod/kustomization.yaml",
        "\
resources:
  - ../base
",
    );
    write(
        root,
        "deploy/apps/base/kustomization.yaml",
        "\
resources:
  - cm.yaml
",
    );
    write(root, "deploy/apps/base/cm.yaml", &configmap("app"));
    let outcome = run(root);
    let cluster = &outcome.model.clusters[0];
    let apps = &cluster.tiers[&TierId::new("flux-system", "apps")];
    assert_eq!(apps.path, "deploy/apps/prod");
    assert!(
        matches!(&apps.state, TierState::Rendered(o) if o.len() == 1),
        "{:?}",
        apps.state
    );
    // A single-file copy is no directory of the repository: not checked,
    // with the generator's file and the copy's line.
    let other = &cluster.tiers[&TierId::new("flux-system", "other")];
    assert!(
        matches!(&other.state, TierState::NotChecked(why)
            if why.contains("ArtifactGenerator flux-system/gen (clusters/prod/artifacts.yaml:")
            && why.contains("only whole directories")
            && why.contains("line 20")),
        "{:?}",
        other.state
    );
}

#[test]
fn a_gitops_subtree_pushed_as_its_own_repository_is_its_source_root() {
    // The setup pushes gitops/ as the repository Flux syncs: every
    // spec.path is relative to gitops/.
    for with_sync in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        if with_sync {
            write(
                root,
                "gitops/clusters/prod/flux-system/gotk-sync.yaml",
                &format!(
                    "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m
  url: https://git.example.com/platform/gitops
  ref:
    branch: main
---
{}",
                    ks("flux-system", "flux-system", "./clusters/prod", "")
                ),
            );
        }
        write(
            root,
            "gitops/clusters/prod/apps.yaml",
            &ks(
                "apps",
                "flux-system",
                "./apps/prod",
                "  dependsOn:
    - name: infra
",
            ),
        );
        write(
            root,
            "gitops/clusters/prod/infra.yaml",
            &ks("infra", "flux-system", "./infrastructure", ""),
        );
        write(root, "gitops/apps/prod/cm.yaml", &configmap("app"));
        write(root, "gitops/infrastructure/cm.yaml", &configmap("infra"));
        let outcome = run(root);
        assert!(
            outcome.findings.is_empty(),
            "with_sync={with_sync}: {:#?}",
            outcome.findings
        );
        assert_eq!(cluster_names(&outcome), ["prod"]);
        let prod = &outcome.model.clusters[0];
        for name in ["apps", "infra"] {
            assert!(
                matches!(
                    &prod.tiers[&TierId::new("flux-system", name)].state,
                    TierState::Rendered(objects) if objects.len() == 1
                ),
                "{name}: {:?}",
                prod.tiers[&TierId::new("flux-system", name)].state
            );
        }
        assert!(
            outcome
                .model
                .notes
                .iter()
                .any(|n| n.contains("directory gitops/")),
            "{:?}",
            outcome.model.notes
        );
    }
}
