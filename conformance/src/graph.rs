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
    /// Wait edges: a tier → the Kustomizations its own Ready waits for (its
    /// children under `wait: true`, or those its `healthChecks` name). Not
    /// part of the canonical text (`wait=` says it), but part of cycles.
    pub waits: BTreeMap<TierId, BTreeSet<TierId>>,
    /// `dependsOn` edges with a `readyExpr`: the expression replaces the
    /// Ready check, so they are left out of cycles.
    pub relaxed: BTreeSet<(TierId, TierId)>,
}

/// How one step of a cycle waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// `dependsOn`: the tier starts only once the next is Ready.
    DependsOn,
    /// The tier is Ready only once the next (a Kustomization it applies or
    /// health-checks) is Ready.
    Waits,
}

/// Node attributes that belong to the graph's meaning: whether the tier gates
/// dependents on health, and whether it prunes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeAttrs {
    /// The tier's `spec.wait`: its Ready waits for what it applies to be healthy.
    pub wait: bool,
    /// The tier's `spec.prune`: objects removed from its build are deleted.
    pub prune: bool,
}

impl TierGraph {
    /// The graph of a cluster: its tiers, their `dependsOn` edges and wait edges.
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
        let waits = wait_edges(cluster)
            .into_iter()
            .map(|(t, children)| (t.clone(), children.into_iter().cloned().collect()))
            .collect();
        let relaxed = cluster
            .tiers
            .values()
            .flat_map(|t| {
                t.depends_on
                    .iter()
                    .filter(|d| d.ready_expr)
                    .map(|d| (t.id.clone(), d.target.clone()))
            })
            .collect();
        TierGraph {
            nodes,
            edges,
            waits,
            relaxed,
        }
    }

    /// The steps out of `id` that make it wait for another tier's Ready:
    /// its dependencies (except entries whose `readyExpr` replaces the Ready
    /// check) and its wait edges.
    fn successors<'g>(&'g self, id: &TierId) -> impl Iterator<Item = (&'g TierId, Edge)> + 'g {
        let from = id.clone();
        let deps = self
            .edges
            .get(id)
            .into_iter()
            .flatten()
            .filter(move |d| !self.relaxed.contains(&(from.clone(), (*d).clone())))
            .map(|d| (d, Edge::DependsOn));
        let waits = self
            .waits
            .get(id)
            .into_iter()
            .flatten()
            .map(|c| (c, Edge::Waits));
        deps.chain(waits)
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
    /// or a node that waits for itself), over `dependsOn` and wait edges,
    /// each as a cycle path that starts and ends at its smallest member,
    /// plus the full member list.
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
            .filter(|scc| scc.len() > 1 || self.successors(&scc[0]).any(|(d, _)| *d == scc[0]))
            .map(|mut members| {
                members.sort();
                let (path, edges) = self.cycle_path(&members);
                Cycle {
                    members,
                    path,
                    edges,
                }
            })
            .collect();
        cycles.sort_by(|a, b| a.members.cmp(&b.members));
        cycles
    }

    /// Follows the smallest in-component successor (a dependency before a
    /// wait edge) from the smallest member until a node repeats.
    fn cycle_path(&self, members: &[TierId]) -> (Vec<TierId>, Vec<Edge>) {
        let set: BTreeSet<&TierId> = members.iter().collect();
        let mut path = vec![members[0].clone()];
        let mut edges = Vec::new();
        let mut current = members[0].clone();
        loop {
            let (next, edge) = self
                .successors(&current)
                .find(|(d, _)| set.contains(d))
                .map(|(d, e)| (d.clone(), e))
                .unwrap_or_else(|| (members[0].clone(), Edge::DependsOn));
            edges.push(edge);
            if let Some(pos) = path.iter().position(|p| *p == next) {
                let mut cycle = path.split_off(pos);
                let cycle_edges = edges.split_off(pos);
                cycle.push(next);
                return (cycle, cycle_edges);
            }
            path.push(next.clone());
            current = next;
        }
    }
}

/// Notes printed after the canonical text by `conformance graph` (comment
/// lines, not part of what parity compares): the suspended tiers, which
/// apply nothing on a cold start, with the tiers that depend on them.
pub fn notes(cluster: &Cluster) -> String {
    let mut out = String::new();
    for tier in cluster.tiers.values().filter(|t| t.suspend) {
        let dependents: Vec<String> = cluster
            .tiers
            .values()
            .filter(|t| t.depends_on.iter().any(|d| d.target == tier.id))
            .map(|t| t.id.to_string())
            .collect();
        out.push_str(&format!(
            "# suspended: {} (spec.suspend: true): applies nothing on a cold start",
            tier.id
        ));
        if !dependents.is_empty() {
            out.push_str(&format!("; never Ready for {}", dependents.join(", ")));
        }
        out.push('\n');
    }
    out
}

/// A dependency cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// Every member of the strongly connected component, sorted.
    pub members: Vec<TierId>,
    /// One cycle through the component: first and last element equal.
    pub path: Vec<TierId>,
    /// How each step of `path` waits (one fewer than `path`).
    pub edges: Vec<Edge>,
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

    /// Tarjan's algorithm with an explicit stack of frames (a node and its
    /// successors not yet looked at), so a dependsOn chain or cycle of any
    /// length needs no call stack.
    fn visit(&mut self, root: &TierId) {
        let mut frames: Vec<(TierId, Vec<TierId>)> = Vec::new();
        self.open(root);
        frames.push((root.clone(), self.successors_of(root)));
        while let Some((id, pending)) = frames.last_mut() {
            if let Some(dep) = pending.pop() {
                let id = id.clone();
                if !self.index.contains_key(&dep) {
                    self.open(&dep);
                    let next = self.successors_of(&dep);
                    frames.push((dep, next));
                } else if self.on_stack.contains(&dep) {
                    let low = self.low[&id].min(self.index[&dep]);
                    self.low.insert(id, low);
                }
                continue;
            }
            let id = id.clone();
            frames.pop();
            if self.low[&id] == self.index[&id] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(&top);
                    let done = top == id;
                    component.push(top);
                    if done {
                        break;
                    }
                }
                self.components.push(component);
            }
            // Back in the caller's frame: its low link takes this one's.
            if let Some((parent, _)) = frames.last() {
                let low = self.low[parent].min(self.low[&id]);
                self.low.insert(parent.clone(), low);
            }
        }
    }

    fn open(&mut self, id: &TierId) {
        self.index.insert(id.clone(), self.next);
        self.low.insert(id.clone(), self.next);
        self.next += 1;
        self.stack.push(id.clone());
        self.on_stack.insert(id.clone());
    }

    /// The successors, reversed so that popping visits them in order.
    fn successors_of(&self, id: &TierId) -> Vec<TierId> {
        let mut next: Vec<TierId> = self.graph.successors(id).map(|(d, _)| d.clone()).collect();
        next.reverse();
        next
    }
}

/// For every tier, the Kustomizations whose Ready its own Ready waits for:
/// with `wait: true`, every child it applies (kstatus reads a Flux
/// Kustomization as Current only once it is Ready at its generation);
/// otherwise those its `healthChecks` name. A Kustomization never waits for
/// itself (`checkHealth` drops it from the set).
pub fn wait_edges(cluster: &Cluster) -> BTreeMap<&TierId, Vec<&TierId>> {
    let mut children: BTreeMap<&TierId, Vec<&TierId>> = BTreeMap::new();
    for t in cluster.tiers.values() {
        if let Some(p) = &t.parent {
            children.entry(p).or_default().push(&t.id);
        }
    }
    let mut out = BTreeMap::new();
    for tier in cluster.tiers.values() {
        let waits: Vec<&TierId> = if tier.wait {
            children
                .get(&tier.id)
                .map(|c| c.iter().copied().filter(|c| **c != tier.id).collect())
                .unwrap_or_default()
        } else {
            tier.spec
                .path(&["spec", "healthChecks"])
                .map(|n| n.as_seq())
                .unwrap_or_default()
                .iter()
                .filter(|e| {
                    e.str_at(&["kind"]).as_deref() == Some("Kustomization")
                        && e.str_at(&["apiVersion"])
                            .is_some_and(|a| a.starts_with("kustomize.toolkit.fluxcd.io/"))
                })
                .filter_map(|e| {
                    let name = e.str_at(&["name"])?;
                    let ns = e
                        .str_at(&["namespace"])
                        .filter(|n| !n.is_empty())
                        .unwrap_or_else(|| tier.id.namespace.clone());
                    cluster
                        .tiers
                        .get_key_value(&TierId::new(ns, name))
                        .map(|(k, _)| k)
                })
                .filter(|c| **c != tier.id)
                .collect()
        };
        out.insert(&tier.id, waits);
    }
    out
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
            waits: BTreeMap::new(),
            relaxed: BTreeSet::new(),
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
