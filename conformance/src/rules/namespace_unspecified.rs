//! `namespace-unspecified`: a namespaced object without `metadata.namespace`
//! in a Kustomization without `targetNamespace`.

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::provenance::Scope;

#[derive(Debug)]
pub struct NamespaceUnspecified;

impl Rule for NamespaceUnspecified {
    fn id(&self) -> RuleId {
        RuleId::NamespaceUnspecified
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a namespaced object has no metadata.namespace and its Kustomization has no targetNamespace, so Flux's dry-run of the tier fails"
    }
    fn example(&self) -> &'static str {
        "Deployment/web in apps has no namespace, and apps sets no targetNamespace: 'namespace not specified'"
    }
    fn explain(&self) -> &'static str {
        "kustomize-controller applies with server-side apply through fluxcd/pkg ssa, which has no default \
namespace: ResourceManager.ApplyAllStaged dry-runs every object of a stage, and a namespaced object without \
metadata.namespace fails it with 'namespace not specified' (ssa/errors), so the stage, and every later stage of \
the tier, is not applied and the Kustomization never becomes Ready. kubectl would have put it in `default`; Flux \
does not. Objects get a namespace from their own metadata, from the kustomization's `namespace:` field, or from \
the Flux Kustomization's spec.targetNamespace (which kustomize-controller writes into the kustomization as \
`namespace:`). Cluster-scoped kinds need none: their scope comes from Kubernetes' built-in table, the CRD when it \
is in git, or the catalog's cluster-scoped kinds (ClusterIssuer, ClusterSecretStore, ...); a kind whose scope \
nothing tells is not judged. Set metadata.namespace, `namespace:` in the kustomization, or spec.targetNamespace."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for a in &cx.analyses {
            for u in &a.uses {
                if u.object.id.namespace.is_some() || u.tier.target_namespace.is_some() {
                    continue;
                }
                let id = &u.object.id;
                if a.providers.scope(&id.group, &id.kind) != Some(Scope::Namespaced) {
                    continue;
                }
                let label = a.cluster.tier_label(&u.tier.id);
                out.push(
                    Finding::new(
                        self,
                        a.cluster.name.clone(),
                        label.clone(),
                        format!(
                            "{id} in {label} has no metadata.namespace, and {label} sets no targetNamespace: Flux's dry-run fails with 'namespace not specified'"
                        ),
                    )
                    .object(id)
                    .at(u.object.source.clone().unwrap_or_else(|| u.tier.defined_at.clone()))
                    .related(u.tier.defined_at.clone(), format!("Kustomization {label}"))
                    .why(format!(
                        "kustomize-controller applies server-side with no default namespace; the dry-run of the stage holding {id} fails, nothing after it in {label} is applied, and {label} never becomes Ready"
                    ))
                    .fix(format!(
                        "set metadata.namespace on {id}, `namespace:` in the kustomization, or spec.targetNamespace on {label}"
                    )).build(),
                );
            }
        }
        out
    }
}
