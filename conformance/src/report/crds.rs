//! `conformance crds`: every kind used by a cluster, per tier, with where its
//! API comes from and whether it exists when the tier is dry-run on a cold
//! cluster. The audit "StorageProfile is the only second-order kind in
//! platform-config", as one command.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::convergence::ClusterAnalysis;
use crate::provenance::{Provenance, RuntimeHow};

/// The table and the second-order summary of one cluster.
pub fn render(a: &ClusterAnalysis) -> String {
    // (tier position, tier, group/kind) → (objects, provenance, status)
    let mut rows: BTreeMap<(usize, String, String), (usize, String, &'static str)> =
        BTreeMap::new();
    let mut second_order: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for u in &a.uses {
        let position = a
            .order
            .sequence
            .iter()
            .position(|t| *t == u.tier.id)
            .unwrap_or(usize::MAX);
        let tier = a.cluster.tier_label(&u.tier.id);
        let id = &u.object.id;
        let kind = if id.group.is_empty() {
            id.kind.clone()
        } else {
            format!("{}/{}", id.group, id.kind)
        };
        let provenance = describe(a, &u.provenance, u.provenance.tier() == Some(&u.tier.id));
        let status = u.rule().unwrap_or("ok");
        if matches!(
            u.provenance,
            Provenance::Runtime {
                how: RuntimeHow::Operator { .. } | RuntimeHow::Crossplane,
                ..
            }
        ) {
            let entry = second_order.entry(tier.clone()).or_default();
            if !entry.contains(&id.kind) {
                entry.push(id.kind.clone());
            }
        }
        let row = rows
            .entry((position, tier, kind))
            .or_insert((0, provenance, status));
        row.0 += 1;
        if status != "ok" {
            row.2 = status;
        }
    }
    let headers = ("TIER", "KIND", "OBJECTS", "PROVENANCE", "STATUS");
    let w_tier = rows
        .keys()
        .map(|k| k.1.len())
        .max()
        .unwrap_or(0)
        .max(headers.0.len());
    let w_kind = rows
        .keys()
        .map(|k| k.2.len())
        .max()
        .unwrap_or(0)
        .max(headers.1.len());
    let w_prov = rows
        .values()
        .map(|v| v.1.len())
        .max()
        .unwrap_or(0)
        .max(headers.3.len());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:w_tier$}  {:w_kind$}  {:>7}  {:w_prov$}  {}",
        headers.0, headers.1, headers.2, headers.3, headers.4
    );
    for ((_, tier, kind), (count, provenance, status)) in &rows {
        let _ = writeln!(
            out,
            "{tier:w_tier$}  {kind:w_kind$}  {count:>7}  {provenance:w_prov$}  {status}"
        );
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "Second-order kinds (their CRD is created by a controller at runtime, not by git or a chart), by tier:"
    );
    if second_order.is_empty() {
        out.push_str("  none\n");
    }
    let mut tiers: Vec<_> = second_order.into_iter().collect();
    tiers.sort_by_key(|(t, _)| {
        a.order
            .sequence
            .iter()
            .position(|s| a.cluster.tier_label(s) == *t)
    });
    for (tier, kinds) in tiers {
        let _ = writeln!(out, "  {tier}: {}", kinds.join(", "));
    }
    out
}

fn describe(a: &ClusterAnalysis, p: &Provenance, same_tier: bool) -> String {
    let label = |t: &crate::model::TierId| {
        if same_tier {
            format!("{} (same tier)", a.cluster.tier_label(t))
        } else {
            a.cluster.tier_label(t)
        }
    };
    match p {
        Provenance::BuiltIn => "built in".into(),
        Provenance::Flux => "Flux".into(),
        Provenance::Preinstalled => "preinstalled (conformance.yaml)".into(),
        Provenance::Crd { tier, .. } => format!("CRD in {}", label(tier)),
        Provenance::Runtime {
            how, trigger, tier, ..
        } => {
            let who = match how {
                RuntimeHow::Chart { chart } => format!("chart {chart}"),
                RuntimeHow::Operator { operator } => operator.clone(),
                RuntimeHow::Crossplane => "Crossplane".into(),
            };
            format!(
                "{who} after {}/{} in {}",
                trigger.kind,
                trigger.name,
                label(tier)
            )
        }
        Provenance::Unchecked { tier } => {
            format!("unknown; {} was not checked", a.cluster.tier_label(tier))
        }
        Provenance::Unknown => "unknown".into(),
    }
}
