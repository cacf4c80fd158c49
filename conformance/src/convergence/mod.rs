//! The cold-start convergence model.
//!
//! Start from an empty cluster: built-in kinds, Flux's own kinds, CRDs
//! declared as installed outside Flux, and the namespaces `default`,
//! `kube-system`, `kube-public`, `kube-node-lease` and Flux's own. Then walk
//! the tiers in dependency order ([`order`]). A tier can rely on what was
//! applied before it, and on what is healthy only through `dependsOn` on a
//! tier whose Ready condition covers that object's health ([`health`]).
//!
//! Within a tier, Flux applies in stages (CRDs, Namespaces, ClusterRoles;
//! then `*Class` kinds; then the rest) and dry-runs each stage before
//! applying any of it, so a CRD and its custom resource in one tier is fine,
//! but a kind whose CRD a controller creates only after reconciling another
//! object of the same tier never exists at dry-run time: the tier can never
//! converge. [`verdict`] decides, for every rendered object, whether its kind
//! exists in time, from the providers [`crate::provenance`] finds.

pub mod health;
pub mod order;
pub mod verdict;

use std::collections::BTreeSet;

pub use order::{Order, TierSet};
pub use verdict::{Verdict, resolve};

use crate::graph::{Cycle, TierGraph};
use crate::model::{Cluster, Entry, Object, Tier};
use crate::provenance::installed::Installed;
use crate::provenance::{Catalog, Provenance, Providers};
use crate::repo::RepoIndex;

/// Namespaces every cluster starts with (Flux's own is added per cluster).
pub const INITIAL_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// The resolution of one object's kind.
#[derive(Debug, Clone)]
pub struct KindUse<'m> {
    pub tier: &'m Tier,
    pub object: &'m Object,
    pub verdict: Verdict,
    pub provenance: Provenance,
}

impl KindUse<'_> {
    /// The rule that reports this use, if any.
    pub fn rule(&self) -> Option<&'static str> {
        self.verdict.rule(&self.provenance)
    }
}

/// The convergence analysis of one cluster: the tier graph and its cycles,
/// ordering, providers, and the resolution of every rendered object's kind.
/// Computed once per run and shared by every rule and report.
#[derive(Debug)]
pub struct ClusterAnalysis<'m> {
    pub cluster: &'m Cluster,
    pub graph: TierGraph,
    /// The dependency cycles of the graph (strongly connected components).
    pub cycles: Vec<Cycle>,
    pub order: Order,
    pub providers: Providers<'m>,
    pub uses: Vec<KindUse<'m>>,
    /// Namespaces that exist before any tier: the initial ones and Flux's.
    pub initial_namespaces: BTreeSet<String>,
    /// The Flux the cluster installs, when the repository shows it.
    pub installed: Option<Installed>,
}

impl<'m> ClusterAnalysis<'m> {
    pub fn of(
        cluster: &'m Cluster,
        catalog: &'m Catalog,
        index: &RepoIndex,
    ) -> ClusterAnalysis<'m> {
        let graph = TierGraph::of(cluster);
        let cycles = graph.cycles();
        let order = Order::of(cluster);
        let providers = Providers::of(cluster, catalog);
        let mut uses = Vec::new();
        for id in &order.sequence {
            let tier = &cluster.tiers[id];
            if tier.remote_target().is_some() {
                continue; // applied to another cluster: its kinds live there
            }
            for object in tier.objects() {
                let (verdict, provenance) = resolve(cluster, &order, &providers, tier, &object.id);
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
        if let Entry::SyncKustomization { tier, .. } = &cluster.entry {
            initial_namespaces.insert(tier.namespace.clone());
        } else {
            initial_namespaces.insert("flux-system".into());
        }
        ClusterAnalysis {
            installed: crate::provenance::installed::installed(cluster, index),
            cluster,
            graph,
            cycles,
            order,
            providers,
            uses,
            initial_namespaces,
        }
    }
}
