//! The native renderer and Flux's build layer on an arbitrary repository
//! of one tier: the input is split at `\0` into files (`path\x01text`),
//! built in memory (nothing read from disk), and the run ends in objects or
//! a render failure, never a panic.
#![no_main]

use conformance::model::TierId;
use conformance::render::{flux, native::Native};
use conformance::repo::RepoIndex;
use conformance::yaml::parse_documents;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut files: Vec<(&str, &str)> = Vec::new();
    for part in text.split('\0') {
        match part.split_once('\x01') {
            Some((path, body)) => files.push((path, body)),
            None if files.is_empty() => files.push(("app/kustomization.yaml", part)),
            None => {}
        }
    }
    let index = RepoIndex::from_memory(&files);
    let spec = parse_documents(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app\n  namespace: flux-system\nspec:\n  path: ./app\n",
    )
    .unwrap_or_default()
    .remove(0);
    let _ = flux::build(
        &index.artifact(),
        &TierId::new("flux-system", "app"),
        "app",
        &spec,
        &Native,
    );
});
