//! `namespace-missing`: a namespaced object whose namespace no tier
//! creates, or only a tier that never applies on a cold start.
//!
//! Its own words are for a namespace nothing creates; a supplier that
//! never applies is worded as every cold-start rule words it
//! ([`cold_start::said`]).

use super::cold_start::{self, Cx, Need, Said, Wording};
use super::finding::Cause;
use super::{Context, Finding, Rule, RuleId, Severity};
use crate::convergence::{NamespaceUse, Verdict};

#[derive(Debug)]
pub struct NamespaceMissing;

impl Rule for NamespaceMissing {
    fn id(&self) -> RuleId {
        RuleId::NamespaceMissing
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn other_severities(&self) -> Option<&'static str> {
        Some(
            "a warning when a bootstrap step this tool could not read may create the namespace (`provides:` in conformance.yaml settles it), or when nothing the run reads creates it on a cluster whose world the run does not read whole (a boundary item: `external:` settles it)",
        )
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

impl Wording for NamespaceMissing {
    fn said(&self, cx: &Cx) -> Said {
        match (cx.need, cx.need.verdict()) {
            (Need::Namespace(u), Verdict::Unknown) => uncreated(cx, u),
            _ => cold_start::said(cx),
        }
    }
}

/// No Kustomization of the cluster creates the namespace.
fn uncreated(cx: &Cx, u: &NamespaceUse) -> Said {
    let (w, label, cluster) = (&cx.w, &cx.label, cx.a.cluster);
    Said::from((
        format!(
            "{}: namespace {} is created by no Kustomization of cluster {}",
            w.subject, u.namespace, cluster.name
        ),
        "on a cold cluster the namespace does not exist when this tier is dry-run, so the stage fails with 'namespaces not found' and the tier never becomes Ready".into(),
        format!("add a Namespace {} to {label} or to a tier it depends on", u.namespace),
        Some(Cause {
            key: format!("unknown:namespace {}", u.namespace),
            text: format!("no Kustomization creates namespace {}", u.namespace),
            fix: format!("create Namespace {} in a tier they all depend on", u.namespace),
        }),
    ))
}
