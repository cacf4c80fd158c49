//! The cold-start convergence model.
//!
//! Start from an empty cluster: built-in kinds, Flux's own kinds, CRDs
//! declared as installed outside Flux, and the namespaces `default`,
//! `kube-system`, `kube-public`, `kube-node-lease` and Flux's own. Then walk
//! the tiers in dependency order. A tier T can rely on what was *applied*
//! before it is reconciled: the tiers it depends on (transitively) and the
//! tier that renders its Kustomization object (its parent, with the parent's
//! own ancestors). It can rely on what is *healthy* only through `dependsOn`:
//! Flux starts T once every dependency is Ready, and Ready includes health
//! only when the dependency has `wait: true` or a `healthChecks` entry naming
//! the object. A parent applies the child Kustomization and the child starts
//! at once, without waiting for the parent's health.
//!
//! Within a tier, Flux applies in stages (CRDs, Namespaces, ClusterRoles;
//! then `*Class` kinds; then the rest) and dry-runs each stage before
//! applying any of it, so a CRD and its custom resource in one tier is fine,
//! but a kind whose CRD a controller creates only after reconciling another
//! object of the same tier never exists at dry-run time: the tier can never
//! converge.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Cluster, Object, ObjectId, Span, Tier, TierId};
use crate::provenance::{self, Catalog, Scope};

/// Namespaces every cluster starts with (Flux's own is added per cluster).
pub const INITIAL_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// The API group of CustomResourceDefinition.
const CRD_GROUP: &str = "apiextensions.k8s.io";

/// Where a kind's API comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    BuiltIn,
    Flux,
    Preinstalled,
    /// A CustomResourceDefinition rendered in a tier.
    Crd {
        tier: TierId,
        at: Option<Span>,
    },
    /// Created once `trigger` (in `tier`) is reconciled: a HelmRelease of a
    /// catalog chart, a runtime-catalog trigger, or a Crossplane XRD.
    Runtime {
        how: RuntimeHow,
        trigger: ObjectId,
        tier: TierId,
        at: Option<Span>,
    },
    /// Nothing in the checked tiers provides it, but a tier of the cluster
    /// was not checked (another source) or did not build: the kind may well
    /// come from there, so nothing is claimed.
    Unchecked {
        tier: TierId,
    },
    Unknown,
}

/// Which kind of runtime provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeHow {
    /// helm-controller installs the chart's CRDs.
    Chart { chart: String },
    /// A controller creates the CRDs (runtime catalog).
    Operator { operator: String },
    /// Crossplane creates the CRD of a CompositeResourceDefinition.
    Crossplane,
}

impl RuntimeHow {
    /// "cdi-operator creates", "helm-controller installs (chart X)": reads
    /// as "which {describe} only after …".
    pub fn describe(&self) -> String {
        match self {
            RuntimeHow::Chart { chart } => format!("helm-controller installs (chart {chart})"),
            RuntimeHow::Operator { operator } => format!("{operator} creates"),
            RuntimeHow::Crossplane => "Crossplane creates".to_string(),
        }
    }
}

/// Whether a kind is available when its tier is dry-run on a cold cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Available,
    /// Created at runtime by a trigger in the same tier: never converges.
    SameTier,
    /// Provided by an ancestor that does not gate on the trigger's health.
    Ungated,
    /// Provided only by a tier that is neither this tier nor an ancestor.
    NotAncestor,
    /// No provenance at all.
    Unknown,
}

/// The resolution of one object's kind.
#[derive(Debug, Clone)]
pub struct KindUse<'m> {
    pub tier: &'m Tier,
    pub object: &'m Object,
    pub verdict: Verdict,
    pub provenance: Provenance,
}

/// Ordering facts of one cluster.
#[derive(Debug, Clone, Default)]
pub struct Order {
    /// Tiers whose objects are applied before T is reconciled.
    pub applied_before: BTreeMap<TierId, BTreeSet<TierId>>,
    /// Tiers that are Ready (so healthy when they gate) before T starts.
    pub ready_before: BTreeMap<TierId, BTreeSet<TierId>>,
    /// Tiers in an order Flux can apply them from a cold start (cycle members
    /// last).
    pub sequence: Vec<TierId>,
}

impl Order {
    pub fn of(cluster: &Cluster) -> Order {
        let mut order = Order::default();
        let mut visiting = BTreeSet::new();
        for id in cluster.tiers.keys() {
            order.visit(cluster, id, &mut visiting);
        }
        order
    }

    fn visit(&mut self, cluster: &Cluster, id: &TierId, visiting: &mut BTreeSet<TierId>) {
        if self.applied_before.contains_key(id) || !visiting.insert(id.clone()) {
            return; // done, or a cycle (reported by dependency-cycle)
        }
        let tier = &cluster.tiers[id];
        let mut applied = BTreeSet::new();
        let mut ready = BTreeSet::new();
        let deps: Vec<TierId> = tier
            .depends_on
            .iter()
            .map(|d| d.target.clone())
            .filter(|d| cluster.tiers.contains_key(d))
            .collect();
        for dep in &deps {
            self.visit(cluster, dep, visiting);
            applied.insert(dep.clone());
            ready.insert(dep.clone());
            applied.extend(self.applied_before.get(dep).cloned().unwrap_or_default());
            ready.extend(self.ready_before.get(dep).cloned().unwrap_or_default());
        }
        if let Some(parent) = tier
            .parent
            .as_ref()
            .filter(|p| cluster.tiers.contains_key(p))
        {
            self.visit(cluster, parent, visiting);
            applied.insert(parent.clone());
            applied.extend(self.applied_before.get(parent).cloned().unwrap_or_default());
            ready.extend(self.ready_before.get(parent).cloned().unwrap_or_default());
        }
        applied.remove(id);
        ready.remove(id);
        visiting.remove(id);
        self.applied_before.insert(id.clone(), applied);
        self.ready_before.insert(id.clone(), ready);
        self.sequence.push(id.clone());
    }

    pub fn applied_before(&self, id: &TierId) -> &BTreeSet<TierId> {
        static EMPTY: BTreeSet<TierId> = BTreeSet::new();
        self.applied_before.get(id).unwrap_or(&EMPTY)
    }

    pub fn ready_before(&self, id: &TierId) -> &BTreeSet<TierId> {
        static EMPTY: BTreeSet<TierId> = BTreeSet::new();
        self.ready_before.get(id).unwrap_or(&EMPTY)
    }
}

/// Whether `tier` gates its Ready condition on the health of `trigger`.
pub fn gates_on(tier: &Tier, trigger: &ObjectId) -> bool {
    if tier.wait {
        return true;
    }
    tier.spec
        .path(&["spec", "healthChecks"])
        .map(|n| n.as_seq())
        .unwrap_or_default()
        .iter()
        .any(|check| {
            check.str_at(&["kind"]).as_deref() == Some(trigger.kind.as_str())
                && check.str_at(&["name"]).as_deref() == Some(trigger.name.as_str())
                && check
                    .str_at(&["namespace"])
                    .is_none_or(|ns| Some(ns.as_str()) == trigger.namespace.as_deref())
        })
}

/// A runtime provider: the trigger object and the kinds it makes exist.
#[derive(Debug, Clone)]
struct RuntimeProvider {
    how: RuntimeHow,
    trigger: ObjectId,
    tier: TierId,
    at: Option<Span>,
    group: String,
    /// `None`: every kind of the group.
    kind: Option<String>,
}

/// A CRD rendered in git: its tier, where, and the scope it declares.
type CrdSite = (TierId, Option<Span>, Scope);

/// Everything the cluster's tiers provide, indexed.
#[derive(Debug)]
pub struct Providers {
    /// (group, kind) → CRDs rendered in git: tier, place, scope.
    crds: BTreeMap<(String, String), Vec<CrdSite>>,
    runtime: Vec<RuntimeProvider>,
    /// Namespace name → tiers that render a Namespace object of that name.
    pub namespaces: BTreeMap<String, Vec<TierId>>,
}

impl Providers {
    pub fn of(cluster: &Cluster, catalog: &Catalog) -> Providers {
        let charts = catalog.chart_groups();
        let mut crds: BTreeMap<(String, String), Vec<CrdSite>> = BTreeMap::new();
        let mut runtime = Vec::new();
        let mut namespaces: BTreeMap<String, Vec<TierId>> = BTreeMap::new();
        // OCIRepository / HelmChart objects, to name the chart of a chartRef.
        let mut chart_sources: BTreeMap<(String, String, String), String> = BTreeMap::new();
        for tier in cluster.tiers.values() {
            for o in tier.objects() {
                if o.id.kind == "OCIRepository"
                    && let Some(url) = o.body.str_at(&["spec", "url"])
                {
                    let chart = url
                        .trim_end_matches('/')
                        .rsplit('/')
                        .next()
                        .unwrap_or_default()
                        .to_string();
                    chart_sources.insert(
                        ("OCIRepository".into(), ns_of(&o.id), o.id.name.clone()),
                        chart,
                    );
                }
                if o.id.kind == "HelmChart"
                    && let Some(chart) = o.body.str_at(&["spec", "chart"])
                {
                    chart_sources
                        .insert(("HelmChart".into(), ns_of(&o.id), o.id.name.clone()), chart);
                }
            }
        }
        // Tiers that apply to another cluster (spec.kubeConfig) provide
        // nothing here.
        for tier in cluster
            .tiers
            .values()
            .filter(|t| t.remote_target().is_none())
        {
            for o in tier.objects() {
                let id = &o.id;
                if id.group == CRD_GROUP && id.kind == "CustomResourceDefinition" {
                    let group = o.body.str_at(&["spec", "group"]).unwrap_or_default();
                    let kind = o
                        .body
                        .str_at(&["spec", "names", "kind"])
                        .unwrap_or_default();
                    let scope = match o.body.str_at(&["spec", "scope"]).as_deref() {
                        Some("Cluster") => Scope::Cluster,
                        _ => Scope::Namespaced,
                    };
                    crds.entry((group, kind)).or_default().push((
                        tier.id.clone(),
                        o.source.clone(),
                        scope,
                    ));
                }
                if id.group.is_empty() && id.kind == "Namespace" {
                    namespaces
                        .entry(id.name.clone())
                        .or_default()
                        .push(tier.id.clone());
                }
                if id.group == "helm.toolkit.fluxcd.io" && id.kind == "HelmRelease" {
                    let chart = o
                        .body
                        .str_at(&["spec", "chart", "spec", "chart"])
                        .or_else(|| {
                            let kind = o.body.str_at(&["spec", "chartRef", "kind"])?;
                            let name = o.body.str_at(&["spec", "chartRef", "name"])?;
                            let ns = o
                                .body
                                .str_at(&["spec", "chartRef", "namespace"])
                                .unwrap_or_else(|| ns_of(id));
                            chart_sources.get(&(kind, ns, name)).cloned()
                        });
                    if let Some(chart) = chart {
                        // A chart in an OCI or HTTP repository may be written as a path.
                        let short = chart.rsplit('/').next().unwrap_or(&chart).to_string();
                        for group in charts.get(short.as_str()).into_iter().flatten() {
                            runtime.push(RuntimeProvider {
                                how: RuntimeHow::Chart {
                                    chart: short.clone(),
                                },
                                trigger: id.clone(),
                                tier: tier.id.clone(),
                                at: o.source.clone(),
                                group: (*group).to_string(),
                                kind: None,
                            });
                        }
                    }
                }
                if id.group == "apiextensions.crossplane.io"
                    && id.kind == "CompositeResourceDefinition"
                {
                    let group = o.body.str_at(&["spec", "group"]).unwrap_or_default();
                    for path in [["spec", "names", "kind"], ["spec", "claimNames", "kind"]] {
                        if let Some(kind) = o.body.str_at(&path) {
                            runtime.push(RuntimeProvider {
                                how: RuntimeHow::Crossplane,
                                trigger: id.clone(),
                                tier: tier.id.clone(),
                                at: o.source.clone(),
                                group: group.clone(),
                                kind: Some(kind),
                            });
                        }
                    }
                }
                for entry in &catalog.runtime {
                    let group = match entry.trigger.group.as_str() {
                        "core" => "",
                        other => other,
                    };
                    let matches = id.group == group
                        && id.kind == entry.trigger.kind
                        && entry.trigger.name.as_ref().is_none_or(|n| *n == id.name);
                    if !matches {
                        continue;
                    }
                    for created in &entry.creates {
                        for kind in &created.kinds {
                            runtime.push(RuntimeProvider {
                                how: RuntimeHow::Operator {
                                    operator: entry.operator.clone(),
                                },
                                trigger: id.clone(),
                                tier: tier.id.clone(),
                                at: o.source.clone(),
                                group: created.group.clone(),
                                kind: (kind != "*").then(|| kind.clone()),
                            });
                        }
                    }
                }
            }
        }
        Providers {
            crds,
            runtime,
            namespaces,
        }
    }

    /// The scope of a kind, when a built-in table or a CRD in git says.
    pub fn scope(&self, group: &str, kind: &str) -> Option<Scope> {
        if let Some(b) = provenance::builtin_kind(group, kind) {
            return Some(b.scope);
        }
        self.crds
            .get(&(group.to_string(), kind.to_string()))
            .and_then(|v| v.first())
            .map(|(_, _, scope)| *scope)
    }
}

fn ns_of(id: &ObjectId) -> String {
    id.namespace.clone().unwrap_or_else(|| "default".into())
}

/// Resolves the kind of `object` in `tier`.
pub fn resolve(
    cluster: &Cluster,
    order: &Order,
    providers: &Providers,
    catalog: &Catalog,
    tier: &Tier,
    object: &ObjectId,
) -> (Verdict, Provenance) {
    let (group, kind) = (object.group.as_str(), object.kind.as_str());
    if provenance::builtin_kind(group, kind).is_some() {
        return (Verdict::Available, Provenance::BuiltIn);
    }
    if provenance::FLUX_GROUPS.contains(&group)
        || (group == provenance::FLUX_OPERATOR_GROUP
            && matches!(cluster.entry, crate::model::Entry::Directory { .. }))
    {
        return (Verdict::Available, Provenance::Flux);
    }
    if catalog.is_preinstalled(group, kind) {
        return (Verdict::Available, Provenance::Preinstalled);
    }
    let applied = order.applied_before(&tier.id);
    let ready = order.ready_before(&tier.id);
    let mut candidates: Vec<(Verdict, Provenance)> = Vec::new();
    for (crd_tier, at, _) in providers
        .crds
        .get(&(group.to_string(), kind.to_string()))
        .into_iter()
        .flatten()
    {
        // Stage 1 applies (and waits for) CRDs before the tier's other stages.
        let verdict = if *crd_tier == tier.id || applied.contains(crd_tier) {
            Verdict::Available
        } else {
            Verdict::NotAncestor
        };
        candidates.push((
            verdict,
            Provenance::Crd {
                tier: crd_tier.clone(),
                at: at.clone(),
            },
        ));
    }
    for p in providers
        .runtime
        .iter()
        .filter(|p| p.group == group && p.kind.as_deref().is_none_or(|k| k == kind))
    {
        let verdict = if p.tier == tier.id {
            Verdict::SameTier
        } else if ready.contains(&p.tier) && gates_on(&cluster.tiers[&p.tier], &p.trigger) {
            Verdict::Available
        } else if applied.contains(&p.tier) {
            Verdict::Ungated
        } else {
            Verdict::NotAncestor
        };
        candidates.push((
            verdict,
            Provenance::Runtime {
                how: p.how.clone(),
                trigger: p.trigger.clone(),
                tier: p.tier.clone(),
                at: p.at.clone(),
            },
        ));
    }
    let rank = |v: &Verdict| match v {
        Verdict::Available => 0,
        Verdict::Ungated => 1,
        Verdict::SameTier => 2,
        Verdict::NotAncestor => 3,
        Verdict::Unknown => 4,
    };
    if let Some(best) = candidates.into_iter().min_by_key(|(v, _)| rank(v)) {
        return best;
    }
    // A tier that was not checked (another source) or did not build may
    // provide it, typically a child of a health-gated ancestor (a
    // Kustomization of an OCI artifact): claim nothing.
    let unchecked = cluster
        .tiers
        .values()
        .find(|t| !matches!(t.state, crate::model::TierState::Rendered(_)))
        .map(|t| &t.id);
    match unchecked {
        Some(t) => (
            Verdict::Available,
            Provenance::Unchecked { tier: t.clone() },
        ),
        None => (Verdict::Unknown, Provenance::Unknown),
    }
}

/// The convergence analysis of one cluster: ordering, providers, and the
/// resolution of every rendered object's kind.
#[derive(Debug)]
pub struct ClusterAnalysis<'m> {
    pub cluster: &'m Cluster,
    pub order: Order,
    pub providers: Providers,
    pub uses: Vec<KindUse<'m>>,
    /// Namespaces that exist before any tier: the initial ones and Flux's.
    pub initial_namespaces: BTreeSet<String>,
}

impl<'m> ClusterAnalysis<'m> {
    pub fn of(cluster: &'m Cluster, catalog: &Catalog) -> ClusterAnalysis<'m> {
        let order = Order::of(cluster);
        let providers = Providers::of(cluster, catalog);
        let mut uses = Vec::new();
        for id in &order.sequence {
            let tier = &cluster.tiers[id];
            if tier.remote_target().is_some() {
                continue; // applied to another cluster: its kinds live there
            }
            for object in tier.objects() {
                let (verdict, provenance) =
                    resolve(cluster, &order, &providers, catalog, tier, &object.id);
                uses.push(KindUse {
                    tier,
                    object,
                    verdict,
                    provenance,
                });
            }
        }
        let mut initial_namespaces: BTreeSet<String> =
            INITIAL_NAMESPACES.iter().map(|s| s.to_string()).collect();
        if let crate::model::Entry::SyncKustomization { tier, .. } = &cluster.entry {
            initial_namespaces.insert(tier.namespace.clone());
        } else {
            initial_namespaces.insert("flux-system".into());
        }
        ClusterAnalysis {
            cluster,
            order,
            providers,
            uses,
            initial_namespaces,
        }
    }
}
