//! Rules: each reads the model and returns findings. A rule never prints,
//! never exits and never changes the model.
//!
//! Every rule has a stable id (the rule-id contract), a severity, a one-line
//! summary with an example (README, `conformance explain`) and a paragraph
//! saying which Flux behaviour it models.

mod dependency_cycle;
mod dependency_missing;
mod duplicate_object;
mod graph_parity;
mod render_failed;

use serde::Serialize;

use crate::model::{Model, Span};

/// How bad a finding is. Errors fail `check` (exit 1) and l0 trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    pub cluster: String,
    /// The Kustomization the finding belongs to, as the cluster labels it.
    pub kustomization: String,
    /// `Kind/namespace/name` of the object at fault, when there is one.
    pub object: Option<String>,
    /// Where to look first.
    pub at: Option<Span>,
    /// The second place: what pulls the first one in (usually the
    /// Kustomization's definition), with a label.
    pub related: Vec<(Span, String)>,
    /// What is wrong, in one sentence.
    pub message: String,
    /// Why it breaks in the cluster.
    pub why: String,
    /// What to change.
    pub fix: String,
    /// Extra text shown verbatim (a diff).
    pub detail: Option<String>,
}

/// A rule of the contract.
pub trait Rule: Sync {
    /// The stable id (`dependency-missing`).
    fn id(&self) -> &'static str;
    fn severity(&self) -> Severity;
    /// One line: what it catches.
    fn summary(&self) -> &'static str;
    /// One line showing a case it catches.
    fn example(&self) -> &'static str;
    /// A paragraph: the Flux behaviour behind the rule and how to fix a finding.
    fn explain(&self) -> &'static str;
    fn check(&self, model: &Model) -> Vec<Finding>;
}

/// Every rule, in a stable order.
pub fn all() -> Vec<&'static dyn Rule> {
    vec![
        &render_failed::RenderFailed,
        &dependency_missing::DependencyMissing,
        &dependency_cycle::DependencyCycle,
        &graph_parity::GraphParity,
        &duplicate_object::DuplicateObject,
    ]
}

/// The rule with this id.
pub fn by_id(id: &str) -> Option<&'static dyn Rule> {
    all().into_iter().find(|r| r.id() == id)
}

/// Runs every rule; findings sorted by cluster, Kustomization, rule, place.
pub fn run_all(model: &Model) -> Vec<Finding> {
    let mut findings: Vec<Finding> = all().iter().flat_map(|r| r.check(model)).collect();
    findings.sort_by(|a, b| {
        (
            &a.cluster,
            &a.kustomization,
            a.rule,
            &a.at,
            &a.object,
            &a.message,
        )
            .cmp(&(
                &b.cluster,
                &b.kustomization,
                b.rule,
                &b.at,
                &b.object,
                &b.message,
            ))
    });
    findings.dedup();
    findings
}
