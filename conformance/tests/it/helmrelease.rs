//! HelmRelease inputs as helm-controller reads them: `helmrelease-invalid`
//! (what the inputs hold) and the references a release makes
//! (`unresolved-reference`, `cold-start-race`: whether they exist in time).

use std::path::Path;

use conformance::rules::{Finding, RuleId, Severity};

use crate::support::*;

/// One cluster: a `sources` tier with the HelmRepository `charts`, and an
/// `apps` tier (after it) with the namespace `web` and `files`.
fn repo(root: &Path, files: &[(&str, &str)]) {
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("sources", "flux-system", "./sources", ""),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:\n    - name: sources\n",
            ),
        ]
        .join("---\n"),
    );
    helm_repository(root, "sources", "flux-system", "charts");
    write(root, "apps/ns.yaml", &namespace("web"));
    for (rel, text) in files {
        write(root, &format!("apps/{rel}"), text);
    }
}

fn namespace(name: &str) -> String {
    format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n")
}

/// A HelmRelease `web/{name}` of chart `app` from `charts`, with `spec`
/// lines appended under `spec:`.
fn release(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: web\nspec:\n  interval: 1h\n  chart:\n    spec:\n      chart: app\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n        namespace: flux-system\n{spec}"
    )
}

fn config_map(name: &str, key: &str, value: &str) -> String {
    let indented: String = value.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: web\ndata:\n  {key}: |\n{indented}"
    )
}

fn of(findings: &[Finding], rule: RuleId) -> Vec<&Finding> {
    findings.iter().filter(|f| f.rule() == rule).collect()
}

fn invalid(root: &Path) -> Vec<String> {
    let outcome = run(root);
    of(&outcome.findings, RuleId::HelmReleaseInvalid)
        .iter()
        .map(|f| f.message().to_string())
        .collect()
}

const VALUES_FROM: &str = "  valuesFrom:\n    - kind: ConfigMap\n      name: web-values\n";

#[test]
fn a_values_key_the_config_map_does_not_hold() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(
        root,
        &[
            ("hr.yaml", &release("web", VALUES_FROM)),
            (
                "cm.yaml",
                &config_map("web-values", "values.yml", "replicas: 2"),
            ),
        ],
    );
    let found = invalid(root);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("names key values.yaml of ConfigMap/web/web-values")
            && found[0].contains("its keys: values.yml"),
        "{found:?}"
    );
    // optional: true tolerates it, as ChartValuesFromReferences does.
    repo(
        root,
        &[(
            "hr.yaml",
            &release("web", &format!("{VALUES_FROM}      optional: true\n")),
        )],
    );
    assert!(invalid(root).is_empty());
    // The right key is fine.
    repo(
        root,
        &[
            ("hr.yaml", &release("web", VALUES_FROM)),
            (
                "cm.yaml",
                &config_map("web-values", "values.yaml", "replicas: 2"),
            ),
        ],
    );
    assert!(run(root).findings.is_empty(), "{:#?}", run(root).findings);
}

#[test]
fn values_that_are_not_yaml_of_a_map() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (value, says) in [
        ("image: \"unclosed", "is not valid YAML"),
        ("- a\n- b", "holds a YAML list"),
        ("just words", "holds a single scalar"),
    ] {
        repo(
            root,
            &[
                ("hr.yaml", &release("web", VALUES_FROM)),
                ("cm.yaml", &config_map("web-values", "values.yaml", value)),
            ],
        );
        let found = invalid(root);
        assert_eq!(found.len(), 1, "{value}: {found:?}");
        assert!(found[0].contains(says), "{value}: {found:?}");
    }
    // With targetPath the key is one value, not a map.
    repo(
        root,
        &[
            (
                "hr.yaml",
                &release(
                    "web",
                    &format!("{VALUES_FROM}      targetPath: image.tag\n"),
                ),
            ),
            (
                "cm.yaml",
                &config_map("web-values", "values.yaml", "just words"),
            ),
        ],
    );
    assert!(invalid(root).is_empty());
}

#[test]
fn a_values_reference_of_another_kind() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(
        root,
        &[(
            "hr.yaml",
            &release(
                "web",
                "  valuesFrom:\n    - kind: Secrets\n      name: web-values\n",
            ),
        )],
    );
    let found = invalid(root);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("kind Secrets"), "{found:?}");
}

#[test]
fn secret_values_are_read_and_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let secret_with = |data: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-values\n  namespace: web\n{data}"
        )
    };
    let from_secret = "  valuesFrom:\n    - kind: Secret\n      name: web-values\n";
    // stringData with YAML that does not parse; the value has a password.
    repo(
        root,
        &[
            ("hr.yaml", &release("web", from_secret)),
            (
                "secret.yaml",
                &secret_with("stringData:\n  values.yaml: |\n    password: \"hunter2\n"),
            ),
        ],
    );
    let outcome = run(root);
    let found = of(&outcome.findings, RuleId::HelmReleaseInvalid);
    assert_eq!(found.len(), 1, "{:#?}", outcome.findings);
    assert!(found[0].message().contains("is not valid YAML (line"));
    for format in ["human", "json", "sarif", "junit", "github"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
            .args(["check", "--repo"])
            .arg(root)
            .args(["--format", format])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("helmrelease-invalid"), "{format}: {text}");
        assert!(
            !text.contains("hunter2"),
            "{format} prints the Secret's value"
        );
    }
    // data is base64: `replicas: 2` decodes to a map, fine.
    repo(
        root,
        &[
            ("hr.yaml", &release("web", from_secret)),
            (
                "secret.yaml",
                &secret_with("data:\n  values.yaml: cmVwbGljYXM6IDIK\n"),
            ),
        ],
    );
    assert!(invalid(root).is_empty());
    // SOPS-encrypted: its values are unknown here, nothing is judged.
    repo(
        root,
        &[
            ("hr.yaml", &release("web", from_secret)),
            (
                "secret.yaml",
                &secret_with(
                    "stringData:\n  other.yaml: ENC[AES256_GCM,data:x,type:str]\nsops:\n  mac: ENC[AES256_GCM,data:y,type:str]\n",
                ),
            ),
        ],
    );
    assert!(invalid(root).is_empty(), "{:?}", invalid(root));
}

#[test]
fn post_renderer_patches_and_images_as_kustomize_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let post = |body: &str| {
        release(
            "web",
            &format!("  postRenderers:\n    - kustomize:\n{body}"),
        )
    };
    for (body, says) in [
        (
            "        patches:\n          - patch: |\n              spec:\n                replicas: 2\n",
            "strategic merge patch needs kind and metadata.name",
        ),
        (
            "        patches:\n          - target:\n              kind: Deployment\n",
            "has no patch text",
        ),
        (
            "        patches:\n          - target:\n              name: \"web-(\"\n            patch: |\n              - op: remove\n                path: /spec/replicas\n",
            "is not a valid regex",
        ),
        (
            "        images:\n          - newTag: 1.2.3\n",
            "images[0] has no name",
        ),
        (
            "        patches:\n          - patch: |\n              - op: bogus\n                path: /spec/replicas\n",
            "operation `bogus` is none of",
        ),
    ] {
        repo(root, &[("hr.yaml", &post(body))]);
        let found = invalid(root);
        assert_eq!(found.len(), 1, "{body}: {found:?}");
        assert!(found[0].contains(says), "{body}: {found:?}");
    }
    repo(
        root,
        &[(
            "hr.yaml",
            &post(
                "        patches:\n          - target:\n              kind: Deployment\n            patch: |\n              - op: replace\n                path: /spec/replicas\n                value: 2\n        images:\n          - name: nginx\n            newTag: 1.27.0\n",
            ),
        )],
    );
    assert!(invalid(root).is_empty(), "{:?}", invalid(root));
}

#[test]
fn chart_sources_of_the_kind_each_field_takes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let oci = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: app\n  namespace: web\nspec:\n  interval: 1h\n  url: oci://ghcr.io/example/charts/app\n";
    // An OCIRepository under chart.spec.sourceRef.
    repo(
        root,
        &[
            ("oci.yaml", oci),
            (
                "hr.yaml",
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: web\nspec:\n  interval: 1h\n  chart:\n    spec:\n      chart: app\n      sourceRef:\n        kind: OCIRepository\n        name: app\n",
            ),
        ],
    );
    let found = invalid(root);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("named by spec.chartRef instead"),
        "{found:?}"
    );
    // A HelmRepository under chartRef.
    repo(
        root,
        &[(
            "hr.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: web\nspec:\n  interval: 1h\n  chartRef:\n    kind: HelmRepository\n    name: charts\n    namespace: flux-system\n",
        )],
    );
    let found = invalid(root);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("chartRef cannot use"), "{found:?}");
    // Both, then neither.
    repo(
        root,
        &[(
            "hr.yaml",
            &release(
                "web",
                "  chartRef:\n    kind: OCIRepository\n    name: app\n",
            ),
        )],
    );
    assert!(
        invalid(root)
            .iter()
            .any(|m| m.contains("both spec.chart and spec.chartRef"))
    );
    repo(
        root,
        &[(
            "hr.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: web\nspec:\n  interval: 1h\n",
        )],
    );
    assert!(
        invalid(root)
            .iter()
            .any(|m| m.contains("neither spec.chart nor spec.chartRef"))
    );
    // An OCIRepository under chartRef is right.
    repo(
        root,
        &[
            ("oci.yaml", oci),
            (
                "hr.yaml",
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: web\nspec:\n  interval: 1h\n  chartRef:\n    kind: OCIRepository\n    name: app\n",
            ),
        ],
    );
    assert!(run(root).findings.is_empty(), "{:#?}", run(root).findings);
}

#[test]
fn chart_versions_are_semver_constraints() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let versioned = |v: &str| {
        release("web", "").replace(
            "      chart: app\n",
            &format!("      chart: app\n      version: \"{v}\"\n"),
        )
    };
    repo(root, &[("hr.yaml", &versioned("latest"))]);
    let found = invalid(root);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("`latest` is not a semver"), "{found:?}");
    for ok in [">=1.2.0 <2.0.0", "~1.2", "1.x", "*", "1.2.3"] {
        repo(root, &[("hr.yaml", &versioned(ok))]);
        assert!(invalid(root).is_empty(), "{ok}: {:?}", invalid(root));
    }
    // A chart from a GitRepository ignores the version.
    repo(
        root,
        &[(
            "hr.yaml",
            &versioned("latest").replace(
                "kind: HelmRepository\n        name: charts",
                "kind: GitRepository\n        name: flux-system",
            ),
        )],
    );
    assert!(invalid(root).is_empty(), "{:?}", invalid(root));
}

#[test]
fn depends_on_loops_among_releases() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(
        root,
        &[
            ("a.yaml", &release("a", "  dependsOn:\n    - name: b\n")),
            ("b.yaml", &release("b", "  dependsOn:\n    - name: a\n")),
        ],
    );
    let found = invalid(root);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found
            .iter()
            .all(|m| m.contains("dependsOn cycle among HelmReleases")),
        "{found:?}"
    );
    repo(
        root,
        &[
            ("a.yaml", &release("a", "  dependsOn:\n    - name: b\n")),
            ("b.yaml", &release("b", "")),
        ],
    );
    assert!(run(root).findings.is_empty(), "{:#?}", run(root).findings);
}

#[test]
fn references_a_release_makes_must_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A dependency nothing defines: helm-controller never installs it.
    repo(
        root,
        &[(
            "a.yaml",
            &release("a", "  dependsOn:\n    - name: databse\n"),
        )],
    );
    let outcome = run(root);
    let unresolved = of(&outcome.findings, RuleId::UnresolvedReference);
    assert_eq!(unresolved.len(), 1, "{:#?}", outcome.findings);
    assert!(
        unresolved[0]
            .message()
            .contains("HelmRelease/web/databse (spec.dependsOn)")
    );
    // Defined nowhere in the repository: something outside may create it,
    // so a warning that says how to declare it.
    assert_eq!(unresolved[0].severity(), Severity::Warning);
    assert!(
        unresolved[0]
            .message()
            .contains("preinstalled_objects: [HelmRelease/web/databse]"),
        "{}",
        unresolved[0].message()
    );
    // A values Secret nothing creates.
    repo(
        root,
        &[(
            "a.yaml",
            &release(
                "a",
                "  valuesFrom:\n    - kind: Secret\n      name: a-values\n",
            ),
        )],
    );
    let outcome = run(root);
    let unresolved = of(&outcome.findings, RuleId::UnresolvedReference);
    assert_eq!(unresolved.len(), 1, "{:#?}", outcome.findings);
    assert!(
        unresolved[0]
            .message()
            .contains("Secret/web/a-values (spec.valuesFrom)")
    );
    // ... unless a controller writes it: CloudNativePG's `<cluster>-app`.
    repo(
        root,
        &[
            (
                "a.yaml",
                &release(
                    "a",
                    "  valuesFrom:\n    - kind: Secret\n      name: db-app\n",
                ),
            ),
            (
                "db.yaml",
                "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata:\n  name: db\n  namespace: web\nspec:\n  instances: 1\n",
            ),
        ],
    );
    let outcome = run(root);
    assert!(
        of(&outcome.findings, RuleId::UnresolvedReference).is_empty(),
        "{:#?}",
        outcome.findings
    );
    // A chart source nothing defines.
    repo(
        root,
        &[(
            "a.yaml",
            &release("a", "").replace("name: charts", "name: chrats"),
        )],
    );
    let outcome = run(root);
    let unresolved = of(&outcome.findings, RuleId::UnresolvedReference);
    assert_eq!(unresolved.len(), 1, "{:#?}", outcome.findings);
    assert!(
        unresolved[0]
            .message()
            .contains("HelmRepository/flux-system/chrats")
    );
}

#[test]
fn a_dependency_in_an_unordered_tier_only_delays_the_release() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(
        root,
        &[("a.yaml", &release("a", "  dependsOn:\n    - name: db\n"))],
    );
    // `db` is in a tier apps is not ordered after.
    write(
        root,
        "clusters/prod/db.yaml",
        &ks(
            "db",
            "flux-system",
            "./db",
            "  dependsOn:\n    - name: sources\n",
        ),
    );
    write(root, "db/hr.yaml", &release("db", ""));
    write(root, "db/ns.yaml", &namespace("web"));
    let outcome = run(root);
    let about_a: Vec<&Finding> = outcome
        .findings
        .iter()
        .filter(|f| f.object() == Some("HelmRelease/web/a"))
        .collect();
    assert!(about_a.is_empty(), "{about_a:#?}");
}

#[test]
fn the_source_a_cluster_syncs_from_exists_from_bootstrap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(
        root,
        &[(
            "hr.yaml",
            &release("web", "").replace(
                "kind: HelmRepository\n        name: charts",
                "kind: GitRepository\n        name: flux-system",
            ),
        )],
    );
    // The sync GitRepository is not in the repository (a managed Flux
    // extension, a FluxInstance or `flux bootstrap` created it): the
    // release's chart source still exists on the cold start.
    write(
        root,
        "clusters/prod/flux-system/gotk-sync.yaml",
        &ks("flux-system", "flux-system", "./clusters/prod", ""),
    );
    let outcome = run(root);
    assert!(
        of(&outcome.findings, RuleId::UnresolvedReference).is_empty()
            && of(&outcome.findings, RuleId::ColdStartRace).is_empty(),
        "{:#?}",
        outcome.findings
    );
}

#[test]
fn a_tier_that_waits_for_a_release_whose_dependency_waits_for_the_tier() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let setup = |wait: &str| {
        repo(
            root,
            &[("a.yaml", &release("a", "  dependsOn:\n    - name: db\n"))],
        );
        write(
            root,
            "clusters/prod/tiers.yaml",
            &[
                ks("sources", "flux-system", "./sources", ""),
                ks(
                    "apps",
                    "flux-system",
                    "./apps",
                    &format!("  dependsOn:\n    - name: sources\n{wait}"),
                ),
                ks(
                    "db",
                    "flux-system",
                    "./db",
                    "  dependsOn:\n    - name: apps\n",
                ),
            ]
            .join("---\n"),
        );
        write(root, "db/hr.yaml", &release("db", ""));
    };
    // apps's Ready waits for HelmRelease a, which helm-controller installs
    // only after db is Ready; db's tier starts only after apps is Ready.
    setup("  wait: true\n");
    let outcome = run(root);
    let unresolved = of(&outcome.findings, RuleId::UnresolvedReference);
    assert_eq!(unresolved.len(), 1, "{:#?}", outcome.findings);
    assert!(
        unresolved[0]
            .message()
            .contains("HelmRelease/web/db (spec.dependsOn)")
            && unresolved[0].severity() == Severity::Error,
        "{}",
        unresolved[0].message()
    );
    // Without wait, apps is Ready once applied: db follows, a installs.
    setup("");
    let outcome = run(root);
    assert!(
        of(&outcome.findings, RuleId::UnresolvedReference).is_empty(),
        "{:#?}",
        outcome.findings
    );
}
