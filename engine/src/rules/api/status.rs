//! What an object's apiVersion is for its cluster: judged by the CRD the
//! cluster has in git, else by Flux's table against the Flux it installs,
//! else by Kubernetes' table against the minor it runs.

use std::collections::BTreeMap;

use super::{ApiStatus, Row, flux_rows, kubernetes_rows, minor_text, table_minor};
use crate::convergence::ClusterAnalysis;
use crate::model::{Object, ObjectId, Span};
use crate::provenance::distribution::{self, KubeVersion};
use crate::provenance::installed::{Version, releases};

/// What a version is judged against: in words, where the cluster's
/// version is written, and, when it is assumed (the repository does not
/// show it), what to declare to make it certain.
struct Against {
    by: String,
    at: Option<Span>,
    assumed: Option<String>,
}

/// The status of `o`'s apiVersion, `None` when it is served and not
/// deprecated (or not known).
pub(super) fn status(
    a: &ClusterAnalysis,
    crds: &BTreeMap<(String, String), &Object>,
    kube: &Option<KubeVersion>,
    o: &Object,
) -> Option<ApiStatus> {
    let id = &o.id;
    // A CRD the cluster has in git says which versions it serves.
    if let Some(crd) = crds.get(&(id.group.clone(), id.kind.clone())) {
        return crd_status(id, crd);
    }
    if id.group.ends_with(".toolkit.fluxcd.io") {
        return flux_status(a, id);
    }
    kubernetes_status(a, kube, id)
}

/// The row of a table for `id`'s group, version and kind.
fn row<'r>(rows: &'r [Row], id: &ObjectId) -> Option<&'r Row> {
    rows.iter()
        .find(|r| r.group == id.group && r.version == id.version && r.kind == id.kind)
}

/// The version as the CRD's `spec.versions` has it: not listed or
/// `served: false` (removed), `deprecated: true`.
fn crd_status(id: &ObjectId, crd: &Object) -> Option<ApiStatus> {
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
    match mine {
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
        Some(v) if v.path(&["deprecated"]).and_then(crate::yaml::Node::as_bool) == Some(true) => {
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
    }
}

/// A Flux kind's version, by Flux's table, against the Flux the cluster
/// installs.
fn flux_status(a: &ClusterAnalysis, id: &ObjectId) -> Option<ApiStatus> {
    let r = row(flux_rows(), id)?;
    let (flux, Against { by, at, assumed }) = flux_against(a)?;
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
    None
}

/// The Flux release a cluster is judged against: the one it pins, the
/// newest its range admits, or (assumed) the newest the table knows.
fn flux_against(a: &ClusterAnalysis) -> Option<(Version, Against)> {
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
    Some((flux, Against { by, at, assumed }))
}

/// A built-in kind's version, by Kubernetes' table, against the minor the
/// cluster runs; a version no release serves is removed for good.
fn kubernetes_status(
    a: &ClusterAnalysis,
    kube: &Option<KubeVersion>,
    id: &ObjectId,
) -> Option<ApiStatus> {
    let known = row(kubernetes_rows(), id);
    let never = if known.is_none() {
        Some(never_served(id)?)
    } else {
        None
    };
    let (minor, against) = kubernetes_against(a, kube);
    if let Some(replacement) = never {
        return Some(never_status(id, replacement, minor, against));
    }
    let Against { by, at, assumed } = against;
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

/// A built-in kind in a version no release of the table serves (a typo,
/// `apps/v9`, `apiVersion: 1`): the API server has no such kind. The
/// version to use instead (the one the newest minor serves, else the
/// first known), or `None` when the kind is not built in or the version
/// is one the table knows.
fn never_served(id: &ObjectId) -> Option<String> {
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
}

/// The Kubernetes minor a cluster is judged against: the one it runs, or
/// (assumed) the newest the table knows.
fn kubernetes_against(a: &ClusterAnalysis, kube: &Option<KubeVersion>) -> ((u32, u32), Against) {
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
    (minor, Against { by, at, assumed })
}

/// A version no Kubernetes serves, removed whatever the cluster runs;
/// `replacement` the version to use.
fn never_status(
    id: &ObjectId,
    replacement: String,
    minor: (u32, u32),
    Against { by, at, assumed }: Against,
) -> ApiStatus {
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
    ApiStatus::Removed {
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
    }
}
