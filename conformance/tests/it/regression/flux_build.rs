//! Flux's build as kustomize-controller does it: ignore rules, spec.components and spec.patches, generator inputs, patches and replacements kustomize refuses, the kustomization header, SOPS.

use super::*;

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
        "\
creation_rules:
  - age: age1xyz
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
    let sync = std::fs::read_to_string(root.join("clusters/prod/flux-system/gotk-sync.yaml"))
        .unwrap()
        .replace(
            "  ref:
    branch: main
",
            "  ref:
    branch: main
  ignore: |
    /docs
",
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
    one_tier(
        root,
        "  components:
    - ../components/extra
",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    write(
        root,
        "apps/kustomization.yaml",
        "\
namespace: apps
namePrefix: x-
resources:
  - cm.yaml
",
    );
    write(
        root,
        "components/extra/kustomization.yaml",
        "\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
  - extra.yaml
",
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
        "  patches:
    - target:
        labelSelector: team=a
      patch: |
        - op: add
          path: /data/patched
          value: \"yes\"
",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    write(
        root,
        "apps/kustomization.yaml",
        "\
resources:
  - cm.yaml
labels:
  - pairs:
      team: a
",
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
    one_tier(
        root,
        "  components:
    - ../components/gone
",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    assert_eq!(
        run(root).findings[0].rule(),
        conformance::rules::RuleId::RenderFailed
    );
    one_tier(
        root,
        "  ignoreMissingComponents: true
  components:
    - ../components/gone
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
    one_tier(
        root,
        "  components:
    - https://github.com/example/components//extra?ref=v1
",
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
        "  postBuild:
    substitute:
      zone: example.com
  patches:
    - patch: |-
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: app
        data:
          host: app.${zone}
      target:
        kind: ConfigMap
",
    );
    write(root, "clusters/prod/app.yaml", &child);
    write(root, "app/cm.yaml", &configmap("app"));
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
    // The same reference in the parent's own object still ships literally.
    write(
        root,
        "clusters/prod/literal.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: literal
  namespace: default
data:
  host: app.${zone}
",
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
        "\
resources:
  - child.yaml
configMapGenerator:
  - name: dashboard
    namespace: default
    files:
      - board.json=https://raw.githubusercontent.com/example/dashboards/main/board.json
",
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
        "\
configMapGenerator:
  - name: server-config
    namespace: default
    files:
      - config/config_template.yaml
",
    );
    write(
        root,
        "apps/config/config_template.yaml",
        "\
global:
  broadcastAddress: {{ default .Env.POD_IP \"0.0.0.0\" }}
",
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
        (
            "null",
            "    target:
      kind: ConfigMap
",
        ),
        (
            "~",
            "    target:
      kind: ConfigMap
",
        ),
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
            &format!(
                "\
resources:
  - cm.yaml
patches:
  - patch: \"{body}\"
{target}"
            ),
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
        "  patches:
    - patch: \"null\"
      target:
        kind: ConfigMap
",
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
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: src
  namespace: default
data:
  v: a.b
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dst
  namespace: default
data:
  x: p-q
",
    );
    let kustomization = |source_index: &str, target_index: &str| {
        format!(
            "\
resources:
  - cm.yaml
replacements:
  - source:
      kind: ConfigMap
      name: src
      fieldPath: data.v
      options:
        delimiter: '.'
        index: {source_index}
    targets:
      - select:
          name: dst
        fieldPaths:
          - data.x
        options:
          delimiter: '-'
          index: {target_index}
"
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
            "\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomizaton
",
            "kind should be Kustomization or Component",
            2,
        ),
        (
            "\
apiVersion: kustomize.config.k8s.io/v9
kind: Kustomization
",
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
            &format!(
                "\
{header}resources:
  - cm.yaml
"
            ),
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
    write(
        root,
        "apps/kustomization.yaml",
        "\
resources:
  - cm.yaml
",
    );
    assert!(run(root).findings.is_empty(), "{}", messages(&run(root)));
}

/// Issue 12.7: Flux decrypts secretGenerator inputs, never
/// configMapGenerator ones: an encrypted configMapGenerator input ships as
/// ciphertext even with spec.decryption.
#[test]
fn sops_generator_inputs_as_the_decryptor_handles_them() {
    let decryption = "  decryption:
    provider: sops
    secretRef:
      name: sops-age
";
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
                "\
{generator}:
  - name: app
    namespace: default
    envs:
      - app.sops.env
"
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
        "\
apiVersion: v1
kind: Secret
metadata:
  name: for-another-tool
  namespace: default
  annotations:
    kustomize.toolkit.fluxcd.io/decrypt: Disabled
stringData:
  key: ENC[AES256_GCM,data:abc,type:str]
sops:
  mac: ENC[AES256_GCM,data:x,type:str]
  version: 3.9.0
",
    );
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", messages(&outcome));
}

/// Issue 26: an error in a Flux Kustomization's `spec.patches` or
/// `spec.components` was blamed on the kustomization Flux writes
/// (`apps/kustomization.yaml:0`, or no line at all); it is the Flux
/// Kustomization's own file, at that entry's line, with or without a
/// kustomization file of the path's own.
#[test]
fn spec_patches_and_components_errors_point_at_the_flux_kustomization() {
    let extra = "  patches:
    - target:
        kind: ConfigMap
      patch: |
        - op: replace
          path: /data/missing/deep
          value: x
";
    for own_kustomization in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        one_tier(root, extra);
        write(root, "apps/cm.yaml", &configmap("a"));
        if own_kustomization {
            write(
                root,
                "apps/kustomization.yaml",
                "\
resources:
  - cm.yaml
",
            );
        }
        let outcome = run(root);
        let failed = &outcome.findings[0];
        assert_eq!(
            failed.rule(),
            conformance::rules::RuleId::RenderFailed,
            "{}",
            messages(&outcome)
        );
        let at = failed.at().unwrap();
        // ks() puts `patches:` on line 14 of the file; the entry is line 15.
        assert_eq!(
            (at.file.as_str(), at.line),
            ("clusters/prod/apps.yaml", 15),
            "{}",
            failed.message()
        );
        assert!(
            failed
                .message()
                .contains("the Flux Kustomization's spec (line 15)"),
            "{}",
            failed.message()
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(
        root,
        "  components:
    - ../nothere
",
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let at = outcome.findings[0].at().unwrap();
    assert_eq!(
        (at.file.as_str(), at.line),
        ("clusters/prod/apps.yaml", 15),
        "{}",
        messages(&outcome)
    );
}

/// Issue 26: a duplicate id and a second kustomization file had no line.
#[test]
fn duplicate_ids_and_a_second_kustomization_file_have_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(root, "apps/a.yaml", &configmap("same"));
    write(root, "apps/b.yaml", &configmap("same"));
    write(
        root,
        "apps/kustomization.yaml",
        "\
resources:
  - a.yaml
  - b.yaml
",
    );
    let outcome = run(root);
    let at = outcome.findings[0].at().unwrap();
    assert_eq!(
        (at.file.as_str(), at.line),
        ("apps/kustomization.yaml", 3),
        "{}",
        messages(&outcome)
    );
    assert!(
        outcome.findings[0]
            .message()
            .contains("already registered id")
    );

    std::fs::remove_file(root.join("apps/b.yaml")).unwrap();
    write(
        root,
        "apps/kustomization.yaml",
        "\
resources:
  - a.yaml
",
    );
    write(
        root,
        "apps/kustomization.yml",
        "\
resources:
  - a.yaml
",
    );
    let outcome = run(root);
    let at = outcome.findings[0].at().unwrap();
    assert_eq!(
        (at.file.as_str(), at.line),
        ("apps/kustomization.yml", 1),
        "{}",
        messages(&outcome)
    );
}

/// Found on a real repository: a duplicate id in a directory without a
/// kustomization file (Flux generates one) named the generated
/// `…/kustomization.yaml:0`, which does not exist; it is the document that
/// repeats the id, in its own file.
#[test]
fn a_duplicate_id_under_a_generated_kustomization_is_at_its_document() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(root, "apps/a.yaml", &configmap("same"));
    write(
        root,
        "apps/b.yaml",
        &format!("{}---\n{}", configmap("other"), configmap("same")),
    );
    let outcome = run(root);
    let failed = &outcome.findings[0];
    let at = failed.at().unwrap();
    assert_eq!(
        (at.file.as_str(), at.line),
        ("apps/b.yaml", 9),
        "{}",
        messages(&outcome)
    );
    assert!(
        !failed.message().contains("apps/kustomization.yaml"),
        "{}",
        failed.message()
    );
}

/// Found on a real repository (the onedr0p-template idiom): a parent's
/// patch gives every child Kustomization its `spec.patches`, so the child's
/// file has no such lines. A broken one is blamed on the child's document
/// and said to come from the parent, not on a made-up line.
#[test]
fn spec_patches_a_parent_patch_sets_are_blamed_on_the_child_document() {
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
  - child.yaml
patches:
  - target:
      kind: Kustomization
    patch: |
      - op: add
        path: /spec/patches
        value:
          - target:
              kind: ConfigMap
            patch: |
              - op: replace
                path: /data/missing/deep
                value: x
",
    );
    write(
        root,
        "apps/child.yaml",
        &ks("child", "flux-system", "./child", ""),
    );
    write(root, "child/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let failed = outcome
        .findings
        .iter()
        .find(|f| f.kustomization() == "child")
        .unwrap_or_else(|| panic!("{}", messages(&outcome)));
    let at = failed.at().unwrap();
    assert_eq!(
        (at.file.as_str(), at.line),
        ("apps/child.yaml", 1),
        "{}",
        failed.message()
    );
    assert!(
        failed
            .message()
            .contains("as a patch of the tier that applies it sets it"),
        "{}",
        failed.message()
    );
}
