//! What a deadlock says: the need is never met on a cold start, because
//! its supplier is in the same stage (`SameTier`), is the consumer itself
//! (`OwnOutput`), never applies (`Never`), or waits on a tier that never
//! applies (`Downstream`).

use super::words::*;
use super::{Cx, Need, Said};
use crate::convergence::{KindUse, Step, simulate::chain_text};
use crate::model::TierId;
use crate::provenance::Provenance;

/// The trigger that creates the kind is in the consumer's own stage.
pub(super) fn same_tier(cx: &Cx) -> Said {
    let (need, w, label) = (cx.need, &cx.w, &cx.label);
    let (trigger_text, how) = match need {
        Need::Kind(KindUse {
            provenance: Provenance::Runtime { trigger, how, .. },
            ..
        }) => (format!("{}/{}", trigger.kind, trigger.name), how.describe()),
        _ => ("its trigger".into(), "a controller creates".into()),
    };
    let object = need.object().map(|o| o.id.to_string()).unwrap_or_default();
    Said::from((
        format!(
            "{} {}, which {how} only after {trigger_text} (same tier) is reconciled; Flux dry-runs the whole stage first, so on a cold start (a new cluster or a rebuild) this tier can never converge",
            w.subject, w.wants
        ),
        "Flux dry-runs every object of a stage before applying any (ssa ApplyAllStaged); the unknown kind aborts the stage, the trigger is never applied, and the CRD is never created".into(),
        format!(
            "move {object} to a tier with `dependsOn: {label}` whose Ready proves the CRD exists, and make everything that uses it depend on that tier"
        ),
        // Every object of the tier that needs a kind of the same group from
        // the same trigger shares the cause and the one move.
        Some(cx.cause(
            "same-tier",
            &need.tier().id,
            format!(
                "move them to a tier with `dependsOn: {label}` whose Ready proves the CRDs exist, and make everything that uses them depend on that tier"
            ),
            format!(
                "{} comes from {trigger_text}, which {how} only after it is reconciled in the same tier; Flux dry-runs the whole stage first, so on a cold start (a new cluster or a rebuild) {label} can never converge",
                w.thing
            ),
        )),
    ))
}

/// The tier reads, before it builds, what only its own output defines.
pub(super) fn own_output(cx: &Cx) -> Said {
    let (w, label) = (&cx.w, &cx.label);
    Said::from((
        format!(
            "{} reads {} before it builds, but only its own output defines it",
            w.subject, w.thing
        ),
        format!(
            "kustomize-controller reads the source and substituteFrom objects before the build; {label} never builds, so it never creates them"
        ),
        format!("define {} in a tier that {label} depends on", w.thing),
        None,
    ))
}

/// The supplier never applies on a cold start, or only after the consumer.
pub(super) fn never(cx: &Cx, supplier: &TierId, chain: &[Step], loops: &bool) -> Said {
    let (a, need, w, label) = (cx.a, cx.need, &cx.w, &cx.label);
    let (cluster, tier) = (a.cluster, need.tier());
    let mut related = Vec::new();
    let p = cluster.tier_label(supplier);
    let chain_words = chain_text(cluster, chain);
    // Made at run time from what needs the consumer first (an
    // ExternalSecret whose store or credentials the consumer applies).
    let made = match chain.first() {
        Some(Step::MadeAfter { from, .. }) => Some(from.clone()),
        _ => None,
    };
    let message = if let (Some(from), true) = (&made, *loops) {
        format!(
            "{} {}, {}; but {p} {chain_words}: it can only exist after {label} has applied, so neither ever converges",
            w.subject,
            w.wants,
            supplied_by(a, need, supplier)
        )
        .replace(&format!("{p} makes it from {from}"), &format!("{from} in {p} makes it"))
    } else if *loops {
        format!(
            "{} {}, {}; but {p} {chain_words}: {p} can only apply after {label}, so neither ever converges",
            w.subject,
            w.wants,
            supplied_by(a, need, supplier)
        )
    } else {
        format!(
            "{} {}, {}; but {p} never applies on a cold start: it {chain_words}",
            w.subject,
            w.wants,
            supplied_by(a, need, supplier)
        )
    };
    // The supplier is a Kustomization the consumer applies itself: it
    // exists only once the consumer's apply succeeded.
    let nested = matches!(chain, [Step::RenderedBy { parent, .. }] if *parent == tier.id);
    let fix = if let (Some(from), true) = (&made, *loops) {
        format!(
            "create {} before {label} (in the bootstrap, or from a store whose credentials {label} does not apply), or make {label} not need it before it builds; {from} cannot make it until {label} has applied",
            w.thing
        )
    } else if nested {
        format!(
            "apply Kustomization {p} from outside {label}'s path (beside {label}) and add `dependsOn: [{{name: {}}}]` to {label}",
            supplier.name
        )
    } else if *loops {
        format!(
            "move {} out of {p} into {label} or a tier {label} depends on, or break what makes {p} wait for {label}",
            providing(need, supplier, a)
        )
    } else {
        root_fix(a, chain)
    };
    for step in chain.iter().take(6) {
        let t = &cluster.tiers[step.tier()];
        if t.id != tier.id {
            related.push((
                t.defined_at.clone(),
                format!("Kustomization {}", cluster.tier_label(&t.id)),
            ));
        }
    }
    let text = if nested {
        format!(
            "{} {} from {p}, which {label} applies itself, after the dry-run that needs it",
            w.thing,
            if matches!(need, Need::Kind(u) if matches!(u.provenance, Provenance::Unchecked { .. }))
            {
                "can only come"
            } else {
                "comes"
            }
        )
    } else if *loops {
        format!(
            "{} comes from {p}, which can only apply after them",
            w.thing
        )
    } else {
        format!(
            "{} comes from {p}, which never applies: it {chain_words}",
            w.thing
        )
    };
    Said::from((
        message,
        format!(
            "on a cold start {p} never applies, so {label} fails every retry and never becomes Ready; every tier that depends on {label} waits for ever"
        ),
        fix.clone(),
        Some(cx.cause(
            "deadlock",
            supplier,
            if nested {
                fix.clone()
            } else if *loops {
                format!(
                    "move {} out of {p} into a tier all of them depend on, or break what makes {p} wait for them",
                    providing(need, supplier, a)
                )
            } else {
                fix
            },
            text,
        )),
    ))
    .related(related)
}

/// The supplier waits on a tier that never applies.
pub(super) fn downstream(cx: &Cx, supplier: &TierId, chain: &[Step]) -> Said {
    let (a, need, w, label) = (cx.a, cx.need, &cx.w, &cx.label);
    let cluster = a.cluster;
    Said::from((
        format!(
            "{} {}, {}; but {} never applies on a cold start: it {}",
            w.subject,
            w.wants,
            supplied_by(a, need, supplier),
            cluster.tier_label(supplier),
            chain_text(cluster, chain)
        ),
        format!(
            "{} never applies, so {label} fails every retry and never becomes Ready; every tier that depends on {label} waits for ever",
            cluster.tier_label(supplier)
        ),
        root_fix(a, chain),
        None,
    ))
}
