//! `conformance build` and `conformance diff`: the objects Flux would apply,
//! per cluster and Kustomization, after every build step and postBuild
//! substitution, in apply order (tiers in the order a cold start reconciles
//! them; within a tier, Flux's stages: CRDs, Namespaces and ClusterRoles,
//! then `*Class` kinds, then the rest, as fluxcd/pkg ssa `ApplyAllStaged`
//! applies them), Secret values redacted; and what changed between two
//! revisions.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};
use similar::TextDiff;

use crate::model::{Cluster, Model, Object, ObjectId, Tier, TierId, TierState};
use crate::yaml::{Node, Value as Y};

/// What a Secret's values are replaced with.
pub const REDACTED: &str = "**redacted**";

/// The stage of an object in Flux's staged apply (1, 2 or 3).
fn stage(o: &Object) -> u8 {
    let k = o.id.kind.as_str();
    if matches!(k, "CustomResourceDefinition" | "Namespace" | "ClusterRole") {
        1
    } else if k.ends_with("Class") {
        2
    } else {
        3
    }
}

/// An object as written out: a Secret's `data` and `stringData` values
/// redacted (and a SOPS envelope's too).
pub fn redacted(o: &Object) -> Node {
    let mut body = o.body.clone();
    if o.id.group.is_empty()
        && o.id.kind == "Secret"
        && let Y::Map(entries) = &mut body.value
    {
        for (k, v) in entries.iter_mut() {
            if (k == "data" || k == "stringData")
                && let Y::Map(values) = &mut v.value
            {
                for (_, value) in values.iter_mut() {
                    *value = Node::new(Y::String(REDACTED.into()));
                }
            }
        }
    }
    body
}

/// A tier's objects in apply order.
pub fn in_apply_order(tier: &Tier) -> Vec<&Object> {
    let mut objects: Vec<&Object> = tier.objects().iter().collect();
    objects.sort_by_key(|o| stage(o)); // stable: build order within a stage
    objects
}

/// `conformance build`: the tiers of a cluster (one, with `only`) in the
/// order a cold start reconciles them.
///
/// Also returns, for each chosen tier that does not build, one line saying
/// so (`Kustomization apps does not build: FILE:LINE: why`): the command
/// fails (exit 1) when there is any, as `check` does.
pub fn build(
    cluster: &Cluster,
    sequence: &[TierId],
    only: Option<&str>,
) -> Result<(String, Vec<String>), String> {
    let chosen: Vec<&Tier> = sequence
        .iter()
        .map(|id| &cluster.tiers[id])
        .filter(|t| only.is_none_or(|k| k == t.id.name || k == t.id.to_string()))
        .collect();
    if let Some(k) = only
        && chosen.is_empty()
    {
        let known: Vec<String> = cluster
            .tiers
            .values()
            .map(|t| cluster.tier_label(&t.id))
            .collect();
        return Err(format!(
            "no Kustomization `{k}` in cluster {}; it has: {}",
            cluster.name,
            known.join(", ")
        ));
    }
    let mut out = String::new();
    let mut broken = Vec::new();
    for tier in chosen {
        if let TierState::RenderFailed(f) = &tier.state {
            broken.push(format!(
                "Kustomization {} does not build: {}",
                cluster.tier_label(&tier.id),
                failure_text(f)
            ));
        }
        let _ = writeln!(
            out,
            "# cluster {}, Kustomization {} ({})",
            cluster.name,
            tier.id,
            tier.display_path()
        );
        match &tier.state {
            TierState::Rendered(_) => {
                for o in in_apply_order(tier) {
                    out.push_str("---\n");
                    out.push_str(&crate::yaml::to_yaml(&redacted(o)));
                }
            }
            TierState::RenderFailed(f) => {
                let _ = writeln!(out, "# does not build: {}", f.message);
            }
            TierState::NotChecked(reason) => {
                let _ = writeln!(out, "# not built: {reason}");
                // What was not built is missing from the output: never a
                // silent 0 (a budget, a missing source, a failed parent).
                broken.push(format!(
                    "Kustomization {} was not built: {reason}",
                    cluster.tier_label(&tier.id)
                ));
            }
        }
    }
    Ok((out, broken))
}

/// A render failure with where it is (`FILE:LINE: message`), unless the
/// message already starts there.
fn failure_text(f: &crate::model::RenderFailure) -> String {
    match &f.at {
        Some(at) if !f.message.starts_with(&at.file) => {
            format!("{}:{}: {}", at.file, at.line, f.message)
        }
        _ => f.message.clone(),
    }
}

/// How one object changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Rendered in `head` only.
    Added {
        /// The object.
        object: ObjectId,
        /// Its rendered YAML, Secret values redacted.
        yaml: String,
    },
    /// Rendered in `base` only.
    Removed {
        /// The object.
        object: ObjectId,
        /// Its rendered YAML, Secret values redacted.
        yaml: String,
    },
    /// Rendered in both, differently.
    Changed {
        /// The object.
        object: ObjectId,
        /// A unified diff of its rendered YAML, base to head.
        diff: String,
    },
}

/// The changes of one Kustomization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierChanges {
    /// The cluster's name.
    pub cluster: String,
    /// The Kustomization.
    pub tier: TierId,
    /// The Kustomization appeared or went away as a whole.
    pub presence: Option<&'static str>,
    /// Its objects that were added, removed or changed.
    pub changes: Vec<Change>,
    /// In the head, it does not build (why, where): its objects are not
    /// known, so "nothing changed" would be a claim the diff cannot make.
    pub broken: Option<String>,
    /// In the head, it was not built (another source, a parent that failed).
    pub not_checked: Option<String>,
}

impl TierChanges {
    /// Whether any Kustomization of the head does not build.
    pub fn any_broken(changes: &[TierChanges]) -> bool {
        changes.iter().any(|c| c.broken.is_some())
    }
}

fn texts(tier: Option<&Tier>) -> BTreeMap<ObjectId, String> {
    tier.map(|t| {
        t.objects()
            .iter()
            .map(|o| (o.id.clone(), crate::yaml::to_yaml(&redacted(o))))
            .collect()
    })
    .unwrap_or_default()
}

/// What changed between `base` and `head`, per cluster and Kustomization.
pub fn diff(base: &Model, head: &Model, clusters: &[String]) -> Vec<TierChanges> {
    let mut out = Vec::new();
    let names: std::collections::BTreeSet<&String> = base
        .clusters
        .iter()
        .chain(&head.clusters)
        .map(|c| &c.name)
        .filter(|n| clusters.is_empty() || clusters.contains(n))
        .collect();
    for name in names {
        let b = base.clusters.iter().find(|c| &c.name == name);
        let h = head.clusters.iter().find(|c| &c.name == name);
        let ids: std::collections::BTreeSet<&TierId> = b
            .into_iter()
            .flat_map(|c| c.tiers.keys())
            .chain(h.into_iter().flat_map(|c| c.tiers.keys()))
            .collect();
        for id in ids {
            let bt = b.and_then(|c| c.tiers.get(id));
            let ht = h.and_then(|c| c.tiers.get(id));
            let (before, after) = (texts(bt), texts(ht));
            let mut changes = Vec::new();
            for (object, yaml) in &after {
                match before.get(object) {
                    None => changes.push(Change::Added {
                        object: object.clone(),
                        yaml: yaml.clone(),
                    }),
                    Some(old) if old != yaml => changes.push(Change::Changed {
                        object: object.clone(),
                        diff: TextDiff::from_lines(old.as_str(), yaml.as_str())
                            .unified_diff()
                            .context_radius(3)
                            .header(&format!("a/{object}"), &format!("b/{object}"))
                            .to_string(),
                    }),
                    Some(_) => {}
                }
            }
            for (object, yaml) in &before {
                if !after.contains_key(object) {
                    changes.push(Change::Removed {
                        object: object.clone(),
                        yaml: yaml.clone(),
                    });
                }
            }
            let presence = match (bt, ht) {
                (None, Some(_)) => Some("added"),
                (Some(_), None) => Some("removed"),
                _ => None,
            };
            let broken = match ht.map(|t| &t.state) {
                Some(TierState::RenderFailed(f)) => Some(failure_text(f)),
                _ => None,
            };
            let not_checked = match ht.map(|t| &t.state) {
                Some(TierState::NotChecked(reason))
                    if presence.is_some() || !changes.is_empty() =>
                {
                    Some(reason.clone())
                }
                _ => None,
            };
            if !changes.is_empty() || presence.is_some() || broken.is_some() {
                out.push(TierChanges {
                    cluster: name.clone(),
                    tier: id.clone(),
                    presence,
                    changes,
                    broken,
                    not_checked,
                });
            }
        }
    }
    // What does not build comes first, in every format.
    out.sort_by_key(|c| c.broken.is_none());
    out
}

fn counts(c: &TierChanges) -> (usize, usize, usize) {
    let mut n = (0, 0, 0);
    for ch in &c.changes {
        match ch {
            Change::Added { .. } => n.0 += 1,
            Change::Removed { .. } => n.1 += 1,
            Change::Changed { .. } => n.2 += 1,
        }
    }
    n
}

fn prefixed(text: &str, prefix: char) -> String {
    text.lines().map(|l| format!("{prefix}{l}\n")).collect()
}

/// The diff for a person: per Kustomization, added and removed objects in
/// full, changed ones as unified diffs.
pub fn diff_human(changes: &[TierChanges]) -> String {
    let mut out = String::new();
    if changes.is_empty() {
        out.push_str("no rendered object changed\n");
        return out;
    }
    for c in changes {
        let (a, r, m) = counts(c);
        let presence = c
            .presence
            .map(|p| format!(" (Kustomization {p})"))
            .unwrap_or_default();
        if let Some(why) = &c.broken {
            let _ = writeln!(
                out,
                "=== {}/{}{presence}: DOES NOT BUILD (error): {why}\n",
                c.cluster, c.tier
            );
            continue;
        }
        let unknown = c
            .not_checked
            .as_ref()
            .map(|why| format!(" (not built: {why})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "=== {}/{}{presence}: {a} added, {r} removed, {m} changed{unknown}",
            c.cluster, c.tier
        );
        for ch in &c.changes {
            match ch {
                Change::Added { object, yaml } => {
                    let _ = writeln!(out, "+++ {object} (added)");
                    out.push_str(&prefixed(yaml, '+'));
                }
                Change::Removed { object, yaml } => {
                    let _ = writeln!(out, "--- {object} (removed)");
                    out.push_str(&prefixed(yaml, '-'));
                }
                Change::Changed { diff, .. } => out.push_str(diff),
            }
        }
        out.push('\n');
    }
    out
}

/// The diff as JSON.
pub fn diff_json(changes: &[TierChanges]) -> Value {
    let items: Vec<Value> = changes
        .iter()
        .map(|c| {
            let list = |pick: fn(&Change) -> Option<Value>| -> Vec<Value> {
                c.changes.iter().filter_map(pick).collect()
            };
            json!({
                "cluster": c.cluster,
                "kustomization": c.tier.name,
                "namespace": c.tier.namespace,
                "presence": c.presence,
                "does_not_build": c.broken,
                "not_checked": c.not_checked,
                "added": list(|ch| match ch { Change::Added { object, yaml } => Some(json!({"object": object.to_string(), "yaml": yaml})), _ => None }),
                "removed": list(|ch| match ch { Change::Removed { object, yaml } => Some(json!({"object": object.to_string(), "yaml": yaml})), _ => None }),
                "changed": list(|ch| match ch { Change::Changed { object, diff } => Some(json!({"object": object.to_string(), "diff": diff})), _ => None }),
            })
        })
        .collect();
    json!({"version": 1, "broken": TierChanges::any_broken(changes), "changes": items})
}

/// The diff as a pull-request comment: a summary table, then one
/// collapsible section per Kustomization.
pub fn diff_markdown(changes: &[TierChanges]) -> String {
    let mut out = String::from("<!-- conformance diff -->\n### Rendered changes\n\n");
    if changes.is_empty() {
        out.push_str("No rendered object changed.\n");
        return out;
    }
    out.push_str(
        "| cluster | Kustomization | added | removed | changed |\n|---|---|---|---|---|\n",
    );
    for c in changes {
        let (a, r, m) = counts(c);
        let presence = c.presence.map(|p| format!(" ({p})")).unwrap_or_default();
        if let Some(why) = &c.broken {
            let why = why.replace('|', "\\|").replace('\n', " ");
            let _ = writeln!(
                out,
                "| {} | {}{presence} | :x: **does not build**: {why} | | |",
                c.cluster, c.tier
            );
            continue;
        }
        let _ = writeln!(
            out,
            "| {} | {}{presence} | {a} | {r} | {m} |",
            c.cluster, c.tier
        );
    }
    out.push('\n');
    for c in changes.iter().filter(|c| c.broken.is_none()) {
        let (a, r, m) = counts(c);
        let _ = writeln!(
            out,
            "<details><summary><code>{}/{}</code>: {a} added, {r} removed, {m} changed</summary>\n\n```diff",
            c.cluster, c.tier
        );
        for ch in &c.changes {
            match ch {
                Change::Added { object, yaml } => {
                    let _ = writeln!(out, "+++ {object} (added)");
                    out.push_str(&prefixed(yaml, '+'));
                }
                Change::Removed { object, yaml } => {
                    let _ = writeln!(out, "--- {object} (removed)");
                    out.push_str(&prefixed(yaml, '-'));
                }
                Change::Changed { diff, .. } => out.push_str(&diff.replace("```", "'''")),
            }
        }
        out.push_str("```\n\n</details>\n\n");
    }
    out
}
