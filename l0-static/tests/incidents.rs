//! Meta-tests of the fixture contract: every incident under
//! `fixtures/incidents/<slug>/` has a README, a repo, an `expected.yaml` and a
//! fixed variant, and nothing else (but `base/`, the previous revision, for
//! rules that compare); the repo produces exactly the expected findings (at
//! least one of them an error) and the reports users read, in every format:
//! `report.txt` (human), `report.json`, `report.sarif` (its results; the
//! rule descriptors every run carries are reduced to their ids),
//! `report.junit.xml`, `report.github` (annotations) and `report.md`
//! (markdown); the fixed
//! variant and the reference platform produce no error. Every rule id has an
//! incident whose findings include it, and an `explain` text. `BLESS=1`
//! rewrites `expected.yaml` and the reports from the current output.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use conformance::check::{CheckOptions, check};
use conformance::report::human::finding_block;
use conformance::rules::Severity;
use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;

/// `expected.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    findings: Vec<ExpectedFinding>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedFinding {
    rule: String,
    cluster: String,
    kustomization: String,
    #[serde(default)]
    object: Option<String>,
}

/// An incident about a change carries the previous tree in `base/`.
fn base_of(dir: &Path) -> Option<conformance::base::Base> {
    let base = dir.join("base");
    base.is_dir().then_some(conformance::base::Base::Dir(base))
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn main() -> ExitCode {
    l0_static::quiet_on_closed_pipe();
    let args = Arguments::from_args();
    let mut trials = vec![Trial::test("reference-platform::passes", || {
        assert_clean(&fixtures().join("reference-platform"))
    })];
    let incidents = fixtures().join("incidents");
    let mut slugs: Vec<String> = std::fs::read_dir(&incidents)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    slugs.sort();
    trials.push(Trial::test("incidents::present", {
        let count = slugs.len();
        move || {
            if count == 0 {
                Err("no incident fixtures found under fixtures/incidents".into())
            } else {
                Ok(())
            }
        }
    }));
    trials.push(Trial::test("incidents::every-rule", {
        let incidents = incidents.clone();
        let slugs = slugs.clone();
        move || every_rule_has_an_incident(&incidents, &slugs)
    }));
    trials.push(Trial::test(
        "rules::every-rule-explained",
        every_rule_explained,
    ));
    for slug in slugs {
        let dir = incidents.join(&slug);
        let d = dir.clone();
        trials.push(Trial::test(format!("{slug}::layout"), move || layout(&d)));
        let d = dir.clone();
        trials.push(Trial::test(format!("{slug}::expected"), move || {
            expected(&d)
        }));
        let d = dir.clone();
        trials.push(Trial::test(format!("{slug}::report"), move || report(&d)));
        let d = dir.clone();
        trials.push(Trial::test(format!("{slug}::fixed"), move || {
            assert_clean(&d.join("fixed"))
        }));
    }
    libtest_mimic::run(&args, trials).exit_code()
}

/// The snapshots of what users read, one per report format.
const REPORTS: [&str; 6] = [
    "report.txt",
    "report.json",
    "report.sarif",
    "report.junit.xml",
    "report.github",
    "report.md",
];

fn layout(dir: &Path) -> Result<(), Failed> {
    // An incident whose repo must be rejected outright (exit 2) names the
    // error instead of the findings.
    let expected = if dir.join("expected-error.txt").exists() {
        "expected-error.txt"
    } else {
        "expected.yaml"
    };
    let reports: &[&str] = if expected == "expected.yaml" {
        &REPORTS
    } else {
        &[]
    };
    let required: Vec<&str> = ["README.md", "repo", expected, "fixed"]
        .into_iter()
        .chain(reports.iter().copied())
        .collect();
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|part| !dir.join(part).exists())
        .collect();
    if !missing.is_empty() {
        return Err(format!("{} lacks {}", dir.display(), missing.join(", ")).into());
    }
    let stray: Vec<String> = std::fs::read_dir(dir)
        .map_err(|err| format!("{}: {err}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !required.contains(&name.as_str()) && name != "base")
        .collect();
    if stray.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} holds files the fixture contract does not know: {}",
            dir.display(),
            stray.join(", ")
        )
        .into())
    }
}

/// Every rule of the contract is exercised by some incident's
/// `expected.yaml`, so no rule can silently stop firing.
fn every_rule_has_an_incident(incidents: &Path, slugs: &[String]) -> Result<(), Failed> {
    let mut covered = BTreeSet::new();
    for slug in slugs {
        let path = incidents.join(slug).join("expected.yaml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let wanted: Expected =
            serde_saphyr::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
        covered.extend(wanted.findings.into_iter().map(|f| f.rule));
    }
    let missing: Vec<&str> = conformance::rules::all()
        .iter()
        .map(|r| r.id().as_str())
        .filter(|id| !covered.contains(*id))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("no incident exercises: {}", missing.join(", ")).into())
    }
}

/// Every rule has a summary, an example and an explain text that names
/// the Flux behaviour it models.
fn every_rule_explained() -> Result<(), Failed> {
    let thin: Vec<&str> = conformance::rules::all()
        .iter()
        .filter(|r| r.summary().is_empty() || r.example().is_empty() || r.explain().len() < 200)
        .map(|r| r.id().as_str())
        .collect();
    if thin.is_empty() {
        Ok(())
    } else {
        Err(format!("rules without a real explain text: {}", thin.join(", ")).into())
    }
}

/// The repo produces exactly `expected.yaml`, including at least one error;
/// or, with `expected-error.txt`, the run fails with that message.
fn expected(dir: &Path) -> Result<(), Failed> {
    let error_file = dir.join("expected-error.txt");
    if error_file.exists() {
        let want = std::fs::read_to_string(&error_file)
            .map_err(|err| format!("{}: {err}", error_file.display()))?;
        return match check(&CheckOptions {
            run: conformance::session::RunOptions::at(dir.join("repo")),
            clusters: Vec::new(),
            base: base_of(dir),
            baseline: None,
        }) {
            Ok(_) => Err("the run succeeded, but expected-error.txt says it must fail".into()),
            Err(err) if err.to_string().contains(want.trim()) => Ok(()),
            Err(err) => Err(format!(
                "the run failed with\n  {err}\nwhich does not contain\n  {}",
                want.trim()
            )
            .into()),
        };
    }
    let outcome = check(&CheckOptions {
        run: conformance::session::RunOptions::at(dir.join("repo")),
        clusters: Vec::new(),
        base: base_of(dir),
        baseline: None,
    })
    .map_err(|err| format!("check failed: {err}"))?;
    let actual: BTreeSet<ExpectedFinding> = outcome
        .findings
        .iter()
        .map(|f| ExpectedFinding {
            rule: f.rule().to_string(),
            cluster: f.cluster().to_string(),
            kustomization: f.kustomization().to_string(),
            object: f.object().map(str::to_string),
        })
        .collect();
    let path = dir.join("expected.yaml");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, render_expected(&actual))
            .map_err(|err| format!("{}: {err}", path.display()))?;
    }
    let text =
        std::fs::read_to_string(&path).map_err(|err| format!("{}: {err}", path.display()))?;
    let wanted: Expected =
        serde_saphyr::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
    let wanted: BTreeSet<ExpectedFinding> = wanted.findings.into_iter().collect();
    if outcome.errors() == 0 {
        return Err("the incident produces no error: it would pass CI silently".into());
    }
    if actual != wanted {
        let report: Vec<String> = outcome
            .findings
            .iter()
            .map(|f| finding_block(f, &outcome.model.repo))
            .collect();
        return Err(format!(
            "findings differ from {} (BLESS=1 rewrites it)\n{}\nactual findings:\n{}",
            path.display(),
            similar::TextDiff::from_lines(&render_expected(&wanted), &render_expected(&actual))
                .unified_diff()
                .header("expected.yaml", "actual"),
            report.join("\n")
        )
        .into());
    }
    Ok(())
}

/// The human report of the incident, snapshot-tested (`report.txt`), so a
/// change to what users read is a reviewed change. The elapsed time and the
/// renderer's name vary by machine and are masked.
fn report(dir: &Path) -> Result<(), Failed> {
    if dir.join("expected-error.txt").exists() {
        return Ok(()); // no report: the run itself fails (checked by ::expected)
    }
    let options = CheckOptions {
        run: conformance::session::RunOptions::at(dir.join("repo")),
        clusters: Vec::new(),
        base: base_of(dir),
        baseline: None,
    };
    let outcome = check(&options).map_err(|err| format!("check failed: {err}"))?;
    let human = conformance::report::human::render(&outcome, &[], std::time::Duration::ZERO)
        .replace(&format!(" with {}:", outcome.renderer), " with <renderer>:");
    let json = pretty(&conformance::report::json::render(&outcome, "repo", &[]))?;
    let mut sarif = conformance::report::ci::sarif(&outcome, None);
    let ids: Vec<serde_json::Value> = conformance::rules::all()
        .iter()
        .map(|r| serde_json::json!(r.id()))
        .collect();
    sarif["runs"][0]["tool"]["driver"]["rules"] = serde_json::Value::Array(ids);
    let sarif = pretty(&sarif)?;
    let options = conformance::report::Options {
        repo: "repo",
        clusters: &[],
        elapsed: std::time::Duration::ZERO,
        doc_url: None,
    };
    let render = |format| {
        conformance::report::render(format, &outcome, &options).map_err(|err| err.to_string())
    };
    use conformance::report::Format;
    let mut problems = Vec::new();
    for (name, text) in [
        ("report.txt", human),
        ("report.json", json),
        ("report.sarif", sarif),
        ("report.junit.xml", render(Format::Junit)?),
        ("report.github", render(Format::Github)?),
        ("report.md", render(Format::Markdown)?),
    ] {
        if let Err(problem) = snapshot(&dir.join(name), &text) {
            problems.push(problem);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn pretty(value: &serde_json::Value) -> Result<String, Failed> {
    let mut text = serde_json::to_string_pretty(value).map_err(|err| err.to_string())?;
    text.push('\n');
    Ok(text)
}

/// Compares `text` with the snapshot at `path` (`BLESS=1` rewrites it).
fn snapshot(path: &Path, text: &str) -> Result<(), String> {
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, text).map_err(|err| format!("{}: {err}", path.display()))?;
    }
    let wanted = std::fs::read_to_string(path)
        .map_err(|err| format!("{}: {err} (BLESS=1 writes it)", path.display()))?;
    if wanted != text {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Err(format!(
            "the report differs from {} (BLESS=1 rewrites it)\n{}",
            path.display(),
            similar::TextDiff::from_lines(wanted.as_str(), text)
                .unified_diff()
                .header(&name, "actual")
        ));
    }
    Ok(())
}

fn assert_clean(repo: &Path) -> Result<(), Failed> {
    let outcome = check(&CheckOptions {
        run: conformance::session::RunOptions::at(repo.to_path_buf()),
        clusters: Vec::new(),
        base: repo.parent().and_then(base_of),
        baseline: None,
    })
    .map_err(|err| format!("check failed: {err}"))?;
    let errors: Vec<String> = outcome
        .findings
        .iter()
        .filter(|f| f.severity() == Severity::Error)
        .map(|f| finding_block(f, &outcome.model.repo))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} should pass, but:\n{}",
            repo.display(),
            errors.join("\n")
        )
        .into())
    }
}

fn render_expected(findings: &BTreeSet<ExpectedFinding>) -> String {
    let mut out = String::from(
        "# The exact findings of repo/ (rule, cluster, kustomization, object).\n# BLESS=1 cargo test -p l0-static --test incidents rewrites this file.\nfindings:\n",
    );
    for f in findings {
        out.push_str(&format!(
            "  - rule: {}\n    cluster: {}\n    kustomization: {}\n    object: {}\n",
            f.rule,
            f.cluster,
            f.kustomization,
            f.object.as_deref().unwrap_or("null")
        ));
    }
    out
}
