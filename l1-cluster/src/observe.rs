//! What the Flux mode observes of each Kustomization, and the comparison
//! with the prediction that decides its trial.
//!
//! The harness records every distinct Ready condition a Kustomization
//! shows (status, reason, message, when), from its creation until it is
//! Ready or `L1_TIMEOUT` passes. kustomize-controller sets Ready to
//! `Unknown/Progressing` at the start of each attempt, then `False` with the
//! reason of the failure (`ReconciliationFailed` for a dry-run or apply
//! error, `BuildFailed`, `HealthCheckFailed`, `DependencyNotReady`,
//! `ArtifactFailed`) or `True/ReconciliationSucceeded`
//! (`kustomization_controller.go`, reasons from `fluxcd/pkg/apis/meta`).
//! The dry-run's error text comes from `fluxcd/pkg/ssa` and has changed
//! across versions, so it is matched on the parts that have not: `no
//! matches for kind "X"`, `namespaces "x" not found`, `"name" not found`.

use conformance::l1::predict::{Expect, Symptom, TierPrediction};

/// A Ready condition's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionStatus {
    /// `True`.
    True,
    /// `False`.
    False,
    /// `Unknown`, or any other value.
    Unknown,
}

impl ConditionStatus {
    /// Reads a condition's `status`; anything but `True` or `False` is `Unknown`.
    pub fn parse(s: &str) -> ConditionStatus {
        match s {
            "True" => ConditionStatus::True,
            "False" => ConditionStatus::False,
            _ => ConditionStatus::Unknown,
        }
    }
}

/// One Ready condition as it was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// Seconds since Flux started reconciling the repository.
    pub at: u64,
    /// The condition's `status`.
    pub status: ConditionStatus,
    /// The condition's `reason` (`ReconciliationFailed`, `DependencyNotReady`, …).
    pub reason: String,
    /// The condition's `message`.
    pub message: String,
}

/// Everything observed of one Kustomization.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// The object existed at some point.
    pub exists: bool,
    /// `spec.suspend: true` as seen on the cluster.
    pub suspended: bool,
    /// Every distinct Ready condition, in the order seen.
    pub ready: Vec<Condition>,
    /// Failed reconciliations counted by kustomize-controller itself
    /// (`status.history`, Flux 2.7 and later), when it reports them.
    pub failed_reconciliations: Option<u64>,
}

impl Observed {
    /// When it first became Ready.
    pub fn first_ready(&self) -> Option<u64> {
        self.ready
            .iter()
            .find(|c| c.status == ConditionStatus::True)
            .map(|c| c.at)
    }

    /// The failures seen before it first became Ready (all, if never).
    pub fn failures_before_ready(&self) -> Vec<&Condition> {
        self.ready
            .iter()
            .take_while(|c| c.status != ConditionStatus::True)
            .filter(|c| c.status == ConditionStatus::False)
            .collect()
    }

    /// The last condition seen.
    pub fn last(&self) -> Option<&Condition> {
        self.ready.last()
    }
}

/// A failure as it names what was missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// `no matches for kind "Kind"`.
    Kind(String),
    /// A group/version the API server does not serve at all.
    GroupVersion(String),
    /// `namespaces "x" not found`.
    Namespace(String),
    /// `"name" not found` in a failure before or at the build.
    Object(String),
}

/// What a dry-run or build failure says is missing, if it says.
pub fn named(c: &Condition) -> Option<Named> {
    let m = &c.message;
    if let Some(kind) = quoted_after(m, "no matches for kind \"") {
        return Some(Named::Kind(kind));
    }
    if let Some(ns) = quoted_after(m, "namespaces \"")
        && m.contains("not found")
    {
        return Some(Named::Namespace(ns));
    }
    // "unable to retrieve the complete list of server APIs: g/v: the server
    // could not find the requested resource"
    if m.contains("could not find the requested resource")
        && let Some(gv) = m
            .split("server APIs: ")
            .nth(1)
            .and_then(|r| r.split(':').next())
    {
        return Some(Named::GroupVersion(gv.trim().to_string()));
    }
    if matches!(
        c.reason.as_str(),
        "BuildFailed" | "ArtifactFailed" | "ReconciliationFailed"
    ) && m.contains("not found")
    {
        // `configmaps "cluster-vars" not found`, `Source 'GitRepository/ns/x' not found`
        if let Some(name) = quoted_after_any(m) {
            return Some(Named::Object(name));
        }
    }
    None
}

fn quoted_after(m: &str, prefix: &str) -> Option<String> {
    let rest = &m[m.find(prefix)? + prefix.len()..];
    Some(rest[..rest.find('"')?].to_string())
}

/// The last quoted word (`"x"` or `'x'`) before "not found".
fn quoted_after_any(m: &str) -> Option<String> {
    let cut = m.find("not found")?;
    let before = m[..cut].trim_end();
    let q = before.chars().last().filter(|c| *c == '"' || *c == '\'')?;
    let inner = &before[..before.len() - 1];
    let start = inner.rfind(q)?;
    let word = &inner[start + 1..];
    // `GitRepository/ns/name` names the object last.
    Some(word.rsplit('/').next().unwrap_or(word).to_string())
}

/// Whether a failure names the symptom.
pub fn matches(symptom: &Symptom, c: &Condition) -> bool {
    match (symptom, named(c)) {
        (Symptom::MissingKind { kind, .. }, Some(Named::Kind(k))) => k == *kind,
        (Symptom::MissingKind { group, .. }, Some(Named::GroupVersion(gv))) => {
            gv.split('/').next() == Some(group.as_str())
        }
        (Symptom::MissingNamespace(ns), Some(Named::Namespace(n))) => n == *ns,
        (Symptom::MissingObject { name, .. }, Some(Named::Object(n))) => n == *name,
        (Symptom::Dependency(t), _) => {
            c.reason == "DependencyNotReady" && c.message.contains(&t.name)
        }
        (Symptom::Health { .. }, _) => c.reason == "HealthCheckFailed",
        (Symptom::Build, _) => c.reason == "BuildFailed",
        // A missing kind, namespace or object the condition does not name.
        (
            Symptom::MissingKind { .. }
            | Symptom::MissingNamespace(_)
            | Symptom::MissingObject { .. },
            _,
        ) => false,
    }
}

/// How a trial ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialOutcome {
    /// Flux did what the model predicted.
    Pass,
    /// Flux did something else: the model (or our reading of Flux) is wrong.
    Fail,
    /// The L1 environment kept the tier from showing either way (a workload
    /// that never became healthy on k3s-in-a-container, and the tiers that
    /// wait for it): neither confirmed nor refuted.
    Inconclusive,
}

/// The verdict on one tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// Whether the trial passed, failed or was inconclusive.
    pub outcome: TrialOutcome,
    /// One line: what was predicted and what Flux did.
    pub summary: String,
    /// What else is worth knowing (a race that did not show, failures that
    /// do not bear on the prediction).
    pub notes: Vec<String>,
}

/// Compares every tier's prediction with what Flux did in `timeout`
/// seconds, in prediction order, so that a tier held up only by an
/// inconclusive one is inconclusive too.
pub fn compare_all(
    predictions: &[TierPrediction],
    observed: &dyn Fn(&conformance::model::TierId) -> Observed,
    timeout: u64,
) -> Vec<(TierPrediction, Observed, Comparison)> {
    let mut out: Vec<(TierPrediction, Observed, Comparison)> = Vec::new();
    for p in predictions {
        let o = observed(&p.tier);
        let held: Vec<String> = out
            .iter()
            .filter(|(_, _, c)| c.outcome == TrialOutcome::Inconclusive)
            .map(|(q, _, _)| q.tier.name.clone())
            .collect();
        let c = compare_with(p, &o, timeout, &held);
        out.push((p.clone(), o, c));
    }
    out
}

/// Compares a tier's prediction with what Flux did in `timeout` seconds.
pub fn compare(p: &TierPrediction, o: &Observed, timeout: u64) -> Comparison {
    compare_with(p, o, timeout, &[])
}

/// [`compare`], knowing which tiers were inconclusive (by name).
fn compare_with(
    p: &TierPrediction,
    o: &Observed,
    timeout: u64,
    inconclusive: &[String],
) -> Comparison {
    // Never Ready for want of health, or waiting only on a tier that was:
    // the environment, not the model, decided it.
    if o.first_ready().is_none()
        && let Some(last) = o
            .ready
            .iter()
            .rev()
            .find(|c| c.status == ConditionStatus::False)
    {
        // A failing health check proves the dry-run passed: only a
        // prediction that it converges is left undecided by it.
        let health = last.reason == "HealthCheckFailed"
            && matches!(&p.expect, Expect::Converges | Expect::Race { .. });
        let waits = last.reason == "DependencyNotReady"
            && matches!(
                &p.expect,
                Expect::Converges | Expect::Race { .. } | Expect::Deadlock { .. }
            )
            && inconclusive.iter().any(|t| {
                last.message.contains(&format!("/{t}'")) || last.message.contains(&format!("'{t}'"))
            });
        let named_failure = o.ready.iter().any(|c| named(c).is_some());
        if (health || waits) && !named_failure {
            return Comparison {
                outcome: TrialOutcome::Inconclusive,
                summary: format!(
                    "inconclusive: predicted {}, but {} in {timeout}s ({}: {})",
                    p.expect.word(),
                    if health {
                        "a workload never became healthy on the L1 cluster"
                    } else {
                        "it waited on a tier that was itself inconclusive"
                    },
                    last.reason,
                    last.message
                ),
                notes: Vec::new(),
            };
        }
    }
    let ready = o.first_ready();
    let failures = o.failures_before_ready();
    let dry_runs: Vec<&Condition> = failures
        .iter()
        .copied()
        .filter(|c| named(c).is_some())
        .collect();
    let attempts = match o.failed_reconciliations {
        Some(n) => format!("{n} failed reconciliation(s) by status.history"),
        None => format!("{} failure(s) seen", failures.len()),
    };
    let last = o
        .last()
        .map(|c| format!("{:?}/{}: {}", c.status, c.reason, c.message))
        .unwrap_or_else(|| "no Ready condition".into());
    let other_notes = |skip: &dyn Fn(&Condition) -> bool| -> Vec<String> {
        failures
            .iter()
            .filter(|c| !skip(c))
            .map(|c| format!("at {}s {}: {}", c.at, c.reason, c.message))
            .collect()
    };
    let fail = |summary: String| Comparison {
        outcome: TrialOutcome::Fail,
        summary: format!("{summary}; the model: {}", p.why),
        notes: o
            .ready
            .iter()
            .map(|c| format!("at {}s {:?}/{}: {}", c.at, c.status, c.reason, c.message))
            .collect(),
    };
    let pass = |summary: String, notes: Vec<String>| Comparison {
        outcome: TrialOutcome::Pass,
        summary,
        notes,
    };
    match &p.expect {
        Expect::NotPredicted { why } => pass(
            format!(
                "not predicted ({why}); Flux: {}",
                match ready {
                    Some(t) => format!("Ready after {t}s ({attempts})"),
                    None => format!("not Ready in {timeout}s, last {last}"),
                }
            ),
            Vec::new(),
        ),
        Expect::Suspended => match ready {
            None => pass("suspended, and Flux never reconciled it".into(), Vec::new()),
            Some(t) => fail(format!(
                "predicted suspended, but Flux made it Ready after {t}s"
            )),
        },
        Expect::NeverApplied { parent } => match (o.exists, ready) {
            (false, _) => pass(
                format!(
                    "never created, as predicted ({} never applies)",
                    parent.name
                ),
                Vec::new(),
            ),
            (true, Some(t)) => fail(format!(
                "predicted never created ({} never applies), but it was Ready after {t}s",
                parent.name
            )),
            (true, None) => fail(format!(
                "predicted never created ({} never applies), but it exists (last {last})",
                parent.name
            )),
        },
        Expect::Converges => match ready {
            None if !o.exists => fail(format!(
                "predicted to converge, but its Kustomization was never created in {timeout}s"
            )),
            None => fail(format!(
                "predicted to converge, but not Ready in {timeout}s; last {last}"
            )),
            Some(t) if !dry_runs.is_empty() => fail(format!(
                "predicted to converge without a dry-run failure, but before Ready at {t}s Flux failed with: {}",
                dry_runs
                    .iter()
                    .map(|c| c.message.as_str())
                    .collect::<Vec<_>>()
                    .join(" | ")
            )),
            Some(t) => pass(
                format!("converged: Ready after {t}s ({attempts})"),
                other_notes(&|_| false),
            ),
        },
        Expect::Race { symptoms } => {
            let unexplained: Vec<&&Condition> = dry_runs
                .iter()
                .filter(|c| !symptoms.iter().any(|s| matches(s, c)))
                .collect();
            match ready {
                None => fail(format!(
                    "predicted a race that converges, but not Ready in {timeout}s; last {last}"
                )),
                Some(t) if !unexplained.is_empty() => fail(format!(
                    "Ready after {t}s, but it failed on something the model did not predict: {}",
                    unexplained
                        .iter()
                        .map(|c| c.message.as_str())
                        .collect::<Vec<_>>()
                        .join(" | ")
                )),
                Some(t) => {
                    let seen = dry_runs.len();
                    let mut notes = other_notes(&|c| named(c).is_some());
                    if seen == 0 {
                        notes.insert(
                            0,
                            "the race did not show this time: the supplier was applied before the first attempt"
                                .into(),
                        );
                    }
                    pass(
                        format!(
                            "race, as predicted: Ready after {t}s with {seen} dry-run failure(s) first ({attempts})"
                        ),
                        notes,
                    )
                }
            }
        }
        Expect::Deadlock { symptom } => match ready {
            Some(t) => fail(format!(
                "predicted a deadlock ({symptom}), but Flux made it Ready after {t}s ({attempts})"
            )),
            None if !o.exists => fail(format!(
                "predicted a deadlock ({symptom}), but its Kustomization was never created"
            )),
            None => {
                if o.ready.iter().any(|c| matches(symptom, c)) {
                    pass(
                        format!(
                            "deadlock, as predicted: not Ready in {timeout}s, failing with {symptom} ({attempts})"
                        ),
                        Vec::new(),
                    )
                } else {
                    fail(format!(
                        "not Ready in {timeout}s as predicted, but it never failed with {symptom}; last {last}"
                    ))
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conformance::model::TierId;

    fn c(at: u64, status: ConditionStatus, reason: &str, message: &str) -> Condition {
        Condition {
            at,
            status,
            reason: reason.into(),
            message: message.into(),
        }
    }

    fn observed(conditions: Vec<Condition>) -> Observed {
        Observed {
            exists: true,
            suspended: false,
            ready: conditions,
            failed_reconciliations: None,
        }
    }

    fn predicted(expect: Expect) -> TierPrediction {
        TierPrediction {
            tier: TierId::new("flux-system", "platform-config"),
            label: "platform-config".into(),
            expect,
            why: "the model's chain".into(),
        }
    }

    fn storage_profile() -> Symptom {
        Symptom::MissingKind {
            group: "cdi.kubevirt.io".into(),
            kind: "StorageProfile".into(),
        }
    }

    // Messages as kustomize-controller writes them: fluxcd/pkg ssa
    // DryRunErr (v1.x) and the older "dry-run failed, error:" form.
    const NO_KIND: &str = "StorageProfile/longhorn dry-run failed: no matches for kind \"StorageProfile\" in version \"cdi.kubevirt.io/v1beta1\"";
    const NO_KIND_OLD: &str = "StorageProfile/longhorn dry-run failed, error: no matches for kind \"StorageProfile\" in version \"cdi.kubevirt.io/v1beta1\"\n";
    const NO_GROUP: &str = "failed to get API group resources: unable to retrieve the complete list of server APIs: cdi.kubevirt.io/v1beta1: the server could not find the requested resource";
    const NO_NS: &str = "ConfigMap/team/settings not found: namespaces \"team\" not found";

    #[test]
    fn deadlock_observed_as_predicted() {
        let o = observed(vec![
            c(
                3,
                ConditionStatus::Unknown,
                "Progressing",
                "Reconciliation in progress",
            ),
            c(4, ConditionStatus::False, "ReconciliationFailed", NO_KIND),
        ]);
        let r = compare(
            &predicted(Expect::Deadlock {
                symptom: storage_profile(),
            }),
            &o,
            600,
        );
        assert_eq!(r.outcome, TrialOutcome::Pass, "{r:?}");
        assert!(r.summary.contains("deadlock, as predicted"), "{r:?}");
        // The older wording and the whole-group wording name it too.
        for m in [NO_KIND_OLD, NO_GROUP] {
            let o = observed(vec![c(
                4,
                ConditionStatus::False,
                "ReconciliationFailed",
                m,
            )]);
            let p = predicted(Expect::Deadlock {
                symptom: storage_profile(),
            });
            assert!(compare(&p, &o, 600).outcome == TrialOutcome::Pass, "{m}");
        }
    }

    #[test]
    fn a_deadlock_that_converges_fails_with_the_chain() {
        let o = observed(vec![
            c(4, ConditionStatus::False, "ReconciliationFailed", NO_KIND),
            c(
                64,
                ConditionStatus::True,
                "ReconciliationSucceeded",
                "Applied revision: main@sha1:abc",
            ),
        ]);
        let r = compare(
            &predicted(Expect::Deadlock {
                symptom: storage_profile(),
            }),
            &o,
            600,
        );
        assert_eq!(r.outcome, TrialOutcome::Fail);
        assert!(r.summary.contains("Ready after 64s"), "{r:?}");
        assert!(r.summary.contains("the model's chain"), "{r:?}");
        assert_eq!(r.notes.len(), 2, "Flux's conditions beside the chain");
    }

    #[test]
    fn a_deadlock_for_another_reason_fails() {
        let o = observed(vec![c(
            9,
            ConditionStatus::False,
            "HealthCheckFailed",
            "timeout waiting for: [Deployment/cdi/cdi-operator status: 'InProgress']",
        )]);
        let r = compare(
            &predicted(Expect::Deadlock {
                symptom: storage_profile(),
            }),
            &o,
            600,
        );
        assert_eq!(r.outcome, TrialOutcome::Fail);
        assert!(
            r.summary.contains("never failed with no matches for kind"),
            "{r:?}"
        );
    }

    #[test]
    fn a_dependency_deadlock_is_matched_by_dependency_not_ready() {
        let o = observed(vec![c(
            1,
            ConditionStatus::False,
            "DependencyNotReady",
            "dependency 'flux-system/apps-vms' is not ready",
        )]);
        let p = predicted(Expect::Deadlock {
            symptom: Symptom::Dependency(TierId::new("flux-system", "apps-vms")),
        });
        assert!(compare(&p, &o, 600).outcome == TrialOutcome::Pass);
        let other = predicted(Expect::Deadlock {
            symptom: Symptom::Dependency(TierId::new("flux-system", "platform")),
        });
        assert!(compare(&other, &o, 600).outcome == TrialOutcome::Fail);
    }

    #[test]
    fn a_race_passes_whether_or_not_it_shows() {
        let p = predicted(Expect::Race {
            symptoms: vec![Symptom::MissingNamespace("team".into())],
        });
        let shown = observed(vec![
            c(2, ConditionStatus::False, "ReconciliationFailed", NO_NS),
            c(
                35,
                ConditionStatus::True,
                "ReconciliationSucceeded",
                "Applied revision: main@sha1:abc",
            ),
        ]);
        let r = compare(&p, &shown, 600);
        assert!(
            r.outcome == TrialOutcome::Pass && r.summary.contains("1 dry-run failure"),
            "{r:?}"
        );
        let hidden = observed(vec![c(
            5,
            ConditionStatus::True,
            "ReconciliationSucceeded",
            "Applied revision: main@sha1:abc",
        )]);
        let r = compare(&p, &hidden, 600);
        assert_eq!(r.outcome, TrialOutcome::Pass, "{r:?}");
        assert!(r.notes[0].contains("did not show"), "{r:?}");
        // Failing on a kind the model did not name is a miss.
        let missed = observed(vec![
            c(2, ConditionStatus::False, "ReconciliationFailed", NO_KIND),
            c(35, ConditionStatus::True, "ReconciliationSucceeded", "ok"),
        ]);
        assert!(compare(&p, &missed, 600).outcome == TrialOutcome::Fail);
        // Never Ready is not a race.
        let stuck = observed(vec![c(
            2,
            ConditionStatus::False,
            "ReconciliationFailed",
            NO_NS,
        )]);
        assert!(compare(&p, &stuck, 600).outcome == TrialOutcome::Fail);
    }

    #[test]
    fn converges_tolerates_health_and_artifact_retries_but_not_dry_run_failures() {
        let p = predicted(Expect::Converges);
        let slow = observed(vec![
            c(
                0,
                ConditionStatus::False,
                "ArtifactFailed",
                "Source artifact not found, retrying in 30s",
            ),
            c(
                40,
                ConditionStatus::False,
                "HealthCheckFailed",
                "timeout waiting for: [Deployment/apps/echo status: 'InProgress']",
            ),
            c(
                90,
                ConditionStatus::True,
                "ReconciliationSucceeded",
                "Applied revision: main@sha1:abc",
            ),
        ]);
        let r = compare(&p, &slow, 600);
        assert_eq!(r.outcome, TrialOutcome::Pass, "{r:?}");
        assert_eq!(r.notes.len(), 2, "{r:?}");
        let raced = observed(vec![
            c(2, ConditionStatus::False, "ReconciliationFailed", NO_NS),
            c(35, ConditionStatus::True, "ReconciliationSucceeded", "ok"),
        ]);
        let r = compare(&p, &raced, 600);
        assert!(
            r.outcome == TrialOutcome::Fail && r.summary.contains("namespaces \"team\" not found"),
            "{r:?}"
        );
        let never = observed(vec![c(
            2,
            ConditionStatus::Unknown,
            "Progressing",
            "Reconciliation in progress",
        )]);
        assert!(compare(&p, &never, 600).outcome == TrialOutcome::Fail);
        assert!(compare(&p, &Observed::default(), 600).outcome == TrialOutcome::Fail);
    }

    #[test]
    fn suspended_and_never_applied() {
        let suspended = Observed {
            exists: true,
            suspended: true,
            ..Observed::default()
        };
        assert!(
            compare(&predicted(Expect::Suspended), &suspended, 600).outcome == TrialOutcome::Pass
        );
        let p = predicted(Expect::NeverApplied {
            parent: TierId::new("flux-system", "apps"),
        });
        assert!(compare(&p, &Observed::default(), 600).outcome == TrialOutcome::Pass);
        assert!(
            compare(
                &p,
                &observed(vec![c(
                    1,
                    ConditionStatus::True,
                    "ReconciliationSucceeded",
                    "ok"
                )]),
                600
            )
            .outcome
                == TrialOutcome::Fail
        );
    }

    #[test]
    fn a_missing_substitute_from_is_named_by_its_name() {
        let o = observed(vec![c(
            1,
            ConditionStatus::False,
            "BuildFailed",
            "substitute from 'ConfigMap/cluster-vars' error: configmaps \"cluster-vars\" not found",
        )]);
        let p = predicted(Expect::Deadlock {
            symptom: Symptom::MissingObject {
                kind: "ConfigMap".into(),
                name: "cluster-vars".into(),
            },
        });
        assert!(compare(&p, &o, 600).outcome == TrialOutcome::Pass);
        let source = c(
            1,
            ConditionStatus::False,
            "ArtifactFailed",
            "Source 'GitRepository/flux-system/other' not found",
        );
        assert_eq!(named(&source), Some(Named::Object("other".into())));
    }

    #[test]
    fn health_the_environment_denies_is_inconclusive_and_so_is_what_waits_on_it() {
        let platform = TierPrediction {
            tier: TierId::new("flux-system", "platform"),
            label: "platform".into(),
            expect: Expect::Converges,
            why: String::new(),
        };
        let config = TierPrediction {
            tier: TierId::new("flux-system", "platform-config"),
            label: "platform-config".into(),
            expect: Expect::Converges,
            why: String::new(),
        };
        let cycle = TierPrediction {
            tier: TierId::new("flux-system", "apps"),
            label: "apps".into(),
            expect: Expect::Deadlock {
                symptom: Symptom::Dependency(TierId::new("flux-system", "apps")),
            },
            why: String::new(),
        };
        let seen = |t: &TierId| match t.name.as_str() {
            "platform" => observed(vec![c(
                300,
                ConditionStatus::False,
                "HealthCheckFailed",
                "timeout waiting for: [HelmRelease/longhorn-system/longhorn status: 'Failed']",
            )]),
            "platform-config" => observed(vec![c(
                30,
                ConditionStatus::False,
                "DependencyNotReady",
                "dependency 'flux-system/platform' is not ready",
            )]),
            _ => observed(vec![c(
                30,
                ConditionStatus::False,
                "DependencyNotReady",
                "dependency 'flux-system/apps' is not ready",
            )]),
        };
        let all = compare_all(&[platform, config, cycle], &seen, 600);
        let outcomes: Vec<TrialOutcome> = all.iter().map(|(_, _, c)| c.outcome).collect();
        assert_eq!(
            outcomes,
            vec![
                TrialOutcome::Inconclusive,
                TrialOutcome::Inconclusive,
                TrialOutcome::Pass
            ],
            "{all:?}"
        );
        assert!(all[0].2.summary.contains("never became healthy"), "{all:?}");
        // A dry-run failure is never the environment's.
        let p = predicted(Expect::Converges);
        let o = observed(vec![
            c(2, ConditionStatus::False, "ReconciliationFailed", NO_KIND),
            c(300, ConditionStatus::False, "HealthCheckFailed", "timeout"),
        ]);
        assert_eq!(compare(&p, &o, 600).outcome, TrialOutcome::Fail);
    }
}
