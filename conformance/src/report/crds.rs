//! `conformance crds`: every kind used by a cluster, per tier, with where its
//! API comes from, whether it exists when the tier is dry-run on a cold
//! cluster (available; a race Flux's retries resolve; a deadlock, with the
//! chain that proves it), and the rule that reports it. The audit
//! "StorageProfile is the only second-order kind in platform-config", as one
//! command.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::convergence::{ClusterAnalysis, Deadlock, Ungated, Verdict, simulate::chain_text};
use crate::provenance::{Provenance, RuntimeHow};

/// The verdict in a word, and its chain or reason when there is one.
pub fn verdict_words(a: &ClusterAnalysis, v: &Verdict) -> (&'static str, String) {
    let l = |t| a.cluster.tier_label(t);
    match v {
        Verdict::Available => ("available", String::new()),
        Verdict::Ungated { supplier, why } => (
            "race",
            match why {
                Ungated::RenderedBy => format!("applied by {} before its Ready", l(supplier)),
                Ungated::NotReady => format!("after {} applied, not after its Ready", l(supplier)),
                Ungated::NoCheck => {
                    format!("{}'s Ready does not wait for the trigger", l(supplier))
                }
                Ungated::Unreadable(_) => {
                    format!(
                        "{}'s health check cannot see the operator (kstatus)",
                        l(supplier)
                    )
                }
            },
        ),
        Verdict::Race { supplier, possible } => (
            "race",
            if *possible {
                format!("maybe from {} (not checked), unordered", l(supplier))
            } else {
                format!("from {}, unordered", l(supplier))
            },
        ),
        Verdict::Deadlock(Deadlock::SameTier) => {
            ("deadlock", "its trigger is in the same tier".into())
        }
        Verdict::Deadlock(Deadlock::OwnOutput) => ("deadlock", "only its own output has it".into()),
        Verdict::Deadlock(Deadlock::Never {
            supplier, chain, ..
        })
        | Verdict::Deadlock(Deadlock::Downstream { supplier, chain }) => (
            "deadlock",
            format!("{} {}", l(supplier), chain_text(a.cluster, chain)),
        ),
        Verdict::Unknown => ("unknown", "nothing provides it".into()),
    }
}

/// The table and the second-order summary of one cluster.
pub fn render(a: &ClusterAnalysis) -> String {
    render_with(a, false)
}

/// The widest line the table may have before it is printed grouped by
/// tier instead (a 100-column terminal), unless `wide`.
pub const WIDTH: usize = 100;

/// As [`render`]; `wide`: always one table row per tier and kind, however
/// wide. Otherwise a table wider than [`WIDTH`] is printed grouped by tier,
/// each kind on one line and its provenance wrapped under it.
pub fn render_with(a: &ClusterAnalysis, wide: bool) -> String {
    let Kinds {
        rows,
        chains,
        second_order,
    } = Kinds::of(a);
    let mut out = String::new();
    table(&mut out, &rows, wide);
    out.push('\n');
    if !chains.is_empty() {
        let _ = writeln!(out, "Why each kind is not simply available:");
        for ((_, tier, kind), why) in &chains {
            let _ = writeln!(out, "  {tier} {kind}: {why}");
        }
        out.push('\n');
    }
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

/// A row's key: (tier position, tier, group/kind).
type Key = (usize, String, String);

/// A row: (objects, provenance, status).
type Row = (usize, String, String);

/// The kinds a cluster uses, gathered for the report.
struct Kinds {
    /// One row per tier and kind.
    rows: BTreeMap<Key, Row>,
    /// Why a kind of a tier is not simply available (the first reason).
    chains: BTreeMap<Key, String>,
    /// The second-order kinds of each tier.
    second_order: BTreeMap<String, Vec<String>>,
}

impl Kinds {
    /// Every kind use of the cluster, counted per tier and kind; a row's
    /// status is its last use's that is not available.
    fn of(a: &ClusterAnalysis) -> Kinds {
        let mut out = Kinds {
            rows: BTreeMap::new(),
            chains: BTreeMap::new(),
            second_order: BTreeMap::new(),
        };
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
            let (word, why) = verdict_words(a, &u.verdict);
            let status = match crate::rules::kind_rule(&u.verdict, &u.provenance) {
                Some(rule) => format!("{word} ({rule})"),
                None => word.to_string(),
            };
            if !why.is_empty() {
                out.chains
                    .entry((position, tier.clone(), kind.clone()))
                    .or_insert(why);
            }
            if matches!(
                u.provenance,
                Provenance::Runtime {
                    how: RuntimeHow::Operator { .. }
                        | RuntimeHow::Crossplane
                        | RuntimeHow::Package { .. },
                    ..
                }
            ) {
                let entry = out.second_order.entry(tier.clone()).or_default();
                if !entry.contains(&id.kind) {
                    entry.push(id.kind.clone());
                }
            }
            let row =
                out.rows
                    .entry((position, tier, kind))
                    .or_insert((0, provenance, status.clone()));
            row.0 += 1;
            if status != "available" {
                row.2 = status;
            }
        }
        out
    }
}

/// The rows as a table, or, when the table is wider than [`WIDTH`] and
/// not `wide`, grouped by tier.
fn table(out: &mut String, rows: &BTreeMap<Key, Row>, wide: bool) {
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
    let w_status = rows.values().map(|v| v.2.len()).max().unwrap_or(0);
    let table_width = w_tier + w_kind + 7 + w_prov + w_status + 8;
    if wide || table_width <= WIDTH {
        let _ = writeln!(
            out,
            "{:w_tier$}  {:w_kind$}  {:>7}  {:w_prov$}  {}",
            headers.0, headers.1, headers.2, headers.3, headers.4
        );
        for ((_, tier, kind), (count, provenance, status)) in rows {
            let _ = writeln!(
                out,
                "{tier:w_tier$}  {kind:w_kind$}  {count:>7}  {provenance:w_prov$}  {status}"
            );
        }
    } else {
        // Grouped: a tier heading, then per kind `KIND  OBJECTS  STATUS`
        // and the provenance wrapped beneath (`--wide` for the table).
        let w_kind = w_kind.min(WIDTH / 2);
        let mut current: Option<&str> = None;
        for ((_, tier, kind), (count, provenance, status)) in rows {
            if current != Some(tier.as_str()) {
                let _ = writeln!(out, "{tier}");
                current = Some(tier.as_str());
            }
            let _ = writeln!(out, "  {kind:w_kind$}  {count:>5}  {status}");
            for line in wrap(&format!("from: {provenance}"), WIDTH - 6) {
                let _ = writeln!(out, "      {line}");
            }
        }
    }
}

/// Words of `text` in lines of at most `width` characters (a longer word
/// on a line of its own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
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
        Provenance::Bootstrap { at, via } => format!("bootstrap ({at}): {via}"),
        Provenance::Crd { tier, .. } => format!("CRD in {}", label(tier)),
        Provenance::Runtime {
            how, trigger, tier, ..
        } => {
            let who = match how {
                RuntimeHow::Chart {
                    chart,
                    probable: false,
                } => format!("chart {chart}"),
                RuntimeHow::Chart {
                    chart,
                    probable: true,
                } => format!("probably chart {chart} (by name; not catalogued for this group)"),
                RuntimeHow::Operator { operator, .. } => operator.clone(),
                RuntimeHow::Crossplane => "Crossplane".into(),
                RuntimeHow::Package { package } => format!("package {package}"),
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

#[cfg(test)]
mod tests {
    #[test]
    fn wraps_at_words() {
        assert_eq!(
            super::wrap("from: chart cert-manager via bootstrap", 18),
            ["from: chart", "cert-manager via", "bootstrap"]
        );
        assert_eq!(super::wrap("short", 18), ["short"]);
    }
}
