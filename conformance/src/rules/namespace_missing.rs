//! `namespace-missing`: a namespaced object whose namespace no ancestor (and
//! not its own tier) creates.

use super::{Context, Finding, Rule, Severity};
use crate::provenance::Scope;

#[derive(Debug)]
pub struct NamespaceMissing;

impl Rule for NamespaceMissing {
    fn id(&self) -> &'static str {
        "namespace-missing"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a namespaced object's namespace is created by no tier that is applied before it (nor by its own tier)"
    }
    fn example(&self) -> &'static str {
        "DataVolume/vms/unifi-root in apps-vms: namespace vms is created by no Kustomization of cluster prod"
    }
    fn explain(&self) -> &'static str {
        "Flux applies Namespaces in the first stage of a tier, so a Namespace and the objects in it can share a \
tier; a namespace created by a tier the object's tier depends on (or by the parent that renders its Kustomization) is \
also there in time. Otherwise the server-side dry-run of the object fails with 'namespaces not found' on a cold \
cluster (only default, kube-system, kube-public, kube-node-lease and Flux's own namespace exist at first) and the \
tier never becomes Ready. Create the Namespace in the same tier or an ancestor, or set spec.targetNamespace to a \
namespace that exists."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for a in &cx.analyses {
            for u in &a.uses {
                let Some(ns) = &u.object.id.namespace else {
                    continue;
                };
                if a.initial_namespaces.contains(ns) {
                    continue;
                }
                if a.providers.scope(&u.object.id.group, &u.object.id.kind) == Some(Scope::Cluster)
                {
                    continue;
                }
                let creators = a.providers.namespaces.get(ns).cloned().unwrap_or_default();
                let applied = a.order.applied_before(&u.tier.id);
                if creators
                    .iter()
                    .any(|t| *t == u.tier.id || applied.contains(t))
                {
                    continue;
                }
                let label = a.cluster.tier_label(&u.tier.id);
                let (message, fix) = if creators.is_empty() {
                    (
                        format!(
                            "{} in {label}: namespace {ns} is created by no Kustomization of cluster {}",
                            u.object.id, a.cluster.name
                        ),
                        format!("add a Namespace {ns} to {label} or to a tier it depends on"),
                    )
                } else {
                    let names: Vec<String> =
                        creators.iter().map(|t| a.cluster.tier_label(t)).collect();
                    (
                        format!(
                            "{} in {label}: namespace {ns} is created only by {}, which {label} does not depend on",
                            u.object.id,
                            names.join(", ")
                        ),
                        format!(
                            "add `dependsOn: {}` to {label}, or create the Namespace in {label}",
                            names[0]
                        ),
                    )
                };
                out.push(Finding::new(self, a.cluster.name.clone(), label.clone(), message).object(u.object.id.to_string()).at(u.object.source.clone().or_else(|| Some(u.tier.defined_at.clone()))).related_all(vec![(u.tier.defined_at.clone(), format!("Kustomization {label}"))]).why("on a cold cluster the namespace does not exist when this tier is dry-run, so the stage fails with 'namespaces not found' and the tier never becomes Ready").fix(fix));
            }
        }
        out
    }
}
