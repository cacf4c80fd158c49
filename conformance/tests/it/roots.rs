//! Roots, not echoes (issue 47): a consequence is context on its root, and
//! a premise of absence is an assumption while a bootstrap step this tool
//! could not read may create what is missing.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;

use conformance::rules::{RuleId, Severity};

use crate::support::*;

const VARS: &str = "  postBuild:
    substituteFrom:
      - kind: Secret
        name: cluster-secrets
";

/// `first`, then `n` tiers that each depend on the one before it.
fn chain(root: &Path, first: &str, n: usize) {
    let mut docs = vec![ks("first", "flux-system", "./first", first)];
    let mut before = "first".to_string();
    for i in 0..n {
        let name = format!("app-{i}");
        docs.push(ks(
            &name,
            "flux-system",
            &format!("./apps/{name}"),
            &format!("  dependsOn:\n    - name: {before}\n"),
        ));
        write(root, &format!("apps/{name}/cm.yaml"), &configmap(&name));
        before = name;
    }
    write(root, "clusters/prod/tiers.yaml", &docs.join("---\n"));
    write(root, "first/cm.yaml", &configmap("first"));
}

#[test]
fn a_root_counts_once_and_lists_what_it_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    // `first` is suspended: the five tiers after it never apply. The
    // finding is on the first of them (its dependsOn is what to change),
    // and blocks the four after it.
    chain(root, "  suspend: true\n", 5);
    let outcome = run(root);
    let roots: Vec<_> = outcome.findings.iter().filter(|f| f.is_error()).collect();
    assert_eq!(outcome.errors(), roots.len(), "{}", all(&outcome));
    assert_eq!(roots.len(), 1, "{}", all(&outcome));
    assert_eq!(roots[0].rule(), RuleId::DependencySuspended);
    let blocked: Vec<&str> = roots[0]
        .blocks()
        .iter()
        .map(|b| b.kustomization.as_str())
        .collect();
    assert_eq!(blocked, ["app-1", "app-2", "app-3", "app-4"]);
    assert!(roots[0].blocks().iter().all(|b| b.at.is_some()));
    assert_eq!(outcome.blocked(), 4);
}

#[test]
fn a_consequence_is_listed_under_its_root_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    // `first` is suspended and holds the Widget CRD; `other` depends on it
    // (the root's finding), and `apps` uses a Widget without depending on
    // it: its finding follows from the suspended tier.
    chain(root, "  suspend: true\n", 1);
    let tiers = std::fs::read_to_string(root.join("clusters/prod/tiers.yaml")).unwrap();
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!(
            "{tiers}---\n{}",
            ks("widgets", "flux-system", "./widgets", "")
        ),
    );
    write(
        root,
        "first/crd.yaml",
        "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
",
    );
    write(
        root,
        "widgets/widget.yaml",
        "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: default
",
    );
    let outcome = run(root);
    assert_eq!(outcome.errors(), 1, "{}", all(&outcome));
    let root_finding = outcome.findings.iter().find(|f| f.is_error()).unwrap();
    assert_eq!(root_finding.rule(), RuleId::DependencySuspended);
    let blocked: Vec<_> = outcome.findings.iter().filter(|f| f.is_blocked()).collect();
    assert!(!blocked.is_empty(), "{}", all(&outcome));
    for f in &blocked {
        assert_eq!(f.caused_by(), Some(root_finding.id().as_str()));
    }
    let widgets = root_finding
        .blocks()
        .iter()
        .find(|b| b.kustomization == "widgets")
        .unwrap_or_else(|| panic!("{:?}\n{}", root_finding.blocks(), all(&outcome)));
    assert_eq!(widgets.objects, ["Widget/default/w"]);
    assert_eq!(outcome.consequences(), blocked.len());
}

/// Checks `root` and asserts that no finding is an `unresolved-reference`.
fn assert_no_unresolved_reference(root: &Path) {
    let outcome = run(root);
    assert!(
        outcome
            .findings
            .iter()
            .all(|f| f.rule() != RuleId::UnresolvedReference),
        "{}",
        all(&outcome)
    );
}

/// A tier that reads `cluster-secrets`, which nothing in the repository
/// creates, and a bootstrap script whose templated feed is not read (its
/// template is named by a variable the script does not set).
fn unread_feed(root: &Path) {
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", VARS),
    );
    write(root, "apps/cm.yaml", &configmap("a"));
    write(
        root,
        "scripts/bootstrap.sh",
        "\
#!/usr/bin/env bash
set -euo pipefail
minijinja-cli \"${TEMPLATE}\" | op inject | kubectl apply -f -
flux bootstrap github --owner=me --repository=cluster --path=clusters/prod
",
    );
}

/// The repository of [`unread_feed`] without its bootstrap script: each
/// test writes the step it is about.
fn tier_reading_cluster_secrets(root: &Path) {
    unread_feed(root);
    std::fs::remove_file(root.join("scripts/bootstrap.sh")).unwrap();
}

#[test]
fn nothing_creates_it_is_an_assumption_while_an_unread_step_may() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    unread_feed(root);
    let outcome = run(root);
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
    let f = outcome
        .findings
        .iter()
        .find(|f| f.rule() == RuleId::UnresolvedReference)
        .unwrap_or_else(|| panic!("{}", all(&outcome)));
    assert_eq!(f.severity(), Severity::Warning);
    assert!(f.why().contains("scripts/bootstrap.sh:3"), "{}", f.why());
    assert!(f.why().contains("kubectl apply -f -"), "{}", f.why());
    assert!(f.fix().contains("provides:"), "{}", f.fix());
}

#[test]
fn provides_settles_the_assumption_either_way() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    unread_feed(root);
    // The step creates nothing the tiers need: the finding is an error.
    write(
        root,
        "conformance.yaml",
        "\
provides:
  - step: scripts/bootstrap.sh:3
    creates: []
",
    );
    let outcome = run(root);
    assert_eq!(outcome.errors(), 1, "{}", all(&outcome));
    // It creates the Secret: nothing to report.
    write(
        root,
        "conformance.yaml",
        "\
provides:
  - step: scripts/bootstrap.sh:3
    creates: [Secret/flux-system/cluster-secrets]
",
    );
    assert_no_unresolved_reference(root);
}

#[test]
fn a_feed_is_not_assumed_to_install_crds() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    unread_feed(root);
    write(
        root,
        "apps/widget.yaml",
        "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: default
",
    );
    let outcome = run(root);
    let crd = outcome
        .findings
        .iter()
        .find(|f| f.rule() == RuleId::CrdUnavailable)
        .unwrap_or_else(|| panic!("{}", all(&outcome)));
    assert_eq!(crd.severity(), Severity::Error, "{}", all(&outcome));
}

/// The repository of [`unread_feed`] with the feed a file of the
/// repository: `just template F | kubectl apply -f -`.
fn templated_feed(root: &Path, template: &str) {
    unread_feed(root);
    write(
        root,
        "scripts/bootstrap.sh",
        "\
#!/usr/bin/env bash
set -euo pipefail
just template bootstrap/resources.yaml.j2 | kubectl apply --server-side -f -
",
    );
    if !template.is_empty() {
        write(root, "bootstrap/resources.yaml.j2", template);
    }
}

#[test]
fn a_templated_feed_is_read_as_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    templated_feed(
        root,
        "\
---
apiVersion: v1
kind: Secret
metadata:
  name: cluster-secrets
  namespace: flux-system
stringData:
  DOMAIN: \"{{ ENV.DOMAIN }}\"
{% if ENV.EXTRA %}
  EXTRA: \"{{ ENV.EXTRA }}\"
{% endif %}
",
    );
    assert_no_unresolved_reference(root);
}

#[test]
fn a_feed_a_page_names_by_a_path_that_is_gone_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The template the script renders is not in the repository: the step
    // cannot run as written, so the finding stays an error.
    templated_feed(root, "");
    let outcome = run(root);
    assert_eq!(outcome.errors(), 1, "{}", all(&outcome));
}

#[test]
fn an_unread_step_is_narrowed_to_what_it_can_create() {
    // `kubectl create namespace … --dry-run -o yaml | kubectl apply -f -`
    // creates Namespaces, and a `-f` path with a known ending creates the
    // kinds of the repository's files with that ending: neither makes the
    // missing Secret an assumption.
    for script in [
        "for ns in $(ls kubernetes/apps); do kubectl create namespace \"$ns\" --dry-run=client -o yaml | kubectl apply -f -; done",
        "kubectl apply --server-side -f \"${DEVENV_DIR}/oci/registry-config.yaml\"",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        unread_feed(root);
        write(
            root,
            "scripts/bootstrap.sh",
            &format!("#!/usr/bin/env bash\nset -euo pipefail\n{script}\n"),
        );
        write(
            root,
            "devenv/oci/registry-config.yaml",
            &configmap("registry"),
        );
        let outcome = run(root);
        assert_eq!(outcome.errors(), 1, "{script}\n{}", all(&outcome));
    }
}

#[test]
fn a_maintenance_task_is_not_the_bootstrap() {
    // A task that applies one app's build by hand could create anything,
    // but it is not what a cold start runs.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    tier_reading_cluster_secrets(root);
    write(
        root,
        ".taskfiles/Flux/Taskfile.yaml",
        "\
version: '3'
tasks:
  apply-ks:
    cmds:
      - flux build ks {{.ks}} --path {{.path}} | kubectl apply --server-side -f -
",
    );
    let outcome = run(root);
    assert_eq!(outcome.errors(), 1, "{}", all(&outcome));
}

#[test]
fn a_task_named_for_the_bootstrap_is_the_bootstrap_wherever_its_taskfile_is() {
    // `.taskfiles/Kubernetes/Tasks.yml` names no bootstrap by its path,
    // but its task `bootstrap` is what a new cluster runs.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    tier_reading_cluster_secrets(root);
    write(
        root,
        ".taskfiles/Kubernetes/Tasks.yml",
        "\
version: '3'
tasks:
  bootstrap:
    desc: Bootstrap a new cluster
    cmds:
      - minijinja-cli \"${TEMPLATE}\" | op inject | kubectl apply -f -
",
    );
    let outcome = run(root);
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
    let f = outcome
        .findings
        .iter()
        .find(|f| f.rule() == RuleId::UnresolvedReference)
        .unwrap_or_else(|| panic!("{}", all(&outcome)));
    assert!(
        f.why().contains(".taskfiles/Kubernetes/Tasks.yml:6"),
        "{}",
        f.why()
    );
}

/// The repository of [`unread_feed`] with a Widget to install, and a
/// bootstrap task that applies `{{.CLUSTER_DIR}}/bootstrap/crds`, whose
/// Taskfile default (`kubernetes`) names no directory; each of `clusters`
/// has `kubernetes/CLUSTER/bootstrap/crds` with the Widget CRD.
fn overridable_crds(root: &Path, clusters: &[&str]) {
    tier_reading_cluster_secrets(root);
    write(
        root,
        "apps/widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\n",
    );
    write(
        root,
        "Taskfile.yml",
        "\
version: '3'
vars:
  CLUSTER_DIR: '{{.ROOT_DIR}}/kubernetes'
tasks:
  bootstrap:
    cmds:
      - kubectl apply --server-side --kustomize {{.CLUSTER_DIR}}/bootstrap/crds/
",
    );
    for cluster in clusters {
        let dir = format!("kubernetes/{cluster}/bootstrap/crds");
        write(
            root,
            &format!("{dir}/kustomization.yaml"),
            "resources:\n  - widgets.yaml\n  - https://raw.githubusercontent.com/example/gadgets/v1/config/crd/bases/example.com_gadgets.yaml\n",
        );
        write(
            root,
            &format!("{dir}/widgets.yaml"),
            "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
",
        );
    }
}

#[test]
fn a_path_its_defaults_make_wrong_is_read_with_the_value_that_names_a_path() {
    // `task bootstrap CLUSTER_DIR=…` overrides the default: with
    // kubernetes/prod/bootstrap/crds the only directory the step can name,
    // it is read as that one (and a note says so); its Widget CRD is then
    // installed before Flux.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    overridable_crds(root, &["prod"]);
    let outcome = run(root);
    assert!(
        !outcome
            .findings
            .iter()
            .any(|f| f.rule() == RuleId::CrdUnavailable),
        "{}",
        all(&outcome)
    );
    let note = outcome
        .bootstrap
        .notes
        .iter()
        .find(|n| n.at.line == 7)
        .unwrap_or_else(|| panic!("{:?}", outcome.bootstrap.notes));
    assert!(
        note.text.contains("read as kubernetes/prod/bootstrap/crds"),
        "{}",
        note.text
    );
    // The remote CRD file it lists is named by its file's name.
    assert!(
        outcome.bootstrap.items.iter().any(|i| matches!(
            &i.provides,
            conformance::provenance::bootstrap::Provides::Crd(c) if c == "gadgets.example.com"
        )),
        "{:?}",
        outcome.bootstrap.items
    );

    // Too many directories to be one step's: the step is unread, and what
    // it could create an assumption named with it.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    overridable_crds(root, &["a", "b", "c", "d", "e"]);
    let outcome = run(root);
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
    let crd = outcome
        .findings
        .iter()
        .find(|f| f.rule() == RuleId::CrdUnavailable);
    assert!(
        crd.is_none_or(|f| f.why().contains("Taskfile.yml:7")),
        "{}",
        all(&outcome)
    );

    // Nothing anywhere ends with bootstrap/crds: the step fails as
    // written, and creates nothing.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    overridable_crds(root, &[]);
    let outcome = run(root);
    assert_eq!(outcome.errors(), 2, "{}", all(&outcome));
}

/// Two tiers, each with a chart whose CRDs the other's objects need:
/// cert-manager beside a ServiceMonitor, kube-prometheus-stack beside a
/// Certificate. Neither stage passes Flux's dry-run before the other's
/// chart is installed.
fn crossed_charts(root: &Path) {
    sync(root, "clusters/prod");
    helm_repository(root, "clusters/prod", "flux-system", "charts");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &[
            ks("certs", "flux-system", "./certs", ""),
            ks("monitoring", "flux-system", "./monitoring", ""),
        ]
        .join("---\n"),
    );
    let release = |name: &str, chart: &str| {
        format!(
            "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {name}
  namespace: flux-system
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
    };
    write(
        root,
        "certs/release.yaml",
        &format!(
            "{}  values:\n    crds:\n      enabled: true\n",
            release("cert-manager", "cert-manager")
        ),
    );
    write(
        root,
        "certs/monitor.yaml",
        "\
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: cert-manager
  namespace: flux-system
spec:
  selector: {}
",
    );
    write(
        root,
        "monitoring/release.yaml",
        &release("kube-prometheus-stack", "kube-prometheus-stack"),
    );
    write(
        root,
        "monitoring/certificate.yaml",
        "\
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: grafana
  namespace: flux-system
spec:
  secretName: grafana-tls
  issuerRef:
    name: selfsigned
",
    );
}

#[test]
fn a_loop_through_chart_crds_is_judged_with_what_the_bootstrap_installs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    crossed_charts(root);
    let outcome = run(root);
    // The loop: each tier's stage needs the other's chart's CRDs.
    assert_eq!(outcome.errors(), 2, "{}", all(&outcome));
    assert!(
        all(&outcome).contains("neither ever converges"),
        "{}",
        all(&outcome)
    );
    // A bootstrap step that may install CRDs (a directory named by a value
    // the tool cannot know): the loop is an assumption, named.
    write(
        root,
        "bootstrap/install.sh",
        "#!/usr/bin/env bash\nkubectl apply --server-side -k \"${CRDS_DIR}\"\n",
    );
    let outcome = run(root);
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| f.why().contains("bootstrap/install.sh:2")),
        "{}",
        all(&outcome)
    );
    // A bootstrap that installs one chart's CRDs (read): no loop at all.
    std::fs::remove_file(root.join("bootstrap/install.sh")).unwrap();
    write(
        root,
        "bootstrap/install.sh",
        "#!/usr/bin/env bash\nhelm install cert-manager jetstack/cert-manager --namespace cert-manager --create-namespace --set crds.enabled=true\n",
    );
    let outcome = run(root);
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
    assert!(
        outcome
            .findings
            .iter()
            .all(|f| f.severity() != Severity::Error),
        "{}",
        all(&outcome)
    );
}

#[test]
fn a_provides_entry_that_names_nothing_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    unread_feed(root);
    write(
        root,
        "conformance.yaml",
        "\
provides:
  - step: scripts/nowhere.sh:3
    creates: [Secret/flux-system/cluster-secrets]
  - step: scripts/bootstrap.sh:3
    creates: [cluster-secrets, secret/flux-system/x]
",
    );
    let err = match run_result(root) {
        Ok(outcome) => panic!("accepted:\n{}", all(&outcome)),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains(":2:") && err.contains("scripts/nowhere.sh") && err.contains("does not exist"),
        "{err}"
    );
    assert!(
        err.contains(":5:") && err.contains("`cluster-secrets`"),
        "{err}"
    );
    assert!(err.contains("`secret/flux-system/x`"), "{err}");
}
