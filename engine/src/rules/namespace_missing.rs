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
    fn check(&self, cx: &Context) -> Vec<Finding> {
        cold_start::findings(cx, self)
    }
}
