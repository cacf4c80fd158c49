//! `graph-parity`: clusters of one parity group whose tier graphs differ.

use similar::TextDiff;

use super::{Context, Finding, Rule, Severity};
use crate::graph::TierGraph;
use crate::model::Cluster;

#[derive(Debug)]
pub struct GraphParity;

impl Rule for GraphParity {
    fn id(&self) -> &'static str {
        "graph-parity"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "clusters that should be alike (dev, prod) have different Kustomizations, dependsOn edges, wait or prune"
    }
    fn example(&self) -> &'static str {
        "prod: apps-vms dependsOn platform-config-cdi in dev but not in prod"
    }
    fn explain(&self) -> &'static str {
        "Promotion from dev to prod is only a rehearsal if both clusters reconcile the same graph: the same \
Kustomizations, the same dependsOn edges, and the same wait/prune gating. A missing edge in prod means prod applies \
a tier before what it needs is healthy, a race that dev never shows. Every discovered cluster is in one parity \
group unless conformance.yaml declares parity.groups (the first cluster of a group by name is the baseline). The comparison uses the canonical graph text that `conformance \
graph --cluster NAME` prints (paths are left out: overlays legitimately differ per cluster). Each finding shows a \
unified diff of the Kustomization's lines in both graphs. Make the graphs identical, or, for clusters that are not \
meant to match, declare parity groups in conformance.yaml."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let model = cx.model;
        let names: Vec<String> = model.clusters.iter().map(|c| c.name.clone()).collect();
        let mut out = Vec::new();
        for group in cx.config.parity_groups(&names) {
            let mut clusters: Vec<&Cluster> = model
                .clusters
                .iter()
                .filter(|c| group.contains(&c.name))
                .collect();
            clusters.sort_by(|a, b| a.name.cmp(&b.name));
            if let Some((baseline, others)) = clusters.split_first() {
                compare(self, baseline, others, &mut out);
            }
        }
        out
    }
}

fn compare(rule: &GraphParity, baseline: &Cluster, others: &[&Cluster], out: &mut Vec<Finding>) {
    let base_graph = TierGraph::of(baseline);
    for other in others {
        let graph = TierGraph::of(other);
        let ids: std::collections::BTreeSet<_> =
            base_graph.nodes.keys().chain(graph.nodes.keys()).collect();
        for id in ids {
            let base_lines = base_graph.lines_of(id);
            let lines = graph.lines_of(id);
            if base_lines == lines {
                continue;
            }
            let (tier_cluster, tier) = match other.tiers.get(id) {
                Some(t) => (*other, t),
                None => (baseline, &baseline.tiers[id]),
            };
            let label = tier_cluster.tier_label(id);
            let diff = unified(&base_lines, &lines, &baseline.name, &other.name);
            let message = match (base_lines.is_empty(), lines.is_empty()) {
                (false, true) => format!(
                    "Kustomization {label} exists in cluster {} but not in {}",
                    baseline.name, other.name
                ),
                (true, false) => format!(
                    "Kustomization {label} exists in cluster {} but not in {}",
                    other.name, baseline.name
                ),
                _ => format!(
                    "Kustomization {label} has different dependsOn/wait/prune in clusters {} and {}",
                    baseline.name, other.name
                ),
            };
            let mut related = Vec::new();
            if let Some(base_tier) = baseline.tiers.get(id)
                && !std::ptr::eq(base_tier, tier)
            {
                related.push((
                    base_tier.defined_at.clone(),
                    format!("{label} in cluster {}", baseline.name),
                ));
            }
            // Point at the field that differs: dependsOn when an edge
            // line differs, else wait/prune, else the object.
            let edges_differ = base_lines.iter().chain(&lines).any(|l| {
                l.starts_with("dependsOn ") && !(base_lines.contains(l) && lines.contains(l))
            });
            let field = if edges_differ { "dependsOn" } else { "wait" };
            let line = tier
                .spec
                .path(&["spec", field])
                .or_else(|| tier.spec.path(&["spec", "prune"]))
                .map_or(tier.defined_at.line, |n| n.line);
            out.push(Finding::new(rule, other.name.clone(), label, message).at(crate::model::Span::new(tier.defined_at.file.clone(), line)).related_all(related).why(format!(
                        "{} and {} are one parity group: a difference in the graph means one cluster orders or gates its tiers differently, so what was proven on one is not what runs on the other",
                        baseline.name, other.name
                    )).fix(format!(
                        "make the lines below identical in both clusters (see `conformance graph --cluster {}` and `--cluster {}`)",
                        baseline.name, other.name
                    )).detail(diff));
        }
    }
}

fn unified(a: &[String], b: &[String], a_name: &str, b_name: &str) -> String {
    let a = lines_text(a);
    let b = lines_text(b);
    TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header(a_name, b_name)
        .to_string()
}

fn lines_text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}
