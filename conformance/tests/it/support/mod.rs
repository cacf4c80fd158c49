//! Small repositories written by tests: the helpers every test file shares.

#![allow(dead_code, clippy::unwrap_used)] // each test file uses a subset

use std::path::Path;

use conformance::check::{CheckOptions, Outcome, check};

pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub fn ks(name: &str, namespace: &str, path: &str, extra: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  interval: 10m\n  path: {path}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n    namespace: flux-system\n{extra}"
    )
}

pub fn sync(root: &Path, cluster_dir: &str) {
    write(
        root,
        &format!("{cluster_dir}/flux-system/gotk-sync.yaml"),
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  url: https://github.com/example/fleet.git\n  ref:\n    branch: main\n---\n{}",
            ks(
                "flux-system",
                "flux-system",
                &format!("./{cluster_dir}"),
                ""
            )
        ),
    );
}

/// A HelmRepository `namespace/name` in `dir` (a directory the cluster's
/// flux-system tier builds), for charts the fixtures' HelmReleases name.
pub fn helm_repository(root: &Path, dir: &str, namespace: &str, name: &str) {
    write(
        root,
        &format!("{dir}/helmrepository-{namespace}-{name}.yaml"),
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  interval: 1h\n  url: https://charts.example.com/{name}\n"
        ),
    );
}

pub fn configmap(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  a: b\n"
    )
}

/// A Flux Kustomization like [`ks`] whose sourceRef is `kind/name` (in the
/// Kustomization's namespace).
pub fn ks_from(name: &str, path: &str, kind: &str, source: &str) -> String {
    ks(name, "flux-system", path, "").replace(
        "kind: GitRepository\n    name: flux-system\n    namespace: flux-system",
        &format!("kind: {kind}\n    name: {source}"),
    )
}

pub fn cluster_names(outcome: &Outcome) -> Vec<&str> {
    outcome
        .model
        .clusters
        .iter()
        .map(|c| c.name.as_str())
        .collect()
}

pub fn run(root: &Path) -> Outcome {
    check(&CheckOptions {
        run: conformance::session::RunOptions::at(root.to_path_buf()),
        clusters: vec![],
        base: None,
    })
    .unwrap()
}

pub fn rules(outcome: &Outcome) -> Vec<(&str, &str, &str)> {
    outcome
        .findings
        .iter()
        .map(|f| (f.rule().as_str(), f.cluster(), f.kustomization()))
        .collect()
}

pub fn run_result(root: &Path) -> Result<Outcome, conformance::check::SessionError> {
    run_with_entries(root, &[])
}

/// A check with `--entry DIR` for each of `entries`.
pub fn run_with_entries(
    root: &Path,
    entries: &[&str],
) -> Result<Outcome, conformance::check::SessionError> {
    check(&CheckOptions {
        run: conformance::session::RunOptions {
            entries: entries.iter().map(|e| e.to_string()).collect(),
            ..conformance::session::RunOptions::at(root.to_path_buf())
        },
        clusters: vec![],
        base: None,
    })
}

/// Every finding on a line (rule, severity, tier, message), for assertion
/// messages.
pub fn all(outcome: &Outcome) -> String {
    outcome
        .findings
        .iter()
        .map(|f| {
            format!(
                "{} [{}] {}: {}",
                f.rule(),
                f.severity().as_str(),
                f.kustomization(),
                f.message()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
