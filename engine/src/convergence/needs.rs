//! What each tier needs (kinds, namespaces, referenced objects) and which
//! tiers can supply it, before any of it is judged: the cluster's objects
//! and HelmReleases indexed once, every provider located in a tier.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use super::made;
use super::references::{self, Reference};
use super::{Level, Order, Supplier};
use crate::model::{Cluster, Object, ObjectId, Tier, TierId};
use crate::provenance::bootstrap::Bootstrap;
use crate::provenance::{Catalog, Provenance, Providers, Scope};

/// One need before it is judged.
pub(super) struct Pending<'m> {
    pub(super) tier: &'m Tier,
    pub(super) what: What<'m>,
    pub(super) suppliers: Vec<Supplier>,
    /// For kinds: the provenance of each supplier.
    pub(super) provenances: Vec<Provenance>,
}

/// What a need is, with the object that has it: a kind or a namespace is
/// always an object's; a reference may be the Kustomization's own (what
/// it reads before it builds: `object` is `None`).
pub(super) enum What<'m> {
    /// `initial`: the kind exists before any tier (built in, Flux's,
    /// preinstalled).
    /// Boxed: one of these is kept for every object of the cluster.
    Kind {
        object: &'m Object,
        initial: Option<Box<Provenance>>,
    },
    Namespace {
        object: &'m Object,
        name: String,
        creators: Vec<TierId>,
    },
    Reference {
        object: Option<&'m Object>,
        reference: Box<Reference>,
        targets: Vec<(TierId, Option<crate::model::Span>)>,
    },
}

/// How likely a tier that was not checked is to provide a group: its name
/// or source shares a word with the group (2), it is named for CRDs (1).
fn relevance(name: &str, url: Option<&str>, group: &str) -> u8 {
    let words: Vec<&str> = group.split(['.', '-']).filter(|w| w.len() >= 4).collect();
    let text = format!("{name} {}", url.unwrap_or_default()).to_ascii_lowercase();
    // How many of the group's words it shares: `external-secrets` over
    // `external-dns-cloudflare` for external-secrets.io.
    let shares = words
        .iter()
        .filter(|w| text.contains(&w.to_ascii_lowercase()))
        .count()
        .min(100) as u8;
    2 * shares + u8::from(name.contains("crd"))
}

/// Every need of every tier that applies to this cluster, with its
/// suppliers.
pub(super) fn needs<'m>(
    cluster: &'m Cluster,
    catalog: &Catalog,
    bootstrap: &Bootstrap,
    order: &Order,
    providers: &Providers<'m>,
    initial_namespaces: &BTreeMap<String, Option<(crate::model::Span, String)>>,
) -> Vec<Pending<'m>> {
    // About two needs per object (its kind, its namespace): sized once, as
    // a platform has hundreds of thousands.
    let objects: usize = cluster.tiers.values().map(|t| t.objects().len()).sum();
    let mut out = Vec::with_capacity(2 * objects + cluster.tiers.len());
    let entry_sources = entry_sources(cluster);
    // Objects created before Flux: by the bootstrap, or declared.
    let outside = |object: &str| {
        bootstrap.object(&cluster.name, object).is_some()
            || catalog.preinstalled_objects.iter().any(|o| o == object)
            || entry_sources.iter().any(|o| o == object)
    };
    let cx = Needs {
        cluster,
        order,
        providers,
        initial_namespaces,
        index: ObjectIndex::of(cluster),
        releases: Releases::of(cluster),
        outside: &outside,
        unchecked: unchecked(cluster),
    };
    for id in &order.sequence {
        let tier = &cluster.tiers[id];
        if tier.remote_target().is_some() {
            continue; // applied to another cluster: its needs live there
        }
        if !tier.remote_bases.is_empty() {
            // Only the local part is known: its remote bases (applied in the
            // same stage, CRDs first) may serve any of its needs, so none is
            // judged (the remote-base finding says what is not checked).
            continue;
        }
        // An object encrypted whole needs what it is, known only once
        // decrypted.
        for object in tier
            .objects()
            .iter()
            .filter(|o| !crate::model::is_opaque(&o.body))
        {
            cx.object_needs(tier, object, &mut out);
        }
        for r in references::tier_references(tier) {
            if let Some(p) = cx.reference_need(tier, None, r) {
                out.push(p);
            }
        }
    }
    out
}

/// The sources the cluster's entries sync from: created with Flux at
/// bootstrap (`flux bootstrap`, a FluxInstance, a managed extension),
/// whether or not the repository renders them.
fn entry_sources(cluster: &Cluster) -> Vec<String> {
    let entry_sources: Vec<String> = cluster
        .tiers
        .values()
        .filter(|t| t.parent.is_none())
        .map(|t| {
            format!(
                "{}/{}/{}",
                t.source_ref.kind, t.source_ref.namespace, t.source_ref.name
            )
        })
        .collect();
    // A directory entry is synced by a FluxInstance (or a platform) whose
    // source is named as the entry's but may be of any source kind
    // (`spec.sync.kind`).
    let directory_entry = matches!(cluster.entry, crate::model::Entry::Directory { .. });
    if directory_entry {
        entry_sources
            .iter()
            .flat_map(|s| {
                let rest = s.split_once('/').map_or("", |(_, r)| r).to_string();
                ["GitRepository", "OCIRepository", "Bucket"]
                    .iter()
                    .map(move |k| format!("{k}/{rest}"))
            })
            .collect()
    } else {
        entry_sources
    }
}

/// Tiers that were not checked, with the address of their source.
fn unchecked(cluster: &Cluster) -> Vec<(TierId, Option<String>)> {
    cluster
        .tiers
        .values()
        .filter(|t| !t.fully_known())
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
        .collect()
}

/// What the needs of one cluster are located with: its order, providers
/// and initial namespaces, its objects and HelmReleases indexed, what
/// exists before Flux, and the tiers that were not checked.
struct Needs<'a, 'm> {
    cluster: &'m Cluster,
    order: &'a Order,
    providers: &'a Providers<'m>,
    initial_namespaces: &'a BTreeMap<String, Option<(crate::model::Span, String)>>,
    index: ObjectIndex<'m>,
    releases: Releases,
    /// Whether an object (`Kind/namespace/name`) is created before Flux.
    outside: &'a dyn Fn(&str) -> bool,
    /// Tiers that were not checked, with the address of their source.
    unchecked: Vec<(TierId, Option<String>)>,
}

impl<'m> Needs<'_, 'm> {
    /// What one object needs: its kind, its namespace, what it refers to.
    fn object_needs(&self, tier: &'m Tier, object: &'m Object, out: &mut Vec<Pending<'m>>) {
        let (group, kind) = (object.id.group.as_str(), object.id.kind.as_str());
        out.push(self.kind_need(tier, object));
        if let Some(ns) = &object.id.namespace
            && !self.initial_namespaces.contains_key(ns)
            && self.providers.scope(group, kind) != Some(Scope::Cluster)
        {
            out.push(self.namespace_need(tier, object, ns));
        }
        for r in references::references(object) {
            if let Some(p) = self.reference_need(tier, Some(object), r) {
                out.push(p);
            }
        }
    }

    /// An object's kind: there from the start, or supplied by the
    /// providers located for it.
    fn kind_need(&self, tier: &'m Tier, object: &'m Object) -> Pending<'m> {
        let (group, kind) = (object.id.group.as_str(), object.id.kind.as_str());
        match self.providers.initial(group, kind) {
            None => {
                let located = self.located(tier, group, kind);
                Pending {
                    tier,
                    what: What::Kind {
                        object,
                        initial: None,
                    },
                    suppliers: located
                        .iter()
                        .map(|p| supplier(p, group, kind, &self.releases))
                        .collect(),
                    provenances: located.iter().map(|p| p.provenance.clone()).collect(),
                }
            }
            initial => Pending {
                tier,
                what: What::Kind {
                    object,
                    initial: initial.map(Box::new),
                },
                suppliers: Vec::new(),
                provenances: Vec::new(),
            },
        }
    }

    /// The providers of a kind that is not there from the start: those
    /// located, else probable ones, with the tiers that were not checked
    /// that may provide it.
    fn located(&self, tier: &Tier, group: &str, kind: &str) -> Vec<crate::provenance::Provider> {
        let mut located: Vec<crate::provenance::Provider> = self
            .providers
            .located(group, kind)
            .into_iter()
            .cloned()
            .collect();
        // A kind in one of Flux's groups that Flux does not
        // serve (`Kustomizatio`): nothing else makes it exist.
        let not_flux = located.is_empty() && crate::provenance::unserved_flux_kind(group, kind);
        if located.is_empty() && !not_flux {
            // Nothing the catalog knows: a chart whose name or
            // address matches, probably.
            located = self.providers.probable(group);
        }
        let candidates = if not_flux {
            Vec::new()
        } else {
            self.unchecked_candidates(tier, group, located.is_empty())
        };
        for t in candidates {
            located.push(crate::provenance::Provider {
                group: group.to_string(),
                kind: None,
                scope: None,
                provenance: Provenance::Unchecked { tier: t.clone() },
            });
        }
        located
    }

    /// The tiers that were not checked that may provide `group` to
    /// `tier`: the plausible ones, or, when nothing is located
    /// (`none_located`) and none is plausible, every one of them, the
    /// likeliest first.
    fn unchecked_candidates(&self, tier: &Tier, group: &str, none_located: bool) -> Vec<&TierId> {
        // Tiers that were not checked whose name or source
        // matches the group: they may well provide it (a
        // `crds-<operator>` Kustomization of an upstream repo).
        // The likeliest first (`external-secrets` before
        // `external-dns-cloudflare` for external-secrets.io).
        let mut plausible: Vec<&(TierId, Option<String>)> = self
            .unchecked
            .iter()
            .filter(|(t, url)| crate::provenance::chart::plausible(&t.name, url.as_deref(), group))
            .collect();
        plausible
            .sort_by_key(|(t, url)| std::cmp::Reverse(relevance(&t.name, url.as_deref(), group)));
        let plausible: Vec<&TierId> = plausible.into_iter().map(|(t, _)| t).collect();
        // Nothing at all: any tier that was not checked may, the
        // likeliest first.
        // A CRD tier that was not checked (`prometheus-crd`,
        // built from a remote base) and is applied before this
        // one may provide what a same-tier chart cannot.
        let plausible: Vec<&TierId> = plausible
            .into_iter()
            .chain(self.unchecked.iter().map(|(t, _)| t).filter(|t| {
                t.name.contains("crd") && self.order.applied_before(&tier.id).contains(t)
            }))
            .collect();
        if none_located && plausible.is_empty() {
            // Not a Kustomization this tier applies itself: nothing names
            // it as the provider, and it could not be one in time.
            let mut all: Vec<&(TierId, Option<String>)> = self
                .unchecked
                .iter()
                .filter(|(t, _)| !self.cluster.applies(&tier.id, t))
                .collect();
            all.sort_by_key(|(t, url)| {
                std::cmp::Reverse(relevance(&t.name, url.as_deref(), group))
            });
            all.into_iter().map(|(t, _)| t).collect()
        } else {
            plausible
        }
    }

    /// An object's namespace, which does not exist at first: the tiers
    /// that render it, and the HelmReleases that create it.
    fn namespace_need(&self, tier: &'m Tier, object: &'m Object, ns: &str) -> Pending<'m> {
        let providers = self.providers;
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
                level: Level::Runtime(Box::new(super::supplier::Runtime {
                    how: crate::provenance::RuntimeHow::Chart {
                        chart: chart.clone(),
                        probable: false,
                    },
                    trigger: hr.clone(),
                    created: (String::new(), "Namespace".into()),
                    after: self.releases.after(hr),
                })),
                probable: false,
            });
        }
        Pending {
            tier,
            suppliers,
            what: What::Namespace {
                object,
                name: ns.to_string(),
                creators,
            },
            provenances: Vec::new(),
        }
    }

    /// A reference's target, unless nothing needs to supply it: a name
    /// the tool cannot know, a SOPS key held only encrypted, an object
    /// created before Flux, a target left alone.
    fn reference_need(
        &self,
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
        if reference.via == "spec.decryption.secretRef" && self.index.encrypted(&reference) {
            return None;
        }
        // Applied before Flux (a bootstrap script, Terraform, declared): there
        // on the cold start, whoever renders it later.
        if (self.outside)(&reference.target()) {
            return None;
        }
        let targets = self.index.get(&reference);
        // Not defined in the repository: left alone, unless a missing target
        // fails the referrer and nothing before Flux creates it either. What
        // a Kustomization reads before it builds (its source, its SOPS key) is
        // kept, unmet, for the strict cold start ([`simulate::Mode::Strict`]): the live
        // model takes it as created outside the repository.
        if targets.is_empty()
            && ((self.outside)(&reference.target()) || (!reference.required && object.is_some()))
        {
            return None;
        }
        Some(Pending {
            tier,
            suppliers: targets
                .iter()
                .map(|(t, _)| Supplier {
                    tier: t.clone(),
                    // Made by a controller from an object of `t`: once
                    // what it needs first exists too.
                    level: match self.index.made_after(&reference, t) {
                        Some((from, after)) => {
                            Level::Made(Box::new(super::supplier::Made { from, after }))
                        }
                        None => Level::Applied,
                    },
                    probable: false,
                })
                .collect(),
            what: What::Reference {
                object,
                reference: Box::new(reference),
                targets,
            },
            provenances: Vec::new(),
        })
    }
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
            level: Level::Runtime(Box::new(super::supplier::Runtime {
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
/// Hashed, and borrowed from the cluster: a platform has hundreds of
/// thousands of objects whose keys share long prefixes, and nothing
/// iterates this map in order.
struct ObjectIndex<'m>(
    HashMap<ObjectKey<'m>, Found<'m>>,
    /// Objects written SOPS-encrypted (some copy of them).
    HashSet<ObjectKey<'m>>,
    /// What a controller makes → the objects it is made from, with their
    /// tier ([`references::produced`]).
    HashMap<ObjectKey<'m>, Vec<(&'m TierId, &'m Object)>>,
    /// Stores and issuers, for what they need in turn.
    HashMap<ObjectKey<'m>, Vec<&'m Object>>,
);

/// (group, kind, namespace, name): borrowed from an object, or owned for
/// what a controller makes of one ([`references::produced`]).
type ObjectKey<'m> = (
    Cow<'m, str>,
    Cow<'m, str>,
    Option<Cow<'m, str>>,
    Cow<'m, str>,
);

/// The tiers that render an object, with where it is written.
type Found<'m> = Vec<(&'m TierId, Option<&'m crate::model::Span>)>;

impl<'m> ObjectIndex<'m> {
    fn of(cluster: &'m Cluster) -> ObjectIndex<'m> {
        let count = cluster.local_tiers().map(|t| t.objects().len()).sum();
        let mut map: HashMap<ObjectKey<'m>, Found<'m>> = HashMap::with_capacity(count);
        let mut encrypted = HashSet::new();
        let mut makers: HashMap<ObjectKey<'m>, Vec<(&'m TierId, &'m Object)>> = HashMap::new();
        let mut stores: HashMap<ObjectKey<'m>, Vec<&'m Object>> = HashMap::new();
        for tier in cluster.local_tiers() {
            for o in tier.objects() {
                let id = &o.id;
                let key: ObjectKey<'m> = (
                    Cow::Borrowed(id.group.as_str()),
                    Cow::Borrowed(id.kind.as_str()),
                    id.namespace.as_deref().map(Cow::Borrowed),
                    Cow::Borrowed(id.name.as_str()),
                );
                if crate::model::is_sops_encrypted(&o.body) {
                    encrypted.insert(key.clone());
                }
                if matches!(
                    id.kind.as_str(),
                    "SecretStore" | "ClusterSecretStore" | "Issuer" | "ClusterIssuer"
                ) {
                    stores.entry(key.clone()).or_default().push(o);
                }
                map.entry(key)
                    .or_default()
                    .push((&tier.id, o.source.as_ref()));
                // What its controller makes of it, applied with it.
                for (group, kind, namespace, name) in references::produced(o) {
                    let key = (
                        Cow::Owned(group),
                        Cow::Owned(kind),
                        namespace.map(Cow::Owned),
                        Cow::Owned(name),
                    );
                    makers.entry(key.clone()).or_default().push((&tier.id, o));
                    let entry = map.entry(key).or_default();
                    if !entry.iter().any(|(t, _)| **t == tier.id) {
                        entry.push((&tier.id, o.source.as_ref()));
                    }
                }
            }
        }
        ObjectIndex(map, encrypted, makers, stores)
    }

    /// The tiers a target made in `tier` (by a controller, from an object
    /// of `tier`) waits for: those that apply what its maker needs first
    /// (the store, its credentials, the issuer), two levels deep; `None`
    /// when `tier` applies the target itself.
    fn made_after(&self, r: &Reference, tier: &TierId) -> Option<(ObjectId, Vec<TierId>)> {
        let makers: &HashMap<ObjectKey<'_>, Vec<(&TierId, &Object)>> = &self.2;
        let found = makers.get(&key(r, r.namespace.as_deref())).or_else(|| {
            r.namespace
                .as_ref()
                .and_then(|_| makers.get(&key(r, Some("*"))))
        })?;
        let (_, maker) = found.iter().find(|(t, _)| *t == tier)?;
        let mut after: Vec<TierId> = Vec::new();
        let mut queue: Vec<(made::Prerequisite, usize)> = made::prerequisites(maker)
            .into_iter()
            .map(|p| (p, 0))
            .collect();
        let map: &HashMap<ObjectKey<'_>, Found<'_>> = &self.0;
        let stores: &HashMap<ObjectKey<'_>, Vec<&Object>> = &self.3;
        while let Some(((group, kind, ns, name), depth)) = queue.pop() {
            let k: ObjectKey<'_> = (
                Cow::Borrowed(group.as_str()),
                Cow::Borrowed(kind.as_str()),
                ns.as_deref().map(Cow::Borrowed),
                Cow::Borrowed(name.as_str()),
            );
            for (t, _) in map.get(&k).map(Vec::as_slice).unwrap_or_default() {
                if *t != tier && !after.contains(*t) {
                    after.push((*t).clone());
                }
            }
            // A store's credentials, an issuer's Secret.
            if depth == 0 {
                for o in stores.get(&k).map(Vec::as_slice).unwrap_or_default() {
                    queue.extend(made::prerequisites(o).into_iter().map(|p| (p, 1)));
                }
            }
        }
        Some((maker.id.clone(), after))
    }

    /// Whether the repository holds the object only SOPS-encrypted.
    fn encrypted(&self, r: &Reference) -> bool {
        // Covariant: borrowed for as long as the reference, the set takes
        // keys that borrow from it.
        let set: &HashSet<ObjectKey<'_>> = &self.1;
        set.contains(&key(r, r.namespace.as_deref()))
    }

    /// The tiers that render the reference's target, with where.
    fn get(&self, r: &Reference) -> Vec<(TierId, Option<crate::model::Span>)> {
        let map: &HashMap<ObjectKey<'_>, Found<'_>> = &self.0;
        map.get(&key(r, r.namespace.as_deref()))
            // Written into any namespace (a ClusterExternalSecret's).
            .or_else(|| {
                r.namespace
                    .as_ref()
                    .and_then(|_| map.get(&key(r, Some("*"))))
            })
            .map(|found| {
                found
                    .iter()
                    .map(|(t, at)| ((*t).clone(), at.cloned()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The key of a reference's target, in namespace `ns`.
fn key<'a>(r: &'a Reference, ns: Option<&'a str>) -> ObjectKey<'a> {
    (
        Cow::Borrowed(r.group),
        Cow::Borrowed(r.kind),
        ns.map(Cow::Borrowed),
        Cow::Borrowed(r.name.as_str()),
    )
}
