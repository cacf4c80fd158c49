//! One build serves `cargo test --workspace`, `cargo clippy` and `cargo run
//! -p flux-conformance` (issue 50): each selection of packages resolves
//! every dependency with the same features, so none rebuilds what another
//! built. workspace-hack/Cargo.toml asks for the union; this test fails,
//! naming the crate and the features to add there, when a dependency
//! change makes them drift apart again.

#![allow(clippy::unwrap_used)] // a test whose cargo cannot run should panic

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// `crate version` → its features, as `cargo tree` resolves them for
/// these arguments.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(env!("CARGO"))
        .current_dir(&root)
        .args(["tree", "--offline", "--prefix", "none", "-f", "{p} {f}"])
        .args(args)
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let mut words = line.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        if !version.starts_with('v') {
            continue; // a feature node ("serde feature \"derive\"")
        }
        let features = words
            .filter(|w| !w.starts_with('(') && !w.ends_with(')'))
            .flat_map(|w| w.split(','))
            .filter(|f| !f.is_empty())
            .map(str::to_string);
        map.entry(format!("{name} {version}"))
            .or_default()
            .extend(features);
    }
    map
}

#[test]
fn one_build_serves_every_command() {
    // What `cargo test --workspace` and `cargo clippy --workspace
    // --all-targets` resolve: every member, dev-dependencies included.
    let workspace = features(&["-e", "normal,build,dev,features", "--workspace"]);
    assert!(
        workspace.len() > 50,
        "cargo tree listed {} crates",
        workspace.len()
    );
    // What `cargo run -p flux-conformance` (and `cargo install`) resolves.
    let run = features(&["-e", "normal,build,features", "-p", "flux-conformance"]);
    let drift: Vec<String> = run
        .iter()
        .filter_map(|(krate, mine)| {
            let all = workspace.get(krate)?;
            (all != mine).then(|| {
                format!(
                    "{krate}: the workspace adds {:?}",
                    all.difference(mine).collect::<Vec<_>>()
                )
            })
        })
        .collect();
    assert!(
        drift.is_empty(),
        "`cargo run -p flux-conformance` would rebuild what `cargo test --workspace` built; add these features to workspace-hack/Cargo.toml:\n{}",
        drift.join("\n")
    );
}
