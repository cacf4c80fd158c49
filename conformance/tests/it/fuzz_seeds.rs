//! Issue 26: the fuzz targets' seeds and every crash ever found
//! (`fuzz/seeds/<target>/`, committed), plus the YAML and kustomization
//! directories of `fixtures/` the way `fuzz/seed.sh` feeds them, replayed by
//! an ordinary `cargo test`: no nightly toolchain, and a crash found once
//! stays found. Each input must end without a panic (and, for the loader,
//! survive a round trip through JSON).

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Runs `target` on every input, on a thread with the stack the command
/// gives its workers (16 MiB, `session::worker_stacks`): the loader's
/// recursion at the nesting budget (256 levels) needs more than a test
/// thread's 2 MiB in a debug build.
fn replay(target: fn(&[u8]), inputs: Vec<(String, Vec<u8>)>) {
    let failed = std::thread::Builder::new()
        .stack_size(16 * 1024 * 1024)
        .spawn(move || {
            let mut failed = Vec::new();
            for (name, data) in &inputs {
                if std::panic::catch_unwind(|| target(data)).is_err() {
                    failed.push(name.clone());
                }
            }
            failed
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(failed.is_empty(), "panicked on: {failed:?}");
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml")
            && path.metadata().is_ok_and(|m| m.len() < 64 * 1024)
        {
            out.push(path);
        }
    }
}

#[test]
fn the_loader_seeds_and_fixtures_never_panic() {
    let mut inputs: Vec<(String, Vec<u8>)> = files_in(&workspace().join("fuzz/seeds/loader"))
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    assert!(inputs.len() >= 10, "the committed seeds are there");
    let mut fixtures = Vec::new();
    yaml_files(&workspace().join("fixtures"), &mut fixtures);
    fixtures.sort();
    inputs.extend(
        fixtures
            .into_iter()
            .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())),
    );
    replay(conformance::fuzzing::loader, inputs);
}

#[test]
fn the_renderer_seeds_and_fixture_directories_never_panic() {
    let mut inputs: Vec<(String, Vec<u8>)> = files_in(&workspace().join("fuzz/seeds/renderer"))
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    assert!(inputs.len() >= 10, "the committed seeds are there");
    // Each kustomization directory of fixtures/, its YAML files as `app/…`.
    let mut kustomizations = Vec::new();
    yaml_files(&workspace().join("fixtures/kustomize"), &mut kustomizations);
    kustomizations.retain(|p| p.file_name().is_some_and(|n| n == "kustomization.yaml"));
    kustomizations.sort();
    for k in kustomizations {
        let dir = k.parent().unwrap();
        let mut data = Vec::new();
        for f in files_in(dir)
            .into_iter()
            .filter(|f| f.extension().is_some_and(|e| e == "yaml"))
        {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            data.extend_from_slice(format!("app/{name}\x01").as_bytes());
            data.extend(std::fs::read(&f).unwrap());
            data.push(0);
        }
        inputs.push((dir.display().to_string(), data));
    }
    replay(conformance::fuzzing::renderer, inputs);
}
