//! `bootstrap:` and `toolchain:` in conformance.yaml, beside the rules that
//! read them (tier-order-script, toolchain-skew).

use serde::Deserialize;

/// `bootstrap:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bootstrap {
    /// The script (default `bootstrap/standup.sh`).
    #[serde(default = "default_script")]
    pub script: String,
    /// The bash array listing the tiers (default `TIER_ORDER`).
    #[serde(default = "default_variable")]
    pub variable: String,
    /// Clusters the script serves (default: all).
    #[serde(default)]
    pub clusters: Vec<String>,
}

pub fn default_script() -> String {
    "bootstrap/standup.sh".into()
}

pub fn default_variable() -> String {
    "TIER_ORDER".into()
}

/// `toolchain:`.
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

pub fn default_kubectl_variable() -> String {
    "KUBECTL_VERSION".into()
}
