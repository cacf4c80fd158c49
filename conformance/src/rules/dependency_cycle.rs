//! `dependency-cycle`: Kustomizations that depend on each other in a loop.

use super::{Context, Finding, Rule, Severity};
use crate::model::Span;

#[derive(Debug)]
pub struct DependencyCycle;

impl Rule for DependencyCycle {
    fn id(&self) -> &'static str {
        "dependency-cycle"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "dependsOn edges form a loop, so none of its members can ever become Ready"
    }
    fn example(&self) -> &'static str {
        "dependency cycle: platform → platform-config → platform (members: platform, platform-config)"
    }
    fn explain(&self) -> &'static str {
        "A Kustomization is applied only when all of its dependsOn entries are Ready. In a cycle each member waits \
for another member, so none is ever applied, and every Kustomization downstream of the cycle waits too. Flux reports \
this only as 'dependency not ready' on each member, never as a cycle. The finding names every member of the \
strongly connected component and one loop through it; it is reported on each member. Break the loop by removing \
the edge that points from the lower tier back up (a tier should depend only on tiers it needs applied first)."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for analysis in &cx.analyses {
            let cluster = analysis.cluster;
            for cycle in &analysis.cycles {
                let loop_text = cycle
                    .path
                    .iter()
                    .map(|id| cluster.tier_label(id))
                    .collect::<Vec<_>>()
                    .join(" → ");
                let members = cycle
                    .members
                    .iter()
                    .map(|id| cluster.tier_label(id))
                    .collect::<Vec<_>>()
                    .join(", ");
                for member in &cycle.members {
                    let tier = &cluster.tiers[member];
                    let label = cluster.tier_label(member);
                    // Point at this member's edge along the loop, or else at its
                    // first edge into the component.
                    let edge = cycle
                        .path
                        .windows(2)
                        .find(|w| w[0] == *member)
                        .and_then(|w| tier.depends_on.iter().find(|d| d.target == w[1]))
                        .or_else(|| {
                            tier.depends_on
                                .iter()
                                .find(|d| cycle.members.contains(&d.target))
                        });
                    let at = edge.map_or(tier.defined_at.clone(), |d| {
                        Span::new(tier.defined_at.file.clone(), d.line)
                    });
                    out.push(Finding::new(self, cluster.name.clone(), label.clone(), format!("dependency cycle: {loop_text} (members: {members})")).at(at).related_all(vec![(tier.defined_at.clone(), format!("Kustomization {label}"))]).why(format!(
                            "{label} waits for a Kustomization that (through the loop) waits for {label}: none of {members} is ever applied"
                        )).fix("remove the dependsOn edge that points back up the loop; a tier should depend only on tiers that must be applied before it"));
                }
            }
        }
        out
    }
}
