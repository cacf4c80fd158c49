//! The chart and runtime catalogs (`catalog.yaml`, extended by
//! `catalog` in conformance.yaml): which charts install which API groups,
//! which controllers create CRDs at runtime, and what is installed outside
//! Flux.

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
    /// Namespaces that exist before any tier is applied because the
    /// platform creates them (a managed Flux extension's namespace, an
    /// organisation's operator namespaces).
    #[serde(default)]
    pub preinstalled_namespaces: Vec<String>,
    /// ConfigMaps and Secrets (`Kind/namespace/name`) created before Flux
    /// outside what the repository shows (Terraform, a platform), which a
    /// `substituteFrom` may read.
    #[serde(default)]
    pub preinstalled_objects: Vec<String>,
    /// Manifests applied by URL before Flux (Talos `extraManifests`, k3s
    /// manifest URLs, `kubectl apply -f URL` in a script): which groups a URL
    /// installs.
    #[serde(default)]
    pub manifests: Vec<ManifestEntry>,
    /// Whether shell commands in the fenced code blocks of the
    /// repository's Markdown files count as bootstrap steps (default
    /// true; `false` for READMEs whose commands are not the bootstrap).
    #[serde(default)]
    pub documented_steps: Option<bool>,
}

/// `charts[]`: a chart and the API groups whose CRDs it installs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartEntry {
    /// The chart's name, matched on a HelmRelease's `spec.chart.spec.chart` (or the
    /// last path segment of the OCIRepository or HelmChart it points at).
    pub chart: String,
    /// Other names the chart is published under.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// API groups whose CRDs the chart installs.
    pub groups: Vec<String>,
    /// How the chart ships its CRDs (default: its `crds/` directory).
    #[serde(default)]
    pub crds: CrdShipping,
    /// For `crds: template`: values that render the CRDs when any is true
    /// (`crds.enabled`); none: always rendered.
    #[serde(default)]
    pub values: Vec<String>,
    /// For `crds: template`: whether they render when no value says.
    #[serde(default)]
    pub default: Option<bool>,
    /// The chart is a network plugin (CNI): a cluster that runs Flux ran it
    /// before Flux ([`super::cni`]).
    #[serde(default)]
    pub cni: bool,
    /// Namespaces the chart creates on its defaults, besides its release's.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// For `cni`: kinds the plugin registers only with a feature on, which
    /// the install before Flux may not have had.
    #[serde(default)]
    pub cni_gated: Vec<String>,
}

/// How a chart ships its CRDs (helm-controller installs `crds/` according
/// to `spec.install.crds`, `crdPolicyOrDefault`; templates are ordinary
/// release objects).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CrdShipping {
    /// The chart's `crds/` directory: none with `install.crds: Skip`.
    #[default]
    Dir,
    /// Templates, gated by `values` (not affected by `install.crds`).
    Template,
    /// A pre-install hook Job applies them whatever `install.crds` says.
    Hook,
    /// The operator registers them when it starts.
    Runtime,
    /// The chart installs no CRDs.
    None,
}

/// `manifests[]`: a URL (or a part of one) and the groups it installs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestEntry {
    /// Matched as a substring of the URL.
    pub url: String,
    /// API groups whose CRDs the manifest installs.
    pub groups: Vec<String>,
}

/// `runtime[]`: a controller that creates CRDs itself once a trigger object is
/// reconciled (or when it starts).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeEntry {
    /// The controller's name, for messages.
    pub operator: String,
    /// The objects whose reconciliation makes the controller create the CRDs.
    pub trigger: TriggerMatch,
    /// The CRDs it then creates, by group.
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
    /// The `current` expression: true once the operator has reconciled the object.
    pub current: String,
    /// The `failed` expression: true when the operator reports failure.
    #[serde(default)]
    pub failed: Option<String>,
}

/// Which objects trigger a runtime entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerMatch {
    /// API group (`""` or `core` for the core group); with `image` and no
    /// kind, any.
    #[serde(default)]
    pub group: String,
    /// The trigger's kind; empty with `image`: a Deployment, DaemonSet,
    /// StatefulSet or HelmRelease.
    #[serde(default)]
    pub kind: String,
    /// The trigger's `metadata.name`; none: any name.
    #[serde(default)]
    pub name: Option<String>,
    /// A container image the object runs (a Deployment's, or one a
    /// HelmRelease's values name: the controller deployed by any chart,
    /// `app-template` included): matched as a substring of any string in
    /// the object.
    #[serde(default)]
    pub image: Option<String>,
    /// The package an Operator Lifecycle Manager `Subscription` installs
    /// (its `spec.name`).
    #[serde(default)]
    pub package: Option<String>,
}

/// `creates[]` of a runtime entry: kinds of one API group the controller creates.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreatedKinds {
    /// The API group.
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
    pub(crate) fn extended(&self, extra: &Catalog) -> Catalog {
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
            preinstalled_namespaces: self
                .preinstalled_namespaces
                .iter()
                .chain(&extra.preinstalled_namespaces)
                .cloned()
                .collect(),
            preinstalled_objects: self
                .preinstalled_objects
                .iter()
                .chain(&extra.preinstalled_objects)
                .cloned()
                .collect(),
            // A repository's entries first: they win over the embedded ones.
            manifests: extra
                .manifests
                .iter()
                .chain(&self.manifests)
                .cloned()
                .collect(),
            documented_steps: extra.documented_steps.or(self.documented_steps),
        }
    }

    /// Groups a chart installs, by chart name (and alias).
    #[cfg(test)]
    pub(crate) fn chart_groups(&self) -> std::collections::BTreeMap<&str, Vec<&str>> {
        let mut out: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for entry in &self.charts {
            for name in std::iter::once(&entry.chart).chain(&entry.aliases) {
                out.entry(name.as_str())
                    .or_default()
                    .extend(entry.groups.iter().map(String::as_str));
            }
        }
        out
    }

    /// The catalog's entry for a chart (by name or alias); a repository's
    /// entry wins over the embedded one.
    pub fn chart(&self, name: &str) -> Option<&ChartEntry> {
        self.charts
            .iter()
            .rev()
            .find(|e| e.chart == name || e.aliases.iter().any(|a| a == name))
    }

    /// The groups a manifest URL installs, if the catalog knows it.
    pub(crate) fn manifest_groups(&self, url: &str) -> Option<&[String]> {
        self.manifests
            .iter()
            .find(|m| url.contains(&m.url))
            .map(|m| m.groups.as_slice())
    }

    /// Whether the catalog knows the kind to be cluster-scoped.
    pub fn is_cluster_scoped(&self, group: &str, kind: &str) -> bool {
        self.cluster_scoped
            .iter()
            .any(|k| k.split_once('/') == Some((group, kind)))
    }

    /// Whether the catalog declares the kind, or its whole group, installed outside Flux.
    pub(crate) fn is_preinstalled(&self, group: &str, kind: &str) -> bool {
        self.preinstalled
            .iter()
            .any(|p| p == group || *p == format!("{group}/{kind}"))
    }
}
