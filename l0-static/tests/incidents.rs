//! Meta-tests of the fixture contract: every incident under
//! `fixtures/incidents/<slug>/` has a README, a repo, an `expected.yaml` and a
//! fixed variant; the repo produces exactly the expected findings (at least
//! one of them an error) and the human report in `report.txt`; the fixed
//! variant and the reference platform produce no error. `BLESS=1` rewrites
//! `expected.yaml` and `report.txt` from the current output.

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

fn layout(dir: &Path) -> Result<(), Failed> {
    // An incident whose repo must be rejected outright (exit 2) names the
    // error instead of the findings.
    let expected = if dir.join("expected-error.txt").exists() {
        "expected-error.txt"
    } else {
        "expected.yaml"
    };
    let missing: Vec<&str> = ["README.md", "repo", expected, "fixed"]
        .into_iter()
        .filter(|part| !dir.join(part).exists())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("{} lacks {}", dir.display(), missing.join(", ")).into())
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
            repo: dir.join("repo"),
            clusters: Vec::new(),
            renderer: None,
            base: base_of(dir),
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
        repo: dir.join("repo"),
        clusters: Vec::new(),
        renderer: None,
        base: base_of(dir),
    })
    .map_err(|err| format!("check failed: {err}"))?;
    let actual: BTreeSet<ExpectedFinding> = outcome
        .findings
        .iter()
        .map(|f| ExpectedFinding {
            rule: f.rule.to_string(),
            cluster: f.cluster.clone(),
            kustomization: f.kustomization.clone(),
            object: f.object.clone(),
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
        repo: dir.join("repo"),
        clusters: Vec::new(),
        renderer: None,
        base: base_of(dir),
    };
    let outcome = check(&options).map_err(|err| format!("check failed: {err}"))?;
    let text = conformance::report::human::render(&outcome, &[], std::time::Duration::ZERO)
        .replace(&format!(" with {}:", outcome.renderer), " with <renderer>:");
    let path = dir.join("report.txt");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &text).map_err(|err| format!("{}: {err}", path.display()))?;
    }
    let wanted = std::fs::read_to_string(&path)
        .map_err(|err| format!("{}: {err} (BLESS=1 writes it)", path.display()))?;
    if wanted != text {
        return Err(format!(
            "the report differs from {} (BLESS=1 rewrites it)\n{}",
            path.display(),
            similar::TextDiff::from_lines(&wanted, &text)
                .unified_diff()
                .header("report.txt", "actual")
        )
        .into());
    }
    Ok(())
}

fn assert_clean(repo: &Path) -> Result<(), Failed> {
    let outcome = check(&CheckOptions {
        repo: repo.to_path_buf(),
        clusters: Vec::new(),
        renderer: None,
        base: repo.parent().and_then(base_of),
    })
    .map_err(|err| format!("check failed: {err}"))?;
    let errors: Vec<String> = outcome
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
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
