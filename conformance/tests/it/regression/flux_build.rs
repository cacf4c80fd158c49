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

/// Issue 26: an error in a Flux Kustomization's `spec.patches` or
/// `spec.components` was blamed on the kustomization Flux writes
/// (`apps/kustomization.yaml:0`, or no line at all); it is the Flux
/// Kustomization's own file, at that entry's line, with or without a
/// kustomization file of the path's own.
#[test]
fn spec_patches_and_components_errors_point_at_the_flux_kustomization() {
    let extra = "  patches:\n    - target:\n        kind: ConfigMap\n      patch: |\n        - op: replace\n          path: /data/missing/deep\n          value: x\n";
    for own_kustomization in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        one_tier(root, extra);
        write(root, "apps/cm.yaml", &configmap("a"));
        if own_kustomization {
            write(root, "apps/kustomization.yaml", "resources:\n  - cm.yaml\n");
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
    one_tier(root, "  components:\n    - ../nothere\n");
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
        "resources:\n  - a.yaml\n  - b.yaml\n",
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
    write(root, "apps/kustomization.yaml", "resources:\n  - a.yaml\n");
    write(root, "apps/kustomization.yml", "resources:\n  - a.yaml\n");
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
        "resources:\n  - child.yaml\npatches:\n  - target:\n      kind: Kustomization\n    patch: |\n      - op: add\n        path: /spec/patches\n        value:\n          - target:\n              kind: ConfigMap\n            patch: |\n              - op: replace\n                path: /data/missing/deep\n                value: x\n",
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
