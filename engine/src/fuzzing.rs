//! The bodies of the fuzz targets (`fuzz/fuzz_targets/`), here so that an
//! ordinary `cargo test` replays every seed and every crash ever found
//! (`fuzz/seeds/`) without a nightly toolchain: a crash found once stays
//! found.

use crate::model::TierId;
use crate::render::{flux, native::Native};
use crate::repo::RepoIndex;
use crate::yaml::{Node, parse_documents, parse_text};

/// The loader on arbitrary bytes: documents or an error, never a panic or
/// a runaway (budgets), and what it loads survives a round trip through
/// JSON.
pub fn loader(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(docs) = parse_text(text) {
        for doc in &docs {
            let json = doc.to_json();
            let back = Node::from_json(&json);
            assert_eq!(
                back.to_json(),
                json,
                "a loaded document changed through JSON"
            );
        }
    }
}

/// The native renderer and Flux's build layer on an arbitrary one-tier
/// repository: the input is split at `\0` into files (`path\x01text`; a
/// first part without a path is `app/kustomization.yaml`), built in memory
/// (nothing read from disk, nothing fetched), ending in objects or a render
/// failure, never a panic.
pub fn renderer(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let index = RepoIndex::from_memory(&files_of(text, "app/kustomization.yaml"));
    let Some(spec) = parse_documents(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app\n  namespace: flux-system\nspec:\n  path: ./app\n",
    )
    .ok()
    .and_then(|mut d| (!d.is_empty()).then(|| d.remove(0))) else {
        return;
    };
    let target = flux::Target {
        id: &TierId::new("flux-system", "app"),
        path: "app",
        spec: &spec,
        defined_at: &crate::model::Span::new("clusters/fuzz/app.yaml", 1),
    };
    let _ = flux::build(&index.artifact(), &target, &Native, None);
}

/// The bootstrap's script reader on an arbitrary repository of scripts:
/// the input is split at `\0` into files (`path\x01text`; a first part
/// without a path is `scripts/bootstrap.sh`), read in memory as shell
/// scripts, Taskfiles, justfiles and documented steps, ending in commands
/// and notes, never a panic.
pub fn scripts(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let index = RepoIndex::from_memory(&files_of(text, "scripts/bootstrap.sh"));
    let scripts = crate::provenance::bootstrap::scripts::read(&index, true);
    for command in &scripts.commands {
        let _ = command.items(&index, crate::provenance::Catalog::embedded());
    }
}

/// A fuzz input as files: split at `\0` into `path\x01text` parts; a first
/// part without a path is `first`.
fn files_of<'a>(text: &'a str, first: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut files: Vec<(&str, &str)> = Vec::new();
    for part in text.split('\0') {
        match part.split_once('\x01') {
            Some((path, body)) => files.push((path, body)),
            None if files.is_empty() => files.push((first, part)),
            None => {}
        }
    }
    files
}
