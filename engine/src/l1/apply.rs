//! The apply mode's plan (`L1_MODE=apply`, for clusters where Flux cannot
//! be installed): what the `l1-cluster` harness applies itself, in which
//! order and stages, imitating kustomize-controller, and what it asserts.
//!
//! * **Tiers**: `l1.tiers` in conformance.yaml, or by default the tiers that
//!   hold a runtime-catalog trigger (a CDI or KubeVirt CR, a Crossplane XRD,
//!   an operator Deployment), their ancestors, and the tiers that use the
//!   kinds those triggers create. The entry tier (Flux itself) is left out:
//!   L1 applies tiers the way kustomize-controller would, it does not run
//!   Flux.
//! * **Objects**: those a bare k3s can take: built-in kinds, kinds whose CRD
//!   is in git, and kinds a runtime trigger creates. Objects that need Flux's
//!   or a chart's CRDs (HelmRelease, a chart's custom resources, …) are
//!   listed as skipped, with the reason.
//! * **Stages**: Flux's staged apply: CRDs, Namespaces and ClusterRoles;
//!   then `*Class` kinds; then everything else. Each stage is dry-run before
//!   it is applied.
//! * **Assertions**: every selected tier applies cleanly in model order; each
//!   runtime trigger, once healthy, makes the CRDs the catalog lists
//!   Established; and, before the trigger's tier is applied, a second-order
//!   object is rejected with "no matches for kind", as the model predicts.

use std::collections::BTreeSet;

use crate::convergence::ClusterAnalysis;
use crate::model::{Entry, Object, ObjectId, TierId};
use crate::provenance::{Catalog, crd_name};
use crate::provenance::{Provenance, RuntimeHow};

/// The plan for one cluster.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The cluster's name.
    pub cluster: String,
    /// Tiers to apply, in model order.
    pub tiers: Vec<PlannedTier>,
    /// What the run asserts: each tier applies, then the runtime checks.
    pub assertions: Vec<Assertion>,
    /// How the tiers were chosen.
    pub selection: String,
}

/// One tier to apply.
#[derive(Debug, Clone)]
pub struct PlannedTier {
    /// The tier's Flux Kustomization.
    pub id: TierId,
    /// The tier's name in reports (see `Cluster::tier_label`).
    pub label: String,
    /// Whether the tier sets `spec.wait`: its objects must become healthy once applied.
    pub wait: bool,
    /// The objects to apply, by stage, in order.
    pub stages: Vec<Stage>,
    /// Objects left out, and why.
    pub skipped: Vec<(ObjectId, String)>,
}

/// One stage of Flux's staged apply.
#[derive(Debug, Clone)]
pub struct Stage {
    /// `crds-namespaces-clusterroles`, `classes` or `rest`.
    pub name: &'static str,
    /// The objects applied in this stage.
    pub objects: Vec<Object>,
}

/// What a run asserts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assertion {
    /// Every stage of the tier dry-runs and applies, and its objects become
    /// healthy.
    TierApplies {
        /// The tier's label.
        tier: String,
    },
    /// Once `trigger` is healthy, these CRDs are Established.
    RuntimeCrds {
        /// The label of the tier holding the trigger.
        tier: String,
        /// The runtime-catalog trigger (a CR, an XRD or an operator Deployment).
        trigger: ObjectId,
        /// The operator the catalog names for the trigger (`crossplane` for an XRD).
        operator: String,
        /// The names of the CRDs the catalog says the operator creates.
        crds: Vec<String>,
    },
    /// Before `tier` is applied, a dry-run of `object` fails with "no matches
    /// for kind": its CRD does not exist until the trigger is reconciled.
    SecondOrderRejected {
        /// The label of the tier holding the trigger.
        tier: String,
        /// A repository object of a kind the trigger creates.
        object: ObjectId,
        /// The name of the CRD for `object`'s kind.
        crd: String,
    },
}

impl Assertion {
    /// The trial name suffix (`<cluster>::l1::<this>`).
    pub fn name(&self) -> String {
        match self {
            Assertion::TierApplies { tier } => format!("applies::{tier}"),
            Assertion::RuntimeCrds { trigger, .. } => {
                format!("runtime-crds::{}/{}", trigger.kind, trigger.name)
            }
            Assertion::SecondOrderRejected { object, .. } => {
                format!("second-order-rejected::{}/{}", object.kind, object.name)
            }
        }
    }
}

/// Partitions objects into Flux's apply stages (empty stages are dropped).
pub fn stages(objects: &[Object]) -> Vec<Stage> {
    let mut first = Vec::new();
    let mut classes = Vec::new();
    let mut rest = Vec::new();
    for o in objects {
        let k = o.id.kind.as_str();
        if matches!(k, "CustomResourceDefinition" | "Namespace" | "ClusterRole") {
            first.push(o.clone());
        } else if k.ends_with("Class") {
            classes.push(o.clone());
        } else {
            rest.push(o.clone());
        }
    }
    [
        ("crds-namespaces-clusterroles", first),
        ("classes", classes),
        ("rest", rest),
    ]
    .into_iter()
    .filter(|(_, objects)| !objects.is_empty())
    .map(|(name, objects)| Stage { name, objects })
    .collect()
}

/// Plans the L1 run of one cluster.
pub fn plan(a: &ClusterAnalysis, l1: &super::L1, catalog: &Catalog) -> Plan {
    let cluster = a.cluster;
    let triggered = triggers(a);
    let (selected, selection) = select(a, l1, &triggered);
    let tiers: Vec<PlannedTier> = a
        .order
        .sequence
        .iter()
        .filter(|id| selected.contains(id))
        .map(|id| planned_tier(a, id))
        .collect();
    let assertions = assertions(a, catalog, &tiers, &triggered, &selected);
    Plan {
        cluster: cluster.name.clone(),
        tiers,
        assertions,
        selection,
    }
}

/// A runtime trigger: the tier that holds it, the trigger, and the
/// operator the catalog names for it.
type Trigger<'a> = (&'a TierId, &'a ObjectId, String);

/// Runtime triggers (not charts: a bare k3s has no helm-controller).
fn triggers<'a>(a: &'a ClusterAnalysis) -> Vec<Trigger<'a>> {
    a.uses
        .iter()
        .filter_map(|u| match &u.provenance {
            Provenance::Runtime {
                how: RuntimeHow::Operator { operator, .. },
                trigger,
                tier,
                ..
            } => Some((tier, trigger, operator.clone())),
            Provenance::Runtime {
                how: RuntimeHow::Crossplane,
                trigger,
                tier,
                ..
            } => Some((tier, trigger, "crossplane".to_string())),
            Provenance::Runtime {
                how: RuntimeHow::Chart { .. } | RuntimeHow::Package { .. },
                ..
            }
            | Provenance::BuiltIn
            | Provenance::Flux
            | Provenance::Preinstalled
            | Provenance::Bootstrap { .. }
            | Provenance::Crd { .. }
            | Provenance::Unchecked { .. }
            | Provenance::Unknown => None,
        })
        .collect()
}

/// The tiers to apply, and how they were chosen: `l1.tiers`, or by
/// default the triggers' tiers, their ancestors and the tiers using what
/// they create, the Flux entry left out.
fn select(
    a: &ClusterAnalysis,
    l1: &super::L1,
    triggered: &[Trigger],
) -> (BTreeSet<TierId>, String) {
    let cluster = a.cluster;
    let entry = match &cluster.entry {
        Entry::SyncKustomization { tier, .. } => Some(tier.clone()),
        Entry::Directory { .. } => Some(TierId::new("flux-system", "flux-system")),
    };
    let configured: Vec<String> = l1.tiers.clone();
    if !configured.is_empty() {
        return (
            cluster
                .tiers
                .keys()
                .filter(|id| configured.contains(&id.name))
                .cloned()
                .collect(),
            "l1.tiers in conformance.yaml".into(),
        );
    }
    let mut set = BTreeSet::new();
    for (trigger_tier, _, _) in triggered {
        set.insert((*trigger_tier).clone());
        set.extend(a.order.applied_before(trigger_tier).iter().cloned());
    }
    for u in &a.uses {
        if matches!(
            &u.provenance,
            Provenance::Runtime {
                how: RuntimeHow::Operator { .. } | RuntimeHow::Crossplane,
                ..
            }
        ) {
            set.insert(u.tier.id.clone());
        }
    }
    if let Some(e) = &entry {
        set.remove(e);
    }
    (
        set,
        "default: tiers holding runtime-catalog triggers, their ancestors, and the tiers using the kinds they create (the Flux entry excluded)".into(),
    )
}

/// One selected tier: the objects a bare k3s can take, by stage, and the
/// others with why they are left out.
fn planned_tier(a: &ClusterAnalysis, id: &TierId) -> PlannedTier {
    let cluster = a.cluster;
    let tier = &cluster.tiers[id];
    let mut keep = Vec::new();
    let mut skipped = Vec::new();
    for u in a.uses.iter().filter(|u| u.tier.id == *id) {
        match skip_reason(&u.provenance) {
            None => keep.push(u.object.clone()),
            Some(r) => skipped.push((u.object.id.clone(), r)),
        }
    }
    PlannedTier {
        id: id.clone(),
        label: cluster.tier_label(id),
        wait: tier.wait,
        stages: stages(&keep),
        skipped,
    }
}

/// Why an object whose kind comes from `provenance` is not applied on a
/// bare k3s; `None` when it is.
fn skip_reason(provenance: &Provenance) -> Option<String> {
    match provenance {
        Provenance::BuiltIn | Provenance::Crd { .. } => None,
        Provenance::Runtime {
            how: RuntimeHow::Operator { .. } | RuntimeHow::Crossplane,
            ..
        } => None,
        Provenance::Runtime {
            how: RuntimeHow::Package { package },
            ..
        } => Some(format!(
            "its CRD comes from Crossplane package {package}, and a bare k3s runs no Crossplane"
        )),
        Provenance::Runtime {
            how: RuntimeHow::Chart { chart, .. },
            ..
        } => Some(format!(
            "its CRD comes from chart {chart}, and a bare k3s runs no helm-controller"
        )),
        Provenance::Flux => {
            Some("a Flux kind; L1 applies tiers itself and does not run Flux".to_string())
        }
        Provenance::Preinstalled => {
            Some("its CRD is installed outside Flux (catalog.preinstalled)".to_string())
        }
        Provenance::Bootstrap { at, via } => Some(format!(
            "its CRD is installed before Flux by the repository's bootstrap ({via}, {at})"
        )),
        Provenance::Unchecked { .. } | Provenance::Unknown => {
            Some("no known source for its CRD".to_string())
        }
    }
}

/// What the run asserts: each planned tier applies; then, for each
/// trigger of a selected tier (once), the CRDs its operator creates and
/// one repository object of those kinds rejected before it.
fn assertions(
    a: &ClusterAnalysis,
    catalog: &Catalog,
    tiers: &[PlannedTier],
    triggered: &[Trigger],
    selected: &BTreeSet<TierId>,
) -> Vec<Assertion> {
    let cluster = a.cluster;
    let mut assertions: Vec<Assertion> = tiers
        .iter()
        .map(|t| Assertion::TierApplies {
            tier: t.label.clone(),
        })
        .collect();
    let mut seen = BTreeSet::new();
    for (tier, trigger, operator) in triggered {
        if !selected.contains(*tier) || !seen.insert((*trigger).clone()) {
            continue;
        }
        let label = cluster.tier_label(tier);
        let crds: Vec<String> = catalog
            .runtime
            .iter()
            .filter(|e| e.operator == *operator)
            .flat_map(|e| e.creates.iter())
            .flat_map(|c| {
                c.kinds
                    .iter()
                    .filter(|k| *k != "*")
                    .map(move |k| crd_name(&c.group, k))
            })
            .collect();
        if !crds.is_empty() {
            assertions.push(Assertion::RuntimeCrds {
                tier: label.clone(),
                trigger: (*trigger).clone(),
                operator: operator.clone(),
                crds,
            });
        }
        // One object of a kind this trigger creates, from the repository.
        let consumer = a.uses.iter().find(
            |u| matches!(&u.provenance, Provenance::Runtime { trigger: t, .. } if t == *trigger),
        );
        if let Some(u) = consumer {
            assertions.push(Assertion::SecondOrderRejected {
                tier: label.clone(),
                object: u.object.id.clone(),
                crd: crd_name(&u.object.id.group, &u.object.id.kind),
            });
        }
    }
    assertions
}

/// The plan as text (`conformance l1-plan`).
pub fn render(plan: &Plan, image: &(String, String)) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cluster {} (image {}:{})",
        plan.cluster, image.0, image.1
    );
    let _ = writeln!(out, "tiers ({}):", plan.selection);
    for t in &plan.tiers {
        let _ = writeln!(
            out,
            "  {}{}",
            t.label,
            if t.wait { " (wait: true)" } else { "" }
        );
        for s in &t.stages {
            let names: Vec<String> = s.objects.iter().map(|o| o.id.to_string()).collect();
            let _ = writeln!(out, "    stage {}: {}", s.name, names.join(", "));
        }
        for (o, why) in &t.skipped {
            let _ = writeln!(out, "    skipped {o}: {why}");
        }
    }
    let _ = writeln!(out, "assertions:");
    for a in &plan.assertions {
        let detail = match a {
            Assertion::TierApplies { tier } => {
                format!("{tier} dry-runs and applies stage by stage, and becomes healthy")
            }
            Assertion::RuntimeCrds {
                trigger,
                operator,
                crds,
                ..
            } => {
                format!(
                    "once {}/{} is healthy, {operator} has created {}",
                    trigger.kind,
                    trigger.name,
                    crds.join(", ")
                )
            }
            Assertion::SecondOrderRejected { tier, object, crd } => {
                format!(
                    "before {tier} is applied, a dry-run of {object} fails: no matches for kind ({crd} does not exist yet)"
                )
            }
        };
        let _ = writeln!(out, "  {}::l1::{}: {detail}", plan.cluster, a.name());
    }
    out
}
