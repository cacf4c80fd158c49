//! `health-gate`: a second-order kind is used after its trigger's tier,
//! but that tier's Ready does not prove the CRD exists (no health check on
//! the trigger, or one kstatus reads as Current as soon as it exists), so
//! the dependent races the operator and converges only after retries.
//!
//! An ungated supplier is worded as every cold-start rule words it
//! ([`cold_start::said`]; a namespace or a reference behind an ungated
//! supplier is a `cold-start-race`); for a kind, the fix is the health
//! check to add, as YAML.

use super::cold_start::{self, Cx, Said, Wording};
use super::{Context, Finding, Rule, RuleId, Severity};

#[derive(Debug)]
pub struct HealthGate;

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

impl Wording for HealthGate {
    fn said(&self, cx: &Cx) -> Said {
        cold_start::said(cx)
    }
}
