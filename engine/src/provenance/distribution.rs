//! The Kubernetes a cluster runs, as the repository says: declared in
//! conformance.yaml (`clusters.<name>.kubernetes`, or the `kubernetes:`
//! file), else pinned by the distribution's own configuration: Talos
//! (`kubernetesVersion:` in talconfig/talenv, the `kube-apiserver` or
//! `kubelet` image of a machine config), k3s (`k3s_release_version` in
//! Ansible variables), or an upgrade plan the cluster renders
//! (system-upgrade-controller `Plan` with a k3s/rke2 `version`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::config_error::{ConfigError, FILE_NAME, error_at};
use crate::model::{Cluster, Span};
use crate::provenance::bootstrap::Bootstrap;
use crate::repo::{Kind, RepoIndex};
use crate::versions::{minor_version, read_env};

/// `clusters.<name>:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterFacts {
    /// The Kubernetes version the cluster runs (`1.36`, `v1.36.4+k3s1`).
    #[serde(default)]
    pub kubernetes: Option<Spanned<String>>,
    /// The Flux release the cluster runs (`v2.7.2`), for a platform that
    /// installs Flux where the repository does not show it (a managed
    /// extension, Terraform, an operator outside git). What the repository
    /// shows (gotk-components.yaml, a FluxInstance) is overridden.
    #[serde(default)]
    pub flux: Option<Spanned<String>>,
    /// The directory the cluster syncs, when its sync is not in git (a
    /// managed Flux extension, Terraform, `flux create`): declares the
    /// cluster.
    #[serde(default)]
    pub entry: Option<Spanned<String>>,
    /// The sync source of a declared entry (default: GitRepository
    /// flux-system in flux-system).
    #[serde(default)]
    pub source: Option<EntrySource>,
    /// Values of the variables a FluxInstance sync path needs
    /// (`kubernetes/clusters/${CLUSTER}`) that the repository gives where
    /// this tool does not read them (the chart's install, an environment
    /// variable): the cluster syncs the path with these put in.
    #[serde(default)]
    pub vars: std::collections::BTreeMap<String, String>,
}

/// `clusters.<name>.source`: the Flux source a declared entry syncs from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntrySource {
    /// The source's kind (default: GitRepository).
    #[serde(default = "git_repository")]
    pub kind: String,
    /// The source's name.
    pub name: String,
    /// The source's namespace (default: flux-system).
    #[serde(default = "flux_system")]
    pub namespace: String,
}

fn git_repository() -> String {
    "GitRepository".into()
}

fn flux_system() -> String {
    "flux-system".into()
}

/// `kubernetes:` — a version read from a file of the repository.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionSource {
    /// A `KEY=value` file (versions.env style).
    pub file: Spanned<String>,
    /// The key holding the version (`K3S_VERSION`).
    pub variable: String,
}

/// What conformance.yaml declares about the clusters' Kubernetes versions:
/// `clusters.<name>.kubernetes` and the `kubernetes:` file.
#[derive(Debug, Clone, Copy)]
pub struct Declared<'c> {
    /// `clusters.<name>`, by cluster name.
    pub clusters: &'c BTreeMap<String, ClusterFacts>,
    /// The `kubernetes:` file, when declared.
    pub file: Option<&'c VersionSource>,
}

/// Checks `clusters.<name>:` (what the types cannot): Kubernetes versions.
pub fn validate(clusters: &BTreeMap<String, ClusterFacts>, problems: &mut Vec<ConfigError>) {
    for facts in clusters.values() {
        if let Some(v) = &facts.kubernetes
            && minor_version(&v.value).is_none()
        {
            problems.push(error_at(
                v,
                format!(
                    "`{}` is not a Kubernetes version like 1.36 or v1.36.4+k3s1",
                    v.value
                ),
            ));
        }
        if let Some(v) = &facts.flux
            && crate::provenance::installed::Version::parse(&v.value).is_none()
        {
            problems.push(error_at(
                v,
                format!("`{}` is not a Flux release like v2.7.2", v.value),
            ));
        }
    }
}

/// The Kubernetes version of a cluster and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeVersion {
    /// The major and minor version (`(1, 36)`).
    pub minor: (u32, u32),
    /// As written (`v1.36.4+k3s1`).
    pub written: String,
    /// Where; `None` for conformance.yaml's `clusters.<name>.kubernetes`.
    pub at: Option<Span>,
}

/// The newest Kubernetes minor the built-in tables know: what a cluster
/// whose version the repository does not show is judged against.
pub(crate) const NEWEST: (u32, u32) = (1, 37);

/// The oldest Kubernetes minor the built-in tables know.
pub(crate) const OLDEST: (u32, u32) = (1, 30);

/// The Kubernetes version of `cluster`, if the repository shows it.
pub fn kubernetes(
    cluster: &Cluster,
    declared: Declared,
    index: &RepoIndex,
    bootstrap: &Bootstrap,
) -> Option<KubeVersion> {
    if let Some(v) = declared
        .clusters
        .get(&cluster.name)
        .and_then(|c| c.kubernetes.as_ref())
        && let Some(minor) = minor_version(&v.value)
    {
        return Some(KubeVersion {
            minor,
            written: v.value.clone(),
            at: Some(Span::new(FILE_NAME, v.referenced.line() as u32)),
        });
    }
    if let Some(src) = declared.file
        && let Some((v, line)) = read_env(index, &src.file.value, &src.variable)
        && let Some(minor) = minor_version(&v)
    {
        return Some(KubeVersion {
            minor,
            written: v,
            at: Some(Span::new(src.file.value.clone(), line)),
        });
    }
    // Pins in the distribution's configuration.
    let files: Vec<String> = index
        .below("")
        .filter(|(p, k)| {
            **k == Kind::File
                && [".yaml", ".yml", ".j2", ".tmpl", ".gotmpl"]
                    .iter()
                    .any(|e| p.ends_with(e))
                && bootstrap.file_applies(p, &cluster.name)
        })
        .map(|(p, _)| p.to_string())
        .collect();
    let mut found: Option<KubeVersion> = None;
    for file in &files {
        let lower = file.to_ascii_lowercase();
        let relevant = lower.contains("talos")
            || lower.contains("talconfig")
            || lower.contains("talenv")
            || lower.contains("machineconfig")
            || lower.contains("controlplane")
            || lower.contains("ansible")
            || lower.contains("group_vars");
        if !relevant {
            continue;
        }
        let Ok(text) = index.read_text(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let t = line.trim();
            let value = t
                .strip_prefix("kubernetesVersion:")
                .or_else(|| t.strip_prefix("k3s_release_version:"))
                .or_else(|| {
                    t.strip_prefix("image:").and_then(|i| {
                        let i = i.trim();
                        (i.contains("/kube-apiserver:") || i.contains("siderolabs/kubelet:"))
                            .then(|| i.rsplit(':').next().unwrap_or_default())
                    })
                });
            let Some(value) = value else { continue };
            let value = value
                .split('#')
                .next()
                .unwrap_or_default()
                .trim()
                .trim_matches(|c| c == '"' || c == '\'');
            if value.contains("${") || value.contains("{{") {
                continue;
            }
            if let Some(minor) = minor_version(value) {
                // The newest pin wins (machine configs of one cluster may
                // lag during an upgrade).
                if found.as_ref().is_none_or(|f| minor > f.minor) {
                    found = Some(KubeVersion {
                        minor,
                        written: value.to_string(),
                        at: Some(Span::new(file.clone(), n as u32 + 1)),
                    });
                }
            }
        }
    }
    if found.is_some() {
        return found;
    }
    // An upgrade Plan the cluster renders (system-upgrade-controller).
    for tier in cluster.tiers.values() {
        for o in tier.objects() {
            if o.id.group == "upgrade.cattle.io"
                && o.id.kind == "Plan"
                && let Some(v) = o.body.str_at(&["spec", "version"])
                && (v.contains("k3s") || v.contains("rke2"))
                && let Some(minor) = minor_version(&v)
            {
                return Some(KubeVersion {
                    minor,
                    written: v,
                    at: o.source.clone(),
                });
            }
        }
    }
    None
}
