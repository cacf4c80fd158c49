//! Discovery on small repositories written by each test: entries, cluster
//! names, dependsOn namespaces, sources that are not this repository,
//! duplicate names, Flux's generated kustomization.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;

use conformance::check::{CheckOptions, check};
use conformance::model::{Entry, TierId, TierState};

use crate::support::*;

/// Runs git in a test's repository.
fn git(root: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

mod building;
mod by_hand;
mod checkout;
mod entries;
mod fixtures;
mod fleet;
mod kinds;
mod operator;
mod platform;
mod sources;
