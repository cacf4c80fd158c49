//! The l0-static suite: every static invariant of a Flux repository as an
//! ordinary test.
//!
//! `cargo test -p l0-static` checks `fixtures/reference-platform`, or the
//! repository named by `CONFORMANCE_REPO` (compared with `CONFORMANCE_BASE`,
//! a git revision or a directory, when set). There is one trial per cluster,
//! rule and Kustomization, named `<cluster>::<rule>::<kustomization>`, so
//! `cargo test -p l0-static -- prod::` runs one cluster and
//! `-- ::graph-parity::` one rule. Passing checks are trials too, so `--list`
//! shows the whole suite. A failing trial prints its findings as the
//! `conformance check` human report does.
//!
//! This library plans the trials ([`plan`]); `tests/l0.rs` hands them to
//! libtest-mimic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use conformance::check::Outcome;
use conformance::model::TierState;
use conformance::report::Following;
use conformance::report::human::{blocks_block, finding_block};
use conformance::rules::{self, Finding, Severity};

/// What a trial will report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Passed: no error that a waiver does not accept.
    Pass,
    /// Failed, with the message to print.
    Fail(String),
    /// Not run, with the reason.
    Ignored(String),
}

/// One planned trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedTrial {
    /// `<cluster>::<rule>::<kustomization>`.
    pub name: String,
    /// What it will report.
    pub verdict: Verdict,
}

/// The repository under test: `CONFORMANCE_REPO` when set (relative paths
/// are taken from the directory cargo was run in), else the reference
/// platform.
pub fn target_repo() -> PathBuf {
    match std::env::var_os("CONFORMANCE_REPO") {
        Some(repo) => resolve(Path::new(&repo)),
        None => workspace().join("fixtures").join("reference-platform"),
    }
}

/// The previous revision to compare with: `CONFORMANCE_BASE`, a directory
/// holding the previous tree or a git revision of the repository.
pub fn target_base() -> Option<conformance::base::Base> {
    let value = std::env::var_os("CONFORMANCE_BASE")?;
    let dir = resolve(Path::new(&value));
    Some(if dir.is_dir() {
        conformance::base::Base::Dir(dir)
    } else {
        conformance::base::Base::Rev(value.to_string_lossy().into_owned())
    })
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A path from the environment: absolute as is; relative to the directory
/// cargo was run from (cargo runs tests in the crate directory), else to the
/// workspace root.
fn resolve(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let from_shell = std::env::var_os("PWD").map(|pwd| PathBuf::from(pwd).join(path));
    match from_shell {
        Some(p) if p.exists() => p,
        _ => workspace().join(path),
    }
}

/// Plans one trial per (cluster, rule, Kustomization), plus one for every
/// finding whose Kustomization is not a tier of its cluster (a parity
/// finding about a Kustomization the cluster lacks).
pub fn plan(outcome: &Outcome) -> Vec<PlannedTrial> {
    let mut by_key: BTreeMap<(String, rules::RuleId, String), Vec<&Finding>> = BTreeMap::new();
    for finding in &outcome.findings {
        by_key
            .entry((
                finding.cluster().to_string(),
                finding.rule(),
                finding.kustomization().to_string(),
            ))
            .or_default()
            .push(finding);
    }
    let mut keys: BTreeSet<(String, rules::RuleId, String)> = by_key.keys().cloned().collect();
    let mut unchecked: BTreeMap<(String, String), String> = BTreeMap::new();
    for cluster in &outcome.model.clusters {
        for tier in cluster.tiers.values() {
            let label = cluster.tier_label(&tier.id);
            for rule in rules::all() {
                keys.insert((cluster.name.clone(), rule.id(), label.clone()));
            }
            if let TierState::NotChecked(reason) = &tier.state {
                unchecked.insert((cluster.name.clone(), label), reason.clone());
            }
        }
    }
    let following = Following::of(&outcome.findings);
    let by_id: BTreeMap<String, &Finding> = outcome.findings.iter().map(|f| (f.id(), f)).collect();
    keys.into_iter()
        .map(|key| {
            let name = format!("{}::{}::{}", key.0, key.1, key.2);
            let findings = by_key.get(&key).map(Vec::as_slice).unwrap_or_default();
            // A finding that follows from a root is reported under the
            // root's trial (its text lists what the root blocks): this
            // trial is ignored, naming the root.
            let errors: Vec<&&Finding> = findings.iter().filter(|f| f.is_error()).collect();
            let root = findings
                .iter()
                .filter(|f| f.severity() == Severity::Error && f.waived().is_none())
                .find_map(|f| f.caused_by().and_then(|id| by_id.get(id)));
            let waived: Vec<&&Finding> = findings.iter().filter(|f| f.waived().is_some()).collect();
            let verdict = if !errors.is_empty() {
                let text: Vec<String> = findings
                    .iter()
                    .filter(|f| !f.is_blocked())
                    .map(|f| {
                        let mut block = finding_block(f, &outcome.model.repo);
                        block.push_str(&blocks_block(&[*f], &following.of_roots(&[*f])));
                        block
                    })
                    .collect();
                Verdict::Fail(text.join("\n"))
            } else if let Some(root) = root {
                Verdict::Ignored(format!(
                    "blocked by {}::{}::{} ({}): fixing it fixes this",
                    root.cluster(),
                    root.rule(),
                    root.kustomization(),
                    root.message()
                ))
            } else if let Some(w) = waived.first().and_then(|f| f.waived()) {
                Verdict::Ignored(format!("waived until {}: {}", w.expires, w.reason))
            } else if key.1 == rules::RuleId::RenderFailed {
                match unchecked.get(&(key.0.clone(), key.2.clone())) {
                    Some(reason) => Verdict::Ignored(format!("not checked: {reason}")),
                    None => Verdict::Pass,
                }
            } else {
                Verdict::Pass
            };
            PlannedTrial { name, verdict }
        })
        .collect()
}

/// Makes a closed standard output (`-- --list | head`) end the run quietly
/// (exit 0): libtest-mimic's printer unwraps its writes, which panics on a
/// broken pipe, and the default hook would print that panic. Only a panic
/// in libtest-mimic's own code with a broken pipe is silenced; any other is
/// reported as before. (Restoring SIGPIPE's default action would need `unsafe`, which
/// this workspace forbids.)
pub fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        let in_printer = info
            .location()
            .is_some_and(|l| l.file().contains("libtest-mimic"));
        if in_printer && (payload.contains("BrokenPipe") || payload.contains("Broken pipe")) {
            std::process::exit(0);
        }
        default(info);
    }));
}
