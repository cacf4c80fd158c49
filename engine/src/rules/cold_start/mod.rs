//! The wording of cold-start verdicts, shared by the rules that report them
//! (`crd-unavailable`, `second-order-crd`, `health-gate`, `cold-start-race`,
//! `namespace-missing`, `unresolved-reference`): one place says what a race,
//! a deadlock or an ungated supplier means, names the chain, and offers a
//! fix that is checked not to close a cycle.

mod words;

use super::finding::Cause;
use super::{Finding, Rule, RuleId};
use crate::convergence::references::Reference;
use crate::convergence::{
    ClusterAnalysis, Deadlock, KindUse, NamespaceUse, ReferenceUse, Root, Step, Ungated, Verdict,
    simulate::chain_text,
};
use crate::model::{Object, Span, Tier, TierId};
use crate::provenance::{Provenance, crd_name};
use words::*;

/// One judged need.
#[derive(Debug, Clone, Copy)]
pub enum Need<'a, 'm> {
    Kind(&'a KindUse<'m>),
    Namespace(&'a NamespaceUse<'m>),
    Reference(&'a ReferenceUse<'m>),
}

impl<'m> Need<'_, 'm> {
    pub fn tier(&self) -> &'m Tier {
        match self {
            Need::Kind(u) => u.tier,
            Need::Namespace(u) => u.tier,
            Need::Reference(u) => u.tier,
        }
    }
    pub fn object(&self) -> Option<&'m Object> {
        match self {
            Need::Kind(u) => Some(u.object),
            Need::Namespace(u) => Some(u.object),
            Need::Reference(u) => u.object,
        }
    }
    pub fn verdict(&self) -> &Verdict {
        match self {
            Need::Kind(u) => &u.verdict,
            Need::Namespace(u) => &u.verdict,
            Need::Reference(u) => &u.verdict,
        }
    }
}

/// Every judged need of a cluster.
pub fn needs<'a, 'm>(a: &'a ClusterAnalysis<'m>) -> impl Iterator<Item = Need<'a, 'm>> {
    a.uses
        .iter()
        .map(Need::Kind)
        .chain(a.namespaces.iter().map(Need::Namespace))
        .chain(a.references.iter().map(Need::Reference))
}

/// The rule that reports a need's verdict. Matched exhaustively.
pub fn rule_of(need: Need) -> Option<RuleId> {
    match need {
        Need::Kind(u) => kind_rule(&u.verdict, &u.provenance),
        Need::Namespace(u) => match &u.verdict {
            Verdict::Available => None,
            Verdict::Ungated { .. } | Verdict::Race { .. } => Some(RuleId::ColdStartRace),
            Verdict::Deadlock(
                Deadlock::SameTier
                | Deadlock::OwnOutput
                | Deadlock::Never { .. }
                | Deadlock::Downstream { .. },
            )
            | Verdict::Unknown => Some(RuleId::NamespaceMissing),
        },
        Need::Reference(u) => match &u.verdict {
            Verdict::Unknown if u.reference.required => Some(RuleId::UnresolvedReference),
            Verdict::Available | Verdict::Unknown => None,
            Verdict::Ungated { .. } | Verdict::Race { .. } if u.reference.permanent.is_some() => {
                Some(RuleId::UnresolvedReference)
            }
            // The referrer waits for the target (helm-controller's
            // dependsOn): an unordered target delays it, nothing fails.
            Verdict::Ungated { .. } | Verdict::Race { .. } if u.reference.waits => None,
            Verdict::Ungated { .. } | Verdict::Race { .. } => Some(RuleId::ColdStartRace),
            Verdict::Deadlock(
                Deadlock::SameTier
                | Deadlock::OwnOutput
                | Deadlock::Never { .. }
                | Deadlock::Downstream { .. },
            ) => Some(RuleId::UnresolvedReference),
        },
    }
}

/// The rule that reports a kind verdict for a kind of this provenance;
/// `None` when there is nothing to report. Matched exhaustively: a new
/// verdict or provenance does not compile until it is handled here.
pub fn kind_rule(verdict: &Verdict, provenance: &Provenance) -> Option<RuleId> {
    use crate::provenance::RuntimeHow;
    match (verdict, provenance) {
        // A chart the catalog does not know, matched by name: worth a
        // warning that says which chart to declare.
        (
            Verdict::Available,
            Provenance::Runtime {
                how: RuntimeHow::Chart { probable: true, .. },
                ..
            },
        ) => Some(RuleId::CrdUnavailable),
        (Verdict::Available, _) => None,
        (Verdict::Ungated { .. }, _) => Some(RuleId::HealthGate),
        (Verdict::Race { .. }, _) => Some(RuleId::ColdStartRace),
        (Verdict::Deadlock(Deadlock::SameTier), _) => Some(RuleId::SecondOrderCrd),
        // Downstream of a deadlock: reported as a consequence of its root.
        (
            Verdict::Deadlock(
                Deadlock::Never { .. } | Deadlock::OwnOutput | Deadlock::Downstream { .. },
            ),
            Provenance::Runtime {
                how:
                    RuntimeHow::Operator { .. } | RuntimeHow::Crossplane | RuntimeHow::Package { .. },
                ..
            },
        ) => Some(RuleId::SecondOrderCrd),
        (
            Verdict::Deadlock(
                Deadlock::Never { .. } | Deadlock::OwnOutput | Deadlock::Downstream { .. },
            ),
            Provenance::Runtime {
                how: RuntimeHow::Chart { .. },
                ..
            }
            | Provenance::Crd { .. }
            | Provenance::BuiltIn
            | Provenance::Flux
            | Provenance::Preinstalled
            | Provenance::Bootstrap { .. }
            | Provenance::Unchecked { .. }
            | Provenance::Unknown,
        ) => Some(RuleId::CrdUnavailable),
        (Verdict::Unknown, _) => Some(RuleId::CrdUnavailable),
    }
}

/// The findings of `rule` over every cluster's needs.
pub fn findings(cx: &super::Context, rule: &dyn Rule) -> Vec<Finding> {
    let mut out = Vec::new();
    for a in &cx.analyses {
        let judge = a.judge();
        for need in needs(a).filter(|n| rule_of(*n) == Some(rule.id())) {
            // A race or an ungated supplier converges only for a tier that
            // applies in the end: one that never does (for a reason reported
            // where it is) has no race worth a finding.
            let id = &need.tier().id;
            if matches!(
                need.verdict(),
                Verdict::Race { .. } | Verdict::Ungated { .. }
            ) && !judge.simulation(id).applied(id)
                && !a.under_suspension(id)
            {
                continue;
            }
            out.push(finding(rule, a, need));
        }
    }
    out
}

/// The finding for one judged need.
pub fn finding(rule: &dyn Rule, a: &ClusterAnalysis, need: Need) -> Finding {
    let cluster = a.cluster;
    let tier = need.tier();
    let label = cluster.tier_label(&tier.id);
    let w = words(a, need);
    let mut related = vec![(tier.defined_at.clone(), format!("Kustomization {label}"))];
    let mut detail = None;
    let cause_of = |kind: &str, supplier: &TierId, fix: String, text: String| Cause {
        key: format!("{kind}:{supplier}:{}", w.thing),
        text,
        fix,
    };
    let (message, why, fix, cause) = match need.verdict() {
        Verdict::Race { supplier, possible } => {
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
            if *possible {
                let otherwise = match need {
                    Need::Reference(u) => format!(
                        "otherwise create {} in a tier {label} depends on, or declare it under catalog.preinstalled_objects in conformance.yaml",
                        u.reference.target()
                    ),
                    Need::Namespace(u) => format!(
                        "otherwise give it a source (a Namespace {} in git, or catalog.preinstalled_namespaces in conformance.yaml)",
                        u.namespace
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
                    Some(cause_of(
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
                (message, why, fix, Some(cause_of("race", supplier, all, text)))
            }
        }
        Verdict::Ungated { supplier, why } => {
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
                (_, Ungated::RenderedBy | Ungated::NotReady) => {
                    (depend_fix(a, need, supplier), None)
                }
                (Need::Kind(u), Ungated::NoCheck | Ungated::Unreadable(_)) => {
                    gate_fix(a, u, supplier)
                }
                (_, Ungated::NoCheck | Ungated::Unreadable(_)) => {
                    (format!("gate {p} on health"), None)
                }
            };
            detail = yaml;
            let message = format!(
                "{} {}, {}; {reason}",
                w.subject,
                w.wants,
                supplied_by(a, need, supplier)
            );
            let text = format!("{} comes from {p}, whose Ready does not prove it exists", w.thing);
            (
                message,
                format!(
                    "dependsOn waits for Ready (checkDependencies), and {p}'s Ready comes before the CRD exists: the first dry-run of {label} races {operator}, and {label} {} until it wins",
                    retries(tier)
                ),
                fix.clone(),
                Some(cause_of("ungated", supplier, fix, text)),
            )
        }
        Verdict::Deadlock(Deadlock::SameTier) => {
            let (trigger_text, how) = match need {
                Need::Kind(KindUse {
                    provenance: Provenance::Runtime { trigger, how, .. },
                    ..
                }) => (format!("{}/{}", trigger.kind, trigger.name), how.describe()),
                _ => ("its trigger".into(), "a controller creates".into()),
            };
            let object = need.object().map(|o| o.id.to_string()).unwrap_or_default();
            (
                format!(
                    "{} {}, which {how} only after {trigger_text} (same tier) is reconciled; Flux dry-runs the whole stage first, so this tier can never converge",
                    w.subject, w.wants
                ),
                "Flux dry-runs every object of a stage before applying any (ssa ApplyAllStaged); the unknown kind aborts the stage, the trigger is never applied, and the CRD is never created".into(),
                format!(
                    "move {object} to a tier with `dependsOn: {label}` whose Ready proves the CRD exists, and make everything that uses it depend on that tier"
                ),
                None,
            )
        }
        Verdict::Deadlock(Deadlock::OwnOutput) => (
            format!(
                "{} reads {} before it builds, but only its own output defines it",
                w.subject, w.thing
            ),
            format!(
                "kustomize-controller reads the source and substituteFrom objects before the build; {label} never builds, so it never creates them"
            ),
            format!("define {} in a tier that {label} depends on", w.thing),
            None,
        ),
        Verdict::Deadlock(Deadlock::Never {
            supplier,
            chain,
            loops,
        }) => {
            let p = cluster.tier_label(supplier);
            let chain_words = chain_text(cluster, chain);
            let message = if *loops {
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
            let fix = if *loops {
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
            let text = if *loops {
                format!("{} comes from {p}, which can only apply after them", w.thing)
            } else {
                format!("{} comes from {p}, which never applies: it {chain_words}", w.thing)
            };
            (
                message,
                format!(
                    "on a cold start {p} never applies, so {label} fails every retry and never becomes Ready; every tier that depends on {label} waits for ever"
                ),
                fix.clone(),
                Some(cause_of(
                    "deadlock",
                    supplier,
                    if *loops {
                        format!(
                            "move {} out of {p} into a tier all of them depend on, or break what makes {p} wait for them",
                            providing(need, supplier, a)
                        )
                    } else {
                        fix
                    },
                    text,
                )),
            )
        }
        Verdict::Deadlock(Deadlock::Downstream { supplier, chain }) => (
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
        ),
        Verdict::Unknown => match need {
            // A kind in one of Flux's groups that Flux does not serve.
            Need::Kind(u)
                if crate::provenance::unserved_flux_kind(&u.object.id.group, &u.object.id.kind) =>
            {
                let group = &u.object.id.group;
                let kinds = crate::provenance::flux_kinds_of(group);
                let nearest =
                    super::dependency_missing::closest(&u.object.id.kind, kinds.iter().copied());
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
                    missing_why(&u.reference, &label),
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
        },
        Verdict::Available => {
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
            let group = need.object().map(|o| o.id.group.clone()).unwrap_or_default();
            (
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
                    text: format!("{group} is probably installed by chart {chart}, which the catalog does not know"),
                    fix: format!("catalog.charts: [{{chart: {chart}, groups: [{group}]}}] in conformance.yaml"),
                }),
            )
        }
    };
    let probable = matches!(
        need,
        Need::Kind(KindUse {
            provenance: Provenance::Runtime {
                how: crate::provenance::RuntimeHow::Chart { probable: true, .. },
                ..
            } | Provenance::Unchecked { .. },
            ..
        })
    );
    if let Need::Kind(KindUse {
        provenance:
            Provenance::Runtime {
                at: Some(at),
                trigger,
                tier: t,
                ..
            },
        ..
    }) = need
    {
        related.push((
            at.clone(),
            format!(
                "{}/{} in {}",
                trigger.kind,
                trigger.name,
                cluster.tier_label(t)
            ),
        ));
    }
    if let Need::Kind(KindUse {
        provenance: Provenance::Crd {
            at: Some(at),
            tier: t,
        },
        object,
        ..
    }) = need
    {
        related.push((
            at.clone(),
            format!(
                "CustomResourceDefinition {} in {}",
                crd_name(&object.id.group, &object.id.kind),
                cluster.tier_label(t)
            ),
        ));
    }
    if let Need::Reference(u) = need
        && let Some((t, Some(span))) = u.targets.first()
    {
        related.push((
            span.clone(),
            format!("{} in {}", u.reference.target(), cluster.tier_label(t)),
        ));
    }
    let at = match need {
        Need::Reference(u) => {
            let file = u
                .object
                .and_then(|o| o.source.as_ref().map(|s| s.file.clone()))
                .unwrap_or_else(|| tier.defined_at.file.clone());
            Some(Span::new(file, u.reference.line))
        }
        // The field at fault: the object's `metadata.namespace`, where it
        // is written in the object's own file; a namespace kustomize or
        // Flux set (`namespace:`, `targetNamespace`) is not written there:
        // the object's start, then.
        Need::Namespace(u) => u
            .object
            .source
            .as_ref()
            .map(|source| {
                let line = written_namespace_line(&u.object.body)
                    .filter(|line| *line >= source.line)
                    .unwrap_or(source.line);
                Span::new(source.file.clone(), line)
            })
            .or_else(|| Some(tier.defined_at.clone())),
        _ => need
            .object()
            .and_then(|o| o.source.clone())
            .or_else(|| Some(tier.defined_at.clone())),
    };
    // A deadlock of the tier's own making is a root; one that follows from
    // a root elsewhere (a cycle, a suspended tier, a tier waiting for
    // itself) is its consequence, with the root's fix.
    let (mut why, mut fix, mut cause) = (why, fix, cause);
    let mut follows = None;
    if let Verdict::Deadlock(Deadlock::Never { chain, .. } | Deadlock::Downstream { chain, .. }) =
        need.verdict()
        && let Some(root) = a.root_of(chain)
    {
        fix = consequence_fix(a, &root, chain);
        why = format!("{why} (a consequence of {})", root_words(a, &root));
        cause = None;
        follows = Some(root.key(&cluster.name));
    }
    let mut f = Finding::new(rule, cluster.name.clone(), label, message)
        .object_opt(need.object().map(|o| o.id.to_string()))
        .at(at)
        .related_all(related)
        .why(why)
        .fix(fix);
    if let Some(d) = detail {
        f = f.detail(d);
    }
    if let Some(c) = cause {
        f = f.cause(c);
    }
    if let Some(key) = follows {
        f = f.consequence_of(key);
    }
    match need.verdict() {
        Verdict::Deadlock(Deadlock::SameTier | Deadlock::OwnOutput) => {
            f = f.root(Root::Itself(tier.id.clone()).key(&cluster.name));
        }
        // The consumer on a loop that leads back to it: the loop's root
        // (unless the loop is a dependency cycle, reported as such).
        Verdict::Deadlock(Deadlock::Never {
            loops: true, chain, ..
        }) if a.root_of(chain).is_none_or(|r| matches!(r, Root::Loop(_))) => {
            f = f.root(a.loop_root(&tier.id, chain).key(&cluster.name));
        }
        _ => {}
    }
    // What a chart merely matched by name provides is never an error; nor
    // is a target the repository defines nowhere when the platform often
    // creates such targets itself.
    let unknowable = matches!(
        need,
        Need::Reference(ReferenceUse {
            verdict: Verdict::Unknown,
            reference: Reference { certain: false, .. },
            ..
        })
    );
    if probable || unknowable {
        f = f.severity(super::Severity::Warning);
    }
    f.build()
}

/// The line of `metadata.namespace` when it was written in the object's
/// file: a namespace the build set is appended after the keys that were
/// written and carries its mapping's line (`render::flux::adopt_lines`: a
/// node the build added takes its parent's), a written one has its own
/// line or comes first.
fn written_namespace_line(body: &crate::yaml::Node) -> Option<u32> {
    let metadata = body.get("metadata")?;
    let entries = metadata.as_map();
    let (at, (_, ns)) = entries
        .iter()
        .enumerate()
        .find(|(_, (k, _))| k == "namespace")?;
    (ns.line > 0 && (at == 0 || ns.line > metadata.line)).then_some(ns.line)
}
