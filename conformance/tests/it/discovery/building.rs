//! Building tiers: Flux's generated kustomization, decoding, missing paths, unsupported features, symlinks, cycles, bad input.

use super::*;

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
        "\
apiVersion: v1
kind: Namespace
metadata:
  name: web
",
    );
    write(root, "apps/a.yaml", &configmap("a"));
    write(root, "apps/nested/b.yml", &configmap("b"));
    write(root, "apps/notes.txt", "not yaml");
    // A subdirectory with its own kustomization is one resource.
    write(
        root,
        "apps/sub/kustomization.yaml",
        "\
resources:
  - c.yaml
namePrefix: sub-
",
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
        &format!(
            "\
{}---
foo: bar
",
            configmap("a")
        ),
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
        "\
resources:
  - https://github.com/kubernetes-csi/external-snapshotter//client/config/crd?ref=v8.2.0
",
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
    // Issue 27: at the field at fault, `spec.path` (line 8 of the
    // Kustomization, the first document), not its apiVersion.
    let at = outcome.findings[0].at().unwrap();
    assert_eq!((at.file.as_str(), at.line), ("clusters/prod/tiers.yaml", 8));
    let remote = &outcome.findings[1];
    assert!(
        remote.message().contains("github.com/kubernetes-csi"),
        "{}",
        remote.message()
    );
    assert_eq!(remote.at().unwrap().file, "snap/kustomization.yaml");
    assert_eq!(remote.at().unwrap().line, 2);
    // Only a remote base: the local part is empty, and the tier is not
    // fully known.
    let tier = &outcome.model.clusters[0].tiers[&TierId::new("flux-system", "remote")];
    assert!(tier.objects().is_empty());
    assert_eq!(tier.remote_bases.len(), 1);
    assert!(!tier.fully_known());
}

/// Issue 23: a tier with a remote base was "not checked" whole, which left
/// its children undiscovered (phantom clusters, false dependency-missing).
/// Now its local part is built and checked, its children are found, and
/// what the remote could add is hedged, never an error.
#[test]
fn a_tier_with_a_remote_base_is_checked_on_its_local_part() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/infra.yaml",
        &ks("infra", "flux-system", "./infra", ""),
    );
    write(
        root,
        "infra/kustomization.yaml",
        "\
resources:
  - github.com/example/widgets//config/crd?ref=v1.0.0
  - apps.yaml
  - widget.yaml
",
    );
    write(
        root,
        "infra/apps.yaml",
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
        "infra/widget.yaml",
        "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: default
",
    );
    write(root, "apps/kustomization.yaml", "resources: [cm.yaml]\n");
    write(root, "apps/cm.yaml", &configmap("app"));
    let outcome = run(root);
    assert_eq!(cluster_names(&outcome), ["prod"], "{}", all(&outcome));
    let cluster = &outcome.model.clusters[0];
    let infra = &cluster.tiers[&TierId::new("flux-system", "infra")];
    let kinds: Vec<&str> = infra.objects().iter().map(|o| o.id.kind.as_str()).collect();
    assert_eq!(kinds, ["Kustomization", "Widget"], "{}", all(&outcome));
    assert!(!infra.fully_known());
    let apps = &cluster.tiers[&TierId::new("flux-system", "apps")];
    assert!(matches!(apps.state, TierState::Rendered(_)));
    let errors: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.severity() == conformance::rules::Severity::Error)
        .map(|f| (f.rule().as_str(), f.message().to_string()))
        .collect();
    // No error: the git reference is a risk (a warning, issue 49), and the
    // Widget's CRD may come from the remote part.
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::RemoteBase
                && f.severity() == conformance::rules::Severity::Warning),
        "{}",
        all(&outcome)
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
        "\
resources:
  - cm.yaml
vars:
  - name: APP
    objref:
      kind: ConfigMap
      name: app
      apiVersion: v1
",
    );
    let native = run(root);
    assert_eq!(rules(&native), [("render-failed", "prod", "apps")]);
    let message = &native.findings[0].message();
    assert!(
        message.contains("unsupported: vars in apps/kustomization.yaml:4"),
        "{message}"
    );
    let auto = check(&CheckOptions {
        run: conformance::session::RunOptions::at(root.to_path_buf())
            .renderer(conformance::render::Choice::Auto),
        clusters: vec![],
        base: None,
        baseline: None,
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
        "\
resources:
  - linked.yaml
",
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
    write(
        root,
        "a/kustomization.yaml",
        "\
resources:
  - ../b
",
    );
    write(
        root,
        "b/kustomization.yaml",
        "\
resources:
  - ../a
",
    );
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
        "\
resources:
  - cm.yaml
patches:
  - path: fix.yaml
    target:
      kind: ConfigMap
",
    );
    write(
        root,
        "apps/fix.yaml",
        "\
- op: remove
  path: /data/missing
",
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
        "\
patches:
  - target: 7
    patch: 3
",
        "\
patches:
  - patch: \"- op: remove\\n  path: /nope\"
    target: {kind: ConfigMap}
",
        "\
patches:
  - patch: \"kind: ConfigMap\\nmetadata: {name: nope}\\n\"
",
        "\
patchesStrategicMerge:
  - \"kind: Nope\"
",
        "\
configMapGenerator:
  - literals: [a=b]
",
        "\
configMapGenerator:
  - name: x
    literals: [=b]
",
        "\
configMapGenerator:
  - name: x
    files: [missing.txt]
",
        "\
secretGenerator:
  - name: x
    envs: [missing.env]
",
        "\
namespace: [a]
namePrefix: {b: c}
",
        "\
images:
  - name: \"(\"
    newTag: x
",
        "\
replicas:
  - name: nothing
    count: two
",
        "\
replacements:
  - source: {kind: Nope}
    targets: []
",
        "components: [../nowhere]\n",
        "\
labels:
  - pairs: 5
",
        "commonLabels: [x]\n",
        "unknownField: 1\n",
        "\
- just
- a list
",
        "kind: Component\n",
        "\
resources:
  - ../../../../../../etc
",
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
            run: conformance::session::RunOptions::at(root.to_path_buf()),
            clusters: vec![],
            base: None,
            baseline: None,
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
        "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: a, namespace: flux-system}
spec: 5
",
        "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: a, namespace: flux-system}
spec:
  path: [x]
  dependsOn: {name: b}
  sourceRef: oops
",
        "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: a, namespace: flux-system}
spec:
  path: ./apps
  postBuild: {substitute: [1], substituteFrom: {kind: ConfigMap}}
  healthChecks: 3
  sourceRef: {kind: GitRepository, name: flux-system}
",
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
    - name: web
      copy:
        - from: \"@repo/apps/web/app/\"
          to: \"@artifact/apps/web/app/\"
    - name: api
      copy:
        - from: \"@repo/apps/api/app/\"
          to: \"@artifact/apps/api/app/\"
",
    );
    write(
        root,
        "apps/web/app/kustomization.yaml",
        "\
resources:
  - cm.yaml
",
    );
    write(root, "apps/web/app/cm.yaml", &configmap("web"));
    // api's build reads ../shared, which the artifact does not hold.
    write(
        root,
        "apps/api/app/kustomization.yaml",
        "\
resources:
  - ../shared
",
    );
    write(
        root,
        "apps/api/shared/kustomization.yaml",
        "\
resources:
  - cm.yaml
",
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
                "  dependsOn:
    - name: vars
  postBuild:
    substituteFrom:
      - kind: ConfigMap
        name: cluster-settings
",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "vars/settings.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-settings
  namespace: flux-system
data:
  CLUSTER_NAME: prod
",
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
