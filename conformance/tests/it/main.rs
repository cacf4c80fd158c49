//! The integration tests, one binary (as ripgrep's `tests/tests.rs`), one
//! module per area:
//!
//! * `cli`: the command-line contract (exit statuses, JSON, explain, errors);
//! * `discovery`: clusters, entries and tiers found from a repository;
//! * `provenance`: what a repository installs before Flux, and where kinds
//!   come from;
//! * `cold_start`: the convergence model's verdicts and their findings;
//! * `regression`: one test per false positive or miss fixed on a real
//!   repository (each with a small repository of its own, never its files);
//! * `anchors`: finding locations (file, line, related places);
//! * `l1_plan`: what the live-cluster run plans and expects;
//! * `envsubst_props`: property tests of postBuild substitution;
//! * `fuzz_seeds`: the fuzz targets replayed on their committed seeds;
//! * `helmrelease`: HelmRelease inputs as helm-controller reads them;
//! * `hidden`: deadlocks the model did not see (providers a tier applies
//!   itself, secrets made at run time) and severities matched to what
//!   breaks (issue 49);
//! * `hostile_input`: configuration and report paths a repository or a
//!   command line gets wrong or turns against the machine;
//! * `hostile_remote`: no repository content makes git run a program;
//! * `roots`: one error per cause, and premises of absence made
//!   assumptions by steps the bootstrap could not read;
//! * `remote`: remote bases fetched with `--fetch-remote` (a local HTTP
//!   server and a local git repository);
//! * `charts_fetched`: charts read for real (a chart repository and an OCI
//!   registry on 127.0.0.1, a chart in the repository);
//! * `rule_docs`: every rule's documentation in one shape, and the README
//!   table made from the rules;
//! * `layers`: the imports only point down, and no file or function is too
//!   long to read;
//! * `action`: the GitHub Action's scripts (install, comment, verdict),
//!   run with stand-ins for curl, git, cargo and gh;
//! * `workflows`: the GitHub workflows and the action's metadata: current
//!   runner labels, independent release builds, caches saved on failing
//!   runs, no expression pasted into a script.
//!
//! `support` holds the helpers that write small repositories. The corpus
//! and differential tests are separate, harness-less targets
//! (`tests/corpus.rs`, `tests/differential.rs`).

mod action;
mod adoption;
mod anchors;
mod charts_fetched;
mod cli;
mod cold_start;
mod discovery;
mod envsubst_props;
mod fuzz_seeds;
mod helmrelease;
mod hidden;
mod hostile_input;
mod hostile_remote;
mod l1_plan;
mod layers;
mod one_build;
mod provenance;
mod regression;
mod remote;
mod roots;
mod rule_docs;
mod support;
mod verdicts;
mod workflows;
