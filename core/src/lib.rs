//! The leaf of flux-conformance: what every other layer reads and nothing
//! here reads back.
//!
//! * [`yaml`]: YAML with the line of every node, read as go-yaml (which
//!   kustomize and Flux use) reads it, under budgets;
//! * [`repo`]: the repository index, every path listed once (git's list in
//!   a checkout), every YAML file loaded once, never a read outside the
//!   root, and the source artifact Flux builds from;
//! * [`model`]: plain data of the result, clusters, tiers, rendered objects
//!   with their places;
//! * [`builtin`]: Kubernetes' built-in kinds; [`versions`]: version files;
//! * [`exec`]: the policy for every program the tool starts (git, an
//!   external kustomize), so no repository content chooses one;
//! * [`config_error`]: the error of conformance.yaml, for every section's
//!   reader; [`progress`] and [`stats`]: what a run says about itself.
//!
//! The crates above it ([`conformance_render`], the engine, the command)
//! re-export these modules, so `crate::yaml` means the same in each.

pub mod builtin;
pub mod chart;
pub mod config_error;
pub mod exec;
pub mod model;
pub mod progress;
pub mod repo;
pub mod stats;
pub mod versions;
pub mod yaml;
