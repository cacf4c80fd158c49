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
        "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {name}
  namespace: {namespace}
spec:
  interval: 10m
  path: {path}
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
{extra}"
    )
}

pub fn sync(root: &Path, cluster_dir: &str) {
    write(
        root,
        &format!("{cluster_dir}/flux-system/gotk-sync.yaml"),
        &format!(
            "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m
  url: https://github.com/example/fleet.git
  ref:
    branch: main
---
{}",
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
            "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: {name}
  namespace: {namespace}
spec:
  interval: 1h
  url: https://charts.example.com/{name}
"
        ),
    );
}

pub fn configmap(name: &str) -> String {
    format!(
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: default
data:
  a: b
"
    )
}

/// A Flux Kustomization like [`ks`] whose sourceRef is `kind/name` (in the
/// Kustomization's namespace).
pub fn ks_from(name: &str, path: &str, kind: &str, source: &str) -> String {
    ks(name, "flux-system", path, "").replace(
        "\
kind: GitRepository
    name: flux-system
    namespace: flux-system",
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
        baseline: None,
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
        baseline: None,
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
