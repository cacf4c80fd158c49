//! The L1 plan, without a cluster: tier selection, model order, Flux's
//! stage partition, and the assertions.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;

use conformance::config::Config;
use conformance::l1::{self, Assertion};
use conformance::render::Choice;
use conformance::session::Session;

fn plan(repo: &Path, cluster: &str) -> l1::Plan {
    let session =
        Session::open(&conformance::session::RunOptions::at(repo).renderer(Choice::Native))
            .unwrap();
    let c = session.cluster(cluster).unwrap();
    l1::plan(
        &session.analysis(c),
        &session.declared.config.l1,
        &session.declared.catalog,
    )
}

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(rel)
}

#[test]
fn reference_platform_plan_selects_the_trigger_tiers_in_model_order() {
    let p = plan(&fixture("reference-platform"), "prod");
    let tiers: Vec<&str> = p.tiers.iter().map(|t| t.label.as_str()).collect();
    // platform-config holds the CDI and KubeVirt CRs (triggers); platform is
    // its ancestor; platform-config-cdi and apps-vms use what they create.
    // flux-system (Flux itself) is left out.
    assert_eq!(
        tiers,
        [
            "platform",
            "platform-config",
            "platform-config-cdi",
            "apps-vms"
        ]
    );
    let platform = &p.tiers[0];
    let stages: Vec<&str> = platform.stages.iter().map(|s| s.name).collect();
    assert_eq!(stages, ["crds-namespaces-clusterroles", "classes", "rest"]);
    assert!(
        platform.stages[0]
            .objects
            .iter()
            .any(|o| o.id.name == "cdis.cdi.kubevirt.io")
    );
    assert!(
        platform.stages[1]
            .objects
            .iter()
            .all(|o| o.id.kind.ends_with("Class"))
    );
    assert!(
        platform
            .skipped
            .iter()
            .any(|(o, why)| o.kind == "HelmRelease" && why.contains("Flux"))
    );
    let config = &p.tiers[1];
    assert!(
        config
            .skipped
            .iter()
            .any(|(o, why)| o.kind == "ClusterIssuer" && why.contains("chart cert-manager"))
    );
}

#[test]
fn assertions_cover_each_tier_each_trigger_and_the_negative_check() {
    let p = plan(&fixture("reference-platform"), "prod");
    let names: Vec<String> = p.assertions.iter().map(Assertion::name).collect();
    for want in [
        "applies::platform",
        "applies::platform-config",
        "applies::platform-config-cdi",
        "applies::apps-vms",
        "runtime-crds::CDI/cdi",
        "runtime-crds::KubeVirt/kubevirt",
        "second-order-rejected::StorageProfile/longhorn",
        "second-order-rejected::VirtualMachine/unifi",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    let cdi = p
        .assertions
        .iter()
        .find_map(|a| match a {
            Assertion::RuntimeCrds {
                trigger,
                crds,
                tier,
                ..
            } if trigger.kind == "CDI" => Some((tier.clone(), crds.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(cdi.0, "platform-config");
    assert!(
        cdi.1
            .contains(&"storageprofiles.cdi.kubevirt.io".to_string())
    );
}

#[test]
fn configured_tiers_and_image_win() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("incidents/cdi-storageprofile-same-tier/fixed");
    copy(&src, dir.path());
    std::fs::write(
        dir.path().join("conformance.yaml"),
        "\
l1:
  tiers: [platform, platform-config]
  image: rancher/k3s:v1.36.4-k3s1
",
    )
    .unwrap();
    let p = plan(dir.path(), "prod");
    let tiers: Vec<&str> = p.tiers.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(tiers, ["platform", "platform-config"]);
    assert!(p.selection.contains("l1.tiers"));
    let config = Config::load(dir.path(), &conformance::rules::is_rule_id).unwrap();
    assert_eq!(
        l1::k3s_image(&config.l1, config.kubernetes_of("prod")),
        ("rancher/k3s".into(), "v1.36.4-k3s1".into())
    );
}

#[test]
fn k3s_tag_follows_the_cluster_version() {
    let config = Config::parse(
        "\
clusters:
  prod:
    kubernetes: v1.36.4+k3s1
  dev:
    kubernetes: 1.35.2
",
        &conformance::rules::is_rule_id,
    )
    .unwrap();
    assert_eq!(
        l1::k3s_image(&config.l1, config.kubernetes_of("prod")).1,
        "v1.36.4-k3s1"
    );
    assert_eq!(
        l1::k3s_image(&config.l1, config.kubernetes_of("dev")).1,
        "v1.35.2-k3s1"
    );
    assert_eq!(
        l1::k3s_image(&config.l1, config.kubernetes_of("other")).1,
        l1::DEFAULT_K3S_TAG
    );
}

#[test]
fn stages_follow_fluxs_partition() {
    let p = plan(
        &fixture("incidents/cdi-storageprofile-same-tier/repo"),
        "prod",
    );
    let config = p
        .tiers
        .iter()
        .find(|t| t.label == "platform-config")
        .unwrap();
    // The CDI CR and the StorageProfiles land in the same (last) stage: the
    // dry-run that makes the tier fail in production.
    let rest = config.stages.iter().find(|s| s.name == "rest").unwrap();
    let kinds: Vec<&str> = rest.objects.iter().map(|o| o.id.kind.as_str()).collect();
    assert!(
        kinds.contains(&"CDI") && kinds.contains(&"StorageProfile"),
        "{kinds:?}"
    );
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}
