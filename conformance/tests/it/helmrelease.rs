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
                "  dependsOn:
    - name: sources
",
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
    format!(
        "\
apiVersion: v1
kind: Namespace
metadata:
  name: {name}
"
    )
}

/// A HelmRelease `web/{name}` of chart `app` from `charts`, with `spec`
/// lines appended under `spec:`.
fn release(name: &str, spec: &str) -> String {
    format!(
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {name}
  namespace: web
spec:
  interval: 1h
  chart:
    spec:
      chart: app
      sourceRef:
        kind: HelmRepository
        name: charts
        namespace: flux-system
{spec}"
    )
}

fn config_map(name: &str, key: &str, value: &str) -> String {
    let indented: String = value.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: web
data:
  {key}: |
{indented}"
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

const VALUES_FROM: &str = "  valuesFrom:
    - kind: ConfigMap
      name: web-values
";

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
                "  valuesFrom:
    - kind: Secrets
      name: web-values
",
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
            "\
apiVersion: v1
kind: Secret
metadata:
  name: web-values
  namespace: web
{data}"
        )
    };
    let from_secret = "  valuesFrom:
    - kind: Secret
      name: web-values
";
    // stringData with YAML that does not parse; the value has a password.
    repo(
        root,
        &[
            ("hr.yaml", &release("web", from_secret)),
            (
                "secret.yaml",
                &secret_with(
                    "\
stringData:
  values.yaml: |
    password: \"hunter2
",
                ),
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
                &secret_with(
                    "\
data:
  values.yaml: cmVwbGljYXM6IDIK
",
                ),
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
                    "\
stringData:
  other.yaml: ENC[AES256_GCM,data:x,type:str]
sops:
  mac: ENC[AES256_GCM,data:y,type:str]
",
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
            &format!(
                "  postRenderers:
    - kustomize:
{body}"
            ),
        )
    };
    for (body, says) in [
        (
            "        patches:
          - patch: |
              spec:
                replicas: 2
",
            "strategic merge patch needs kind and metadata.name",
        ),
        (
            "        patches:
          - target:
              kind: Deployment
",
            "has no patch text",
        ),
        (
            "        patches:
          - target:
              name: \"web-(\"
            patch: |
              - op: remove
                path: /spec/replicas
",
            "is not a valid regex",
        ),
        (
            "        images:
          - newTag: 1.2.3
",
            "images[0] has no name",
        ),
        (
            "        patches:
          - patch: |
              - op: bogus
                path: /spec/replicas
",
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
                "        patches:
          - target:
              kind: Deployment
            patch: |
              - op: replace
                path: /spec/replicas
                value: 2
        images:
          - name: nginx
            newTag: 1.27.0
",
            ),
        )],
    );
    assert!(invalid(root).is_empty(), "{:?}", invalid(root));
}

#[test]
fn chart_sources_of_the_kind_each_field_takes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let oci = "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: app
  namespace: web
spec:
  interval: 1h
  url: oci://ghcr.io/example/charts/app
";
    // An OCIRepository under chart.spec.sourceRef.
    repo(
        root,
        &[
            ("oci.yaml", oci),
            (
                "hr.yaml",
                "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: web
spec:
  interval: 1h
  chart:
    spec:
      chart: app
      sourceRef:
        kind: OCIRepository
        name: app
",
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
            "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: web
spec:
  interval: 1h
  chartRef:
    kind: HelmRepository
    name: charts
    namespace: flux-system
",
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
                "  chartRef:
    kind: OCIRepository
    name: app
",
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
            "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: web
spec:
  interval: 1h
",
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
                "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: web
spec:
  interval: 1h
  chartRef:
    kind: OCIRepository
    name: app
",
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
            &format!(
                "      chart: app
      version: \"{v}\"
"
            ),
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
            (
                "a.yaml",
                &release(
                    "a",
                    "  dependsOn:
    - name: b
",
                ),
            ),
            (
                "b.yaml",
                &release(
                    "b",
                    "  dependsOn:
    - name: a
",
                ),
            ),
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
            (
                "a.yaml",
                &release(
                    "a",
                    "  dependsOn:
    - name: b
",
                ),
            ),
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
            &release(
                "a",
                "  dependsOn:
    - name: databse
",
            ),
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
            .contains("external: [\"HelmRelease/web/databse\"]"),
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
                "  valuesFrom:
    - kind: Secret
      name: a-values
",
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
                    "  valuesFrom:
    - kind: Secret
      name: db-app
",
                ),
            ),
            (
                "db.yaml",
                "\
apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata:
  name: db
  namespace: web
spec:
  instances: 1
",
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
        &[(
            "a.yaml",
            &release(
                "a",
                "  dependsOn:
    - name: db
",
            ),
        )],
    );
    // `db` is in a tier apps is not ordered after.
    write(
        root,
        "clusters/prod/db.yaml",
        &ks(
            "db",
            "flux-system",
            "./db",
            "  dependsOn:
    - name: sources
",
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
            &[(
                "a.yaml",
                &release(
                    "a",
                    "  dependsOn:
    - name: db
",
                ),
            )],
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
                    &format!(
                        "  dependsOn:
    - name: sources
{wait}"
                    ),
                ),
                ks(
                    "db",
                    "flux-system",
                    "./db",
                    "  dependsOn:
    - name: apps
",
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
