//! Rule bugs: scopes, group-qualified identity, retyping, prune windows, substitution strictness.

use super::*;

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
        "\
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: letsencrypt
spec:
  selfSigned: {}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
    - port: 80
",
    );
    write(
        root,
        "conformance.yaml",
        "\
catalog:
  preinstalled: [cert-manager.io]
",
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
        "\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: runner
  namespace: default
",
    );
    write(
        root,
        "talos/sa.yaml",
        "\
apiVersion: talos.dev/v1alpha1
kind: ServiceAccount
metadata:
  name: runner
  namespace: default
spec:
  roles: [os:reader]
",
    );
    write(
        root,
        "conformance.yaml",
        "\
catalog:
  preinstalled: [talos.dev]
",
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
        "  postBuild:
    substitute:
      ON: \"on\"
      MODE: \"0755\"
      RATIO: \"1.5\"
      COLOR: \"#fff\"
      NAME: web
",
    );
    write(
        root,
        "apps/cm.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: vars
  namespace: default
data:
  on: ${ON}
  mode: ${MODE}
  ratio: ${RATIO}
  color: ${COLOR}
  name: ${NAME}
  quoted: \"key: ${NAME}\"
",
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

/// Issue 23: kustomize-controller reads each object back after substituting
/// (`yaml.YAMLToJSON` in SubstituteVariables); a value that is not YAML
/// where it lands fails the build. It was accepted as a string. The finding
/// names the text as written, never the value (which may be a Secret's).
#[test]
fn a_substituted_value_that_breaks_the_yaml_fails_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(
        root,
        "  postBuild:
    substitute:
      Y: \"[unclosed\"
      Z: \"[a, b]\"
",
    );
    write(
        root,
        "apps/cm.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: vars
  namespace: default
data:
  v: ${Y}
  w: ${Z}
",
    );
    let outcome = run(root);
    let hazards: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule().as_str() == "substitution-hazard")
        .collect();
    assert_eq!(hazards.len(), 1, "{}", messages(&outcome));
    let f = hazards[0];
    assert_eq!(f.severity(), conformance::rules::Severity::Error);
    assert!(f.message().contains("`${Y}`"), "{}", f.message());
    assert!(!f.message().contains("[unclosed"), "{}", f.message());
    assert_eq!(f.at().map(|a| a.line), Some(7), "{}", messages(&outcome));
}

/// Issue 12.8: a move under prune is a window only when nothing orders the
/// old owner after the new one, and the object is not protected from
/// garbage collection.
#[test]
fn prune_transient_only_when_a_window_exists() {
    let build = |root: &Path, owner: &str, old_depends_on_new: bool, annotation: &str| {
        sync(root, "clusters/prod");
        let deps = if old_depends_on_new {
            "  dependsOn:
    - name: new
"
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
            "  annotations:
    kustomize.toolkit.fluxcd.io/prune: disabled
",
            false,
        ),
        (
            false,
            "  annotations:
    kustomize.toolkit.fluxcd.io/ssa: Ignore
",
            false,
        ),
    ] {
        let base = tempfile::tempdir().unwrap();
        build(base.path(), "old", old_depends_on_new, annotation);
        let head = tempfile::tempdir().unwrap();
        build(head.path(), "new", old_depends_on_new, annotation);
        let outcome = conformance::check::check(&conformance::check::CheckOptions {
            run: conformance::session::RunOptions::at(head.path().to_path_buf()),
            clusters: vec![],
            base: Some(conformance::base::Base::Dir(base.path().to_path_buf())),
            baseline: None,
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

/// Issue 17: a postBuild that defines no variable (`substitute: {}`) makes
/// Flux skip the pass, so `${DS_PROMETHEUS}` in a Grafana dashboard ships
/// literally, as meant: at most the unaudited warning, never a hazard.
#[test]
fn a_skipped_substitution_pass_is_a_warning_not_a_hazard() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(
        root,
        "  postBuild:
    substitute: {}
",
    );
    write(
        root,
        "apps/dashboard.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: dashboard
  namespace: default
data:
  json: '{\"datasource\": \"${DS_PROMETHEUS}\"}'
",
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
            "\
substitution:
  strict: true
",
            conformance::rules::Severity::Error,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        one_tier(
            root,
            "  postBuild:
    substitute:
      DEFINED: x
",
        );
        write(
            root,
            "clusters/prod/flux-system/gotk-components.yaml",
            &format!(
                "\
---
# This manifest was generated by flux. DO NOT EDIT.
# Flux Version: {flux}
# Components: kustomize-controller
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kustomize-controller
  namespace: flux-system
spec:
  selector:
    matchLabels:
      app: kustomize-controller
  template:
    metadata:
      labels:
        app: kustomize-controller
    spec:
      containers:
        - name: manager
          image: ghcr.io/fluxcd/kustomize-controller:{kc}
"
            ),
        );
        write(
            root,
            "apps/cm.yaml",
            "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: default
data:
  a: ${DEFINED}
  b: ${UNDEFINED}
",
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

/// Issue 25: an object two tiers render, where one copy carries
/// `kustomize.toolkit.fluxcd.io/ssa: IfNotPresent` (or `Ignore`), never
/// flaps: Flux applies that copy only when the object is absent (or never).
/// Two copies applied for real are still a duplicate.
#[test]
fn duplicate_objects_with_a_create_only_copy_do_not_flap() {
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
    write(root, "a/cm.yaml", &configmap("shared"));
    let create_only = |mode: &str| {
        configmap("shared").replace(
            "  namespace: default\n",
            &format!(
                "  namespace: default
  annotations:
    kustomize.toolkit.fluxcd.io/ssa: {mode}
"
            ),
        )
    };
    for mode in ["IfNotPresent", "Ignore"] {
        write(root, "b/cm.yaml", &create_only(mode));
        let outcome = run(root);
        assert!(
            !outcome
                .findings
                .iter()
                .any(|f| f.rule() == conformance::rules::RuleId::DuplicateObject),
            "{mode}: {}",
            messages(&outcome)
        );
    }
    write(root, "b/cm.yaml", &create_only("Merge"));
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::DuplicateObject),
        "Merge is applied: {}",
        messages(&outcome)
    );
}

/// Issue 25: the API server clears the namespace of a cluster-scoped object
/// (`rest.BeforeCreate`), so a namespace that is not a valid name there is
/// no schema violation; on a namespaced object it still is.
#[test]
fn a_cluster_scoped_objects_namespace_is_not_validated() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(
        root,
        "apps/objects.yaml",
        "\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
  namespace: flux_system
rules: []
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: flux_system
data: {}
",
    );
    let outcome = run(root);
    let violations: Vec<Option<&str>> = outcome
        .findings
        .iter()
        .filter(|f| f.rule().as_str() == "schema-violation")
        .map(|f| f.object())
        .collect();
    assert_eq!(
        violations,
        [Some("ConfigMap/flux_system/settings")],
        "{}",
        all(&outcome)
    );
}

/// Issue 25: `substitution-unaudited` is one finding per Kustomization,
/// every token at its own line (inside a block scalar, the token's line,
/// not the scalar's first).
#[test]
fn unaudited_tokens_are_one_finding_per_kustomization_at_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    one_tier(root, "");
    write(
        root,
        "apps/objects.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  config.yaml: |
    first: plain
    pool: ${LB_POOL}
    other: plain
    domain: ${DOMAIN}
  after: x
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: more
  namespace: default
data:
  url: https://${DOMAIN}/
",
    );
    let outcome = run(root);
    let found: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule().as_str() == "substitution-unaudited")
        .collect();
    assert_eq!(found.len(), 1, "{}", all(&outcome));
    let f = found[0];
    assert_eq!(f.at().unwrap().line, 9, "{}", f.message());
    assert!(
        f.message()
            .starts_with("2 objects in apps contain ${DOMAIN}, ${LB_POOL}"),
        "{}",
        f.message()
    );
    let lines: Vec<(u32, &str)> = f
        .related()
        .iter()
        .filter(|(s, _)| s.file == "apps/objects.yaml")
        .map(|(s, l)| (s.line, l.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (11, "${DOMAIN} in ConfigMap/default/settings"),
            (20, "${DOMAIN} in ConfigMap/default/more")
        ]
    );
}

/// Issue 25: Flux's own kinds and sources are known. A version no Flux
/// release served is `crd-unavailable`; a `sourceRef` nothing defines is
/// `unresolved-reference` (kustomize-controller gets the source first);
/// wrong types in a Flux spec fail Flux's CRD schema (bundled, v2.9).
#[test]
fn unknown_flux_versions_missing_sources_and_wrong_spec_types_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let future = ks("future", "flux-system", "./apps", "").replace(
        "kustomize.toolkit.fluxcd.io/v1",
        "kustomize.toolkit.fluxcd.io/v9",
    );
    let orphan = ks(
        "orphan",
        "flux-system",
        "./apps",
        "  timeout: []
  decryption:
    provider: rot13
",
    )
    .replace(
        "name: flux-system\n    namespace",
        "name: platform\n    namespace",
    );
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!("{future}---\n{orphan}"),
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    let outcome = run(root);
    let found: Vec<(&str, &str)> = outcome
        .findings
        .iter()
        .filter(|f| f.is_error())
        .map(|f| (f.rule().as_str(), f.message()))
        .collect();
    let has = |rule: &str, text: &str| found.iter().any(|(r, m)| *r == rule && m.contains(text));
    assert!(
        has(
            "crd-unavailable",
            "kustomize.toolkit.fluxcd.io/v9, a version of Kustomization no Flux release serves"
        ),
        "{found:#?}"
    );
    assert!(
        has(
            "unresolved-reference",
            "GitRepository/flux-system/platform (spec.sourceRef)"
        ),
        "{found:#?}"
    );
    assert!(
        has("schema-violation", "spec.timeout: expected string"),
        "{found:#?}"
    );
    assert!(
        has(
            "schema-violation",
            "spec.decryption.provider: string \"rot13\" is not one of sops"
        ),
        "{found:#?}"
    );
}

/// Issue 28: variables injected at admission. A webhook the bootstrap
/// installs (the kustomize-mutating-webhook chart, from a helmfile) adds
/// every key of its ConfigMap to each Kustomization's postBuild.substitute:
/// a tier without postBuild is substituted, its defined tokens are no
/// longer "shipped literally", and an undefined one is a hazard whose
/// message names the injected source. conformance.yaml can say the same
/// (`substitution.injected`) for a webhook or policy it cannot read.
#[test]
fn variables_injected_at_admission_are_defined() {
    let setup = |root: &Path| {
        one_tier(root, "");
        write(
            root,
            "clusters/prod/cluster-config.yaml",
            "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-config
  namespace: flux-system
data:
  CLUSTER_DOMAIN: example.org
",
        );
        write(
            root,
            "apps/route.yaml",
            "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: route
  namespace: default
data:
  host: web.${CLUSTER_DOMAIN}
  zone: ${CLUSTER_ZONE}
",
        );
    };
    let route = |outcome: &conformance::check::Outcome| {
        objects_of(outcome, "apps")
            .iter()
            .find(|o| o.id.name == "route")
            .and_then(|o| o.body.str_at(&["data", "host"]))
    };

    // Before: nothing injects; both tokens ship literally.
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let before = run(dir.path());
    assert_eq!(
        rules(&before),
        [("substitution-unaudited", "prod", "apps")],
        "{}",
        messages(&before)
    );

    // The bootstrap installs the webhook: the tier is substituted.
    write(
        dir.path(),
        "bootstrap/helmfile.yaml",
        "\
releases:
  - name: kustomize-mutating-webhook
    namespace: flux-system
    chart: webhook/kustomize-mutating-webhook
    values:
      - configMaps:
          - name: cluster-config
",
    );
    let after = run(dir.path());
    assert_eq!(route(&after).as_deref(), Some("web.example.org"));
    let found: Vec<_> = after
        .findings
        .iter()
        .map(|f| (f.rule().as_str(), f.severity(), f.message().to_string()))
        .collect();
    assert_eq!(found.len(), 1, "{}", messages(&after));
    assert_eq!(found[0].0, "substitution-hazard");
    assert!(
        found[0].2.contains("${CLUSTER_ZONE}")
            && found[0].2.contains("ConfigMap/flux-system/cluster-config (added by the kustomize-mutating-webhook webhook, release flux-system/kustomize-mutating-webhook)"),
        "{}",
        found[0].2
    );

    // Installed by a Flux HelmRelease of the cluster instead: a
    // Kustomization admitted before the webhook runs is mutated on its next
    // apply, so Flux's retries converge to the same variables.
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    helm_repository(dir.path(), "clusters/prod", "flux-system", "charts");
    write(
        dir.path(),
        "clusters/prod/webhook.yaml",
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: substitution-webhook
  namespace: flux-system
spec:
  interval: 1h
  chart:
    spec:
      chart: kustomize-mutating-webhook
      sourceRef:
        kind: HelmRepository
        name: charts
  values:
    configMaps:
      - name: cluster-config
",
    );
    let in_flux = run(dir.path());
    assert_eq!(route(&in_flux).as_deref(), Some("web.example.org"));
    assert!(
        in_flux
            .findings
            .iter()
            .any(|f| f.rule().as_str() == "substitution-hazard"
                && f.message()
                    .contains("(HelmRelease flux-system/substitution-webhook)")),
        "{}",
        messages(&in_flux)
    );

    // The same, declared in conformance.yaml (no helmfile).
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    write(
        dir.path(),
        "conformance.yaml",
        "\
substitution:
  injected:
    - from: [ConfigMap/flux-system/cluster-config]
      kustomizations: [\"flux-system/app*\"]
",
    );
    let declared = run(dir.path());
    assert_eq!(route(&declared).as_deref(), Some("web.example.org"));
    assert_eq!(
        rules(&declared),
        [("substitution-hazard", "prod", "apps")],
        "{}",
        messages(&declared)
    );
    // A source the repository does not render (the bootstrap creates it):
    // its keys are unknown, so nothing is claimed about undefined ones.
    write(
        dir.path(),
        "conformance.yaml",
        "\
substitution:
  injected:
    - from: [ConfigMap/flux-system/cluster-config, Secret/flux-system/cluster-secrets]
",
    );
    let unknown = run(dir.path());
    assert!(unknown.findings.is_empty(), "{}", messages(&unknown));

    // A source that is not Kind/namespace/name is an error at its line.
    write(
        dir.path(),
        "conformance.yaml",
        "\
substitution:
  injected:
    - from:
        - cluster-config
",
    );
    let err = run_result(dir.path()).expect_err("a config error");
    let text = err.to_string();
    assert!(
        text.contains(":4") && text.contains("cluster-config"),
        "{text}"
    );
}

/// Issue 28 (validation): the entry renders its own definition, patched by
/// its kustomization.yaml (`flux bootstrap`'s patch adding spec.decryption
/// to flux-system). Flux applies the patched definition, so the entry
/// decrypts: a SOPS Secret beside it is not a sops-decryption error.
#[test]
fn the_entry_is_what_its_own_build_applies() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/secret.yaml",
        "\
apiVersion: v1
kind: Secret
metadata:
  name: s3
  namespace: default
stringData:
  key: ENC[AES256_GCM,data:abc,iv:a,tag:b,type:str]
sops:
  mac: ENC[AES256_GCM,data:x,iv:c,tag:d,type:str]
  version: 3.9.0
",
    );
    write(
        root,
        "clusters/prod/kustomization.yaml",
        "\
resources:
  - flux-system/gotk-sync.yaml
  - secret.yaml
",
    );
    let before = run(root);
    assert_eq!(
        rules(&before),
        [("sops-decryption", "prod", "flux-system")],
        "{}",
        messages(&before)
    );
    write(
        root,
        "clusters/prod/kustomization.yaml",
        "\
resources:
  - flux-system/gotk-sync.yaml
  - secret.yaml
patches:
  - patch: |
      - op: add
        path: /spec/decryption
        value:
          provider: sops
          secretRef:
            name: sops-age
    target:
      kind: Kustomization
      name: flux-system
",
    );
    let after = run(root);
    assert!(
        !after
            .findings
            .iter()
            .any(|f| f.rule().as_str() == "sops-decryption"),
        "{}",
        messages(&after)
    );
}
