//! The cold-start model (issue 10): deadlock or race, health as Flux
//! computes it, parents that wait for their children, suspension, tiers that
//! were not checked, parity that compares only overlays. Each test writes the
//! smallest repository that shows one behaviour.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;

use conformance::rules::Severity;

use crate::support::*;

fn crd(plural: &str, group: &str, kind: &str) -> String {
    format!(
        "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  names:
    kind: {kind}
    plural: {plural}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
"
    )
}

fn cr(group: &str, kind: &str, name: &str) -> String {
    format!(
        "\
apiVersion: {group}/v1
kind: {kind}
metadata:
  name: {name}
  namespace: default
spec: {{}}
"
    )
}

fn helmrelease(name: &str, chart: &str) -> String {
    format!(
        "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {name}
  namespace: default
spec:
  interval: 1h
  chart:
    spec:
      chart: {chart}
      sourceRef:
        kind: HelmRepository
        name: charts
"
    )
}

/// The CDI operator's CRD and a CDI CR (the trigger of the cdi.kubevirt.io
/// second-order kinds).
fn cdi(root: &Path, dir: &str) {
    write(
        root,
        &format!("{dir}/cdi-crd.yaml"),
        &crd("cdis", "cdi.kubevirt.io", "CDI")
            .replace("scope: Namespaced", "scope: Cluster")
            .replace("- name: v1\n", "- name: v1beta1\n"),
    );
    write(
        root,
        &format!("{dir}/cdi.yaml"),
        "\
apiVersion: cdi.kubevirt.io/v1beta1
kind: CDI
metadata:
  name: cdi
spec: {}
",
    );
}

fn storage_profile(root: &Path, rel: &str) {
    write(
        root,
        rel,
        "\
apiVersion: cdi.kubevirt.io/v1beta1
kind: StorageProfile
metadata:
  name: longhorn
spec:
  claimPropertySets:
    - accessModes: [ReadWriteMany]
      volumeMode: Block
",
    );
}

fn tiers(root: &Path, docs: &[String]) {
    write(root, "clusters/prod/tiers.yaml", &docs.join("---\n"));
}

fn found<'o>(
    outcome: &'o conformance::check::Outcome,
    rule: &str,
) -> Vec<&'o conformance::rules::Finding> {
    outcome
        .findings
        .iter()
        .filter(|f| f.rule().as_str() == rule)
        .collect()
}

/// The widgets CRD in tier `crds`, a Widget in tier `apps`.
fn widget_repo(root: &Path, crds_extra: &str, apps_extra: &str) {
    sync(root, "clusters/prod");
    tiers(
        root,
        &[
            ks("crds", "flux-system", "./crds", crds_extra),
            ks("apps", "flux-system", "./apps", apps_extra),
        ],
    );
    write(
        root,
        "crds/widgets.yaml",
        &crd("widgets", "example.com", "Widget"),
    );
    write(root, "apps/widget.yaml", &cr("example.com", "Widget", "w"));
}

#[test]
fn a_kind_from_an_unordered_tier_is_a_race_with_its_delay() {
    let dir = tempfile::tempdir().unwrap();
    widget_repo(dir.path(), "", "  retryInterval: 2m\n");
    let outcome = run(dir.path());
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
    let race = found(&outcome, "cold-start-race");
    assert_eq!(race.len(), 1, "{}", all(&outcome));
    let f = race[0];
    assert_eq!(f.severity(), Severity::Warning);
    assert_eq!(f.kustomization(), "apps");
    assert!(
        f.message().contains("not ordered after crds"),
        "{}",
        f.message()
    );
    assert!(f.why().contains("retries every 2m"), "{}", f.why());
    assert_eq!(f.fix(), "add `dependsOn: crds` to apps");
}

#[test]
fn ordering_the_race_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    widget_repo(
        dir.path(),
        "",
        "  dependsOn:
    - name: crds
",
    );
    let outcome = run(dir.path());
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn a_provider_that_depends_on_its_consumer_is_a_deadlock_with_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    // crds has a CRD, so its stage 1 would apply as soon as it starts; it
    // never starts, because it waits for apps, which needs its CRD.
    widget_repo(
        dir.path(),
        "  dependsOn:
    - name: apps
",
        "",
    );
    let outcome = run(dir.path());
    let errors = found(&outcome, "crd-unavailable");
    assert_eq!(errors.len(), 1, "{}", all(&outcome));
    let f = errors[0];
    assert_eq!(f.kustomization(), "apps");
    assert!(
        f.message().contains("crds depends on apps")
            && f.message().contains("crds can only apply after apps"),
        "{}",
        f.message()
    );
    // The obvious fix (apps dependsOn crds) would close a cycle.
    assert!(
        f.fix()
            .starts_with("move CustomResourceDefinition widgets.example.com out of crds"),
        "{}",
        f.fix()
    );
    assert!(
        found(&outcome, "cold-start-race").is_empty(),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_provider_rendered_by_its_consumer_is_a_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    tiers(root, &[ks("apps", "flux-system", "./apps", "")]);
    write(root, "apps/widget.yaml", &cr("example.com", "Widget", "w"));
    write(
        root,
        "apps/crds-ks.yaml",
        &ks("crds", "flux-system", "./crds", ""),
    );
    write(
        root,
        "crds/widgets.yaml",
        &crd("widgets", "example.com", "Widget"),
    );
    let outcome = run(root);
    let errors = found(&outcome, "crd-unavailable");
    assert_eq!(errors.len(), 1, "{}", all(&outcome));
    assert!(
        errors[0].message().contains("crds is applied by apps"),
        "{}",
        errors[0].message()
    );
}

#[test]
fn needs_that_loop_across_tiers_are_a_deadlock_on_both() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "conformance.yaml",
        "\
catalog:
  charts:
    - chart: alpha
      groups: [alpha.io]
    - chart: beta
      groups: [beta.io]
",
    );
    tiers(
        root,
        &[
            ks("a", "flux-system", "./a", ""),
            ks("b", "flux-system", "./b", ""),
        ],
    );
    write(root, "a/hr.yaml", &helmrelease("alpha", "alpha"));
    write(root, "a/uses.yaml", &cr("beta.io", "Beta", "x"));
    write(root, "b/hr.yaml", &helmrelease("beta", "beta"));
    write(root, "b/uses.yaml", &cr("alpha.io", "Alpha", "y"));
    let outcome = run(root);
    let errors = found(&outcome, "crd-unavailable");
    assert_eq!(errors.len(), 2, "{}", all(&outcome));
    let a = errors.iter().find(|f| f.kustomization() == "a").unwrap();
    assert!(
        a.message().contains("but b needs alpha.io/Alpha from a"),
        "{}",
        a.message()
    );
}

#[test]
fn a_child_that_depends_on_its_waiting_parent_is_a_dependency_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    tiers(
        root,
        &[ks("parent", "flux-system", "./parent", "  wait: true\n")],
    );
    write(
        root,
        "parent/child.yaml",
        &ks(
            "child",
            "flux-system",
            "./child",
            "  dependsOn:
    - name: parent
",
        ),
    );
    write(root, "child/cm.yaml", &configmap("c"));
    let outcome = run(root);
    let cycles = found(&outcome, "dependency-cycle");
    assert_eq!(cycles.len(), 2, "{}", all(&outcome));
    assert!(
        cycles[0].message().contains("child → parent ⇢ child"),
        "{}",
        cycles[0].message()
    );
    // Without the wait there is no cycle.
    let text = std::fs::read_to_string(root.join("clusters/prod/tiers.yaml")).unwrap();
    write(
        root,
        "clusters/prod/tiers.yaml",
        &text.replace("  wait: true\n", ""),
    );
    let outcome = run(root);
    assert!(
        found(&outcome, "dependency-cycle").is_empty(),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_waiting_parent_covers_what_its_children_apply() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    tiers(
        root,
        &[
            ks("infra", "flux-system", "./infra", "  wait: true\n"),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:
    - name: infra
",
            ),
        ],
    );
    write(
        root,
        "infra/crds-ks.yaml",
        &ks("crds", "flux-system", "./crds", ""),
    );
    write(
        root,
        "crds/widgets.yaml",
        &crd("widgets", "example.com", "Widget"),
    );
    write(root, "apps/widget.yaml", &cr("example.com", "Widget", "w"));
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
    // A parent that does not wait is Ready before its children apply.
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("infra", "flux-system", "./infra", ""),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:
    - name: infra
",
            ),
        ]
        .join("---\n"),
    );
    let outcome = run(root);
    assert_eq!(
        found(&outcome, "cold-start-race").len(),
        1,
        "{}",
        all(&outcome)
    );
}

/// platform (the CDI trigger), platform-cdi (a StorageProfile) after it.
fn cdi_repo(root: &Path, platform_extra: &str) {
    sync(root, "clusters/prod");
    tiers(
        root,
        &[
            ks("platform", "flux-system", "./platform", platform_extra),
            ks(
                "platform-cdi",
                "flux-system",
                "./platform-cdi",
                "  dependsOn:
    - name: platform
",
            ),
        ],
    );
    cdi(root, "platform");
    storage_profile(root, "platform-cdi/profile.yaml");
}

#[test]
fn wait_on_a_trigger_kstatus_cannot_read_is_a_health_gate_with_a_fix_that_works() {
    let dir = tempfile::tempdir().unwrap();
    cdi_repo(dir.path(), "  wait: true\n");
    let outcome = run(dir.path());
    let gates = found(&outcome, "health-gate");
    assert_eq!(gates.len(), 1, "{}", all(&outcome));
    let f = gates[0];
    assert_eq!(f.severity(), Severity::Warning);
    assert!(
        f.message().contains("kstatus reads it as Current"),
        "{}",
        f.message()
    );
    let yaml = f.detail().unwrap();
    assert!(
        yaml.contains("healthCheckExprs:") && yaml.contains("current: status.phase == 'Deployed'"),
        "{yaml}"
    );
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
}

#[test]
fn health_check_exprs_on_the_trigger_gate_it() {
    let dir = tempfile::tempdir().unwrap();
    cdi_repo(
        dir.path(),
        "  wait: true
  healthCheckExprs:
    - apiVersion: cdi.kubevirt.io/v1beta1
      kind: CDI
      current: status.phase == 'Deployed'
",
    );
    let outcome = run(dir.path());
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn a_health_check_naming_the_runtime_crd_gates_it() {
    let dir = tempfile::tempdir().unwrap();
    cdi_repo(
        dir.path(),
        "  healthChecks:
    - apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      name: storageprofiles.cdi.kubevirt.io
",
    );
    let outcome = run(dir.path());
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn no_health_check_at_all_is_a_health_gate() {
    let dir = tempfile::tempdir().unwrap();
    cdi_repo(dir.path(), "");
    let outcome = run(dir.path());
    let gates = found(&outcome, "health-gate");
    assert_eq!(gates.len(), 1, "{}", all(&outcome));
    assert!(
        gates[0].message().contains("has no health check"),
        "{}",
        gates[0].message()
    );
}

#[test]
fn a_suspended_dependency_stops_its_dependents() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    tiers(
        root,
        &[
            ks("db", "flux-system", "./db", "  suspend: true\n"),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:
    - name: db
",
            ),
            ks(
                "web",
                "flux-system",
                "./web",
                "  dependsOn:
    - name: apps
",
            ),
            ks("crds", "flux-system", "./crds", "  suspend: true\n"),
            ks("users", "flux-system", "./users", ""),
        ],
    );
    write(root, "db/cm.yaml", &configmap("db"));
    write(root, "apps/cm.yaml", &configmap("apps"));
    write(root, "web/cm.yaml", &configmap("web"));
    write(
        root,
        "crds/widgets.yaml",
        &crd("widgets", "example.com", "Widget"),
    );
    write(root, "users/widget.yaml", &cr("example.com", "Widget", "w"));
    let outcome = run(root);
    let suspended = found(&outcome, "dependency-suspended");
    assert_eq!(suspended.len(), 1, "{}", all(&outcome));
    assert_eq!(suspended[0].kustomization(), "apps");
    assert!(
        suspended[0]
            .message()
            .contains("neither does the Kustomization after it"),
        "{}",
        suspended[0].message()
    );
    // A kind from a suspended tier never exists.
    let kinds = found(&outcome, "crd-unavailable");
    assert_eq!(kinds.len(), 1, "{}", all(&outcome));
    assert!(
        kinds[0]
            .message()
            .contains("crds never applies on a cold start: it is suspended"),
        "{}",
        kinds[0].message()
    );
}

/// Issue 26: whether a tier sits under a suspended one was found by
/// walking its parents on every question (quadratic in the nesting: 5 s at
/// 4,000 deep); it is computed once per cluster now, at any depth.
#[test]
fn a_tier_nested_under_a_suspended_one_is_suspended_at_any_depth() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    tiers(
        root,
        &[
            ks("platform", "flux-system", "./platform", "  suspend: true\n"),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:
    - name: db
",
            ),
        ],
    );
    write(
        root,
        "platform/mid.yaml",
        &ks("mid", "flux-system", "./mid", ""),
    );
    write(root, "mid/db.yaml", &ks("db", "flux-system", "./db", ""));
    write(root, "db/cm.yaml", &configmap("db"));
    write(root, "apps/cm.yaml", &configmap("apps"));
    let outcome = run(root);
    let suspended = found(&outcome, "dependency-suspended");
    assert_eq!(suspended.len(), 1, "{}", all(&outcome));
    assert_eq!(suspended[0].kustomization(), "apps");
    assert!(
        suspended[0]
            .message()
            .contains("db, which is applied only by platform, which is suspended"),
        "{}",
        suspended[0].message()
    );
}

#[test]
fn a_suspended_subtree_is_judged_as_if_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    tiers(
        root,
        &[ks(
            "optional",
            "flux-system",
            "./optional",
            "  suspend: true\n",
        )],
    );
    write(root, "optional/a.yaml", &ks("a", "flux-system", "./a", ""));
    write(
        root,
        "optional/b.yaml",
        &ks(
            "b",
            "flux-system",
            "./b",
            "  dependsOn:
    - name: a
",
        ),
    );
    write(
        root,
        "a/widgets.yaml",
        &crd("widgets", "example.com", "Widget"),
    );
    write(root, "b/widget.yaml", &cr("example.com", "Widget", "w"));
    let outcome = run(root);
    assert!(outcome.findings.is_empty(), "{}", all(&outcome));
}

#[test]
fn a_kind_an_unchecked_tier_may_provide_is_a_possible_race() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    tiers(
        root,
        &[
            ks_from("vendor", "./", "OCIRepository", "vendor"),
            ks("apps", "flux-system", "./apps", ""),
        ],
    );
    write(root, "apps/widget.yaml", &cr("example.com", "Widget", "w"));
    let outcome = run(root);
    let races = found(&outcome, "cold-start-race");
    assert_eq!(races.len(), 1, "{}", all(&outcome));
    assert!(
        races[0]
            .message()
            .contains("may come from vendor, which was not checked"),
        "{}",
        races[0].message()
    );
    // Ordered after the unchecked tier: nothing to say.
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks_from("vendor", "./", "OCIRepository", "vendor"),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:
    - name: vendor
",
            ),
        ]
        .join("---\n"),
    );
    let outcome = run(root);
    assert!(
        found(&outcome, "cold-start-race").is_empty(),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_datavolume_racing_its_storage_class_is_harmed_for_good_a_claim_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "conformance.yaml",
        "\
catalog:
  preinstalled: [cdi.kubevirt.io]
",
    );
    tiers(
        root,
        &[
            ks("storage", "flux-system", "./storage", ""),
            ks("vms", "flux-system", "./vms", ""),
        ],
    );
    write(
        root,
        "storage/class.yaml",
        "\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
provisioner: driver.example.com
",
    );
    write(
        root,
        "vms/dv.yaml",
        "\
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: root
  namespace: default
spec:
  source:
    blank: {}
  storage:
    storageClassName: fast
    resources:
      requests:
        storage: 1Gi
",
    );
    write(
        root,
        "vms/pvc.yaml",
        "\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: default
spec:
  storageClassName: fast
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
",
    );
    let outcome = run(root);
    let permanent = found(&outcome, "unresolved-reference");
    assert_eq!(permanent.len(), 1, "{}", all(&outcome));
    assert_eq!(permanent[0].object(), Some("DataVolume/default/root"));
    assert!(
        permanent[0].why().contains("a race lost for good"),
        "{}",
        permanent[0].why()
    );
    let races = found(&outcome, "cold-start-race");
    assert_eq!(races.len(), 1, "{}", all(&outcome));
    assert_eq!(
        races[0].object(),
        Some("PersistentVolumeClaim/default/data")
    );
    // The API server accepts the claim; only its controller waits.
    assert!(
        races[0].why().contains("the API server accepts it")
            && races[0].why().contains("controller retries")
            && !races[0].why().contains(" fails "),
        "{}",
        races[0].why()
    );
}

#[test]
fn a_dependson_fix_that_would_close_a_cycle_says_what_to_move() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    // storage depends on apps, and apps claims storage's class: ordering
    // apps after storage would close a cycle.
    tiers(
        root,
        &[
            ks(
                "storage",
                "flux-system",
                "./storage",
                "  dependsOn:
    - name: apps
",
            ),
            ks("apps", "flux-system", "./apps", ""),
        ],
    );
    write(
        root,
        "storage/class.yaml",
        "\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
provisioner: driver.example.com
",
    );
    write(
        root,
        "apps/pvc.yaml",
        "\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: default
spec:
  storageClassName: fast
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
",
    );
    let outcome = run(root);
    let races = found(&outcome, "cold-start-race");
    assert_eq!(races.len(), 1, "{}", all(&outcome));
    assert!(
        races[0].fix().contains("would close a cycle")
            && races[0]
                .fix()
                .contains("move StorageClass/fast out of storage"),
        "{}",
        races[0].fix()
    );
}

#[test]
fn severity_in_conformance_yaml_raises_a_race_to_an_error() {
    let dir = tempfile::tempdir().unwrap();
    widget_repo(dir.path(), "", "");
    write(
        dir.path(),
        "conformance.yaml",
        "\
severity:
  cold-start-race: error
",
    );
    let outcome = run(dir.path());
    assert_eq!(outcome.errors(), 1, "{}", all(&outcome));
    assert_eq!(
        found(&outcome, "cold-start-race")[0].severity(),
        Severity::Error
    );
}

#[test]
fn unrelated_clusters_are_not_compared_overlays_are() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (cluster, names) in [
        ("home", &["media", "network", "storage"][..]),
        ("nas", &["backup", "minio"][..]),
    ] {
        sync(root, &format!("clusters/{cluster}"));
        let docs: Vec<String> = names
            .iter()
            .map(|n| ks(n, "flux-system", &format!("./apps/{n}"), ""))
            .collect();
        write(
            root,
            &format!("clusters/{cluster}/tiers.yaml"),
            &docs.join("---\n"),
        );
        for n in names {
            write(root, &format!("apps/{n}/cm.yaml"), &configmap(n));
        }
    }
    let outcome = run(root);
    assert!(
        found(&outcome, "graph-parity").is_empty(),
        "{}",
        all(&outcome)
    );
    let human = conformance::report::human::render(&outcome, &[], std::time::Duration::ZERO);
    assert!(human.contains("parity: no clusters compared"), "{human}");
    assert!(human.contains("not compared: home, nas"), "{human}");
    // An overlay of home that drops one edge is compared, and the edge found.
    sync(root, "clusters/home-staging");
    let docs: Vec<String> = ["media", "network", "storage"]
        .iter()
        .map(|n| ks(n, "flux-system", &format!("./apps/{n}"), ""))
        .collect();
    write(
        root,
        "clusters/home-staging/tiers.yaml",
        &docs.join("---\n"),
    );
    let mut home = docs.clone();
    home[0] = ks(
        "media",
        "flux-system",
        "./apps/media",
        "  dependsOn:
    - name: storage
",
    );
    write(root, "clusters/home/tiers.yaml", &home.join("---\n"));
    let outcome = run(root);
    let parity = found(&outcome, "graph-parity");
    assert_eq!(parity.len(), 1, "{}", all(&outcome));
    assert!(
        parity[0].message().contains("media"),
        "{}",
        parity[0].message()
    );
    let human = conformance::report::human::render(&outcome, &[], std::time::Duration::ZERO);
    assert!(
        human.contains("parity: compared {home, home-staging}")
            && human.contains("not compared: nas"),
        "{human}"
    );
}

#[test]
fn findings_sharing_a_cause_are_one_block_in_the_human_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    let mut docs = vec![ks("crds", "flux-system", "./crds", "")];
    for n in ["a", "b", "c"] {
        docs.push(ks(n, "flux-system", &format!("./{n}"), ""));
        write(
            root,
            &format!("{n}/widget.yaml"),
            &cr("example.com", "Widget", n),
        );
    }
    tiers(root, &docs);
    write(
        root,
        "crds/widgets.yaml",
        &crd("widgets", "example.com", "Widget"),
    );
    let outcome = run(root);
    assert_eq!(
        found(&outcome, "cold-start-race").len(),
        3,
        "{}",
        all(&outcome)
    );
    let human = conformance::report::human::render(&outcome, &[], std::time::Duration::ZERO);
    assert!(
        human.contains(
            "warning[cold-start-race]: prod: 3 Widgets in 3 Kustomizations: example.com comes from crds, which none of them is ordered after"
        ),
        "{human}"
    );
    assert_eq!(
        human.matches("warning[cold-start-race]").count(),
        1,
        "{human}"
    );
    let github = conformance::report::ci::github(&outcome);
    assert_eq!(github.matches("::warning ").count(), 1, "{github}");
    let json = conformance::report::json::render(&outcome, "repo", &[]);
    assert_eq!(json["findings"].as_array().unwrap().len(), 3);
}

#[test]
fn a_resource_set_may_generate_what_nothing_else_provides() {
    // A Flux Operator ResourceSet generates Kustomizations from templates;
    // they are not expanded, so what they would provide is unknown: a
    // dependency on one, or a kind one installs, is a warning, not an error.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("platform", "flux-system", "./platform", ""),
            ks(
                "restore",
                "flux-system",
                "./restore",
                "  dependsOn:
    - name: platform
    - name: velero
",
            ),
        ]
        .join("---\n"),
    );
    write(
        root,
        "platform/resourceset.yaml",
        "\
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: apps
  namespace: flux-system
spec:
  inputs:
    - name: velero
  resources:
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata:
        name: << inputs.name >>
        namespace: flux-system
      spec:
        interval: 1h
        path: ./apps/<< inputs.name >>
        sourceRef:
          kind: GitRepository
          name: flux-system
",
    );
    write(
        root,
        "restore/restore.yaml",
        "\
apiVersion: velero.io/v1
kind: Restore
metadata:
  name: r
  namespace: flux-system
spec: {}
",
    );
    let outcome = run(root);
    let errors: Vec<_> = outcome.findings.iter().filter(|f| f.is_error()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let missing = outcome
        .findings
        .iter()
        .find(|f| f.rule() == conformance::rules::RuleId::DependencyMissing)
        .expect("a dependency-missing warning");
    assert!(
        missing.detail().is_some_and(|d| d.contains("ResourceSet")),
        "{missing:#?}"
    );
    // restore is ordered after platform, which may provide velero.io: no
    // kind finding at all.
    assert!(
        !outcome
            .findings
            .iter()
            .any(|f| f.rule() == conformance::rules::RuleId::CrdUnavailable),
        "{:#?}",
        outcome.findings
    );
}

/// Issue 25: "may come from <tier>, which was not checked" only when that
/// tier may hold the namespace: a rendered tier whose only unknown is a
/// ResourceSet that templates no Namespace holds none.
#[test]
fn a_namespace_is_hedged_only_on_a_tier_that_may_create_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("platform", "flux-system", "./platform", ""),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:
    - name: platform
",
            ),
        ]
        .join("---\n"),
    );
    let resource_set = |template: &str| {
        format!(
            "\
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: apps
  namespace: flux-system
spec:
  inputs:
    - name: web
  resources:
{template}"
        )
    };
    let kustomization = "    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata:
        name: << inputs.name >>
        namespace: flux-system
      spec:
        interval: 1h
        prune: true
        path: ./apps/<< inputs.name >>
        sourceRef:
          kind: GitRepository
          name: flux-system
";
    write(
        root,
        "platform/resourceset.yaml",
        &resource_set(kustomization),
    );
    write(
        root,
        "conformance.yaml",
        "\
catalog:
  preinstalled: [fluxcd.controlplane.io]
",
    );
    write(
        root,
        "apps/cm.yaml",
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: web
data: {}
",
    );
    let outcome = run(root);
    let namespace: Vec<(&str, bool)> = outcome
        .findings
        .iter()
        .filter(|f| f.object() == Some("ConfigMap/web/settings"))
        .map(|f| (f.rule().as_str(), f.is_error()))
        .collect();
    assert_eq!(
        namespace,
        [("namespace-missing", true)],
        "{}",
        all(&outcome)
    );
    // A ResourceSet that templates the Namespace may create it: hedged.
    let namespace_doc = "    - apiVersion: v1
      kind: Namespace
      metadata:
        name: << inputs.name >>
";
    write(
        root,
        "platform/resourceset.yaml",
        &resource_set(&format!("{kustomization}{namespace_doc}")),
    );
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .filter(|f| f.object() == Some("ConfigMap/web/settings"))
            .all(|f| !f.is_error()),
        "{}",
        all(&outcome)
    );
}

/// Issue 25: a race converges only for a tier that applies in the end; on
/// a tier that never starts (here: it depends on a dependency cycle) the
/// race is no finding, the cycle is.
#[test]
fn no_race_is_reported_on_a_tier_that_never_applies() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks(
                "a",
                "flux-system",
                "./a",
                "  dependsOn:
    - name: b
",
            ),
            ks(
                "b",
                "flux-system",
                "./b",
                "  dependsOn:
    - name: a
",
            ),
            ks("crds", "flux-system", "./crds", ""),
            ks(
                "c",
                "flux-system",
                "./c",
                "  dependsOn:
    - name: a
",
            ),
        ]
        .join("---\n"),
    );
    write(root, "a/cm.yaml", &configmap("a"));
    write(root, "b/cm.yaml", &configmap("b"));
    write(
        root,
        "crds/crd.yaml",
        "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
",
    );
    write(
        root,
        "c/widget.yaml",
        "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: default
spec: {}
",
    );
    let outcome = run(root);
    let rules: Vec<&str> = outcome.findings.iter().map(|f| f.rule().as_str()).collect();
    assert!(rules.contains(&"dependency-cycle"), "{}", all(&outcome));
    assert!(!rules.contains(&"cold-start-race"), "{}", all(&outcome));
}

/// The root Kustomization defined beside others in one directory
/// (`kubernetes/flux/config/{cluster,flux}.yaml`, applied whole by `kubectl
/// apply -k` or `flux bootstrap`): the root depending on a sibling is no
/// cycle, since the bootstrap created both. A Kustomization the root
/// applies from elsewhere, which the root depends on, is one.
#[test]
fn kustomizations_applied_with_the_entry_exist_before_it_applies_anything() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: home
  namespace: flux-system
spec:
  interval: 1h
  url: https://github.com/example/home
  ref:
    branch: main
";
    write(
        root,
        "kubernetes/flux/config/kustomization.yaml",
        "\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ./flux.yaml
  - ./cluster.yaml
",
    );
    write(
        root,
        "kubernetes/flux/config/cluster.yaml",
        &format!(
            "{git}---\n{}",
            ks(
                "cluster",
                "flux-system",
                "./kubernetes/flux",
                "  dependsOn:
    - name: flux
",
            )
            .replace("    name: flux-system\n", "    name: home\n")
        ),
    );
    write(
        root,
        "kubernetes/flux/config/flux.yaml",
        &ks("flux", "flux-system", "./kubernetes/base", "  wait: true\n")
            .replace("    name: flux-system\n", "    name: home\n"),
    );
    write(root, "kubernetes/base/cm.yaml", &configmap("c"));
    let outcome = run(root);
    let names: Vec<&str> = outcome
        .model
        .clusters
        .iter()
        .flat_map(|c| c.tiers.keys().map(|t| t.name.as_str()))
        .collect();
    assert!(names.contains(&"flux"), "{names:?} {}", all(&outcome));
    assert!(
        found(&outcome, "dependency-cycle").is_empty(),
        "{}",
        all(&outcome)
    );
    assert!(
        !outcome.findings.iter().any(|f| f.is_error()),
        "{}",
        all(&outcome)
    );
    // The same Kustomization applied by the root from another directory:
    // it exists only once the root has applied, and the root waits for it.
    let flux = std::fs::read_to_string(root.join("kubernetes/flux/config/flux.yaml")).unwrap();
    std::fs::remove_file(root.join("kubernetes/flux/config/flux.yaml")).unwrap();
    write(
        root,
        "kubernetes/flux/config/kustomization.yaml",
        "\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ./cluster.yaml
",
    );
    write(root, "kubernetes/flux/apps/flux.yaml", &flux);
    let outcome = run(root);
    assert!(
        !found(&outcome, "dependency-cycle").is_empty(),
        "{}",
        all(&outcome)
    );
}

/// One name for two different Kustomizations (another path beyond the
/// clusters' own directories) is not compared; the same Kustomization in
/// two overlays (`clusters/dev/…`, `clusters/prod/…`) is.
#[test]
fn parity_compares_what_a_kustomization_is_not_only_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for cluster in ["dev", "prod"] {
        sync(root, &format!("clusters/{cluster}"));
        for n in ["network", "storage", "media"] {
            write(
                root,
                &format!("clusters/{cluster}/apps/{n}/cm.yaml"),
                &configmap(n),
            );
        }
        write(
            root,
            &format!("shared/{cluster}-tools/cm.yaml"),
            &configmap("t"),
        );
        write(
            root,
            &format!("shared/tools-{cluster}x/cm.yaml"),
            &configmap("t"),
        );
    }
    let tiers_of = |cluster: &str, tools_path: &str, media_extra: &str| -> String {
        [
            ks(
                "network",
                "flux-system",
                &format!("./clusters/{cluster}/apps/network"),
                "",
            ),
            ks(
                "storage",
                "flux-system",
                &format!("./clusters/{cluster}/apps/storage"),
                "",
            ),
            ks(
                "media",
                "flux-system",
                &format!("./clusters/{cluster}/apps/media"),
                media_extra,
            ),
            ks(
                "tools",
                "flux-system",
                tools_path,
                "  dependsOn:
    - name: network
",
            ),
        ]
        .join("---\n")
    };
    // `tools` is a different Kustomization in each: another directory
    // (`tools-devx`, `tools-prodx`: no segment names a cluster).
    write(
        root,
        "clusters/dev/tiers.yaml",
        &tiers_of("dev", "./shared/tools-devx", ""),
    );
    write(
        root,
        "clusters/prod/tiers.yaml",
        &tiers_of("prod", "./shared/tools-prodx", "").replace(
            "  dependsOn:
    - name: network
",
            "",
        ),
    );
    let outcome = run(root);
    assert!(
        found(&outcome, "graph-parity").is_empty(),
        "{}",
        all(&outcome)
    );
    // The same Kustomization in both overlays, one edge dropped: found.
    write(
        root,
        "clusters/prod/tiers.yaml",
        &tiers_of(
            "prod",
            "./shared/prod-tools",
            "  dependsOn:
    - name: storage
",
        ),
    );
    write(
        root,
        "clusters/dev/tiers.yaml",
        &tiers_of("dev", "./shared/dev-tools", ""),
    );
    let outcome = run(root);
    let parity = found(&outcome, "graph-parity");
    assert_eq!(parity.len(), 1, "{}", all(&outcome));
    assert!(
        parity[0].message().contains("media"),
        "{}",
        parity[0].message()
    );
    // `dev-tools` and `prod-tools` are one Kustomization in two overlays:
    // an edge dropped there is found too.
    write(
        root,
        "clusters/prod/tiers.yaml",
        &tiers_of("prod", "./shared/prod-tools", "").replace(
            "  dependsOn:
    - name: network
",
            "",
        ),
    );
    let outcome = run(root);
    let parity = found(&outcome, "graph-parity");
    assert_eq!(parity.len(), 1, "{}", all(&outcome));
    assert!(
        parity[0].message().contains("tools"),
        "{}",
        parity[0].message()
    );
}
