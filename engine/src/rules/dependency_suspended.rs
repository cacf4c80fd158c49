//! `dependency-suspended`: a Kustomization depends on one that is suspended
//! (or applied by a suspended one), so on a cold start it never starts.

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::Span;

#[derive(Debug)]
pub(crate) struct DependencySuspended;

impl Rule for DependencySuspended {
    fn id(&self) -> RuleId {
        RuleId::DependencySuspended
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a Kustomization depends on one that is suspended (or applied only by a suspended one), so on a cold start it never starts"
    }
    fn example(&self) -> &'static str {
        "apps depends on databases, which is suspended (spec.suspend: true): on a cold start apps never starts, and neither do the 3 Kustomizations after it"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for a in &cx.analyses {
            let cluster = a.cluster;
            for tier in cluster.tiers.values() {
                if a.under_suspension(&tier.id) {
                    continue; // inert itself: judged as if resumed
                }
                for d in &tier.depends_on {
                    if !cluster.tiers.contains_key(&d.target) || !a.under_suspension(&d.target) {
                        continue;
                    }
                    let label = cluster.tier_label(&tier.id);
                    let dep = cluster.tier_label(&d.target);
                    let suspended = suspended_root(a, &d.target);
                    let how = if suspended == d.target {
                        format!("{dep}, which is suspended (spec.suspend: true)")
                    } else {
                        format!(
                            "{dep}, which is applied only by {}, which is suspended (spec.suspend: true)",
                            cluster.tier_label(&suspended)
                        )
                    };
                    let blocked = a
                        .live
                        .never_started()
                        .filter(|t| *t != &tier.id && a.order.applied_before(t).contains(&tier.id))
                        .count();
                    let after = match blocked {
                        0 => String::new(),
                        1 => ", and neither does the Kustomization after it".into(),
                        n => format!(", and neither do the {n} Kustomizations after it"),
                    };
                    let root = &cluster.tiers[&suspended];
                    let line = root
                        .spec
                        .path(&["spec", "suspend"])
                        .map_or(root.defined_at.line, |n| n.line);
                    out.push(
                        Finding::new(
                            self,
                            cluster.name.clone(),
                            label.clone(),
                            format!(
                                "{label} depends on {how}: on a cold start {label} never starts{after}"
                            ),
                        )
                        .at(Span::new(tier.defined_at.file.clone(), d.line))
                        .related(
                            Span::new(root.defined_at.file.clone(), line),
                            format!("Kustomization {}", cluster.tier_label(&suspended)),
                        )
                        .why(format!(
                            "a suspended Kustomization is never reconciled (Reconcile returns at once), so it is never Ready; checkDependencies keeps {label} waiting for it"
                        ))
                        .fix(format!(
                            "resume {} (remove `suspend: true`), or remove `dependsOn: {dep}` from {label} if it does not need it",
                            cluster.tier_label(&suspended)
                        ))
                        .root(crate::convergence::Root::Suspended(suspended.clone()).key(&cluster.name))
                        .build(),
                    );
                }
            }
        }
        out
    }
}

/// The suspended tier that keeps `id` from starting: itself or the nearest
/// ancestor that is suspended.
fn suspended_root(
    a: &crate::convergence::ClusterAnalysis,
    id: &crate::model::TierId,
) -> crate::model::TierId {
    let mut at = id.clone();
    for _ in 0..=a.cluster.tiers.len() {
        let t = &a.cluster.tiers[&at];
        if t.suspend {
            return at;
        }
        match &t.parent {
            Some(p) if a.cluster.tiers.contains_key(p) => at = p.clone(),
            _ => break,
        }
    }
    id.clone()
}
