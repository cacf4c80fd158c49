//! The words of cold-start findings: what a need is, who supplies it, how
//! often Flux retries, and the fixes (dependsOn, health gates, the root of
//! a chain), checked not to close a cycle.

use super::*;

/// What a need is, in words: the subject and what it needs.
pub(in crate::rules) struct Words {
    /// "ExternalSecret/db/creds in grafana", "Kustomization apps".
    pub(in crate::rules) subject: String,
    /// "needs externalsecrets.external-secrets.io", "needs namespace vms",
    /// "refers to StorageClass/fast (storageClassName)".
    pub(in crate::rules) wants: String,
    /// The thing needed, for grouping ("external-secrets.io", "namespace vms").
    pub(in crate::rules) thing: String,
}

pub(in crate::rules) fn words(a: &ClusterAnalysis, need: Need) -> Words {
    let label = a.cluster.tier_label(&need.tier().id);
    let subject = match need.object() {
        Some(o) => format!("{} in {label}", o.id),
        None => format!("Kustomization {label}"),
    };
    match need {
        Need::Kind(u) => Words {
            subject,
            wants: format!("needs {}", crd_name(&u.object.id.group, &u.object.id.kind)),
            thing: u.object.id.group.clone(),
        },
        Need::Namespace(u) => Words {
            subject,
            wants: format!("needs namespace {}", u.namespace),
            thing: format!("namespace {}", u.namespace),
        },
        Need::Reference(u) => Words {
            subject,
            wants: format!("refers to {} ({})", u.reference.target(), u.reference.via),
            thing: u.reference.target(),
        },
    }
}

/// How `supplier` provides the need: "whose CRD infra applies", "which
/// cdi-operator creates once CDI/cdi in platform is reconciled".
pub(in crate::rules) fn supplied_by(a: &ClusterAnalysis, need: Need, supplier: &TierId) -> String {
    let p = a.cluster.tier_label(supplier);
    match need {
        Need::Kind(u) => match &u.provenance {
            Provenance::Runtime { how, trigger, .. } => format!(
                "which {} once {}/{} in {p} is reconciled",
                how.describe(),
                trigger.kind,
                trigger.name
            ),
            Provenance::Crd { .. } => format!("whose CRD {p} applies"),
            Provenance::BuiltIn
            | Provenance::Flux
            | Provenance::Preinstalled
            | Provenance::Bootstrap { .. }
            | Provenance::Unknown => format!("which {p} provides"),
            Provenance::Unchecked { .. } => {
                format!("which only {p} may provide (it was not checked)")
            }
        },
        Need::Namespace(_) => format!("which {p} creates"),
        Need::Reference(_) => format!("which {p} applies"),
    }
}

/// "retries every 1h" (the consumer's `retryInterval`, else `interval`).
pub(in crate::rules) fn retries(tier: &Tier) -> String {
    match tier.retry_interval() {
        Some(every) => format!("retries every {every}"),
        None => "retries at its interval".into(),
    }
}

/// The objects of `supplier` that provide the need, for "move …" fixes.
pub(in crate::rules) fn providing(need: Need, supplier: &TierId, a: &ClusterAnalysis) -> String {
    match need {
        Need::Kind(u) => match &u.provenance {
            Provenance::Runtime { trigger, .. } => format!("{}/{}", trigger.kind, trigger.name),
            Provenance::Crd { .. } => format!(
                "CustomResourceDefinition {}",
                crd_name(&u.object.id.group, &u.object.id.kind)
            ),
            Provenance::BuiltIn
            | Provenance::Flux
            | Provenance::Preinstalled
            | Provenance::Bootstrap { .. }
            | Provenance::Unchecked { .. }
            | Provenance::Unknown => format!("what {} applies", a.cluster.tier_label(supplier)),
        },
        Need::Namespace(u) => format!("Namespace {}", u.namespace),
        Need::Reference(u) => u.reference.target(),
    }
}

/// The fix "add `dependsOn: supplier` to consumer", unless that would close
/// a cycle: then what must move instead.
pub(in crate::rules) fn depend_fix(a: &ClusterAnalysis, need: Need, supplier: &TierId) -> String {
    let consumer = &need.tier().id;
    let t = a.cluster.tier_label(consumer);
    let p = a.cluster.tier_label(supplier);
    if a.order.needs_first(supplier, consumer) {
        format!(
            "`dependsOn: {p}` on {t} would close a cycle ({p} is only Ready after {t} has applied); move {} out of {p} into {t} or into a tier {t} depends on",
            providing(need, supplier, a)
        )
    } else {
        format!("add `dependsOn: {p}` to {t}")
    }
}

/// The health-check fix for a runtime supplier whose Ready does not prove
/// the CRD exists, with the YAML to add.
pub(in crate::rules) fn gate_fix(
    a: &ClusterAnalysis,
    u: &KindUse,
    supplier: &TierId,
) -> (String, Option<String>) {
    let p = a.cluster.tier_label(supplier);
    let Provenance::Runtime { how, trigger, .. } = &u.provenance else {
        return (format!("gate {p} on health (`wait: true`)"), None);
    };
    let crd = crd_name(&u.object.id.group, &u.object.id.kind);
    let tier = &a.cluster.tiers[supplier];
    if how.kstatus_reads() {
        let fix = if tier.wait {
            format!(
                "make {p}'s Ready wait for {}/{}",
                trigger.kind, trigger.name
            )
        } else {
            format!(
                "set `wait: true` on {p} (or add a healthChecks entry for {}/{})",
                trigger.kind, trigger.name
            )
        };
        return (fix, None);
    }
    match how.health_expr() {
        Some(expr) => {
            let wait = if tier.wait {
                String::new()
            } else {
                "  wait: true\n".to_string()
            };
            let mut yaml = format!(
                "# in Kustomization {p}:\nspec:\n{wait}  healthCheckExprs:\n    - apiVersion: {}\n      kind: {}\n      current: {}\n",
                trigger.api_version(),
                trigger.kind,
                expr.current
            );
            if let Some(failed) = &expr.failed {
                yaml.push_str(&format!("      failed: {failed}\n"));
            }
            (
                format!(
                    "kstatus reads {} as healthy as soon as it exists; give {p} a healthCheckExprs entry for {} (below) so its Ready waits for {}, or, with `wait: false`, a healthChecks entry naming CustomResourceDefinition {crd}",
                    trigger.kind,
                    trigger.kind,
                    how.who()
                ),
                Some(yaml),
            )
        }
        None => (
            format!(
                "kstatus reads {} as healthy as soon as it exists; give {p} a healthCheckExprs entry for {} that tells when {} is done, or, with `wait: false`, a healthChecks entry naming CustomResourceDefinition {crd}",
                trigger.kind,
                trigger.kind,
                how.who()
            ),
            None,
        ),
    }
}

/// The root of a deadlock chain, for the fix.
pub(in crate::rules) fn root_fix(a: &ClusterAnalysis, chain: &[Step]) -> String {
    let l = |t: &TierId| a.cluster.tier_label(t);
    match chain.last() {
        Some(Step::Suspended { tier }) => format!(
            "resume {} (remove `suspend: true`), or stop relying on what it applies",
            l(tier)
        ),
        Some(step) => format!(
            "fix {} first: it {}",
            l(step.tier()),
            step.predicate(a.cluster)
        ),
        None => "fix the tier that never applies".into(),
    }
}

/// The fix of a finding that follows from `root`: the root's, never one of
/// its own.
pub(in crate::rules) fn consequence_fix(
    a: &ClusterAnalysis,
    root: &Root,
    chain: &[Step],
) -> String {
    let l = |t: &TierId| a.cluster.tier_label(t);
    match root {
        Root::Cycle(t) => format!(
            "break the dependency cycle through {} first (its dependency-cycle finding); this follows from it",
            l(t)
        ),
        Root::Suspended(_) | Root::Itself(_) => {
            format!("{}; this follows from it", root_fix(a, chain))
        }
        Root::Loop(t) => format!(
            "break the loop through {} first (its own finding says how); this follows from it",
            l(t)
        ),
    }
}

/// The root in words, for a consequence's why: "the dependency cycle
/// through platform", "apps waiting for itself".
pub(in crate::rules) fn root_words(a: &ClusterAnalysis, root: &Root) -> String {
    let l = |t: &TierId| a.cluster.tier_label(t);
    match root {
        Root::Cycle(t) => format!("the dependency cycle through {}", l(t)),
        Root::Suspended(t) => format!("{} being suspended", l(t)),
        Root::Itself(t) => format!("{}, which waits for itself", l(t)),
        Root::Loop(t) => format!("the loop through {}", l(t)),
    }
}

/// ", and the repository's bootstrap (helmfile.yaml:3, …) installs chart
/// cilium, … but not this": what the bootstrap does install, so a reader
/// sees it was looked at.
pub(in crate::rules) fn bootstrap_note(a: &ClusterAnalysis) -> String {
    let items: Vec<&crate::provenance::bootstrap::Item> =
        a.bootstrap.of_cluster(&a.cluster.name).collect();
    if items.is_empty() {
        return String::new();
    }
    let mut what: Vec<String> = items.iter().map(|i| i.provides.describe()).collect();
    what.dedup();
    let shown: Vec<String> = what.iter().take(4).cloned().collect();
    let more = if what.len() > 4 {
        format!(" and {} more", what.len() - 4)
    } else {
        String::new()
    };
    format!(
        ", and the repository's bootstrap ({}) installs {}{more}, but not this",
        items[0].at,
        shown.join(", ")
    )
}

/// Why a required target nothing creates fails its referrer, by the field
/// that names it.
pub(in crate::rules) fn missing_why(r: &Reference, label: &str) -> String {
    match r.via {
        "spec.valuesFrom" => "helm-controller reads every non-optional valuesFrom ConfigMap and Secret before each install and upgrade (ChartValuesFromReferences); a missing one fails the release with 'not found', and it is never installed".into(),
        "chart.spec.sourceRef" | "chartRef" => "helm-controller cannot get the chart without its source; the release is never installed".into(),
        "spec.sourceRef" => format!(
            "kustomize-controller gets the source before it builds (getSource in reconcile); a source nothing creates fails {label} with 'not found' on every retry, and it never applies"
        ),
        "spec.dependsOn" => "helm-controller installs the release only once every dependsOn release exists and is Ready (checkDependencies); a missing one holds it back for ever".into(),
        _ => format!(
            "kustomize-controller reads every non-optional substituteFrom object before it builds; a missing one fails {label} with 'not found' on every retry"
        ),
    }
}
