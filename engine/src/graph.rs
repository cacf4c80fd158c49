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
    /// Apply edges: a tier → the tier whose build renders its Kustomization
    /// (its parent). Not part of the canonical text, but part of cycles.
    pub parents: BTreeMap<TierId, TierId>,
}

/// How one step of a cycle waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// `dependsOn`: the tier starts only once the next is Ready.
    DependsOn,
    /// The tier is Ready only once the next (a Kustomization it applies or
    /// health-checks) is Ready.
    Waits,
    /// The tier's Kustomization object is applied by the next: it starts
    /// only once the next has applied.
    AppliedBy,
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
        let parents = cluster
            .tiers
            .values()
            .filter_map(|t| {
                let p = t.applied_by()?;
                (nodes.contains_key(p) && *p != t.id).then(|| (t.id.clone(), p.clone()))
            })
            .collect();
        TierGraph {
            nodes,
            edges,
            waits,
            relaxed,
            parents,
        }
    }

    /// The steps out of event `at` ([`Event`]) to the events it waits for,
    /// with the tier edge each is (`None`: a tier's Ready waits for its own
    /// start). A tier starts (builds and applies) once every dependency is
    /// Ready (`checkDependencies`; an entry whose `readyExpr` replaces the
    /// Ready check is left out) and its parent has applied it; it is Ready
    /// once it has applied and what its health check covers is Ready
    /// (`checkHealth`).
    fn events_after(&self, at: &Event) -> Vec<(Event, Option<Edge>)> {
        let (id, ready) = at;
        let mut out = Vec::new();
        if *ready {
            out.push(((id.clone(), false), None));
            for c in self.waits.get(id).into_iter().flatten() {
                out.push(((c.clone(), true), Some(Edge::Waits)));
            }
        } else {
            for d in self.edges.get(id).into_iter().flatten() {
                if !self.relaxed.contains(&(id.clone(), d.clone())) {
                    out.push(((d.clone(), true), Some(Edge::DependsOn)));
                }
            }
            if let Some(p) = self.parents.get(id) {
                out.push(((p.clone(), false), Some(Edge::AppliedBy)));
            }
        }
        out
    }

    /// The lines that describe one node: itself and its outgoing edges.
    pub(crate) fn lines_of(&self, id: &TierId) -> Vec<String> {
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

    /// The dependency cycles: strongly connected components of the graph of
    /// events (a tier starting, a tier Ready) and what each waits for
    /// ([`Self::events_after`]), as the tiers they involve, each with one
    /// cycle path that starts and ends at a member. A parent that depends on
    /// a Kustomization it applies (directly or through children) is one: it
    /// starts only once the child is Ready, and the child exists only once
    /// the parent has applied. A parent that merely waits for its children
    /// is not: it applies them first.
    pub fn cycles(&self) -> Vec<Cycle> {
        let starts = self
            .nodes
            .keys()
            .flat_map(|id| [(id.clone(), true), (id.clone(), false)]);
        let components = strongly_connected(starts, |e| {
            let mut next: Vec<Event> = self.events_after(e).into_iter().map(|(e, _)| e).collect();
            next.reverse();
            next
        });
        let mut cycles: Vec<Cycle> = components
            .into_iter()
            .filter(|scc| scc.len() > 1)
            .map(|scc| {
                let events: BTreeSet<Event> = scc.into_iter().collect();
                let members: Vec<TierId> = events
                    .iter()
                    .map(|(id, _)| id.clone())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                let (path, edges) = self.cycle_path(&events);
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

    /// Follows the first in-component successor (a dependency before a
    /// wait edge before an apply edge) from the smallest event until an
    /// event repeats; the steps between tiers are the cycle.
    fn cycle_path(&self, events: &BTreeSet<Event>) -> (Vec<TierId>, Vec<Edge>) {
        let first = events
            .iter()
            .next()
            .cloned()
            .expect("a component has events");
        let mut seen: Vec<Event> = vec![first.clone()];
        let mut steps: Vec<Option<Edge>> = Vec::new();
        let mut current = first;
        loop {
            let mut after = self.events_after(&current);
            after.sort_by_key(|(_, e)| match e {
                Some(Edge::DependsOn) => 0,
                Some(Edge::Waits) => 1,
                Some(Edge::AppliedBy) => 2,
                None => 3,
            });
            let Some((next, edge)) = after.into_iter().find(|(e, _)| events.contains(e)) else {
                break;
            };
            steps.push(edge);
            if let Some(pos) = seen.iter().position(|e| *e == next) {
                let mut cycle = seen.split_off(pos);
                let cycle_steps = steps.split_off(pos);
                cycle.push(next);
                // Tier steps only: a tier's Ready waiting for its own start
                // is no step between tiers.
                let mut path = vec![cycle[0].0.clone()];
                let mut edges = Vec::new();
                for (e, edge) in cycle.iter().skip(1).zip(cycle_steps) {
                    if let Some(edge) = edge {
                        path.push(e.0.clone());
                        edges.push(edge);
                    }
                }
                return (path, edges);
            }
            seen.push(next.clone());
            current = next;
        }
        (vec![current.0.clone()], Vec::new())
    }
}

/// A tier starting (`false`) or Ready (`true`).
type Event = (TierId, bool);

/// Tarjan's strongly connected components of the graph `succ` describes
/// (successors reversed, so that popping visits them in order), with an
/// explicit stack of frames (a node and its successors not yet looked at),
/// so a dependsOn chain or cycle of any length needs no call stack.
fn strongly_connected<N: Ord + Clone>(
    nodes: impl Iterator<Item = N>,
    succ: impl Fn(&N) -> Vec<N>,
) -> Vec<Vec<N>> {
    let mut next = 0usize;
    let mut index: BTreeMap<N, usize> = BTreeMap::new();
    let mut low: BTreeMap<N, usize> = BTreeMap::new();
    let mut stack: Vec<N> = Vec::new();
    let mut on_stack: BTreeSet<N> = BTreeSet::new();
    let mut components = Vec::new();
    let mut open = |id: &N,
                    index: &mut BTreeMap<N, usize>,
                    low: &mut BTreeMap<N, usize>,
                    stack: &mut Vec<N>,
                    on_stack: &mut BTreeSet<N>| {
        index.insert(id.clone(), next);
        low.insert(id.clone(), next);
        next += 1;
        stack.push(id.clone());
        on_stack.insert(id.clone());
    };
    for root in nodes {
        if index.contains_key(&root) {
            continue;
        }
        let mut frames: Vec<(N, Vec<N>)> = Vec::new();
        open(&root, &mut index, &mut low, &mut stack, &mut on_stack);
        frames.push((root.clone(), succ(&root)));
        while let Some((id, pending)) = frames.last_mut() {
            if let Some(dep) = pending.pop() {
                let id = id.clone();
                if !index.contains_key(&dep) {
                    open(&dep, &mut index, &mut low, &mut stack, &mut on_stack);
                    let after = succ(&dep);
                    frames.push((dep, after));
                } else if on_stack.contains(&dep) {
                    let l = low[&id].min(index[&dep]);
                    low.insert(id, l);
                }
                continue;
            }
            let id = id.clone();
            frames.pop();
            if low[&id] == index[&id] {
                let mut component = Vec::new();
                while let Some(top) = stack.pop() {
                    on_stack.remove(&top);
                    let done = top == id;
                    component.push(top);
                    if done {
                        break;
                    }
                }
                components.push(component);
            }
            // Back in the caller's frame: its low link takes this one's.
            if let Some((parent, _)) = frames.last() {
                let l = low[parent].min(low[&id]);
                low.insert(parent.clone(), l);
            }
        }
    }
    components
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

/// For every tier, the Kustomizations whose Ready its own Ready waits for:
/// with `wait: true`, every child it applies (kstatus reads a Flux
/// Kustomization as Current only once it is Ready at its generation);
/// otherwise those its `healthChecks` name. A Kustomization never waits for
/// itself (`checkHealth` drops it from the set).
pub(crate) fn wait_edges(cluster: &Cluster) -> BTreeMap<&TierId, Vec<&TierId>> {
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
            parents: BTreeMap::new(),
        }
    }

    fn id(n: &str) -> TierId {
        TierId::new("flux-system", n)
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
    fn depending_on_a_kustomization_it_applies_is_a_cycle() {
        // infra applies cni (and, through cni, cilium-config) and depends on
        // cilium-config: it never starts, so neither is ever created.
        let mut g = graph(
            &[("infra", "cilium-config")],
            &["infra", "cni", "cilium-config"],
        );
        g.parents.insert(id("cni"), id("infra"));
        g.parents.insert(id("cilium-config"), id("cni"));
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        let names: Vec<&str> = cycles[0].members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["cilium-config", "cni", "infra"]);
        let path: Vec<&str> = cycles[0].path.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(path, ["cilium-config", "cni", "infra", "cilium-config"]);
        assert_eq!(
            cycles[0].edges,
            [Edge::AppliedBy, Edge::AppliedBy, Edge::DependsOn]
        );
    }

    #[test]
    fn a_parent_waiting_for_its_children_is_no_cycle() {
        // wait: true on the parent: it applies the child, then waits for it.
        let mut g = graph(&[], &["apps", "app"]);
        g.parents.insert(id("app"), id("apps"));
        g.waits.insert(id("apps"), [id("app")].into());
        assert!(g.cycles().is_empty());
        // ... unless the child depends on it (the classic wait cycle).
        g.edges.insert(id("app"), [id("apps")].into());
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].edges, [Edge::DependsOn, Edge::Waits]);
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
