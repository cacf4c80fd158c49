//! `unresolved-reference`: an object names another object that the
//! repository defines, but only in a tier that never applies on a cold
//! start, or that it races and loses for good; or one nothing creates (the
//! references themselves are read in [`crate::convergence::references`]).
//!
//! Its own words are for a target nothing creates; a race lost for good
//! and a supplier that never applies are worded as every cold-start rule
//! words them ([`cold_start::said`]).

use super::cold_start::{self, Cx, Need, Said, Wording, words::missing_why};
use super::finding::Cause;
use super::{Context, Finding, Rule, RuleId, Severity};
use crate::convergence::{ReferenceUse, Verdict};

#[derive(Debug)]
pub struct UnresolvedReference;

impl Rule for UnresolvedReference {
    fn id(&self) -> RuleId {
        RuleId::UnresolvedReference
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn other_severities(&self) -> Option<&'static str> {
        Some(
            "a warning where the platform often creates such targets itself, when a bootstrap step this tool could not read may create the target (`provides:` in conformance.yaml settles it), or when nothing the run reads creates it on a cluster whose world the run does not read whole (a boundary item: `external:` settles it)",
        )
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

impl Wording for UnresolvedReference {
    fn said(&self, cx: &Cx) -> Said {
        match (cx.need, cx.need.verdict()) {
            (Need::Reference(u), Verdict::Unknown) => uncreated(cx, u),
            _ => cold_start::said(cx),
        }
    }
}

/// No Kustomization of the cluster renders the target, and nothing the
/// repository applies before Flux creates it.
fn uncreated(cx: &Cx, u: &ReferenceUse) -> Said {
    let (w, label, cluster) = (&cx.w, &cx.label, cx.a.cluster);
    let target = u.reference.target();
    let uncertain = if u.reference.certain {
        String::new()
    } else {
        format!(
            " (unless something outside the repository creates it: Terraform, the platform, an operator this tool does not model; then declare it in conformance.yaml: `external: [\"{target}\"]`)"
        )
    };
    Said::from((
        format!(
            "{} {}, which no Kustomization of cluster {} renders and nothing the repository applies before Flux creates{uncertain}",
            w.subject, w.wants, cluster.name
        ),
        missing_why(&u.reference, label),
        format!(
            "create {target} in a tier {label} depends on{}, or, if it is created outside the repository (Terraform, the platform), declare it under `external:` in conformance.yaml",
            if u.reference.via == "spec.valuesFrom" || u.reference.via == "postBuild.substituteFrom"
            {
                ", mark the entry `optional: true`"
            } else {
                ""
            }
        ),
        Some(Cause {
            key: format!("missing:{target}"),
            text: format!(
                "{target} is read by {} but nothing creates it",
                u.reference
                    .via
                    .strip_prefix("postBuild.")
                    .unwrap_or(u.reference.via)
            ),
            fix: format!(
                "create {target} before them, or, if it comes from outside, declare it under `external:` in conformance.yaml"
            ),
        }),
    ))
}
