//! The finding of one API version and verdict: its objects named (the
//! first few, then how many more), what the verdict means for their
//! Kustomizations, and how to migrate.

use super::super::{Cause, Finding, Rule, Severity};
use super::ApiStatus;
use crate::convergence::ClusterAnalysis;
use crate::model::{Object, Span, Tier};

/// How many objects a grouped finding names in its message.
const NAMED: usize = 8;

/// The objects of a finding as its words name them.
struct Named {
    /// "HelmRelease/web/nginx in apps", or "3 objects in 2 Kustomizations
    /// (HelmRelease/web/nginx in apps, …)".
    subject: String,
    /// "uses" or "use".
    uses: &'static str,
    /// The apiVersion.
    api: String,
    /// The Kustomization that never becomes Ready, or "each of their
    /// Kustomizations".
    their: String,
    /// The objects' kind.
    kind: String,
}

/// What a finding says, and its severity when not the rule's.
struct Words {
    message: String,
    why: String,
    fix: String,
    at: Option<Span>,
    cause: String,
    severity: Option<Severity>,
}

pub(super) fn finding(
    rule: &dyn Rule,
    a: &ClusterAnalysis,
    members: &[(&Tier, &Object)],
    s: &ApiStatus,
) -> Finding {
    let (tier, o) = members[0];
    let label = a.cluster.tier_label(&tier.id);
    let api = o.id.api_version();
    let tiers: std::collections::BTreeSet<&crate::model::TierId> =
        members.iter().map(|(t, _)| &t.id).collect();
    let named = Named {
        subject: subject(a, members, tiers.len(), &label),
        uses: if members.len() == 1 { "uses" } else { "use" },
        api: api.clone(),
        their: if tiers.len() == 1 {
            label.clone()
        } else {
            "each of their Kustomizations".to_string()
        },
        kind: o.id.kind.clone(),
    };
    let Words {
        message,
        why,
        fix,
        at,
        cause,
        severity,
    } = words(s, &named);
    let mut f = Finding::new(rule, a.cluster.name.clone(), label.clone(), message)
        .object(o.id.to_string())
        .at(o.source.clone().or_else(|| Some(tier.defined_at.clone())))
        .related(tier.defined_at.clone(), format!("Kustomization {label}"))
        .why(why)
        .fix(fix.clone())
        .cause(Cause {
            key: format!("api:{api}/{}", o.id.kind),
            text: cause,
            fix,
        });
    for (t, other) in members.iter().skip(1).take(NAMED) {
        if let Some(src) = &other.source {
            f = f.related(
                src.clone(),
                format!("{} in {}", other.id, a.cluster.tier_label(&t.id)),
            );
        }
    }
    if let Some(at) = at {
        f = f.related(at, "where the cluster's version is written");
    }
    if let Some(severity) = severity {
        f = f.severity(severity);
    }
    f.build()
}

/// "HelmRelease/web/nginx in apps", or "3 objects in 2 Kustomizations
/// (HelmRelease/web/nginx in apps, …)".
fn subject(a: &ClusterAnalysis, members: &[(&Tier, &Object)], tiers: usize, label: &str) -> String {
    if members.len() == 1 {
        return format!("{} in {label}", members[0].1.id);
    }
    let mut named: Vec<String> = members
        .iter()
        .take(NAMED)
        .map(|(t, o)| format!("{} in {}", o.id, a.cluster.tier_label(&t.id)))
        .collect();
    if members.len() > NAMED {
        named.push(format!("and {} more", members.len() - NAMED));
    }
    format!(
        "{} objects in {} Kustomization{} ({})",
        members.len(),
        tiers,
        if tiers == 1 { "" } else { "s" },
        named.join(", ")
    )
}

/// How to move off the version: Flux's migration command, the
/// replacement, or removing an API that has none.
fn migrate(flux: bool, replacement: &str) -> String {
    if flux {
        format!(
            "use {replacement} (`flux migrate -f <path>`, Flux v2.7.1 and later, rewrites the files)"
        )
    } else if replacement.is_empty() {
        "remove it: the API has no replacement (PodSecurityPolicy: use Pod Security Admission)"
            .to_string()
    } else {
        format!("use {replacement}, and move to its schema")
    }
}

/// What the finding says of a verdict on the named objects.
fn words(s: &ApiStatus, n: &Named) -> Words {
    let Named {
        subject,
        uses,
        api,
        their,
        kind,
    } = n;
    match s {
        ApiStatus::Removed {
            by,
            since,
            replacement,
            flux,
            at,
            assumed,
        } => {
            let mut severity = None;
            let mut fix = migrate(*flux, replacement);
            if let Some(declare) = assumed {
                // An assumed version is no ground for an error.
                severity = Some(Severity::Warning);
                fix = format!("{fix}; or, if the cluster runs an older release, {declare}");
            }
            Words {
                message: format!(
                    "{subject} {uses} {api}, which {by} {} ({})",
                    if since.starts_with("never") {
                        "does not serve"
                    } else {
                        "no longer serves"
                    },
                    if since.starts_with('v') || since.contains('.') && !since.starts_with("never") {
                        format!("removed in {since}")
                    } else {
                        since.clone()
                    }
                ),
                why: format!(
                    "the API server rejects {api} at the dry-run ('no matches for kind'), the stage aborts, and {their} never becomes Ready on a cold start"
                ),
                fix,
                at: at.clone(),
                cause: format!("{api}/{kind} is no longer served"),
                severity,
            }
        }
        ApiStatus::Deprecated {
            by,
            since,
            removed,
            replacement,
            flux,
            at,
            warning,
        } => Words {
            message: format!(
                "{subject} {uses} {api}, deprecated in {by}{}{}",
                if since.starts_with('v') || since.contains('.') {
                    format!(" since {since}")
                } else {
                    String::new()
                },
                removed
                    .as_ref()
                    .map(|r| format!(" (removed in {r})"))
                    .unwrap_or_default()
            ),
            why: warning.clone().unwrap_or_else(|| {
                "it is still served, but the release that removes it fails every tier that uses it".into()
            }),
            fix: migrate(*flux, replacement),
            at: at.clone(),
            cause: format!("{api}/{kind} is deprecated"),
            severity: None,
        },
    }
}
