//! Suppliers: the tiers that can serve a need, and how (applied in stage 1,
//! with the last stage, or created at runtime by a controller). A leaf of
//! the convergence model: the simulation and the verdicts both read it.

use crate::model::{ObjectId, TierId};
use crate::provenance::RuntimeHow;

/// When a supplier's object serves the need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    /// Applied in stage 1 (a CRD, a Namespace): there as soon as the
    /// supplier's reconcile starts, even if a later stage fails; and usable
    /// by the supplier's own later stages.
    Stage1,
    /// The object is applied with the supplier's last stage.
    Applied,
    /// A controller creates the CRD once it reconciles the trigger, applied
    /// with the supplier's last stage; never in time for the supplier itself.
    Runtime(Box<Runtime>),
    /// A controller makes the object (an ExternalSecret's Secret) from one
    /// the supplier applies, once what it needs first (the store, its
    /// credentials) exists: applied with the last stage, and the tiers of
    /// those prerequisites applied too.
    Made(Box<Made>),
}

/// What a made object waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    /// The object it is made from (`ExternalSecret/flux-system/x`).
    pub from: ObjectId,
    /// Tiers that apply its prerequisites (other than the supplier).
    pub after: Vec<TierId>,
}

/// What a runtime supplier's controller needs to create a kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    /// Which controller creates it: helm-controller for a chart, an operator, or Crossplane.
    pub how: RuntimeHow,
    /// The object whose reconcile creates it (a HelmRelease, an operator's trigger, an XRD).
    pub trigger: ObjectId,
    /// The created kind (group, kind), for the health gate.
    pub created: (String, String),
    /// Tiers of the HelmReleases the trigger (a HelmRelease) depends on:
    /// helm-controller installs it only once they are Ready.
    pub after: Vec<TierId>,
}

/// One tier that can serve a need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Supplier {
    /// The tier that serves it.
    pub tier: TierId,
    /// When the tier's object serves the need.
    pub level: Level,
    /// Only plausibly a supplier (a chart the catalog does not know, a tier
    /// that was not checked, matched by name): never the ground for an
    /// error.
    pub probable: bool,
}
