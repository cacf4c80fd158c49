//! `toolchain-skew`: the toolchain's pinned kubectl must be within one minor
//! of every cluster's Kubernetes.

use serde::Deserialize;

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::{Cluster, Span};
use crate::versions::{minor_version, read_env};

/// `toolchain:` in conformance.yaml: the files pinning the kubectl version.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolchain {
    /// `KEY=value` files (default: every `versions.env` in the repository).
    #[serde(default)]
    pub files: Vec<String>,
    /// The key holding the kubectl version (default `KUBECTL_VERSION`).
    #[serde(default = "default_kubectl_variable")]
    pub variable: String,
}

/// The default `toolchain.variable`: `KUBECTL_VERSION`.
pub(crate) fn default_kubectl_variable() -> String {
    "KUBECTL_VERSION".into()
}

/// The `toolchain-skew` rule.
#[derive(Debug)]
pub(crate) struct ToolchainSkew;

impl Rule for ToolchainSkew {
    fn id(&self) -> RuleId {
        RuleId::ToolchainSkew
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "toolchain pins (versions.env files) disagree on kubectl, or kubectl is outside ±1 minor of a cluster's Kubernetes"
    }
    fn example(&self) -> &'static str {
        "ci/versions.env pins kubectl 1.31.4, but cluster prod runs Kubernetes 1.36 (kubectl supports ±1 minor)"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let settings = cx.settings.toolchain.cloned();
        let variable = settings
            .as_ref()
            .map_or_else(default_kubectl_variable, |t| t.variable.clone());
        let files: Vec<String> = match settings.as_ref().filter(|t| !t.files.is_empty()) {
            Some(t) => t.files.clone(),
            None => cx
                .index
                .files_named("versions.env")
                .map(str::to_string)
                .collect(),
        };
        let mut pins: Vec<(String, Option<(String, u32)>)> = Vec::new();
        for file in &files {
            pins.push((file.clone(), read_env(cx.index, file, &variable)));
        }
        let shared_version = cx
            .settings
            .kubernetes
            .file
            .and_then(|src| read_env(cx.index, &src.file.value, &src.variable).map(|(v, _)| v));
        let mut out = Vec::new();
        let reference = pins
            .iter()
            .find_map(|(f, v)| v.as_ref().map(|(v, _)| (f.clone(), v.clone())));
        for cluster in &cx.model.clusters {
            let cluster_version = cx
                .settings
                .kubernetes
                .clusters
                .get(&cluster.name)
                .and_then(|c| c.kubernetes.as_ref().map(|v| v.value.clone()))
                .or_else(|| shared_version.clone());
            for (file, pin) in &pins {
                let Some((version, line)) = pin else {
                    if settings.as_ref().is_some_and(|t| !t.files.is_empty()) {
                        out.push(self.finding(
                            cluster,
                            file,
                            Span::new(file.clone(), 0),
                            format!("{file} does not set {variable}"),
                            format!("add {variable}=… to {file}"),
                        ));
                    }
                    continue;
                };
                let at = Span::new(file.clone(), *line);
                if let Some((ref_file, ref_version)) = &reference
                    && (minor_version(version) != minor_version(ref_version)
                        || strip_v(version) != strip_v(ref_version))
                {
                    out.push(self.finding(
                        cluster,
                        file,
                        at.clone(),
                        format!("{file} pins kubectl {version}, but {ref_file} pins {ref_version}"),
                        format!("set {variable} to the same version in every toolchain file"),
                    ));
                }
                if let (Some(cv), Some(kv)) = (
                    cluster_version.as_deref().and_then(minor_version),
                    minor_version(version),
                ) && (cv.0 != kv.0 || cv.1.abs_diff(kv.1) > 1)
                {
                    out.push(self.finding(
                            cluster,
                            file,
                            at,
                            format!(
                                "{file} pins kubectl {version}, but cluster {} runs Kubernetes {}.{}: outside kubectl's ±1 minor skew",
                                cluster.name, cv.0, cv.1
                            ),
                            format!("bump {variable} to {}.{}.x", cv.0, cv.1),
                        ));
                }
            }
        }
        out
    }
}

impl ToolchainSkew {
    fn finding(
        &self,
        cluster: &Cluster,
        file: &str,
        at: Span,
        message: String,
        fix: String,
    ) -> Finding {
        Finding::new(self, cluster.name.clone(), file.to_string(), message).at(at).why("kubectl supports API servers within one minor version; beyond that, dry-runs and applies in CI and bootstrap do not match what the cluster does").fix(fix).build()
    }
}

fn strip_v(v: &str) -> &str {
    v.trim().trim_start_matches('v')
}
