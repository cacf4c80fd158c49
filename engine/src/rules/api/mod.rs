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

use std::sync::OnceLock;

mod finding;
mod status;

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::{Object, Span, Tier};
use finding::finding;
use status::status;

#[derive(Debug)]
pub(crate) struct ApiRemoved;
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
