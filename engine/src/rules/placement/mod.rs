//! `kind-placement` and `field-policy`: repository rules declared in
//! `conformance.yaml` (`policies.placement`, `policies.fields`).

use super::{Context, Finding, Rule, RuleId, Severity};
pub mod cfg;

use crate::model::{Object, Span};
use cfg::{FieldPath, matches_glob};

/// The `kind-placement` rule: a tier breaks a `policies.placement` entry.
#[derive(Debug)]
pub(crate) struct KindPlacement;
/// The `field-policy` rule: a rendered object's field breaks a `policies.fields` entry.
#[derive(Debug)]
pub(crate) struct FieldPolicyRule;

/// `Kind` matches any group; `group/Kind` (or `/Kind` for core) is exact.
fn kind_matches(pattern: &str, object: &Object) -> bool {
    match pattern.rsplit_once('/') {
        Some((group, kind)) => object.id.group == group && object.id.kind == kind,
        None => object.id.kind == pattern,
    }
}

impl Rule for KindPlacement {
    fn id(&self) -> RuleId {
        RuleId::KindPlacement
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a tier renders a kind it must not, lacks one it must have, or has the wrong number of it (policies.placement)"
    }
    fn example(&self) -> &'static str {
        "platform-config renders StorageProfile/longhorn-vm, which policies.placement forbids there (second-order kinds live in platform-config-cdi)"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for policy in &cx.settings.policies.placement {
            let reason = policy
                .reason
                .clone()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            let config_line = Span::new(
                crate::config_error::FILE_NAME,
                policy.kustomization.referenced.line() as u32,
            );
            for cluster in &cx.model.clusters {
                if !matches_glob(policy.cluster.as_deref(), &cluster.name) {
                    continue;
                }
                for tier in cluster.tiers.values() {
                    let label = cluster.tier_label(&tier.id);
                    if !matches_glob(Some(&policy.kustomization.value), &tier.id.name) {
                        continue;
                    }
                    let related = vec![
                        (config_line.clone(), "policies.placement".to_string()),
                        (tier.defined_at.clone(), format!("Kustomization {label}")),
                    ];
                    let finding = |object: Option<&Object>, message: String, fix: String| {
                        Finding::new(self, cluster.name.clone(), label.clone(), message)
                            .object_opt(object.map(|o| &o.id))
                            .at(object
                                .and_then(|o| o.source.clone())
                                .unwrap_or_else(|| tier.defined_at.clone()))
                            .related_all(related.clone())
                            .why(format!(
                                "the repository decided where this kind lives{reason}; this tier breaks that decision"
                            ))
                            .fix(fix)
                    };
                    for kind in &policy.forbid {
                        for object in tier.objects().iter().filter(|o| kind_matches(kind, o)) {
                            out.push(finding(
                                Some(object),
                                format!("{label} renders {}, and policies.placement forbids {kind} in {label}{reason}", object.id),
                                format!("move {} out of {label}", object.id),
                            ).build());
                        }
                    }
                    for kind in &policy.require {
                        if !tier.objects().iter().any(|o| kind_matches(kind, o)) {
                            out.push(finding(
                                None,
                                format!("{label} renders no {kind}, and policies.placement requires it{reason}"),
                                format!("put the {kind} objects back in {label}"),
                            ).build());
                        }
                    }
                    for (kind, want) in &policy.count {
                        let found: Vec<&Object> = tier
                            .objects()
                            .iter()
                            .filter(|o| kind_matches(kind, o))
                            .collect();
                        if found.len() != *want {
                            let names: Vec<String> =
                                found.iter().map(|o| o.id.to_string()).collect();
                            out.push(finding(
                                None,
                                format!(
                                    "{label} renders {} {kind} ({}), policies.placement wants exactly {want}{reason}",
                                    found.len(),
                                    if names.is_empty() { "none".into() } else { names.join(", ") }
                                ),
                                format!("make {label} render exactly {want} {kind}, or update the count"),
                            ).build());
                        }
                    }
                }
            }
        }
        out
    }
}

impl Rule for FieldPolicyRule {
    fn id(&self) -> RuleId {
        RuleId::FieldPolicy
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a rendered object's field is present, absent, different or not matching where policies.fields says otherwise"
    }
    fn example(&self) -> &'static str {
        "KubeVirt/kubevirt/kubevirt sets spec.configuration.evictionStrategy, which policies.fields forbids (it would wedge drains of RWO-disk VMs)"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for policy in &cx.settings.policies.fields {
            let Ok(path) = FieldPath::parse(&policy.path.value) else {
                continue;
            };
            let regex = policy
                .matches
                .as_ref()
                .and_then(|m| regex::Regex::new(&m.value).ok());
            let reason = policy
                .reason
                .clone()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            let field = &policy.path.value;
            let config_line = Span::new(
                crate::config_error::FILE_NAME,
                policy.path.referenced.line() as u32,
            );
            for cluster in &cx.model.clusters {
                if !matches_glob(policy.cluster.as_deref(), &cluster.name) {
                    continue;
                }
                for tier in cluster.tiers.values() {
                    if !matches_glob(policy.kustomization.as_deref(), &tier.id.name) {
                        continue;
                    }
                    let label = cluster.tier_label(&tier.id);
                    for object in tier.objects().iter().filter(|o| selects(policy, o)) {
                        let reached = path.select(&object.body);
                        let Some((problem, line)) = problem(policy, regex.as_ref(), &reached)
                        else {
                            continue;
                        };
                        let at = object
                            .source
                            .clone()
                            .map(|s| if line > 0 { Span::new(s.file, line) } else { s });
                        out.push(
                            Finding::new(
                                self,
                                cluster.name.clone(),
                                label.clone(),
                                format!("{} in {label} {problem}{reason}", object.id),
                            )
                            .object(object.id.to_string())
                            .at(at.or_else(|| Some(tier.defined_at.clone())))
                            .related_all(vec![
                                (config_line.clone(), "policies.fields".into()),
                                (tier.defined_at.clone(), format!("Kustomization {label}")),
                            ])
                            .why(format!(
                                "policies.fields records a decision about {field}{reason}"
                            ))
                            .fix(format!(
                                "change {field} in {} as the policy says, or update the policy",
                                object.id
                            ))
                            .build(),
                        );
                    }
                }
            }
        }
        out
    }
}

/// Whether a field policy applies to an object: its kind, name and
/// namespace.
fn selects(policy: &cfg::FieldPolicy, object: &Object) -> bool {
    kind_matches(&policy.kind, object)
        && matches_glob(policy.name.as_deref(), &object.id.name)
        && policy.namespace.as_deref().is_none_or(|ns| {
            object
                .id
                .namespace
                .as_deref()
                .is_some_and(|o| matches_glob(Some(ns), o))
        })
}

/// How the nodes a policy's path reaches break it (absent, present,
/// equals, matches `regex`), with the line of the node at fault (0 for
/// none); `None` when they keep it.
fn problem(
    policy: &cfg::FieldPolicy,
    regex: Option<&regex::Regex>,
    reached: &[&crate::yaml::Node],
) -> Option<(String, u32)> {
    let field = &policy.path.value;
    let (problem, line): (Option<String>, u32) = if policy.absent == Some(true) {
        match reached.first() {
            Some(n) => (Some(format!("sets {field}, which must be absent")), n.line),
            None => (None, 0),
        }
    } else if policy.present == Some(true) {
        if reached.is_empty() {
            (
                Some(format!("does not set {field}, which must be present")),
                0,
            )
        } else {
            (None, 0)
        }
    } else if let Some(want) = &policy.equals {
        match reached
            .iter()
            .find(|n| n.as_scalar_string().as_deref() != Some(want.value.as_str()))
        {
            Some(n) => (
                Some(format!(
                    "has {field} = {}, policy wants {}",
                    shown(n),
                    want.value
                )),
                n.line,
            ),
            None if reached.is_empty() => (
                Some(format!("does not set {field}, policy wants {}", want.value)),
                0,
            ),
            None => (None, 0),
        }
    } else if let Some(re) = regex {
        match reached
            .iter()
            .find(|n| !n.as_scalar_string().is_some_and(|v| re.is_match(&v)))
        {
            Some(n) => (
                Some(format!(
                    "has {field} = {}, which does not match {}",
                    shown(n),
                    re.as_str()
                )),
                n.line,
            ),
            None if reached.is_empty() => (
                Some(format!(
                    "does not set {field}, which must match {}",
                    re.as_str()
                )),
                0,
            ),
            None => (None, 0),
        }
    } else {
        (None, 0)
    };
    Some((problem?, line))
}

/// A value for a message: scalars as text, structures by shape.
fn shown(node: &crate::yaml::Node) -> String {
    match node.as_scalar_string() {
        Some(s) => format!("`{s}`"),
        None if node.is_map() => "a mapping".into(),
        None if !node.as_seq().is_empty() => "a list".into(),
        None => "null".into(),
    }
}
