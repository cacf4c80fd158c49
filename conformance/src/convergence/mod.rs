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
pub mod references;
pub mod simulate;
pub mod supplier;
pub mod verdict;

use std::collections::{BTreeMap, BTreeSet};

pub use order::{Order, TierSet};
pub use simulate::{Blocked, Mode, Need, Phase, Requirement, Simulation, Step};
pub use verdict::{Deadlock, Judge, Level, Supplier, Ungated, Verdict};

use crate::graph::{Cycle, TierGraph};
use crate::model::{Cluster, Entry, Object, Tier, TierId, TierState};
use crate::provenance::bootstrap::Bootstrap;
use crate::provenance::distribution::KubeVersion;
use crate::provenance::installed::Installed;
use crate::provenance::{Catalog, Provenance, Providers, Scope};
use crate::repo::RepoIndex;
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
pub const INITIAL_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// The resolution of one object's kind.
#[derive(Debug, Clone)]
pub struct KindUse<'m> {
    pub tier: &'m Tier,
    pub object: &'m Object,
    pub verdict: Verdict,
    /// Where the kind comes from (the supplier the verdict is about).
    pub provenance: Provenance,
}

/// A namespaced object in a namespace that does not exist at first.
#[derive(Debug, Clone)]
pub struct NamespaceUse<'m> {
    pub tier: &'m Tier,
    pub object: &'m Object,
    pub namespace: String,
    /// The tiers that render a Namespace of that name.
    pub creators: Vec<TierId>,
    pub verdict: Verdict,
}

/// A reference to an object the repository defines.
#[derive(Debug, Clone)]
pub struct ReferenceUse<'m> {
    pub tier: &'m Tier,
    /// `None`: the Kustomization itself refers (sourceRef, substituteFrom).
    pub object: Option<&'m Object>,
    pub reference: Reference,
    /// The tiers that render the target, with where.
    pub targets: Vec<(TierId, Option<crate::model::Span>)>,
    pub verdict: Verdict,
}

/// The convergence analysis of one cluster: the tier graph and its cycles,
/// ordering, providers, the cold start run to its end, and the verdict on
/// every kind, namespace and reference a tier needs. Computed once per run
/// and shared by every rule and report.
#[derive(Debug)]
pub struct ClusterAnalysis<'m> {
    pub cluster: &'m Cluster,
    pub graph: TierGraph,
    /// The dependency cycles of the graph (strongly connected components).
    pub cycles: Vec<Cycle>,
    pub order: Order,
    pub providers: Providers<'m>,
    pub uses: Vec<KindUse<'m>>,
    pub namespaces: Vec<NamespaceUse<'m>>,
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
}

/// One need before it is judged.
struct Pending<'m> {
    tier: &'m Tier,
    object: Option<&'m Object>,
    what: What,
    suppliers: Vec<Supplier>,
    /// For kinds: the provenance of each supplier.
    provenances: Vec<Provenance>,
}

enum What {
    /// `initial`: the kind exists before any tier (built in, Flux's,
    /// preinstalled).
    Kind {
        initial: Option<Provenance>,
    },
    Namespace {
        name: String,
        creators: Vec<TierId>,
    },
    Reference {
        reference: Reference,
        targets: Vec<(TierId, Option<crate::model::Span>)>,
    },
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
            let ns = match &item.provides {
                crate::provenance::bootstrap::Provides::Namespace(ns) => ns,
                crate::provenance::bootstrap::Provides::Chart {
                    namespace: Some(ns),
                    crds_only: false,
                    ..
                } => ns,
                _ => continue,
            };
            initial_namespaces
                .entry(ns.clone())
                .or_insert_with(|| Some((item.at.clone(), item.via.clone())));
        }
        if let Entry::SyncKustomization { tier, .. } = &cluster.entry {
            initial_namespaces.insert(tier.namespace.clone(), None);
        } else {
            initial_namespaces.insert("flux-system".into(), None);
        }
        // Tiers whose whole output is not known: not built, or rendering
        // ResourceSets this tool does not expand.
        let unchecked: Vec<TierId> = cluster
            .tiers
            .values()
            .filter(|t| !matches!(t.state, TierState::Rendered(_)) || !t.resource_sets().is_empty())
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
        // What the cold start must meet, per tier (one requirement per
        // distinct need).
        let mut requirements: BTreeMap<TierId, BTreeMap<String, Requirement>> = BTreeMap::new();
        for p in &pending {
            let (phase, what, need, required) = match &p.what {
                What::Kind { initial: Some(_) } => continue,
                What::Kind { initial: None } => {
                    let id = &p.object.expect("a kind need has an object").id;
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
                What::Reference { reference, .. } if p.object.is_none() => (
                    Phase::Build,
                    format!("{} ({})", reference.target(), reference.via),
                    Need::Reference {
                        kind: reference.kind.to_string(),
                        name: reference.name.clone(),
                    },
                    reference.required,
                ),
                What::Reference { .. } => continue,
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
        let requirements: BTreeMap<TierId, Vec<Requirement>> = requirements
            .into_iter()
            .map(|(t, r)| (t, r.into_values().collect()))
            .collect();
        let live = Simulation::run(
            cluster,
            &order.sequence,
            requirements.clone(),
            &cycles,
            false,
        );
        let resumed = Simulation::run(
            cluster,
            &order.sequence,
            requirements.clone(),
            &cycles,
            true,
        );
        let judge = Judge {
            cluster,
            order: &order,
            live: &live,
            resumed: &resumed,
            unchecked: &unchecked,
        };
        let mut uses = Vec::new();
        let mut namespaces = Vec::new();
        let mut references = Vec::new();
        for p in pending {
            match p.what {
                What::Kind {
                    initial: Some(provenance),
                } => uses.push(KindUse {
                    tier: p.tier,
                    object: p.object.expect("a kind need has an object"),
                    verdict: Verdict::Available,
                    provenance,
                }),
                What::Kind { initial: None } => {
                    let (verdict, best) = judge.judge_best(&p.tier.id, &p.suppliers, true);
                    let provenance = match (best, &verdict) {
                        (Some(k), _) => p.provenances[k].clone(),
                        (None, Verdict::Race { supplier, .. }) => Provenance::Unchecked {
                            tier: supplier.clone(),
                        },
                        (None, Verdict::Available) => Provenance::Unchecked {
                            tier: unchecked
                                .iter()
                                .find(|t| order.applied_before(&p.tier.id).contains(t))
                                .cloned()
                                .unwrap_or_else(|| p.tier.id.clone()),
                        },
                        (
                            None,
                            Verdict::Ungated { .. } | Verdict::Deadlock(..) | Verdict::Unknown,
                        ) => Provenance::Unknown,
                    };
                    uses.push(KindUse {
                        tier: p.tier,
                        object: p.object.expect("a kind need has an object"),
                        verdict,
                        provenance,
                    });
                }
                What::Namespace { name, creators } => {
                    let verdict = judge.judge(&p.tier.id, &p.suppliers, true);
                    namespaces.push(NamespaceUse {
                        tier: p.tier,
                        object: p.object.expect("a namespace need has an object"),
                        namespace: name,
                        creators,
                        verdict,
                    });
                }
                // Kept for the strict cold start only (see `reference_need`).
                What::Reference { reference, targets }
                    if targets.is_empty() && !reference.required =>
                {
                    continue;
                }
                What::Reference { reference, targets } => {
                    let verdict = judge.judge(&p.tier.id, &p.suppliers, p.object.is_some());
                    references.push(ReferenceUse {
                        tier: p.tier,
                        object: p.object,
                        reference,
                        targets,
                        verdict,
                    });
                }
            }
        }
        ClusterAnalysis {
            bootstrap,
            installed: crate::provenance::installed::installed(cluster, index),
            cluster,
            graph,
            cycles,
            order,
            providers,
            uses,
            namespaces,
            references,
            live,
            resumed,
            requirements,
            unchecked,
            initial_namespaces,
            kubernetes,
            crds: rendered_crds(cluster),
        }
    }

    /// The cold start as the API server will have it, with nothing taken as
    /// met that nothing supplies ([`Mode::Strict`]): what L1 predicts.
    pub fn strict(&self) -> Simulation {
        Simulation::run_mode(
            self.cluster,
            &self.order.sequence,
            self.requirements.clone(),
            &self.cycles,
            false,
            Mode::Strict,
        )
    }

    /// The tiers kept from starting only by a suspended tier above them
    /// (`spec.suspend` on the tier or on a tier that renders it).
    pub fn under_suspension(&self, id: &TierId) -> bool {
        let mut at = Some(id);
        let mut steps = 0;
        while let Some(t) = at.and_then(|id| self.cluster.tiers.get(id)) {
            if t.suspend {
                return true;
            }
            steps += 1;
            if steps > self.cluster.tiers.len() {
                return false;
            }
            at = t.parent.as_ref();
        }
        false
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

/// How likely a tier that was not checked is to provide a group: its name
/// or source shares a word with the group (2), it is named for CRDs (1).
fn relevance(name: &str, url: Option<&str>, group: &str) -> u8 {
    let words: Vec<&str> = group.split(['.', '-']).filter(|w| w.len() >= 4).collect();
    let text = format!("{name} {}", url.unwrap_or_default()).to_ascii_lowercase();
    let shares = words.iter().any(|w| text.contains(&w.to_ascii_lowercase()));
    2 * u8::from(shares) + u8::from(name.contains("crd"))
}

/// `group/Kind`, or `Kind` for the core group.
pub fn kind_text(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{group}/{kind}")
    }
}

/// Every need of every tier that applies to this cluster, with its
/// suppliers.
#[allow(clippy::too_many_arguments)]
fn needs<'m>(
    cluster: &'m Cluster,
    catalog: &Catalog,
    bootstrap: &Bootstrap,
    order: &Order,
    providers: &Providers<'m>,
    initial_namespaces: &BTreeMap<String, Option<(crate::model::Span, String)>>,
) -> Vec<Pending<'m>> {
    let mut out = Vec::new();
    let objects = ObjectIndex::of(cluster);
    let releases = Releases::of(cluster);
    // Objects created before Flux: by the bootstrap, or declared.
    let outside = |object: &str| {
        bootstrap.object(&cluster.name, object).is_some()
            || catalog.preinstalled_objects.iter().any(|o| o == object)
    };
    // Tiers that were not checked, with the address of their source.
    let unchecked: Vec<(TierId, Option<String>)> = cluster
        .tiers
        .values()
        .filter(|t| !matches!(t.state, TierState::Rendered(_)) || !t.resource_sets().is_empty())
        .map(|t| {
            let url = cluster
                .tiers
                .values()
                .flat_map(|x| x.objects())
                .find_map(|o| {
                    (o.id.kind == t.source_ref.kind
                        && o.id.name == t.source_ref.name
                        && o.id.namespace.as_deref() == Some(t.source_ref.namespace.as_str()))
                    .then(|| o.body.str_at(&["spec", "url"]))
                    .flatten()
                });
            (t.id.clone(), url)
        })
        .collect();
    for id in &order.sequence {
        let tier = &cluster.tiers[id];
        if tier.remote_target().is_some() {
            continue; // applied to another cluster: its needs live there
        }
        for object in tier.objects() {
            let (group, kind) = (object.id.group.as_str(), object.id.kind.as_str());
            match providers.initial(group, kind) {
                None => {
                    let mut located: Vec<crate::provenance::Provider> = providers
                        .located(group, kind)
                        .into_iter()
                        .cloned()
                        .collect();
                    if located.is_empty() {
                        // Nothing the catalog knows: a chart whose name or
                        // address matches, probably.
                        located = providers.probable(group);
                    }
                    // Tiers that were not checked whose name or source
                    // matches the group: they may well provide it (a
                    // `crds-<operator>` Kustomization of an upstream repo).
                    let plausible: Vec<&TierId> = unchecked
                        .iter()
                        .filter(|(t, url)| {
                            crate::provenance::chart::plausible(&t.name, url.as_deref(), group)
                        })
                        .map(|(t, _)| t)
                        .collect();
                    // Nothing at all: any tier that was not checked may, the
                    // likeliest first.
                    // A CRD tier that was not checked (`prometheus-crd`,
                    // built from a remote base) and is applied before this
                    // one may provide what a same-tier chart cannot.
                    let plausible: Vec<&TierId> = plausible
                        .into_iter()
                        .chain(unchecked.iter().map(|(t, _)| t).filter(|t| {
                            t.name.contains("crd") && order.applied_before(&tier.id).contains(t)
                        }))
                        .collect();
                    let candidates: Vec<&TierId> = if located.is_empty() && plausible.is_empty() {
                        let mut all: Vec<&(TierId, Option<String>)> = unchecked.iter().collect();
                        all.sort_by_key(|(t, url)| {
                            std::cmp::Reverse(relevance(&t.name, url.as_deref(), group))
                        });
                        all.into_iter().map(|(t, _)| t).collect()
                    } else {
                        plausible
                    };
                    for t in candidates {
                        located.push(crate::provenance::Provider {
                            group: group.to_string(),
                            kind: None,
                            scope: None,
                            provenance: Provenance::Unchecked { tier: t.clone() },
                        });
                    }
                    out.push(Pending {
                        tier,
                        object: Some(object),
                        what: What::Kind { initial: None },
                        suppliers: located
                            .iter()
                            .map(|p| supplier(p, group, kind, &releases))
                            .collect(),
                        provenances: located.iter().map(|p| p.provenance.clone()).collect(),
                    });
                }
                initial => out.push(Pending {
                    tier,
                    object: Some(object),
                    what: What::Kind { initial },
                    suppliers: Vec::new(),
                    provenances: Vec::new(),
                }),
            }
            if let Some(ns) = &object.id.namespace
                && !initial_namespaces.contains_key(ns)
                && providers.scope(group, kind) != Some(Scope::Cluster)
            {
                let creators = providers.namespaces.get(ns).cloned().unwrap_or_default();
                let mut suppliers: Vec<Supplier> = creators
                    .iter()
                    .map(|t| Supplier {
                        tier: t.clone(),
                        level: Level::Stage1,
                        probable: false,
                    })
                    .collect();
                // HelmReleases that create it (install.createNamespace).
                for (t, hr, chart) in providers.release_namespaces.get(ns).into_iter().flatten() {
                    suppliers.push(Supplier {
                        tier: t.clone(),
                        level: Level::Runtime(Box::new(verdict::Runtime {
                            how: crate::provenance::RuntimeHow::Chart {
                                chart: chart.clone(),
                                probable: false,
                            },
                            trigger: hr.clone(),
                            created: (String::new(), "Namespace".into()),
                            after: releases.after(hr),
                        })),
                        probable: false,
                    });
                }
                out.push(Pending {
                    tier,
                    object: Some(object),
                    suppliers,
                    what: What::Namespace {
                        name: ns.clone(),
                        creators,
                    },
                    provenances: Vec::new(),
                });
            }
            for r in references::references(object) {
                if let Some(p) = reference_need(&objects, &outside, tier, Some(object), r) {
                    out.push(p);
                }
            }
        }
        for r in references::tier_references(tier) {
            if let Some(p) = reference_need(&objects, &outside, tier, None, r) {
                out.push(p);
            }
        }
    }
    out
}

fn reference_need<'m>(
    objects: &ObjectIndex,
    outside: &dyn Fn(&str) -> bool,
    tier: &'m Tier,
    object: Option<&'m Object>,
    reference: Reference,
) -> Option<Pending<'m>> {
    if reference.name.contains("${") {
        return None;
    }
    // A SOPS key the repository holds only encrypted cannot be the one
    // Flux decrypts it with: it was created outside Flux first (`sops -d
    // … | kubectl apply`), and the Kustomization that renders it only
    // adopts it.
    if reference.via == "spec.decryption.secretRef" && objects.encrypted(&reference) {
        return None;
    }
    // Applied before Flux (a bootstrap script, Terraform, declared): there
    // on the cold start, whoever renders it later.
    if outside(&reference.target()) {
        return None;
    }
    let targets = objects.get(&reference).to_vec();
    // Not defined in the repository: left alone, unless a missing target
    // fails the referrer and nothing before Flux creates it either. What
    // a Kustomization reads before it builds (its source, its SOPS key) is
    // kept, unmet, for the strict cold start ([`simulate::Mode::Strict`]): the live
    // model takes it as created outside the repository.
    if targets.is_empty()
        && (outside(&reference.target()) || (!reference.required && object.is_some()))
    {
        return None;
    }
    Some(Pending {
        tier,
        object,
        suppliers: targets
            .iter()
            .map(|(t, _)| Supplier {
                tier: t.clone(),
                level: Level::Applied,
                probable: false,
            })
            .collect(),
        what: What::Reference { reference, targets },
        provenances: Vec::new(),
    })
}

/// The supplier a located provider is.
fn supplier(
    p: &crate::provenance::Provider,
    group: &str,
    kind: &str,
    releases: &Releases,
) -> Supplier {
    match &p.provenance {
        Provenance::Runtime {
            how, trigger, tier, ..
        } => Supplier {
            tier: tier.clone(),
            level: Level::Runtime(Box::new(verdict::Runtime {
                how: how.clone(),
                trigger: trigger.clone(),
                created: (group.to_string(), kind.to_string()),
                after: releases.after(trigger),
            })),
            probable: matches!(
                how,
                crate::provenance::RuntimeHow::Chart { probable: true, .. }
            ),
        },
        // A tier that was not checked, plausibly the kind's (by name).
        Provenance::Unchecked { tier } => Supplier {
            tier: tier.clone(),
            level: Level::Stage1,
            probable: true,
        },
        other => Supplier {
            tier: other.tier().cloned().unwrap_or_else(|| TierId::new("", "")),
            level: Level::Stage1,
            probable: false,
        },
    }
}

/// The cluster's HelmReleases: (namespace, name) → the tier and the
/// HelmReleases each `spec.dependsOn` names.
struct Releases(BTreeMap<NamespacedName, (TierId, Vec<NamespacedName>)>);

/// (namespace, name).
type NamespacedName = (String, String);

impl Releases {
    fn of(cluster: &Cluster) -> Releases {
        let mut map = BTreeMap::new();
        for tier in cluster.tiers.values() {
            for o in tier.objects() {
                if o.id.group != "helm.toolkit.fluxcd.io" || o.id.kind != "HelmRelease" {
                    continue;
                }
                let ns = o.id.namespace.clone().unwrap_or_else(|| "default".into());
                let deps = o
                    .body
                    .path(&["spec", "dependsOn"])
                    .map(crate::yaml::Node::as_seq)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|d| {
                        let name = d.str_at(&["name"])?;
                        let dns = d.str_at(&["namespace"]).unwrap_or_else(|| ns.clone());
                        Some((dns, name))
                    })
                    .collect();
                map.insert((ns, o.id.name.clone()), (tier.id.clone(), deps));
            }
        }
        Releases(map)
    }

    /// The tiers of the HelmReleases `trigger` (a HelmRelease) depends on:
    /// helm-controller installs it only once they are Ready.
    fn after(&self, trigger: &crate::model::ObjectId) -> Vec<TierId> {
        if trigger.kind != "HelmRelease" {
            return Vec::new();
        }
        let key = (
            trigger
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into()),
            trigger.name.clone(),
        );
        self.0
            .get(&key)
            .map(|(_, deps)| {
                deps.iter()
                    .filter_map(|d| self.0.get(d).map(|(t, _)| t.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Objects by (group, kind, namespace, name) → the tiers that render them.
struct ObjectIndex(
    BTreeMap<ObjectKey, Vec<(TierId, Option<crate::model::Span>)>>,
    /// Objects written SOPS-encrypted (some copy of them).
    BTreeSet<ObjectKey>,
);

/// (group, kind, namespace, name).
type ObjectKey = (String, String, Option<String>, String);

impl ObjectIndex {
    fn of(cluster: &Cluster) -> ObjectIndex {
        let mut map: BTreeMap<_, Vec<_>> = BTreeMap::new();
        let mut encrypted = BTreeSet::new();
        for tier in cluster.local_tiers() {
            for o in tier.objects() {
                let id = &o.id;
                let key = (
                    id.group.clone(),
                    id.kind.clone(),
                    id.namespace.clone(),
                    id.name.clone(),
                );
                if crate::model::is_sops_encrypted(&o.body) {
                    encrypted.insert(key.clone());
                }
                map.entry(key)
                    .or_default()
                    .push((tier.id.clone(), o.source.clone()));
                // What its controller makes of it, applied with it.
                for key in references::produced(o) {
                    let entry = map.entry(key).or_default();
                    if !entry.iter().any(|(t, _)| *t == tier.id) {
                        entry.push((tier.id.clone(), o.source.clone()));
                    }
                }
            }
        }
        ObjectIndex(map, encrypted)
    }

    /// Whether the repository holds the object only SOPS-encrypted.
    fn encrypted(&self, r: &Reference) -> bool {
        self.1.contains(&(
            r.group.to_string(),
            r.kind.to_string(),
            r.namespace.clone(),
            r.name.clone(),
        ))
    }

    fn get(&self, r: &Reference) -> &[(TierId, Option<crate::model::Span>)] {
        let key =
            |ns: Option<String>| (r.group.to_string(), r.kind.to_string(), ns, r.name.clone());
        self.0
            .get(&key(r.namespace.clone()))
            // Written into any namespace (a ClusterExternalSecret's).
            .or_else(|| {
                r.namespace
                    .as_ref()
                    .and_then(|_| self.0.get(&key(Some("*".into()))))
            })
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}
