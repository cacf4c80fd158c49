//! Kind provenance: where the API of every kind comes from.
//!
//! Each source of kinds is one module, listed once in [`SOURCES`]:
//!
//! * [`builtin`](mod@builtin): built in to Kubernetes (a complete table of 1.30 to 1.37);
//! * [`flux`]: Flux's own kinds (and the Flux Operator's where it syncs);
//! * [`preinstalled`]: declared installed outside Flux in conformance.yaml;
//! * [`bootstrap`]: installed before Flux by the repository's own bootstrap
//!   (helmfile, scripts, k3s, Talos);
//! * [`crd`]: a CustomResourceDefinition rendered in git;
//! * [`chart`]: a HelmRelease of a chart the [`catalog`] knows;
//! * [`crossplane`]: a CompositeResourceDefinition;
//! * [`runtime`]: a controller of the runtime catalog, once its trigger object
//!   is reconciled (CDI, KubeVirt, …).
//!
//! The first four say what exists before any tier is applied
//! ([`ProviderSource::initial`]); the others find providers in the rendered
//! objects of a cluster ([`ProviderSource::scan`]), each located in a tier.
//! [`Providers::of`] runs them all; the convergence model decides when each
//! provider's kinds exist. The catalogs are data (`catalog.yaml`),
//! extendable from `conformance.yaml`. Beside the sources: [`installed`]
//! (which Flux a cluster runs) over [`releases`] (Flux's release table,
//! which the bootstrap readers read too), [`distribution`] (which
//! Kubernetes), and [`boundary`] (whether the run reads the cluster's
//! whole world).

pub mod bootstrap;
pub mod boundary;
pub mod builtin;
pub mod catalog;
pub mod chart;
pub mod cni;
pub mod crd;
pub mod crossplane;
pub mod distribution;
pub mod flux;
pub mod installed;
pub mod preinstalled;
pub mod releases;
pub mod runtime;

use std::collections::BTreeMap;

pub use crate::builtin::Scope;
pub use builtin::{BuiltinKind, builtin, builtin_kind};
pub use catalog::{
    Catalog, ChartEntry, CrdShipping, CreatedKinds, HealthExpr, ManifestEntry, RuntimeEntry,
    TriggerMatch,
};
pub use flux::{
    FLUX_GROUPS, FLUX_KINDS, FLUX_OPERATOR_GROUP, flux_kinds_of, flux_versions, unserved_flux_kind,
};

use crate::model::{Cluster, Object, ObjectId, Span, Tier, TierId};

/// Where a kind's API comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    /// Built in to Kubernetes.
    BuiltIn,
    /// One of Flux's own kinds (or the Flux Operator's).
    Flux,
    /// Declared installed outside Flux (`catalog.preinstalled`).
    Preinstalled,
    /// Installed before Flux by the repository's own bootstrap (a helmfile,
    /// a script, k3s or Talos configuration): where, and how.
    Bootstrap {
        /// The file and line that installs it.
        at: Span,
        /// How, in words ("helmfile release cert-manager").
        via: String,
    },
    /// A CustomResourceDefinition rendered in a tier.
    Crd {
        /// The tier that renders the CRD.
        tier: TierId,
        /// Where the CRD is written in git, when known.
        at: Option<Span>,
    },
    /// Created once `trigger` (in `tier`) is reconciled: a HelmRelease of a
    /// catalog chart, a runtime-catalog trigger, or a Crossplane XRD.
    Runtime {
        /// Which kind of runtime provider creates it.
        how: RuntimeHow,
        /// The object whose reconciliation creates it.
        trigger: ObjectId,
        /// The tier that applies the trigger.
        tier: TierId,
        /// Where the trigger is written in git, when known.
        at: Option<Span>,
    },
    /// Nothing in the checked tiers provides it, but a tier of the cluster
    /// was not checked (another source) or did not build: the kind may well
    /// come from there, so nothing is claimed.
    Unchecked {
        /// The tier that was not checked or did not build.
        tier: TierId,
    },
    /// Nothing provides it.
    Unknown,
}

impl Provenance {
    /// The tier that provides the kind, for located provenances.
    pub fn tier(&self) -> Option<&TierId> {
        match self {
            Provenance::Crd { tier, .. }
            | Provenance::Runtime { tier, .. }
            | Provenance::Unchecked { tier } => Some(tier),
            Provenance::BuiltIn
            | Provenance::Flux
            | Provenance::Preinstalled
            | Provenance::Bootstrap { .. }
            | Provenance::Unknown => None,
        }
    }
}

/// Which kind of runtime provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeHow {
    /// helm-controller installs the chart's CRDs. `probable`: the catalog
    /// does not know the chart, but its name or address matches the group.
    Chart {
        /// The chart's name.
        chart: String,
        /// The catalog does not know the chart; its name or address matches the group.
        probable: bool,
    },
    /// A controller creates the CRDs (runtime catalog).
    Operator {
        /// The controller's name (`cdi-operator`).
        operator: String,
        /// Whether kstatus can tell the trigger was reconciled.
        kstatus: bool,
        /// A `healthCheckExprs` entry that tells, when kstatus cannot.
        health: Option<HealthExpr>,
    },
    /// Crossplane creates the CRD of a CompositeResourceDefinition.
    Crossplane,
    /// Crossplane's package manager installs a provider package's CRDs.
    Package {
        /// The provider package (`spec.package` of the Crossplane `Provider`).
        package: String,
    },
}

impl RuntimeHow {
    /// "cdi-operator creates", "helm-controller installs (chart X)": reads
    /// as "which {describe} only after …".
    pub fn describe(&self) -> String {
        match self {
            RuntimeHow::Chart {
                chart,
                probable: false,
            } => format!("helm-controller installs (chart {chart})"),
            RuntimeHow::Chart {
                chart,
                probable: true,
            } => format!(
                "helm-controller probably installs (chart {chart}, whose name or address matches; the catalog does not list the group for it)"
            ),
            RuntimeHow::Operator { operator, .. } => format!("{operator} creates"),
            RuntimeHow::Crossplane => "Crossplane creates".to_string(),
            RuntimeHow::Package { package } => {
                format!("Crossplane installs (package {package})")
            }
        }
    }

    /// The controller, for messages (`cdi-operator`, `chart cert-manager`).
    pub fn who(&self) -> String {
        match self {
            RuntimeHow::Chart { chart, .. } => format!("chart {chart}"),
            RuntimeHow::Operator { operator, .. } => operator.clone(),
            RuntimeHow::Crossplane => "Crossplane".into(),
            RuntimeHow::Package { .. } => "Crossplane's package manager".into(),
        }
    }

    /// Whether kstatus (`status.Compute`) tells that the trigger has been
    /// reconciled, so that `wait: true` on its tier waits for the CRDs. A
    /// HelmRelease does (a Flux kind: `observedGeneration` defaults to -1,
    /// and it is Current only when Ready). A CompositeResourceDefinition
    /// does not: it reports `Established` and `Offered`, no `Ready` and no
    /// `status.observedGeneration`, so it is Current as soon as it exists.
    pub(crate) fn kstatus_reads(&self) -> bool {
        match self {
            RuntimeHow::Chart { .. } => true,
            RuntimeHow::Operator { kstatus, .. } => *kstatus,
            // A Provider reports Installed and Healthy, no Ready.
            RuntimeHow::Crossplane | RuntimeHow::Package { .. } => false,
        }
    }

    /// A `healthCheckExprs` entry that tells, when kstatus does not.
    pub(crate) fn health_expr(&self) -> Option<HealthExpr> {
        match self {
            RuntimeHow::Chart { .. } => None,
            RuntimeHow::Operator { health, .. } => health.clone(),
            RuntimeHow::Crossplane => Some(HealthExpr {
                current: "status.conditions.filter(c, c.type == 'Established').all(c, c.status == 'True')".into(),
                failed: None,
            }),
            RuntimeHow::Package { .. } => Some(HealthExpr {
                current: "status.conditions.filter(c, c.type == 'Healthy').all(c, c.status == 'True')".into(),
                failed: None,
            }),
        }
    }
}

/// One provider found in a cluster's rendered objects.
#[derive(Debug, Clone)]
pub struct Provider {
    /// The API group it provides kinds of (`*.example.com`: every group ending in
    /// `.example.com`).
    pub group: String,
    /// `None`: every kind of the group.
    pub kind: Option<String>,
    /// The scope the provider declares (a CRD does).
    pub scope: Option<Scope>,
    /// Always located in a tier (`Crd` or `Runtime`).
    pub provenance: Provenance,
}

impl Provider {
    fn provides(&self, group: &str, kind: &str) -> bool {
        let group_matches = match self.group.strip_prefix("*.") {
            Some(suffix) => group.ends_with(&format!(".{suffix}")),
            None => self.group == group,
        };
        group_matches && self.kind.as_deref().is_none_or(|k| k == kind)
    }
}

/// What a source of kinds reads.
#[derive(Debug)]
pub(crate) struct SourceCx<'a> {
    /// The cluster whose objects are scanned.
    pub cluster: &'a Cluster,
    /// The chart and runtime catalogs.
    pub catalog: &'a Catalog,
    /// What the repository installs before Flux.
    pub bootstrap: &'a bootstrap::Bootstrap,
    /// OCIRepository/HelmChart objects → their chart.
    pub chart_sources: chart::ChartSources,
    /// HelmReleases of the cluster's network plugin.
    pub plugins: Vec<cni::Plugin>,
}

/// A source of kinds.
pub(crate) trait ProviderSource: Sync + std::fmt::Debug {
    /// Whether the kind exists before any tier is applied.
    fn initial(&self, _cx: &SourceCx, _group: &str, _kind: &str) -> Option<Provenance> {
        None
    }
    /// Providers among one tier's rendered objects.
    fn scan(&self, _cx: &SourceCx, _tier: &Tier, _object: &Object, _out: &mut Vec<Provider>) {}
}

/// Every source of kinds, in the order providers are reported.
pub(crate) const SOURCES: &[&dyn ProviderSource] = &[
    &builtin::BuiltIn,
    &flux::Flux,
    &preinstalled::Preinstalled,
    &bootstrap::BootstrapKinds,
    &cni::NetworkPlugin,
    &crd::GitCrds,
    &chart::Charts,
    &crossplane::Crossplane,
    &crossplane::Packages,
    &runtime::Operators,
];

/// Everything a cluster's tiers provide, indexed.
#[derive(Debug)]
pub struct Providers<'a> {
    cx: SourceCx<'a>,
    /// Providers by group.
    by_group: BTreeMap<String, Vec<Provider>>,
    /// Namespace name → tiers that render a Namespace object of that name.
    pub namespaces: BTreeMap<String, Vec<TierId>>,
    /// Namespace name → HelmReleases that create it
    /// (`spec.install.createNamespace` with `spec.targetNamespace`): their
    /// tier, the HelmRelease, its chart.
    pub release_namespaces: BTreeMap<String, Vec<(TierId, ObjectId, String)>>,
    /// HelmReleases of charts the catalog does not know.
    uncatalogued: Vec<Uncatalogued>,
}

/// A HelmRelease of a chart the catalog does not know.
#[derive(Debug, Clone)]
struct Uncatalogued {
    tier: TierId,
    release: ObjectId,
    at: Option<Span>,
    chart: String,
    /// The address of the repository it comes from.
    repository: Option<String>,
}

impl<'a> Providers<'a> {
    /// Runs every source of kinds over the cluster's local tiers (those not applied
    /// to another cluster through `spec.kubeConfig`) and indexes what they provide.
    pub fn of(
        cluster: &'a Cluster,
        catalog: &'a Catalog,
        bootstrap: &'a bootstrap::Bootstrap,
    ) -> Providers<'a> {
        let mut cx = SourceCx {
            cluster,
            catalog,
            bootstrap,
            chart_sources: chart::chart_sources(cluster),
            plugins: Vec::new(),
        };
        cx.plugins = cni::plugins(&cx, cluster);
        let mut found = Vec::new();
        let mut namespaces: BTreeMap<String, Vec<TierId>> = BTreeMap::new();
        let mut release_namespaces: BTreeMap<String, Vec<(TierId, ObjectId, String)>> =
            BTreeMap::new();
        // Tiers that apply to another cluster (spec.kubeConfig) provide
        // nothing here.
        for tier in cluster.local_tiers() {
            for o in tier.objects() {
                for source in SOURCES {
                    source.scan(&cx, tier, o, &mut found);
                }
                if o.id.group.is_empty() && o.id.kind == "Namespace" {
                    namespaces
                        .entry(o.id.name.clone())
                        .or_default()
                        .push(tier.id.clone());
                }
                if o.id.group == "helm.toolkit.fluxcd.io" && o.id.kind == "HelmRelease" {
                    let chart = chart::chart_of(&cx, o);
                    // The namespace it installs into
                    // (`install.createNamespace`), and those the chart's
                    // templates create: read from the chart, else the
                    // catalog's.
                    let mut made: Vec<String> = o
                        .body
                        .path(&["spec", "install", "createNamespace"])
                        .and_then(crate::yaml::Node::as_bool)
                        .filter(|create| *create)
                        .and_then(|_| o.body.str_at(&["spec", "targetNamespace"]))
                        .into_iter()
                        .collect();
                    if cluster.charts.get(&o.id).is_some_and(Result::is_ok) {
                        made.extend(chart::read_namespaces(cluster, o));
                    } else if let Some(entry) = chart.as_deref().and_then(|c| catalog.chart(c)) {
                        made.extend(entry.namespaces.iter().cloned());
                    }
                    let chart = chart.unwrap_or_else(|| o.id.name.clone());
                    for ns in made {
                        release_namespaces.entry(ns).or_default().push((
                            tier.id.clone(),
                            o.id.clone(),
                            chart.clone(),
                        ));
                    }
                }
            }
        }
        let mut by_group: BTreeMap<String, Vec<Provider>> = BTreeMap::new();
        for p in found {
            // Wildcard groups (`*.aws.upbound.io`) are kept under `*`.
            let key = if p.group.starts_with("*.") {
                "*".to_string()
            } else {
                p.group.clone()
            };
            by_group.entry(key).or_default().push(p);
        }
        let uncatalogued = chart::uncatalogued(&cx, cluster)
            .into_iter()
            .map(|(t, o, chart, repository)| Uncatalogued {
                tier: t.id.clone(),
                release: o.id.clone(),
                at: o.source.clone(),
                chart,
                repository,
            })
            .collect();
        Providers {
            cx,
            by_group,
            namespaces,
            release_namespaces,
            uncatalogued,
        }
    }

    /// The catalog the providers were found with.
    pub(crate) fn catalog(&self) -> &Catalog {
        self.cx.catalog
    }

    /// The HelmReleases of the cluster's network plugin ([`cni`]).
    pub(crate) fn plugins(&self) -> &[cni::Plugin] {
        &self.cx.plugins
    }

    /// Providers a kind plausibly has when nothing the catalog knows
    /// provides it: HelmReleases of uncatalogued charts whose name or
    /// address matches its group ([`chart::plausible`]).
    pub fn probable(&self, group: &str) -> Vec<Provider> {
        self.uncatalogued
            .iter()
            // A catalogued chart that lists the group has had its say (it
            // installs it, or, under its CRD policy or values, does not).
            .filter(|u| {
                self.cx
                    .catalog
                    .chart(&u.chart)
                    .is_none_or(|e| !e.groups.iter().any(|g| g == group))
            })
            .filter(|u| chart::plausible(&u.chart, u.repository.as_deref(), group))
            .map(|u| Provider {
                group: group.to_string(),
                kind: None,
                scope: None,
                provenance: Provenance::Runtime {
                    how: RuntimeHow::Chart {
                        chart: u.chart.clone(),
                        probable: true,
                    },
                    trigger: u.release.clone(),
                    tier: u.tier.clone(),
                    at: u.at.clone(),
                },
            })
            .collect()
    }

    /// Where the kind exists before any tier is applied, if it does.
    pub fn initial(&self, group: &str, kind: &str) -> Option<Provenance> {
        SOURCES
            .iter()
            .find_map(|s| s.initial(&self.cx, group, kind))
    }

    /// The providers of a kind located in tiers: CRDs in git first, then the
    /// runtime providers, each in the order the tiers render them.
    pub(crate) fn located(&self, group: &str, kind: &str) -> Vec<&Provider> {
        let mut out: Vec<&Provider> = self
            .by_group
            .get(group)
            .into_iter()
            .flatten()
            .chain(self.by_group.get("*").into_iter().flatten())
            .filter(|p| p.provides(group, kind))
            .collect();
        out.sort_by_key(|p| !matches!(p.provenance, Provenance::Crd { .. }));
        out
    }

    /// The scope of a kind, when the built-in table, a CRD in git or the
    /// catalog says.
    pub fn scope(&self, group: &str, kind: &str) -> Option<Scope> {
        if let Some(b) = builtin_kind(group, kind) {
            return Some(b.scope);
        }
        if group.ends_with(".toolkit.fluxcd.io") || group == FLUX_OPERATOR_GROUP {
            return Some(Scope::Namespaced);
        }
        self.located(group, kind)
            .iter()
            .find_map(|p| p.scope)
            .or_else(|| {
                self.cx
                    .catalog
                    .is_cluster_scoped(group, kind)
                    .then_some(Scope::Cluster)
            })
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
