//! `conformance graph --format dot`: a cluster's tier graph for Graphviz
//! (`conformance graph --format dot | dot -Tsvg > tiers.svg`). Arrows run
//! in the order a cold start takes: from a dependency to the tier that
//! waits for it (`dependsOn`, solid), from a parent to the Kustomization
//! its build applies (dashed), and from a tier to what its Ready waits for
//! (`wait`/`healthChecks`, dotted). A tier that never becomes Ready on a
//! cold start is red, with the chain that says why as its tooltip.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::graph::TierGraph;
use crate::model::{Cluster, TierId};

/// The graph in DOT. `never_ready` is each tier that never becomes Ready,
/// with why.
pub fn render(cluster: &Cluster, graph: &TierGraph, never_ready: &[(TierId, String)]) -> String {
    let never: BTreeMap<&TierId, &str> = never_ready
        .iter()
        .map(|(id, why)| (id, why.as_str()))
        .collect();
    let name = |id: &TierId| quote(&cluster.tier_label(id));
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&cluster.name));
    out.push_str("  rankdir=LR;\n  node [shape=box, fontname=\"sans-serif\"];\n  edge [fontname=\"sans-serif\", fontsize=10];\n");
    for (id, attrs) in &graph.nodes {
        let mut flags = Vec::new();
        if attrs.wait {
            flags.push("wait");
        }
        if attrs.prune {
            flags.push("prune");
        }
        let mut label = cluster.tier_label(id);
        if !flags.is_empty() {
            label.push_str(&format!("\n{}", flags.join(" ")));
        }
        let at = cluster
            .tiers
            .get(id)
            .map(|t| t.defined_at.to_string())
            .unwrap_or_default();
        let mut node = format!("label={}", quote(&label));
        match never.get(id) {
            Some(why) => {
                let _ = write!(
                    node,
                    ", color=red, style=filled, fillcolor=\"#fde0e0\", tooltip={}",
                    quote(&format!("never Ready on a cold start: it {why} ({at})"))
                );
            }
            None => {
                let _ = write!(node, ", tooltip={}", quote(&at));
            }
        }
        let _ = writeln!(out, "  {} [{node}];", name(id));
    }
    for (dependent, deps) in &graph.edges {
        for dep in deps {
            let relaxed = graph.relaxed.contains(&(dependent.clone(), dep.clone()));
            let _ = writeln!(
                out,
                "  {} -> {} [label={}];",
                name(dep),
                name(dependent),
                quote(if relaxed {
                    "dependsOn (readyExpr)"
                } else {
                    "dependsOn"
                })
            );
        }
    }
    for (child, parent) in &graph.parents {
        let _ = writeln!(
            out,
            "  {} -> {} [style=dashed, label=\"applies\"];",
            name(parent),
            name(child)
        );
    }
    for (tier, waited) in &graph.waits {
        for w in waited {
            let _ = writeln!(
                out,
                "  {} -> {} [style=dotted, label=\"Ready waits for\"];",
                name(tier),
                name(w)
            );
        }
    }
    out.push_str("}\n");
    out
}

/// A DOT quoted string: `"` and `\` escaped, line breaks as `\n`.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quoting_keeps_dot_syntax() {
        assert_eq!(quote("a\"b\\c\nd\x1b"), "\"a\\\"b\\\\c\\nd\"");
    }
}
