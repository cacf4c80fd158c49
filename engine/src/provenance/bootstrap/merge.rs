//! Entries that are one cluster: those one bootstrap step applies
//! together, and a FluxInstance's sync applied by the cluster it syncs.
//!
//! Discovery finds a cluster per entry (a directory holding a sync
//! Kustomization). A deploy script that applies a shared `flux/config` and
//! then `prod/flux/config` builds one cluster from both: the production
//! tiers depend on the base tiers the first directory brings. Checked
//! apart, they are two half-clusters, one without its base tiers.
//!
//! The rule: when one script (or Taskfile, justfile, Makefile) applies the
//! entry directories of several clusters (`kubectl apply -k DIR`, `-f
//! DIR|FILE` of the entry or its sync file, `kustomize build DIR |
//! kubectl apply`), a cluster whose entry path is a *base* of another's
//! (each of its path segments is in the other's: `flux/config` in
//! `prod/flux/config`) joins that cluster. Two clusters of their own
//! (`dev/flux/config`, `prod/flux/config`), which one script may apply to
//! different contexts, stay apart. Documented steps (a README's blocks)
//! never merge: a page describes every cluster's set-up side by side. A
//! tier both bring is the cluster's own (its overlay is applied over the
//! base).

use std::collections::BTreeMap;

use super::scripts::{Scripts, Target};
use crate::model::{Cluster, Entry, Model};

/// Merges the clusters each script applies together, and a FluxInstance's
/// cluster into the cluster that applies the FluxInstance; returns what
/// discovery should say.
pub fn apply(model: &mut Model, scripts: &Scripts) -> Vec<String> {
    let mut notes = self_applied_instances(model);
    notes.extend(script_steps(model, scripts));
    notes
}

/// A FluxInstance (or a flux-instance chart's HelmRelease) that a cluster's
/// own tiers apply syncs into that cluster: the Flux Operator it installs
/// takes over the sync (a migration from `flux bootstrap` to the operator),
/// and what its path builds is already that cluster's. Discovery enters
/// the instance's sync path as a cluster of its own; it joins the cluster
/// that applies it.
fn self_applied_instances(model: &mut Model) -> Vec<String> {
    let mut notes = Vec::new();
    let mut removed: Vec<usize> = Vec::new();
    for b in 0..model.clusters.len() {
        let Entry::Directory { path } = &model.clusters[b].entry else {
            continue;
        };
        let applier = (0..model.clusters.len()).find_map(|a| {
            let candidate = a != b
                && !removed.contains(&a)
                && matches!(model.clusters[a].entry, Entry::SyncKustomization { .. });
            candidate
                .then(|| applies_instance(&model.clusters[a], path))
                .flatten()
                .map(|at| (a, at))
        });
        let Some((a, at)) = applier else { continue };
        let instance = model.clusters[b].clone();
        let name = model.clusters[a].name.clone();
        merge_into(&mut model.clusters[a], &instance);
        notes.push(format!(
            "clusters `{}` and `{name}` are one cluster, `{name}`: {name} applies the FluxInstance that syncs {} ({at})",
            instance.name,
            instance.entry.path()
        ));
        removed.push(b);
    }
    removed.sort_unstable();
    for i in removed.into_iter().rev() {
        model.clusters.remove(i);
    }
    notes
}

/// Where a cluster's tiers render a FluxInstance, or a flux-instance
/// HelmRelease, whose sync path is `path` (`file:line`).
fn applies_instance(cluster: &Cluster, path: &str) -> Option<String> {
    cluster
        .tiers
        .values()
        .flat_map(|t| t.objects())
        .find_map(|o| {
            let sync = match (o.id.group.as_str(), o.id.kind.as_str()) {
                ("fluxcd.controlplane.io", "FluxInstance") => o.body.path(&["spec", "sync"]),
                ("helm.toolkit.fluxcd.io", "HelmRelease") => {
                    o.body.path(&["spec", "values", "instance", "sync"])
                }
                _ => None,
            }?;
            let written = sync.str_at(&["path"])?;
            let (normalized, escapes) = crate::repo::normalize("", &written);
            (!escapes && normalized == path).then(|| {
                o.source
                    .as_ref()
                    .map(|s| format!("{}:{}", s.file, sync.line))
                    .unwrap_or_else(|| o.id.to_string())
            })
        })
}

/// Per script file (documented steps aside): the clusters whose entries
/// it applies, by index, each with the line of the first command that
/// applies it, in order.
pub(crate) fn entries_applied<'s>(
    model: &Model,
    scripts: &'s Scripts,
) -> BTreeMap<&'s str, Vec<(usize, u32)>> {
    let mut by_file: BTreeMap<&str, Vec<(usize, u32)>> = BTreeMap::new();
    for command in scripts.commands.iter().filter(|c| !c.documented) {
        let dir = match &command.target {
            Target::Kustomization(d) | Target::Path(d) | Target::PathIn(d, _) => d,
            _ => continue,
        };
        for (i, cluster) in model.clusters.iter().enumerate() {
            if applies_entry(cluster, dir) {
                let applied = by_file.entry(command.at.file.as_str()).or_default();
                if !applied.iter().any(|(j, _)| *j == i) {
                    applied.push((i, command.at.line));
                }
            }
        }
    }
    by_file
}

/// Merges the clusters each script applies together.
fn script_steps(model: &mut Model, scripts: &Scripts) -> Vec<String> {
    let by_file = entries_applied(model, scripts);
    // base cluster index -> (the clusters it joins, where).
    let mut joins: BTreeMap<usize, Vec<(usize, String)>> = BTreeMap::new();
    for (file, applied) in &by_file {
        for (a, a_line) in applied {
            for (b, b_line) in applied {
                if a == b {
                    continue;
                }
                let (base, own) = (
                    model.clusters[*a].entry.path(),
                    model.clusters[*b].entry.path(),
                );
                if is_base(base, own) {
                    let why = format!(
                        "{file} applies {base} (line {a_line}) and {own} (line {b_line}) into one cluster"
                    );
                    let list = joins.entry(*a).or_default();
                    if !list.iter().any(|(j, _)| j == b) {
                        list.push((*b, why));
                    }
                }
            }
        }
    }
    if joins.is_empty() {
        return Vec::new();
    }
    let mut notes = Vec::new();
    let mut removed = Vec::new();
    for (base, into) in &joins {
        // A base that joins a cluster which itself joins another is merged
        // where that one goes; keep it simple: only bases that are not
        // themselves joined into by anything merge.
        if joins.values().flatten().any(|(j, _)| j == base) {
            continue;
        }
        let base_cluster = model.clusters[*base].clone();
        for (target, why) in into {
            let target_name = model.clusters[*target].name.clone();
            merge_into(&mut model.clusters[*target], &base_cluster);
            notes.push(format!(
                "clusters `{}` and `{target_name}` are one cluster, `{target_name}`: {why}",
                base_cluster.name
            ));
        }
        // A script that applies the base without any cluster it joins
        // sets up a cluster of the base alone (a dev cluster beside prod's
        // base and overlay): it stays.
        let alone = by_file.iter().find(|(_, applied)| {
            applied.iter().any(|(i, _)| i == base)
                && !applied
                    .iter()
                    .any(|(i, _)| into.iter().any(|(t, _)| t == i))
        });
        if let Some((file, _)) = alone {
            notes.push(format!(
                "`{}` is also a cluster of its own: {file} applies it without the clusters it joins",
                base_cluster.name
            ));
            continue;
        }
        removed.push(*base);
    }
    removed.sort_unstable();
    for i in removed.into_iter().rev() {
        model.clusters.remove(i);
    }
    notes
}

/// Whether a script's target directory applies the cluster's entry: the
/// entry directory itself, or the sync Kustomization's file or directory.
fn applies_entry(cluster: &Cluster, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    if dir == cluster.entry.path() {
        return true;
    }
    let Entry::SyncKustomization { tier, .. } = &cluster.entry else {
        return false;
    };
    let Some(sync) = cluster.tiers.get(tier) else {
        return false;
    };
    let file = sync.defined_at.file.as_str();
    let parent = file.rsplit_once('/').map_or("", |(d, _)| d);
    dir == file || dir == parent
}

/// Whether every path segment of `base` is one of `own`'s, and `own` has
/// more: `flux/config` is a base of `prod/flux/config`.
pub(crate) fn is_base(base: &str, own: &str) -> bool {
    let own_segments: Vec<&str> = own.split('/').collect();
    let base_segments: Vec<&str> = base.split('/').collect();
    base != own
        && base_segments.len() < own_segments.len()
        && base_segments.iter().all(|s| own_segments.contains(s))
}

/// Adds the base's tiers the cluster does not bring itself (the cluster's
/// own are applied after the base's and win).
fn merge_into(cluster: &mut Cluster, base: &Cluster) {
    for (id, tier) in &base.tiers {
        cluster
            .tiers
            .entry(id.clone())
            .or_insert_with(|| tier.clone());
    }
    let mut seen = std::collections::BTreeSet::new();
    cluster.ambiguous_names = cluster
        .tiers
        .keys()
        .filter(|id| !seen.insert(id.name.clone()))
        .map(|id| id.name.clone())
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_is_a_subset_of_the_others_segments() {
        assert!(is_base("flux/config", "prod/flux/config"));
        assert!(is_base("clusters/base", "clusters/base/prod"));
        assert!(!is_base("dev/flux/config", "prod/flux/config"));
        assert!(!is_base("prod/flux/config", "flux/config"));
        assert!(!is_base("flux/config", "flux/config"));
    }
}
