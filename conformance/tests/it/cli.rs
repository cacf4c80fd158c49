//! The command-line contract: exit statuses 0/1/2, the JSON document, the
//! canonical graph, explain, and clear errors for bad input.

#![allow(clippy::unwrap_used)] // a test helper that cannot copy its fixture should panic

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture(rel: &str) -> PathBuf {
    workspace().join("fixtures").join(rel)
}

fn conformance(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(args)
        .output()
        .expect("run conformance")
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is not JSON ({err}):\n{}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Copies a fixture tree so a test can break it without touching the original.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn reference_platform_passes_with_exit_0_and_contract_json() {
    let repo = fixture("reference-platform");
    let out = conformance(&[
        "check",
        "--repo",
        repo.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["repo"], repo.to_str().unwrap());
    assert_eq!(doc["summary"]["errors"], 0);
    assert_eq!(doc["summary"]["warnings"], 0);
    assert_eq!(doc["findings"].as_array().unwrap().len(), 0);
    let clusters: Vec<&str> = doc["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(clusters, ["dev", "prod"]);
    let prod = &doc["clusters"][1];
    assert_eq!(prod["entry"], "clusters/prod");
    assert_eq!(prod["kustomizations"].as_array().unwrap().len(), 10);
    assert!(
        prod["kustomizations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k["state"] == "rendered")
    );
}

#[test]
fn a_finding_exits_1_and_follows_the_json_contract() {
    let repo = fixture("incidents/dependson-typo/repo");
    let out = conformance(&[
        "check",
        "--repo",
        repo.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    let findings = doc["findings"].as_array().unwrap();
    let rules: Vec<&str> = findings
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["dependency-missing", "unresolved-reference"]);
    let f = &findings[0];
    assert_eq!(f["severity"], "error");
    assert_eq!(f["cluster"], "prod");
    assert_eq!(f["kustomization"], "apps-vms");
    assert!(f["object"].is_null());
    assert_eq!(f["file"], "clusters/prod/tiers.yaml");
    assert_eq!(f["line"], 46);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("platform-config-cdx")
    );
    assert_eq!(doc["summary"]["errors"], 2);
    assert_eq!(findings[1]["object"], "DataVolume/vms/unifi-root");
}

#[test]
fn human_report_names_place_why_and_fix() {
    let repo = fixture("incidents/dependson-typo/repo");
    let out = conformance(&["check", "--repo", repo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error[dependency-missing]: prod/apps-vms:"),
        "{text}"
    );
    assert!(text.contains("--> clusters/prod/tiers.yaml:46"), "{text}");
    assert!(
        text.contains("46 |     - name: platform-config-cdx"),
        "{text}"
    );
    assert!(text.contains("= why: "), "{text}");
    assert!(
        text.contains("did you mean `platform-config-cdi`?"),
        "{text}"
    );
    assert!(
        text.contains("checked 1 cluster (prod), 4 Kustomizations"),
        "{text}"
    );
}

#[test]
fn missing_directory_exits_2_with_one_line() {
    let out = conformance(&["check", "--repo", "/nonexistent/conformance-repo"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("/nonexistent/conformance-repo: not a directory"),
        "{err}"
    );
}

#[test]
fn directory_without_flux_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("app.yaml"),
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
",
    )
    .unwrap();
    let out = conformance(&["check", "--repo", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no Flux cluster found"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn malformed_yaml_in_a_tier_is_render_failed_at_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("incidents/dependson-typo/fixed"), dir.path());
    std::fs::write(
        dir.path().join("apps-vms/datavolume.yaml"),
        "\
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: x
  labels: [a, b
spec: {}
",
    )
    .unwrap();
    let out = conformance(&[
        "check",
        "--repo",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{doc:#}");
    assert_eq!(findings[0]["rule"], "render-failed");
    assert_eq!(findings[0]["kustomization"], "apps-vms");
    assert_eq!(findings[0]["file"], "apps-vms/datavolume.yaml");
    assert!(findings[0]["line"].as_u64().unwrap() >= 5, "{doc:#}");
}

#[test]
fn malformed_yaml_in_the_cluster_directory_fails_the_sync_tier() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("incidents/dependson-typo/fixed"), dir.path());
    std::fs::write(
        dir.path().join("clusters/prod/tiers.yaml"),
        "\
kind: Kustomization
  bad: indent
",
    )
    .unwrap();
    let out = conformance(&[
        "check",
        "--repo",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    let f = &doc["findings"][0];
    assert_eq!(f["rule"], "render-failed");
    assert_eq!(f["kustomization"], "flux-system");
    assert_eq!(f["file"], "clusters/prod/tiers.yaml");
}

#[test]
fn unknown_format_is_a_usage_error() {
    let repo = fixture("reference-platform");
    let out = conformance(&[
        "check",
        "--repo",
        repo.to_str().unwrap(),
        "--format",
        "yaml",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ci_formats_github_junit_sarif() {
    let repo = fixture("incidents/dependson-typo/repo");
    let run = |format: &str| {
        let out = conformance(&[
            "check",
            "--repo",
            repo.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert_eq!(out.status.code(), Some(1), "{format}: {}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let github = run("github");
    assert!(
        github.starts_with("::error file=clusters/prod/tiers.yaml,line=46,title=dependency-missing (prod/apps-vms)::"),
        "{github}"
    );
    assert!(!github.lines().next().unwrap().contains('\n'));
    let junit = run("junit");
    assert!(junit.starts_with("<?xml"), "{junit}");
    assert!(junit.contains("<testcase classname=\"dependency-missing\" name=\"prod::dependency-missing::apps-vms\">"), "{junit}");
    assert_eq!(junit.matches("<failure ").count(), 2, "{junit}");
    // Issue 27: the root's counts are the sums of the suites' (test cases).
    let attr = |line: &str, name: &str| -> usize {
        let key = format!("{name}=\"");
        let at = line
            .find(&key)
            .unwrap_or_else(|| panic!("{name} in {line}"))
            + key.len();
        line[at..].split('"').next().unwrap().parse().unwrap()
    };
    let root = junit
        .lines()
        .find(|l| l.starts_with("<testsuites"))
        .unwrap();
    let suites: Vec<&str> = junit
        .lines()
        .filter(|l| l.trim_start().starts_with("<testsuite "))
        .collect();
    for name in ["tests", "failures", "skipped"] {
        let sum: usize = suites.iter().map(|l| attr(l, name)).sum();
        assert_eq!(attr(root, name), sum, "{name}: {root}");
    }
    assert_eq!(attr(root, "failures"), junit.matches("<failure ").count());
    assert_eq!(attr(root, "tests"), junit.matches("<testcase ").count());
    let sarif: serde_json::Value = serde_json::from_str(&run("sarif")).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["ruleId"], "dependency-missing");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        46
    );
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let index = results[0]["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[index]["id"], "dependency-missing");
}

#[test]
fn unknown_cluster_is_an_error_listing_the_clusters() {
    let repo = fixture("reference-platform");
    let out = conformance(&[
        "check",
        "--repo",
        repo.to_str().unwrap(),
        "--cluster",
        "staging",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("discovered: dev, prod"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn cluster_filter_limits_the_report() {
    let repo = fixture("incidents/dev-prod-graph-drift/repo");
    let out = conformance(&[
        "check",
        "--repo",
        repo.to_str().unwrap(),
        "--cluster",
        "dev",
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "parity findings are on prod only"
    );
    assert_eq!(json(&out)["clusters"].as_array().unwrap().len(), 1);
    let out = conformance(&[
        "check",
        "--repo",
        repo.to_str().unwrap(),
        "--cluster",
        "prod",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn graph_is_canonical_and_stable() {
    let repo = fixture("reference-platform");
    let a = conformance(&[
        "graph",
        "--repo",
        repo.to_str().unwrap(),
        "--cluster",
        "prod",
    ]);
    let b = conformance(&[
        "graph",
        "--repo",
        repo.to_str().unwrap(),
        "--cluster",
        "prod",
    ]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout);
    let text = String::from_utf8(a.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
    assert!(lines.contains(&"dependsOn flux-system/apps-vms -> flux-system/platform-config-cdi"));
    assert!(lines.contains(&"kustomization flux-system/platform-config wait=true prune=true"));
    let dev = conformance(&[
        "graph",
        "--repo",
        repo.to_str().unwrap(),
        "--cluster",
        "dev",
    ]);
    assert_eq!(dev.stdout, b.stdout, "dev and prod graphs are identical");
}

#[test]
fn explain_knows_every_implemented_rule() {
    for rule in [
        "render-failed",
        "dependency-missing",
        "dependency-cycle",
        "graph-parity",
    ] {
        let out = conformance(&["explain", rule]);
        assert_eq!(out.status.code(), Some(0), "{rule}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with(rule), "{text}");
        assert!(text.contains("Example: "), "{text}");
    }
    // Issue 27: a rule some of whose findings are warnings says so.
    let out = conformance(&["explain", "schema-violation"]);
    let heading = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        heading
            .starts_with("schema-violation (error; a warning for a field a CRD does not declare"),
        "{heading}"
    );
    // Issue 49: a remote base is a risk, a warning unless configured.
    let out = conformance(&["explain", "remote-base"]);
    let heading = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(heading.starts_with("remote-base (warning"), "{heading}");
    let out = conformance(&["explain", "no-such-rule"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("rules: render-failed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn native_renderer_needs_no_program_and_external_one_says_what_to_install() {
    let empty = tempfile::tempdir().unwrap();
    let repo = fixture("reference-platform");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_conformance"))
            .args(["check", "--repo", repo.to_str().unwrap()])
            .args(extra)
            .env("PATH", empty.path())
            .output()
            .unwrap()
    };
    let native = run(&[]);
    assert_eq!(native.status.code(), Some(0), "{}", stderr(&native));
    assert!(String::from_utf8_lossy(&native.stdout).contains("with native:"));
    let external = run(&["--renderer", "kustomize"]);
    assert_eq!(external.status.code(), Some(2));
    let err = stderr(&external);
    assert!(
        err.contains("install kustomize") && err.contains("kubectl"),
        "{err}"
    );
}

#[test]
fn invalid_config_exits_2_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("incidents/dependson-typo/fixed"), dir.path());
    std::fs::write(
        dir.path().join("conformance.yaml"),
        "\
catalog:
  preinstaled: [x.io]
",
    )
    .unwrap();
    let out = conformance(&["check", "--repo", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("conformance.yaml:2:") && err.contains("preinstaled"),
        "{err}"
    );
}

#[test]
fn active_waiver_reports_the_finding_as_waived_and_passes() {
    let repo = fixture("incidents/expired-waiver/repo");
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args([
            "check",
            "--format",
            "json",
            "--repo",
            repo.to_str().unwrap(),
        ])
        .env("CONFORMANCE_TODAY", "2026-06-30")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    let f = &doc["findings"][0];
    assert_eq!(f["rule"], "tier-order-script");
    assert_eq!(f["waived"]["expires"], "2026-06-30");
    assert_eq!(doc["summary"]["errors"], 0);
    assert_eq!(doc["summary"]["waived"], 1);
    let human = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["check", "--repo", repo.to_str().unwrap()])
        .env("CONFORMANCE_TODAY", "2026-06-30")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("waived[tier-order-script]"), "{text}");
    assert!(
        text.contains("= waived until 2026-06-30 (conformance.yaml): standup.sh is owned"),
        "{text}"
    );
    assert!(text.contains("0 errors, 0 warnings, 1 waived"), "{text}");
    // The day after, it counts again and the waiver is reported as expired.
    let later = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args([
            "check",
            "--format",
            "json",
            "--repo",
            repo.to_str().unwrap(),
        ])
        .env("CONFORMANCE_TODAY", "2026-07-01")
        .output()
        .unwrap();
    assert_eq!(later.status.code(), Some(1));
    let rules: Vec<String> = json(&later)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(rules, ["tier-order-script", "waiver-expired"]);
}

#[test]
fn stale_waiver_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("incidents/expired-waiver/fixed"), dir.path());
    std::fs::write(
        dir.path().join("conformance.yaml"),
        "\
waivers:
  - rule: graph-parity
    cluster: prod
    reason: drift during the migration
    expires: 2099-01-01
",
    )
    .unwrap();
    let out = conformance(&[
        "check",
        "--format",
        "json",
        "--repo",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let doc = json(&out);
    assert_eq!(doc["findings"][0]["rule"], "waiver-stale");
    assert_eq!(doc["findings"][0]["severity"], "warning");
    assert_eq!(doc["findings"][0]["file"], "conformance.yaml");
    assert_eq!(doc["findings"][0]["line"], 2);
}

#[test]
fn config_check_validates_and_names_line_and_key() {
    let ok = conformance(&[
        "config",
        "check",
        "--repo",
        fixture("reference-platform").to_str().unwrap(),
    ]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("conformance.yaml: ok"));
    let bad = conformance(&[
        "config",
        "check",
        "--repo",
        fixture("incidents/config-typo/repo").to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let err = stderr(&bad);
    assert!(
        err.contains("conformance.yaml:1: unknown field `polices`"),
        "{err}"
    );
    assert_eq!(err.matches("unknown field").count(), 1, "said once: {err}");
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("incidents/expired-waiver/fixed"), dir.path());
    std::fs::write(
        dir.path().join("conformance.yaml"),
        "\
parity:
  groups:
    - [prod, staging]
",
    )
    .unwrap();
    let unknown = conformance(&["config", "check", "--repo", dir.path().to_str().unwrap()]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("conformance.yaml:3: no cluster named `staging`"),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn base_revision_finds_objects_moved_under_prune() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "ci@example.com"]);
    git(&["config", "user.name", "ci"]);
    copy_tree(
        &fixture("incidents/storageprofile-moved-under-prune/base"),
        repo,
    );
    git(&["add", "-A"]);
    git(&["commit", "-qm", "profiles in platform-config"]);
    std::fs::remove_dir_all(repo.join("platform-config")).unwrap();
    std::fs::remove_dir_all(repo.join("clusters")).unwrap();
    copy_tree(
        &fixture("incidents/storageprofile-moved-under-prune/repo"),
        repo,
    );
    git(&["add", "-A"]);
    git(&["commit", "-qm", "move the profiles to platform-config-cdi"]);
    let out = conformance(&[
        "check",
        "--format",
        "json",
        "--repo",
        repo.to_str().unwrap(),
        "--base",
        "HEAD~1",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    let rules: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["prune-transient", "prune-transient"]);
    let without = conformance(&["check", "--repo", repo.to_str().unwrap()]);
    assert_eq!(
        without.status.code(),
        Some(0),
        "no base, nothing to compare"
    );
    let bad = conformance(&[
        "check",
        "--repo",
        repo.to_str().unwrap(),
        "--base",
        "no-such-rev",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("base revision"), "{}", stderr(&bad));
}

/// Every `conformance` command the GitHub Action runs uses flags the CLI
/// has: those on the command's line, and those its step gathers with
/// `set --` for `conformance check "$@"`; the scripts it runs exist.
#[test]
fn the_github_action_uses_flags_the_cli_has() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let action = std::fs::read_to_string(root.join("action.yml")).unwrap();
    let doc: serde_json::Value = serde_saphyr::from_str(&action).unwrap();
    assert_eq!(doc["runs"]["using"], "composite");
    let mut commands = 0;
    // Each step's script, and the scripts of action/ it runs (the check
    // itself is action/check.sh).
    let mut runs: Vec<String> = Vec::new();
    for step in doc["runs"]["steps"].as_array().unwrap() {
        let Some(run) = step["run"].as_str() else {
            continue;
        };
        runs.push(run.to_string());
        for script in run
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("\"$GITHUB_ACTION_PATH/"))
        {
            let script = script.trim_end_matches('"');
            assert!(root.join(script).is_file(), "the action runs {script}");
            runs.push(std::fs::read_to_string(root.join(script)).unwrap());
        }
    }
    for run in &runs {
        let run = run.as_str();
        let gathered: Vec<&str> = run
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("set -- ") || l.contains("then set -- "))
            .flat_map(|l| l.split_whitespace())
            .filter(|w| w.starts_with("--"))
            .collect();
        for line in run.lines() {
            let Some(at) = line.find("conformance ") else {
                continue;
            };
            let rest = &line[at + "conformance ".len()..];
            let sub = rest.split_whitespace().next().unwrap();
            if !["check", "diff", "build", "graph"].contains(&sub) {
                continue;
            }
            commands += 1;
            let help = conformance(&[sub, "--help"]);
            assert_eq!(help.status.code(), Some(0), "{sub}: {}", stderr(&help));
            let help = String::from_utf8_lossy(&help.stdout).to_string();
            let mut flags: Vec<&str> = rest
                .split_whitespace()
                .filter(|w| w.starts_with("--"))
                .collect();
            if sub == "check" {
                flags.extend(&gathered);
            }
            for flag in flags {
                let flag = flag.trim_matches(|c| c == '"' || c == ';');
                assert!(
                    help.contains(flag),
                    "`conformance {sub}` has no {flag}: {help}"
                );
            }
            for value in ["github", "sarif", "json", "markdown", "junit"] {
                if rest.contains(&format!("--format {value}"))
                    || (sub == "check" && run.contains(&format!("\"{value}=")))
                {
                    assert!(
                        help.contains(value),
                        "`conformance {sub}` has no format {value}"
                    );
                }
            }
        }
    }
    assert!(commands >= 2, "{commands}");
}

/// Issue 26: progress is for a person at a terminal. When stderr is a pipe
/// (CI, a test, `2> file`) nothing but real messages reach it, in every
/// format.
#[test]
fn no_progress_when_stderr_is_not_a_terminal() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/reference-platform");
    for format in ["human", "json"] {
        let out = conformance(&[
            "check",
            "--repo",
            repo.to_str().unwrap(),
            "--format",
            format,
        ]);
        let err = stderr(&out);
        assert!(
            !err.contains('\r') && !err.contains("building Kustomizations"),
            "{format}: {err:?}"
        );
    }
}

/// Issue 27: one run writes every format asked for (`--output
/// FORMAT=PATH`), each the same report that format prints on its own.
#[test]
fn one_run_writes_every_format_it_is_asked_for() {
    let repo = fixture("incidents/dependson-typo/repo");
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let out = conformance(&[
        "check",
        "--repo",
        repo.to_str().unwrap(),
        "--format",
        "github",
        "--output",
        &format!("sarif={}", path("report.sarif")),
        "--output",
        &format!("json={}", path("report.json")),
        "--output",
        &format!("junit={}", path("report.xml")),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("::error "));
    for (format, file) in [
        ("sarif", "report.sarif"),
        ("json", "report.json"),
        ("junit", "report.xml"),
    ] {
        let alone = conformance(&[
            "check",
            "--repo",
            repo.to_str().unwrap(),
            "--format",
            format,
        ]);
        let written = std::fs::read_to_string(path(file)).unwrap();
        let mut alone = String::from_utf8(alone.stdout).unwrap();
        let mut written = written;
        if format == "json" {
            // The elapsed time is the run's own.
            let strip = |text: &str| {
                let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
                v["summary"]
                    .as_object_mut()
                    .unwrap()
                    .retain(|k, _| !k.starts_with("elapsed"));
                v.to_string()
            };
            alone = strip(&alone);
            written = strip(&written);
        }
        assert_eq!(written, alone, "{format}");
    }
    // A report that cannot be written fails the run before anything is
    // printed, and names the path.
    let out = conformance(&[
        "check",
        "--repo",
        repo.to_str().unwrap(),
        "--output",
        &format!("json={}", path("no/such/dir/report.json")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).contains("report.json"), "{}", stderr(&out));
    // A format that does not exist is a usage error.
    let out = conformance(&["check", "--repo", ".", "--output", "xml=out.xml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a report format"),
        "{}",
        stderr(&out)
    );
}

/// Every incident fixture's repository.
fn incident_repos() -> Vec<PathBuf> {
    let mut repos: Vec<PathBuf> = std::fs::read_dir(fixture("incidents"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("repo"))
        .filter(|p| p.is_dir())
        .collect();
    repos.sort();
    assert!(repos.len() > 20, "{repos:?}");
    repos
}

/// Issue 27: every SARIF report is valid SARIF 2.1.0 (the schema GitHub
/// code scanning reads, vendored in tests/data), and with `--doc-url` the
/// tool and each rule link to their documentation.
#[test]
fn sarif_reports_are_valid_sarif_2_1_0() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json"),
        )
        .unwrap(),
    )
    .unwrap();
    // The schema's pattern for `language`
    // (`^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$`) has a stray `]`, which
    // ECMAScript reads as a literal and the validator's engine refuses: it
    // is escaped, the same pattern for both.
    fn escape_stray_brackets(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, child) in map.iter_mut() {
                    match child {
                        serde_json::Value::String(p) if k == "pattern" && p.ends_with("}]?$") => {
                            *p = p.replace("}]?$", "}\\]?$");
                        }
                        _ => escape_stray_brackets(child),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(escape_stray_brackets),
            _ => {}
        }
    }
    let mut schema = schema;
    escape_stray_brackets(&mut schema);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let doc = "https://example.com/conformance/README.md";
    let mut results = 0;
    for repo in incident_repos() {
        let out = conformance(&[
            "check",
            "--repo",
            repo.to_str().unwrap(),
            "--format",
            "sarif",
            "--doc-url",
            doc,
        ]);
        if out.status.code() == Some(2) {
            continue; // a configuration error: no report at all
        }
        let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&sarif)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", repo.display());
        let driver = &sarif["runs"][0]["tool"]["driver"];
        assert_eq!(driver["informationUri"], doc);
        for rule in driver["rules"].as_array().unwrap() {
            let id = rule["id"].as_str().unwrap();
            assert_eq!(rule["helpUri"], format!("{doc}#rule-{id}"));
            assert!(!rule["fullDescription"]["text"].as_str().unwrap().is_empty());
        }
        for result in sarif["runs"][0]["results"].as_array().unwrap() {
            results += 1;
            assert!(matches!(
                result["level"].as_str(),
                Some("error" | "warning")
            ));
        }
    }
    assert!(results > 20, "{results}");
    // Without a documentation address, none is invented.
    let out = conformance(&[
        "check",
        "--repo",
        fixture("reference-platform").to_str().unwrap(),
        "--format",
        "sarif",
    ]);
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(validator.is_valid(&sarif));
    assert!(sarif["runs"][0]["tool"]["driver"]["informationUri"].is_null());
}

/// Issue 27: every JUnit report parses as XML, and its counts add up at
/// every level: a suite's `tests` are its test cases, `failures` those
/// with a failure, `skipped` those skipped; the root's are the sums.
#[test]
fn junit_reports_are_xml_whose_counts_add_up() {
    let mut failures_seen = 0;
    for repo in incident_repos() {
        let out = conformance(&[
            "check",
            "--repo",
            repo.to_str().unwrap(),
            "--format",
            "junit",
        ]);
        if out.status.code() == Some(2) {
            continue; // a configuration error: no report at all
        }
        let text = String::from_utf8(out.stdout).unwrap();
        let xml = roxmltree::Document::parse(&text)
            .unwrap_or_else(|e| panic!("{}: {e}\n{text}", repo.display()));
        let root = xml.root_element();
        assert_eq!(root.tag_name().name(), "testsuites");
        let count = |n: roxmltree::Node, name: &str| -> usize {
            n.attribute(name)
                .unwrap_or_else(|| panic!("{} has no {name}", n.tag_name().name()))
                .parse()
                .unwrap()
        };
        let (mut tests, mut failures, mut skipped) = (0, 0, 0);
        for suite in root.children().filter(|n| n.has_tag_name("testsuite")) {
            let cases: Vec<_> = suite
                .children()
                .filter(|n| n.has_tag_name("testcase"))
                .collect();
            let failed = cases
                .iter()
                .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
                .count();
            let skips = cases
                .iter()
                .filter(|c| c.children().any(|n| n.has_tag_name("skipped")))
                .count();
            assert_eq!(count(suite, "tests"), cases.len(), "{}", repo.display());
            assert_eq!(count(suite, "failures"), failed, "{}", repo.display());
            assert_eq!(count(suite, "skipped"), skips, "{}", repo.display());
            tests += cases.len();
            failures += failed;
            skipped += skips;
        }
        assert_eq!(count(root, "tests"), tests, "{}", repo.display());
        assert_eq!(count(root, "failures"), failures, "{}", repo.display());
        assert_eq!(count(root, "skipped"), skipped, "{}", repo.display());
        failures_seen += failures;
    }
    assert!(failures_seen > 20, "{failures_seen}");
}

/// `--config FILE` reads a conformance.yaml kept outside the repository;
/// its problems are reported at that file.
#[test]
fn a_configuration_outside_the_repository_is_read_with_config() {
    let repo = fixture("incidents/dependson-typo/repo");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ci-conformance.yaml");
    std::fs::write(
        &config,
        "\
waivers:
  - rule: dependency-missing
    reason: tracked in FLUX-12
    expires: 2099-01-01
  - rule: unresolved-reference
    reason: tracked in FLUX-12
    expires: 2099-01-01
",
    )
    .unwrap();
    let check = |config: &Path| {
        conformance(&[
            "check",
            "--repo",
            repo.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--format",
            "json",
        ])
    };
    let out = check(&config);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["summary"]["waived"], 2);
    std::fs::write(
        &config,
        "\
renderer: native
parity:
  groupz: []
",
    )
    .unwrap();
    let out = check(&config);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}:3", config.display())) && err.contains("groupz"),
        "{err}"
    );
    let out = check(&dir.path().join("missing.yaml"));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.yaml"), "{}", stderr(&out));
}

/// Issue 27: the human report and the Markdown one (pull-request comments,
/// job summaries) start with the summary: root causes and consequences,
/// the rules to fix first, the tiers not checked.
#[test]
fn reports_start_with_the_summary() {
    let repo = fixture("incidents/external-snapshotter-remote-base/repo");
    let run = |format: &str| {
        let out = conformance(&[
            "check",
            "--repo",
            repo.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let human = run("human");
    let mut lines = human.lines();
    // The counts, with how many blocks follow (one per shared cause);
    // what was not checked is named, and listed after the findings.
    assert_eq!(
        lines.next(),
        Some("summary: 2 errors (1 cause below), 0 warnings")
    );
    assert_eq!(
        lines.next(),
        Some("  errors to fix first, by rule: remote-base 2")
    );
    assert_eq!(lines.next(), Some("  after the findings: 1 not checked"));
    assert_eq!(lines.next(), Some(""));
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("error[remote-base]: prod:")
    );
    assert!(
        human.contains(
            "\nnot checked:\n  prod/platform (clusters/prod/tiers.yaml:1): only its local part was checked"
        ),
        "{human}"
    );
    assert!(
        human
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("checked 1 cluster")
    );
    let markdown = run("markdown");
    assert!(
        markdown.starts_with("### ❌ conformance: 2 errors, 0 warnings\n"),
        "{markdown}"
    );
    assert!(markdown.contains("\n**Errors**\n"), "{markdown}");
    assert!(
        markdown.contains("- **remote-base** `prod/platform`"),
        "{markdown}"
    );
    assert!(
        markdown.contains("<summary>Not checked (1)</summary>"),
        "{markdown}"
    );
    // A clean run says so in one line.
    let out = conformance(&[
        "check",
        "--repo",
        fixture("reference-platform").to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.starts_with("### ✅ conformance: 0 errors, 0 warnings\n"),
        "{markdown}"
    );
    assert!(!markdown.contains("**Errors**"));
}

/// Issue 50: a repository with one cluster needs no `--cluster`; one with
/// several says which there are.
#[test]
fn one_cluster_needs_no_cluster_flag_and_several_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    crate::support::sync(root, "clusters/prod");
    crate::support::write(
        root,
        "clusters/prod/cm.yaml",
        &crate::support::configmap("a"),
    );
    let repo = root.to_str().unwrap();
    for cmd in ["graph", "crds", "build"] {
        let out = conformance(&[cmd, "--repo", repo]);
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", stderr(&out));
    }
    crate::support::sync(root, "clusters/dev");
    let out = conformance(&["graph", "--repo", repo]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("2 clusters") && err.contains("prod") && err.contains("dev"),
        "{err}"
    );
}

/// Issue 50: `explain` with no rule lists every rule.
#[test]
fn explain_without_a_rule_lists_them_all() {
    let out = conformance(&["explain"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for rule in conformance::rules::all() {
        assert!(text.contains(rule.id().as_str()), "{text}");
    }
}

/// Issue 50: `--version` says which commit the binary was built from.
#[test]
fn version_carries_the_commit() {
    let out = conformance(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("conformance ") && text.contains("(commit "),
        "{text}"
    );
}

/// Issue 50: `severity: off` turns a rule off; what followed from its
/// findings is reported on its own, as under a waiver.
#[test]
fn severity_off_drops_a_rule_and_its_consequences_stand_alone() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/incidents/deadlock-spreads-to-consumers/repo");
    copy_tree(&fixture, dir.path());
    let repo = dir.path().to_str().unwrap();
    let before = json(&conformance(&["check", "--repo", repo, "--format", "json"]));
    let followed = before["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["caused_by"].is_null())
        .count();
    assert!(followed > 0, "{before}");
    std::fs::write(
        dir.path().join("conformance.yaml"),
        "severity:\n  second-order-crd: off\n",
    )
    .unwrap();
    let after = json(&conformance(&["check", "--repo", repo, "--format", "json"]));
    let findings = after["findings"].as_array().unwrap();
    assert!(
        findings.iter().all(|f| f["rule"] != "second-order-crd"),
        "{after}"
    );
    assert!(findings.iter().all(|f| f["caused_by"].is_null()), "{after}");
}
