//! `duplicate-object`: two tiers of one cluster render the same object.

use std::collections::HashMap;

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::{Object, Tier};

#[derive(Debug)]
pub struct DuplicateObject;

impl Rule for DuplicateObject {
    fn id(&self) -> RuleId {
        RuleId::DuplicateObject
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn other_severities(&self) -> Option<&'static str> {
        Some("a warning when the copies are identical but for their labels")
    }
    fn summary(&self) -> &'static str {
        "two Kustomizations of one cluster render the same group/kind/namespace/name, so they fight over it"
    }
    fn example(&self) -> &'static str {
        "StorageProfile/longhorn-vm is rendered by 2 Kustomizations: platform-config, platform-config-cdi"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let model = cx.model;
        let mut out = Vec::new();
        for cluster in &model.clusters {
            // The target cluster is part of the key: tiers with
            // spec.kubeConfig apply to another API server.
            type Key<'o> = (Option<String>, &'o str, &'o str, Option<&'o str>, &'o str);
            // Keyed by borrowed ids, the target computed once per tier, and
            // tier labels only for objects that more than one tier renders:
            // one tier of 200,000 objects costs one pass.
            let mut holders: HashMap<Key, Vec<(&Tier, &Object)>> = HashMap::new();
            for tier in cluster.tiers.values() {
                let target = tier.remote_target();
                for object in tier.objects() {
                    let id = &object.id;
                    let unresolved = id.name.contains("${")
                        || id.namespace.as_deref().is_some_and(|ns| ns.contains("${"));
                    if unresolved && tier.post_build.is_some() {
                        continue;
                    }
                    holders
                        .entry((
                            target.clone(),
                            id.group.as_str(),
                            id.kind.as_str(),
                            id.namespace.as_deref(),
                            id.name.as_str(),
                        ))
                        .or_default()
                        .push((tier, object));
                }
            }
            let mut groups: Vec<(Key, Vec<(&Tier, &Object)>)> = holders
                .into_iter()
                .filter(|(_, found)| found.iter().any(|(t, _)| t.id != found[0].0.id))
                .collect();
            groups.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, found) in &groups {
                let mut tiers: Vec<String> = found
                    .iter()
                    .map(|(t, _)| cluster.tier_label(&t.id))
                    .collect();
                tiers.sort();
                tiers.dedup();
                if tiers.len() < 2 {
                    continue;
                }
                // kustomize-controller applies an object annotated
                // `kustomize.toolkit.fluxcd.io/ssa: IfNotPresent` only when it
                // does not exist, and one annotated `Ignore` never
                // (ssautil's apply options in the Kustomization reconciler):
                // with at most one copy applied for real, nothing flips.
                let applied: std::collections::BTreeSet<&crate::model::TierId> = found
                    .iter()
                    .filter(|(_, o)| !create_only(o))
                    .map(|(t, _)| &t.id)
                    .collect();
                if applied.len() < 2 {
                    continue;
                }
                let copies: Vec<&Object> = found
                    .iter()
                    .filter(|(_, o)| !create_only(o))
                    .map(|(_, o)| *o)
                    .collect();
                out.push(self.finding(cluster, found, &tiers, identical(&copies)));
            }
        }
        out
    }
}

/// How many Kustomizations and places a finding names; the rest are
/// counted (an object 4,000 tiers render is one finding of bounded size).
const NAMED: usize = 8;

impl DuplicateObject {
    /// One finding for an object several tiers render: reported at the
    /// first copy outside the first tier, naming the others.
    fn finding(
        &self,
        cluster: &crate::model::Cluster,
        found: &[(&Tier, &Object)],
        tiers: &[String],
        identical: bool,
    ) -> Finding {
        let (first_tier, first) = found[0];
        let object = first.id.to_string();
        let (tier, copy) = found
            .iter()
            .find(|(t, _)| t.id != first_tier.id)
            .copied()
            .unwrap_or(found[0]);
        let label = cluster.tier_label(&tier.id);
        let mut named: Vec<String> = tiers.iter().take(NAMED).cloned().collect();
        if tiers.len() > NAMED {
            named.push(format!("and {} more", tiers.len() - NAMED));
        }
        let mut related = vec![(
            first
                .source
                .clone()
                .unwrap_or_else(|| first_tier.defined_at.clone()),
            format!("also rendered by {}", cluster.tier_label(&first_tier.id)),
        )];
        let mut seen: std::collections::BTreeSet<&crate::model::TierId> =
            [&first_tier.id, &tier.id].into_iter().collect();
        for (other, o) in found {
            if related.len() >= NAMED {
                break;
            }
            if seen.insert(&other.id) {
                related.push((
                    o.source.clone().unwrap_or_else(|| other.defined_at.clone()),
                    format!("also rendered by {}", cluster.tier_label(&other.id)),
                ));
            }
        }
        let named = named.join(", ");
        let f = Finding::new(
            self,
            cluster.name.clone(),
            label,
            format!(
                "{object} is rendered by {} Kustomizations: {named}",
                tiers.len()
            ),
        )
        .object(object.clone())
        .at(copy
            .source
            .clone()
            .or_else(|| Some(tier.defined_at.clone())))
        .related_all(related)
        .fix(format!("keep {object} in exactly one of {named}"));
        if identical {
            // The same fields from every tier: server-side apply converges
            // (one field manager, the same values); only Flux's ownership
            // labels flip. A risk on removal, not a failure.
            f.why("the copies are identical but for their labels (a shared component, a move half done): every reconcile applies the same fields and only Flux's ownership labels flip, so nothing fails; but deleting either Kustomization, or dropping the object from it under prune: true, deletes the object the other still declares, until the other's next reconcile creates it again")
                .severity(Severity::Warning)
                .build()
        } else {
            f.why("each reconcile takes the object over from the other (fields and ownership label flip), and a prune by either can delete the copy the other still applies")
                .build()
        }
    }
}

/// Whether every copy declares the same object, labels aside (the owner
/// labels Flux stamps, a Kustomization's `commonMetadata`).
fn identical(copies: &[&Object]) -> bool {
    let bare = |o: &Object| {
        let mut json = o.body.to_json();
        if let Some(meta) = json.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            meta.remove("labels");
        }
        json
    };
    let first = copies.first().map(|o| bare(o));
    copies.iter().skip(1).all(|o| Some(bare(o)) == first)
}

/// Whether Flux applies the object only if absent (`ssa: IfNotPresent`) or
/// not at all (`ssa: Ignore`).
fn create_only(object: &Object) -> bool {
    object
        .body
        .path(&["metadata", "annotations", "kustomize.toolkit.fluxcd.io/ssa"])
        .and_then(crate::yaml::Node::as_str)
        .is_some_and(|v| v == "IfNotPresent" || v == "Ignore")
}
