//! Organisations' platform layouts: a cluster directory whose sync object
//! an installer makes, an application catalog, test data, variables a
//! platform fills in, and the boundary of what the run reads.

use super::*;

/// A platform whose sync is made outside git: `clusters/host` builds the
/// Flux Kustomizations kept in `common/`, which sync a GitRepository the
/// installer creates (`platform/management`) and read a ConfigMap and a
/// namespace it creates too. Beside it, an app catalog and a test fixture.
fn platform(root: &Path) {
    write(
        root,
        "clusters/host/kustomization.yaml",
        "resources:\n  - ../../common/operator\n",
    );
    let ks = |name: &str, path: &str, extra: &str| {
        format!(
            "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {name}
  namespace: platform
spec:
  interval: 10m
  path: {path}
  prune: true
  sourceRef:
    kind: GitRepository
    name: management
    namespace: platform
{extra}"
        )
    };
    write(
        root,
        "common/operator/kustomization.yaml",
        "resources:\n  - flux-kustomization.yaml\n",
    );
    write(
        root,
        "common/operator/flux-kustomization.yaml",
        &ks(
            "operator",
            "./common/operator/manifests",
            "  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: platform-vars\n",
        ),
    );
    write(
        root,
        "common/operator/manifests/cm.yaml",
        &configmap("operator"),
    );
    for app in ["cert-manager", "grafana", "velero"] {
        for version in ["1.2.0", "1.3.0"] {
            write(
                root,
                &format!("applications/{app}/{version}/ks.yaml"),
                &ks(
                    &format!("{app}-release"),
                    &format!("./applications/{app}/{version}/release"),
                    "  dependsOn:\n    - name: ${releaseName}-pre-install\n      namespace: ${releaseNamespace}\n",
                ),
            );
        }
    }
    write(
        root,
        "apptests/testdata/sample/ks.yaml",
        &ks("sample", "./apptests/testdata/sample/app", ""),
    );
}

#[test]
fn a_cluster_directory_is_the_entry_and_a_catalog_and_test_data_are_not_clusters() {
    let dir = tempfile::tempdir().unwrap();
    platform(dir.path());
    let outcome = run(dir.path());
    assert_eq!(
        cluster_names(&outcome),
        vec!["host"],
        "{:?}",
        outcome.model.notes
    );
    let notes = outcome.model.notes.join("\n");
    assert!(
        notes.contains("clusters/host/ is a cluster's entry"),
        "{notes}"
    );
    assert!(
        notes.contains("applications/ is an application catalog: 6 versioned app directories")
            && notes.contains("--entry applications/cert-manager/1.2.0"),
        "{notes}"
    );
    // The source nothing defines is the one the installer syncs: its
    // paths are this repository's, and the tier is built.
    let operator = &outcome.model.clusters[0].tiers[&TierId::new("platform", "operator")];
    assert!(
        matches!(operator.state, TierState::Rendered(_)),
        "{:?}",
        operator.state
    );
    assert!(
        notes.contains("GitRepository/platform/management is defined nowhere"),
        "{notes}"
    );
}

#[test]
fn what_the_installer_creates_is_a_boundary_item_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    platform(dir.path());
    let outcome = run(dir.path());
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
    let items: Vec<String> = outcome.boundary().iter().map(|b| b.item.clone()).collect();
    assert!(
        items.contains(&"ConfigMap/platform/platform-vars".to_string())
            && items.contains(&"GitRepository/platform/management".to_string()),
        "{items:?}"
    );
    let item = &outcome.boundary()[0];
    assert!(
        item.evidence[0].contains("made outside git"),
        "{:?}",
        item.evidence
    );
    let f = outcome
        .findings
        .iter()
        .find(|f| f.boundary_item() == Some("ConfigMap/platform/platform-vars"))
        .unwrap();
    assert!(
        f.fix()
            .contains("external: [\"ConfigMap/platform/platform-vars\"]"),
        "{}",
        f.fix()
    );
    // Declared, the boundary is settled: nothing is said about them.
    write(
        dir.path(),
        "conformance.yaml",
        "external:\n  - ConfigMap/platform/platform-vars\n  - GitRepository/platform/management\n  - Namespace/platform\n",
    );
    let settled = run(dir.path());
    assert!(settled.boundary().is_empty(), "{:?}", settled.boundary());
    assert!(
        !all(&settled).contains("platform-vars"),
        "{}",
        all(&settled)
    );
}

#[test]
fn external_entries_of_no_known_shape_are_refused_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    platform(dir.path());
    write(
        dir.path(),
        "conformance.yaml",
        "external:\n  - Namespace/a\n  - nothing-here\n",
    );
    let err = run_result(dir.path()).err().unwrap().to_string();
    assert!(
        err.contains("conformance.yaml:3") && err.contains("external: `nothing-here`"),
        "{err}"
    );
}

#[test]
fn in_a_repository_that_is_its_whole_world_nothing_creating_it_stays_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks(
            "apps",
            "flux-system",
            "./apps",
            "  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-vars\n",
        ),
    );
    write(root, "apps/cm.yaml", &configmap("app"));
    let outcome = run(root);
    let f = outcome
        .findings
        .iter()
        .find(|f| f.rule().as_str() == "unresolved-reference")
        .unwrap_or_else(|| panic!("{}", all(&outcome)));
    assert!(f.is_error() && !f.is_boundary(), "{}", all(&outcome));
    assert!(
        f.why().contains("bootstraps Flux from git itself")
            && f.why()
                .contains("external: [\"ConfigMap/flux-system/cluster-vars\"]"),
        "{}",
        f.why()
    );
    assert!(outcome.boundary().is_empty());
}

#[test]
fn a_depends_on_holding_a_variable_is_compared_as_a_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &format!(
            "{}---\n{}---\n{}",
            ks("db-pre-install", "flux-system", "./apps", ""),
            ks(
                "db",
                "flux-system",
                "./apps",
                "  dependsOn:\n    - name: ${releaseName}-pre-install\n"
            ),
            ks(
                "web",
                "flux-system",
                "./apps",
                "  dependsOn:\n    - name: ${releaseName}-missing\n"
            ),
        ),
    );
    write(root, "apps/cm.yaml", &configmap("app"));
    let outcome = run(root);
    let missing: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule().as_str() == "dependency-missing")
        .collect();
    // `db` fits db-pre-install: nothing said. `web` fits nothing: only a
    // warning, since the variable's value is unknown.
    assert_eq!(missing.len(), 1, "{}", all(&outcome));
    assert_eq!(missing[0].kustomization(), "web");
    assert!(!missing[0].is_error());
}

#[test]
fn a_repository_that_is_only_a_catalog_says_so_and_how_to_check_an_app() {
    let dir = tempfile::tempdir().unwrap();
    platform(dir.path());
    std::fs::remove_dir_all(dir.path().join("clusters")).unwrap();
    std::fs::remove_dir_all(dir.path().join("common")).unwrap();
    std::fs::remove_dir_all(dir.path().join("apptests")).unwrap();
    let err = run_result(dir.path()).err().unwrap().to_string();
    assert!(
        err.contains("is an application catalog") && err.contains("--entry applications/"),
        "{err}"
    );
    let app = run_with_entries(dir.path(), &["applications/grafana/1.3.0"]).unwrap();
    assert_eq!(app.model.clusters.len(), 1);
}

/// An AKS cluster whose Flux configuration Terraform makes, syncing an
/// infrastructure repository (mapped with `--source`) and a path of its own.
fn terraform_platform(root: &Path) {
    write(
        root,
        "terraform/flux.tf",
        r#"
resource "azurerm_kubernetes_cluster" "aks" {
  name = "aks"
}

/*
resource "azurerm_kubernetes_flux_configuration" "old" {
  name = "old"
}
*/

resource "azurerm_kubernetes_flux_configuration" "infra" {
  name       = "infra"
  cluster_id = azurerm_kubernetes_cluster.aks.id
  namespace  = "cluster-config"
  git_repository {
    url             = "https://github.com/example/platform"
    reference_type  = "branch"
    reference_value = "main"
  }
  kustomizations {
    name = "controllers"
    path = "./kubernetes/controllers"
  }
  kustomizations {
    name       = "configs"
    path       = "./kubernetes/configs"
    depends_on = ["controllers"]
  }
}

resource "azurerm_kubernetes_flux_configuration" "apps" {
  name       = "apps"
  cluster_id = azurerm_kubernetes_cluster.aks.id
  namespace  = "cluster-config"
  git_repository {
    url             = local.apps_repo_url
    reference_type  = "branch"
    reference_value = "main"
  }
  kustomizations {
    name = "apps"
  }
  kustomizations {
    name = "env"
    path = "clusters/${var.environment}"
  }
}
"#,
    );
    write(
        root,
        "kubernetes/controllers/cm.yaml",
        &configmap("controllers"),
    );
    write(
        root,
        "kubernetes/configs/widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\n",
    );
}

#[test]
fn a_cluster_terraform_makes_is_checked_from_its_flux_configurations() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("platform");
    terraform_platform(&root);
    // The platform repository itself is the infra configuration's source.
    write(
        &root,
        "conformance.yaml",
        "repository:\n  url: https://github.com/example/platform\n",
    );
    let outcome = run(&root);
    assert_eq!(
        cluster_names(&outcome),
        vec!["aks"],
        "{:?}",
        outcome.model.notes
    );
    let cluster = &outcome.model.clusters[0];
    let configs = &cluster.tiers[&TierId::new("cluster-config", "infra-configs")];
    assert!(
        matches!(configs.state, TierState::Rendered(_)),
        "{:?}",
        configs.state
    );
    assert_eq!(
        configs.depends_on[0].target,
        TierId::new("cluster-config", "infra-controllers")
    );
    assert_eq!(configs.defined_at.file, "terraform/flux.tf");
    // The apps repository's URL is computed: not checked, with the flag.
    let TierState::NotChecked(why) =
        &cluster.tiers[&TierId::new("cluster-config", "apps-apps")].state
    else {
        panic!("apps-apps was checked");
    };
    assert!(
        why.contains("--source GitRepository/cluster-config/apps=DIR"),
        "{why}"
    );
    // A path Terraform fills in is not guessed.
    let TierState::NotChecked(why) =
        &cluster.tiers[&TierId::new("cluster-config", "apps-env")].state
    else {
        panic!("apps-env was built");
    };
    assert!(
        why.contains("Terraform expression `var.environment`"),
        "{why}"
    );
    // The commented-out configuration makes nothing.
    assert!(!cluster.tiers.keys().any(|id| id.name.starts_with("old")));
    // The Widget's CRD could come from the installer or the unread source:
    // a warning, not an error.
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
    assert!(
        outcome
            .model
            .notes
            .iter()
            .any(|n| n.contains("made by Terraform (terraform/flux.tf:")),
        "{:?}",
        outcome.model.notes
    );
}

#[test]
fn a_terraform_file_that_does_not_parse_is_named_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    platform(dir.path());
    write(
        dir.path(),
        "infra/flux.tf",
        "resource \"azurerm_kubernetes_flux_configuration\" \"x\" {\n  name = \n",
    );
    let outcome = run(dir.path());
    assert!(
        outcome
            .model
            .notes
            .iter()
            .any(|n| n.starts_with("infra/flux.tf: not read as Terraform")),
        "{:?}",
        outcome.model.notes
    );
}

#[test]
fn an_entry_whose_kustomizations_its_own_patches_complete_is_found_and_built() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The Kustomizations as written have no sourceRef, interval or
    // namespace: the entry's kustomization patches them in.
    write(
        root,
        "services/environments/prod/01/kustomization.yaml",
        "\
resources:
  - apps.yaml
namespace: flux-system
patches:
  - target:
      kind: Kustomization
    patch: |
      - op: add
        path: /spec/sourceRef
        value: {kind: GitRepository, name: platform}
      - op: add
        path: /spec/interval
        value: 10m
",
    );
    write(
        root,
        "services/environments/prod/01/apps.yaml",
        "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
spec:
  path: ./services/apps
  prune: true
",
    );
    write(root, "services/apps/cm.yaml", &configmap("app"));
    let outcome = run(root);
    assert_eq!(outcome.model.clusters.len(), 1, "{:?}", outcome.model.notes);
    let apps = &outcome.model.clusters[0].tiers[&TierId::new("flux-system", "apps")];
    assert!(
        matches!(apps.state, TierState::Rendered(_)),
        "{:?}",
        apps.state
    );
    assert_eq!(apps.source_ref.name, "platform");
}

fn conformance_cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn init_writes_a_starter_that_settles_the_boundary_once_uncommented_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    platform(dir.path());
    let repo = dir.path().to_str().unwrap();
    let out = conformance_cli(&["init", "--repo", repo]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = dir.path().join("conformance.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    // As written, every entry is commented out: a valid file that asserts
    // nothing, each line with its evidence.
    assert!(
        text.contains("#   - ConfigMap/platform/platform-vars   # host: referred to by operator;"),
        "{text}"
    );
    assert_eq!(
        run(dir.path()).boundary().len(),
        text.matches("#   - ").count()
    );
    // Uncommented, it settles what it names.
    let uncommented: String = text
        .lines()
        .map(|l| match l.strip_prefix("# external:") {
            Some(_) => "external:".to_string(),
            None => l
                .strip_prefix("#   - ")
                .map_or(l.to_string(), |rest| format!("  - {rest}")),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&file, &uncommented).unwrap();
    assert!(run(dir.path()).boundary().is_empty(), "{uncommented}");
    // Never overwritten: refused, the file as it was.
    let again = conformance_cli(&["init", "--repo", repo]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already exists, and is not overwritten")
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), uncommented);
    // `--output -` prints it instead.
    let printed = conformance_cli(&["init", "--repo", repo, "--output", "-"]);
    assert!(printed.status.success());
    assert!(String::from_utf8_lossy(&printed.stdout).starts_with("# conformance.yaml: a starter"));
}

#[test]
fn a_config_map_an_in_cluster_provider_writes_is_provided_by_its_cr() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!(
            "{}---\n{}",
            ks("config", "flux-system", "./config", ""),
            ks(
                "apps",
                "flux-system",
                "./apps",
                "  dependsOn:\n    - name: config\n  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: app-settings\n      - kind: Secret\n        name: app-secrets\n",
            ),
        ),
    );
    // The Azure App Configuration provider writes the ConfigMap, the Vault
    // Secrets Operator the Secret, from CRs the config tier applies.
    write(
        root,
        "config/providers.yaml",
        "\
apiVersion: azconfig.io/v1
kind: AzureAppConfigurationProvider
metadata:
  name: settings
  namespace: flux-system
spec:
  endpoint: https://example.azconfig.io
  target:
    configMapName: app-settings
---
apiVersion: secrets.hashicorp.com/v1beta1
kind: VaultStaticSecret
metadata:
  name: secrets
  namespace: flux-system
spec:
  path: app
  destination:
    name: app-secrets
    create: true
",
    );
    write(root, "apps/cm.yaml", &configmap("app"));
    let outcome = run(root);
    let unresolved: Vec<_> = outcome
        .findings
        .iter()
        .filter(|f| f.rule().as_str() == "unresolved-reference")
        .collect();
    assert!(unresolved.is_empty(), "{}", all(&outcome));
}

#[test]
fn a_flux_bootstrap_git_path_is_a_cluster_until_git_holds_its_sync() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "infra/flux.tf",
        "resource \"flux_bootstrap_git\" \"this\" {\n  path = \"k8s/prod\"\n}\n",
    );
    // The sync path builds Flux Kustomizations kept elsewhere: nothing in
    // git says it is a cluster but the Terraform resource.
    write(
        root,
        "k8s/prod/kustomization.yaml",
        "resources:\n  - ../../tiers\n",
    );
    write(
        root,
        "tiers/kustomization.yaml",
        "resources:\n  - apps.yaml\n",
    );
    write(
        root,
        "tiers/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(root, "apps/cm.yaml", &configmap("app"));
    let outcome = run(root);
    assert_eq!(
        cluster_names(&outcome),
        vec!["terraform-this"],
        "{:?}",
        outcome.model.notes
    );
    let apps = &outcome.model.clusters[0].tiers[&TierId::new("flux-system", "apps")];
    assert!(
        matches!(apps.state, TierState::Rendered(_)),
        "{:?}",
        apps.state
    );
    // Once the provider has committed the sync, that is the cluster.
    sync(root, "k8s/prod");
    write(
        root,
        "k8s/prod/kustomization.yaml",
        "resources:\n  - ../../tiers\n  - flux-system/gotk-sync.yaml\n",
    );
    let outcome = run(root);
    assert_eq!(
        outcome.model.clusters.len(),
        1,
        "{:?}",
        cluster_names(&outcome)
    );
    assert!(
        !outcome
            .model
            .notes
            .iter()
            .any(|n| n.contains("made by Terraform"))
    );
}

#[test]
fn a_file_a_documented_setup_step_writes_is_not_a_certain_failure() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./base", ""),
    );
    write(
        root,
        "base/kustomization.yaml",
        "resources:\n  - cm.yaml\n  - common-secret.enc.yaml\n",
    );
    write(root, "base/cm.yaml", &configmap("app"));
    write(
        root,
        "base/common-secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: default\n",
    );
    let failing = |outcome: &conformance::check::Outcome| {
        outcome
            .findings
            .iter()
            .find(|f| f.rule().as_str() == "render-failed")
            .map(|f| (f.is_error(), f.why().to_string()))
    };
    // Nothing writes it: a certain failure.
    let (error, _) = failing(&run(root)).unwrap();
    assert!(error);
    // The README's setup creates it from the template beside it.
    write(
        root,
        "README.md",
        "# Setup\n\nEncrypt the secrets:\n\n```sh\nsops --encrypt base/common-secret.yaml > base/common-secret.enc.yaml\n```\n",
    );
    let outcome = run(root);
    let (error, why) = failing(&outcome).unwrap_or_else(|| panic!("{}", all(&outcome)));
    assert!(!error, "{why}");
    assert!(
        why.contains("the setup step at README.md:6 writes it"),
        "{why}"
    );
}

#[test]
fn a_flux_bootstrap_git_path_terraform_computes_is_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "terraform/main.tf",
        "resource \"flux_bootstrap_git\" \"this\" {\n  path = var.cluster_path\n}\n",
    );
    // A YAML file at the root that is no Kubernetes object: the root is
    // not built as if it were the sync path.
    write(root, ".pre-commit-config.yaml", "repos: []\n");
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(root, "apps/cm.yaml", &configmap("app"));
    let outcome = run(root);
    assert_eq!(
        cluster_names(&outcome),
        vec!["prod"],
        "{:?}",
        outcome.model.notes
    );
    assert_eq!(outcome.errors(), 0, "{}", all(&outcome));
}
