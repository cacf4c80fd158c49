//! Rules: each reads the model and returns findings. A rule never prints,
//! never exits and never changes the model.
//!
//! Every rule has a stable id (the rule-id contract), a severity, a one-line
//! summary with an example (README, `conformance explain`) and a paragraph
//! saying which Flux behaviour it models.

mod api;
pub mod baseline;
mod budget_exceeded;
mod cold_start;
mod cold_start_race;
mod crd_unavailable;
mod dependency_cycle;
mod dependency_missing;
mod dependency_suspended;
mod duplicate_object;
mod finding;
mod graph_parity;
mod health_gate;
mod helmrelease_invalid;
mod id;
mod namespace_missing;
mod namespace_unspecified;
pub mod placement;
mod prune_transient;
mod remote_base;
mod render_failed;
mod roots;
mod schema_violation;
mod second_order_crd;
pub(crate) mod sops_decryption;
mod substitution;
pub(crate) mod tier_order_script;
pub(crate) mod toolchain_skew;
mod unresolved_reference;
pub mod waivers;

pub use cold_start::kind_rule;
pub use finding::{Blocked, Cause, Configured, Finding, FindingBuilder, Severity, Waived};
pub use graph_parity::{Groups as ParityGroups, Parity, groups as parity_groups};
pub use id::RuleId;
pub use substitution::Substitution;

use std::collections::BTreeMap;

use serde_saphyr::Spanned;

use crate::convergence::ClusterAnalysis;
use crate::model::Model;
use crate::provenance::Catalog;
use crate::provenance::distribution;
use crate::repo::RepoIndex;

/// A rule of the contract.
pub trait Rule: Sync {
    /// The stable id (`dependency-missing`).
    fn id(&self) -> RuleId;
    /// The default severity of its findings (`severity:` in conformance.yaml overrides it).
    fn severity(&self) -> Severity;
    /// The findings whose severity differs from [`Rule::severity`], in a
    /// few words (`explain`'s heading says so): `None` when all share it.
    fn other_severities(&self) -> Option<&'static str> {
        None
    }
    /// One line: what it catches.
    fn summary(&self) -> &'static str;
    /// One line showing a case it catches.
    fn example(&self) -> &'static str;
    /// The rule's documentation (`conformance explain`): the sections
    /// What it catches, Why Flux fails (the controller function it models),
    /// Example and Fix, from `rules/docs/<id>.md` ([`RuleId::doc`]).
    fn explain(&self) -> &'static str {
        self.id().doc()
    }
    /// Runs the rule over the context: its findings.
    fn check(&self, cx: &Context) -> Vec<Finding>;
}

/// What every rule reads: the model, the sections of the configuration the
/// rules use, the effective catalog, the repository index (rules never read
/// the disk themselves), and the convergence analysis of each cluster
/// (computed once). The session builds it.
#[derive(Debug)]
pub struct Context<'s> {
    /// The discovered, rendered and substituted clusters.
    pub model: &'s Model,
    /// The sections of conformance.yaml the rules read.
    pub settings: Settings<'s>,
    /// The embedded catalog extended with conformance.yaml's `catalog`.
    pub catalog: &'s Catalog,
    /// The repository's paths and loaded YAML files.
    pub index: &'s RepoIndex,
    /// One per cluster, in the model's order.
    pub analyses: Vec<ClusterAnalysis<'s>>,
    /// The previous revision's model, when the run compares (`--base`).
    pub base: Option<&'s Model>,
}

/// The sections of conformance.yaml that rules read, borrowed from the
/// configuration (which aggregates them; the rules do not depend on it).
#[derive(Debug, Clone, Copy)]
pub struct Settings<'s> {
    /// `parity:`: which clusters must have identical tier graphs.
    pub parity: &'s Parity,
    /// `policies:`: placement and field policies.
    pub policies: &'s placement::cfg::Policies,
    /// `bootstrap:`: the script whose tier list must match the graph.
    pub tier_script: Option<&'s tier_order_script::TierScript>,
    /// `toolchain:`: the files pinning the kubectl version.
    pub toolchain: Option<&'s toolchain_skew::Toolchain>,
    /// `substitution:`: how the cluster's kustomize-controller substitutes.
    pub substitution: &'s Substitution,
    /// `waivers:`: findings accepted until a date.
    pub waivers: &'s [waivers::cfg::Waiver],
    /// `severity:` per rule id.
    pub severity: &'s BTreeMap<String, Spanned<Configured>>,
    /// Declared Kubernetes versions.
    pub kubernetes: distribution::Declared<'s>,
}

/// Every rule, in a stable order.
pub fn all() -> Vec<&'static dyn Rule> {
    vec![
        &render_failed::RenderFailed,
        &dependency_missing::DependencyMissing,
        &dependency_cycle::DependencyCycle,
        &graph_parity::GraphParity,
        &duplicate_object::DuplicateObject,
        &crd_unavailable::CrdUnavailable,
        &second_order_crd::SecondOrderCrd,
        &health_gate::HealthGate,
        &cold_start_race::ColdStartRace,
        &dependency_suspended::DependencySuspended,
        &namespace_missing::NamespaceMissing,
        &namespace_unspecified::NamespaceUnspecified,
        &unresolved_reference::UnresolvedReference,
        &remote_base::RemoteBase,
        &sops_decryption::SopsDecryption,
        &substitution::SubstitutionHazard,
        &substitution::SubstitutionUnaudited,
        &tier_order_script::TierOrderScript,
        &toolchain_skew::ToolchainSkew,
        &placement::KindPlacement,
        &placement::FieldPolicyRule,
        &prune_transient::PruneTransient,
        &schema_violation::SchemaViolation,
        &api::ApiRemoved,
        &api::ApiDeprecated,
        &waivers::WaiverExpired,
        &waivers::WaiverStale,
        &helmrelease_invalid::HelmReleaseInvalid,
        &budget_exceeded::BudgetExceeded,
    ]
}

/// The rule with this id.
pub fn by_id(id: &str) -> Option<&'static dyn Rule> {
    let id = RuleId::parse(id)?;
    all().into_iter().find(|r| r.id() == id)
}

/// Whether `id` is a rule's id (what conformance.yaml's `severity:` and
/// `waivers:` are checked against).
pub fn is_rule_id(id: &str) -> bool {
    by_id(id).is_some()
}

/// Runs every rule; findings sorted by cluster, Kustomization, rule, place.
pub(crate) fn run_all(cx: &Context) -> Vec<Finding> {
    // Rules are independent readers of the context: they run in parallel
    // (the findings are sorted below).
    use rayon::prelude::*;
    let mut findings: Vec<Finding> = all()
        .par_iter()
        .flat_map_iter(|r| {
            crate::progress::show(&format!("checking {}", r.id().as_str()));
            let started = std::time::Instant::now();
            let found = r.check(cx);
            crate::stats::stat(&format!("rule {}", r.id().as_str()), started);
            found
        })
        .collect();
    // `severity:` in conformance.yaml overrides the rules' defaults, or
    // turns a rule off.
    findings.retain(|f| {
        cx.settings
            .severity
            .get(f.rule().as_str())
            .is_none_or(|s| s.value != Configured::Off)
    });
    for f in &mut findings {
        match cx.settings.severity.get(f.rule().as_str()).map(|s| s.value) {
            Some(Configured::Error) => f.set_severity(Severity::Error),
            Some(Configured::Warning) => f.set_severity(Severity::Warning),
            Some(Configured::Off) | None => {}
        }
    }
    let today = waivers::cfg::Date::today();
    let warnings = waivers::apply(cx.settings.waivers, &mut findings, today);
    findings.extend(warnings);
    findings.sort_by(|a, b| {
        (
            a.cluster(),
            a.kustomization(),
            a.rule(),
            a.at(),
            a.object(),
            a.message(),
        )
            .cmp(&(
                b.cluster(),
                b.kustomization(),
                b.rule(),
                b.at(),
                b.object(),
                b.message(),
            ))
    });
    findings.dedup();
    roots::link(&mut findings);
    roots::attach_blocks(cx, &mut findings);
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_id_has_exactly_one_rule() {
        let ids: Vec<RuleId> = all().iter().map(|r| r.id()).collect();
        for id in RuleId::ALL {
            let n = ids.iter().filter(|i| *i == id).count();
            assert_eq!(n, 1, "{id} is the id of {n} rules");
        }
        assert_eq!(ids.len(), RuleId::ALL.len());
        for rule in all() {
            assert_eq!(by_id(rule.id().as_str()).map(|r| r.id()), Some(rule.id()));
        }
    }
}
