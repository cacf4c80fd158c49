//! Conformance checks for Flux GitOps repositories.
//!
//! Platform teams run clusters from a git repository that Flux reconciles:
//! tiers of Flux `Kustomization`s ordered by `dependsOn`, gated by `wait`,
//! pruned, substituted, decrypted, one overlay per cluster. The outages that
//! hurt come from properties of the whole graph that no single file shows.
//! This crate models the repository the way kustomize-controller sees it and
//! turns each such property into a rule with a stable id.
//!
//! The data flow is one-directional, and a run resolves it once
//! ([`session`]: configuration, renderer, index, model). Each layer is a
//! crate, so an import cannot run back up: `conformance-core` (yaml, repo,
//! model) ← `conformance-render` (render, remote, postbuild) ←
//! `conformance-engine` (discover, provenance, convergence, rules, session)
//! ← this one (the reports and the `conformance` command), which
//! re-exports every module:
//!
//! * [`repo`] indexes the repository (every YAML file loaded once, with
//!   [`yaml`] keeping each node's line; every other file listed, read under
//!   the same budgets and never outside the root);
//! * [`discover`] finds the clusters' entries and walks their Kustomizations,
//!   building each with [`render`] (Flux's build steps around a kustomize
//!   backend: the native renderer or the external program), and with
//!   `--fetch-remote` the remote bases [`remote`] fetches into a cache;
//! * [`postbuild`] applies Flux's variable substitution and audits it;
//! * [`model`] is the result: clusters, tiers, rendered objects;
//!   [`graph`] is the tier graph with its canonical text;
//! * [`convergence`] walks each cluster from an empty API server (order,
//!   health, verdicts), deciding where every kind comes from
//!   ([`provenance`]: one source per file) and when it exists;
//! * [`rules`] read the model, the configuration ([`config`], each section
//!   beside its rule) and the analyses, and return findings built with one
//!   builder;
//! * [`report`] prints findings for people (`human`) and tools (`json`,
//!   GitHub annotations, JUnit, SARIF), and the `crds` and `substitutions`
//!   audits; [`l1`] plans the live-cluster run; [`base`] reads a previous
//!   revision for the rules that compare.
//!
//! ```no_run
//! use conformance::check::{check, CheckOptions};
//!
//! let outcome = check(&CheckOptions::at("fixtures/reference-platform"))?;
//! for finding in &outcome.findings {
//!     println!("{} {}: {}", finding.rule(), finding.cluster(), finding.message());
//! }
//! # Ok::<(), conformance::check::SessionError>(())
//! ```

pub use conformance_engine::{
    base, builtin, check, config, config_error, convergence, discover, exec, fuzzing, graph, l1,
    model, postbuild, progress, provenance, remote, render, repo, rules, schema, session, stats,
    versions, yaml,
};

pub mod report;
