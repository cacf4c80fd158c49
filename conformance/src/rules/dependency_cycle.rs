//! `dependency-cycle`: Kustomizations that depend on each other in a loop.

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::graph::Edge;
use crate::model::Span;

#[derive(Debug)]
pub struct DependencyCycle;

impl Rule for DependencyCycle {
    fn id(&self) -> RuleId {
        RuleId::DependencyCycle
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "dependsOn edges (and parents that wait for their children) form a loop, so none of its members can ever become Ready"
    }
    fn example(&self) -> &'static str {
        "dependency cycle: platform → platform-config → platform (members: platform, platform-config)"
    }
    fn explain(&self) -> &'static str {
        "A Kustomization is applied only when all of its dependsOn entries are Ready (checkDependencies). A \
Kustomization with wait: true is Ready only when every object it applied is healthy (checkHealth), including the \
child Kustomizations it applies, which kstatus reads as Current only once they are Ready at their generation; \
healthChecks naming a Kustomization do the same. So a child that depends on its own waiting parent waits for the \
parent while the parent waits for the child (checkHealth drops only the Kustomization itself from the set). In a \
cycle of such edges each member waits for another, none becomes Ready, and everything downstream waits too. Flux \
reports this only as 'dependency not ready' and health-check timeouts, never as a cycle; kustomize-controller's \
dependency.Sort logs 'circular dependency detected' and then drops source events for the whole set. The finding \
names every member of the strongly connected component and one loop through it (→ dependsOn, ⇢ waits for, under \
wait: true or healthChecks); it is reported on each member. A dependsOn entry with a readyExpr is left out: the \
expression replaces the Ready check. Break the loop by removing the edge that points back up (a tier should depend \
only on tiers it needs applied first), or, for a wait edge, give the parent healthChecks that leave the child out."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for analysis in &cx.analyses {
            let cluster = analysis.cluster;
            for cycle in &analysis.cycles {
                let mut loop_text = cluster.tier_label(&cycle.path[0]);
                for (next, edge) in cycle.path.iter().skip(1).zip(&cycle.edges) {
                    loop_text.push_str(match edge {
                        Edge::DependsOn => " → ",
                        Edge::Waits => " ⇢ ",
                    });
                    loop_text.push_str(&cluster.tier_label(next));
                }
                let waits = cycle.edges.contains(&Edge::Waits);
                if waits {
                    loop_text.push_str(" (⇢: waits for it to be Ready, wait: true)");
                }
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
                    // A member whose step along the loop is a wait edge: its
                    // `wait:` (or healthChecks) line.
                    let waits_here = cycle
                        .path
                        .iter()
                        .zip(&cycle.edges)
                        .any(|(from, e)| from == member && *e == Edge::Waits);
                    let wait_line = tier
                        .spec
                        .path(&["spec", "wait"])
                        .or_else(|| tier.spec.path(&["spec", "healthChecks"]))
                        .map(|n| n.line);
                    let at = match (waits_here, wait_line, edge) {
                        (true, Some(line), _) => Span::new(tier.defined_at.file.clone(), line),
                        (_, _, Some(d)) => Span::new(tier.defined_at.file.clone(), d.line),
                        _ => tier.defined_at.clone(),
                    };
                    let fix = if waits {
                        "remove the dependsOn edge that points back up the loop, or give the waiting parent `wait: false` with healthChecks that leave the child out"
                    } else {
                        "remove the dependsOn edge that points back up the loop; a tier should depend only on tiers that must be applied before it"
                    };
                    out.push(
                        Finding::new(
                            self,
                            cluster.name.clone(),
                            label.clone(),
                            format!("dependency cycle: {loop_text} (members: {members})"),
                        )
                        .at(at)
                        .related_all(vec![(
                            tier.defined_at.clone(),
                            format!("Kustomization {label}"),
                        )])
                        .why(format!(
                            "{label} waits for a Kustomization that (through the loop) waits for {label}: none of {members} ever becomes Ready"
                        ))
                        .fix(fix).build(),
                    );
                }
            }
        }
        out
    }
}
