//! Adopting the check on a repository that already has findings (issue
//! 50): the baseline (only new findings fail), the first screen (each
//! cause once, the roots that block most first, GitHub's annotation
//! limits), colour, the graph in DOT, and running below the git root.

#![allow(clippy::unwrap_used)] // a test that cannot write its repository should panic

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{ks, sync, write};

fn conformance(args: &[&str]) -> Output {
    conformance_in(None, args, &[])
}

fn conformance_in(dir: Option<&Path>, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_conformance"));
    cmd.args(args);
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run conformance")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A cluster whose tiers each depend on a Kustomization that does not
/// exist: `n` dependency-missing errors, one per tier, no shared cause.
fn repo_with_missing_dependencies(root: &Path, n: usize) {
    sync(root, "clusters/prod");
    let mut tiers = String::new();
    for i in 0..n {
        write(
            root,
            &format!("app{i}/cm.yaml"),
            &crate::support::configmap(&format!("c{i}")),
        );
        tiers.push_str(&ks(
            &format!("app{i}"),
            "flux-system",
            &format!("./app{i}"),
            &format!("  dependsOn:\n    - name: missing{i}\n"),
        ));
        tiers.push_str("---\n");
    }
    write(root, "clusters/prod/tiers.yaml", &tiers);
}

/// Writes the baseline of `root`'s findings to `root/accepted.yaml`.
fn accept(root: &Path) -> PathBuf {
    let file = root.join("accepted.yaml");
    let out = conformance(&[
        "baseline",
        "--repo",
        root.to_str().unwrap(),
        "--file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    file
}

/// `check --baseline FILE` on `root`.
fn check_against(root: &Path, file: &Path) -> Output {
    conformance(&[
        "check",
        "--repo",
        root.to_str().unwrap(),
        "--baseline",
        file.to_str().unwrap(),
    ])
}

#[test]
fn a_baseline_accepts_todays_findings_and_fails_only_on_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo_with_missing_dependencies(root, 3);
    let repo = root.to_str().unwrap();
    // Without a baseline: three errors, exit 1.
    let out = conformance(&["check", "--repo", repo]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    let out = conformance(&["baseline", "--repo", repo]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let file = root.join("conformance-baseline.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("# Findings accepted"), "{text}");
    assert_eq!(text.matches("fingerprint:").count(), 3, "{text}");
    assert!(
        stderr(&out).contains("3 findings (3 errors, 0 warnings"),
        "{}",
        stderr(&out)
    );

    let baseline = file.to_str().unwrap();
    let out = check_against(root, &file);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let report = stdout(&out);
    assert!(
        report.starts_with("baseline: 3 findings accepted by "),
        "{report}"
    );
    assert!(!report.contains("error[dependency-missing]"), "{report}");
    assert!(report.contains(", 3 in the baseline"), "{report}");

    // Lines moved above a finding do not make it new.
    let tiers = std::fs::read_to_string(root.join("clusters/prod/tiers.yaml")).unwrap();
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!("# a comment\n# and another\n{tiers}"),
    );
    let out = check_against(root, &file);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // One new error fails the run, and it is the only one shown.
    let tiers = std::fs::read_to_string(root.join("clusters/prod/tiers.yaml")).unwrap();
    write(root, "new/cm.yaml", &crate::support::configmap("new"));
    write(
        root,
        "clusters/prod/tiers.yaml",
        &format!(
            "{tiers}{}",
            ks(
                "new",
                "flux-system",
                "./new",
                "  dependsOn:\n    - name: nowhere\n"
            )
        ),
    );
    let out = conformance(&[
        "check",
        "--repo",
        repo,
        "--baseline",
        baseline,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["errors"], 1);
    assert_eq!(doc["summary"]["baselined"], 3);
    assert_eq!(doc["baseline"]["accepted"], 3);
    let new: Vec<&serde_json::Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["baselined"] == false)
        .collect();
    assert_eq!(new.len(), 1);
    assert_eq!(new[0]["kustomization"], "new");
    // SARIF says which results are new.
    let out = conformance(&[
        "check",
        "--repo",
        repo,
        "--baseline",
        baseline,
        "--format",
        "sarif",
    ]);
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let states: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["baselineState"].as_str().unwrap())
        .collect();
    assert_eq!(
        states.iter().filter(|s| **s == "new").count(),
        1,
        "{states:?}"
    );
    assert_eq!(states.iter().filter(|s| **s == "unchanged").count(), 3);
}

#[test]
fn a_fixed_finding_leaves_a_gone_entry_that_the_report_names() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo_with_missing_dependencies(root, 2);
    let file = accept(root);
    // Fix one: app1 no longer depends on what does not exist.
    let tiers = std::fs::read_to_string(root.join("clusters/prod/tiers.yaml")).unwrap();
    write(
        root,
        "clusters/prod/tiers.yaml",
        &tiers.replace("  dependsOn:\n    - name: missing1\n", ""),
    );
    let out = check_against(root, &file);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("1 of its entries no longer occurs (fixed: `conformance baseline` writes the file again without it)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn an_accepted_render_failure_says_that_what_it_would_apply_is_not_seen() {
    // A tier that does not build applies Kustomizations nobody checks: once
    // its render-failed error is accepted, a new error inside them cannot
    // show, and the baseline line says so.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(
        root,
        "apps/kustomization.yaml",
        "resources:\n  - web.yaml\n  - missing.yaml\n",
    );
    write(
        root,
        "apps/web.yaml",
        &ks("web", "flux-system", "./web", ""),
    );
    let file = accept(root);
    let out = check_against(root, &file);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("1 of them is a Kustomization that does not build (apps): what it would apply is not built, so a new error in it cannot show until it builds"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_file_that_is_not_a_baseline_is_refused_with_its_line_and_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo_with_missing_dependencies(root, 1);
    let repo = root.to_str().unwrap();
    let other = root.join("values.yaml");
    std::fs::write(&other, "replicas: 3\nimage: nginx\n").unwrap();
    // As a baseline to read: exit 2, the file and the cause.
    let out = conformance(&[
        "check",
        "--repo",
        repo,
        "--baseline",
        other.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("values.yaml"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a conformance baseline"),
        "{}",
        stderr(&out)
    );
    // As a baseline to write: refused, the file untouched.
    let out = conformance(&[
        "baseline",
        "--repo",
        repo,
        "--file",
        other.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not replaced"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "replicas: 3\nimage: nginx\n"
    );
    // A baseline with a bad entry names its line.
    let bad = root.join("bad.yaml");
    std::fs::write(
        &bad,
        "baseline: 1\nfindings:\n  - rule: x\n    fingerprint: [1]\n",
    )
    .unwrap();
    let out = conformance(&["check", "--repo", repo, "--baseline", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.yaml:"), "{}", stderr(&out));
    // A missing one says how to make one.
    let out = conformance(&["check", "--repo", repo, "--baseline", "/nonexistent/b.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`conformance baseline` writes one"),
        "{}",
        stderr(&out)
    );
}

/// A root that blocks two tiers comes before one that blocks none, even
/// when report order (Kustomization name) puts it later.
#[test]
fn the_root_that_blocks_most_comes_first() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    for name in ["aaa", "zzz", "c1", "c2", "c3"] {
        write(
            root,
            &format!("{name}/cm.yaml"),
            &crate::support::configmap(name),
        );
    }
    let tiers = [
        ks(
            "aaa",
            "flux-system",
            "./aaa",
            "  dependsOn:\n    - name: typo-a\n",
        ),
        ks("zzz", "flux-system", "./zzz", "  suspend: true\n"),
        ks(
            "c1",
            "flux-system",
            "./c1",
            "  dependsOn:\n    - name: zzz\n",
        ),
        ks(
            "c2",
            "flux-system",
            "./c2",
            "  dependsOn:\n    - name: c1\n",
        ),
        ks(
            "c3",
            "flux-system",
            "./c3",
            "  dependsOn:\n    - name: c2\n",
        ),
    ]
    .join("---\n");
    write(root, "clusters/prod/tiers.yaml", &tiers);
    let out = conformance(&["check", "--repo", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let report = stdout(&out);
    let c1 = report
        .find("error[dependency-suspended]: prod/c1")
        .expect("c1's block");
    let aaa = report
        .find("error[dependency-missing]: prod/aaa")
        .expect("aaa's block");
    assert!(c1 < aaa, "{report}");
    assert!(
        report.contains("blocks 2 Kustomizations on a cold start"),
        "{report}"
    );
}

/// GitHub shows ten annotations of a level per step: at most ten error
/// lines, the last naming the rest, the most important first, each line
/// bounded.
#[test]
fn github_annotations_stay_within_what_github_shows() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo_with_missing_dependencies(root, 14);
    let out = conformance(&[
        "check",
        "--repo",
        root.to_str().unwrap(),
        "--format",
        "github",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(errors.len(), 10, "{text}");
    let last = errors.last().unwrap();
    assert!(
        last.contains("title=conformance%3A 5 more error blocks"),
        "{last}"
    );
    assert!(last.contains("GitHub shows 10 errors per step"), "{last}");
    assert!(text.lines().all(|l| l.chars().count() < 4000), "{text}");
    assert!(
        text.trim_end()
            .ends_with("conformance: 14 errors, 0 warnings, 0 waived"),
        "{text}"
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal_and_never_under_no_color() {
    let repo =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/incidents/dependson-typo/repo");
    let repo = repo.to_str().unwrap();
    let painted = conformance(&["check", "--repo", repo, "--color", "always"]);
    assert!(
        stdout(&painted).contains("\x1b[1;31merror\x1b[0m"),
        "{}",
        stdout(&painted)
    );
    // Not a terminal here: auto is plain, and so is NO_COLOR.
    let plain = conformance_in(None, &["check", "--repo", repo], &[("NO_COLOR", "1")]);
    assert!(!stdout(&plain).contains('\x1b'));
    let plain = conformance(&["check", "--repo", repo, "--color", "never"]);
    assert!(!stdout(&plain).contains('\x1b'));
    // Other formats are never painted.
    let json = conformance(&[
        "check", "--repo", repo, "--color", "always", "--format", "json",
    ]);
    assert!(!stdout(&json).contains("\\u001b"));
}

#[test]
fn graph_in_dot_marks_the_tiers_never_ready() {
    let repo =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/incidents/dependency-cycle/repo");
    let out = conformance(&["graph", "--repo", repo.to_str().unwrap(), "--format", "dot"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dot = stdout(&out);
    assert!(dot.starts_with("digraph \"prod\" {\n"), "{dot}");
    assert!(dot.trim_end().ends_with('}'), "{dot}");
    assert!(
        dot.contains("\"platform-config\" -> \"apps-vms\" [label=\"dependsOn\"];"),
        "{dot}"
    );
    assert!(dot.contains("color=red"), "{dot}");
    assert!(dot.contains("never Ready on a cold start"), "{dot}");
}

/// Run below the root of a git work tree, the check takes the root (Flux
/// builds from it) and says so; an explicit --repo is taken as given.
#[test]
fn below_the_git_root_the_root_is_checked_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sync(root, "clusters/prod");
    write(root, "apps/cm.yaml", &crate::support::configmap("a"));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let below: PathBuf = root.join("clusters/prod");
    let out = conformance_in(Some(&below), &["check"], &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("checking its root, as Flux builds it"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("checked 1 cluster (prod)"),
        "{}",
        stdout(&out)
    );
    // At the root itself: nothing said.
    let out = conformance_in(Some(root), &["check"], &[]);
    assert!(
        !stderr(&out).contains("checking its root"),
        "{}",
        stderr(&out)
    );
}
