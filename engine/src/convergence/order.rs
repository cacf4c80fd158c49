//! The order Flux reconciles a cluster's tiers in on a cold start.
//!
//! A tier T can rely on what was *applied* before it is reconciled: the tiers
//! it depends on (transitively) and the tier that renders its Kustomization
//! object (its parent, with the parent's own ancestors). It can rely on what
//! is *Ready* only through `dependsOn`: kustomize-controller starts T once
//! every dependency is Ready (`checkDependencies`). A parent applies the
//! child Kustomization and the child starts at once, without waiting for the
//! parent's health. A parent that waits (`wait: true`, or `healthChecks`
//! naming Kustomizations) is Ready only once those children are Ready
//! (kstatus reads a Flux Kustomization as Current only when Ready at its
//! generation), so whoever depends on it may rely on everything they apply.
//!
//! Two events per tier are ordered: its start (the reconcile that builds
//! and applies it) and its Ready. Each event knows which tiers are applied
//! and which are Ready by then, kept as one bit set per event over the
//! cluster's tiers (indexed in their sorted order), so a deep chain costs n²
//! bits, not n² tier names.

use std::collections::BTreeMap;

use crate::model::{Cluster, TierId};

/// A set of tiers of one cluster, as bits over the tier index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    fn union(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, bits)| {
            (0..64)
                .filter(move |b| bits & (1 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }
}

/// A set of tiers, read-only.
#[derive(Debug, Clone, Copy)]
pub struct TierSet<'o> {
    order: &'o Order,
    bits: Option<&'o Bits>,
}

impl<'o> TierSet<'o> {
    /// Whether the tier is a member (`false` for a tier the cluster does not have).
    pub fn contains(&self, id: &TierId) -> bool {
        match (self.bits, self.order.index.get(id)) {
            (Some(bits), Some(&i)) => bits.contains(i),
            _ => false,
        }
    }

    /// The members, in tier order.
    pub fn iter(&self) -> impl Iterator<Item = &'o TierId> + 'o {
        let order = self.order;
        self.bits
            .into_iter()
            .flat_map(|b| b.iter())
            .map(move |i| &order.ids[i])
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.bits.is_none_or(|b| b.0.iter().all(|w| *w == 0))
    }
}

/// Ordering facts of one cluster.
#[derive(Debug, Clone, Default)]
pub struct Order {
    /// Tier index → id (the cluster's sorted order).
    ids: Vec<TierId>,
    index: BTreeMap<TierId, usize>,
    /// Tiers whose objects are applied before T is reconciled.
    applied: Vec<Bits>,
    /// Tiers that are Ready (so healthy when they gate) before T starts.
    ready: Vec<Bits>,
    /// Tiers applied by the time T is Ready (T itself included).
    applied_when_ready: Vec<Bits>,
    /// Tiers in an order Flux can apply them from a cold start (a tier
    /// after everything it needs, except along a cycle).
    pub sequence: Vec<TierId>,
}

/// One ordering event: a tier starts, or a tier is Ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Start(usize),
    Ready(usize),
}

impl Order {
    /// Works out the cold-start ordering of a cluster's tiers, from their `dependsOn`,
    /// their parents and what their Ready waits for.
    pub fn of(cluster: &Cluster) -> Order {
        let ids: Vec<TierId> = cluster.tiers.keys().cloned().collect();
        let index: BTreeMap<TierId, usize> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), i))
            .collect();
        let n = ids.len();
        let node = |e: Event| match e {
            Event::Start(i) => i,
            Event::Ready(i) => n + i,
        };
        // What each event waits for. A start waits for every dependency's
        // Ready and for its parent's start (the parent applies it); a Ready
        // waits for its own start and for the Ready of the Kustomizations
        // its health check covers.
        let mut before: Vec<Vec<Event>> = vec![Vec::new(); 2 * n];
        let waits = crate::graph::wait_edges(cluster);
        for (i, id) in ids.iter().enumerate() {
            let tier = &cluster.tiers[id];
            let start = &mut before[i];
            start.extend(
                tier.depends_on
                    .iter()
                    .filter_map(|d| index.get(&d.target).map(|&j| Event::Ready(j))),
            );
            if let Some(&p) = tier.applied_by().and_then(|p| index.get(p)) {
                start.push(Event::Start(p));
            }
            let ready = &mut before[n + i];
            ready.push(Event::Start(i));
            ready.extend(
                waits[id]
                    .iter()
                    .filter_map(|c| index.get(*c).map(|&j| Event::Ready(j))),
            );
        }
        // Per event: tiers applied, tiers Ready.
        let mut applied = vec![Bits::new(n); 2 * n];
        let mut ready = vec![Bits::new(n); 2 * n];
        let mut done = vec![false; 2 * n];
        let mut visiting = vec![false; 2 * n];
        let mut sequence = Vec::with_capacity(n);
        // Depth-first, post-order, without recursion (a dependsOn chain may
        // be thousands deep). An edge back to an event being visited (a
        // cycle, reported by dependency-cycle) contributes nothing: along a
        // cycle nothing is ever Ready.
        let roots = (0..n).map(Event::Ready).chain((0..n).map(Event::Start));
        for root in roots {
            let r = node(root);
            if done[r] {
                continue;
            }
            let mut stack: Vec<(Event, usize)> = vec![(root, 0)];
            visiting[r] = true;
            while let Some(&mut (event, ref mut pos)) = stack.last_mut() {
                let k = node(event);
                if let Some(&child) = before[k].get(*pos) {
                    let c = node(child);
                    *pos += 1;
                    if !done[c] && !visiting[c] {
                        visiting[c] = true;
                        *pos -= 1;
                        stack.push((child, 0));
                        continue;
                    }
                    if !done[c] {
                        continue; // a back edge
                    }
                    let (a, rd) = (applied[c].clone(), ready[c].clone());
                    applied[k].union(&a);
                    ready[k].union(&rd);
                    // A parent's start: the parent has applied this tier's
                    // Kustomization, so it is applied itself.
                    if let (Event::Start(_), Event::Start(p)) = (event, child) {
                        applied[k].insert(p);
                    }
                    continue;
                }
                match event {
                    Event::Start(i) => {
                        applied[k].remove(i);
                        ready[k].remove(i);
                        sequence.push(ids[i].clone());
                    }
                    Event::Ready(i) => {
                        applied[k].insert(i);
                        ready[k].insert(i);
                    }
                }
                visiting[k] = false;
                done[k] = true;
                stack.pop();
            }
        }
        let applied_when_ready = applied.split_off(n);
        ready.truncate(n);
        Order {
            ids,
            index,
            applied,
            ready,
            applied_when_ready,
            sequence,
        }
    }

    fn set<'o>(&'o self, sets: &'o [Bits], id: &TierId) -> TierSet<'o> {
        TierSet {
            order: self,
            bits: self.index.get(id).map(|&i| &sets[i]),
        }
    }

    /// Tiers whose objects are applied before `id` is reconciled.
    pub fn applied_before(&self, id: &TierId) -> TierSet<'_> {
        self.set(&self.applied, id)
    }

    /// Tiers that are Ready before `id` starts.
    pub(crate) fn ready_before(&self, id: &TierId) -> TierSet<'_> {
        self.set(&self.ready, id)
    }

    /// Whether `a` can only be Ready after `b` has been applied: `b` is
    /// applied before `a` starts, or `a`'s Ready waits for it. Then a
    /// `dependsOn: a` on `b` would close a cycle.
    pub(crate) fn needs_first(&self, a: &TierId, b: &TierId) -> bool {
        a == b || self.set(&self.applied_when_ready, a).contains(b)
    }
}
