//! Roots and what they block: one error per cause.
//!
//! A deadlock's root (a dependency cycle, a suspended tier, a tier that
//! waits for itself, a loop) keeps every Kustomization downstream of it
//! from becoming Ready on a cold start: kustomize-controller's
//! `checkDependencies` requeues a Kustomization whose `dependsOn` is not
//! Ready, and a parent with `wait: true` is not Ready until what it applies
//! is (`kustomization_controller.go`, `reconcile` → `checkHealth`). Fixing
//! the root fixes them all, so their findings are context on the root
//! (`caused_by`, listed in its `blocks`), not errors of their own: the exit
//! status and every count are roots.

use std::collections::{BTreeMap, BTreeSet};

use super::Context;
use super::finding::{Blocked, Finding};

/// Links each finding that follows from a root to the root's first
/// reported finding (the one not waived), by id, and then to that one's
/// own root when the root itself follows from another (a tier waiting for
/// itself downstream of a cycle): `caused_by` always names a finding that
/// follows from nothing. A consequence whose root was not reported
/// (waived, or no rule reports it) stays a finding of its own.
pub(super) fn link(findings: &mut [Finding]) {
    let mut roots: BTreeMap<String, usize> = BTreeMap::new();
    for (i, f) in findings.iter().enumerate() {
        if let Some(key) = f.root_key()
            && f.waived().is_none()
        {
            roots.entry(key.to_string()).or_insert(i);
        }
    }
    // Each finding's direct root, by index.
    let direct: Vec<Option<usize>> = findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            f.consequence_key()
                .filter(|k| f.root_key() != Some(*k))
                .and_then(|k| roots.get(k).copied())
                .filter(|&r| r != i)
        })
        .collect();
    let ids: Vec<String> = findings.iter().map(Finding::id).collect();
    for i in 0..findings.len() {
        let Some(mut at) = direct[i] else { continue };
        // Up the chain to a finding that follows from nothing (a chain
        // that comes back stops where it would repeat).
        let mut seen = BTreeSet::from([i, at]);
        while let Some(next) = direct[at] {
            if !seen.insert(next) {
                break;
            }
            at = next;
        }
        if at != i {
            findings[i].set_caused_by(ids[at].clone());
            // A consequence is as bad as its root: one a warning root
            // (an assumption, a feature the repository may have had on)
            // blocks is no certain failure either.
            let severity = findings[at].severity();
            findings[i].set_severity(severity);
        }
    }
}

/// Fills each root finding's `blocks`: the Kustomizations the cold-start
/// simulation leaves never Ready with a chain that leads to the root
/// ([`crate::convergence::ClusterAnalysis::root_of`]), and those holding
/// a finding that follows from it, each with the objects those findings
/// name. The root's own Kustomization, and the other members of a
/// dependency cycle (each reported as a root), are not listed.
pub(super) fn attach_blocks(cx: &Context, findings: &mut [Finding]) {
    let ids: BTreeMap<String, usize> = findings
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.is_blocked())
        .map(|(i, f)| (f.id(), i))
        .collect();
    // The finding each root key resolves to, and the Kustomizations that
    // are roots of that key themselves.
    let mut by_key: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rooted: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (i, f) in findings.iter().enumerate() {
        let Some(key) = f.root_key() else { continue };
        if f.waived().is_some() {
            continue;
        }
        if !f.is_blocked() {
            rooted.insert((f.cluster(), f.kustomization()));
        }
        let top = f
            .caused_by()
            .and_then(|id| ids.get(id).copied())
            .unwrap_or(i);
        by_key.entry(key).or_insert(top);
    }
    let mut blocks: BTreeMap<usize, Vec<Blocked>> = BTreeMap::new();
    for a in &cx.analyses {
        let cluster = a.cluster.name.as_str();
        for id in &a.order.sequence {
            if a.live.ready(id) || a.under_suspension(id) {
                continue;
            }
            let chain = a.live.chain(id);
            let Some(root) = a.root_of(&chain) else {
                continue;
            };
            let key = root.key(cluster);
            let Some(&r) = by_key.get(key.as_str()) else {
                continue;
            };
            let label = a.cluster.tier_label(id);
            if rooted.contains(&(cluster, label.as_str())) {
                continue;
            }
            blocks.entry(r).or_default().push(Blocked {
                kustomization: label,
                at: a.cluster.tiers.get(id).map(|t| t.defined_at.clone()),
                objects: Vec::new(),
            });
        }
    }
    // Where each blocked entry of each root is, and the objects listed in
    // it, so adding a consequence is a lookup (a root may block thousands).
    let mut entry: BTreeMap<(usize, String), usize> = BTreeMap::new();
    for (&r, list) in &blocks {
        for (i, b) in list.iter().enumerate() {
            entry.insert((r, b.kustomization.clone()), i);
        }
    }
    let mut listed: BTreeSet<(usize, usize, &str)> = BTreeSet::new();
    let mut places: Option<BTreeMap<(&str, String), crate::model::Span>> = None;
    for f in findings.iter() {
        let Some(&r) = f.caused_by().and_then(|id| ids.get(id)) else {
            continue;
        };
        // A member of the root itself (a cycle's other tiers) is not
        // blocked by it: it is the root.
        if rooted.contains(&(f.cluster(), f.kustomization())) {
            continue;
        }
        let list = blocks.entry(r).or_default();
        let at = *entry
            .entry((r, f.kustomization().to_string()))
            .or_insert_with(|| {
                // Each tier's place by its label, computed once.
                let places = places.get_or_insert_with(|| {
                    cx.analyses
                        .iter()
                        .flat_map(|a| {
                            a.cluster.tiers.values().map(move |t| {
                                (
                                    (a.cluster.name.as_str(), a.cluster.tier_label(&t.id)),
                                    t.defined_at.clone(),
                                )
                            })
                        })
                        .collect()
                });
                list.push(Blocked {
                    kustomization: f.kustomization().to_string(),
                    at: places
                        .get(&(f.cluster(), f.kustomization().to_string()))
                        .cloned(),
                    objects: Vec::new(),
                });
                list.len() - 1
            });
        if let Some(object) = f.object()
            && listed.insert((r, at, object))
        {
            list[at].objects.push(object.to_string());
        }
    }
    for (r, list) in blocks {
        findings[r].set_blocks(list);
    }
}
