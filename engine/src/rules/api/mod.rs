//! `api-removed` and `api-deprecated`: whether each rendered object's
//! `apiVersion` is served by what its cluster runs.
//!
//! * A kind whose CRD the cluster has in git: the CRD's `spec.versions`
//!   (absent or `served: false`: removed; `deprecated: true`: deprecated,
//!   with its `deprecationWarning`). Flux's own kinds are judged this way
//!   when the repository carries `gotk-components.yaml`.
//! * Flux's kinds otherwise: the Flux release the cluster installs
//!   ([`crate::provenance::installed`]), against `flux-apis.txt`.
//! * Built-in kinds: the cluster's Kubernetes minor
//!   ([`crate::provenance::distribution`]), against `kubernetes-apis.txt`.
//!
//! A cluster whose versions the repository does not pin (or pins as a range,
//! `2.x`) is judged against the newest release the tables know, and the
//! message says so.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::convergence::ClusterAnalysis;
use crate::model::{Object, Span, Tier};
use crate::provenance::distribution::{self, KubeVersion};
use crate::provenance::installed::{Version, releases};

#[derive(Debug)]
pub struct ApiRemoved;
#[derive(Debug)]
pub struct ApiDeprecated;

impl Rule for ApiRemoved {
    fn id(&self) -> RuleId {
        RuleId::ApiRemoved
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "an object's apiVersion is no longer served by the Kubernetes, the Flux or the CRD its cluster runs"
    }
    fn example(&self) -> &'static str {
        "Kustomization/flux-system/apps in flux-system uses kustomize.toolkit.fluxcd.io/v1beta2, which Flux v2.9.4 no longer serves (removed in v2.8.0); use kustomize.toolkit.fluxcd.io/v1"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        findings(cx, self, true)
    }
}

impl Rule for ApiDeprecated {
    fn id(&self) -> RuleId {
        RuleId::ApiDeprecated
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn summary(&self) -> &'static str {
        "an object's apiVersion is deprecated in what its cluster runs: it still works, and the next upgrade removes it"
    }
    fn example(&self) -> &'static str {
        "HelmRelease/apps/web in apps uses helm.toolkit.fluxcd.io/v2beta2, deprecated since Flux v2.3.0 (removed in v2.8.0); use helm.toolkit.fluxcd.io/v2"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        findings(cx, self, false)
    }
}

/// One row of a version table.
#[derive(Debug, Clone)]
struct Row {
    group: String,
    version: String,
    kind: String,
    deprecated: Option<String>,
    removed: Option<String>,
    replacement: String,
}

fn parse(text: &str) -> Vec<Row> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            let opt = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_string());
            Some(Row {
                group: f.first()?.to_string(),
                version: f.get(1)?.to_string(),
                kind: f.get(2)?.to_string(),
                deprecated: opt(f.get(3)?),
                removed: opt(f.get(4)?),
                replacement: f.get(5)?.to_string(),
            })
        })
        .collect()
}

fn kubernetes_rows() -> &'static [Row] {
    static TABLE: OnceLock<Vec<Row>> = OnceLock::new();
    TABLE.get_or_init(|| parse(include_str!("kubernetes-apis.txt")))
}

fn flux_rows() -> &'static [Row] {
    static TABLE: OnceLock<Vec<Row>> = OnceLock::new();
    TABLE.get_or_init(|| parse(include_str!("flux-apis.txt")))
}

/// What an object's apiVersion is, for its cluster.
#[derive(Debug, Clone)]
enum ApiStatus {
    Removed {
        /// "Flux v2.9.4 (gotk-components.yaml:3)", "Kubernetes 1.36".
        by: String,
        since: String,
        replacement: String,
        flux: bool,
        at: Option<Span>,
        /// The version judged against is assumed (the repository does not
        /// show it): what to declare to make it certain.
        assumed: Option<String>,
    },
    Deprecated {
        by: String,
        since: String,
        removed: Option<String>,
        replacement: String,
        flux: bool,
        at: Option<Span>,
        warning: Option<String>,
    },
}

fn minor_text(m: (u32, u32)) -> String {
    format!("{}.{}", m.0, m.1)
}

/// A table's minor (`1.25`) or release (`v2.8.0`, `<=v2.0.0`).
fn table_minor(s: &str) -> Option<(u32, u32)> {
    crate::versions::minor_version(s.trim_start_matches("<="))
}

fn status(
    a: &ClusterAnalysis,
    crds: &BTreeMap<(String, String), &Object>,
    kube: &Option<KubeVersion>,
    o: &Object,
) -> Option<ApiStatus> {
    let id = &o.id;
    // A CRD the cluster has in git says which versions it serves.
    if let Some(crd) = crds.get(&(id.group.clone(), id.kind.clone())) {
        let versions = crd
            .body
            .path(&["spec", "versions"])
            .map(crate::yaml::Node::as_seq)
            .unwrap_or_default();
        let name = |v: &crate::yaml::Node| v.str_at(&["name"]).unwrap_or_default();
        let storage = versions
            .iter()
            .find(|v| v.path(&["storage"]).and_then(crate::yaml::Node::as_bool) == Some(true))
            .map(name)
            .or_else(|| versions.first().map(name))
            .unwrap_or_default();
        let crd_name = crd.id.name.clone();
        let by = format!("its CRD {crd_name}");
        let flux = id.group.ends_with(".toolkit.fluxcd.io");
        let mine = versions.iter().find(|v| name(v) == id.version);
        return match mine {
            None => Some(ApiStatus::Removed {
                by,
                since: "it does not list it".into(),
                replacement: format!("{}/{storage}", id.group),
                flux,
                at: crd.source.clone(),
                assumed: None,
            }),
            Some(v) if v.path(&["served"]).and_then(crate::yaml::Node::as_bool) == Some(false) => {
                Some(ApiStatus::Removed {
                    by,
                    since: "served: false".into(),
                    replacement: format!("{}/{storage}", id.group),
                    flux,
                    at: crd.source.clone(),
                    assumed: None,
                })
            }
            Some(v)
                if v.path(&["deprecated"]).and_then(crate::yaml::Node::as_bool) == Some(true) =>
            {
                Some(ApiStatus::Deprecated {
                    by,
                    since: "deprecated: true".into(),
                    removed: None,
                    replacement: format!("{}/{storage}", id.group),
                    flux,
                    at: crd.source.clone(),
                    warning: v.str_at(&["deprecationWarning"]),
                })
            }
            Some(_) => None,
        };
    }
    let row = |rows: &'static [Row]| {
        rows.iter()
            .find(|r| r.group == id.group && r.version == id.version && r.kind == id.kind)
    };
    if id.group.ends_with(".toolkit.fluxcd.io") {
        let r = row(flux_rows())?;
        let newest = releases().last().map(|r| r.flux)?;
        let cluster = &a.cluster.name;
        let (flux, by, at, assumed) = match &a.installed {
            Some(i) if i.pinned && i.flux.is_some() => {
                let v = i.flux.expect("checked");
                (v, format!("Flux {v} ({})", i.at), Some(i.at.clone()), None)
            }
            Some(i) => {
                let v = i.flux.unwrap_or(newest);
                (
                    v,
                    format!(
                        "Flux {v} (the repository installs `{}`, a range: judged against the newest release it admits)",
                        i.written
                    ),
                    Some(i.at.clone()),
                    None,
                )
            }
            None => (
                newest,
                format!(
                    "Flux {newest} (assumed: the repository does not show which Flux it installs, so it is judged against the newest release)"
                ),
                None,
                Some(format!(
                    "declare the Flux the cluster runs in conformance.yaml: `clusters: {{{cluster}: {{flux: v2.7.2}}}}` (with its real release)"
                )),
            ),
        };
        let at_least = |s: &Option<String>| {
            s.as_deref()
                .and_then(|s| Version::parse(s.trim_start_matches("<=")))
                .is_some_and(|v| flux >= v)
        };
        if at_least(&r.removed) {
            return Some(ApiStatus::Removed {
                by,
                since: r.removed.clone().unwrap_or_default(),
                replacement: r.replacement.clone(),
                flux: true,
                at,
                assumed,
            });
        }
        if at_least(&r.deprecated) {
            return Some(ApiStatus::Deprecated {
                by,
                since: r
                    .deprecated
                    .clone()
                    .unwrap_or_default()
                    .trim_start_matches("<=")
                    .to_string(),
                removed: r.removed.clone(),
                replacement: r.replacement.clone(),
                flux: true,
                at,
                warning: None,
            });
        }
        return None;
    }
    let known = row(kubernetes_rows());
    // A built-in kind in a version no release of the table serves (a typo,
    // `apps/v9`, `apiVersion: 1`): the API server has no such kind.
    let never = if known.is_none() {
        let builtin = crate::builtin::builtin();
        let versions: Vec<&str> = builtin
            .iter()
            .filter(|b| b.group == id.group && b.kind == id.kind)
            .map(|b| b.version.as_str())
            .collect();
        if versions.is_empty() || versions.contains(&id.version.as_str()) {
            return None;
        }
        let served = |v: &&str| {
            builtin
                .iter()
                .find(|b| b.group == id.group && b.kind == id.kind && b.version == *v)
                .is_some_and(|b| b.minors.1 == distribution::NEWEST.1)
        };
        let current = versions
            .iter()
            .find(|v| served(v))
            .or(versions.first())
            .copied();
        Some(current.map_or_else(String::new, |v| {
            if id.group.is_empty() {
                v.to_string()
            } else {
                format!("{}/{v}", id.group)
            }
        }))
    } else {
        None
    };
    let cluster = &a.cluster.name;
    let (minor, by, at, assumed) = match kube {
        Some(k) => (
            k.minor,
            match &k.at {
                Some(at) => format!("Kubernetes {} ({at})", minor_text(k.minor)),
                None => format!("Kubernetes {}", minor_text(k.minor)),
            },
            k.at.clone(),
            None,
        ),
        None => (
            distribution::NEWEST,
            format!(
                "Kubernetes {} (assumed: the repository does not pin the cluster's version, so it is judged against the newest minor)",
                minor_text(distribution::NEWEST)
            ),
            None,
            Some(format!(
                "declare the Kubernetes the cluster runs in conformance.yaml: `clusters: {{{cluster}: {{kubernetes: '1.33'}}}}` (with its real minor)"
            )),
        ),
    };
    if let Some(replacement) = never {
        // A version that is not shaped like one (`1`, `v1.0`) is served by
        // no Kubernetes at all, whatever the cluster runs. Otherwise, a
        // cluster newer than the table may serve one it does not know.
        let shaped = regex::Regex::new(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
            .is_ok_and(|re| re.is_match(&id.version));
        let assumed = if shaped { assumed } else { None };
        let assumed = assumed.or_else(|| {
            (shaped && minor > distribution::NEWEST).then(|| {
                format!(
                    "this tool knows Kubernetes up to {}: if {} serves this version, waive the finding",
                    minor_text(distribution::NEWEST),
                    minor_text(minor)
                )
            })
        });
        return Some(ApiStatus::Removed {
            by,
            since: format!(
                "never served: no Kubernetes from 1.{} to 1.{} has {} in this version",
                distribution::OLDEST.1,
                distribution::NEWEST.1,
                id.kind
            ),
            replacement,
            flux: false,
            at,
            assumed,
        });
    }
    let r = known?;
    let reached = |s: &Option<String>| {
        s.as_deref()
            .and_then(table_minor)
            .is_some_and(|m| minor >= m)
    };
    if reached(&r.removed) {
        return Some(ApiStatus::Removed {
            by,
            since: r.removed.clone().unwrap_or_default(),
            replacement: r.replacement.clone(),
            flux: false,
            at,
            assumed,
        });
    }
    if reached(&r.deprecated) {
        return Some(ApiStatus::Deprecated {
            by,
            since: r.deprecated.clone().unwrap_or_default(),
            removed: r.removed.clone(),
            replacement: r.replacement.clone(),
            flux: false,
            at,
            warning: None,
        });
    }
    None
}

/// Objects of one API version with one verdict: the key, the verdict, and
/// each object with its tier.
type Group<'a> = (String, ApiStatus, Vec<(&'a Tier, &'a Object)>);

fn findings(cx: &Context, rule: &dyn Rule, removed: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    for a in &cx.analyses {
        let crds = &a.crds;
        let kube = &a.kubernetes;
        // One finding per API version and verdict, listing its objects.
        let mut groups: Vec<Group> = Vec::new();
        for tier in a.cluster.local_tiers() {
            for o in tier.objects() {
                let Some(s) = status(a, crds, kube, o) else {
                    continue;
                };
                match (&s, removed) {
                    (ApiStatus::Removed { .. }, true) | (ApiStatus::Deprecated { .. }, false) => {
                        let key = format!("{}|{}", o.id.api_version(), s.key());
                        match groups.iter_mut().find(|(k, _, _)| *k == key) {
                            Some((_, _, members)) => members.push((tier, o)),
                            None => groups.push((key, s, vec![(tier, o)])),
                        }
                    }
                    _ => {}
                }
            }
        }
        for (_, s, members) in &groups {
            out.push(finding(rule, a, members, s));
        }
    }
    out
}

impl ApiStatus {
    /// What makes two objects of one API version share a finding.
    fn key(&self) -> String {
        match self {
            ApiStatus::Removed {
                by,
                since,
                replacement,
                ..
            } => format!("removed|{by}|{since}|{replacement}"),
            ApiStatus::Deprecated {
                by,
                since,
                removed,
                replacement,
                ..
            } => format!("deprecated|{by}|{since}|{removed:?}|{replacement}"),
        }
    }
}

/// How many objects a grouped finding names in its message.
const NAMED: usize = 8;

fn finding(
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
    // "HelmRelease/web/nginx in apps", or "3 objects in 2 Kustomizations
    // (HelmRelease/web/nginx in apps, …)".
    let subject = if members.len() == 1 {
        format!("{} in {label}", o.id)
    } else {
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
            tiers.len(),
            if tiers.len() == 1 { "" } else { "s" },
            named.join(", ")
        )
    };
    let uses = if members.len() == 1 { "uses" } else { "use" };
    let their = if tiers.len() == 1 {
        label.clone()
    } else {
        "each of their Kustomizations".to_string()
    };
    let migrate = |flux: bool, replacement: &str| {
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
    };
    let mut severity = None;
    let (message, why, fix, at, cause) = match s {
        ApiStatus::Removed {
            by,
            since,
            replacement,
            flux,
            at,
            assumed,
        } => {
            let mut fix = migrate(*flux, replacement);
            if let Some(declare) = assumed {
                // An assumed version is no ground for an error.
                severity = Some(Severity::Warning);
                fix = format!("{fix}; or, if the cluster runs an older release, {declare}");
            }
            (
                format!(
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
                format!(
                    "the API server rejects {api} at the dry-run ('no matches for kind'), the stage aborts, and {their} never becomes Ready on a cold start"
                ),
                fix,
                at.clone(),
                format!("{api}/{} is no longer served", o.id.kind),
            )
        }
        ApiStatus::Deprecated {
            by,
            since,
            removed,
            replacement,
            flux,
            at,
            warning,
        } => (
            format!(
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
            warning.clone().unwrap_or_else(|| {
                "it is still served, but the release that removes it fails every tier that uses it".into()
            }),
            migrate(*flux, replacement),
            at.clone(),
            format!("{api}/{} is deprecated", o.id.kind),
        ),
    };
    let mut f = Finding::new(rule, a.cluster.name.clone(), label.clone(), message)
        .object(o.id.to_string())
        .at(o.source.clone().or_else(|| Some(tier.defined_at.clone())))
        .related(tier.defined_at.clone(), format!("Kustomization {label}"))
        .why(why)
        .fix(fix.clone())
        .cause(super::Cause {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_parse_with_their_replacements() {
        let k = kubernetes_rows();
        assert!(k.iter().any(|r| r.group == "batch"
            && r.version == "v1beta1"
            && r.kind == "CronJob"
            && r.removed.as_deref() == Some("1.25")
            && r.replacement == "batch/v1"));
        let f = flux_rows();
        assert!(f.iter().any(|r| r.group == "kustomize.toolkit.fluxcd.io"
            && r.version == "v1beta2"
            && r.removed.as_deref() == Some("v2.8.0")));
        assert!(
            f.iter()
                .all(|r| !(r.kind == "Alert" && r.version == "v1beta3"))
        );
    }
}
