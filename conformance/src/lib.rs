//! Conformance checks for Flux GitOps repositories.
//!
//! Platform teams run clusters from a git repository that Flux reconciles:
//! tiers of Flux `Kustomization`s ordered by `dependsOn`, gated by `wait`,
//! pruned, substituted, decrypted, one overlay per cluster. The outages that
//! hurt come from properties of the whole graph that no single file shows.
//! This crate models the repository the way kustomize-controller sees it and
//! turns each such property into a rule with a stable id.
//!
//! The data flow is one-directional:
//!
//! * [`repo`] indexes every YAML file ([`yaml`] keeps each node's line);
//! * [`discover`] finds the clusters and walks their Kustomizations, building
//!   each with [`render`] (Flux's build steps around a kustomize backend);
//! * [`postbuild`] applies Flux's variable substitution and audits it;
//! * [`model`] is the result: clusters, tiers, rendered objects;
//!   [`graph`] is the tier graph with its canonical text;
//! * [`convergence`] walks each cluster from an empty API server, deciding
//!   where every kind comes from ([`provenance`]) and when it exists;
//! * [`rules`] read the model (and [`config`]) and return findings;
//! * [`report`] prints findings for people (`human`) and tools (`json`).
//!
//! ```no_run
//! use conformance::check::{check, CheckOptions};
//!
//! let outcome = check(&CheckOptions {
//!     repo: "fixtures/reference-platform".into(),
//!     clusters: vec![],
//!     renderer: None,
//!     base: None,
//! })?;
//! for finding in &outcome.findings {
//!     println!("{} {}: {}", finding.rule, finding.cluster, finding.message);
//! }
//! # Ok::<(), conformance::check::CheckError>(())
//! ```

pub mod base;
pub mod check;
pub mod config;
pub mod convergence;
pub mod discover;
pub mod graph;
pub mod l1;
pub mod model;
pub mod postbuild;
pub mod provenance;
pub mod render;
pub mod repo;
pub mod report;
pub mod rules;
pub mod session;
pub mod yaml;
