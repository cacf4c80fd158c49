//! Issue 45 ("Security and hardening III"): input Flux refuses, which
//! passed with exit 0. Each case is a kustomization directory `apps/sub`
//! that `apps` includes (so kustomize decodes it strictly, as it does
//! every kustomization below spec.path); the native renderer must refuse
//! it, and where kubectl's kustomize (5.5 here) agrees with the
//! kustomize kustomize-controller runs (5.8), kubectl must refuse it too.

use std::path::Path;

use super::*;

const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1
          args: [\"a\"]
";
const CONFIGMAP: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: default
data:
  a: b
";

/// A cluster whose tier `apps` includes `apps/sub`, holding these files.
fn nested(root: &Path, files: &[(&str, &str)]) {
    one_tier(root, "");
    write(
        root,
        "apps/kustomization.yaml",
        "\
resources:
  - sub
",
    );
    write(root, "apps/sub/deployment.yaml", DEPLOYMENT);
    write(root, "apps/sub/cm.yaml", CONFIGMAP);
    for (file, text) in files {
        write(root, &format!("apps/sub/{file}"), text);
    }
}

/// kubectl's kustomize, when installed: `Some(error)` if it refuses `dir`.
fn kubectl_refuses(dir: &Path) -> Option<Option<String>> {
    let out = std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .ok()?;
    Some((!out.status.success()).then(|| String::from_utf8_lossy(&out.stderr).into_owned()))
}

/// A case: what it is, its files, what we say, what kubectl says.
type Case<'a> = (&'a str, Vec<(&'a str, String)>, &'a str, &'a str);

fn replacement(field_path: &str) -> String {
    format!(
        "\
resources: [cm.yaml, deployment.yaml]
replacements:
  - source: {{kind: ConfigMap, name: cm, fieldPath: data.a}}
    targets:
      - select: {{kind: Deployment}}
        fieldPaths: [\"{field_path}\"]
"
    )
}

#[test]
fn kustomizations_kustomize_refuses_fail_the_tier_with_their_line() {
    let tab_line = format!("{CONFIGMAP}\t\n");
    let tab_comment = CONFIGMAP.replace(
        "data:\n",
        "\
data:
\t  # a comment
",
    );
    let cases: Vec<Case> = vec![
        (
            "a replacement index past the end",
            vec![(
                "kustomization.yaml",
                replacement("spec.template.spec.containers.0.args.5"),
            )],
            "index 5 specified but only 1 elements found",
            "index 5 specified but only 1 elements found",
        ),
        (
            "a negative replacement index",
            vec![(
                "kustomization.yaml",
                replacement("spec.template.spec.containers.0.args.-1"),
            )],
            "wrong node kind: expected MappingNode but got SequenceNode",
            "wrong node kind",
        ),
        (
            "a malformed replacement index",
            vec![(
                "kustomization.yaml",
                replacement("spec.template.spec.containers.0.args.x1"),
            )],
            "wrong node kind: expected MappingNode but got SequenceNode",
            "wrong node kind",
        ),
        (
            "a replacement target field that does not exist",
            vec![(
                "kustomization.yaml",
                replacement("spec.template.spec.containers.0.env"),
            )],
            "unable to find field \"spec.template.spec.containers.0.env\" in replacement target",
            "unable to find field",
        ),
        (
            "an empty inline patch with a target",
            vec![(
                "kustomization.yaml",
                "\
resources: [cm.yaml]
patches:
  - patch: \"\"
    target: {kind: ConfigMap}
"
                .into(),
            )],
            "must specify one of patch and path",
            "must specify one of patch and path",
        ),
        (
            "a whitespace-only line holding a tab",
            vec![
                (
                    "kustomization.yaml",
                    "resources: [cm.yaml, t.yaml]\n".into(),
                ),
                ("t.yaml", tab_line.replace("name: cm", "name: t")),
            ],
            "found a tab character that violates indentation",
            "tab character",
        ),
        (
            "a tab before an indented comment",
            vec![
                (
                    "kustomization.yaml",
                    "resources: [cm.yaml, t.yaml]\n".into(),
                ),
                ("t.yaml", tab_comment.replace("name: cm", "name: t")),
            ],
            "found character that cannot start any token",
            "cannot start any token",
        ),
        (
            "an unknown field in a patch",
            vec![(
                "kustomization.yaml",
                "\
resources: [cm.yaml]
patches:
  - patch: '[{\"op\": \"add\", \"path\": \"/data/x\", \"value\": \"y\"}]'
    targt: {kind: ConfigMap}
"
                .into(),
            )],
            "json: unknown field \"targt\"",
            "unknown field",
        ),
        (
            "an unknown field in a patch target",
            vec![(
                "kustomization.yaml",
                "\
resources: [cm.yaml]
patches:
  - patch: '[{\"op\": \"add\", \"path\": \"/data/x\", \"value\": \"y\"}]'
    target: {kind: ConfigMap, nme: cm}
"
                .into(),
            )],
            "json: unknown field \"nme\"",
            "unknown field",
        ),
        (
            "an unknown field in a replacement",
            vec![(
                "kustomization.yaml",
                "\
resources: [cm.yaml]
replacements:
  - source: {kind: ConfigMap, name: cm}
    targts: []
"
                .into(),
            )],
            "json: unknown field \"targts\"",
            "unknown field",
        ),
        (
            "an unknown field in a generator",
            vec![(
                "kustomization.yaml",
                "\
configMapGenerator:
  - name: g
    namespace: default
    literal: [a=b]
"
                .into(),
            )],
            "json: unknown field \"literal\"",
            "unknown field",
        ),
        (
            "a kind that is not a string",
            vec![(
                "kustomization.yaml",
                "\
resources: [cm.yaml]
kind: [Kustomization]
"
                .into(),
            )],
            "cannot unmarshal array into Go struct field Kustomization.kind of type string",
            "cannot unmarshal array",
        ),
    ];
    for (what, files, ours, theirs) in cases {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<(&str, &str)> = files.iter().map(|(f, t)| (*f, t.as_str())).collect();
        nested(dir.path(), &files);
        let outcome = run(dir.path());
        let text = messages(&outcome);
        assert!(outcome.errors() > 0, "{what}: passed\n{text}");
        assert!(text.contains(ours), "{what}: says `{ours}`\n{text}");
        let failure = outcome
            .findings
            .iter()
            .find(|f| f.message().contains(ours))
            .unwrap();
        assert!(
            failure
                .at()
                .is_some_and(|at| at.file.starts_with("apps/sub/") && at.line > 0),
            "{what}: placed at its file and line: {:?}",
            failure.at()
        );
        if let Some(kubectl) = kubectl_refuses(&dir.path().join("apps/sub")) {
            let err = kubectl.unwrap_or_else(|| panic!("{what}: kubectl kustomize builds it"));
            assert!(
                err.contains(theirs),
                "{what}: kubectl says `{theirs}`: {err}"
            );
        }
    }
}

#[test]
fn what_kustomize_5_8_accepts_still_builds() {
    // An empty patch file: kustomize 5.8 (kustomize-controller 1.9)
    // parses no strategic-merge patch from it and does nothing; 5.5
    // wanted a target. A tab after `key:` and inside a flow collection:
    // go-yaml reads both.
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        (
            "an empty patch file with a target",
            vec![
                (
                    "kustomization.yaml",
                    "\
resources: [cm.yaml]
patches:
  - path: p.yaml
    target: {kind: ConfigMap}
",
                ),
                ("p.yaml", ""),
            ],
        ),
        (
            "tabs go-yaml reads",
            vec![
                ("kustomization.yaml", "resources: [cm.yaml, t.yaml]\n"),
                (
                    "t.yaml",
                    "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: t
  namespace: default
data:
  a:\tb
  c: \"x,
\ty\"
",
                ),
            ],
        ),
    ];
    for (what, files) in cases {
        let dir = tempfile::tempdir().unwrap();
        nested(dir.path(), &files);
        let outcome = run(dir.path());
        assert_eq!(outcome.errors(), 0, "{what}:\n{}", messages(&outcome));
    }
}

#[test]
fn a_built_in_kind_in_a_version_no_kubernetes_serves_is_reported() {
    for (api, severity) in [
        ("v9", "warning"), // may be newer than the table: the cluster is not pinned
        ("apps/v9", "warning"),
        ("1", "error"), // not shaped like a version at all
    ] {
        let dir = tempfile::tempdir().unwrap();
        one_tier(dir.path(), "");
        let kind = if api.starts_with("apps") {
            "Deployment"
        } else {
            "ConfigMap"
        };
        write(
            dir.path(),
            "apps/x.yaml",
            &format!(
                "\
apiVersion: {api}
kind: {kind}
metadata:
  name: x
  namespace: default
"
            ),
        );
        let outcome = run(dir.path());
        let found = outcome
            .findings
            .iter()
            .find(|f| f.rule().as_str() == "api-removed")
            .unwrap_or_else(|| panic!("{api}: no api-removed\n{}", messages(&outcome)));
        assert!(
            found.message().contains("does not serve"),
            "{}",
            found.message()
        );
        assert_eq!(
            found.severity().as_str(),
            severity,
            "{api}: {}",
            found.message()
        );
        // With the cluster's version declared, it is certain.
        write(
            dir.path(),
            "conformance.yaml",
            "clusters: {prod: {kubernetes: '1.33'}}\n",
        );
        let outcome = run(dir.path());
        let found = outcome
            .findings
            .iter()
            .find(|f| f.rule().as_str() == "api-removed")
            .unwrap();
        assert_eq!(found.severity().as_str(), "error", "{api} on 1.33");
    }
}

#[test]
fn build_fails_when_a_tier_was_not_built() {
    let dir = tempfile::tempdir().unwrap();
    one_tier(dir.path(), "");
    // Over the documents budget of one file: the tier is not checked.
    let docs = "\
a: 1
---
"
    .repeat(conformance::yaml::MAX_DOCUMENTS + 1);
    write(dir.path(), "apps/many.yaml", &docs);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["build", "--cluster", "prod", "--repo"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("# not built:"));
    assert!(
        stderr.contains("Kustomization apps was not built"),
        "{stderr}"
    );
}

#[test]
fn encodings_directives_fifos_and_cycles_are_read_or_refused_with_their_place() {
    // UTF-16 with a byte-order mark: go-yaml reads it.
    let dir = tempfile::tempdir().unwrap();
    one_tier(dir.path(), "");
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(CONFIGMAP.encode_utf16().flat_map(u16::to_le_bytes));
    std::fs::create_dir_all(dir.path().join("apps")).unwrap();
    std::fs::write(dir.path().join("apps/cm.yaml"), utf16).unwrap();
    let outcome = run(dir.path());
    assert_eq!(outcome.errors(), 0, "{}", messages(&outcome));
    assert_eq!(objects_of(&outcome, "apps").len(), 1);

    // Invalid UTF-8: the byte offset and the line.
    std::fs::write(
        dir.path().join("apps/cm.yaml"),
        b"\
a: b
c: \xff
",
    )
    .unwrap();
    let text = messages(&run(dir.path()));
    assert!(
        text.contains("invalid UTF-8 at byte offset 8 (line 2)"),
        "{text}"
    );

    // A directive, and a `...` that ends no document.
    for (yaml, said) in [
        (
            format!("%YAML 1.2\n---\n{CONFIGMAP}"),
            "found incompatible YAML document",
        ),
        ("...\n".to_string(), "did not find expected node content"),
    ] {
        write(dir.path(), "apps/cm.yaml", &yaml);
        let text = messages(&run(dir.path()));
        assert!(text.contains(said), "{yaml:?}: {text}");
    }

    // A FIFO named as a generator input: said so, never opened.
    #[cfg(unix)]
    {
        write(dir.path(), "apps/cm.yaml", CONFIGMAP);
        write(
            dir.path(),
            "apps/kustomization.yaml",
            "\
resources: [cm.yaml]
configMapGenerator:
  - name: g
    namespace: default
    files: [data.txt]
",
        );
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("apps/data.txt"))
            .status()
            .unwrap();
        assert!(made.success());
        let text = messages(&run(dir.path()));
        assert!(text.contains("it is a FIFO, not a regular file"), "{text}");
    }

    // A cycle of kustomizations: at the reference that closes it.
    let dir = tempfile::tempdir().unwrap();
    one_tier(dir.path(), "");
    write(
        dir.path(),
        "apps/kustomization.yaml",
        "\
resources:
  - a
",
    );
    write(
        dir.path(),
        "apps/a/kustomization.yaml",
        "\
resources:
  - ../b
",
    );
    write(
        dir.path(),
        "apps/b/kustomization.yaml",
        "\
resources:
  - ../a
",
    );
    let outcome = run(dir.path());
    let cycle = outcome
        .findings
        .iter()
        .find(|f| f.message().contains("cyclic kustomization reference"))
        .unwrap_or_else(|| panic!("{}", messages(&outcome)));
    let at = cycle.at().unwrap();
    assert_eq!(
        (at.file.as_str(), at.line),
        ("apps/b/kustomization.yaml", 2)
    );
}

#[test]
fn findings_sharing_a_cause_are_one_finding_of_bounded_size() {
    // Twenty Kustomizations building the same path: one duplicate-object
    // finding (before: nineteen, each listing all twenty), naming eight.
    let dir = tempfile::tempdir().unwrap();
    sync(dir.path(), "clusters/prod");
    let tiers: String = (0..20)
        .map(|i| {
            format!(
                "---\n{}",
                ks(&format!("t{i:02}"), "flux-system", "./shared", "")
            )
        })
        .collect();
    write(dir.path(), "clusters/prod/tiers.yaml", &tiers);
    write(dir.path(), "shared/cm.yaml", CONFIGMAP);
    let outcome = run(dir.path());
    let dups: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule().as_str() == "duplicate-object")
        .collect();
    assert_eq!(dups.len(), 1, "{}", messages(&outcome));
    assert!(
        dups[0].message().contains("rendered by 20 Kustomizations"),
        "{}",
        dups[0].message()
    );
    assert!(
        dups[0].message().contains("and 12 more"),
        "{}",
        dups[0].message()
    );
    assert!(dups[0].related().len() <= 8);

    // Thirty objects without a namespace in one tier: one finding.
    let dir = tempfile::tempdir().unwrap();
    one_tier(dir.path(), "");
    let docs: Vec<String> = (0..30)
        .map(|i| {
            format!(
                "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{i:02}
"
            )
        })
        .collect();
    write(dir.path(), "apps/cms.yaml", &docs.join("---\n"));
    let outcome = run(dir.path());
    let missing: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule().as_str() == "namespace-unspecified")
        .collect();
    assert_eq!(missing.len(), 1, "{}", messages(&outcome));
    assert!(
        missing[0]
            .message()
            .starts_with("30 objects in apps have no metadata.namespace")
    );
    assert!(
        missing[0].message().contains("and 22 more"),
        "{}",
        missing[0].message()
    );
}

#[test]
fn a_bootstrap_script_over_its_budget_is_not_read_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    one_tier(dir.path(), "");
    write(dir.path(), "apps/cm.yaml", CONFIGMAP);
    let body = "  key: value with some text to fill the line up\n".repeat(30_000);
    write(
        dir.path(),
        "bootstrap.sh",
        &format!("#!/bin/bash\ncat <<EOF | kubectl apply -f -\n{body}EOF\n"),
    );
    let outcome = run(dir.path());
    let notes = format!("{:?}", outcome.bootstrap.notes);
    assert!(
        notes.contains("over the budget of 1048576 bytes for a bootstrap script"),
        "{notes}"
    );
}
