//! `namespace-missing`: a namespaced object whose namespace no tier creates,
//! or only a tier that never applies on a cold start.

use super::{Context, Finding, Rule, RuleId, Severity, cold_start};

#[derive(Debug)]
pub struct NamespaceMissing;

impl Rule for NamespaceMissing {
    fn id(&self) -> RuleId {
        RuleId::NamespaceMissing
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a namespaced object's namespace is created by no Kustomization, or only by one that never applies on a cold start"
    }
    fn example(&self) -> &'static str {
        "DataVolume/vms/unifi-root in apps-vms: namespace vms is created by no Kustomization of cluster prod"
    }
    fn explain(&self) -> &'static str {
        "Flux applies Namespaces in the first stage of a tier (fluxcd/pkg ssa ApplyAllStaged), so a Namespace \
and the objects in it can share a tier, and a namespace created by a tier that starts is there even if that tier's \
later stages fail. Otherwise the server-side dry-run of the object fails with 'namespaces not found' (only default, \
kube-system, kube-public, kube-node-lease and Flux's own namespace exist at first). When no Kustomization creates the \
namespace, or only one that can never start on a cold start (it depends on this tier, is applied by it, is \
suspended, ...), the tier never becomes Ready: an error, with the chain. When the creator is merely unordered, Flux's \
retries resolve it (cold-start-race, a warning). Create the Namespace in the same tier or one it depends on, or set \
spec.targetNamespace to a namespace that exists."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        cold_start::findings(cx, self)
    }
}
