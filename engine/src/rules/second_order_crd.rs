//! `second-order-crd`: a custom resource whose CRD a controller creates at
//! runtime (an operator, Crossplane, a package manager) can never exist
//! when its tier is dry-run: the trigger is in the same tier (Flux
//! dry-runs the whole stage first), or the trigger's tier never applies on
//! a cold start.
//!
//! The same-tier deadlock and the chains are worded as every cold-start
//! rule words them ([`cold_start::said`]: a namespace or a reference can
//! deadlock the same way).

use super::cold_start::{self, Cx, Said, Wording};
use super::{Context, Finding, Rule, RuleId, Severity};

#[derive(Debug)]
pub struct SecondOrderCrd;

impl Rule for SecondOrderCrd {
    fn id(&self) -> RuleId {
        RuleId::SecondOrderCrd
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn other_severities(&self) -> Option<&'static str> {
        Some(
            "a warning when a bootstrap step this tool could not read may install the CRD before Flux (`provides:` in conformance.yaml settles it)",
        )
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

impl Wording for SecondOrderCrd {
    fn said(&self, cx: &Cx) -> Said {
        cold_start::said(cx)
    }
}
