//! The wording of cold-start verdicts, shared by the rules that report them
//! (`crd-unavailable`, `second-order-crd`, `health-gate`, `cold-start-race`,
//! `namespace-missing`, `unresolved-reference`): one place says what a race,
//! a deadlock or an ungated supplier means, names the chain, and offers a
//! fix that is checked not to close a cycle.

mod assumed;
mod deadlock;
mod race;
pub(super) mod words;

use super::finding::Cause;
use super::{Finding, Rule, RuleId};
use crate::convergence::references::Reference;
use crate::convergence::{
    ClusterAnalysis, Deadlock, KindUse, NamespaceUse, ReferenceUse, Root, Step, Verdict,
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
pub(crate) fn rule_of(need: Need) -> Option<RuleId> {
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
pub(super) fn findings(cx: &super::Context, rule: &dyn Wording) -> Vec<Finding> {
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
/// What one verdict says about a need, before the finding is assembled.
pub(super) struct Said {
    message: String,
    why: String,
    fix: String,
    /// The root this finding shares with others of the same supplier.
    cause: Option<Cause>,
    /// Config to paste, when the fix is a block of YAML.
    detail: Option<String>,
    /// Places beyond the tier and the need's own: the tiers of a chain.
    related: Vec<(Span, String)>,
}

impl From<(String, String, String, Option<Cause>)> for Said {
    fn from((message, why, fix, cause): (String, String, String, Option<Cause>)) -> Said {
        Said {
            message,
            why,
            fix,
            cause,
            detail: None,
            related: Vec::new(),
        }
    }
}

impl Said {
    fn detail(mut self, detail: Option<String>) -> Said {
        self.detail = detail;
        self
    }
    fn related(mut self, related: Vec<(Span, String)>) -> Said {
        self.related = related;
        self
    }
}

/// The need being worded, with the words every verdict shares.
pub(super) struct Cx<'a, 'm> {
    /// The cluster's analysis.
    pub(super) a: &'a ClusterAnalysis<'m>,
    /// The need being worded.
    pub(super) need: Need<'a, 'm>,
    /// The words every verdict shares: who needs what.
    pub(super) w: Words,
    /// The consumer tier's label.
    pub(super) label: String,
}

impl Cx<'_, '_> {
    /// The cause shared by every consumer of `supplier`'s `thing`.
    pub(super) fn cause(&self, kind: &str, supplier: &TierId, fix: String, text: String) -> Cause {
        Cause {
            key: format!("{kind}:{supplier}:{}", self.w.thing),
            text,
            fix,
        }
    }
}

/// A rule that reports cold-start verdicts ([`rule_of`] says which rule
/// reports a need): what it says about one need. A rule words what only it
/// reports in its own file and leaves the verdicts several rules share (a
/// race, an ungated supplier, a deadlock) to [`said`].
pub(super) trait Wording: Rule {
    /// The words for `cx`'s need.
    fn said(&self, cx: &Cx) -> Said;
}

/// The words of a verdict several rules report, whichever reports it: a
/// race and an ungated supplier (`race.rs`), a deadlock (`deadlock.rs`).
pub(super) fn said(cx: &Cx) -> Said {
    match cx.need.verdict() {
        Verdict::Race { supplier, possible } => race::race(cx, supplier, possible),
        Verdict::Ungated { supplier, why } => race::ungated(cx, supplier, why),
        Verdict::Deadlock(Deadlock::SameTier) => deadlock::same_tier(cx),
        Verdict::Deadlock(Deadlock::OwnOutput) => deadlock::own_output(cx),
        Verdict::Deadlock(Deadlock::Never {
            supplier,
            chain,
            loops,
        }) => deadlock::never(cx, supplier, chain, loops),
        Verdict::Deadlock(Deadlock::Downstream { supplier, chain }) => {
            deadlock::downstream(cx, supplier, chain)
        }
        // Worded by the rule that reports it (`crd-unavailable`,
        // `namespace-missing`, `unresolved-reference`): [`rule_of`] gives
        // no other rule an unsupplied need.
        Verdict::Unknown | Verdict::Available => Said::from((
            format!("{} {}, which nothing provides", cx.w.subject, cx.w.wants),
            "on a cold cluster it does not exist when this tier is applied".to_string(),
            format!("provide it in {} or a tier it depends on", cx.label),
            None,
        )),
    }
}

/// The finding for one judged need: the rule's words for it
/// ([`Wording::said`]), then where it points, what it follows from, and how
/// sure it is.
pub(super) fn finding(rule: &dyn Wording, a: &ClusterAnalysis, need: Need) -> Finding {
    let cluster = a.cluster;
    let tier = need.tier();
    let label = cluster.tier_label(&tier.id);
    let cx = Cx {
        a,
        need,
        w: words(a, need),
        label: label.clone(),
    };
    let Said {
        message,
        why,
        fix,
        cause,
        detail,
        related: chain,
    } = rule.said(&cx);
    let mut related = vec![(tier.defined_at.clone(), format!("Kustomization {label}"))];
    related.extend(chain);
    related.extend(places(a, need));
    let at = Some(place(need));
    // A deadlock of the tier's own making is a root; one that follows from
    // a root elsewhere (a cycle, a suspended tier, a tier waiting for
    // itself) is its consequence, with the root's fix.
    let (mut why, mut fix, mut cause) = (why, fix, cause);
    let mut follows = None;
    if let Some((root, chain)) = followed_root(a, need) {
        fix = consequence_fix(a, &root, &chain);
        why = format!("{why} (a consequence of {})", root_words(a, &root));
        cause = None;
        follows = Some(root.key(&cluster.name));
    }
    let assumed = assumed::unread_step(a, need, follows.is_some());
    if let Some((step, creates)) = &assumed {
        let (premise, settle) = assumed::hedge(step, creates, need);
        why = format!("{why}; {premise}");
        fix = format!("{settle}; if it does not, {fix}");
    }
    // Nothing the run reads supplies it: a boundary item where the run is
    // not the cluster's whole world, else certain, with the evidence.
    let mut boundary = None;
    let nested = nested_only(a, need);
    if (matches!(need.verdict(), Verdict::Unknown) || nested)
        && assumed.is_none()
        && follows.is_none()
        && !named_elsewhere(a, need)
        && !flux_kind(need)
    {
        let item = assumed::declared_as(need);
        // A kind only a Kustomization the consumer applies itself is named
        // for (by name) cannot come from it in time: the sources only such
        // children sync are no evidence for it. A kind nothing is named
        // for keeps the whole world: an unread source shows the platform
        // is larger than the run, whatever the kind.
        let (words, settle) = if nested {
            a.world
                .without(|t| cluster.applies(&tier.id, t))
                .words(&item)
        } else {
            a.world.words(&item)
        };
        why = format!("{why}; {words}");
        if let Some(settle) = settle {
            fix = settle;
            boundary = Some(item);
        }
        if let Some(hint) = nested_hint(a, need) {
            fix = format!("{fix}; {hint}");
        }
    }
    // A kind the network plugin registers only with a feature on: the
    // install before Flux may have had it on (not shown).
    let gated = cni_gated(a, need);
    if let Some(chart) = &gated {
        why = format!(
            "{why}; but {chart} is the network plugin, which ran before Flux: if that install had this feature on, the kind exists from the start, and the repository does not show whether it had"
        );
        fix = format!(
            "if the install before Flux enables it, declare the kind: `catalog: {{preinstalled: [\"{}\"]}}` in conformance.yaml; if not, {fix}",
            assumed::declared_as(need)
        );
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
    if let Some(key) = follows.clone() {
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
        }) if follows.is_none() && a.root_of(chain).is_none_or(|r| matches!(r, Root::Loop(_))) => {
            f = f.root(a.loop_root(&tier.id, chain).key(&cluster.name));
        }
        _ => {}
    }
    if !(sure(need) || nested) || assumed.is_some() || gated.is_some() {
        f = f.severity(super::Severity::Warning);
    }
    if let Some(item) = boundary {
        f = f.boundary(item);
    }
    f.build()
}

/// The root a deadlocked need follows from, with its chain: the root its
/// chain leads to (a cycle, a suspended tier, a tier waiting for itself).
/// `None`: the need is a root. (A Kustomization whose parent loops on it
/// is no consequence of that loop: moving it out of the parent, the loop's
/// fix, leaves what it needs from the parent unmet.)
fn followed_root(a: &ClusterAnalysis, need: Need) -> Option<(Root, Vec<Step>)> {
    match need.verdict() {
        Verdict::Deadlock(Deadlock::Never { chain, .. } | Deadlock::Downstream { chain, .. }) => {
            a.root_of(chain).map(|root| (root, chain.clone()))
        }
        _ => None,
    }
}

/// For a kind nothing supplies, the Kustomizations the consumer applies
/// itself that were not checked: if one of them provides it, it does so
/// only after the consumer's dry-run, so the fix is to order it first.
fn nested_hint(a: &ClusterAnalysis, need: Need) -> Option<String> {
    let Need::Kind(u) = need else { return None };
    let consumer = &u.tier.id;
    let nested: Vec<String> = a
        .unchecked
        .iter()
        .filter(|t| a.cluster.applies(consumer, t))
        .map(|t| a.cluster.tier_label(t))
        .collect();
    let first = nested.first()?;
    let label = a.cluster.tier_label(consumer);
    Some(format!(
        "if it comes from {} (not checked), which {label} applies itself, Flux applies that only after {label}'s dry-run: apply Kustomization {first} beside {label} and add `dependsOn: [{{name: {}}}]` to {label}",
        nested.join(", "),
        first.rsplit('/').next().unwrap_or(first)
    ))
}

/// The network plugin's chart, when a kind beside it is one its operator
/// registers only with a feature on (catalog `cni_gated`).
fn cni_gated(a: &ClusterAnalysis, need: Need) -> Option<String> {
    let Need::Kind(u) = need else { return None };
    let Provenance::Runtime {
        how: crate::provenance::RuntimeHow::Chart { chart, .. },
        ..
    } = &u.provenance
    else {
        return None;
    };
    let entry = a.providers.catalog().chart(chart)?;
    (matches!(u.verdict, Verdict::Deadlock(Deadlock::SameTier))
        && entry.cni
        && entry.cni_gated.contains(&u.object.id.kind))
    .then(|| chart.clone())
}

/// Whether the only tiers that may supply a kind are Kustomizations the
/// consumer applies itself, not checked or matched by name: whether they
/// provide it or not, the consumer's dry-run never finds it (they exist
/// only after it applied). As certain as a kind nothing supplies, and, like
/// one, a boundary item where the run is not the cluster's whole world.
fn nested_only(a: &ClusterAnalysis, need: Need) -> bool {
    let Need::Kind(u) = need else { return false };
    let guessed = matches!(
        u.provenance,
        Provenance::Unchecked { .. }
            | Provenance::Runtime {
                how: crate::provenance::RuntimeHow::Chart { probable: true, .. },
                ..
            }
    );
    matches!(
        &u.verdict,
        Verdict::Deadlock(Deadlock::Never { supplier, loops: true, .. })
            if guessed && a.cluster.applies(&u.tier.id, supplier)
    )
}

/// Whether a need is a kind of Flux's own groups: Flux serves those, so one
/// it does not serve comes from nowhere else.
fn flux_kind(need: Need) -> bool {
    matches!(need, Need::Kind(u) if u.object.id.group.ends_with("toolkit.fluxcd.io"))
}

/// Whether a reference names something the cluster has under the same kind
/// and name in another namespace (its own sync source, or an object a tier
/// applies): a namespace mistake in the repository, not something from
/// outside.
fn named_elsewhere(a: &ClusterAnalysis, need: Need) -> bool {
    let Need::Reference(u) = need else {
        return false;
    };
    let r = &u.reference;
    let Some(namespace) = r.namespace.as_deref() else {
        return false;
    };
    let other = |kind: &str, name: &str, ns: Option<&str>| {
        kind == r.kind && name == r.name && ns.is_some_and(|n| n != namespace)
    };
    a.cluster.tiers.values().any(|t| {
        (t.parent.is_none()
            && other(
                &t.source_ref.kind,
                &t.source_ref.name,
                Some(&t.source_ref.namespace),
            ))
            || t.objects()
                .iter()
                .any(|o| other(&o.id.kind, &o.id.name, o.id.namespace.as_deref()))
    })
}

/// The places a need's finding points to besides its tier: the trigger
/// or CRD that supplies a kind, the object a reference resolves to.
fn places(a: &ClusterAnalysis, need: Need) -> Vec<(Span, String)> {
    let cluster = a.cluster;
    let mut related = Vec::new();
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
    related
}

/// Where a need's finding points: the line of the reference, the
/// namespace field, or the object; the tier when the object has no file.
fn place(need: Need) -> Span {
    let tier = need.tier();
    match need {
        Need::Reference(u) => {
            let file = u
                .object
                .and_then(|o| o.source.as_ref().map(|s| s.file.clone()))
                .unwrap_or_else(|| tier.defined_at.file.clone());
            Span::new(file, u.reference.line)
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
            .unwrap_or_else(|| tier.defined_at.clone()),
        _ => need
            .object()
            .and_then(|o| o.source.clone())
            .unwrap_or_else(|| tier.defined_at.clone()),
    }
}

/// Whether a need's finding is certain enough to be an error.
fn sure(need: Need) -> bool {
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
    !(probable || unknowable)
}

/// The line of `metadata.namespace` when it was written in the object's
/// file: a namespace the build set is appended after the keys that were
/// written and carries its mapping's line (`render::flux::origin::adopt_lines`: a
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
