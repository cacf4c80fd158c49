//! The tier graph of a cluster: Flux Kustomizations and their `dependsOn`
//! edges, with a canonical text form (one node or edge per line, sorted) that
//! is stable across runs and comparable across clusters.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Cluster, TierId};

/// Nodes and `dependsOn` edges of one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierGraph {
    /// Node → the attributes that change how Flux gates on it.
    pub nodes: BTreeMap<TierId, NodeAttrs>,
    /// dependent → dependencies (only those that exist as nodes are edges;
    /// the rest are `dependency-missing` findings).
    pub edges: BTreeMap<TierId, BTreeSet<TierId>>,
}

/// Node attributes that belong to the graph's meaning: whether the tier gates
/// dependents on health, and whether it prunes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeAttrs {
    pub wait: bool,
    pub prune: bool,
}

impl TierGraph {
    pub fn of(cluster: &Cluster) -> TierGraph {
        let nodes: BTreeMap<TierId, NodeAttrs> = cluster
            .tiers
            .values()
            .map(|t| {
                (
                    t.id.clone(),
                    NodeAttrs {
                        wait: t.wait,
                        prune: t.prune,
                    },
                )
            })
            .collect();
        let edges = cluster
            .tiers
            .values()
            .map(|t| {
                let deps = t
                    .depends_on
                    .iter()
                    .map(|d| d.target.clone())
                    .filter(|d| nodes.contains_key(d))
                    .collect();
                (t.id.clone(), deps)
            })
            .collect();
        TierGraph { nodes, edges }
    }

    /// The lines that describe one node: itself and its outgoing edges.
    pub fn lines_of(&self, id: &TierId) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(attrs) = self.nodes.get(id) {
            lines.push(format!(
                "kustomization {id} wait={} prune={}",
                attrs.wait, attrs.prune
            ));
        }
        for dep in self.edges.get(id).into_iter().flatten() {
            lines.push(format!("dependsOn {id} -> {dep}"));
        }
        lines
    }

    /// Canonical text: every node line and edge line, sorted, one per line.
    pub fn canonical(&self) -> String {
        let mut lines: Vec<String> = self.nodes.keys().flat_map(|id| self.lines_of(id)).collect();
        lines.sort();
        let mut text = lines.join("\n");
        text.push('\n');
        text
    }

    /// Strongly connected components that are cycles (more than one member,
    /// or a node that depends on itself), each as a cycle path that starts
    /// and ends at its smallest member, plus the full member list.
    pub fn cycles(&self) -> Vec<Cycle> {
        let mut tarjan = Tarjan::new(self);
        for id in self.nodes.keys() {
            if !tarjan.index.contains_key(id) {
                tarjan.visit(id);
            }
        }
        let mut cycles: Vec<Cycle> = tarjan
            .components
            .into_iter()
            .filter(|scc| {
                scc.len() > 1
                    || self
                        .edges
                        .get(&scc[0])
                        .is_some_and(|deps| deps.contains(&scc[0]))
            })
            .map(|mut members| {
                members.sort();
                let path = self.cycle_path(&members);
                Cycle { members, path }
            })
            .collect();
        cycles.sort_by(|a, b| a.members.cmp(&b.members));
        cycles
    }

    /// Follows the smallest in-component dependency from the smallest member
    /// until a node repeats.
    fn cycle_path(&self, members: &[TierId]) -> Vec<TierId> {
        let set: BTreeSet<&TierId> = members.iter().collect();
        let mut path = vec![members[0].clone()];
        let mut current = members[0].clone();
        loop {
            let next = self.edges[&current]
                .iter()
                .find(|d| set.contains(d))
                .cloned()
                .unwrap_or_else(|| members[0].clone());
            if let Some(pos) = path.iter().position(|p| *p == next) {
                let mut cycle = path.split_off(pos);
                cycle.push(next);
                return cycle;
            }
            path.push(next.clone());
            current = next;
        }
    }
}

/// A dependency cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// Every member of the strongly connected component, sorted.
    pub members: Vec<TierId>,
    /// One cycle through the component: first and last element equal.
    pub path: Vec<TierId>,
}

struct Tarjan<'g> {
    graph: &'g TierGraph,
    next: usize,
    index: BTreeMap<TierId, usize>,
    low: BTreeMap<TierId, usize>,
    stack: Vec<TierId>,
    on_stack: BTreeSet<TierId>,
    components: Vec<Vec<TierId>>,
}

impl<'g> Tarjan<'g> {
    fn new(graph: &'g TierGraph) -> Self {
        Tarjan {
            graph,
            next: 0,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            components: Vec::new(),
        }
    }

    // Recursion depth is bounded by the number of tiers in one cluster
    // (hundreds at most in real repositories).
    fn visit(&mut self, id: &TierId) {
        self.index.insert(id.clone(), self.next);
        self.low.insert(id.clone(), self.next);
        self.next += 1;
        self.stack.push(id.clone());
        self.on_stack.insert(id.clone());
        let graph = self.graph;
        for dep in graph.edges.get(id).into_iter().flatten() {
            if !self.index.contains_key(dep) {
                self.visit(dep);
                let low = self.low[id].min(self.low[dep]);
                self.low.insert(id.clone(), low);
            } else if self.on_stack.contains(dep) {
                let low = self.low[id].min(self.index[dep]);
                self.low.insert(id.clone(), low);
            }
        }
        if self.low[id] == self.index[id] {
            let mut component = Vec::new();
            while let Some(top) = self.stack.pop() {
                self.on_stack.remove(&top);
                let done = top == *id;
                component.push(top);
                if done {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)], nodes: &[&str]) -> TierGraph {
        let id = |n: &str| TierId::new("flux-system", n);
        let attrs = NodeAttrs {
            wait: true,
            prune: true,
        };
        TierGraph {
            nodes: nodes.iter().map(|n| (id(n), attrs)).collect(),
            edges: nodes
                .iter()
                .map(|n| {
                    let deps = edges
                        .iter()
                        .filter(|(a, _)| a == n)
                        .map(|(_, b)| id(b))
                        .collect();
                    (id(n), deps)
                })
                .collect(),
        }
    }

    #[test]
    fn canonical_text_is_sorted_and_stable() {
        let g = graph(&[("b", "a"), ("c", "a"), ("c", "b")], &["c", "a", "b"]);
        let text = g.canonical();
        assert_eq!(
            text,
            "dependsOn flux-system/b -> flux-system/a\n\
             dependsOn flux-system/c -> flux-system/a\n\
             dependsOn flux-system/c -> flux-system/b\n\
             kustomization flux-system/a wait=true prune=true\n\
             kustomization flux-system/b wait=true prune=true\n\
             kustomization flux-system/c wait=true prune=true\n"
        );
        assert_eq!(text, g.clone().canonical());
    }

    #[test]
    fn cycles_name_every_member() {
        let g = graph(
            &[("a", "b"), ("b", "c"), ("c", "a"), ("d", "a"), ("e", "e")],
            &["a", "b", "c", "d", "e"],
        );
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 2);
        let names: Vec<&str> = cycles[0].members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        let path: Vec<&str> = cycles[0].path.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(path, ["a", "b", "c", "a"]);
        assert_eq!(cycles[1].members.len(), 1);
        assert_eq!(cycles[1].path.len(), 2);
    }

    #[test]
    fn acyclic_graph_has_no_cycles() {
        assert!(
            graph(&[("b", "a"), ("c", "b")], &["a", "b", "c"])
                .cycles()
                .is_empty()
        );
    }
}
