//! The engine of flux-conformance: from a repository to findings.
//!
//! * [`session`] opens a run once (configuration, renderer, index, model);
//! * [`discover`] finds the clusters' entries and walks their
//!   Kustomizations, building each with [`render`];
//! * [`provenance`] says where every kind comes from (built in, Flux, a CRD
//!   in git, a chart, an operator, the bootstrap), one source per file;
//! * [`convergence`] walks each cluster from an empty API server (order,
//!   health, verdicts); [`graph`] is the tier graph and its canonical text;
//! * [`rules`] read the model, the configuration ([`config`], each section
//!   beside its rule) and the analyses, and return findings; [`schema`]
//!   holds the schemas they validate against;
//! * [`check`] is the front door (a session, every rule, the outcome);
//!   [`base`] reads a previous revision; [`l1`] plans the live-cluster run;
//!   [`fuzzing`] holds the fuzz targets' bodies.
//!
//! Depends on the leaf and the renderer ([`conformance_core`],
//! [`conformance_render`]), whose modules it re-exports.

pub use conformance_core::{
    builtin, config_error, exec, model, progress, repo, stats, versions, yaml,
};
pub use conformance_render::{chart, postbuild, remote, render};

pub mod base;
pub mod check;
pub mod config;
pub mod convergence;
pub mod discover;
pub mod fuzzing;
pub mod graph;
pub mod l1;
pub mod pipeline;
pub mod provenance;
pub mod rules;
pub mod schema;
pub mod session;
