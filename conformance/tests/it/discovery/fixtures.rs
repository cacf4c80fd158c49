//! `fixtures/discovery/`: one small repository per way discovery went wrong
//! on a real checkout. Each is checked three ways (no `.git`, a `.git`
//! whose remote is the URL in its `remote` file, a `.git` whose remote is a
//! GitLab mirror) and must give, every time, the clusters, tiers,
//! unreferenced Kustomizations and findings of its `expected.txt`.
//! `BLESS=1` rewrites `expected.txt` from the run without `.git`.

use conformance::check::Outcome;
use std::fmt::Write as _;

use super::*;

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/discovery")
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// What must not depend on the checkout: clusters, their tiers and states,
/// the unreferenced Kustomizations, the findings.
fn summary(outcome: &Outcome) -> String {
    let mut out = String::new();
    for cluster in &outcome.model.clusters {
        writeln!(out, "cluster {} at {}", cluster.name, cluster.entry.path()).unwrap();
        for (id, tier) in &cluster.tiers {
            let state = match &tier.state {
                TierState::Rendered(objects) => format!("rendered, {} objects", objects.len()),
                TierState::RenderFailed(_) => "render failed".to_string(),
                TierState::NotChecked(why) => format!("not checked: {why}"),
            };
            writeln!(out, "  {}/{}: {state}", id.namespace, id.name).unwrap();
        }
    }
    for u in &outcome.model.unreferenced {
        writeln!(out, "unreferenced {}:{} {}", u.at.file, u.at.line, u.name).unwrap();
    }
    let mut findings: Vec<String> = outcome
        .findings
        .iter()
        .map(|f| {
            format!(
                "finding {} {} {}: {}",
                f.rule().as_str(),
                f.cluster(),
                f.kustomization(),
                f.message()
            )
        })
        .collect();
    findings.sort();
    for f in findings {
        writeln!(out, "{f}").unwrap();
    }
    out
}

#[test]
fn every_discovery_fixture_gives_the_same_clusters_however_it_is_checked_out() {
    let mut cases: Vec<_> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 6, "{cases:?}");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let url = std::fs::read_to_string(case.join("remote"))
            .unwrap_or_else(|_| panic!("{name}: no remote file"));
        let mut runs = Vec::new();
        for remote in [
            None,
            Some(url.trim()),
            Some("https://gitlab.com/mirror/copy.git"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            copy_tree(&case.join("repo"), dir.path());
            if let Some(remote) = remote {
                git(dir.path(), &["init", "-q"]);
                git(dir.path(), &["remote", "add", "origin", remote]);
            }
            runs.push((format!("remote {remote:?}"), summary(&run(dir.path()))));
        }
        let expected_file = case.join("expected.txt");
        if std::env::var_os("BLESS").is_some() {
            std::fs::write(&expected_file, &runs[0].1).unwrap();
        }
        let expected = std::fs::read_to_string(&expected_file).unwrap_or_default();
        for (how, got) in &runs {
            if *got != expected {
                failures.push(format!(
                    "\
{name}, {how}:
--- expected
{expected}--- got
{got}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
