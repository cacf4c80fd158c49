//! When is an object healthy, as far as a tier's Ready condition is
//! concerned: the shape of kube-runtime's `wait::Condition`, for the health
//! checks kustomize-controller runs (`checkHealth` in
//! kustomization_controller.go).
//!
//! With `spec.wait: true` every applied object is health-checked; otherwise
//! only the objects a `spec.healthChecks` entry names. A tier whose Ready
//! condition includes an object's health lets its dependents rely on that
//! object being reconciled.

use crate::model::{ObjectId, Tier};

/// How a tier's Ready condition covers an object, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// `spec.wait: true`: every applied object is checked.
    Wait,
    /// A `spec.healthChecks` entry names the object.
    HealthCheck,
}

/// Whether `tier` gates its Ready condition on the health of `object`.
pub fn gate(tier: &Tier, object: &ObjectId) -> Option<Gate> {
    if tier.wait {
        return Some(Gate::Wait);
    }
    tier.spec
        .path(&["spec", "healthChecks"])
        .map(|n| n.as_seq())
        .unwrap_or_default()
        .iter()
        .any(|check| {
            check.str_at(&["kind"]).as_deref() == Some(object.kind.as_str())
                && check.str_at(&["name"]).as_deref() == Some(object.name.as_str())
                && check
                    .str_at(&["namespace"])
                    .is_none_or(|ns| Some(ns.as_str()) == object.namespace.as_deref())
        })
        .then_some(Gate::HealthCheck)
}
