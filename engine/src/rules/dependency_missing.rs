//! `dependency-missing`: a `dependsOn` entry that names no Kustomization of
//! the cluster.

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::{Span, TierState};

#[derive(Debug)]
pub struct DependencyMissing;

impl Rule for DependencyMissing {
    fn id(&self) -> RuleId {
        RuleId::DependencyMissing
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn other_severities(&self) -> Option<&'static str> {
        Some(
            "a warning when the target holds a variable nothing here defines (`${releaseNamespace}/cloudnative-pg`), or when the cluster renders ResourceSets whose Kustomizations are not expanded",
        )
    }
    fn summary(&self) -> &'static str {
        "a dependsOn entry names a Kustomization that does not exist in the cluster (a typo, or a missing namespace)"
    }
    fn example(&self) -> &'static str {
        "apps-vms dependsOn platform-config-cdx, but the cluster has no such Kustomization (did you mean platform-config-cdi?)"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let model = cx.model;
        let mut out = Vec::new();
        for cluster in &model.clusters {
            let incomplete: Vec<String> = cluster
                .tiers
                .values()
                .filter(|t| {
                    !matches!(t.state, TierState::Rendered(_)) || !t.remote_bases.is_empty()
                })
                .map(|t| cluster.tier_label(&t.id))
                .collect();
            // ResourceSets generate Kustomizations this tool does not expand.
            let generators: Vec<String> = cluster
                .tiers
                .values()
                .flat_map(|t| t.resource_sets())
                .filter(|o| may_generate_kustomizations(o))
                .map(|o| o.id.to_string())
                .collect();
            for tier in cluster.tiers.values() {
                if cluster.known_statically(&tier.id) {
                    continue;
                }
                for dep in &tier.depends_on {
                    if cluster.tiers.contains_key(&dep.target) {
                        continue;
                    }
                    // A target still holding `${VAR}` after its parent's
                    // substitution names whatever the variable's value
                    // (unknown here) makes it: any tier the pattern fits
                    // may be it, and none fitting is only an assumption.
                    let templated =
                        dep.target.name.contains("${") || dep.target.namespace.contains("${");
                    if templated
                        && let (Some(ns), Some(name)) =
                            (pattern(&dep.target.namespace), pattern(&dep.target.name))
                        && cluster
                            .tiers
                            .keys()
                            .any(|id| ns.is_match(&id.namespace) && name.is_match(&id.name))
                    {
                        continue;
                    }
                    let label = cluster.tier_label(&tier.id);
                    let other_namespace: Vec<String> = cluster
                        .tiers
                        .keys()
                        .filter(|id| id.name == dep.target.name)
                        .map(|id| id.namespace.clone())
                        .collect();
                    let fix = if let Some(ns) = other_namespace.first() {
                        if dep.explicit_namespace {
                            format!(
                                "{} is in namespace {ns}, not {}: set `namespace: {ns}` in the entry",
                                dep.target.name, dep.target.namespace
                            )
                        } else {
                            format!(
                                "{} is in namespace {ns}; an entry without namespace means {label}'s own namespace ({}): add `namespace: {ns}` to the entry",
                                dep.target.name, tier.id.namespace
                            )
                        }
                    } else if let Some(near) = closest(
                        &dep.target.name,
                        cluster.tiers.keys().map(|id| id.name.as_str()),
                    ) {
                        format!(
                            "did you mean `{near}`? Correct the name, or add the missing Kustomization"
                        )
                    } else {
                        "correct the name, or add the missing Kustomization to the cluster"
                            .to_string()
                    };
                    let mut why = format!(
                        "Flux applies {label} only after {} exists and is Ready; it never will, so {label} and everything that depends on it never apply",
                        dep.target
                    );
                    if !incomplete.is_empty() {
                        why.push_str(&format!(
                            " (it may be defined in a tier that did not build or was not checked: {})",
                            incomplete.join(", ")
                        ));
                    }
                    let mut f = Finding::new(
                        self,
                        cluster.name.clone(),
                        label.clone(),
                        format!(
                            "{label} dependsOn {}, which is not a Kustomization in cluster {}",
                            dep.target, cluster.name
                        ),
                    )
                    .at(Span::new(tier.defined_at.file.clone(), dep.line))
                    .related_all(vec![(
                        tier.defined_at.clone(),
                        format!("Kustomization {label}"),
                    )])
                    .why(why)
                    .fix(fix);
                    if templated {
                        f = f.severity(Severity::Warning).detail(
                            "the target holds a variable no substitution of this cluster defines (a platform fills it in when it instantiates the tier): what it names is unknown here".to_string(),
                        );
                    }
                    if !generators.is_empty() {
                        f = f.severity(Severity::Warning);
                        f = f.detail(format!(
                            "the cluster renders ResourceSets ({}), whose generated Kustomizations are not expanded here: one of them may be {}",
                            generators.join(", "),
                            dep.target
                        ));
                    }
                    out.push(f.build());
                }
            }
        }
        out
    }
}

/// Whether a ResourceSet may generate Flux Kustomizations: one of its
/// `spec.resources` is one (or its kind is templated), or its
/// `spec.resourcesTemplate` names the kind (or templates a kind). One that
/// only renders, say, ExternalSecrets cannot be what a `dependsOn` names.
fn may_generate_kustomizations(o: &crate::model::Object) -> bool {
    let templated = |kind: &str| kind.contains("<<");
    let listed = o
        .body
        .path(&["spec", "resources"])
        .map(|r| {
            r.as_seq().iter().any(|item| {
                item.get("kind")
                    .and_then(|k| k.as_str())
                    .is_none_or(|k| k == "Kustomization" || templated(k))
            })
        })
        .unwrap_or(false);
    let template = o
        .body
        .path(&["spec", "resourcesTemplate"])
        .and_then(|t| t.as_str())
        .is_some_and(|t| {
            t.lines()
                .filter_map(|l| l.trim_start().strip_prefix("kind:"))
                .any(|k| k.trim() == "Kustomization" || templated(k))
        });
    listed || template
}

/// A `dependsOn` name or namespace as a pattern: each `${…}` in it stands
/// for any text (compiled once per entry).
fn pattern(written: &str) -> Option<regex::Regex> {
    let mut parts = Vec::new();
    let mut rest = written;
    while let Some(start) = rest.find("${") {
        parts.push(regex::escape(&rest[..start]));
        match rest[start..].find('}') {
            Some(end) => rest = &rest[start + end + 1..],
            None => {
                rest = "";
                break;
            }
        }
        parts.push(".*".to_string());
    }
    parts.push(regex::escape(rest));
    regex::Regex::new(&format!("^{}$", parts.concat())).ok()
}

/// The candidate nearest to `name` by edit distance, if it is close enough to
/// be a typo (also the nearest Flux kind for a misspelt one).
pub(super) fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .map(|c| (levenshtein(name, c), c))
        .filter(|(d, c)| *d <= (name.len().max(c.len()) / 3).max(1))
        .min()
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_names_only() {
        let names = ["platform-config", "platform-config-cdi", "apps-vms"];
        assert_eq!(
            closest("platform-config-cdx", names.into_iter()),
            Some("platform-config-cdi")
        );
        assert_eq!(closest("monitoring", names.into_iter()), None);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }
}
