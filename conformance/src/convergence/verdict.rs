//! Verdicts: whether a kind exists when its tier is dry-run on a cold
//! cluster, decided from the kind's providers and the tier order, and which
//! rule reports each verdict.

use super::health;
use super::order::Order;
use crate::model::{Cluster, ObjectId, Tier, TierState};
use crate::provenance::{Provenance, Providers, RuntimeHow};

/// Whether a kind is available when its tier is dry-run on a cold cluster,
/// best first (a kind with several providers takes the best verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    Available,
    /// Provided by an ancestor that does not gate on the trigger's health.
    Ungated,
    /// Created at runtime by a trigger in the same tier: never converges.
    SameTier,
    /// Provided only by a tier that is neither this tier nor an ancestor.
    NotAncestor,
    /// No provenance at all.
    Unknown,
}

impl Verdict {
    /// The rule that reports this verdict for a kind of this provenance;
    /// `None` when there is nothing to report. Matched exhaustively: a new
    /// verdict or provenance does not compile until it is handled here.
    pub fn rule(self, provenance: &Provenance) -> Option<&'static str> {
        let runtime_kind = |how: &RuntimeHow| match how {
            RuntimeHow::Chart { .. } => "crd-unavailable",
            RuntimeHow::Operator { .. } | RuntimeHow::Crossplane => "second-order-crd",
        };
        match (self, provenance) {
            (Verdict::Available, _) => None,
            (Verdict::Ungated, _) => Some("health-gate"),
            (Verdict::SameTier, _) => Some("second-order-crd"),
            (Verdict::NotAncestor, Provenance::Runtime { how, .. }) => Some(runtime_kind(how)),
            (Verdict::NotAncestor, Provenance::Crd { .. }) => Some("crd-unavailable"),
            (
                Verdict::NotAncestor,
                Provenance::BuiltIn
                | Provenance::Flux
                | Provenance::Preinstalled
                | Provenance::Unchecked { .. }
                | Provenance::Unknown,
            ) => None,
            (Verdict::Unknown, _) => Some("crd-unavailable"),
        }
    }
}

/// Resolves the kind of `object` in `tier`.
pub fn resolve(
    cluster: &Cluster,
    order: &Order,
    providers: &Providers,
    tier: &Tier,
    object: &ObjectId,
) -> (Verdict, Provenance) {
    let (group, kind) = (object.group.as_str(), object.kind.as_str());
    if let Some(provenance) = providers.initial(group, kind) {
        return (Verdict::Available, provenance);
    }
    let applied = order.applied_before(&tier.id);
    let ready = order.ready_before(&tier.id);
    let mut best: Option<(Verdict, Provenance)> = None;
    for p in providers.located(group, kind) {
        let verdict = match &p.provenance {
            // Stage 1 applies (and waits for) CRDs before the tier's other
            // stages.
            Provenance::Crd { tier: at, .. } => {
                if *at == tier.id || applied.contains(at) {
                    Verdict::Available
                } else {
                    Verdict::NotAncestor
                }
            }
            Provenance::Runtime {
                tier: at, trigger, ..
            } => {
                if *at == tier.id {
                    Verdict::SameTier
                } else if ready.contains(at) && health::gate(&cluster.tiers[at], trigger).is_some()
                {
                    Verdict::Available
                } else if applied.contains(at) {
                    Verdict::Ungated
                } else {
                    Verdict::NotAncestor
                }
            }
            Provenance::BuiltIn
            | Provenance::Flux
            | Provenance::Preinstalled
            | Provenance::Unchecked { .. }
            | Provenance::Unknown => continue,
        };
        if best.as_ref().is_none_or(|(b, _)| verdict < *b) {
            best = Some((verdict, p.provenance.clone()));
        }
    }
    if let Some(best) = best {
        return best;
    }
    // A tier that was not checked (another source) or did not build may
    // provide it, typically a child of a health-gated ancestor (a
    // Kustomization of an OCI artifact): claim nothing.
    let unchecked = cluster
        .tiers
        .values()
        .find(|t| !matches!(t.state, TierState::Rendered(_)))
        .map(|t| &t.id);
    match unchecked {
        Some(t) => (
            Verdict::Available,
            Provenance::Unchecked { tier: t.clone() },
        ),
        None => (Verdict::Unknown, Provenance::Unknown),
    }
}
