//! Flux's build of one Kustomization, for flux-conformance.
//!
//! * [`render`]: kustomize-controller's steps (the kustomization it writes
//!   or generates, `spec.patches`, components, images, target namespace)
//!   around a kustomize backend, the native renderer (held to `kubectl
//!   kustomize` by `tests/differential.rs`) or the external program;
//! * [`remote`]: remote bases fetched with `--fetch-remote`, into a cache,
//!   under [`exec`]'s limits;
//! * [`postbuild`]: `postBuild` substitution as kustomize-controller does
//!   it, and its audit;
//! * [`chart`]: what a Helm chart's files install (CRDs, namespaces).
//!
//! Depends on the leaf ([`conformance_core`]) only; its modules are
//! re-exported here, so `crate::yaml` and friends read as before.

pub use conformance_core::{
    builtin, config_error, exec, model, progress, repo, stats, versions, yaml,
};

pub mod chart;
pub mod postbuild;
pub mod remote;
pub mod render;
