//! What a Flux build reads, found without running it: the files whose
//! objects end up in the output, every file read (kustomization files,
//! patches, generator inputs), the directories entered, and the references
//! that are remote, climb out of the repository, or loop.

use std::collections::BTreeSet;

use super::Tree;
use super::paths::is_remote;
use crate::model::Span;
use crate::repo;
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
    /// Generator inputs that are http(s) URLs, with where they are written:
    /// kustomize fetches them; here they are read as empty.
    pub remote_inputs: Vec<(Span, String)>,
    /// References that climb out of the repository.
    pub escapes: Vec<(Span, String)>,
    /// References back to a directory the build is already inside: where
    /// the reference is written, and the directory.
    pub cycles: Vec<(Span, String)>,
    /// Every directory the build enters.
    pub dirs: BTreeSet<String>,
    /// Files read by configMapGenerator/secretGenerator (`files`, `envs`,
    /// `env`), with where they are named.
    pub generator_inputs: Vec<crate::model::GeneratorInput>,
}

/// Follows kustomization files (or Flux's generated list) from `dir` of
/// the artifact, with nothing written over it.
pub fn reach(artifact: &crate::repo::Artifact, dir: &str) -> Reach {
    reach_tree(&Tree::new(artifact), dir)
}

/// Follows kustomization files (or Flux's generated list) from `dir`.
pub(crate) fn reach_tree(tree: &Tree, dir: &str) -> Reach {
    let mut out = Reach::default();
    let mut stack = Vec::new();
    reach_dir(tree, dir, None, &mut out, &mut stack);
    out
}

/// `via`: the reference that led here (the top directory has none).
fn reach_dir(tree: &Tree, dir: &str, via: Option<&Span>, out: &mut Reach, stack: &mut Vec<String>) {
    if stack.iter().any(|d| d == dir) {
        let at = via
            .cloned()
            .unwrap_or_else(|| Span::new(dir.to_string(), 0));
        out.cycles.push((at, dir.to_string()));
        return;
    }
    // A directory reached twice (a diamond of bases) is read once: what it
    // reaches is already recorded. Without this the walk is exponential in
    // the depth of such diamonds, where kustomize stops at the first
    // duplicate id (`resWrangler.appendReplaceOrMerge`).
    if !out.dirs.insert(dir.to_string()) {
        return;
    }
    stack.push(dir.to_string());
    match tree.kustomization_file(dir) {
        None => {
            for entry in generated_resources_in(tree, dir) {
                if tree.is_dir(&entry) {
                    reach_dir(tree, &entry, None, out, stack);
                } else {
                    out.resources.insert(entry.clone());
                    out.reads.insert(entry);
                }
            }
        }
        Some(file) => {
            // Every kustomization file of the directory: more than one is
            // an error kustomize reports.
            out.reads.extend(tree.kustomization_files(dir));
            if let Ok(docs) = tree.documents(&file) {
                for doc in docs.iter() {
                    reach_kustomization(tree, dir, &file, doc, out, stack);
                }
            }
        }
    }
    stack.pop();
}

/// A field of a kustomization by its canonical name (kustomize matches
/// names case-insensitively).
fn field<'n>(doc: &'n Node, name: &str) -> Option<&'n Node> {
    doc.as_map()
        .iter()
        .find(|(k, _)| super::paths::canonical_field(k) == Some(name))
        .map(|(_, v)| v)
}

fn reach_kustomization(
    tree: &Tree,
    dir: &str,
    file: &str,
    doc: &Node,
    out: &mut Reach,
    stack: &mut Vec<String>,
) {
    let list = |name: &str| field(doc, name).map(Node::as_seq).unwrap_or_default();
    // What each reference is: a resource (its objects are output), plugin
    // configs (a file or a directory built for them), or a file read.
    #[derive(PartialEq)]
    enum Ref {
        Resource,
        Configs,
        File,
    }
    let mut refs: Vec<(&Node, Ref)> = Vec::new();
    for key in ["resources", "bases", "components"] {
        refs.extend(list(key).iter().map(|n| (n, Ref::Resource)));
    }
    refs.extend(list("patchesStrategicMerge").iter().map(|n| (n, Ref::File)));
    for key in ["transformers", "generators", "validators"] {
        refs.extend(list(key).iter().map(|n| (n, Ref::Configs)));
    }
    for key in ["configurations", "crds"] {
        refs.extend(list(key).iter().map(|n| (n, Ref::File)));
    }
    for key in ["patches", "patchesJson6902", "replacements"] {
        for item in list(key) {
            if let Some(path) = item.get("path") {
                refs.push((path, Ref::File));
            }
        }
    }
    if let Some(path) = field(doc, "openapi").and_then(|o| o.get("path")) {
        refs.push((path, Ref::File));
    }
    for key in ["configMapGenerator", "secretGenerator"] {
        for generator in list(key) {
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
                let at = Span::new(file.to_string(), input.line);
                // kustomize's file loader fetches an http(s) URL
                // (`FileLoader.Load`, `httpClientGetContent`): a remote
                // input, fetched on every reconcile, like a remote base.
                if is_url(rel) && tree.mounted(rel).is_none() {
                    out.remote_inputs.push((at, rel.to_string()));
                    continue;
                }
                match tree.resolve(dir, rel) {
                    Err(_) => out.escapes.push((at, rel.to_string())),
                    Ok(target) => {
                        if tree.is_file(&target) {
                            out.reads.insert(target.clone());
                            out.generator_inputs.push(crate::model::GeneratorInput {
                                at,
                                file: target,
                                secret: key == "secretGenerator",
                            });
                        }
                    }
                }
            }
        }
    }
    for (node, what) in refs {
        let is_resource = what == Ref::Resource;
        let Some(reference) = node.as_scalar_string() else {
            continue;
        };
        let at = Span::new(file.to_string(), node.line);
        if is_remote(&reference) && tree.mounted(&reference).is_none() {
            out.remotes.push((at, reference));
            continue;
        }
        if !is_resource && (reference.contains('\n') || reference.contains(": ")) {
            continue; // an inline patch or configuration, not a path
        }
        // A `..` that climbs above the root: Flux's secure file system
        // refuses it (a symlink is no way out: it is not in the artifact).
        let Ok(target) = tree.resolve(dir, &reference) else {
            out.escapes.push((at, reference));
            continue;
        };
        if what != Ref::File && tree.is_dir(&target) {
            reach_dir(tree, &target, Some(&at), out, stack);
        } else if tree.is_file(&target) {
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
pub(crate) fn generated_resources(artifact: &crate::repo::Artifact, dir: &str) -> Vec<String> {
    generated_resources_in(&Tree::new(artifact), dir)
}

fn generated_resources_in(tree: &Tree, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    generated_walk(tree, dir, &mut out);
    out
}

fn generated_walk(tree: &Tree, dir: &str, out: &mut Vec<String>) {
    for (name, is_dir) in tree.list(dir) {
        let child = repo::join(dir, &name);
        if is_dir {
            if tree.kustomization_file(&child).is_some() {
                out.push(child);
            } else {
                generated_walk(tree, &child, out);
            }
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            out.push(child);
        }
    }
}

/// An http(s) URL, which kustomize's file loader fetches.
pub(crate) fn is_url(path: &str) -> bool {
    path.starts_with("https://") || path.starts_with("http://")
}
