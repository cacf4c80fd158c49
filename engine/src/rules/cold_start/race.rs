//! What a race says: the need is supplied, but its supplier is not waited
//! for (`Race`), or waited for by a Ready that does not prove it exists
//! (`Ungated`). Flux converges both by retrying; the finding names the
//! delay and the `dependsOn` or health check that removes it.

use super::words::*;
use super::{Cx, Need, Said};
use crate::convergence::{KindUse, Ungated};
use crate::model::TierId;
use crate::provenance::Provenance;

/// The supplier applies, but the consumer is not ordered after it.
pub(super) fn race(cx: &Cx, supplier: &TierId, possible: &bool) -> Said {
    let (a, need, w, label) = (cx.a, cx.need, &cx.w, &cx.label);
    let (cluster, tier) = (a.cluster, need.tier());
    let p = cluster.tier_label(supplier);
    // Why the supplier's output is not known.
    let unknown = if cluster
        .tiers
        .get(supplier)
        .is_some_and(|t| matches!(t.state, crate::model::TierState::Rendered(_)))
    {
        "whose ResourceSets are not expanded here"
    } else {
        "which was not checked"
    };
    Said::from(if *possible {
        let otherwise = match need {
            Need::Reference(u) => format!(
                "otherwise create {} in a tier {label} depends on, or declare it under `external:` in conformance.yaml",
                u.reference.target()
            ),
            Need::Namespace(u) => format!(
                "otherwise give it a source (a Namespace {ns} in git, or `external: [\"Namespace/{ns}\"]` in conformance.yaml)",
                ns = u.namespace
            ),
            Need::Kind(_) => "otherwise give it a source (a CRD in git, catalog.charts or catalog.preinstalled in conformance.yaml)".to_string(),
        };
        let fix = format!("if {p} provides it, add `dependsOn: {p}` to {label}; {otherwise}");
        (
            format!(
                "{} {}, which no checked Kustomization provides; it may come from {p}, {unknown}, and which {label} is not ordered after",
                w.subject, w.wants
            ),
            match need {
                Need::Reference(_) => format!(
                    "if {p} provides it, {label} applies the object before it exists; the API server accepts it and its controller retries until {p} has created it"
                ),
                _ => format!(
                    "if {p} provides it, {label} fails its dry-run until {p} has applied, then {} (GetRetryInterval)",
                    retries(tier)
                ),
            },
            fix,
            Some(cx.cause(
                "possible",
                supplier,
                format!("if {p} provides it, add `dependsOn: {p}` to each of them"),
                format!(
                    "{} may come from {p}, {unknown}, and which none of them is ordered after",
                    w.thing
                ),
            )),
        )
    } else {
        let fix = depend_fix(a, need, supplier);
        let permanent = match need {
            Need::Reference(u) => u.reference.permanent,
            _ => None,
        };
        let message = format!(
            "{} {}, {}, but {label} is not ordered after {p}",
            w.subject,
            w.wants,
            supplied_by(a, need, supplier)
        );
        let why = match permanent {
            Some(harm) => format!(
                "a race lost for good: on a cold start (or after a prune) the object can be acted on before {} exists, and {harm}",
                w.thing
            ),
            // A reference is resolved by the object's controller,
            // not by the API server: the tier applies, and the
            // object waits.
            None if matches!(need, Need::Reference(_)) => format!(
                "on a cold start {label} can apply it before {p} has created {}: the API server accepts it, and its controller retries until {} exists{}",
                w.thing,
                w.thing,
                if tier.wait {
                    format!(
                        ", so {label} (wait: true) is not Ready until then and times out if {p} is slower than spec.timeout"
                    )
                } else {
                    String::new()
                }
            ),
            None => format!(
                "on a cold start {label} fails until {p} has applied, then {}: it converges, at the cost of failed reconciles and that delay on every cold start",
                retries(tier)
            ),
        };
        let text = format!(
            "{} comes from {p}, which none of them is ordered after",
            w.thing
        );
        let all = format!(
            "add `dependsOn: {p}` to each of them (each finding says if that would close a cycle)"
        );
        (
            message,
            why,
            fix,
            Some(cx.cause("race", supplier, all, text)),
        )
    })
}

/// The consumer is ordered after the supplier, whose Ready comes before the
/// need exists.
pub(super) fn ungated(cx: &Cx, supplier: &TierId, why: &Ungated) -> Said {
    let (a, need, w, label) = (cx.a, cx.need, &cx.w, &cx.label);
    let (cluster, tier) = (a.cluster, need.tier());
    let p = cluster.tier_label(supplier);
    let (trigger_text, operator) = match need {
        Need::Kind(KindUse {
            provenance: Provenance::Runtime { trigger, how, .. },
            ..
        }) => (format!("{}/{}", trigger.kind, trigger.name), how.who()),
        _ => (format!("what {p} applies"), "its controller".into()),
    };
    let reason = match why {
        Ungated::RenderedBy => format!(
            "{label} is applied by {p} and starts as soon as it is, without waiting for {p} to be Ready"
        ),
        Ungated::NotReady => format!(
            "{label} starts once {p} has applied, but nothing makes it wait for {p} to be Ready"
        ),
        Ungated::NoCheck => format!(
            "{p} has no health check on {trigger_text} (no `wait: true`, no healthChecks entry), so it is Ready before the CRD exists"
        ),
        Ungated::Unreadable(_) => format!(
            "{p} health-checks {trigger_text}, but kstatus reads it as Current as soon as it exists (it has no Ready condition and no status.observedGeneration), so {p} is Ready before {operator} has created the CRD"
        ),
    };
    let (fix, yaml) = match (need, why) {
        (_, Ungated::RenderedBy | Ungated::NotReady) => (depend_fix(a, need, supplier), None),
        (Need::Kind(u), Ungated::NoCheck | Ungated::Unreadable(_)) => gate_fix(a, u, supplier),
        (_, Ungated::NoCheck | Ungated::Unreadable(_)) => (format!("gate {p} on health"), None),
    };

    let message = format!(
        "{} {}, {}; {reason}",
        w.subject,
        w.wants,
        supplied_by(a, need, supplier)
    );
    let text = format!(
        "{} comes from {p}, whose Ready does not prove it exists",
        w.thing
    );
    Said::from((
        message,
        format!(
            "dependsOn waits for Ready (checkDependencies), and {p}'s Ready comes before the CRD exists: the first dry-run of {label} races {operator}, and {label} {} until it wins",
            retries(tier)
        ),
        fix.clone(),
        Some(cx.cause("ungated", supplier, fix, text)),
    ))
    .detail(yaml)
}
