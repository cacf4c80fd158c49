//! Every repository of the real-world corpus goes through `conformance check`
//! and completes with exit 0 or 1 and a valid JSON document: never a panic,
//! never exit 2. Both corpora live beside the project (`CONFORMANCE_CORPUS`,
//! default `../shared/corpus`, and `CONFORMANCE_CORPUS_WIDE`, default
//! `../shared/corpus-wide`; relative paths from the workspace root); without
//! one, its trials are ignored with the reason, unless
//! `CONFORMANCE_CORPUS_REQUIRED=1` (as in CI).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitCode};

use libtest_mimic::{Arguments, Completion, Failed, Trial};

#[path = "common/corpora.rs"]
mod corpora;

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let required = corpora::required();
    let mut trials = Vec::new();
    for corpus in corpora::corpora() {
        let repos = corpus.repos();
        if repos.is_empty() {
            let reason = format!(
                "{} not found at {} (set {})",
                corpus.name,
                corpus.dir.display(),
                corpus.variable
            );
            trials.push(Trial::ignorable_test(
                format!("{}::present", corpus.name),
                move || {
                    if required {
                        Err(Failed::from(format!(
                            "{reason}, and CONFORMANCE_CORPUS_REQUIRED=1"
                        )))
                    } else {
                        Ok(Completion::ignored_with(reason))
                    }
                },
            ));
            continue;
        }
        for repo in repos {
            let name = repo
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            trials.push(Trial::test(format!("{}::{name}", corpus.name), move || {
                run(&repo)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}

fn run(repo: &Path) -> Result<(), Failed> {
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["check", "--format", "json", "--repo"])
        .arg(repo)
        .output()
        .map_err(|err| format!("cannot run conformance: {err}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0 | 1) => {}
        other => {
            return Err(
                format!("exit status {other:?}, expected 0 or 1; stderr:\n{stderr}").into(),
            );
        }
    }
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|err| format!("stdout is not JSON: {err}"))?;
    if doc["version"] != 1 || !doc["findings"].is_array() || !doc["clusters"].is_array() {
        return Err(format!("JSON does not follow the contract: {doc:#}").into());
    }
    let errors = doc["summary"]["errors"].as_u64().unwrap_or(0);
    if (errors > 0) != (out.status.code() == Some(1)) {
        return Err(format!(
            "exit status {:?} disagrees with {errors} errors",
            out.status.code()
        )
        .into());
    }
    // A line per repository for the record (clusters, Kustomizations, rendered, findings by rule).
    let mut rules: BTreeMap<String, usize> = BTreeMap::new();
    for f in doc["findings"].as_array().into_iter().flatten() {
        *rules
            .entry(f["rule"].as_str().unwrap_or("?").to_string())
            .or_default() += 1;
    }
    let clusters = doc["clusters"].as_array().map_or(0, Vec::len);
    let (mut total, mut rendered) = (0, 0);
    for c in doc["clusters"].as_array().into_iter().flatten() {
        for k in c["kustomizations"].as_array().into_iter().flatten() {
            total += 1;
            rendered += usize::from(k["state"] == "rendered");
        }
    }
    eprintln!(
        "corpus {}: {clusters} clusters, {total} Kustomizations, {rendered} rendered, findings {rules:?}",
        repo.display()
    );
    Ok(())
}
