//! One test per reported bug (as ripgrep's `tests/regression.rs`): each
//! names the report it comes from, and fails on the code before its fix.
//!
//! Issue 13 ("Hardening"): hostile and broken input, found by hand and by
//! mutation fuzzing over real repositories.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;

use crate::support::*;

/// A one-tier cluster: `clusters/prod` syncs, tier `apps` builds `./apps`.
fn one_tier(root: &Path, extra: &str) {
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", extra),
    );
}

fn messages(outcome: &conformance::check::Outcome) -> String {
    outcome
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.rule(), f.message()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn objects_of<'o>(
    outcome: &'o conformance::check::Outcome,
    tier: &str,
) -> Vec<&'o conformance::model::Object> {
    outcome.model.clusters[0]
        .tiers
        .values()
        .filter(|t| t.id.name == tier)
        .flat_map(|t| t.objects())
        .collect()
}

const SOPS_ENV: &str = "PASSWORD=ENC[AES256_GCM,data:abc,iv:def,tag:ghi,type:str]\nsops_mac=ENC[AES256_GCM,data:x,type:str]\nsops_version=3.9.0\n";

mod discovery;
mod flux_build;
mod input;
mod refused;
mod rules;
