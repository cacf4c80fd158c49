//! Rendering: turning a Flux Kustomization into the objects Flux would apply.
//!
//! Two layers. [`Kustomize`] is the kustomize build itself, behind one trait
//! so backends can be swapped (today: the external `kustomize` or `kubectl
//! kustomize` program, [`external`]). [`flux`] adds what kustomize-controller
//! does around that build: the generated `kustomization.yaml` for
//! directories without one, `spec.patches`, `spec.components`,
//! `spec.targetNamespace`, `spec.images`, name prefix/suffix, then per object
//! the required fields, `spec.commonMetadata` and the owner labels.
//! Rendering never touches the network.

pub mod external;
pub mod flux;

use std::path::Path;

use crate::yaml::Node;

/// A kustomize build backend.
pub trait Kustomize: Sync + std::fmt::Debug {
    /// A short name for reports (`kubectl kustomize`, `kustomize`).
    fn name(&self) -> &str;

    /// Builds the kustomization in `dir` with load restrictions off and
    /// plugins disabled, returning the objects in build order. `Err` carries
    /// the backend's own message.
    fn build(&self, dir: &Path) -> Result<Vec<Node>, String>;
}
