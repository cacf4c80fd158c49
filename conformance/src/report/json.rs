//! The JSON report, as in the command-line contract:
//! `{"version":1,"repo":…,"clusters":[…],"findings":[…],"summary":{…}}`.
//! Paths are relative to the repository root.

use serde_json::{Value, json};

use crate::check::Outcome;
use crate::model::TierState;
use crate::rules::Finding;

/// Builds the JSON document.
pub fn render(outcome: &Outcome, repo_arg: &str, selected: &[String]) -> Value {
    let items = outcome.boundary();
    let clusters: Vec<Value> = outcome
        .model
        .clusters
        .iter()
        .filter(|c| selected.is_empty() || selected.contains(&c.name))
        .map(|cluster| {
            let kustomizations: Vec<Value> = cluster
                .tiers
                .values()
                .map(|tier| {
                    let (state, reason, objects) = match &tier.state {
                        TierState::Rendered(objects) => {
                            ("rendered", tier.partial_reason(), objects.len())
                        }
                        TierState::RenderFailed(f) => ("failed", Some(f.message.clone()), 0),
                        TierState::NotChecked(reason) => ("not-checked", Some(reason.clone()), 0),
                    };
                    let mut entry = json!({
                        "name": tier.id.name,
                        "namespace": tier.id.namespace,
                        "path": tier.display_path(),
                        "file": tier.defined_at.file,
                        "line": (tier.defined_at.line > 0).then_some(tier.defined_at.line),
                        "dependsOn": tier.depends_on.iter().map(|d| d.target.to_string()).collect::<Vec<_>>(),
                        "state": state,
                        "reason": reason,
                        "objects": objects,
                    });
                    if !tier.fetched.is_empty() {
                        entry["fetched"] = tier
                            .fetched
                            .iter()
                            .map(|f| {
                                json!({
                                    "reference": f.reference,
                                    "file": f.at.file,
                                    "line": (f.at.line > 0).then_some(f.at.line),
                                    "content": f.content,
                                    "stale": f.stale,
                                })
                            })
                            .collect();
                    }
                    entry
                })
                .collect();
            json!({
                "name": cluster.name,
                "entry": cluster.entry.path(),
                "kustomizations": kustomizations,
            })
        })
        .collect();
    let findings: Vec<Value> = outcome.findings.iter().map(finding).collect();
    let bootstrap: Vec<Value> = outcome
        .bootstrap
        .items
        .iter()
        .map(|i| {
            json!({
                "file": i.at.file,
                "line": (i.at.line > 0).then_some(i.at.line),
                "via": i.via,
                "provides": i.provides.describe(),
            })
        })
        .collect();
    json!({
        "version": 1,
        "repo": repo_arg,
        "clusters": clusters,
        "bootstrap": bootstrap,
        "bootstrap_notes": outcome.bootstrap.notes.iter().map(|n| json!({
            "file": n.at.file,
            "line": (n.at.line > 0).then_some(n.at.line),
            "note": n.text,
        })).collect::<Vec<_>>(),
        "notes": outcome.model.notes,
        "checkouts": checkouts(outcome),
        "unreferenced": outcome.model.unreferenced.iter().map(|u| json!({
            "file": u.at.file,
            "line": (u.at.line > 0).then_some(u.at.line),
            "kustomization": u.name,
            "applied_by": u.applied_by.as_ref().map(ToString::to_string),
        })).collect::<Vec<_>>(),
        "boundary": boundary(&items),
        "findings": findings,
        "summary": {"boundary": items.len(), "errors": outcome.errors(), "consequences": outcome.consequences(), "blocked": outcome.blocked(), "warnings": outcome.warnings(), "waived": outcome.waived(), "baselined": outcome.baselined()},
        "baseline": baseline(outcome),
    })
}

/// One finding, as the documented document has it.
fn finding(f: &Finding) -> Value {
    json!({
        "id": f.id(),
        "caused_by": f.caused_by(),
        "boundary": f.boundary_item(),
        "rule": f.rule(),
        "severity": f.severity(),
        "cluster": f.cluster(),
        "kustomization": f.kustomization(),
        "object": f.object(),
        "file": f.at().map(|s| s.file.clone()),
        "line": f.at().and_then(|s| (s.line > 0).then_some(s.line)),
        "message": f.message(),
        "related": f.related().iter().map(|(span, label)| json!({
            "file": span.file,
            "line": (span.line > 0).then_some(span.line),
            "label": label,
        })).collect::<Vec<_>>(),
        "why": f.why(),
        "fix": f.fix(),
        "waived": f.waived().map(|w| json!({"reason": w.reason, "expires": w.expires})),
        "baselined": f.baselined(),
        "fingerprint": crate::rules::baseline::fingerprint(f),
        "blocks": blocks(f),
    })
}

/// What the baseline accepted and which of its entries no longer occur,
/// or null without one.
fn baseline(outcome: &Outcome) -> Value {
    let Some(b) = &outcome.baseline else {
        return Value::Null;
    };
    json!({
        "file": b.path.display().to_string(),
        "accepted": b.accepted,
        "gone": b.gone.iter().map(|e| json!({
            "fingerprint": e.fingerprint,
            "rule": e.rule,
            "cluster": e.cluster,
            "kustomization": e.kustomization,
            "object": e.object,
            "message": e.message,
        })).collect::<Vec<_>>(),
    })
}

/// The checkouts read beside the repository: the name their paths start
/// with, and where they are.
fn checkouts(outcome: &Outcome) -> Vec<Value> {
    outcome
        .model
        .checkouts
        .iter()
        .map(|(name, dir)| json!({"path": name, "dir": dir.display().to_string()}))
        .collect()
}

/// The boundary items: what refers to each, and why the run is not the
/// cluster's whole world.
fn boundary(items: &[crate::check::BoundaryItem]) -> Vec<Value> {
    items
        .iter()
        .map(|b| {
            json!({
                "cluster": b.cluster,
                "item": b.item,
                "referred_by": b.referred_by,
                "evidence": b.evidence,
            })
        })
        .collect()
}

/// What a root finding blocks: each Kustomization with its place and the
/// objects of the findings in it that follow from the root.
pub(super) fn blocks(f: &Finding) -> Vec<Value> {
    f.blocks()
        .iter()
        .map(|b| {
            json!({
                "kustomization": b.kustomization,
                "file": b.at.as_ref().map(|s| s.file.clone()),
                "line": b.at.as_ref().and_then(|s| (s.line > 0).then_some(s.line)),
                "objects": b.objects,
            })
        })
        .collect()
}
