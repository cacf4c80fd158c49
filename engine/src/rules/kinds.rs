//! `second-order-crd`, `crd-unavailable`, `health-gate`: whether each
//! object's kind exists when its tier is dry-run on a cold cluster (see
//! [`crate::convergence`]); the wording is shared in [`super::cold_start`].

use super::{Context, Finding, Rule, RuleId, Severity, cold_start};

#[derive(Debug)]
pub struct SecondOrderCrd;
#[derive(Debug)]
pub struct CrdUnavailable;
#[derive(Debug)]
pub struct HealthGate;

impl Rule for SecondOrderCrd {
    fn id(&self) -> RuleId {
        RuleId::SecondOrderCrd
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a custom resource whose CRD a controller creates at runtime can never exist when its tier is dry-run: the trigger is in the same tier, or its tier never applies on a cold start"
    }
    fn example(&self) -> &'static str {
        "StorageProfile/longhorn-vm in platform-config needs storageprofiles.cdi.kubevirt.io, which cdi-operator creates only after CDI/cdi (same tier) is reconciled"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        cold_start::findings(cx, self)
    }
}

impl Rule for CrdUnavailable {
    fn id(&self) -> RuleId {
        RuleId::CrdUnavailable
    }
    fn severity(&self) -> Severity {
        Severity::Error
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

impl Rule for HealthGate {
    fn id(&self) -> RuleId {
        RuleId::HealthGate
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn summary(&self) -> &'static str {
        "a second-order kind is used after its trigger's tier, but that tier's Ready does not prove the CRD exists, so the dependent races the operator"
    }
    fn example(&self) -> &'static str {
        "StorageProfile/longhorn-vm in platform-config-cdi needs storageprofiles.cdi.kubevirt.io, which cdi-operator creates once CDI/cdi in platform is reconciled; platform health-checks CDI/cdi, but kstatus reads it as Current as soon as it exists"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        cold_start::findings(cx, self)
    }
}
