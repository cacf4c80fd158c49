//! What an unsupplied need says: nothing provides it (`Unknown`), or only a
//! chart matched by name probably does (`Available` through a chart the
//! catalog does not know).

use super::words::*;
use super::{Cx, Need, Said};
use crate::convergence::KindUse;
use crate::provenance::Provenance;
use crate::rules::finding::Cause;

/// Nothing in the repository, the catalog or the bootstrap provides the need.
pub(super) fn unknown(cx: &Cx) -> Said {
    let (a, need, w, label) = (cx.a, cx.need, &cx.w, &cx.label);
    let cluster = a.cluster;
    Said::from(match need {
    // A kind in one of Flux's groups that Flux does not serve.
    Need::Kind(u)
        if crate::provenance::unserved_flux_kind(&u.object.id.group, &u.object.id.kind) =>
    {
        let group = &u.object.id.group;
        let kinds = crate::provenance::flux_kinds_of(group);
        let nearest =
            crate::rules::dependency_missing::closest(&u.object.id.kind, kinds.iter().copied());
        (
            format!(
                "{} is of kind {} in {group}, which Flux does not serve (its kinds there: {}){}",
                w.subject,
                u.object.id.kind,
                kinds.join(", "),
                nearest
                    .map(|k| format!(": a misspelt {k}?"))
                    .unwrap_or_default()
            ),
            format!(
                "Flux's CRDs define only those kinds in {group}: the API server rejects the object at the dry-run ('no matches for kind'), the stage aborts, and {label} never becomes Ready; a misspelt Kustomization or HelmRelease is also never reconciled"
            ),
            match nearest {
                Some(k) => format!("spell the kind {k}"),
                None => format!("use one of Flux's kinds in {group}: {}", kinds.join(", ")),
            },
            None,
        )
    }
    Need::Kind(u) => (
        {
            let note = bootstrap_note(a);
            let and = if note.is_empty() { "and " } else { "" };
            format!(
                "{} {}, but nothing provides it: it is not built in to Kubernetes, no CRD in the repository defines it, {and}no chart in the catalog installs it{note}",
                w.subject, w.wants
            )
        },
        "on a cold cluster the kind does not exist when this tier is dry-run, so the whole stage fails with 'no matches for kind'".into(),
        format!(
            "add the CRD to {label} or a tier it depends on; if it is installed outside Flux, list `{}` under catalog.preinstalled in conformance.yaml; if a HelmRelease installs it, add the chart under catalog.charts",
            u.object.id.group
        ),
        Some(Cause {
            key: format!("unknown:{}", u.object.id.group),
            text: format!("nothing provides the kinds of {}", u.object.id.group),
            fix: format!(
                "if {} is installed outside Flux, list it under catalog.preinstalled in conformance.yaml",
                u.object.id.group
            ),
        }),
    ),
    Need::Namespace(u) => (
        format!(
            "{}: namespace {} is created by no Kustomization of cluster {}",
            w.subject, u.namespace, cluster.name
        ),
        "on a cold cluster the namespace does not exist when this tier is dry-run, so the stage fails with 'namespaces not found' and the tier never becomes Ready".into(),
        format!("add a Namespace {} to {label} or to a tier it depends on", u.namespace),
        Some(Cause {
            key: format!("unknown:namespace {}", u.namespace),
            text: format!("no Kustomization creates namespace {}", u.namespace),
            fix: format!("create Namespace {} in a tier they all depend on", u.namespace),
        }),
    ),
    Need::Reference(u) => {
        let target = u.reference.target();
        let uncertain = if u.reference.certain {
            String::new()
        } else {
            format!(
                " (unless something outside the repository creates it: Terraform, the platform, an operator this tool does not model; then declare it in conformance.yaml: `catalog: {{preinstalled_objects: [{target}]}}`)"
            )
        };
        (
            format!(
                "{} {}, which no Kustomization of cluster {} renders and nothing the repository applies before Flux creates{uncertain}",
                w.subject, w.wants, cluster.name
            ),
            missing_why(&u.reference, label),
            format!(
                "create {target} in a tier {label} depends on{}, or, if it is created outside the repository (Terraform, the platform), declare it under catalog.preinstalled_objects in conformance.yaml",
                if u.reference.via == "spec.valuesFrom" || u.reference.via == "postBuild.substituteFrom" {
                    ", mark the entry `optional: true`"
                } else {
                    ""
                }
            ),
            Some(Cause {
                key: format!("missing:{target}"),
                text: format!(
                    "{target} is read by {} but nothing creates it",
                    u.reference.via.strip_prefix("postBuild.").unwrap_or(u.reference.via)
                ),
                fix: format!(
                    "create {target} before them, or declare it under catalog.preinstalled_objects"
                ),
            }),
        )
    }
    })
}

/// Only a chart the catalog does not know, matched by name, provides the kind.
pub(super) fn probable(cx: &Cx) -> Said {
    let (a, need, w, label) = (cx.a, cx.need, &cx.w, &cx.label);
    let cluster = a.cluster;
    let (chart, supplier) = match need {
        Need::Kind(KindUse {
            provenance:
                Provenance::Runtime {
                    how: crate::provenance::RuntimeHow::Chart { chart, .. },
                    tier,
                    ..
                },
            ..
        }) => (chart.clone(), cluster.tier_label(tier)),
        _ => (String::new(), String::new()),
    };
    let group = need
        .object()
        .map(|o| o.id.group.clone())
        .unwrap_or_default();
    Said::from((
        format!(
            "{} {}, which no catalogued source provides; chart {chart} (HelmRelease in {supplier}, which {label} is ordered after) probably does",
            w.subject, w.wants
        ),
        format!(
            "the catalog does not know chart {chart}; its name or address matches {group}, so it is taken to install it"
        ),
        format!(
            "declare it in conformance.yaml to make it certain: catalog.charts: [{{chart: {chart}, groups: [{group}]}}]"
        ),
        Some(Cause {
            key: format!("probable:{chart}:{group}"),
            text: format!(
                "{group} is probably installed by chart {chart}, which the catalog does not know"
            ),
            fix: format!(
                "catalog.charts: [{{chart: {chart}, groups: [{group}]}}] in conformance.yaml"
            ),
        }),
    ))
}
