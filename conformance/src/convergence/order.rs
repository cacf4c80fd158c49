//! The order Flux reconciles a cluster's tiers in on a cold start.
//!
//! A tier T can rely on what was *applied* before it is reconciled: the tiers
//! it depends on (transitively) and the tier that renders its Kustomization
//! object (its parent, with the parent's own ancestors). It can rely on what
//! is *Ready* only through `dependsOn`: kustomize-controller starts T once
//! every dependency is Ready (`checkDependencies`). A parent applies the
//! child Kustomization and the child starts at once, without waiting for the
//! parent's health.
//!
//! The relations are kept as one bit set per tier over the cluster's tiers
//! (indexed in their sorted order), so a deep chain costs n² bits, not n²
//! tier names.

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
    /// Tiers in an order Flux can apply them from a cold start (a tier
    /// after everything it needs, except along a cycle).
    pub sequence: Vec<TierId>,
}

impl Order {
    pub fn of(cluster: &Cluster) -> Order {
        let ids: Vec<TierId> = cluster.tiers.keys().cloned().collect();
        let index: BTreeMap<TierId, usize> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), i))
            .collect();
        let n = ids.len();
        // Children of a tier in the walk: its existing dependencies, in
        // order, then its parent (marked).
        let children: Vec<Vec<(usize, bool)>> = ids
            .iter()
            .map(|id| {
                let tier = &cluster.tiers[id];
                let mut c: Vec<(usize, bool)> = tier
                    .depends_on
                    .iter()
                    .filter_map(|d| index.get(&d.target).map(|&i| (i, false)))
                    .collect();
                if let Some(&p) = tier.parent.as_ref().and_then(|p| index.get(p)) {
                    c.push((p, true));
                }
                c
            })
            .collect();
        let mut applied = vec![Bits::new(n); n];
        let mut ready = vec![Bits::new(n); n];
        let mut done = vec![false; n];
        let mut visiting = vec![false; n];
        let mut sequence = Vec::with_capacity(n);
        // Depth-first, post-order, without recursion (a dependsOn chain may
        // be thousands deep). An edge back to a tier being visited (a cycle,
        // reported by dependency-cycle) contributes the tier itself but none
        // of its ancestors.
        for root in 0..n {
            if done[root] {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            visiting[root] = true;
            while let Some(&mut (node, ref mut pos)) = stack.last_mut() {
                if let Some(&(child, is_parent)) = children[node].get(*pos) {
                    if !done[child] && !visiting[child] {
                        visiting[child] = true;
                        stack.push((child, 0));
                        continue;
                    }
                    *pos += 1;
                    let (child_applied, child_ready) = if done[child] {
                        (applied[child].clone(), ready[child].clone())
                    } else {
                        (Bits::new(n), Bits::new(n))
                    };
                    applied[node].insert(child);
                    applied[node].union(&child_applied);
                    if !is_parent {
                        ready[node].insert(child);
                    }
                    ready[node].union(&child_ready);
                    continue;
                }
                applied[node].remove(node);
                ready[node].remove(node);
                visiting[node] = false;
                done[node] = true;
                sequence.push(ids[node].clone());
                stack.pop();
            }
        }
        Order {
            ids,
            index,
            applied,
            ready,
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
    pub fn ready_before(&self, id: &TierId) -> TierSet<'_> {
        self.set(&self.ready, id)
    }
}
