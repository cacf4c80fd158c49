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
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: same-repo\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: ssh://git@github.com/example/fleet\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: other\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: https://github.com/example/other\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: oci://ghcr.io/example/fleet\n",
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
        "resources:\n  - app/ks.yaml\n",
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
        "sources:\n  - kind: OCIRepository\n    name: flux-system\n    path: kubernetes\n",
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
        "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: gen\n  namespace: flux-system\nspec:\n  sources:\n    - alias: repo\n      kind: GitRepository\n      name: flux-system\n  artifacts:\n    - name: apps\n      copy:\n        - from: \"@repo/deploy/apps/base/**\"\n          to: \"@artifact/base/\"\n        - from: \"@repo/deploy/apps/prod/**\"\n          to: \"@artifact/prod/\"\n    - name: split\n      copy:\n        - from: \"@repo/deploy/apps/prod/values.yaml\"\n          to: \"@artifact/values.yaml\"\n",
    );
    write(
        root,
        "deploy/apps/prod/kustomization.yaml",
        "resources:\n  - ../base\n",
    );
    write(
        root,
        "deploy/apps/base/kustomization.yaml",
        "resources:\n  - cm.yaml\n",
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
                    "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  url: https://git.example.com/platform/gitops\n  ref:\n    branch: main\n---\n{}",
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
                "  dependsOn:\n    - name: infra\n",
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
