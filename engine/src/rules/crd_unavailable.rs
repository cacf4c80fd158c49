//! `crd-unavailable`: a custom resource whose kind nothing provides (not
//! built in, no CRD in git, no chart in the catalog; a kind in Flux's
//! groups that Flux does not serve; a version of a Flux kind no release
//! serves), or whose CRD or chart is in a tier that never applies on a cold
//! start. Only a chart matched by name providing it is a warning.
//!
//! Its own words are for a kind nothing provides and a chart matched by
//! name; a supplier that never applies is worded as every cold-start rule
//! words it ([`cold_start::said`]).

use super::cold_start::{self, Cx, Need, Said, Wording, words::bootstrap_note};
use super::finding::Cause;
use super::{Context, Finding, Rule, RuleId, Severity};
use crate::convergence::{KindUse, Verdict};
use crate::provenance::Provenance;

#[derive(Debug)]
pub struct CrdUnavailable;

impl Rule for CrdUnavailable {
    fn id(&self) -> RuleId {
        RuleId::CrdUnavailable
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn other_severities(&self) -> Option<&'static str> {
        Some(
            "a warning when only a chart matched by name provides the kind, when the supplier tier is not checked, when a bootstrap step this tool could not read may install the CRD (`provides:` in conformance.yaml settles it), or when nothing the run reads provides it on a cluster whose world the run does not read whole (a boundary item: `external:` settles it)",
        )
    }
    fn summary(&self) -> &'static str {
        "a custom resource whose kind has no known source, or whose CRD (or chart) is in a tier that never applies on a cold start"
    }
    fn example(&self) -> &'static str {
        "ExternalSecret/grafana/admin in grafana needs externalsecrets.external-secrets.io, installed by chart external-secrets in external-secrets, which depends on grafana: neither ever converges"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = cold_start::findings(cx, self);
        out.extend(flux_versions(cx, self));
        out
    }
}

/// Objects of a Flux kind in an API version no Flux release has served
/// (`kustomize.toolkit.fluxcd.io/v9`), where the repository has no CRD for
/// the kind that says otherwise (then api-removed judges by the CRD).
fn flux_versions(cx: &Context, rule: &dyn Rule) -> Vec<Finding> {
    let mut out = Vec::new();
    for a in &cx.analyses {
        for tier in a.cluster.local_tiers() {
            for o in tier.objects() {
                let id = &o.id;
                let Some(versions) = crate::provenance::flux_versions(&id.group, &id.kind) else {
                    continue;
                };
                if versions.contains(&id.version.as_str())
                    || a.crds.contains_key(&(id.group.clone(), id.kind.clone()))
                {
                    continue;
                }
                let label = a.cluster.tier_label(&tier.id);
                out.push(
                    Finding::new(
                        rule,
                        a.cluster.name.clone(),
                        label.clone(),
                        format!(
                            "{id} in {label} uses {}, a version of {} no Flux release serves (they serve {})",
                            id.api_version(),
                            id.kind,
                            versions
                                .iter()
                                .map(|v| format!("{}/{v}", id.group))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                    .object(id.to_string())
                    .at(o.source.clone().or_else(|| Some(tier.defined_at.clone())))
                    .related(tier.defined_at.clone(), format!("Kustomization {label}"))
                    .why(format!(
                        "Flux's CRD for {} has no version {}: the API server rejects the object at the dry-run ('no matches for kind'), the stage aborts, and {label} never becomes Ready",
                        id.kind, id.version
                    ))
                    .fix(format!("use {}/{}", id.group, versions[0]))
                    .build(),
                );
            }
        }
    }
    out
}

impl Wording for CrdUnavailable {
    fn said(&self, cx: &Cx) -> Said {
        match (cx.need, cx.need.verdict()) {
            (Need::Kind(u), Verdict::Unknown)
                if crate::provenance::unserved_flux_kind(&u.object.id.group, &u.object.id.kind) =>
            {
                unserved(cx, u)
            }
            (Need::Kind(u), Verdict::Unknown) => unknown(cx, u),
            (Need::Kind(_), Verdict::Available) => probable(cx),
            _ => cold_start::said(cx),
        }
    }
}

/// A kind in one of Flux's groups that Flux does not serve.
fn unserved(cx: &Cx, u: &KindUse) -> Said {
    let (w, label) = (&cx.w, &cx.label);
    let group = &u.object.id.group;
    let kinds = crate::provenance::flux_kinds_of(group);
    let nearest =
        crate::rules::dependency_missing::closest(&u.object.id.kind, kinds.iter().copied());
    Said::from((
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
    ))
}

/// Nothing in the repository, the catalog or the bootstrap provides the kind.
fn unknown(cx: &Cx, u: &KindUse) -> Said {
    let (a, w, label) = (cx.a, &cx.w, &cx.label);
    Said::from((
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
    ))
}

/// Only a chart the catalog does not know, matched by name, provides the kind.
fn probable(cx: &Cx) -> Said {
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
