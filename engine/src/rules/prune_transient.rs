//! `prune-transient`: an object moves from one tier to another, and the old
//! tier prunes (needs the previous revision: `--base`).

use std::collections::BTreeMap;

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::{Cluster, Object, Tier};

#[derive(Debug)]
pub(crate) struct PruneTransient;

type Key = (String, String, Option<String>, String);

/// Whether ssa's garbage collection leaves the object alone: annotated
/// `kustomize.toolkit.fluxcd.io/prune: disabled`, `reconcile: disabled` or
/// `ssa: ignore` (values compared case-insensitively), as the live object
/// carries them from the old owner.
fn prune_skipped(body: &crate::yaml::Node) -> bool {
    let annotation = |key: &str| {
        body.path(&["metadata", "annotations", key])
            .and_then(crate::yaml::Node::as_scalar_string)
    };
    [
        ("kustomize.toolkit.fluxcd.io/prune", "disabled"),
        ("kustomize.toolkit.fluxcd.io/reconcile", "disabled"),
        ("kustomize.toolkit.fluxcd.io/ssa", "ignore"),
    ]
    .iter()
    .any(|(key, value)| annotation(key).is_some_and(|v| v.eq_ignore_ascii_case(value)))
}

fn owners(cluster: &Cluster) -> BTreeMap<Key, (&Tier, &Object)> {
    let mut out = BTreeMap::new();
    for tier in cluster.tiers.values() {
        for o in tier.objects() {
            let id = &o.id;
            out.entry((
                id.group.clone(),
                id.kind.clone(),
                id.namespace.clone(),
                id.name.clone(),
            ))
            .or_insert((tier, o));
        }
    }
    out
}

impl Rule for PruneTransient {
    fn id(&self) -> RuleId {
        RuleId::PruneTransient
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "an object moves to another tier while its old tier has prune: true, so it is deleted and recreated (needs --base)"
    }
    fn example(&self) -> &'static str {
        "StorageProfile/longhorn-vm moves from platform-config (prune: true) to platform-config-cdi: deleted when platform-config reconciles, recreated when platform-config-cdi applies"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let Some(base) = cx.base else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for cluster in &cx.model.clusters {
            let Some(old_cluster) = base.clusters.iter().find(|c| c.name == cluster.name) else {
                continue;
            };
            let before = owners(old_cluster);
            for (key, (tier, object)) in owners(cluster) {
                let Some((old_tier, old_object)) = before.get(&key) else {
                    continue;
                };
                if old_tier.id == tier.id {
                    continue;
                }
                // The old tier's prune setting as it will be applied (or, if
                // it is gone, as it was: deleting it garbage-collects too).
                let prunes = cluster
                    .tiers
                    .get(&old_tier.id)
                    .map_or(old_tier.prune, |t| t.prune);
                if !prunes || prune_skipped(&old_object.body) {
                    continue;
                }
                // When the old owner depends on the new one, the new one
                // applies (and relabels) first: nothing is left to prune.
                let analysis = cx.analyses.iter().find(|a| a.cluster.name == cluster.name);
                if analysis.is_some_and(|a| a.order.ready_before(&old_tier.id).contains(&tier.id)) {
                    continue;
                }
                let label = cluster.tier_label(&tier.id);
                let old_label = old_cluster.tier_label(&old_tier.id);
                let mut related = vec![(tier.defined_at.clone(), format!("Kustomization {label}"))];
                if let Some(src) = &old_object.source {
                    related.push((
                        src.clone(),
                        format!("before: in {old_label} (base revision)"),
                    ));
                }
                out.push(Finding::new(self, cluster.name.clone(), label.clone(), format!(
                        "{} moves from {old_label} (prune: true) to {label}: deleted when {old_label} reconciles, recreated only when {label} applies",
                        object.id
                    )).object(object.id.to_string()).at(object.source.clone().or_else(|| Some(tier.defined_at.clone()))).related_all(related).why("between the prune and the re-apply the object does not exist; controllers that react to its absence (CDI recreating a StorageProfile with inferred defaults, a workload losing its ConfigMap) act in that window").fix(format!(
                        "merge with `prune: false` on {old_label}, check that the kustomize.toolkit.fluxcd.io/name label of {} moved to {label}, then restore `prune: true`",
                        object.id
                    )).build());
            }
        }
        out
    }
}
