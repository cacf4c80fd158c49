//! A Flux Kustomization that no build applies but a script does (`kubectl
//! apply -f clusters/$CLUSTER/infra.yaml` after `flux bootstrap --path
//! clusters/base`): named with the step that applies it and the line of
//! conformance.yaml that checks it, never listed as applied by nothing.

use super::*;

fn platform(root: &Path) {
    sync(root, "clusters/base");
    write(
        root,
        "clusters/east/infra.yaml",
        &ks("infrastructure", "flux-system", "./infra/east", ""),
    );
    write(
        root,
        "infra/east/ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ingress\n",
    );
    // A file nothing applies at all stays in the plain list.
    write(
        root,
        "archive/old.yaml",
        &ks("old", "flux-system", "./infra/east", ""),
    );
    write(
        root,
        "utils/add-cluster.sh",
        "#!/bin/bash\nCLUSTER_NAME=$1\nflux bootstrap github --owner=x --repository=y --path=clusters/base\nkubectl apply -f clusters/$CLUSTER_NAME/infra.yaml\n",
    );
}

#[test]
fn a_kustomization_a_script_applies_by_hand_is_named_with_the_step_and_the_line_that_checks_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    platform(root);
    let outcome = run(root);
    let by: Vec<(&str, Option<String>)> = outcome
        .model
        .unreferenced
        .iter()
        .map(|u| {
            (
                u.at.file.as_str(),
                u.applied_by.as_ref().map(ToString::to_string),
            )
        })
        .collect();
    assert_eq!(
        by,
        [
            ("archive/old.yaml", None),
            (
                "clusters/east/infra.yaml",
                Some("utils/add-cluster.sh:4".to_string())
            ),
        ]
    );
    let notes = &outcome.model.notes;
    let by_hand = notes
        .iter()
        .find(|n| n.contains("applied by hand"))
        .unwrap_or_else(|| panic!("{notes:?}"));
    assert!(
        by_hand.contains(
            "clusters/east/infra.yaml:1 (flux-system/infrastructure) by utils/add-cluster.sh:4"
        ) && by_hand.contains("`clusters: {east: {entry: clusters/east}}`"),
        "{by_hand}"
    );
    let plain = notes
        .iter()
        .find(|n| n.contains("that no cluster applies"))
        .unwrap_or_else(|| panic!("{notes:?}"));
    assert!(
        plain.contains("archive/old.yaml:1") && !plain.contains("clusters/east"),
        "{plain}"
    );

    // The line the note gives checks it.
    write(
        root,
        "conformance.yaml",
        "clusters:\n  east:\n    entry: clusters/east\n",
    );
    let declared = run(root);
    let east = declared
        .model
        .clusters
        .iter()
        .find(|c| c.name == "east")
        .unwrap_or_else(|| panic!("{:?}", declared.model.notes));
    let tier = &east.tiers[&TierId::new("flux-system", "infrastructure")];
    assert!(
        matches!(&tier.state, TierState::Rendered(o) if o.len() == 1),
        "{}",
        all(&declared)
    );
    assert!(
        !declared
            .model
            .unreferenced
            .iter()
            .any(|u| u.at.file == "clusters/east/infra.yaml"),
        "{:?}",
        declared.model.unreferenced
    );
}
