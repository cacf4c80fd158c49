//! L1: what a live-cluster run (the `l1-cluster` crate) does and expects.
//! Pure data computed from the convergence model, so it is unit-tested
//! without a cluster and printed by `conformance l1-plan`.
//!
//! * [`predict`]: the **Flux mode** (the default). Flux's own controllers
//!   reconcile the repository from an empty cluster; for every tier the
//!   model predicts *converges*, *race* or *deadlock* (and *suspended*,
//!   *never applied*), from a strict cold start of the cluster as L1 builds
//!   it: k3s and Flux, nothing the repository installs outside Flux.
//! * what the harness records of each Kustomization (its Ready condition
//!   over time), and its comparison with the prediction that decides each
//!   `<cluster>::l1::flux::<tier>` trial, live beside the harness
//!   (`l1-cluster`'s `observe`).
//! * [`apply`]: the **apply mode** (`L1_MODE=apply`): the harness applies
//!   tiers itself, imitating kustomize-controller, where Flux cannot be
//!   installed.

pub mod apply;
pub mod predict;

pub use apply::{Assertion, Plan, PlannedTier, Stage, plan, render, stages};

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::config_error::{ConfigError, error_at};

/// `l1:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1 {
    /// Tiers (by name) a bare k3s can run; default: the runtime triggers'
    /// tiers, their ancestors and their consumers.
    #[serde(default)]
    pub tiers: Vec<String>,
    /// The k3s image (`rancher/k3s:v1.36.4-k3s1`); default: from the
    /// cluster's Kubernetes version, else a pinned release.
    #[serde(default)]
    pub image: Option<String>,
    /// The cluster L1 runs (default: the first discovered).
    #[serde(default)]
    pub cluster: Option<String>,
    /// Repository files L1 replaces with a published copy (operator
    /// manifests a repository trims or vendors, a trimmed
    /// `gotk-components.yaml`): downloaded, checked against `sha256`, and
    /// used in place of the file in the tree Flux is served.
    #[serde(default)]
    pub manifests: Vec<L1Manifest>,
}

/// `l1.manifests[]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1Manifest {
    /// The repository file it replaces (relative to the repository root).
    pub file: Spanned<String>,
    /// Where the published file is (`https://…/releases/download/v1.61.0/cdi-operator.yaml`).
    pub url: Spanned<String>,
    /// The published file's SHA-256, 64 hex digits. Without it L1 refuses
    /// the file and prints the digest of what it downloaded, to pin.
    #[serde(default)]
    pub sha256: Option<Spanned<String>>,
}

/// Checks `l1:` (what the types cannot): manifest paths inside the
/// repository, https addresses, SHA-256 digests.
pub fn validate(l1: &L1, problems: &mut Vec<ConfigError>) {
    for m in &l1.manifests {
        let (path, escapes) = crate::repo::normalize("", &m.file.value);
        if escapes || path.is_empty() || m.file.value.starts_with('/') {
            problems.push(error_at(
                &m.file,
                format!(
                    "l1.manifests file `{}` must be a path inside the repository",
                    m.file.value
                ),
            ));
        }
        if !m.url.value.starts_with("https://") {
            problems.push(error_at(
                &m.url,
                format!(
                    "l1.manifests url `{}` must be an https:// address",
                    m.url.value
                ),
            ));
        }
        if let Some(sum) = &m.sha256
            && !(sum.value.len() == 64 && sum.value.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            problems.push(error_at(
                sum,
                format!(
                    "l1.manifests sha256 `{}` is not 64 hex digits (compute it with `curl -fsSL <url> | sha256sum`)",
                    sum.value
                ),
            ));
        }
    }
}

/// The k3s image for a cluster: `l1.image`, else `rancher/k3s` with the tag
/// of its declared Kubernetes version (`clusters.<name>.kubernetes`:
/// `v1.36.4+k3s1` → `v1.36.4-k3s1`), else the pinned default.
pub fn k3s_image(l1: &L1, kubernetes: Option<&str>) -> (String, String) {
    if let Some(image) = &l1.image {
        return match image.rsplit_once(':') {
            Some((name, tag)) => (name.to_string(), tag.to_string()),
            None => (image.clone(), DEFAULT_K3S_TAG.to_string()),
        };
    }
    let tag = match kubernetes {
        Some(v) if v.contains("+k3s") => {
            format!("v{}", v.trim_start_matches('v').replace('+', "-"))
        }
        Some(v) if v.matches('.').count() == 2 => format!("v{}-k3s1", v.trim_start_matches('v')),
        _ => DEFAULT_K3S_TAG.to_string(),
    };
    ("rancher/k3s".to_string(), tag)
}

/// The k3s release used when the configuration names none.
pub const DEFAULT_K3S_TAG: &str = "v1.33.4-k3s1";
