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
mod made;
mod needs;
pub mod order;
pub mod references;
pub mod root;
pub mod simulate;
pub mod supplier;
pub mod verdict;

use std::collections::BTreeMap;

pub use order::{Order, TierSet};
pub use root::Root;
pub use simulate::{Blocked, Mode, Need, Phase, Requirement, Simulation, Step};
pub use verdict::{Deadlock, Judge, Level, Supplier, Ungated, Verdict};

use crate::graph::{Cycle, TierGraph};
use crate::model::{Cluster, Entry, Object, Tier, TierId};
use crate::provenance::bootstrap::Bootstrap;
use crate::provenance::distribution::KubeVersion;
use crate::provenance::installed::Installed;
use crate::provenance::{Catalog, Provenance, Providers};
use crate::repo::RepoIndex;
use needs::{Pending, What, needs};
use references::Reference;

/// The CRDs a cluster's local tiers render, by (group, kind): the first of
/// each in tier order.
fn rendered_crds(cluster: &Cluster) -> BTreeMap<(String, String), &Object> {
    let mut out = BTreeMap::new();
    for tier in cluster.local_tiers() {
        for o in tier.objects() {
            if o.id.group == "apiextensions.k8s.io"
                && o.id.kind == "CustomResourceDefinition"
                && let (Some(group), Some(kind)) = (
                    o.body.str_at(&["spec", "group"]),
                    o.body.str_at(&["spec", "names", "kind"]),
                )
            {
                out.entry((group, kind)).or_insert(o);
            }
        }
    }
    out
}

/// Namespaces every cluster starts with (Flux's own is added per cluster).
pub(crate) const INITIAL_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// The resolution of one object's kind.
#[derive(Debug, Clone)]
pub struct KindUse<'m> {
    /// The tier that renders the object.
    pub tier: &'m Tier,
    /// The object whose kind is resolved.
    pub object: &'m Object,
    /// Whether the kind exists in time on a cold start.
    pub verdict: Verdict,
    /// Where the kind comes from (the supplier the verdict is about).
    pub provenance: Provenance,
}

/// A namespaced object in a namespace that does not exist at first.
#[derive(Debug, Clone)]
pub struct NamespaceUse<'m> {
    /// The tier that renders the object.
    pub tier: &'m Tier,
    /// The namespaced object.
    pub object: &'m Object,
    /// The namespace it is in.
    pub namespace: String,
    /// The tiers that render a Namespace of that name.
    pub creators: Vec<TierId>,
    /// Whether the namespace exists in time on a cold start.
    pub verdict: Verdict,
}

/// A reference to an object the repository defines.
#[derive(Debug, Clone)]
pub struct ReferenceUse<'m> {
    /// The tier whose object (or Kustomization) refers.
    pub tier: &'m Tier,
    /// `None`: the Kustomization itself refers (sourceRef, substituteFrom).
    pub object: Option<&'m Object>,
    /// What is referred to, and by which field.
    pub reference: Reference,
    /// The tiers that render the target, with where.
    pub targets: Vec<(TierId, Option<crate::model::Span>)>,
    /// Whether the target exists in time on a cold start.
    pub verdict: Verdict,
}

/// The convergence analysis of one cluster: the tier graph and its cycles,
/// ordering, providers, the cold start run to its end, and the verdict on
/// every kind, namespace and reference a tier needs. Computed once per run
/// and shared by every rule and report.
#[derive(Debug)]
pub struct ClusterAnalysis<'m> {
    /// The cluster analysed.
    pub cluster: &'m Cluster,
    /// The cluster's tiers and their `dependsOn` edges.
    pub graph: TierGraph,
    /// The dependency cycles of the graph (strongly connected components).
    pub cycles: Vec<Cycle>,
    /// What is applied and Ready before each tier, and a cold-start sequence of the
    /// tiers.
    pub order: Order,
    /// What supplies kinds and namespaces on the cluster, indexed.
    pub providers: Providers<'m>,
    /// The resolution of every rendered object's kind.
    pub uses: Vec<KindUse<'m>>,
    /// Every object in a namespace that does not exist at first.
    pub namespaces: Vec<NamespaceUse<'m>>,
    /// The references the cluster's objects and Kustomizations make, each judged.
    pub references: Vec<ReferenceUse<'m>>,
    /// The cold start as it stands.
    pub live: Simulation,
    /// The cold start with suspended tiers resumed.
    pub resumed: Simulation,
    /// What each tier's cold start must meet (the simulations' input).
    pub requirements: BTreeMap<TierId, Vec<Requirement>>,
    /// Tiers not checked (another source) or not built.
    pub unchecked: Vec<TierId>,
    /// Namespaces that exist before any tier: the initial ones, Flux's, the
    /// platform's (`catalog.preinstalled_namespaces`) and the bootstrap's
    /// (with where the bootstrap creates them).
    pub initial_namespaces: BTreeMap<String, Option<(crate::model::Span, String)>>,
    /// The Flux the cluster installs, when the repository shows it.
    pub installed: Option<Installed>,
    /// What the repository installs before Flux.
    pub bootstrap: &'m Bootstrap,
    /// The Kubernetes version the cluster runs, when the repository shows
    /// it (declared, or pinned by the distribution's configuration).
    pub kubernetes: Option<KubeVersion>,
    /// The CRDs the cluster's local tiers render, by (group, kind): the
    /// first of each.
    pub crds: BTreeMap<(String, String), &'m Object>,
    /// Whether the run reads the cluster's whole world, and why not.
    pub world: crate::provenance::boundary::World,
    /// Tiers that are suspended or applied (through parents) only by a
    /// suspended one, found once.
    suspended: std::collections::HashSet<TierId>,
    /// The cycle (index in `cycles`) each member of one is in.
    cycle_index: std::collections::HashMap<TierId, usize>,
}

impl<'m> ClusterAnalysis<'m> {
    /// Analyses `cluster` on a cold start; `kubernetes` is the version it
    /// runs, when the repository shows it
    /// ([`crate::provenance::distribution::kubernetes`]).
    pub fn of(
        cluster: &'m Cluster,
        catalog: &'m Catalog,
        index: &RepoIndex,
        bootstrap: &'m Bootstrap,
        kubernetes: Option<KubeVersion>,
    ) -> ClusterAnalysis<'m> {
        let graph = TierGraph::of(cluster);
        let cycles = graph.cycles();
        let order = Order::of(cluster);
        let providers = Providers::of(cluster, catalog, bootstrap);
        let initial_namespaces = initial_namespaces(cluster, catalog, bootstrap, &providers);
        // Tiers whose whole output is not known: not built, built without
        // their remote bases, or rendering ResourceSets this tool does not
        // expand.
        let unchecked: Vec<TierId> = cluster
            .tiers
            .values()
            .filter(|t| !t.fully_known())
            .map(|t| t.id.clone())
            .collect();
        let pending = needs(
            cluster,
            catalog,
            bootstrap,
            &order,
            &providers,
            &initial_namespaces,
        );
        let requirements = requirements(&pending);
        let live = Simulation::run(cluster, &order.sequence, requirements.clone(), false);
        let resumed = Simulation::run(cluster, &order.sequence, requirements.clone(), true);
        let judge = Judge {
            cluster,
            order: &order,
            live: &live,
            resumed: &resumed,
            unchecked: &unchecked,
        };
        let may_create_namespaces = may_create_namespaces(cluster, &unchecked);
        let namespace_judge = Judge {
            unchecked: &may_create_namespaces,
            ..judge
        };
        let judged = Judged::of(pending, &judge, &namespace_judge);
        let cycle_index = cycles
            .iter()
            .enumerate()
            .flat_map(|(c, cycle)| cycle.members.iter().map(move |m| (m.clone(), c)))
            .collect();
        ClusterAnalysis {
            world: crate::provenance::boundary::World::of(cluster),
            bootstrap,
            installed: crate::provenance::installed::installed(cluster, index, bootstrap),
            cluster,
            graph,
            cycles,
            order,
            providers,
            uses: judged.uses,
            namespaces: judged.namespaces,
            references: judged.references,
            live,
            resumed,
            requirements,
            unchecked,
            initial_namespaces,
            kubernetes,
            crds: rendered_crds(cluster),
            suspended: suspended_subtrees(cluster),
            cycle_index,
        }
    }

    /// The cold start as the API server will have it, with nothing taken as
    /// met that nothing supplies ([`Mode::Strict`]): what L1 predicts.
    pub fn strict(&self) -> Simulation {
        Simulation::run_mode(
            self.cluster,
            &self.order.sequence,
            self.requirements.clone(),
            false,
            Mode::Strict,
        )
    }

    /// The tiers kept from starting only by a suspended tier above them
    /// (`spec.suspend` on the tier or on a tier that renders it).
    pub fn under_suspension(&self, id: &TierId) -> bool {
        self.suspended.contains(id)
    }

    /// The judge of this cluster's needs (for fixes and reports).
    pub fn judge(&self) -> Judge<'_> {
        Judge {
            cluster: self.cluster,
            order: &self.order,
            live: &self.live,
            resumed: &self.resumed,
            unchecked: &self.unchecked,
        }
    }
}

/// Namespaces that exist before any tier: the initial ones, the
/// platform's (conformance.yaml), the bootstrap's (with where the
/// bootstrap creates them) and Flux's own.
fn initial_namespaces(
    cluster: &Cluster,
    catalog: &Catalog,
    bootstrap: &Bootstrap,
    providers: &Providers,
) -> BTreeMap<String, Option<(crate::model::Span, String)>> {
    let mut initial_namespaces: BTreeMap<String, Option<(crate::model::Span, String)>> =
        INITIAL_NAMESPACES
            .iter()
            .map(|s| (s.to_string(), None))
            .collect();
    // The platform's (conformance.yaml) and the bootstrap's.
    for ns in &catalog.preinstalled_namespaces {
        initial_namespaces.insert(ns.clone(), None);
    }
    for item in bootstrap.of_cluster(&cluster.name) {
        let mut made = Vec::new();
        match &item.provides {
            crate::provenance::bootstrap::Provides::Namespace(ns) => made.push(ns.clone()),
            crate::provenance::bootstrap::Provides::Chart {
                chart,
                namespace,
                crds_only: false,
            } => {
                made.extend(namespace.clone());
                // And the namespaces the chart's templates create.
                if let Some(entry) = catalog.chart(chart) {
                    made.extend(entry.namespaces.iter().cloned());
                }
            }
            _ => continue,
        }
        for ns in made {
            initial_namespaces
                .entry(ns)
                .or_insert_with(|| Some((item.at.clone(), item.via.clone())));
        }
    }
    // The network plugin ran before Flux, with the namespaces its chart
    // creates.
    for plugin in providers.plugins() {
        let Some(entry) = catalog.chart(&plugin.chart) else {
            continue;
        };
        for ns in &entry.namespaces {
            initial_namespaces
                .entry(ns.clone())
                .or_insert_with(|| plugin.at.clone().map(|at| (at, plugin.via())));
        }
    }
    if let Entry::SyncKustomization { tier, .. } = &cluster.entry {
        initial_namespaces.insert(tier.namespace.clone(), None);
    } else {
        initial_namespaces.insert("flux-system".into(), None);
    }
    initial_namespaces
}

/// What the cold start must meet, per tier (one requirement per
/// distinct need).
fn requirements(pending: &[Pending]) -> BTreeMap<TierId, Vec<Requirement>> {
    let mut requirements: BTreeMap<TierId, BTreeMap<String, Requirement>> = BTreeMap::new();
    for p in pending {
        let Some((phase, what, need, required)) = requirement(p) else {
            continue;
        };
        requirements
            .entry(p.tier.id.clone())
            .or_default()
            .entry(what.clone())
            .or_insert_with(|| Requirement {
                phase,
                what,
                need,
                required,
                suppliers: p.suppliers.clone(),
            });
    }
    requirements
        .into_iter()
        .map(|(t, r)| (t, r.into_values().collect()))
        .collect()
}

/// What one need asks of the cold start: the phase it must be met by,
/// in words, as a [`Need`], and whether it is required; `None` for a need
/// the cold start does not wait on.
fn requirement(p: &Pending) -> Option<(Phase, String, Need, bool)> {
    Some(match &p.what {
        What::Kind {
            initial: Some(_), ..
        } => return None,
        What::Kind {
            object,
            initial: None,
        } => {
            let id = &object.id;
            (
                Phase::Apply,
                kind_text(&id.group, &id.kind),
                Need::Kind {
                    group: id.group.clone(),
                    kind: id.kind.clone(),
                },
                true,
            )
        }
        What::Namespace { name, .. } => (
            Phase::Apply,
            format!("namespace {name}"),
            Need::Namespace(name.clone()),
            true,
        ),
        // An object's references do not stop its tier applying;
        // what the Kustomization reads before it builds does.
        What::Reference {
            reference,
            object: None,
            ..
        } => (
            Phase::Build,
            format!("{} ({})", reference.target(), reference.via),
            Need::Reference {
                kind: reference.kind.to_string(),
                name: reference.name.clone(),
            },
            reference.required,
        ),
        // A release the tier's Ready waits for is installed only
        // after its dependsOn releases are Ready: the tier is Ready
        // only once they have applied.
        What::Reference {
            reference,
            object: Some(o),
            ..
        } if reference.waits && health::check(p.tier, &o.id).is_some() => (
            Phase::Ready,
            format!("{} ({})", reference.target(), reference.via),
            Need::Reference {
                kind: reference.kind.to_string(),
                name: reference.name.clone(),
            },
            true,
        ),
        What::Reference { .. } => return None,
    })
}

/// A tier that may create a namespace it is not known to: one not
/// built, one whose remote bases were not fetched, or one whose
/// ResourceSets template a Namespace. A rendered tier whose only
/// unknown is ResourceSets that generate no Namespace holds none.
fn may_create_namespaces(cluster: &Cluster, unchecked: &[TierId]) -> Vec<TierId> {
    unchecked
        .iter()
        .filter(|id| {
            let t = &cluster.tiers[*id];
            !matches!(t.state, crate::model::TierState::Rendered(_))
                || !t.remote_bases.is_empty()
                || t.resource_sets()
                    .iter()
                    .any(|rs| crate::yaml::to_yaml(&rs.body).contains("kind: Namespace"))
        })
        .cloned()
        .collect()
}

/// Every need judged: the kinds, the namespaces and the references.
struct Judged<'m> {
    uses: Vec<KindUse<'m>>,
    namespaces: Vec<NamespaceUse<'m>>,
    references: Vec<ReferenceUse<'m>>,
}

impl<'m> Judged<'m> {
    /// Judges each need, namespaces by `namespace_judge` (which counts as
    /// unchecked only the tiers that may create one).
    fn of(pending: Vec<Pending<'m>>, judge: &Judge, namespace_judge: &Judge) -> Judged<'m> {
        let count = |f: fn(&What) -> bool| pending.iter().filter(|p| f(&p.what)).count();
        let mut out = Judged {
            uses: Vec::with_capacity(count(|w| matches!(w, What::Kind { .. }))),
            namespaces: Vec::with_capacity(count(|w| matches!(w, What::Namespace { .. }))),
            references: Vec::new(),
        };
        for p in pending {
            match p.what {
                What::Kind {
                    object,
                    initial: Some(provenance),
                } => out.uses.push(KindUse {
                    tier: p.tier,
                    object,
                    verdict: Verdict::Available,
                    provenance: *provenance,
                }),
                What::Kind {
                    object,
                    initial: None,
                } => {
                    let (verdict, provenance) =
                        kind_verdict(judge, p.tier, object, &p.suppliers, &p.provenances);
                    out.uses.push(KindUse {
                        tier: p.tier,
                        object,
                        verdict,
                        provenance,
                    });
                }
                What::Namespace {
                    object,
                    name,
                    creators,
                } => {
                    let verdict = namespace_judge.judge(&p.tier.id, &p.suppliers, true);
                    out.namespaces.push(NamespaceUse {
                        tier: p.tier,
                        object,
                        namespace: name,
                        creators,
                        verdict,
                    });
                }
                // Kept for the strict cold start only (see `reference_need`).
                What::Reference {
                    reference, targets, ..
                } if targets.is_empty() && !reference.required => {
                    continue;
                }
                What::Reference {
                    object,
                    reference,
                    targets,
                } => {
                    let mut verdict = judge.judge(&p.tier.id, &p.suppliers, object.is_some());
                    if object.is_some()
                        && let Some(downstream) = judge.after_own_apply(&p.tier.id, &verdict)
                    {
                        verdict = downstream;
                    }
                    out.references.push(ReferenceUse {
                        tier: p.tier,
                        object,
                        reference: *reference,
                        targets,
                        verdict,
                    });
                }
            }
        }
        out
    }
}

/// Whether an object's kind, which exists only once a tier supplies it,
/// exists in time, and where it comes from (`provenances`: one per
/// supplier).
fn kind_verdict(
    judge: &Judge,
    tier: &Tier,
    object: &Object,
    suppliers: &[Supplier],
    provenances: &[Provenance],
) -> (Verdict, Provenance) {
    // A kind in one of Flux's groups that Flux does not
    // serve: no tier, checked or not, makes it exist.
    let (verdict, best) = if suppliers.is_empty()
        && crate::provenance::unserved_flux_kind(&object.id.group, &object.id.kind)
    {
        (Verdict::Unknown, None)
    } else {
        judge.judge_best(&tier.id, suppliers, true)
    };
    // A tier that is Ready before this one starts and whose health checks
    // name the kind's CRD proves it exists (kustomize-controller's
    // `checkHealth`: a CustomResourceDefinition is healthy once
    // Established), whoever creates it: that is ordering.
    let (verdict, best) = match verdict {
        Verdict::Race { .. } | Verdict::Ungated { .. }
            if crd_checked_before(judge, &tier.id, &object.id.group, &object.id.kind) =>
        {
            (Verdict::Available, best)
        }
        v => (v, best),
    };
    let provenance = match (best, &verdict) {
        (Some(k), _) => provenances[k].clone(),
        (None, Verdict::Race { supplier, .. }) => Provenance::Unchecked {
            tier: supplier.clone(),
        },
        (None, Verdict::Available) => Provenance::Unchecked {
            tier: judge
                .unchecked
                .iter()
                .find(|t| judge.order.applied_before(&tier.id).contains(t))
                .cloned()
                .unwrap_or_else(|| tier.id.clone()),
        },
        (None, Verdict::Ungated { .. } | Verdict::Deadlock(..) | Verdict::Unknown) => {
            Provenance::Unknown
        }
    };
    (verdict, provenance)
}

/// Whether a tier Ready before `consumer` starts health-checks the CRD of
/// `group`/`kind` (`spec.healthChecks` naming the
/// CustomResourceDefinition; with `wait: true` the entries are ignored).
fn crd_checked_before(judge: &Judge, consumer: &TierId, group: &str, kind: &str) -> bool {
    let crd = crate::provenance::crd_name(group, kind);
    judge.order.ready_before(consumer).iter().any(|t| {
        judge.cluster.tiers.get(t).is_some_and(|tier| {
            !tier.wait
                && health::names(
                    tier,
                    "apiextensions.k8s.io",
                    "CustomResourceDefinition",
                    None,
                    &crd,
                )
        })
    })
}

/// `group/Kind`, or `Kind` for the core group.
pub(crate) fn kind_text(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{group}/{kind}")
    }
}

/// Every tier that is suspended, or whose chain of parents reaches a
/// suspended one: each chain walked once, its answer kept for every tier
/// on it (a nesting thousands deep is linear, not quadratic).
fn suspended_subtrees(cluster: &Cluster) -> std::collections::HashSet<TierId> {
    let mut known: std::collections::HashMap<&TierId, bool> = std::collections::HashMap::new();
    for start in cluster.tiers.keys() {
        let mut path: Vec<&TierId> = Vec::new();
        let mut at = Some(start);
        let answer = loop {
            let Some(id) = at else { break false };
            if let Some(&known) = known.get(id) {
                break known;
            }
            let Some(tier) = cluster.tiers.get(id) else {
                break false;
            };
            if tier.suspend {
                break true;
            }
            if path.len() > cluster.tiers.len() {
                break false; // a parent loop: nothing above is suspended
            }
            path.push(id);
            at = tier.parent.as_ref();
        };
        if let Some(id) = at.filter(|id| cluster.tiers.get(*id).is_some_and(|t| t.suspend)) {
            known.insert(id, true);
        }
        for id in path {
            known.insert(id, answer);
        }
    }
    known
        .into_iter()
        .filter(|(_, suspended)| *suspended)
        .map(|(id, _)| id.clone())
        .collect()
}
