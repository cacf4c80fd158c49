//! Several repositories in one run: `--source REF=DIR` and `sources:` with
//! `dir:` read another checkout as the artifact of a fleet repository's
//! source, so its tiers are built and checked in the same graph.

use super::*;

/// A fleet repository whose cluster syncs `infra` from another repository
/// (`https://github.com/example/infra`), and that checkout: an operator
/// tier and a tier with the operator's custom resource that waits for it.
fn fleet(root: &Path) -> std::path::PathBuf {
    let fleet = root.join("fleet");
    sync(&fleet, "clusters/prod");
    let infra_ks = |name: &str, path: &str, extra: &str| {
        ks(name, "flux-system", path, extra).replace(
            "name: flux-system\n    namespace",
            "name: infra\n    namespace",
        )
    };
    write(
        &fleet,
        "clusters/prod/infra.yaml",
        &format!(
            "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: infra
  namespace: flux-system
spec:
  interval: 1h
  url: https://github.com/example/infra.git
  ref:
    branch: main
---
{}---
{}",
            infra_ks("controllers", "./controllers", ""),
            infra_ks(
                "configs",
                "./configs",
                "  dependsOn:\n    - name: controllers\n"
            ),
        ),
    );
    let infra = root.join("infra");
    write(
        &infra,
        "controllers/cm.yaml",
        &configmap("operator-settings"),
    );
    write(
        &infra,
        "configs/widget.yaml",
        "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: default
spec: {}
",
    );
    write(&infra, "ignored/broken.yaml", "kind: [\n");
    write(&infra, ".sourceignore", "ignored/\n");
    fleet
}

fn run_sources(
    root: &Path,
    sources: &[String],
) -> Result<Outcome, conformance::check::SessionError> {
    check(&CheckOptions {
        run: conformance::session::RunOptions {
            sources: sources.to_vec(),
            ..conformance::session::RunOptions::at(root.to_path_buf())
        },
        clusters: vec![],
        base: None,
        baseline: None,
    })
}

use conformance::check::Outcome;

/// The fleet checked with the infra checkout mapped by its URL.
fn run_with_infra(dir: &Path, fleet: &Path) -> Outcome {
    let infra = dir.join("infra");
    run_sources(
        fleet,
        &[format!(
            "https://github.com/example/infra={}",
            infra.display()
        )],
    )
    .unwrap()
}

fn state<'o>(outcome: &'o Outcome, name: &str) -> &'o TierState {
    &outcome.model.clusters[0].tiers[&TierId::new("flux-system", name)].state
}

#[test]
fn an_unmapped_source_is_not_checked_and_says_which_flag_maps_it() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet(dir.path());
    let outcome = run_sources(&fleet, &[]).unwrap();
    let TierState::NotChecked(why) = state(&outcome, "configs") else {
        panic!("{:?}", state(&outcome, "configs"));
    };
    assert!(why.contains("another git repository"), "{why}");
    assert!(
        why.contains("--source https://github.com/example/infra.git=DIR"),
        "{why}"
    );
}

#[test]
fn a_checkout_mapped_by_url_is_built_and_its_findings_name_the_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet(dir.path());
    let infra = dir.path().join("infra");
    let outcome = run_with_infra(dir.path(), &fleet);
    assert!(
        matches!(state(&outcome, "controllers"), TierState::Rendered(_)),
        "{:?}",
        state(&outcome, "controllers")
    );
    // The Widget has no CRD anywhere: found in the other checkout, and
    // its place says so.
    let widget = outcome
        .findings
        .iter()
        .find(|f| f.rule().as_str() == "crd-unavailable")
        .unwrap_or_else(|| panic!("{}", all(&outcome)));
    assert_eq!(
        widget.at().unwrap().file,
        "@infra/configs/widget.yaml",
        "{}",
        all(&outcome)
    );
    assert_eq!(
        outcome.model.checkouts,
        vec![("@infra".to_string(), infra.canonicalize().unwrap())]
    );
    assert!(
        outcome
            .model
            .notes
            .iter()
            .any(|n| n.contains("GitRepository/flux-system/infra") && n.contains("@infra")),
        "{:?}",
        outcome.model.notes
    );
    // The checkout's own .sourceignore leaves its broken file out.
    assert!(!all(&outcome).contains("broken.yaml"), "{}", all(&outcome));
}

#[test]
fn a_checkout_mapped_by_name_or_in_conformance_yaml_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet(dir.path());
    let infra = dir.path().join("infra");
    let by_name = run_sources(
        &fleet,
        &[format!(
            "GitRepository/flux-system/infra={}",
            infra.display()
        )],
    )
    .unwrap();
    assert!(matches!(state(&by_name, "configs"), TierState::Rendered(_)));
    write(
        &fleet,
        "conformance.yaml",
        "sources:\n  - url: https://github.com/example/infra\n    dir: ../infra\n",
    );
    let configured = run_sources(&fleet, &[]).unwrap();
    assert!(matches!(
        state(&configured, "configs"),
        TierState::Rendered(_)
    ));
    assert_eq!(configured.model.checkouts[0].0, "@infra");
}

#[test]
fn the_fleet_ignore_rules_do_not_reach_into_another_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet(dir.path());
    // Everything but clusters/ is left out of the fleet's artifact; the
    // infra checkout is another artifact, with its own rules.
    write(&fleet, ".sourceignore", "/*\n!/clusters/\n");
    let outcome = run_with_infra(dir.path(), &fleet);
    assert!(
        matches!(state(&outcome, "configs"), TierState::Rendered(_)),
        "{:?}",
        state(&outcome, "configs")
    );
}

#[test]
fn bad_mappings_are_refused_naming_the_flag_or_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet(dir.path());
    for (arg, says) in [
        ("no-equals-sign", "expected REF=DIR"),
        (
            "gitrepository/flux-system/infra=../infra",
            "spelt as Flux spells it",
        ),
        (
            "GitRepository/flux-system/infra=/nonexistent/x",
            "cannot be read",
        ),
    ] {
        let err = run_sources(&fleet, &[arg.to_string()])
            .err()
            .unwrap()
            .to_string();
        assert!(err.starts_with("--source "), "{arg}: {err}");
        assert!(err.contains(says), "{arg}: {err}");
    }
    write(&fleet, "README.md", "a file\n");
    write(
        &fleet,
        "conformance.yaml",
        "sources:\n  - kind: GitRepository\n    name: infra\n    dir: README.md\n",
    );
    let err = run_sources(&fleet, &[]).err().unwrap().to_string();
    assert!(err.contains("conformance.yaml:4"), "{err}");
    assert!(err.contains("not a directory"), "{err}");
    write(
        &fleet,
        "conformance.yaml",
        "sources:\n  - kind: GitRepository\n    name: infra\n    path: clusters\n    dir: ../infra\n",
    );
    let err = run_sources(&fleet, &[]).err().unwrap().to_string();
    assert!(err.contains("conformance.yaml:2"), "{err}");
    assert!(err.contains("one of the two"), "{err}");
}

#[test]
fn a_checkout_several_sources_map_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet(dir.path());
    let infra = dir.path().join("infra");
    let outcome = run_sources(
        &fleet,
        &[
            format!("https://github.com/example/infra={}", infra.display()),
            format!("GitRepository/flux-system/infra={}", infra.display()),
            format!("GitRepository/other={}", infra.display()),
        ],
    )
    .unwrap();
    assert_eq!(
        outcome.model.checkouts.len(),
        1,
        "{:?}",
        outcome.model.checkouts
    );
}
