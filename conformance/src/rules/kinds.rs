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
    fn explain(&self) -> &'static str {
        "Some CRDs are not in git at all: a controller creates them at runtime. cdi-operator registers \
storageprofiles, datavolumes, datasources, ... only after it reconciles a CDI object; virt-operator creates the \
kubevirt.io kinds after it reconciles a KubeVirt object; Crossplane creates a CRD per CompositeResourceDefinition. \
kustomize-controller applies a tier in stages (fluxcd/pkg ssa ApplyAllStaged: CRDs, Namespaces, ClusterRoles; then \
*Class kinds; then everything else) and server-side dry-runs every object of a stage before applying any of it. A \
custom resource of such a second-order kind in the same tier as its trigger fails the dry-run with 'no matches for \
kind', so the trigger is never applied, the CRD is never created, and the tier can never converge: every tier that \
depends on it is blocked. The same holds when the trigger's tier itself never applies on a cold start: it depends on \
the consumer (checkDependencies waits for Ready), is applied by it, needs something from it, or is suspended; the \
finding names the whole chain. The fix is a tier of its own for the second-order objects, with dependsOn on the \
trigger's tier, and a Ready on that tier that proves the CRD exists (see health-gate). Where each kind comes from is \
decided by the runtime and chart catalogs (conformance crds shows it); conformance.yaml can extend them."
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
    fn explain(&self) -> &'static str {
        "On a cold cluster a tier can only use kinds that exist when Flux dry-runs it: built-in kinds, Flux's \
own, CRDs in the same tier (stage 1 of ssa ApplyAllStaged applies and waits for them first), and CRDs another tier \
applies. When the only CRD (or the only HelmRelease whose chart installs it) is in a tier that can only apply after \
this one (it depends on it, is applied by it, or needs one of its kinds in turn) or never applies (suspended, or \
blocked further up), the dry-run fails with 'no matches for kind' on every retry: a deadlock, and the message names \
the chain. A tier that never applies (one that waits for itself, a member of a dependency cycle, a suspended one) \
takes everything that needs it along (Simulation::run, the least fixpoint of checkDependencies, the staged dry-run \
and checkHealth): those findings are consequences of the root's, with its fix and caused_by its id. A CRD in a tier \
that is merely unordered is a race Flux's retries resolve (cold-start-race, a warning). A \
kind with no source at all (not built in, no CRD in the repository, no chart in the catalog) fails every time: add \
the CRD, or, if it is installed outside Flux (a bootstrap script, the distribution), list its group under \
catalog.preinstalled in conformance.yaml; for a chart the catalog does not know, add it under catalog.charts. In one of Flux's own groups, only the kinds and versions \
Flux's CRDs define exist (provenance/flux.rs FLUX_KINDS, from each controller's config/crd/bases): a misspelt kind \
(Kustomizatio) or a version no release served (kustomize.toolkit.fluxcd.io/v9) is reported here, with the nearest \
kind, instead of vanishing from discovery."
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
    fn explain(&self) -> &'static str {
        "dependsOn waits for the dependency to be Ready (checkDependencies). A tier is Ready after its health \
check (checkHealth): with wait: true every applied object is checked and healthChecks is ignored; otherwise only \
the healthChecks entries; with neither, Ready follows the apply. Health is kstatus (fluxcd/cli-utils status.Compute): \
a custom resource with neither a Ready condition nor status.observedGeneration (CDI, KubeVirt, a Crossplane XRD) is \
Current as soon as it exists, so wait: true does not wait for its operator. A healthCheckExprs entry (CEL, \
fluxcd/pkg runtime/cel) for the trigger's kind overrides kstatus, and a healthChecks entry may name the runtime CRD \
itself (healthy once Established). Without one of those, the dependent's first dry-run races the operator; it fails, \
retries after retryInterval (else interval, GetRetryInterval) and converges, hence a warning. A child rendered by the \
trigger's tier starts as soon as it is applied, whatever the parent's health. The fix shows the healthCheckExprs entry \
for the trigger's kind when the catalog knows one (CDI and KubeVirt: status.phase == 'Deployed')."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        cold_start::findings(cx, self)
    }
}
