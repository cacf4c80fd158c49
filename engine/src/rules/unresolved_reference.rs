//! `unresolved-reference`: an object names another object that the
//! repository defines, but only in a tier that never applies on a cold
//! start, or that it races and loses for good (the references themselves
//! are read in [`crate::convergence::references`]).

use super::{Context, Finding, Rule, RuleId, Severity, cold_start};

#[derive(Debug)]
pub struct UnresolvedReference;

impl Rule for UnresolvedReference {
    fn id(&self) -> RuleId {
        RuleId::UnresolvedReference
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "an object refers to another object the repository defines, but in a tier that never applies on a cold start, or that it races and loses for good"
    }
    fn example(&self) -> &'static str {
        "DataVolume/vms/unifi-root in apps-vms refers to StorageProfile/longhorn-vm, which platform-config-cdi applies, but apps-vms is not ordered after platform-config-cdi: CDI stamps the claim with the profile's modes once"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        cold_start::findings(cx, self)
    }
}
