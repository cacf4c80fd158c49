//! Discovery that does not depend on how the repository reached the disk:
//! the same clusters with no `.git`, with a remote a GitRepository names and
//! with a foreign remote (a mirror); per-cluster sources; what git would
//! commit; Kustomizations nothing applies; children of a tier that did not
//! build.

use conformance::check::Outcome;

use super::*;

/// The same files three ways: no `.git`, a `.git` whose remote is `url`,
/// and a `.git` whose remote is a GitLab mirror.
fn three_ways(write_repo: impl Fn(&Path), url: &str) -> Vec<(String, Outcome)> {
    let mut out = Vec::new();
    for remote in [None, Some(url), Some("https://gitlab.com/mirror/fleet.git")] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_repo(root);
        if let Some(remote) = remote {
            git(root, &["init", "-q"]);
            git(root, &["remote", "add", "origin", remote]);
        }
        out.push((format!("remote {remote:?}"), run(root)));
    }
    out
}

fn clusters_and_tiers(outcome: &Outcome) -> Vec<(String, Vec<String>)> {
    outcome
        .model
        .clusters
        .iter()
        .map(|c| {
            let tiers = c
                .tiers
                .iter()
                .map(|(id, t)| {
                    let state = match t.state {
                        TierState::Rendered(_) => "rendered",
                        _ => "not built",
                    };
                    format!("{}/{} {state}", id.namespace, id.name)
                })
                .collect();
            (c.name.clone(), tiers)
        })
        .collect()
}

fn git_repository(name: &str, url: &str, extra: &str) -> String {
    format!(
        "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: {name}
  namespace: flux-system
spec:
  interval: 1h
  url: {url}
  ref:
    branch: main
{extra}"
    )
}

/// The sync objects applied by hand (`kubectl apply --kustomize
/// ./flux/config`): a Kustomization that installs Flux from an OCI
/// artifact, and one that syncs this repository and depends on it.
fn hand_applied(root: &Path) {
    write(
        root,
        "flux/config/kustomization.yaml",
        "\
resources:
  - flux.yaml
  - cluster.yaml
",
    );
    write(
        root,
        "flux/config/flux.yaml",
        &format!(
            "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: flux-manifests
  namespace: flux-system
spec:
  interval: 10m
  url: oci://ghcr.io/fluxcd/flux-manifests
  ref:
    tag: v2.4.0
---
{}",
            ks_from("flux", "./", "OCIRepository", "flux-manifests")
        ),
    );
    write(
        root,
        "flux/config/cluster.yaml",
        &format!(
            "{}---\n{}",
            git_repository("home", "https://github.com/example/home", ""),
            ks_from("cluster", "./kubernetes/flux", "GitRepository", "home").replace(
                "  prune: true\n",
                "  prune: true
  dependsOn:
    - name: flux
"
            )
        ),
    );
    write(
        root,
        "kubernetes/flux/apps.yaml",
        &ks_from("apps", "./kubernetes/apps", "GitRepository", "home"),
    );
    write(root, "kubernetes/apps/cm.yaml", &configmap("apps"));
}

#[test]
fn hand_applied_sync_objects_build_this_repository_however_it_is_checked_out() {
    let runs = three_ways(hand_applied, "git@github.com:example/home.git");
    for (how, outcome) in &runs {
        assert!(
            outcome.findings.is_empty(),
            "{how}: {:#?}",
            outcome.findings
        );
        let tiers = clusters_and_tiers(outcome);
        assert_eq!(tiers.len(), 1, "{how}: {tiers:?}");
        assert!(
            tiers[0]
                .1
                .contains(&"flux-system/apps rendered".to_string()),
            "{how}: {tiers:?}"
        );
    }
    assert_eq!(
        clusters_and_tiers(&runs[0].1),
        clusters_and_tiers(&runs[1].1)
    );
    assert_eq!(
        clusters_and_tiers(&runs[0].1),
        clusters_and_tiers(&runs[2].1)
    );
    // Taken by its paths when nothing names the checkout, with the line
    // that settles it; by its URL when the remote matches.
    let taken = |o: &Outcome| {
        o.model
            .notes
            .iter()
            .any(|n| n.contains("is taken for this repository"))
    };
    assert!(taken(&runs[0].1), "{:?}", runs[0].1.model.notes);
    assert!(!taken(&runs[1].1), "{:?}", runs[1].1.model.notes);
    assert!(
        runs[0]
            .1
            .model
            .notes
            .iter()
            .any(|n| n.contains("repository: {url: https://github.com/example/home}"))
    );
}

#[test]
fn repository_url_in_the_configuration_names_this_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    hand_applied(root);
    git(root, &["init", "-q"]);
    git(
        root,
        &[
            "remote",
            "add",
            "origin",
            "https://gitea.example.org/mirror/home.git",
        ],
    );
    write(
        root,
        "conformance.yaml",
        "\
repository:
  url: https://github.com/example/home
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    assert!(
        !outcome.model.notes.iter().any(|n| n.contains("is taken")),
        "{:?}",
        outcome.model.notes
    );
    let tiers = clusters_and_tiers(&outcome);
    assert!(
        tiers[0]
            .1
            .contains(&"flux-system/apps rendered".to_string()),
        "{tiers:?}"
    );
}

#[test]
fn same_named_git_repositories_of_two_clusters_keep_their_own_ignore_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // main keeps only kubernetes/main; staging keeps all of kubernetes/,
    // and one of its tiers builds kubernetes/shared. main sorts first.
    for (cluster, ignore, extra) in [
        ("main", "/*\n    !/kubernetes/main\n", String::new()),
        (
            "staging",
            "/*\n    !/kubernetes\n",
            format!(
                "---\n{}",
                ks_from("shared", "./kubernetes/shared", "GitRepository", "ops")
            ),
        ),
    ] {
        write(
            root,
            &format!("kubernetes/{cluster}/flux/sync.yaml"),
            &format!(
                "{}---\n{}{extra}",
                git_repository(
                    "ops",
                    "https://github.com/example/ops",
                    &format!("  ignore: |\n    {ignore}")
                ),
                ks_from(
                    "cluster",
                    &format!("./kubernetes/{cluster}"),
                    "GitRepository",
                    "ops"
                )
            ),
        );
        write(
            root,
            &format!("kubernetes/{cluster}/cm.yaml"),
            &configmap(cluster),
        );
    }
    write(root, "kubernetes/shared/cm.yaml", &configmap("shared"));
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    let staging = outcome
        .model
        .clusters
        .iter()
        .find(|c| c.name == "staging")
        .unwrap();
    assert!(
        matches!(
            staging.tiers[&TierId::new("flux-system", "shared")].state,
            TierState::Rendered(_)
        ),
        "{:?}",
        staging.tiers[&TierId::new("flux-system", "shared")].state
    );
}

#[test]
fn a_git_checkout_is_read_as_git_would_commit_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(root, "apps/cm.yaml", &configmap("apps"));
    // Ignored by git: never part of what source-controller fetches.
    write(root, ".gitignore", "local/\n");
    write(root, "apps/local/secret.yaml", "this: [is not valid yaml\n");
    write(
        root,
        "local/ks.yaml",
        &ks("scratch", "flux-system", "./nowhere", ""),
    );
    let before = run(root);
    assert!(
        !before.findings.is_empty(),
        "the working tree holds a broken file"
    );
    git(root, &["init", "-q"]);
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    assert!(
        outcome.model.unreferenced.is_empty(),
        "{:?}",
        outcome.model.unreferenced
    );
}

#[test]
fn kustomizations_nothing_applies_are_listed_once_and_are_no_cluster() {
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
  - ./on/ks.yaml
  # - ./off/ks.yaml
",
    );
    write(
        root,
        "apps/on/ks.yaml",
        &ks("on", "flux-system", "./apps/on/app", ""),
    );
    write(root, "apps/on/app/cm.yaml", &configmap("on"));
    write(
        root,
        "apps/off/ks.yaml",
        &ks("off", "flux-system", "./apps/off/app", ""),
    );
    write(root, "apps/off/app/cm.yaml", &configmap("off"));
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    assert_eq!(cluster_names(&outcome), vec!["prod"]);
    let listed: Vec<&str> = outcome
        .model
        .unreferenced
        .iter()
        .map(|u| u.at.file.as_str())
        .collect();
    assert_eq!(listed, vec!["apps/off/ks.yaml"]);
    assert_eq!(
        outcome
            .model
            .notes
            .iter()
            .filter(|n| n.contains("no cluster applies"))
            .count(),
        1,
        "{:?}",
        outcome.model.notes
    );
}

#[test]
fn a_repository_a_fleet_syncs_is_checked_from_the_entry_the_command_line_names() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "deploy/prod/kustomization.yaml",
        "\
resources:
  - cm.yaml
",
    );
    write(root, "deploy/prod/cm.yaml", &configmap("team-a"));
    // Without an entry: exit 2, naming the line that settles it.
    let err = run_with_entries(root, &[]).unwrap_err().to_string();
    assert!(err.contains("clusters: {NAME: {entry: DIR}}"), "{err}");
    assert!(err.contains("--entry DIR"), "{err}");
    // With one: the directory is built and checked like a tier.
    let outcome = run_with_entries(root, &["./deploy/prod"]).unwrap();
    assert_eq!(cluster_names(&outcome), vec!["prod"]);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    let objects = match &outcome.model.clusters[0]
        .tiers
        .values()
        .next()
        .unwrap()
        .state
    {
        TierState::Rendered(objects) => objects.len(),
        other => panic!("{other:?}"),
    };
    assert_eq!(objects, 1);
    // A broken object in it is found as in any tier.
    write(
        root,
        "deploy/prod/cm.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: [a
",
    );
    let outcome = run_with_entries(root, &["deploy/prod"]).unwrap();
    assert!(!outcome.findings.is_empty());
    // An entry that is not a directory of the repository is refused.
    let err = run_with_entries(root, &["deploy/dev"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("--entry deploy/dev: not a directory"), "{err}");
    write(
        root,
        "conformance.yaml",
        "\
clusters:
  dev:
    entry: deploy/dev
",
    );
    let err = run_with_entries(root, &[]).unwrap_err().to_string();
    assert!(err.contains("line 3") || err.contains(":3"), "{err}");
    assert!(
        err.contains("clusters.dev.entry `deploy/dev` is not a directory"),
        "{err}"
    );
}

#[test]
fn a_mirror_keeps_the_repository_name_that_tells_which_git_repository_is_this_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Two repositories sync the same path; `a-media`, the other one, is
    // met first.
    write(
        root,
        "kubernetes/flux/kustomization.yaml",
        "\
resources:
  - ./apps.yaml
",
    );
    write(
        root,
        "kubernetes/flux/config/kustomization.yaml",
        "\
resources:
  - a-media.yaml
  - cluster.yaml
",
    );
    for (file, source, url) in [
        ("a-media", "media", "https://github.com/example/media"),
        ("cluster", "ops", "https://github.com/example/ops"),
    ] {
        write(
            root,
            &format!("kubernetes/flux/config/{file}.yaml"),
            &format!(
                "{}---\n{}",
                git_repository(source, url, ""),
                ks_from(file, "./kubernetes/flux", "GitRepository", source)
            ),
        );
    }
    write(
        root,
        "kubernetes/flux/apps.yaml",
        &ks_from("apps", "./kubernetes/apps", "GitRepository", "ops"),
    );
    write(root, "kubernetes/apps/cm.yaml", &configmap("apps"));
    git(root, &["init", "-q"]);
    git(
        root,
        &[
            "remote",
            "add",
            "origin",
            "https://gitea.example.org/mirror/ops.git",
        ],
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    let tiers = clusters_and_tiers(&outcome);
    assert_eq!(tiers.len(), 1, "{tiers:?}");
    assert!(
        tiers[0]
            .1
            .contains(&"flux-system/a-media not built".to_string())
            && tiers[0]
                .1
                .contains(&"flux-system/apps rendered".to_string()),
        "{tiers:?}"
    );
}
