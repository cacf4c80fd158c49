//! Waivers: findings accepted until a date (`waivers` in conformance.yaml).
//!
//! A waived finding is still reported, marked as waived, and does not count
//! towards the exit status. After `expires` it counts again and a
//! `waiver-expired` warning says so; a waiver that matches nothing is a
//! `waiver-stale` warning. Both warnings come from [`apply`], which runs
//! after every other rule; their `check` returns nothing.

use super::{Context, Finding, Rule, RuleId, Severity, Waived};
pub mod cfg;

use crate::config_error::FILE_NAME;
use crate::model::Span;
use cfg::{Date, Waiver};

/// The `waiver-expired` rule: a waiver is past its expiry date.
#[derive(Debug)]
pub(crate) struct WaiverExpired;
/// The `waiver-stale` rule: a waiver matches no finding.
#[derive(Debug)]
pub(crate) struct WaiverStale;

impl Rule for WaiverExpired {
    fn id(&self) -> RuleId {
        RuleId::WaiverExpired
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn summary(&self) -> &'static str {
        "a waiver in conformance.yaml is past its expiry date: the findings it covered count again"
    }
    fn example(&self) -> &'static str {
        "conformance.yaml:31: waiver for graph-parity on prod/apps-vms expired on 2026-10-01"
    }
    fn check(&self, _: &Context) -> Vec<Finding> {
        Vec::new()
    }
}

impl Rule for WaiverStale {
    fn id(&self) -> RuleId {
        RuleId::WaiverStale
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn summary(&self) -> &'static str {
        "a waiver in conformance.yaml matches no finding: the problem is gone (or the waiver has a typo)"
    }
    fn example(&self) -> &'static str {
        "conformance.yaml:31: waiver for graph-parity on prod/apps-vms matches no finding"
    }
    fn check(&self, _: &Context) -> Vec<Finding> {
        Vec::new()
    }
}

/// Marks findings covered by active waivers; returns the waiver warnings.
pub fn apply(waivers: &[Waiver], findings: &mut [Finding], today: Date) -> Vec<Finding> {
    let mut warnings = Vec::new();
    for waiver in waivers {
        let Some(expires) = Date::parse(&waiver.expires.value) else {
            continue;
        };
        let expired = today > expires;
        let mut matched = 0;
        for f in findings.iter_mut().filter(|f| covers(waiver, f)) {
            matched += 1;
            if !expired && f.waived().is_none() {
                f.waive(Waived {
                    reason: waiver.reason.clone(),
                    expires: expires.to_string(),
                });
            }
        }
        let target = describe(waiver);
        let at = Span::new(FILE_NAME, waiver.rule.referenced.line() as u32);
        let stale = matched == 0;
        let (message, fix) = if stale {
            (
                format!("waiver for {target} matches no finding"),
                "delete the waiver, or correct its rule/cluster/kustomization/object".to_string(),
            )
        } else if expired {
            (
                format!("waiver for {target} expired on {expires}; its {matched} finding(s) count again"),
                "fix the findings, or renew the waiver with a new date and a reason that still holds".to_string(),
            )
        } else {
            continue;
        };
        let rule: &dyn Rule = if stale { &WaiverStale } else { &WaiverExpired };
        warnings.push(
            Finding::new(
                rule,
                waiver.cluster.clone().unwrap_or_else(|| "*".into()),
                waiver.kustomization.clone().unwrap_or_else(|| "*".into()),
                message,
            )
            .object_opt(waiver.object.as_ref())
            .at(at)
            .why(format!("the waiver said: {}", waiver.reason))
            .fix(fix)
            .build(),
        );
    }
    warnings
}

fn covers(w: &Waiver, f: &Finding) -> bool {
    w.rule.value == f.rule().as_str()
        && w.cluster.as_ref().is_none_or(|c| *c == f.cluster())
        && w.kustomization
            .as_ref()
            .is_none_or(|k| *k == f.kustomization())
        && w.object
            .as_ref()
            .is_none_or(|o| Some(o.as_str()) == f.object())
}

fn describe(w: &Waiver) -> String {
    let mut target = w.rule.value.clone();
    let place: Vec<&str> = [
        w.cluster.as_deref(),
        w.kustomization.as_deref(),
        w.object.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !place.is_empty() {
        target.push_str(&format!(" on {}", place.join("/")));
    }
    target
}
