//! `dependency-cycle`: Kustomizations that depend on each other in a loop.

use std::collections::{HashMap, HashSet};

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::graph::Edge;
use crate::model::{Cluster, Span, TierId};

/// How many steps of a loop, and names of a member list, a finding spells
/// out; the rest is counted.
const SHOWN: usize = 12;

/// The loop as `a → b ⇢ c → a`, its middle elided past [`SHOWN`] steps.
fn loop_text(cluster: &Cluster, path: &[TierId], edges: &[Edge]) -> String {
    let arrow = |e: &Edge| match e {
        Edge::DependsOn => " → ",
        Edge::Waits => " ⇢ ",
        Edge::AppliedBy => " ⇠ ",
    };
    let steps = edges.len();
    let mut text = cluster.tier_label(&path[0]);
    for (i, (next, edge)) in path.iter().skip(1).zip(edges).enumerate() {
        if steps > SHOWN && i == SHOWN / 2 {
            text.push_str(&format!(" → … ({} more Kustomizations) …", steps - SHOWN));
        }
        if steps > SHOWN && i >= SHOWN / 2 && i < steps - SHOWN / 2 {
            continue;
        }
        text.push_str(arrow(edge));
        text.push_str(&cluster.tier_label(next));
    }
    let mut notes = Vec::new();
    if edges.contains(&Edge::Waits) {
        notes.push("⇢: waits for it to be Ready, wait: true");
    }
    if edges.contains(&Edge::AppliedBy) {
        notes.push("⇠: is applied by it, so starts only once it has applied");
    }
    if !notes.is_empty() {
        text.push_str(&format!(" ({})", notes.join("; ")));
    }
    text
}

/// `a, b, c`, or the first [`SHOWN`] and how many more.
fn bounded_list(items: impl Iterator<Item = String>, len: usize) -> String {
    let shown: Vec<String> = items.take(SHOWN).collect();
    if len > SHOWN {
        format!("{}, and {} more", shown.join(", "), len - SHOWN)
    } else {
        shown.join(", ")
    }
}

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
        "dependsOn edges (and parents that wait for their children, or depend on a Kustomization they apply) form a loop, so none of its members can ever become Ready"
    }
    fn example(&self) -> &'static str {
        "dependency cycle: platform → platform-config → platform (members: platform, platform-config)"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for analysis in &cx.analyses {
            let cluster = analysis.cluster;
            for cycle in &analysis.cycles {
                let loop_text = loop_text(cluster, &cycle.path, &cycle.edges);
                let waits = cycle.edges.contains(&Edge::Waits);
                let members = bounded_list(
                    cycle.members.iter().map(|id| cluster.tier_label(id)),
                    cycle.members.len(),
                );
                // Each member's step along the loop, found once (a cycle may
                // have thousands of members).
                let next_on_loop: HashMap<&TierId, (&TierId, Edge)> = cycle
                    .path
                    .windows(2)
                    .zip(&cycle.edges)
                    .map(|(w, e)| (&w[0], (&w[1], *e)))
                    .collect();
                let in_cycle: HashSet<&TierId> = cycle.members.iter().collect();
                let applies = cycle.edges.contains(&Edge::AppliedBy);
                let fix = if applies {
                    "remove the dependsOn on a Kustomization this one applies itself (its children are created only once it has applied); to order work under it, let the children depend on each other"
                } else if waits {
                    "remove the dependsOn edge that points back up the loop, or give the waiting parent `wait: false` with healthChecks that leave the child out"
                } else {
                    "remove the dependsOn edge that points back up the loop; a tier should depend only on tiers that must be applied before it"
                };
                let cause = super::Cause {
                    key: format!("cycle:{}", cycle.members[0]),
                    text: format!(
                        "a dependency cycle of {} Kustomizations: {loop_text}",
                        cycle.members.len()
                    ),
                    fix: fix.to_string(),
                };
                for member in &cycle.members {
                    let tier = &cluster.tiers[member];
                    let label = cluster.tier_label(member);
                    // Point at this member's edge along the loop, or else at its
                    // first edge into the component.
                    let step = next_on_loop.get(member);
                    let edge = step
                        .and_then(|(next, _)| tier.depends_on.iter().find(|d| d.target == **next))
                        .or_else(|| {
                            tier.depends_on
                                .iter()
                                .find(|d| in_cycle.contains(&d.target))
                        });
                    // A member whose step along the loop is a wait edge: its
                    // `wait:` (or healthChecks) line.
                    let waits_here = step.is_some_and(|(_, e)| *e == Edge::Waits);
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
                        .fix(fix)
                        .cause(cause.clone())
                        .root(
                            crate::convergence::Root::Cycle(cycle.members[0].clone())
                                .key(&cluster.name),
                        )
                        .build(),
                    );
                }
            }
        }
        out
    }
}
