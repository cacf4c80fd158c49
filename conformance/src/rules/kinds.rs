//! `second-order-crd`, `crd-unavailable`, `health-gate`: whether each
//! object's kind exists when its tier is dry-run on a cold cluster (see
//! [`crate::convergence`]).

use super::{Context, Finding, Rule, Severity};
use crate::convergence::{KindUse, Verdict};
use crate::model::Cluster;
use crate::provenance::Provenance;
use crate::provenance::crd_name;

#[derive(Debug)]
pub struct SecondOrderCrd;
#[derive(Debug)]
pub struct CrdUnavailable;
#[derive(Debug)]
pub struct HealthGate;

impl Rule for SecondOrderCrd {
    fn id(&self) -> &'static str {
        "second-order-crd"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a custom resource whose CRD a controller creates at runtime sits in its trigger's tier (or a tier that does not depend on it), so the tier can never converge"
    }
    fn example(&self) -> &'static str {
        "StorageProfile/longhorn-vm in platform-config needs storageprofiles.cdi.kubevirt.io, which cdi-operator creates only after CDI/cdi (same tier) is reconciled"
    }
    fn explain(&self) -> &'static str {
        "Some CRDs are not in git at all: a controller creates them at runtime. cdi-operator registers \
storageprofiles, datavolumes, datasources, ... only after it reconciles a CDI object; virt-operator creates the \
kubevirt.io kinds after it reconciles a KubeVirt object; helm-controller installs a chart's CRDs when it reconciles the \
HelmRelease; Crossplane creates a CRD per CompositeResourceDefinition. kustomize-controller applies a tier in stages \
(CRDs, Namespaces, ClusterRoles; then *Class kinds; then everything else) and server-side dry-runs every object of a \
stage before applying any of it. A custom resource of such a second-order kind in the same tier as its trigger fails \
the dry-run with 'no matches for kind', so the trigger is never applied, the CRD is never created, and the tier can \
never converge: every tier that depends on it is blocked. The fix is a tier of its own for the second-order objects, \
with dependsOn on the trigger's tier, and health gating on that tier (wait: true, or a healthCheck naming the trigger), \
because dependsOn waits for Ready and Ready then includes the trigger being reconciled. Where each kind comes from is \
decided by the runtime and chart catalogs (conformance crds shows it); conformance.yaml can extend them."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        kind_findings(cx, self)
    }
}

impl Rule for CrdUnavailable {
    fn id(&self) -> &'static str {
        "crd-unavailable"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a custom resource whose kind has no known source, or whose CRD (or chart) lives only in a tier that is not an ancestor"
    }
    fn example(&self) -> &'static str {
        "ClusterIssuer/letsencrypt in apps needs clusterissuers.cert-manager.io, installed by HelmRelease cert-manager in infra, which apps does not depend on"
    }
    fn explain(&self) -> &'static str {
        "On a cold cluster a tier can only use kinds that exist when Flux dry-runs it: built-in kinds, Flux's \
own, CRDs in the same tier (stage 1 applies them first), and CRDs applied by a tier it depends on (directly or \
through its parent Kustomization). If the only CRD (or the only HelmRelease whose chart installs it) is in a tier \
that is not an ancestor, the dry-run fails with 'no matches for kind' until that other tier happens to finish, and \
with dependsOn chains in the way it may never happen. A kind with no source at all (not built in, no CRD in the \
repository, no chart in the catalog) fails every time. Add dependsOn on the providing tier, or, if the CRD is \
installed outside Flux (a bootstrap script, the distribution), list its group under catalog.preinstalled in \
conformance.yaml; for a chart the catalog does not know, add it under catalog.charts."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        kind_findings(cx, self)
    }
}

impl Rule for HealthGate {
    fn id(&self) -> &'static str {
        "health-gate"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a second-order kind is used after its trigger's tier, but that tier does not gate on the trigger's health, so the dependent races the operator"
    }
    fn example(&self) -> &'static str {
        "platform-config-cdi uses StorageProfile, created once CDI/cdi in platform-config is reconciled, but platform-config has wait: false"
    }
    fn explain(&self) -> &'static str {
        "dependsOn waits for the dependency to be Ready. With wait: false and no healthChecks, Ready follows the \
apply immediately: the dependent starts while the operator has not yet reconciled the trigger, so the second-order \
CRD may not exist yet and the dependent's dry-run fails (it retries, and on a slow operator the tier flaps or times \
out). A child Kustomization rendered by a parent tier is worse: it starts as soon as the parent applies it, whatever \
the parent's health. Set wait: true on the trigger's tier (or add a healthCheck naming the trigger), and make the \
consumer depend on that tier."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        kind_findings(cx, self)
    }
}

/// The findings of one rule: the kind uses whose verdict it reports.
fn kind_findings(cx: &Context, rule: &dyn Rule) -> Vec<Finding> {
    let mut out = Vec::new();
    for analysis in &cx.analyses {
        for u in analysis.uses.iter().filter(|u| u.rule() == Some(rule.id())) {
            out.push(kind_finding(analysis.cluster, rule, u));
        }
    }
    out
}

fn kind_finding(cluster: &Cluster, rule: &dyn Rule, u: &KindUse) -> Finding {
    let label = cluster.tier_label(&u.tier.id);
    let id = &u.object.id;
    let crd = crd_name(&id.group, &id.kind);
    let object = id.to_string();
    let mut related = vec![(u.tier.defined_at.clone(), format!("Kustomization {label}"))];
    let (message, fix) = match &u.provenance {
        Provenance::Runtime {
            how,
            trigger,
            tier,
            at,
        } => {
            let trigger_label = cluster.tier_label(tier);
            if let Some(at) = at {
                related.push((
                    at.clone(),
                    format!("{}/{} in {trigger_label}", trigger.kind, trigger.name),
                ));
            }
            let trigger_text = format!("{}/{}", trigger.kind, trigger.name);
            match u.verdict {
                Verdict::SameTier => (
                    format!(
                        "{object} in {label} needs {crd}, which {} only after {trigger_text} (same tier) is reconciled; Flux dry-runs the whole stage first, so this tier can never converge",
                        how.describe()
                    ),
                    format!(
                        "move {object} to a tier with `dependsOn: {label}` and `wait: true`, and make everything that uses it depend on that tier"
                    ),
                ),
                Verdict::Ungated => {
                    let gate = &cluster.tiers[tier];
                    let why = if u.tier.parent.as_ref() == Some(tier)
                        && !u.tier.depends_on.iter().any(|d| d.target == *tier)
                    {
                        format!(
                            "{label} is rendered by {trigger_label} and starts as soon as it is applied, without waiting for its health"
                        )
                    } else if !gate.wait {
                        format!(
                            "{trigger_label} has wait: false and no healthCheck on {trigger_text}, so it is Ready before the CRD exists"
                        )
                    } else {
                        format!("{label} does not wait for {trigger_label} to be Ready")
                    };
                    (
                        format!(
                            "{object} in {label} needs {crd}, which {} after {trigger_text} in {trigger_label} is reconciled; {why}",
                            how.describe()
                        ),
                        format!(
                            "set `wait: true` on {trigger_label} (or a healthCheck on {trigger_text}) and add `dependsOn: {trigger_label}` to {label}"
                        ),
                    )
                }
                Verdict::NotAncestor | Verdict::Unknown | Verdict::Available => (
                    format!(
                        "{object} in {label} needs {crd}, which {} after {trigger_text} in {trigger_label} is reconciled, but {label} does not depend on {trigger_label}",
                        how.describe()
                    ),
                    format!(
                        "add `dependsOn: {trigger_label}` to {label}, and make sure {trigger_label} gates on health (`wait: true`)"
                    ),
                ),
            }
        }
        Provenance::Crd { tier, at } => {
            let provider = cluster.tier_label(tier);
            if let Some(at) = at {
                related.push((
                    at.clone(),
                    format!("CustomResourceDefinition {crd} in {provider}"),
                ));
            }
            (
                format!(
                    "{object} in {label} needs {crd}, whose CRD is applied by {provider}, which {label} does not depend on"
                ),
                format!(
                    "add `dependsOn: {provider}` to {label} (or move the CRD into {label} or an ancestor)"
                ),
            )
        }
        Provenance::BuiltIn
        | Provenance::Flux
        | Provenance::Preinstalled
        | Provenance::Unchecked { .. }
        | Provenance::Unknown => (
            format!(
                "{object} in {label} needs {crd}, but nothing provides it: it is not built in to Kubernetes, no CRD in the repository defines it, and no chart in the catalog installs it"
            ),
            format!(
                "add the CRD to {label} or a tier it depends on; if it is installed outside Flux, list `{}` under catalog.preinstalled in conformance.yaml; if a HelmRelease installs it, add the chart under catalog.charts",
                id.group
            ),
        ),
    };
    Finding::new(rule, cluster.name.clone(), label.clone(), message).object(id.to_string()).at(u.object.source.clone().or_else(|| Some(u.tier.defined_at.clone()))).related_all(related).why(match u.verdict {
            Verdict::SameTier => "Flux dry-runs every object of a stage before applying any; the unknown kind aborts the stage, the trigger is never applied, and the CRD is never created",
            Verdict::Ungated => "dependsOn waits for Ready, and without health gating Ready comes before the operator has created the CRD: the dependent's dry-run races the operator",
            Verdict::NotAncestor | Verdict::Unknown | Verdict::Available => "on a cold cluster the kind does not exist when this tier is dry-run, so the whole stage fails with 'no matches for kind'",
        }).fix(fix)
}
