//! The chart and runtime catalogs (`catalog.yaml`, extended by
//! `catalog` in conformance.yaml): which charts install which API groups,
//! which controllers create CRDs at runtime, and what is installed outside
//! Flux.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The chart and runtime catalogs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// Charts and the API groups their CRDs define.
    #[serde(default)]
    pub charts: Vec<ChartEntry>,
    /// Controllers that create CRDs at runtime.
    #[serde(default)]
    pub runtime: Vec<RuntimeEntry>,
    /// Groups (`example.com`) or kinds (`example.com/Widget`) whose CRDs are
    /// installed outside Flux (a bootstrap script, the distribution).
    #[serde(default)]
    pub preinstalled: Vec<String>,
    /// Custom-resource kinds (`group/Kind`) that are cluster-scoped, for
    /// kinds whose CRD is not in git (a chart's, an operator's): the API
    /// server ignores their `metadata.namespace`, and they need none.
    #[serde(default)]
    pub cluster_scoped: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartEntry {
    pub chart: String,
    pub groups: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeEntry {
    /// The controller's name, for messages.
    pub operator: String,
    pub trigger: TriggerMatch,
    pub creates: Vec<CreatedKinds>,
    /// Whether kstatus (`status.Compute`) can tell that the operator has
    /// reconciled the trigger. `false` for a kind with neither a `Ready`
    /// condition nor `status.observedGeneration` (CDI, KubeVirt): kstatus
    /// reads it as Current as soon as it exists, so `wait: true` does not
    /// wait for the operator.
    #[serde(default = "yes")]
    pub kstatus: bool,
    /// A `healthCheckExprs` entry that does tell, for fixes to show.
    #[serde(default)]
    pub health: Option<HealthExpr>,
}

fn yes() -> bool {
    true
}

/// CEL expressions for a `healthCheckExprs` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthExpr {
    pub current: String,
    #[serde(default)]
    pub failed: Option<String>,
}

/// Which objects trigger a runtime entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerMatch {
    /// API group (`""` or `core` for the core group).
    pub group: String,
    pub kind: String,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreatedKinds {
    pub group: String,
    /// Kinds, or `"*"` for every kind of the group.
    pub kinds: Vec<String>,
}

impl Catalog {
    /// The catalog shipped with the tool.
    pub fn embedded() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            serde_saphyr::from_str(include_str!("catalog.yaml"))
                .unwrap_or_else(|err| panic!("the embedded catalog.yaml is invalid: {err}"))
        })
    }

    /// This catalog followed by `extra` (a repository's additions).
    pub fn extended(&self, extra: &Catalog) -> Catalog {
        Catalog {
            charts: self.charts.iter().chain(&extra.charts).cloned().collect(),
            runtime: self.runtime.iter().chain(&extra.runtime).cloned().collect(),
            preinstalled: self
                .preinstalled
                .iter()
                .chain(&extra.preinstalled)
                .cloned()
                .collect(),
            cluster_scoped: self
                .cluster_scoped
                .iter()
                .chain(&extra.cluster_scoped)
                .cloned()
                .collect(),
        }
    }

    /// Groups a chart installs, by chart name.
    pub fn chart_groups(&self) -> BTreeMap<&str, Vec<&str>> {
        let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for entry in &self.charts {
            out.entry(entry.chart.as_str())
                .or_default()
                .extend(entry.groups.iter().map(String::as_str));
        }
        out
    }

    /// Whether the catalog knows the kind to be cluster-scoped.
    pub fn is_cluster_scoped(&self, group: &str, kind: &str) -> bool {
        self.cluster_scoped
            .iter()
            .any(|k| k.split_once('/') == Some((group, kind)))
    }

    pub fn is_preinstalled(&self, group: &str, kind: &str) -> bool {
        self.preinstalled
            .iter()
            .any(|p| p == group || *p == format!("{group}/{kind}"))
    }
}
