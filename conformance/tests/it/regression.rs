//! One test per reported bug (as ripgrep's `tests/regression.rs`): each
//! names the report it comes from, and fails on the code before its fix.
//!
//! Issue 13 ("Hardening"): hostile and broken input, found by hand and by
//! mutation fuzzing over real repositories.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;

use crate::support::*;

/// A one-tier cluster: `clusters/prod` syncs, tier `apps` builds `./apps`.
fn one_tier(root: &Path, extra: &str) {
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", extra),
    );
}

fn messages(outcome: &conformance::check::Outcome) -> String {
    outcome
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.rule(), f.message()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Issue 13: a JSON 6902 patch whose `path` is empty, null, a list, a
/// mapping or a tagged scalar panicked in yaml.rs (`map_entry on a
/// non-mapping node`). kustomize refuses all but `replace` at `""`, which
/// swaps the whole object.
#[test]
fn json6902_path_of_any_shape_is_a_finding_or_a_build_not_a_panic() {
    for (path, op, builds) in [
        ("\"\"", "add", false),
        ("null", "add", false),
        ("[a]", "add", false),
        ("{a: b}", "add", false),
        ("!x foo", "add", false),
        ("\"\"", "replace", true),
        ("null", "replace", false),
        ("\"\"", "remove", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        one_tier(root, "");
        write(root, "apps/cm.yaml", &configmap("a"));
        write(
            root,
            "apps/kustomization.yaml",
            &format!(
                "resources: [cm.yaml]\npatches:\n  - target: {{kind: ConfigMap}}\n    patch: |\n      - op: {op}\n        path: {path}\n        value: {{apiVersion: v1, kind: ConfigMap, metadata: {{name: b, namespace: default}}}}\n"
            ),
        );
        let outcome = run(root);
        let failed: Vec<_> = outcome
            .findings
            .iter()
            .filter(|f| f.rule() == conformance::rules::RuleId::RenderFailed)
            .collect();
        assert_eq!(
            failed.is_empty(),
            builds,
            "{op} {path}: {}",
            messages(&outcome)
        );
        if builds {
            let apps = &outcome.model.clusters[0].tiers
                [&conformance::model::TierId::new("flux-system", "apps")];
            assert_eq!(apps.objects()[0].id.name, "b");
        }
    }
}

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
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresorces:\n  - flux-system\n  - apps.yaml\n",
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

/// Issue 13: configMapGenerator/secretGenerator `files` and `envs` with
/// `../` were read from anywhere on the machine (a test read /etc/hostname
/// into a ConfigMap). Nothing outside the repository is read; the error
/// names the kustomization that tried.
#[test]
fn generator_inputs_outside_the_repository_are_refused() {
    for field in ["files", "envs"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        one_tier(root, "");
        write(
            root,
            "apps/kustomization.yaml",
            &format!(
                "configMapGenerator:\n  - name: leak\n    namespace: default\n    {field}:\n      - ../../../../../../../../etc/hostname\n"
            ),
        );
        let outcome = run(root);
        let f = &outcome.findings[0];
        assert_eq!(
            f.rule(),
            conformance::rules::RuleId::RenderFailed,
            "{}",
            messages(&outcome)
        );
        assert!(
            f.message().contains("points outside the repository"),
            "{}",
            f.message()
        );
        assert_eq!(f.at().unwrap().file, "apps/kustomization.yaml");
        let objects = outcome.model.clusters[0]
            .tiers
            .values()
            .flat_map(|t| t.objects())
            .filter(|o| o.id.kind == "ConfigMap")
            .count();
        assert_eq!(objects, 0);
    }
}

/// Issue 13: a symlinked generator input, and symlinked manifests in a
/// directory Flux generates a kustomization for, were read through the
/// link. source-controller archives regular files and directories only
/// (storage.Archive), so for Flux they do not exist.
#[test]
fn symlinks_do_not_exist_for_flux() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "hostname", "leaked\n");
    write(outside.path(), "cm.yaml", &configmap("outside"));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(root, "apps/real.yaml", &configmap("real"));
    std::os::unix::fs::symlink(
        outside.path().join("cm.yaml"),
        root.join("apps/linked.yaml"),
    )
    .unwrap();
    let outcome = run(root);
    let names: Vec<String> = outcome.model.clusters[0]
        .tiers
        .values()
        .flat_map(|t| t.objects())
        .filter(|o| o.id.kind == "ConfigMap")
        .map(|o| o.id.name.clone())
        .collect();
    assert_eq!(names, ["real"], "{}", messages(&outcome));

    write(
        root,
        "apps/kustomization.yaml",
        "configMapGenerator:\n  - name: leak\n    namespace: default\n    files:\n      - hostname\n",
    );
    std::fs::remove_file(root.join("apps/linked.yaml")).unwrap();
    std::fs::remove_file(root.join("apps/real.yaml")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("hostname"), root.join("apps/hostname"))
        .unwrap();
    let outcome = run(root);
    let f = &outcome.findings[0];
    assert_eq!(f.rule(), conformance::rules::RuleId::RenderFailed);
    assert!(f.message().contains("is a symlink"), "{}", f.message());
    let text = format!("{:?}", outcome.model.clusters[0].tiers);
    assert!(!text.contains("leaked"));
}

/// Issue 13: a 200-deep document was reported as render-failed ("cannot
/// build") though kubectl builds it (so is a 250-deep one now); past the budget, the message named an
/// internal struct (`Depth { depth: 129 }`) and blamed Flux.
#[test]
fn nesting_within_the_budget_builds_and_beyond_it_names_the_budget() {
    let deep = |n: usize| {
        let mut text = configmap("deep");
        text.push_str("  nested: ");
        text.push_str(&"[".repeat(n));
        text.push('1');
        text.push_str(&"]".repeat(n));
        text.push('\n');
        text
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(root, "apps/cm.yaml", &deep(250));
    let outcome = run(root);
    // It builds; a ConfigMap's data value must be a string, which the
    // schema check says.
    assert!(
        outcome
            .findings
            .iter()
            .all(|f| f.rule() == conformance::rules::RuleId::SchemaViolation),
        "{}",
        messages(&outcome)
    );

    write(root, "apps/cm.yaml", &deep(2000));
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .all(|f| f.rule() != conformance::rules::RuleId::RenderFailed),
        "a budget is not a Flux failure: {}",
        messages(&outcome)
    );
    let apps =
        &outcome.model.clusters[0].tiers[&conformance::model::TierId::new("flux-system", "apps")];
    let conformance::model::TierState::NotChecked(reason) = &apps.state else {
        panic!("{:?}", apps.state);
    };
    assert!(
        reason.contains("exceeds the nesting budget of 256 levels")
            && reason.contains("apps/cm.yaml:"),
        "{reason}"
    );
    assert!(!reason.contains("Depth {"), "{reason}");
}

/// Issue 13: the alias-bomb message was cut off.
#[test]
fn an_alias_bomb_names_the_alias_budget_in_full() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let err = conformance::yaml::parse_documents(&text).unwrap_err();
    assert!(err.budget);
    assert!(err.message.contains("alias budget"), "{}", err.message);
    assert!(
        err.message.ends_with("(a YAML alias bomb)"),
        "{}",
        err.message
    );
}

/// Issue 13: a Kustomization `path` naming a file said "path not found".
#[test]
fn a_path_naming_a_file_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps/cm.yaml", ""),
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    assert_eq!(
        outcome.findings[0].rule(),
        conformance::rules::RuleId::RenderFailed
    );
    assert!(
        outcome.findings[0]
            .message()
            .contains("./apps/cm.yaml is a file"),
        "{}",
        outcome.findings[0].message()
    );
}

/// Issue 13: a 4,000-deep dependsOn chain took 2.5 GB (every tier held the
/// names of all its ancestors); the order is bit sets now, computed without
/// recursion.
#[test]
fn a_four_thousand_deep_dependson_chain_is_ordered() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let mut tiers = String::new();
    for i in 0..4000 {
        let deps = if i == 0 {
            String::new()
        } else {
            format!("  dependsOn:\n    - name: t{:04}\n", i - 1)
        };
        tiers.push_str(&format!(
            "---\n{}",
            ks(&format!("t{i:04}"), "flux-system", "./apps", &deps)
        ));
    }
    write(root, "clusters/prod/tiers.yaml", &tiers);
    write(root, "apps/cm.yaml", &configmap("a"));
    let session =
        conformance::session::Session::open(root, Some(conformance::render::Choice::Native))
            .unwrap();
    let cluster = &session.model.clusters[0];
    let analysis = session.analysis(cluster);
    let last = conformance::model::TierId::new("flux-system", "t3999");
    assert_eq!(analysis.order.applied_before(&last).iter().count(), 4000);
    assert_eq!(analysis.order.sequence.last(), Some(&last));
}

/// Issue 13: `substitution.strict: "no"` (a string) was accepted as a
/// boolean although the README promises strict types.
#[test]
fn config_booleans_are_strict() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(root, "apps/cm.yaml", &configmap("a"));
    write(
        root,
        "conformance.yaml",
        "substitution:\n  strict: \"no\"\n",
    );
    let err = run_result(root).unwrap_err().to_string();
    assert!(err.contains("conformance.yaml:2"), "{err}");
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
        text.contains("1 cluster, 1 Kustomization (1 rendered"),
        "{text}"
    );
}

/// Issue 13: a document that is a list or a scalar pointed at the wrong
/// file (the kustomization instead of the file holding it).
#[test]
fn a_document_that_is_not_an_object_is_blamed_on_its_own_file() {
    for body in ["- a\n- b\n", "just a string\n"] {
        for with_kustomization in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            one_tier(root, "");
            write(root, "apps/good.yaml", &configmap("good"));
            write(root, "apps/bad.yaml", body);
            if with_kustomization {
                write(
                    root,
                    "apps/kustomization.yaml",
                    "resources:\n  - good.yaml\n  - bad.yaml\n",
                );
            }
            let outcome = run(root);
            let f = &outcome.findings[0];
            assert_eq!(f.rule(), conformance::rules::RuleId::RenderFailed);
            assert_eq!(
                f.at().unwrap().file,
                "apps/bad.yaml",
                "{body:?} with kustomization {with_kustomization}: {}",
                f.message()
            );
        }
    }
}

/// Issue 13: an unreadable directory nothing uses (`docs/`) aborted the
/// whole run with exit 2. It is recorded as unreadable and only a build
/// that needs it fails. (As root every directory is readable: then this
/// checks that the run is unaffected.)
#[test]
fn an_unreadable_directory_nothing_uses_does_not_stop_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(root, "apps/cm.yaml", &configmap("a"));
    write(root, "docs/private/notes.yaml", "a: b\n");
    let locked = root.join("docs/private");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let result = run_result(root);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let outcome = result.unwrap();
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
}

// Issue 12 ("Flux build and apply fidelity").

fn objects_of<'o>(
    outcome: &'o conformance::check::Outcome,
    tier: &str,
) -> Vec<&'o conformance::model::Object> {
    outcome.model.clusters[0]
        .tiers
        .values()
        .filter(|t| t.id.name == tier)
        .flat_map(|t| t.objects())
        .collect()
}

/// Issue 12.1: source-controller's ignore rules decide what exists. A
/// `.sourceignore` keeps a file out of every build (here one Flux's
/// generated kustomization could not decode).
#[test]
fn a_sourceignore_keeps_a_file_out_of_the_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(root, "apps/cm.yaml", &configmap("a"));
    write(root, "apps/values.yaml", "replicas: 2\n");
    let before = run(root);
    assert_eq!(
        before.findings[0].rule(),
        conformance::rules::RuleId::RenderFailed,
        "{}",
        messages(&before)
    );
    write(
        root,
        ".sourceignore",
        "# helm values, not manifests\nvalues.yaml\n",
    );
    let after = run(root);
    assert!(after.findings.is_empty(), "{}", messages(&after));
    assert_eq!(objects_of(&after, "apps").len(), 1);
}

/// Issue 12.1: the defaults drop `**/.sops.yaml` (SOPS creation rules, not
/// a manifest); a GitRepository's `spec.ignore` replaces the defaults, and
/// then the file is part of the artifact again.
#[test]
fn spec_ignore_replaces_the_default_ignore_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(root, "apps/cm.yaml", &configmap("a"));
    write(
        root,
        "apps/.sops.yaml",
        "creation_rules:\n  - age: age1xyz\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
    let sync = std::fs::read_to_string(root.join("clusters/prod/flux-system/gotk-sync.yaml"))
        .unwrap()
        .replace(
            "  ref:\n    branch: main\n",
            "  ref:\n    branch: main\n  ignore: |\n    /docs\n",
        );
    write(root, "clusters/prod/flux-system/gotk-sync.yaml", &sync);
    let outcome = run(root);
    let f = &outcome.findings[0];
    assert_eq!(
        f.rule(),
        conformance::rules::RuleId::RenderFailed,
        "{}",
        messages(&outcome)
    );
    assert_eq!(f.at().unwrap().file, "apps/.sops.yaml");
}

/// Issue 12.2: Flux writes spec.components into the path's own
/// kustomization, so what a component adds gets the user's namespace and
/// prefix (the old wrapper added it after them).
#[test]
fn spec_components_run_in_the_users_kustomization() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "  components:\n    - ../components/extra\n");
    write(root, "apps/cm.yaml", &configmap("a"));
    write(
        root,
        "apps/kustomization.yaml",
        "namespace: apps\nnamePrefix: x-\nresources:\n  - cm.yaml\n",
    );
    write(
        root,
        "components/extra/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - extra.yaml\n",
    );
    write(root, "components/extra/extra.yaml", &configmap("extra"));
    write(root, "apps/ns.yaml", "");
    let outcome = run(root);
    let ids: Vec<String> = objects_of(&outcome, "apps")
        .iter()
        .map(|o| o.id.to_string())
        .collect();
    assert_eq!(
        ids,
        ["ConfigMap/apps/x-a", "ConfigMap/apps/x-extra"],
        "{}",
        messages(&outcome)
    );
}

/// Issue 12.2: spec.patches run in the user's pass, before the user's
/// `labels:` transformer, so a label selector does not see those labels.
#[test]
fn spec_patches_do_not_see_labels_the_kustomization_adds() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(
        root,
        "  patches:\n    - target:\n        labelSelector: team=a\n      patch: |\n        - op: add\n          path: /data/patched\n          value: \"yes\"\n",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    write(
        root,
        "apps/kustomization.yaml",
        "resources:\n  - cm.yaml\nlabels:\n  - pairs:\n      team: a\n",
    );
    let outcome = run(root);
    let cm = objects_of(&outcome, "apps")[0];
    assert!(
        cm.body.path(&["data", "patched"]).is_none(),
        "{:?}",
        cm.body
    );
    assert_eq!(
        cm.body.str_at(&["metadata", "labels", "team"]).as_deref(),
        Some("a")
    );
}

/// Issue 12.2: spec.ignoreMissingComponents drops a component that does not
/// exist; without it the build fails. A remote component is Flux's "must be
/// local and relative" error, not a remote base.
#[test]
fn missing_and_remote_components_as_flux_treats_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "  components:\n    - ../components/gone\n");
    write(root, "apps/cm.yaml", &configmap("a"));
    assert_eq!(
        run(root).findings[0].rule(),
        conformance::rules::RuleId::RenderFailed
    );
    one_tier(
        root,
        "  ignoreMissingComponents: true\n  components:\n    - ../components/gone\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
    one_tier(
        root,
        "  components:\n    - https://github.com/example/components//extra?ref=v1\n",
    );
    let outcome = run(root);
    let f = &outcome.findings[0];
    assert_eq!(
        f.rule(),
        conformance::rules::RuleId::RenderFailed,
        "{}",
        messages(&outcome)
    );
    assert!(
        f.message().contains("must be local and relative"),
        "{}",
        f.message()
    );
}

/// Issue 12.4: a cluster-scoped kind whose CRD is not in git (a chart's
/// ClusterIssuer) needs no namespace; a namespaced one does.
#[test]
fn cluster_scoped_chart_kinds_need_no_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(
        root,
        "apps/issuer.yaml",
        "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: letsencrypt\nspec:\n  selfSigned: {}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n    - port: 80\n",
    );
    write(
        root,
        "conformance.yaml",
        "catalog:\n  preinstalled: [cert-manager.io]\n",
    );
    let outcome = run(root);
    let rules: Vec<(&str, Option<&str>)> = outcome
        .findings
        .iter()
        .map(|f| (f.rule().as_str(), f.object()))
        .collect();
    assert_eq!(rules, [("namespace-unspecified", Some("Service/web"))]);
}

/// Issue 12.5: objects of one kind and name in two API groups are two
/// objects (v1 ServiceAccount and talos.dev ServiceAccount).
#[test]
fn objects_are_told_apart_by_group() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!(
            "{}---\n{}",
            ks("core", "flux-system", "./core", ""),
            ks("talos", "flux-system", "./talos", "")
        ),
    );
    write(
        root,
        "core/sa.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: runner\n  namespace: default\n",
    );
    write(
        root,
        "talos/sa.yaml",
        "apiVersion: talos.dev/v1alpha1\nkind: ServiceAccount\nmetadata:\n  name: runner\n  namespace: default\nspec:\n  roles: [os:reader]\n",
    );
    write(
        root,
        "conformance.yaml",
        "catalog:\n  preinstalled: [talos.dev]\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
    let talos = objects_of(&outcome, "talos")[0];
    assert_eq!(
        talos.id.to_string(),
        "talos.dev/ServiceAccount/default/runner"
    );
    assert_eq!(
        objects_of(&outcome, "core")[0].id.to_string(),
        "ServiceAccount/default/runner"
    );
}

/// Issue 12.6: after substitution, values take the types Flux's YAML round
/// trip gives them (go-yaml v2: YAML 1.1).
#[test]
fn substituted_values_are_retyped_as_flux_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(
        root,
        "  postBuild:\n    substitute:\n      ON: \"on\"\n      MODE: \"0755\"\n      RATIO: \"1.5\"\n      COLOR: \"#fff\"\n      NAME: web\n",
    );
    write(
        root,
        "apps/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vars\n  namespace: default\ndata:\n  on: ${ON}\n  mode: ${MODE}\n  ratio: ${RATIO}\n  color: ${COLOR}\n  name: ${NAME}\n  quoted: \"key: ${NAME}\"\n",
    );
    let outcome = run(root);
    let cm = objects_of(&outcome, "apps")[0];
    use conformance::yaml::Value;
    let value = |k: &str| cm.body.path(&["data", k]).map(|n| n.value.clone());
    assert_eq!(value("on"), Some(Value::Bool(true)));
    assert_eq!(value("mode"), Some(Value::Int(493)));
    assert_eq!(value("ratio"), Some(Value::Float(1.5)));
    assert_eq!(value("color"), Some(Value::Null));
    assert_eq!(value("name"), Some(Value::String("web".into())));
    assert_eq!(value("quoted"), Some(Value::String("key: web".into())));
}

const SOPS_ENV: &str = "PASSWORD=ENC[AES256_GCM,data:abc,iv:def,tag:ghi,type:str]\nsops_mac=ENC[AES256_GCM,data:x,type:str]\nsops_version=3.9.0\n";

/// Issue 12.7: Flux decrypts secretGenerator inputs, never
/// configMapGenerator ones: an encrypted configMapGenerator input ships as
/// ciphertext even with spec.decryption.
#[test]
fn sops_generator_inputs_as_the_decryptor_handles_them() {
    let decryption = "  decryption:\n    provider: sops\n    secretRef:\n      name: sops-age\n";
    for (generator, with_decryption, finding) in [
        ("configMapGenerator", true, true),
        ("secretGenerator", true, false),
        ("secretGenerator", false, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        one_tier(root, if with_decryption { decryption } else { "" });
        write(root, "apps/app.sops.env", SOPS_ENV);
        write(
            root,
            "apps/kustomization.yaml",
            &format!(
                "{generator}:\n  - name: app\n    namespace: default\n    envs:\n      - app.sops.env\n"
            ),
        );
        let outcome = run(root);
        let rules: Vec<&str> = outcome.findings.iter().map(|f| f.rule().as_str()).collect();
        assert_eq!(
            rules == ["sops-decryption"],
            finding,
            "{generator} decryption={with_decryption}: {}",
            messages(&outcome)
        );
    }
}

/// Issue 12.7: an object annotated `kustomize.toolkit.fluxcd.io/decrypt:
/// disabled` is not decrypted, and not a finding.
#[test]
fn objects_with_decryption_disabled_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(
        root,
        "apps/secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: for-another-tool\n  namespace: default\n  annotations:\n    kustomize.toolkit.fluxcd.io/decrypt: Disabled\nstringData:\n  key: ENC[AES256_GCM,data:abc,type:str]\nsops:\n  mac: ENC[AES256_GCM,data:x,type:str]\n  version: 3.9.0\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
}

/// Issue 12.8: a move under prune is a window only when nothing orders the
/// old owner after the new one, and the object is not protected from
/// garbage collection.
#[test]
fn prune_transient_only_when_a_window_exists() {
    let build = |root: &Path, owner: &str, old_depends_on_new: bool, annotation: &str| {
        sync(root, "clusters/prod");
        let deps = if old_depends_on_new {
            "  dependsOn:\n    - name: new\n"
        } else {
            ""
        };
        write(
            root,
            "clusters/prod/tiers.yaml",
            &format!(
                "{}---\n{}",
                ks("old", "flux-system", "./old", deps),
                ks("new", "flux-system", "./new", "")
            ),
        );
        write(root, "old/keep.yaml", &configmap("keep"));
        write(root, "new/keep.yaml", &configmap("other"));
        let moved = configmap("moved").replace(
            "  namespace: default\n",
            &format!("  namespace: default\n{annotation}"),
        );
        write(root, &format!("{owner}/moved.yaml"), &moved);
    };
    for (old_depends_on_new, annotation, finding) in [
        (false, "", true),
        (true, "", false),
        (
            false,
            "  annotations:\n    kustomize.toolkit.fluxcd.io/prune: disabled\n",
            false,
        ),
        (
            false,
            "  annotations:\n    kustomize.toolkit.fluxcd.io/ssa: Ignore\n",
            false,
        ),
    ] {
        let base = tempfile::tempdir().unwrap();
        build(base.path(), "old", old_depends_on_new, annotation);
        let head = tempfile::tempdir().unwrap();
        build(head.path(), "new", old_depends_on_new, annotation);
        let outcome = conformance::check::check(&conformance::check::CheckOptions {
            repo: head.path().to_path_buf(),
            clusters: vec![],
            renderer: None,
            base: Some(conformance::base::Base::Dir(base.path().to_path_buf())),
        })
        .unwrap();
        let rules: Vec<&str> = outcome.findings.iter().map(|f| f.rule().as_str()).collect();
        assert_eq!(
            rules == ["prune-transient"],
            finding,
            "depends={old_depends_on_new} annotation={annotation:?}: {}",
            messages(&outcome)
        );
    }
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
    write(root, "apps/kustomization.yaml", "resources:\n  - web\n");
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
        "clusters:\n  aks-prod:\n    entry: clusters/aks\n    source:\n      name: cluster-config\n",
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

// Issue 17 ("More real-repository gaps").

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
        "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n  namespace: flux-system\nspec:\n  distribution:\n    version: 2.x\n  sync:\n    kind: GitRepository\n    url: https://github.com/example/fleet.git\n    ref: refs/heads/main\n    path: clusters/main\n",
    );
    write(
        root,
        "clusters/main/kustomization.yaml",
        "resources:\n  - flux-instance.yaml\n  - ../../kubernetes/apps\n",
    );
    write(
        root,
        "kubernetes/apps/kustomization.yaml",
        "resources:\n  - keycloak.yaml\n",
    );
    write(
        root,
        "kubernetes/apps/keycloak.yaml",
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: keycloak-k8s-resources\n  namespace: flux-system\nspec:\n  url: https://github.com/keycloak/keycloak-k8s-resources\n  ref:\n    tag: 26.0.0\n---\n{}",
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
        "resources:\n  - sync.yaml\n  - repo.yaml\n",
    );
    write(
        root,
        "flux/base/repo.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-config\n  namespace: flux-system\nspec:\n  url: https://github.com/example/fleet\n",
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
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  path: ./clusters/{env}/{cluster}\n  postBuild:\n    substitute:\n      ENVIRONMENT: {env}\n      CLUSTER: \"{cluster}\"\n"
            ),
        );
        write(
            root,
            &format!("clusters/{env}/{cluster}/kustomization.yaml"),
            &format!(
                "resources:\n  - ../../../flux/base\n  - apps.yaml\npatches:\n  - path: ../../../flux/{env}/{cluster}/patch.yaml\n"
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

/// Issue 17: a postBuild that defines no variable (`substitute: {}`) makes
/// Flux skip the pass, so `${DS_PROMETHEUS}` in a Grafana dashboard ships
/// literally, as meant: at most the unaudited warning, never a hazard.
#[test]
fn a_skipped_substitution_pass_is_a_warning_not_a_hazard() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "  postBuild:\n    substitute: {}\n");
    write(
        root,
        "apps/dashboard.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboard\n  namespace: default\ndata:\n  json: '{\"datasource\": \"${DS_PROMETHEUS}\"}'\n",
    );
    let outcome = run(root);
    let found: Vec<(&str, conformance::rules::Severity)> = outcome
        .findings
        .iter()
        .map(|f| (f.rule().as_str(), f.severity()))
        .collect();
    assert_eq!(
        found,
        [(
            "substitution-unaudited",
            conformance::rules::Severity::Warning
        )],
        "{}",
        messages(&outcome)
    );
}

/// Issue 17: strictness follows the kustomize-controller the repository
/// installs: an undefined variable fails the tier from 1.9 (an error), and
/// becomes empty before (a warning); substitution.strict overrides it.
#[test]
fn substitution_strictness_follows_the_installed_flux() {
    for (flux, kc, config, severity) in [
        (
            "v2.8.8",
            "v1.8.5",
            "",
            conformance::rules::Severity::Warning,
        ),
        ("v2.9.0", "v1.9.1", "", conformance::rules::Severity::Error),
        (
            "v2.8.8",
            "v1.8.5",
            "substitution:\n  strict: true\n",
            conformance::rules::Severity::Error,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        one_tier(root, "  postBuild:\n    substitute:\n      DEFINED: x\n");
        write(
            root,
            "clusters/prod/flux-system/gotk-components.yaml",
            &format!(
                "---\n# This manifest was generated by flux. DO NOT EDIT.\n# Flux Version: {flux}\n# Components: kustomize-controller\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: kustomize-controller\n  namespace: flux-system\nspec:\n  selector:\n    matchLabels:\n      app: kustomize-controller\n  template:\n    metadata:\n      labels:\n        app: kustomize-controller\n    spec:\n      containers:\n        - name: manager\n          image: ghcr.io/fluxcd/kustomize-controller:{kc}\n"
            ),
        );
        write(
            root,
            "apps/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\ndata:\n  a: ${DEFINED}\n  b: ${UNDEFINED}\n",
        );
        if !config.is_empty() {
            write(root, "conformance.yaml", config);
        }
        let outcome = run(root);
        let hazards: Vec<conformance::rules::Severity> = outcome
            .findings
            .iter()
            .filter(|f| f.rule() == conformance::rules::RuleId::SubstitutionHazard)
            .map(|f| f.severity())
            .collect();
        assert_eq!(
            hazards,
            [severity],
            "{flux} {config:?}: {}",
            messages(&outcome)
        );
    }
}

/// Issue 13: a `dependsOn` entry written as a bare string (`- apps`) was
/// dropped without a word, so the tier ran unordered. Flux's CRD rejects it.
#[test]
fn a_depends_on_entry_without_a_name_is_reported_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "  dependsOn:\n    - infra\n");
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let text = messages(&outcome);
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::SchemaViolation
                && f.message()
                    .contains("spec.dependsOn[0]: expected a reference with a name")),
        "{text}"
    );
}

/// Issue 13: names the API server refuses (uppercase, underscores, a
/// Service starting with a digit) and label values it refuses were not
/// reported.
#[test]
fn names_and_label_values_the_api_server_refuses_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(
        root,
        "apps/bad.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Web_Config\n  namespace: default\n  labels:\n    team: platform team\ndata: {}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: 1web\n  namespace: default\nspec:\n  ports: [{port: 80}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: system:web:reader\nrules: []\n",
    );
    let outcome = run(root);
    let text = messages(&outcome);
    let schema: Vec<&str> = outcome
        .findings
        .iter()
        .filter(|f| f.rule() == conformance::rules::RuleId::SchemaViolation)
        .map(|f| f.message())
        .collect();
    assert_eq!(schema.len(), 3, "{text}");
    assert!(
        schema
            .iter()
            .any(|m| m.contains("metadata.name: \"Web_Config\" is not a DNS-1123 subdomain")),
        "{text}"
    );
    assert!(
        schema
            .iter()
            .any(|m| m.contains("metadata.labels[\"team\"]")),
        "{text}"
    );
    assert!(
        schema
            .iter()
            .any(|m| m.contains("\"1web\" is not a DNS-1035 label")),
        "{text}"
    );
}

/// Real-repository sweep (a company fleet): a `${VAR}` in a child
/// Kustomization's `spec.patches` is for the child's postBuild (Flux applies
/// the patches while building the child, then substitutes), not something
/// the parent ships literally.
#[test]
fn variables_in_a_child_kustomizations_patches_are_the_childs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let child = ks(
        "app",
        "flux-system",
        "./app",
        "  postBuild:\n    substitute:\n      zone: example.com\n  patches:\n    - patch: |-\n        apiVersion: v1\n        kind: ConfigMap\n        metadata:\n          name: app\n        data:\n          host: app.${zone}\n      target:\n        kind: ConfigMap\n",
    );
    write(root, "clusters/prod/app.yaml", &child);
    write(root, "app/cm.yaml", &configmap("app"));
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
    // The same reference in the parent's own object still ships literally.
    write(
        root,
        "clusters/prod/literal.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: literal\n  namespace: default\ndata:\n  host: app.${zone}\n",
    );
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::SubstitutionUnaudited),
        "{}",
        messages(&outcome)
    );
}

/// Real-repository sweep (a k3s home lab): a configMapGenerator input that
/// is a URL is fetched by kustomize's file loader; it was "does not exist",
/// a false render-failed that hid every Kustomization behind the tier.
#[test]
fn a_generator_input_url_is_a_remote_input_not_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(
        root,
        "apps/kustomization.yaml",
        "resources:\n  - child.yaml\nconfigMapGenerator:\n  - name: dashboard\n    namespace: default\n    files:\n      - board.json=https://raw.githubusercontent.com/example/dashboards/main/board.json\n",
    );
    write(
        root,
        "apps/child.yaml",
        &ks("child", "flux-system", "./child", ""),
    );
    write(root, "child/cm.yaml", &configmap("child"));
    let outcome = run(root);
    let f: Vec<_> = outcome.findings.iter().collect();
    assert_eq!(f.len(), 1, "{}", messages(&outcome));
    assert_eq!(f[0].rule(), conformance::rules::RuleId::RemoteBase);
    assert_eq!(f[0].severity(), conformance::rules::Severity::Warning);
    assert!(
        f[0].message().contains("generator input"),
        "{}",
        f[0].message()
    );
    // The child behind the tier is found and built.
    let prod = &outcome.model.clusters[0];
    assert!(
        prod.tiers.keys().any(|t| t.name == "child"),
        "{:?}",
        prod.tiers.keys().collect::<Vec<_>>()
    );
}

/// Real-repository sweep (an organisation's EKS cluster): a
/// configMapGenerator input named `*.yaml` that is a Go template is data to
/// kustomize; we decoded it as YAML and failed the tier ("complex mapping
/// keys are not supported").
#[test]
fn a_yaml_named_generator_input_is_data_not_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(
        root,
        "apps/kustomization.yaml",
        "configMapGenerator:\n  - name: server-config\n    namespace: default\n    files:\n      - config/config_template.yaml\n",
    );
    write(
        root,
        "apps/config/config_template.yaml",
        "global:\n  broadcastAddress: {{ default .Env.POD_IP \"0.0.0.0\" }}\n",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
}

/// Issue 23: a patch whose text holds only null documents (`null`, `~`,
/// `---`), inline or from a file, with or without a target, panicked
/// (`docs[0]` of no document); kustomize refuses it ("illegally qualifies
/// as both an SM and JSON patch"), and so does Flux's spec.patches.
#[test]
fn a_null_patch_is_a_render_failure_at_its_line_not_a_panic() {
    for (body, target) in [
        ("null", "    target:\n      kind: ConfigMap\n"),
        ("~", "    target:\n      kind: ConfigMap\n"),
        ("---", ""),
        ("null", ""),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        one_tier(root, "");
        write(root, "apps/cm.yaml", &configmap("a"));
        write(
            root,
            "apps/kustomization.yaml",
            &format!("resources:\n  - cm.yaml\npatches:\n  - patch: \"{body}\"\n{target}"),
        );
        let outcome = run(root);
        let failed: Vec<_> = outcome
            .findings
            .iter()
            .filter(|f| f.rule() == conformance::rules::RuleId::RenderFailed)
            .collect();
        assert_eq!(failed.len(), 1, "{body}: {}", messages(&outcome));
        assert!(
            failed[0]
                .message()
                .contains("illegally qualifies as both an SM and JSON patch")
                && failed[0]
                    .at()
                    .is_some_and(|a| a.file == "apps/kustomization.yaml" && a.line == 4),
            "{body}: {:?}",
            failed[0]
        );
    }
    // In a Flux Kustomization's spec.patches.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(
        root,
        "  patches:\n    - patch: \"null\"\n      target:\n        kind: ConfigMap\n",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::RenderFailed
                && f.message().contains("illegally qualifies")),
        "{}",
        messages(&outcome)
    );
}

/// Issue 23: a replacement source index outside the value's parts fails
/// the build as kustomize's does (it was clamped to the first part), and a
/// target index far past the parts appends one part (it padded a vector up
/// to the index: 21 GB for 99999999999).
#[test]
fn replacement_indexes_as_kustomize_bounds_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(
        root,
        "apps/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\n  namespace: default\ndata:\n  v: a.b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dst\n  namespace: default\ndata:\n  x: p-q\n",
    );
    let kustomization = |source_index: &str, target_index: &str| {
        format!(
            "resources:\n  - cm.yaml\nreplacements:\n  - source:\n      kind: ConfigMap\n      name: src\n      fieldPath: data.v\n      options:\n        delimiter: '.'\n        index: {source_index}\n    targets:\n      - select:\n          name: dst\n        fieldPaths:\n          - data.x\n        options:\n          delimiter: '-'\n          index: {target_index}\n"
        )
    };
    write(root, "apps/kustomization.yaml", &kustomization("-1", "0"));
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::RenderFailed
                && f.message()
                    .contains("options.index -1 is out of bounds for value a.b")),
        "{}",
        messages(&outcome)
    );
    write(
        root,
        "apps/kustomization.yaml",
        &kustomization("1", "99999999999"),
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
    let tier =
        &outcome.model.clusters[0].tiers[&conformance::model::TierId::new("flux-system", "apps")];
    let dst = tier.objects().iter().find(|o| o.id.name == "dst").unwrap();
    assert_eq!(dst.body.str_at(&["data", "x"]).as_deref(), Some("p-q-b"));
}

/// Issue 23: kustomize checks a kustomization file's header (either may be
/// left out; written, they must agree): `kind: Kustomizaton` or an
/// apiVersion of another version was accepted.
#[test]
fn a_kustomization_header_kustomize_refuses_fails_the_build_at_its_line() {
    for (header, says, line) in [
        (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomizaton\n",
            "kind should be Kustomization or Component",
            2,
        ),
        (
            "apiVersion: kustomize.config.k8s.io/v9\nkind: Kustomization\n",
            "apiVersion for Kustomization should be kustomize.config.k8s.io/v1beta1",
            1,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        one_tier(root, "");
        write(root, "apps/cm.yaml", &configmap("a"));
        write(
            root,
            "apps/kustomization.yaml",
            &format!("{header}resources:\n  - cm.yaml\n"),
        );
        let outcome = run(root);
        let failed: Vec<_> = outcome
            .findings
            .iter()
            .filter(|f| f.rule() == conformance::rules::RuleId::RenderFailed)
            .collect();
        assert_eq!(failed.len(), 1, "{header}: {}", messages(&outcome));
        assert!(
            failed[0].message().contains(says) && failed[0].at().is_some_and(|a| a.line == line),
            "{header}: {:?}",
            failed[0]
        );
    }
    // Left out, either is fine.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(root, "apps/cm.yaml", &configmap("a"));
    write(root, "apps/kustomization.yaml", "resources:\n  - cm.yaml\n");
    assert!(run(root).findings.is_empty(), "{}", messages(&run(root)));
}
