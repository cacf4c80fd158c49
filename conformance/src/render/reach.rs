//! What a Flux build reads, found without running it: the files whose
//! objects end up in the output, every file read (kustomization files,
//! patches, generator inputs), the directories entered, and the references
//! that are remote, climb out of the repository, or loop.

use std::collections::BTreeSet;

use super::flux::is_remote;
use crate::model::Span;
use crate::repo::{self, RepoIndex};
use crate::yaml::Node;

/// What a build would read, found without running it.
#[derive(Debug, Default)]
pub struct Reach {
    /// Files whose objects end up in the output.
    pub resources: BTreeSet<String>,
    /// Every local file the build reads (resources, kustomization files,
    /// patches).
    pub reads: BTreeSet<String>,
    /// Remote references (URL or git address), with where they are written.
    pub remotes: Vec<(Span, String)>,
    /// References that climb out of the repository.
    pub escapes: Vec<(Span, String)>,
    /// Directories whose kustomization file refers back to an ancestor.
    pub cycles: Vec<Span>,
    /// Every directory the build enters.
    pub dirs: BTreeSet<String>,
    /// Files read by configMapGenerator/secretGenerator (`files`, `envs`,
    /// `env`), with where they are named.
    pub generator_inputs: Vec<(Span, String)>,
}

/// Follows kustomization files (or Flux's generated list) from `dir`.
pub fn reach(index: &RepoIndex, dir: &str) -> Reach {
    let mut out = Reach::default();
    let mut stack = Vec::new();
    reach_dir(index, dir, &mut out, &mut stack);
    out
}

fn reach_dir(index: &RepoIndex, dir: &str, out: &mut Reach, stack: &mut Vec<String>) {
    if stack.iter().any(|d| d == dir) {
        out.cycles.push(Span::new(dir.to_string(), 0));
        return;
    }
    stack.push(dir.to_string());
    out.dirs.insert(dir.to_string());
    match index.kustomization_file(dir) {
        None => {
            for entry in generated_resources(index, dir) {
                if index.is_dir(&entry) {
                    reach_dir(index, &entry, out, stack);
                } else {
                    out.resources.insert(entry.clone());
                    out.reads.insert(entry);
                }
            }
        }
        Some(file) => {
            out.reads.insert(file.clone());
            let docs = match index.file(&file).map(|f| &f.docs) {
                Some(Ok(docs)) => docs.clone(),
                _ => Vec::new(),
            };
            for doc in &docs {
                reach_kustomization(index, dir, &file, doc, out, stack);
            }
        }
    }
    stack.pop();
}

fn reach_kustomization(
    index: &RepoIndex,
    dir: &str,
    file: &str,
    doc: &Node,
    out: &mut Reach,
    stack: &mut Vec<String>,
) {
    let mut refs: Vec<(&Node, bool)> = Vec::new();
    for key in ["resources", "bases", "components"] {
        refs.extend(
            doc.get(key)
                .map(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .map(|n| (n, true)),
        );
    }
    for item in doc
        .get("patchesStrategicMerge")
        .map(Node::as_seq)
        .unwrap_or_default()
    {
        refs.push((item, false));
    }
    for key in ["patches", "patchesJson6902"] {
        for item in doc.get(key).map(Node::as_seq).unwrap_or_default() {
            if let Some(path) = item.get("path") {
                refs.push((path, false));
            }
        }
    }
    for key in ["configMapGenerator", "secretGenerator"] {
        for generator in doc.get(key).map(Node::as_seq).unwrap_or_default() {
            let mut inputs: Vec<&Node> = Vec::new();
            for field in ["files", "envs"] {
                inputs.extend(generator.get(field).map(Node::as_seq).unwrap_or_default());
            }
            inputs.extend(generator.get("env"));
            for input in inputs {
                let Some(text) = input.as_scalar_string() else {
                    continue;
                };
                // `files` entries may be `key=path`.
                let rel = text.split_once('=').map_or(text.as_str(), |(_, p)| p);
                let (target, escaped) = repo::normalize(dir, rel);
                if !escaped && index.is_file(&target) {
                    out.generator_inputs
                        .push((Span::new(file.to_string(), input.line), target));
                }
            }
        }
    }
    for (node, is_resource) in refs {
        let Some(reference) = node.as_scalar_string() else {
            continue;
        };
        let at = Span::new(file.to_string(), node.line);
        if is_remote(&reference) {
            out.remotes.push((at, reference));
            continue;
        }
        if !is_resource && reference.contains('\n') {
            continue; // an inline strategic-merge patch, not a path
        }
        let (target, escaped) = repo::normalize(dir, &reference);
        // A `..` that climbs above the root, or a symlink that points out of
        // the repository: Flux's secure file system refuses both.
        let outside = || {
            index
                .root()
                .join(&target)
                .canonicalize()
                .is_ok_and(|real| !real.starts_with(index.root()))
        };
        if escaped || outside() {
            out.escapes.push((at, reference));
            continue;
        }
        if is_resource && index.is_dir(&target) {
            reach_dir(index, &target, out, stack);
        } else if index.is_file(&target) {
            if is_resource {
                out.resources.insert(target.clone());
            }
            out.reads.insert(target);
        }
    }
}

/// The resources of the kustomization Flux generates for a directory without
/// one: every `.yaml`/`.yml` file, recursively, in walk order; a subdirectory
/// that has a kustomization file is one resource and is not entered.
pub fn generated_resources(index: &RepoIndex, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    generated_walk(index, dir, &mut out);
    out
}

fn generated_walk(index: &RepoIndex, dir: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(index.root().join(dir)) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = repo::join(dir, &name);
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            if index.kustomization_file(&child).is_some() {
                out.push(child);
            } else {
                generated_walk(index, &child, out);
            }
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            out.push(child);
        }
    }
}
