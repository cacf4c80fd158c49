//! The Flux Operator: FluxInstance sync paths, names and patches as entries.

use super::*;

#[test]
fn flux_operator_layout_enters_by_the_unreferenced_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // No sync Kustomization in git: kubernetes/flux/cluster is the FluxInstance's sync path.
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
namespace: media
resources:
  - ./plex/ks.yaml
",
    );
    write(
        root,
        "kubernetes/apps/plex/ks.yaml",
        &ks("plex", "ignored", "./kubernetes/apps/plex/app", ""),
    );
    write(root, "kubernetes/apps/plex/app/cm.yaml", &configmap("plex"));
    let outcome = run(root);
    assert_eq!(outcome.model.clusters.len(), 1);
    let cluster = &outcome.model.clusters[0];
    assert_eq!(cluster.name, "cluster");
    assert_eq!(
        cluster.entry,
        Entry::Directory {
            path: "kubernetes/flux/cluster".into()
        }
    );
    // kustomize's namespace transformer moved plex into media.
    let plex = &cluster.tiers[&TierId::new("media", "plex")];
    assert!(
        matches!(&plex.state, TierState::Rendered(o) if o.len() == 1),
        "{:?}",
        plex.state
    );
    assert_eq!(cluster.tiers.len(), 3);
}

#[test]
fn a_flux_instance_sync_path_is_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // No sync Kustomization in git; the flux-instance chart's values say
    // the cluster syncs kubernetes/flux/cluster. apps/disabled holds a Flux
    // Kustomization no build includes (commented out of its overlay): it is
    // not a cluster, although nothing else shows that.
    write(
        root,
        "kubernetes/apps/flux-system/flux-instance/helmrelease.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: flux-instance
  namespace: flux-system
spec:
  chartRef:
    kind: OCIRepository
    name: flux-instance
  values:
    instance:
      sync:
        kind: GitRepository
        url: https://github.com/example/fleet
        ref: refs/heads/main
        path: kubernetes/flux/cluster
      kustomize:
        patches:
          - patch: |-
              apiVersion: kustomize.toolkit.fluxcd.io/v1
              kind: Kustomization
              metadata:
                name: flux-system
              spec:
                decryption:
                  provider: sops
            target:
              kind: Kustomization
              name: flux-system
",
    );
    write(
        root,
        "kubernetes/flux/cluster/ks.yaml",
        &ks(
            "cluster-apps",
            "flux-system",
            "./kubernetes/apps/flux-system",
            "",
        ),
    );
    write(
        root,
        "kubernetes/apps/flux-system/resourceset.yaml",
        "\
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: previews
  namespace: flux-system
spec:
  resources: []
",
    );
    write(
        root,
        "kubernetes/disabled/old/ks.yaml",
        &ks("old", "flux-system", "./kubernetes/disabled/old/app", ""),
    );
    write(
        root,
        "kubernetes/disabled/old/app/cm.yaml",
        &configmap("old"),
    );
    let outcome = run(root);
    let entries: Vec<&Entry> = outcome.model.clusters.iter().map(|c| &c.entry).collect();
    assert_eq!(
        entries,
        [&Entry::Directory {
            path: "kubernetes/flux/cluster".into()
        }]
    );
    // The operator that syncs the cluster has its CRDs (ResourceSet) from
    // the start.
    assert!(
        !rules(&outcome)
            .iter()
            .any(|(rule, _, _)| *rule == "crd-unavailable"),
        "{:#?}",
        outcome.findings
    );
    // The instance's kustomize.patches patch the sync Kustomization too.
    let root_tier = &outcome.model.clusters[0].tiers[&TierId::new("flux-system", "flux-system")];
    assert_eq!(
        root_tier
            .decryption
            .as_ref()
            .and_then(|d| d.str_at(&["provider"]))
            .as_deref(),
        Some("sops")
    );
    // A sync path that does not exist is ignored: discovery falls back to
    // unreferenced directories (both, here).
    write(
        root,
        "kubernetes/apps/flux-system/flux-instance/helmrelease.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: flux-instance
  namespace: flux-system
spec:
  values:
    instance:
      sync:
        kind: GitRepository
        path: kubernetes/flux/gone
",
    );
    assert_eq!(run(root).model.clusters.len(), 2);
}

#[test]
fn a_flux_instance_sync_name_names_the_source_of_this_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // sync.name renames the GitRepository (and Kustomization) the operator
    // creates; Kustomizations refer to this repository by that name.
    write(
        root,
        "kubernetes/apps/flux-system/flux-instance/values.yaml",
        "\
instance:
  sync:
    kind: GitRepository
    name: home
    url: https://github.com/example/home
    ref: refs/heads/main
    path: kubernetes/flux/cluster
",
    );
    write(
        root,
        "kubernetes/flux/cluster/ks.yaml",
        &ks_from(
            "cluster-apps",
            "./kubernetes/apps/web",
            "GitRepository",
            "home",
        ),
    );
    write(root, "kubernetes/apps/web/cm.yaml", &configmap("web"));
    let outcome = run(root);
    let cluster = &outcome.model.clusters[0];
    assert!(
        cluster
            .tiers
            .contains_key(&TierId::new("flux-system", "home"))
    );
    let apps = &cluster.tiers[&TierId::new("flux-system", "cluster-apps")];
    assert!(
        matches!(&apps.state, TierState::Rendered(o) if o.len() == 1),
        "{:?}",
        apps.state
    );
}

#[test]
fn an_oci_sync_whose_path_holds_its_own_flux_instance_is_this_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // CI pushes kubernetes/ as the artifact; the FluxInstance syncs
    // clusters/prod in it, which is where the instance itself lives. So the
    // artifact's root can only be kubernetes/: no `sources` needed.
    write(
        root,
        "kubernetes/clusters/prod/flux-system/instance.yaml",
        "\
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: \"2.x\"
  sync:
    kind: OCIRepository
    url: oci://ghcr.io/example/fleet
    ref: latest
    path: clusters/prod
",
    );
    let oci = |name: &str, path: &str| ks_from(name, path, "OCIRepository", "flux-system");
    write(
        root,
        "kubernetes/clusters/prod/apps.yaml",
        &oci("apps", "./apps"),
    );
    write(root, "kubernetes/apps/cm.yaml", &configmap("app"));
    let outcome = run(root);
    let names = cluster_names(&outcome);
    assert_eq!(names, ["prod"]);
    let apps = &outcome.model.clusters[0].tiers[&TierId::new("flux-system", "apps")];
    assert_eq!(apps.path, "kubernetes/apps");
    assert!(
        matches!(&apps.state, TierState::Rendered(o) if o.len() == 1),
        "{:?}",
        apps.state
    );
}

#[test]
fn a_flux_instance_patch_that_does_not_apply_fails_the_entry_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A JSON 6902 remove of a field the sync Kustomization does not have:
    // the operator cannot build its manifests, so nothing is synced.
    write(
        root,
        "flux/instance.yaml",
        "\
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  sync:
    kind: GitRepository
    url: https://github.com/example/fleet
    ref: refs/heads/main
    path: clusters/prod
  kustomize:
    patches:
      - patch: |
          - op: remove
            path: /spec/nothere
        target:
          kind: Kustomization
",
    );
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(root, "apps/cm.yaml", &configmap("app"));
    let outcome = run(root);
    let cluster = &outcome.model.clusters[0];
    let entry = &cluster.tiers[&TierId::new("flux-system", "flux-system")];
    let TierState::RenderFailed(failure) = &entry.state else {
        panic!("{:?}", entry.state);
    };
    assert!(
        failure.message.contains("kustomize.patches"),
        "{}",
        failure.message
    );
    let at = failure.at.as_ref().unwrap();
    assert_eq!((at.file.as_str(), at.line), ("flux/instance.yaml", 14));
    assert!(
        rules(&outcome).contains(&("render-failed", "prod", "flux-system")),
        "{:#?}",
        outcome.findings
    );
}

#[test]
fn a_flux_instance_cluster_beside_a_bootstrapped_one_and_its_self_containing_tiers() {
    // dev is bootstrapped with `flux bootstrap` (gotk-sync.yaml); prod by
    // the Flux Operator (a FluxInstance values file names its sync path).
    // prod renders an app whose path holds its own ks.yaml: a tier of prod,
    // not a cluster of its own.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/dev");
    write(
        root,
        "clusters/dev/apps.yaml",
        &ks("apps", "flux-system", "./apps/dev", ""),
    );
    write(root, "apps/dev/cm.yaml", &configmap("dev"));
    write(
        root,
        "platform/flux-instance/prod/instance.yaml",
        "\
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: \"2.x\"
  sync:
    kind: GitRepository
    url: https://github.com/example/fleet
    ref: refs/heads/main
    path: clusters/prod
",
    );
    write(
        root,
        "clusters/prod/kustomization.yaml",
        "\
resources:
  - ../../apps/prod/dns/ks.yaml
",
    );
    write(
        root,
        "apps/prod/dns/ks.yaml",
        &ks("dns", "flux-system", "./apps/prod/dns", ""),
    );
    write(root, "apps/prod/dns/cm.yaml", &configmap("dns"));
    let outcome = run(root);
    let mut names = cluster_names(&outcome);
    names.sort();
    assert_eq!(
        names,
        ["dev", "prod"],
        "{:#?}",
        outcome
            .model
            .clusters
            .iter()
            .map(|c| &c.entry)
            .collect::<Vec<_>>()
    );
    let prod = outcome
        .model
        .clusters
        .iter()
        .find(|c| c.name == "prod")
        .unwrap();
    assert!(prod.tiers.contains_key(&TierId::new("flux-system", "dns")));
}

/// Issue 28: a FluxInstance sync path with a variable
/// (`kubernetes/clusters/${CLUSTER}/bootstrap`, which the Kustomization
/// applying the instance substitutes) was exit 2, nothing checked. Each
/// directory the variable can name is a cluster, and a note says which
/// variable and which directories.
#[test]
fn a_variable_flux_instance_sync_path_is_each_directory_it_can_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "kubernetes/apps/flux-system/flux-instance/helmrelease.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: flux-instance
  namespace: flux-system
spec:
  chartRef:
    kind: OCIRepository
    name: flux-instance
  values:
    instance:
      sync:
        kind: GitRepository
        url: https://github.com/example/home
        ref: refs/heads/main
        path: \"kubernetes/clusters/${CLUSTER}/bootstrap\"
",
    );
    for cluster in ["home", "lab"] {
        write(
            root,
            &format!("kubernetes/clusters/{cluster}/bootstrap/ks.yaml"),
            &ks(
                "apps",
                "flux-system",
                &format!("./kubernetes/clusters/{cluster}/apps"),
                "",
            ),
        );
        write(
            root,
            &format!("kubernetes/clusters/{cluster}/apps/cm.yaml"),
            &configmap(cluster),
        );
    }
    let outcome = run(root);
    let mut entries: Vec<&str> = outcome
        .model
        .clusters
        .iter()
        .map(|c| c.entry.path())
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        [
            "kubernetes/clusters/home/bootstrap",
            "kubernetes/clusters/lab/bootstrap"
        ]
    );
    assert!(
        outcome
            .model
            .notes
            .iter()
            .any(|n| n.contains("needs `CLUSTER`")
                && n.contains(
                    "kubernetes/clusters/home/bootstrap, kubernetes/clusters/lab/bootstrap"
                )),
        "{:?}",
        outcome.model.notes
    );

    // conformance.yaml gives the value: that cluster only, by its name.
    write(
        root,
        "conformance.yaml",
        "clusters:
  production:
    vars:
      CLUSTER: home
",
    );
    let outcome = run(root);
    let clusters: Vec<(&str, &str)> = outcome
        .model
        .clusters
        .iter()
        .map(|c| (c.name.as_str(), c.entry.path()))
        .collect();
    assert_eq!(
        clusters,
        [("production", "kubernetes/clusters/home/bootstrap")]
    );
    assert!(
        outcome
            .model
            .notes
            .iter()
            .any(|n| n.contains("filled in from clusters.<name>.vars")
                && n.contains("production: kubernetes/clusters/home/bootstrap")),
        "{:?}",
        outcome.model.notes
    );
    // A value naming no directory says so.
    write(
        root,
        "conformance.yaml",
        "\
clusters:
  production:
    vars:
      CLUSTER: nowhere
",
    );
    let outcome = run_result(root);
    let notes = match &outcome {
        Ok(o) => o.model.notes.join("\n"),
        Err(e) => e.to_string(),
    };
    assert!(
        notes.contains("kubernetes/clusters/nowhere/bootstrap"),
        "{notes}"
    );
}

/// A ResourceSet may generate the Kustomization a `dependsOn` names, so
/// that dependency-missing is only a warning beside one; but one that
/// renders only other kinds (an ExternalSecret per database user) cannot,
/// and the missing dependency stays an error (found on a public home lab,
/// where the excuse let a typo through a baseline).
#[test]
fn only_a_resource_set_that_renders_kustomizations_excuses_a_missing_dependency() {
    let with_template = |template: &str| {
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
                "  dependsOn:\n    - name: nowhere\n",
            ),
        );
        write(root, "apps/cm.yaml", &configmap("a"));
        write(
            root,
            "clusters/prod/resourceset.yaml",
            &format!(
                "\
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: generated
  namespace: flux-system
spec:
  inputs:
    - name: one
  resourcesTemplate: |
{}
",
                template
                    .lines()
                    .map(|l| format!("    {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        );
        let outcome = run(root);
        outcome
            .findings
            .iter()
            .find(|f| f.rule().as_str() == "dependency-missing")
            .map(|f| f.severity())
            .expect("a dependency-missing finding")
    };
    let secrets_only = "\
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: << inputs.name >>
  namespace: flux-system
spec: {}";
    assert_eq!(
        with_template(secrets_only),
        conformance::rules::Severity::Error
    );
    let kustomizations = "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: << inputs.name >>
  namespace: flux-system
spec: {}";
    assert_eq!(
        with_template(kustomizations),
        conformance::rules::Severity::Warning
    );
}
