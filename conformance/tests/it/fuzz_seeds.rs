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

#[test]
fn the_script_reader_seeds_and_fixture_scripts_never_panic() {
    let mut inputs: Vec<(String, Vec<u8>)> = files_in(&workspace().join("fuzz/seeds/scripts"))
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    assert!(inputs.len() >= 10, "the committed seeds are there");
    // Every shell script of fixtures/, as the repository's bootstrap.
    fn scripts(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                scripts(&path, out);
            } else if path.extension().is_some_and(|e| e == "sh" || e == "just") {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    scripts(&workspace().join("fixtures"), &mut found);
    found.sort();
    inputs.extend(
        found
            .into_iter()
            .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())),
    );
    replay(conformance::fuzzing::scripts, inputs);
}

mod script_props {
    use proptest::prelude::*;

    /// Inputs dense in what the shell grammar and the readers care about.
    fn shell_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("kubectl apply -f ".to_string()),
                Just("kubectl apply -k ".to_string()),
                Just("helm upgrade --install a b ".to_string()),
                Just("helmfile -f h.yaml sync".to_string()),
                Just("<<EOF\n".to_string()),
                Just("\nEOF\n".to_string()),
                Just("$(".to_string()),
                Just("${".to_string()),
                Just("{{".to_string()),
                Just("}}".to_string()),
                Just(")".to_string()),
                Just("}".to_string()),
                Just("'".to_string()),
                Just("\"".to_string()),
                Just("\\".to_string()),
                Just(" | ".to_string()),
                Just(" && ".to_string()),
                Just(";".to_string()),
                Just("\n".to_string()),
                Just("for x in a b; do ".to_string()),
                Just("done".to_string()),
                Just("f() { ".to_string()),
                Just("if ".to_string()),
                Just("then ".to_string()),
                Just("fi".to_string()),
                Just("$1".to_string()),
                "[a-z/._-]{0,6}",
                any::<char>().prop_map(|c| c.to_string()),
            ],
            0..40,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        #[test]
        fn the_script_reader_never_panics(input in shell_text()) {
            conformance::fuzzing::scripts(input.as_bytes());
            let taskfile = format!("\
Taskfile.yml\x01tasks:
  a:
    cmds:
      - {input:?}
");
            conformance::fuzzing::scripts(taskfile.as_bytes());
            let justfile = format!("justfile\x01up:\n    {}\n", input.replace('\n', "\n    "));
            conformance::fuzzing::scripts(justfile.as_bytes());
        }
    }
}
