//! The pipeline: what a run does to a repository, as stages that each take
//! the value the stage before produced and return the next. No stage
//! changes what an earlier one produced: [`substitute`] consumes the
//! [`Built`] model and returns the [`Substituted`] one; [`analyse`] and
//! [`findings`] only borrow.
//!
//! ```text
//! RunOptions
//!   └─ declare ───▶ Declared     conformance.yaml with the command line over it,
//!                                the catalog, the repository index, the renderer
//!   └─ build ─────▶ Built        every cluster discovered and every tier built
//!                                (its places complete), the bootstrap read and
//!                                the clusters one script applies merged
//!   └─ substitute ▶ Substituted  postBuild applied to every tier, once, with the
//!                                variables the bootstrap's webhooks inject; each
//!                                tier's audit
//!   └─ analyse ───▶ rules::Context  every cluster's cold start: order, health,
//!                                verdicts, where each kind comes from
//!   └─ findings ──▶ Vec<Finding> every rule over the context
//! ```
//!
//! One substitution happens inside `build`, and only to find the tiers: a
//! child Kustomization is an object of its parent's output, and its path
//! and name are read after the parent's postBuild, as kustomize-controller
//! reads them ([`crate::postbuild::substitute_early`], called by the
//! walk). The tiers' output is substituted once, here, in [`substitute`].
//!
//! [`crate::session::Session`] runs the first three stages and holds what
//! they produce; the rules ([`crate::check`]) run the last two.

mod analyse;
mod build;
mod charts;
mod declare;
mod discovery;
mod error;
mod sources;
mod substitute;

pub use analyse::{analyse, analysis};
pub use build::{Built, build};
pub use declare::{Declared, RunOptions, declare, declare_base};
pub use error::SessionError;
pub use substitute::{Substituted, substitute};

use crate::rules::{self, Finding};

/// The last stage: every rule over the analysed model.
pub fn findings(cx: &rules::Context) -> Vec<Finding> {
    let started = std::time::Instant::now();
    let findings = rules::run_all(cx);
    crate::stats::stat("rules", started);
    findings
}
