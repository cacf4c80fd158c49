//! Discovery on small repositories written by each test: entries, cluster
//! names, dependsOn namespaces, sources that are not this repository,
//! duplicate names, Flux's generated kustomization.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;

use conformance::check::{CheckOptions, check};
use conformance::model::{Entry, TierId, TierState};

use crate::support::*;

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
                "  dependsOn:\n    - name: infra\n      namespace: infra-system\n"
            ),
            ks(
                "web",
                "flux-system",
                "./web",
                "  dependsOn:\n    - name: infra\n"
            ),
        ),
    );
    write(
        root,
        "clusters/prod/ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra-system\n",
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
fn sources_that_are_not_this_repository_are_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/sources.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: same-repo\n  namespace: flux-system\nspec:\n  url: ssh://git@github.com/example/fleet\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: other\n  namespace: flux-system\nspec:\n  url: https://github.com/example/other\n",
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
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: media\nresources:\n  - ./plex/ks.yaml\n",
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
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ./plex/ks.yaml\n",
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
fn directories_without_kustomization_get_flux_generated_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", "  targetNamespace: web\n"),
    );
    write(
        root,
        "clusters/prod/ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n",
    );
    write(root, "apps/a.yaml", &configmap("a"));
    write(root, "apps/nested/b.yml", &configmap("b"));
    write(root, "apps/notes.txt", "not yaml");
    // A subdirectory with its own kustomization is one resource.
    write(
        root,
        "apps/sub/kustomization.yaml",
        "resources:\n  - c.yaml\nnamePrefix: sub-\n",
    );
    write(root, "apps/sub/c.yaml", &configmap("c"));
    write(root, "apps/sub/ignored.yaml", &configmap("ignored"));
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    let apps = &outcome.model.clusters[0].tiers[&TierId::new("flux-system", "apps")];
    let mut ids: Vec<String> = apps.objects().iter().map(|o| o.id.to_string()).collect();
    ids.sort();
    assert_eq!(
        ids,
        ["ConfigMap/web/a", "ConfigMap/web/b", "ConfigMap/web/sub-c"]
    );
    let labels = apps.objects()[0]
        .body
        .path(&["metadata", "labels"])
        .unwrap();
    assert_eq!(
        labels
            .str_at(&["kustomize.toolkit.fluxcd.io/name"])
            .as_deref(),
        Some("apps")
    );
}

#[test]
fn a_file_flux_cannot_decode_fails_the_tier_at_its_line() {
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
        "apps/a.yaml",
        &format!("{}---\nfoo: bar\n", configmap("a")),
    );
    let outcome = run(root);
    assert_eq!(rules(&outcome), [("render-failed", "prod", "apps")]);
    let at = outcome.findings[0].at().unwrap();
    assert_eq!((at.file.as_str(), at.line), ("apps/a.yaml", 9));
    assert!(
        outcome.findings[0].message().contains("missing kind"),
        "{}",
        outcome.findings[0].message()
    );
}

#[test]
fn missing_path_is_render_failed_and_remote_base_is_its_own_finding_without_network() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!(
            "{}---\n{}",
            ks("gone", "flux-system", "./nowhere", ""),
            ks("remote", "flux-system", "./snap", "")
        ),
    );
    write(
        root,
        "snap/kustomization.yaml",
        "resources:\n  - https://github.com/kubernetes-csi/external-snapshotter//client/config/crd?ref=v8.2.0\n",
    );
    let outcome = run(root);
    assert_eq!(
        rules(&outcome),
        [
            ("render-failed", "prod", "gone"),
            ("remote-base", "prod", "remote")
        ]
    );
    assert!(
        outcome.findings[0]
            .message()
            .contains("kustomization path not found: ./nowhere")
    );
    let remote = &outcome.findings[1];
    assert!(
        remote.message().contains("github.com/kubernetes-csi"),
        "{}",
        remote.message()
    );
    assert_eq!(remote.at().unwrap().file, "snap/kustomization.yaml");
    assert_eq!(remote.at().unwrap().line, 2);
    let tier = &outcome.model.clusters[0].tiers[&TierId::new("flux-system", "remote")];
    assert!(
        matches!(&tier.state, TierState::NotChecked(reason) if reason.contains("remote bases"))
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
fn a_crd_and_its_custom_resource_in_one_tier_pass() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("widgets", "flux-system", "./widgets", ""),
    );
    write(
        root,
        "widgets/crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names:\n    kind: Widget\n    plural: widgets\n  scope: Namespaced\n  versions:\n    - name: v1\n      served: true\n      storage: true\n",
    );
    write(
        root,
        "widgets/widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
}

#[test]
fn a_kind_nobody_provides_is_unavailable_unless_declared_preinstalled() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("widgets", "flux-system", "./widgets", ""),
    );
    write(
        root,
        "widgets/widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\n",
    );
    assert_eq!(rules(&run(root)), [("crd-unavailable", "prod", "widgets")]);
    write(
        root,
        "conformance.yaml",
        "catalog:\n  preinstalled:\n    - example.com\n",
    );
    assert!(run(root).findings.is_empty());
}

#[test]
fn chart_kinds_need_a_health_gated_dependency_on_the_helmrelease() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    helm_repository(root, "cm", "cert-manager", "jetstack");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!(
            "{}---\n{}",
            ks(
                "cert-manager",
                "flux-system",
                "./cm",
                "  healthChecks:\n    - apiVersion: helm.toolkit.fluxcd.io/v2\n      kind: HelmRelease\n      name: cert-manager\n      namespace: cert-manager\n"
            ),
            ks(
                "issuers",
                "flux-system",
                "./issuers",
                "  dependsOn:\n    - name: cert-manager\n"
            ),
        ),
    );
    write(
        root,
        "cm/release.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cert-manager\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: cert-manager\n  namespace: cert-manager\nspec:\n  values:\n    crds:\n      enabled: true\n  chart:\n    spec:\n      chart: cert-manager\n      sourceRef:\n        kind: HelmRepository\n        name: jetstack\n",
    );
    write(
        root,
        "issuers/issuer.yaml",
        "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: ca\nspec:\n  selfSigned: {}\n",
    );
    // healthChecks names the HelmRelease: gated, so the ClusterIssuer is fine.
    assert!(run(root).findings.is_empty(), "{:#?}", run(root).findings);
    // Without the healthCheck (and wait: false) the issuers race helm-controller.
    let tiers = std::fs::read_to_string(root.join("clusters/prod/tiers.yaml")).unwrap();
    let ungated = tiers.replace(
        "      name: cert-manager\n      namespace: cert-manager\n",
        "      name: other\n      namespace: cert-manager\n",
    );
    write(root, "clusters/prod/tiers.yaml", &ungated);
    assert_eq!(rules(&run(root)), [("health-gate", "prod", "issuers")]);
    // In the same tier as the HelmRelease it can never converge.
    std::fs::rename(
        root.join("issuers/issuer.yaml"),
        root.join("cm/issuer.yaml"),
    )
    .unwrap();
    assert_eq!(
        rules(&run(root)),
        [("second-order-crd", "prod", "cert-manager")]
    );
}

#[test]
fn crds_command_prints_the_audit() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/incidents/cdi-storageprofile-same-tier/repo");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["crds", "--cluster", "prod", "--repo"])
        .arg(&repo)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with("platform-config ")
            && l.contains("cdi.kubevirt.io/StorageProfile")
            && l.contains("cdi-operator after CDI/cdi in platform-config (same tier)")
            && l.ends_with("deadlock (second-order-crd)")),
        "{text}"
    );
    assert!(
        text.contains("  platform-config: StorageProfile\n"),
        "{text}"
    );
}

#[test]
fn postbuild_substitution_reaches_every_rule_and_the_audit() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/reference-platform");
    let outcome = run(&repo);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    let cluster = |name: &str| {
        outcome
            .model
            .clusters
            .iter()
            .find(|c| c.name == name)
            .unwrap()
    };
    let object =
        |c: &str, tier: &str, kind: &str, name: &str| cluster_obj(cluster(c), tier, kind, name);
    fn cluster_obj(
        c: &conformance::model::Cluster,
        tier: &str,
        kind: &str,
        name: &str,
    ) -> conformance::yaml::Node {
        c.tiers[&TierId::new("flux-system", tier)]
            .objects()
            .iter()
            .find(|o| o.id.kind == kind && o.id.name == name)
            .unwrap()
            .body
            .clone()
    }
    // substituteFrom cluster-vars, per cluster.
    let pool = |c: &str| object(c, "platform-config", "CiliumLoadBalancerIPPool", "default");
    let cidr = |c: &str| pool(c).path(&["spec", "blocks"]).unwrap().as_seq()[0].str_at(&["cidr"]);
    assert_eq!(cidr("prod").as_deref(), Some("10.10.0.200/28"));
    assert_eq!(cidr("dev").as_deref(), Some("10.20.0.200/29"));
    // A default, retyped as Flux's YAML round trip does.
    let vm = object("prod", "apps-vms", "VirtualMachine", "unifi");
    assert_eq!(
        vm.path(&["spec", "template", "spec", "domain", "cpu", "cores"])
            .unwrap()
            .value,
        conformance::yaml::Value::Int(2)
    );
    // $${...} escapes become ${...}.
    let init = object("prod", "apps-vms", "Secret", "unifi-cloud-init");
    let userdata = init.str_at(&["stringData", "userdata"]).unwrap();
    assert!(userdata.contains("for ${USER} in ${HOME}"), "{userdata}");
    assert!(
        userdata.contains("hostname: unifi.example.internal"),
        "{userdata}"
    );
    // The seed's audit line.
    let cdi = &cluster("prod").tiers[&TierId::new("flux-system", "platform-config-cdi")];
    assert_eq!(cdi.files_read, 2);
    assert_eq!(cdi.substitution.defined.len(), 0);
    assert!(cdi.substitution.hazards.is_empty());
}

#[test]
fn unsupported_kustomize_features_are_named_and_auto_hands_them_to_kustomize() {
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
        "apps/kustomization.yaml",
        "resources:\n  - cm.yaml\nvars:\n  - name: APP\n    objref:\n      kind: ConfigMap\n      name: app\n      apiVersion: v1\n",
    );
    let native = run(root);
    assert_eq!(rules(&native), [("render-failed", "prod", "apps")]);
    let message = &native.findings[0].message();
    assert!(
        message.contains("unsupported: vars in apps/kustomization.yaml:4"),
        "{message}"
    );
    let auto = check(&CheckOptions {
        repo: root.to_path_buf(),
        clusters: vec![],
        renderer: Some(conformance::render::Choice::Auto),
        base: None,
    })
    .unwrap();
    assert!(auto.findings.is_empty(), "{:#?}", auto.findings);
    assert_eq!(auto.fallbacks.len(), 1, "{:?}", auto.fallbacks);
    assert!(
        auto.fallbacks[0].contains("took over: unsupported: vars"),
        "{:?}",
        auto.fallbacks
    );
}

#[test]
fn symlinks_out_of_the_repository_are_reported_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.yaml", &configmap("outside"));
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
        "resources:\n  - linked.yaml\n",
    );
    std::os::unix::fs::symlink(
        outside.path().join("secret.yaml"),
        root.join("apps/linked.yaml"),
    )
    .unwrap();
    let outcome = run(root);
    assert_eq!(rules(&outcome), [("render-failed", "prod", "apps")]);
    assert!(
        outcome.findings[0].message().contains(
            "is a symlink, and source-controller archives regular files and directories only"
        ),
        "{}",
        outcome.findings[0].message()
    );
}

#[test]
fn cyclic_kustomizations_are_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./a", ""),
    );
    write(root, "a/kustomization.yaml", "resources:\n  - ../b\n");
    write(root, "b/kustomization.yaml", "resources:\n  - ../a\n");
    let outcome = run(root);
    assert_eq!(rules(&outcome), [("render-failed", "prod", "apps")]);
    assert!(
        outcome.findings[0]
            .message()
            .contains("cyclic kustomization reference"),
        "{}",
        outcome.findings[0].message()
    );
}

#[test]
fn a_bad_patch_names_its_file_and_line() {
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
        "apps/kustomization.yaml",
        "resources:\n  - cm.yaml\npatches:\n  - path: fix.yaml\n    target:\n      kind: ConfigMap\n",
    );
    write(
        root,
        "apps/fix.yaml",
        "- op: remove\n  path: /data/missing\n",
    );
    let outcome = run(root);
    assert_eq!(rules(&outcome), [("render-failed", "prod", "apps")]);
    let message = &outcome.findings[0].message();
    assert!(
        message.contains("fix.yaml") && message.contains("apps/kustomization.yaml:4"),
        "{message}"
    );
}

/// Malformed kustomizations and Flux objects never panic: each ends as a
/// finding (usually render-failed with the file) or a clean run.
#[test]
fn malformed_inputs_never_panic() {
    let kustomizations = [
        "resources: 5\n",
        "resources: [ {a: b} ]\n",
        "patches: \"not a list\"\n",
        "patches:\n  - target: 7\n    patch: 3\n",
        "patches:\n  - patch: \"- op: remove\\n  path: /nope\"\n    target: {kind: ConfigMap}\n",
        "patches:\n  - patch: \"kind: ConfigMap\\nmetadata: {name: nope}\\n\"\n",
        "patchesStrategicMerge:\n  - \"kind: Nope\"\n",
        "configMapGenerator:\n  - literals: [a=b]\n",
        "configMapGenerator:\n  - name: x\n    literals: [=b]\n",
        "configMapGenerator:\n  - name: x\n    files: [missing.txt]\n",
        "secretGenerator:\n  - name: x\n    envs: [missing.env]\n",
        "namespace: [a]\nnamePrefix: {b: c}\n",
        "images:\n  - name: \"(\"\n    newTag: x\n",
        "replicas:\n  - name: nothing\n    count: two\n",
        "replacements:\n  - source: {kind: Nope}\n    targets: []\n",
        "components: [../nowhere]\n",
        "labels:\n  - pairs: 5\n",
        "commonLabels: [x]\n",
        "unknownField: 1\n",
        "- just\n- a list\n",
        "kind: Component\n",
        "resources:\n  - ../../../../../../etc\n",
    ];
    for (i, k) in kustomizations.iter().enumerate() {
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
            "apps/kustomization.yaml",
            &format!("resources: [cm.yaml]\n{k}"),
        );
        let outcome = check(&CheckOptions {
            repo: root.to_path_buf(),
            clusters: vec![],
            renderer: None,
            base: None,
        });
        match outcome {
            // Each of these fails kustomize's own build too: a render-failed
            // finding on the tier, pointing at a file.
            Ok(o) => {
                assert_eq!(
                    rules(&o),
                    [("render-failed", "prod", "apps")],
                    "case {i} ({k:?}): {:#?}",
                    o.findings
                );
                assert!(
                    o.findings[0]
                        .at()
                        .is_some_and(|a| a.file.starts_with("apps/")),
                    "case {i}: {:#?}",
                    o.findings[0]
                );
            }
            Err(e) => panic!("case {i} ({k:?}): the run itself failed: {e}"),
        }
    }
    // Flux objects with wrong types.
    let flux = [
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: a, namespace: flux-system}\nspec: 5\n",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: a, namespace: flux-system}\nspec:\n  path: [x]\n  dependsOn: {name: b}\n  sourceRef: oops\n",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: a, namespace: flux-system}\nspec:\n  path: ./apps\n  postBuild: {substitute: [1], substituteFrom: {kind: ConfigMap}}\n  healthChecks: 3\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    ];
    for (i, doc) in flux.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        sync(root, "clusters/prod");
        write(root, "clusters/prod/apps.yaml", doc);
        write(root, "apps/cm.yaml", &configmap("app"));
        if let Err(e) = run_result(root) {
            panic!("flux case {i}: the run itself failed: {e}");
        }
    }
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
            "  kubeConfig:\n    secretRef:\n      name: cluster-kubeconfig\n",
        )
    };
    write(
        root,
        "clusters/hub/spokes.yaml",
        &format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: staging\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: production\n---\n{}---\n{}",
            remote("tenants", "staging"),
            remote("tenants", "production")
        ),
    );
    write(
        root,
        "spoke/ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: podinfo\n",
    );
    write(
        root,
        "spoke/widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: podinfo\n",
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
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: flux-instance\n  namespace: flux-system\nspec:\n  chartRef:\n    kind: OCIRepository\n    name: flux-instance\n  values:\n    instance:\n      sync:\n        kind: GitRepository\n        url: https://github.com/example/fleet\n        ref: refs/heads/main\n        path: kubernetes/flux/cluster\n      kustomize:\n        patches:\n          - patch: |-\n              apiVersion: kustomize.toolkit.fluxcd.io/v1\n              kind: Kustomization\n              metadata:\n                name: flux-system\n              spec:\n                decryption:\n                  provider: sops\n            target:\n              kind: Kustomization\n              name: flux-system\n",
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
        "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata:\n  name: previews\n  namespace: flux-system\nspec:\n  resources: []\n",
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
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: flux-instance\n  namespace: flux-system\nspec:\n  values:\n    instance:\n      sync:\n        kind: GitRepository\n        path: kubernetes/flux/gone\n",
    );
    assert_eq!(run(root).model.clusters.len(), 2);
}

#[test]
fn a_directory_copied_into_its_own_path_builds_when_it_stays_inside() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    // source-watcher copies `@repo/apps/web/app/` as a subdirectory: the
    // artifact holds apps/web/app/app/. Flux's generated kustomization for
    // the Kustomization's path (apps/web/app) builds just that copy.
    let external = |name: &str, path: &str| ks_from(name, path, "ExternalArtifact", name);
    write(
        root,
        "clusters/prod/apps.yaml",
        &format!(
            "{}---\n{}---\n{}",
            external("web", "./apps/web/app"),
            external("api", "./apps/api/app"),
            // Same artifact as api, a path it does not hold: its own reason.
            ks_from("api-missing", "./apps/missing", "ExternalArtifact", "api")
        ),
    );
    write(
        root,
        "clusters/prod/artifacts.yaml",
        "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: gen\n  namespace: flux-system\nspec:\n  sources:\n    - alias: repo\n      kind: GitRepository\n      name: flux-system\n  artifacts:\n    - name: web\n      copy:\n        - from: \"@repo/apps/web/app/\"\n          to: \"@artifact/apps/web/app/\"\n    - name: api\n      copy:\n        - from: \"@repo/apps/api/app/\"\n          to: \"@artifact/apps/api/app/\"\n",
    );
    write(
        root,
        "apps/web/app/kustomization.yaml",
        "resources:\n  - cm.yaml\n",
    );
    write(root, "apps/web/app/cm.yaml", &configmap("web"));
    // api's build reads ../shared, which the artifact does not hold.
    write(
        root,
        "apps/api/app/kustomization.yaml",
        "resources:\n  - ../shared\n",
    );
    write(
        root,
        "apps/api/shared/kustomization.yaml",
        "resources:\n  - cm.yaml\n",
    );
    write(root, "apps/api/shared/cm.yaml", &configmap("api"));
    let outcome = run(root);
    let cluster = &outcome.model.clusters[0];
    let web = &cluster.tiers[&TierId::new("flux-system", "web")];
    assert_eq!(web.path, "apps/web/app");
    assert!(
        matches!(&web.state, TierState::Rendered(o) if o.len() == 1),
        "{:?}",
        web.state
    );
    let api = &cluster.tiers[&TierId::new("flux-system", "api")];
    assert!(
        matches!(&api.state, TierState::NotChecked(why) if why.contains("reads outside the copied directory")),
        "{:?}",
        api.state
    );
    let missing = &cluster.tiers[&TierId::new("flux-system", "api-missing")];
    assert!(
        matches!(&missing.state, TierState::NotChecked(why) if why.contains("does not put anything at apps/missing/")),
        "{:?}",
        missing.state
    );
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
        "instance:\n  sync:\n    kind: GitRepository\n    name: home\n    url: https://github.com/example/home\n    ref: refs/heads/main\n    path: kubernetes/flux/cluster\n",
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
        "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n  namespace: flux-system\nspec:\n  distribution:\n    version: \"2.x\"\n  sync:\n    kind: OCIRepository\n    url: oci://ghcr.io/example/fleet\n    ref: latest\n    path: clusters/prod\n",
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
        "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n  namespace: flux-system\nspec:\n  sync:\n    kind: GitRepository\n    url: https://github.com/example/fleet\n    ref: refs/heads/main\n    path: clusters/prod\n  kustomize:\n    patches:\n      - patch: |\n          - op: remove\n            path: /spec/nothere\n        target:\n          kind: Kustomization\n",
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
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: crds\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: https://github.com/example/crds.git\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: old-crds\n  namespace: flux-system\nspec:\n  interval: 1h\n  prune: false\n  sourceRef:\n    kind: GitRepository\n    name: crds\n",
    );
    let outcome = run(root);
    assert_eq!(cluster_names(&outcome), ["prod"]);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
}

#[test]
fn a_child_path_uses_a_variable_from_a_sibling_tiers_configmap() {
    // `apps` substitutes from cluster-settings, which `vars` (built in the
    // same wave) renders; a child's path names ${CLUSTER_NAME}.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("vars", "flux-system", "./vars", ""),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:\n    - name: vars\n  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-settings\n",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "vars/settings.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  CLUSTER_NAME: prod\n",
    );
    write(
        root,
        "apps/secret.yaml",
        &ks("secret", "flux-system", "./secret/${CLUSTER_NAME}", ""),
    );
    write(root, "secret/prod/cm.yaml", &configmap("prod"));
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{:#?}", outcome.findings);
    let prod = &outcome.model.clusters[0];
    let tier = &prod.tiers[&TierId::new("flux-system", "secret")];
    assert_eq!(tier.path, "secret/prod");
    assert!(matches!(&tier.state, TierState::Rendered(o) if o.len() == 1));
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
        "resources:\n  - apps.yaml\n",
    );
    write(
        root,
        "clusters/dev/flux-system/gotk-components.yaml",
        "---\n# This manifest was generated by flux. DO NOT EDIT.\n# Flux Version: v2.6.4\n# Components: source-controller,kustomize-controller\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n",
    );
    write(
        root,
        "clusters/dev/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(
        root,
        "apps/release.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2beta1\nkind: HelmRelease\nmetadata:\n  name: app\n  namespace: flux-system\nspec:\n  interval: 1h\n  chart:\n    spec:\n      chart: app\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n",
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
        "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n  namespace: flux-system\nspec:\n  distribution:\n    version: \"2.x\"\n  sync:\n    kind: GitRepository\n    url: https://github.com/example/fleet\n    ref: refs/heads/main\n    path: clusters/prod\n",
    );
    write(
        root,
        "clusters/prod/kustomization.yaml",
        "resources:\n  - ../../apps/prod/dns/ks.yaml\n",
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
