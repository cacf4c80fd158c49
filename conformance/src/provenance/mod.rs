//! Kind provenance: where the API of every kind comes from.
//!
//! A kind is built in to Kubernetes ([`builtin`], a complete table of the
//! built-in group/version/kinds of Kubernetes 1.30 to 1.37), part of Flux
//! itself, declared as installed outside Flux, defined by a
//! CustomResourceDefinition rendered in git, installed by a Helm chart (a
//! HelmRelease in some tier, matched against the chart catalog), or created at
//! runtime by a controller once a trigger object is reconciled (the runtime
//! catalog, and Crossplane's CompositeResourceDefinitions). The catalogs are
//! data (`catalog.yaml`), extendable from `conformance.yaml`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// Groups served by Flux itself: its controllers run the sync, so their CRDs
/// exist before any tier is applied.
pub const FLUX_GROUPS: &[&str] = &[
    "source.toolkit.fluxcd.io",
    "kustomize.toolkit.fluxcd.io",
    "helm.toolkit.fluxcd.io",
    "notification.toolkit.fluxcd.io",
    "image.toolkit.fluxcd.io",
    "source.extensions.fluxcd.io",
];

/// The Flux Operator's group (FluxInstance, ResourceSet, …): installed
/// before anything in a cluster that a FluxInstance syncs, since the
/// operator is what syncs it.
pub const FLUX_OPERATOR_GROUP: &str = "fluxcd.controlplane.io";

/// Whether a kind is cluster-scoped or namespaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Cluster,
    Namespaced,
}

/// One built-in kind.
#[derive(Debug, Clone)]
pub struct BuiltinKind {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub scope: Scope,
    /// First and last Kubernetes minor version serving it.
    pub minors: (u32, u32),
}

/// The built-in kinds of Kubernetes (data in `builtin-kinds.txt`).
pub fn builtin() -> &'static [BuiltinKind] {
    static TABLE: OnceLock<Vec<BuiltinKind>> = OnceLock::new();
    TABLE.get_or_init(|| {
        include_str!("builtin-kinds.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|line| {
                let f: Vec<&str> = line.split('|').collect();
                let [group, version, kind, plural, scope, first, last] = f[..] else {
                    return None;
                };
                Some(BuiltinKind {
                    group: group.into(),
                    version: version.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    scope: if scope == "Cluster" {
                        Scope::Cluster
                    } else {
                        Scope::Namespaced
                    },
                    minors: (first.parse().ok()?, last.parse().ok()?),
                })
            })
            .collect()
    })
}

/// The built-in kind with this group and kind (any version), if any.
pub fn builtin_kind(group: &str, kind: &str) -> Option<&'static BuiltinKind> {
    builtin()
        .iter()
        .find(|b| b.group == group && b.kind == kind)
}

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

    pub fn is_preinstalled(&self, group: &str, kind: &str) -> bool {
        self.preinstalled
            .iter()
            .any(|p| p == group || *p == format!("{group}/{kind}"))
    }
}

/// The CRD-style resource name of a kind (`storageprofiles.cdi.kubevirt.io`),
/// pluralised as Kubernetes' defaults do.
pub fn crd_name(group: &str, kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    let plural = if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") {
        format!("{lower}es")
    } else if let Some(stem) = lower
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    };
    if group.is_empty() {
        plural
    } else {
        format!("{plural}.{group}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_is_complete_enough_to_trust() {
        let table = builtin();
        assert!(table.len() > 100, "{}", table.len());
        let pod = builtin_kind("", "Pod").unwrap();
        assert_eq!(pod.scope, Scope::Namespaced);
        assert_eq!(
            builtin_kind("storage.k8s.io", "StorageClass")
                .unwrap()
                .scope,
            Scope::Cluster
        );
        assert!(builtin_kind("apiextensions.k8s.io", "CustomResourceDefinition").is_some());
        assert!(builtin_kind("cdi.kubevirt.io", "StorageProfile").is_none());
    }

    #[test]
    fn embedded_catalog_parses_and_knows_the_seed_operators() {
        let catalog = Catalog::embedded();
        assert!(catalog.runtime.iter().any(|r| {
            r.trigger.kind == "CDI"
                && r.creates
                    .iter()
                    .any(|c| c.kinds.iter().any(|k| k == "StorageProfile"))
        }));
        assert!(catalog.chart_groups()["cert-manager"].contains(&"cert-manager.io"));
    }

    #[test]
    fn crd_names_pluralise_like_kubernetes() {
        assert_eq!(
            crd_name("cdi.kubevirt.io", "StorageProfile"),
            "storageprofiles.cdi.kubevirt.io"
        );
        assert_eq!(crd_name("x.io", "Policy"), "policies.x.io");
        assert_eq!(crd_name("x.io", "Gateway"), "gateways.x.io");
        assert_eq!(crd_name("x.io", "Ingress"), "ingresses.x.io");
    }
}
