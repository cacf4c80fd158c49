//! When is an object healthy, as far as a tier's Ready condition is
//! concerned: the health checks kustomize-controller runs (`checkHealth` in
//! kustomization_controller.go) and what they can see (fluxcd/cli-utils
//! kstatus `status.Compute`, fluxcd/pkg `runtime/cel` status readers).
//!
//! * With `spec.wait: true` every applied object is health-checked and
//!   `spec.healthChecks` is ignored; otherwise only the objects a
//!   `healthChecks` entry names (any object, applied by this tier or not,
//!   including a CustomResourceDefinition, healthy once Established).
//! * kstatus reads a custom resource with neither a `Ready` condition nor
//!   `status.observedGeneration` as Current as soon as it exists (CDI,
//!   KubeVirt, a Crossplane XRD): a check on it proves nothing about its
//!   operator.
//! * A `spec.healthCheckExprs` entry (CEL) for the object's group and kind
//!   overrides kstatus for it (the CEL reader is consulted first).

use crate::model::{ObjectId, Tier};
use crate::provenance::crd_name;

/// What in a tier's spec makes its Ready wait for an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// `spec.wait: true`: every applied object is checked.
    Wait,
    /// A `spec.healthChecks` entry names the object.
    HealthCheck,
}

/// How a tier's Ready condition covers a runtime trigger's CRDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Ready waits until the CRDs exist: a `healthChecks` entry names the
    /// CRD, or the check on the trigger is one that sees its operator
    /// (kstatus can read it, or a `healthCheckExprs` entry covers it).
    Proven,
    /// Ready waits for the trigger, but kstatus reads it as Current as soon
    /// as it exists and no `healthCheckExprs` entry covers it.
    Unreadable(Check),
    /// Ready does not wait for the trigger at all.
    None,
}

/// Whether `tier`'s Ready proves that the CRD of `(group, kind)`, created
/// once `trigger` is reconciled, exists. `kstatus_reads`: whether kstatus
/// can tell the trigger was reconciled.
pub fn gate(tier: &Tier, trigger: &ObjectId, created: (&str, &str), kstatus_reads: bool) -> Gate {
    let crd = crd_name(created.0, created.1);
    let check = match check(tier, trigger) {
        Some(c) => c,
        None if !tier.wait
            && names(
                tier,
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                None,
                &crd,
            ) =>
        {
            return Gate::Proven;
        }
        None => return Gate::None,
    };
    if check == Check::HealthCheck
        && names(
            tier,
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            None,
            &crd,
        )
    {
        return Gate::Proven;
    }
    if kstatus_reads || has_expr(tier, &trigger.group, &trigger.kind) {
        Gate::Proven
    } else {
        Gate::Unreadable(check)
    }
}

/// How `tier`'s Ready waits for `object`, if it does.
pub fn check(tier: &Tier, object: &ObjectId) -> Option<Check> {
    if tier.wait {
        return Some(Check::Wait);
    }
    names(
        tier,
        &object.group,
        &object.kind,
        object.namespace.as_deref(),
        &object.name,
    )
    .then_some(Check::HealthCheck)
}

/// Whether a `spec.healthChecks` entry names this object. An entry's empty
/// apiVersion defaults to `apps/v1` (`ReferenceToObjMetadataSet`); its
/// namespace, when left out, matches any (cluster-scoped objects have none).
pub(crate) fn names(
    tier: &Tier,
    group: &str,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
) -> bool {
    tier.spec
        .path(&["spec", "healthChecks"])
        .map(|n| n.as_seq())
        .unwrap_or_default()
        .iter()
        .any(|entry| {
            let api = entry
                .str_at(&["apiVersion"])
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| "apps/v1".into());
            let entry_group = api.rsplit_once('/').map_or("", |(g, _)| g);
            entry_group == group
                && entry.str_at(&["kind"]).as_deref() == Some(kind)
                && entry.str_at(&["name"]).as_deref() == Some(name)
                && entry
                    .str_at(&["namespace"])
                    .filter(|ns| !ns.is_empty())
                    .is_none_or(|ns| Some(ns.as_str()) == namespace)
        })
}

/// Whether a `spec.healthCheckExprs` entry covers the group and kind: keyed
/// by GroupKind (the version is ignored), an entry without `kind` covering
/// the whole group (`runtime/cel` `NewStatusReader`).
pub(crate) fn has_expr(tier: &Tier, group: &str, kind: &str) -> bool {
    tier.spec
        .path(&["spec", "healthCheckExprs"])
        .map(|n| n.as_seq())
        .unwrap_or_default()
        .iter()
        .any(|entry| {
            let api = entry.str_at(&["apiVersion"]).unwrap_or_default();
            let entry_group = api.rsplit_once('/').map_or("", |(g, _)| g);
            entry_group == group
                && entry
                    .str_at(&["kind"])
                    .filter(|k| !k.is_empty())
                    .is_none_or(|k| k == kind)
                && entry.get("current").is_some()
        })
}
