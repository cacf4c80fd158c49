//! Hostile and broken input: odd JSON paths, files outside the repository, symlinks, budgets, strict config, unreadable directories.

use super::*;

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
                "\
resources: [cm.yaml]
patches:
  - target: {{kind: ConfigMap}}
    patch: |
      - op: {op}
        path: {path}
        value: {{apiVersion: v1, kind: ConfigMap, metadata: {{name: b, namespace: default}}}}
"
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
                "\
configMapGenerator:
  - name: leak
    namespace: default
    {field}:
      - ../../../../../../../../etc/hostname
"
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
        "\
configMapGenerator:
  - name: leak
    namespace: default
    files:
      - hostname
",
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
    // Issue 26: the run fails, at the file and line, instead of passing a
    // tier nothing checked with exit 0.
    let budget: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule() == conformance::rules::RuleId::BudgetExceeded)
        .collect();
    assert_eq!(budget.len(), 1, "{}", messages(&outcome));
    assert!(budget[0].is_error());
    assert_eq!(
        budget[0].at().map(|a| a.file.as_str()),
        Some("apps/cm.yaml")
    );
    assert!(budget[0].at().is_some_and(|a| a.line > 0));
}

/// Issue 26: a 1,500-long dependsOn cycle gave 3,000 findings that each
/// spelt out the whole loop (quadratic: 4.3 GB at 5,000). Each member is
/// still reported, with a bounded text, under one cause.
#[test]
fn a_long_cycle_is_reported_per_member_in_bounded_words() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let n = 1500;
    let mut tiers = String::new();
    for i in 0..n {
        let prev = (i + n - 1) % n;
        tiers.push_str("---\n");
        tiers.push_str(&ks(
            &format!("t{i:04}"),
            "flux-system",
            &format!("./apps/t{i:04}"),
            &format!(
                "  dependsOn:
    - name: t{prev:04}
"
            ),
        ));
        write(
            root,
            &format!("apps/t{i:04}/cm.yaml"),
            &configmap(&format!("c{i}")),
        );
    }
    write(root, "clusters/prod/tiers.yaml", &tiers);
    let outcome = run(root);
    let cycle: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule() == conformance::rules::RuleId::DependencyCycle)
        .collect();
    assert_eq!(cycle.len(), n, "one per member");
    let longest = cycle
        .iter()
        .map(|f| f.message().len() + f.why().len())
        .max()
        .unwrap();
    assert!(
        longest < 2_000,
        "a finding of {longest} bytes grows with the cycle"
    );
    let causes: std::collections::BTreeSet<_> = cycle
        .iter()
        .filter_map(|f| f.cause().as_ref().map(|c| c.key.clone()))
        .collect();
    assert_eq!(causes.len(), 1, "one cycle, one cause");
    assert!(
        cycle[0].message().contains("and 1488 more"),
        "{}",
        cycle[0].message()
    );
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
            format!(
                "  dependsOn:
    - name: t{:04}
",
                i - 1
            )
        };
        tiers.push_str(&format!(
            "---\n{}",
            ks(&format!("t{i:04}"), "flux-system", "./apps", &deps)
        ));
    }
    write(root, "clusters/prod/tiers.yaml", &tiers);
    write(root, "apps/cm.yaml", &configmap("a"));
    let session = conformance::session::Session::open(
        &conformance::session::RunOptions::at(root).renderer(conformance::render::Choice::Native),
    )
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
        "\
substitution:
  strict: \"no\"
",
    );
    let err = run_result(root).unwrap_err().to_string();
    assert!(err.contains("conformance.yaml:2"), "{err}");
}

/// Issue 13: a document that is a list or a scalar pointed at the wrong
/// file (the kustomization instead of the file holding it).
#[test]
fn a_document_that_is_not_an_object_is_blamed_on_its_own_file() {
    for body in [
        "\
- a
- b
",
        "just a string\n",
    ] {
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
                    "\
resources:
  - good.yaml
  - bad.yaml
",
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
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: Web_Config
  namespace: default
  labels:
    team: platform team
data: {}
---
apiVersion: v1
kind: Service
metadata:
  name: 1web
  namespace: default
spec:
  ports: [{port: 80}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:web:reader
rules: []
",
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

/// Issue 13: a `dependsOn` entry written as a bare string (`- apps`) was
/// dropped without a word, so the tier ran unordered. Flux's CRD rejects it.
#[test]
fn a_depends_on_entry_without_a_name_is_reported_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(
        root,
        "  dependsOn:
    - infra
",
    );
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

/// Issue 23: diamond-shaped bases (each level lists two bases that share
/// the next) were walked once per path by the reach walk, 2^depth times:
/// depth 20 took 52 s. kustomize stops at the first duplicate id; the walk
/// now reads a directory once. At depth 26 the old walk would run for hours.
#[test]
fn diamond_bases_are_read_once_and_fail_on_the_duplicate_id() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps/l0a", ""),
    );
    const DEPTH: usize = 26;
    for level in 0..=DEPTH {
        for side in ["a", "b"] {
            let path = format!("apps/l{level}{side}");
            if level == DEPTH {
                write(
                    root,
                    &format!("{path}/kustomization.yaml"),
                    "resources: [cm.yaml]\n",
                );
                write(
                    root,
                    &format!("{path}/cm.yaml"),
                    &format!(
                        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: leaf-{side}
  namespace: default
"
                    ),
                );
            } else {
                write(
                    root,
                    &format!("{path}/kustomization.yaml"),
                    &format!("resources: [../l{}a, ../l{}b]\n", level + 1, level + 1),
                );
            }
        }
    }
    let outcome = run(root);
    let failed: Vec<_> = rules(&outcome)
        .into_iter()
        .filter(|(rule, _, _)| *rule == "render-failed")
        .collect();
    assert_eq!(failed.len(), 1, "{}", all(&outcome));
    assert!(all(&outcome).contains("leaf-a"), "{}", all(&outcome));
}

/// A bootstrap script that pipes a variable assigned from itself
/// (`X=$(echo "$X" | yq …)`, then `echo "$X" | kubectl apply -f -`) is
/// followed once: it overflowed the stack (exit 134) on a public home lab.
#[test]
fn a_variable_assigned_from_itself_is_followed_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(
        root,
        "scripts/bootstrap.sh",
        "#!/bin/bash\nKUSTOMIZATION_YAML=$(echo \"$KUSTOMIZATION_YAML\" | yq '.spec.patches += []')\necho \"$KUSTOMIZATION_YAML\" | kubectl apply -f -\n",
    );
    let outcome = run(root);
    assert_eq!(outcome.model.clusters.len(), 1, "{}", all(&outcome));
}
