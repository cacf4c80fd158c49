//! `GenerateManifest` (fluxcd/pkg `kustomize_generator.go`): the
//! kustomization file Flux builds `spec.path` from. The path's own file,
//! decoded loosely and written back with its known fields, or one
//! generated listing every YAML file below the path; then the Flux
//! Kustomization's fields go over it (`targetNamespace`, `namePrefix`,
//! `nameSuffix`, `patches`, `components`, `images`, `buildMetadata`).

use super::precheck::doc_error;
use super::{BuildError, SPEC_LINE};
use crate::model::{RenderFailure, Span};
use crate::render::reach::generated_resources;
use crate::repo::{self, Artifact};
use crate::yaml::{Node, Value};

/// The kustomization file Flux builds `path` from: the path's own, edited,
/// or the one it generates.
pub(super) struct Written {
    pub(super) file: String,
    pub(super) doc: Node,
    /// Flux generated it (the directory had none).
    pub(super) generated: bool,
    pub(super) dropped: Vec<(Span, String)>,
}

fn s(text: &str) -> Node {
    Node::new(Value::String(text.to_string()))
}

/// `GenerateManifest`: the path's kustomization as Flux writes it before
/// the build.
pub(super) fn flux_kustomization(
    artifact: &Artifact,
    path: &str,
    spec: &Node,
) -> Result<Written, BuildError> {
    let spec_field = |key: &str| spec.path(&["spec", key]);
    let (file, mut doc, generated, dropped) = match artifact.kustomization_file(path) {
        Some(file) => {
            let (doc, dropped) = existing(artifact, &file)?;
            (file, doc, false, dropped)
        }
        None => {
            let (file, doc) = generate(artifact, path);
            (file, doc, true, Vec::new())
        }
    };
    if let Some(ns) = spec_field("targetNamespace") {
        doc.set("namespace", s(&ns.as_scalar_string().unwrap_or_default()));
    }
    for key in ["namePrefix", "nameSuffix"] {
        if let Some(value) = spec_field(key) {
            doc.set(key, s(&value.as_scalar_string().unwrap_or_default()));
        }
    }
    append(&mut doc, "patches", patches(spec));
    append(&mut doc, "components", components(artifact, path, spec)?);
    for key in ["patchesStrategicMerge", "patchesJson6902"] {
        append(
            &mut doc,
            key,
            spec_field(key)
                .map(|n| n.as_seq().to_vec())
                .unwrap_or_default(),
        );
    }
    merge_images(&mut doc, spec);
    let mut metadata: Vec<Node> = spec_field("buildMetadata")
        .map(|n| n.as_seq().to_vec())
        .filter(|m| !m.is_empty())
        .or_else(|| doc.get("buildMetadata").map(|n| n.as_seq().to_vec()))
        .unwrap_or_default();
    // Origins map each object back to its file; they are removed after.
    if !metadata
        .iter()
        .any(|m| m.as_str() == Some("originAnnotations"))
    {
        metadata.push(s("originAnnotations"));
    }
    doc.set("buildMetadata", Node::new(Value::Seq(metadata)));
    Ok(Written {
        file,
        doc,
        generated,
        dropped,
    })
}

/// Appends `items` to the list at `key` of the kustomization.
fn append(doc: &mut Node, key: &str, items: Vec<Node>) {
    if items.is_empty() {
        return;
    }
    let mut list = doc
        .get(key)
        .map(|n| n.as_seq().to_vec())
        .unwrap_or_default();
    list.extend(items);
    doc.set(key, Node::new(Value::Seq(list)));
}

/// The path's own kustomization file as Flux writes it back: its first
/// document decoded loosely into `types.Kustomization` (unknown fields
/// dropped, with where they were).
fn existing(artifact: &Artifact, file: &str) -> Result<(Node, Vec<(Span, String)>), BuildError> {
    let file = file.to_string();
    let mut dropped = Vec::new();
    let docs = artifact.documents(&file).map_err(|e| doc_error(e, &file))?;
    // sigs.k8s.io/yaml reads the first document.
    let first = docs
        .first()
        .cloned()
        .unwrap_or(Node::new(Value::Map(Vec::new())));
    if !first.is_map() {
        return Err(BuildError::Failed(RenderFailure {
            message: format!(
                "{file}: json: cannot unmarshal {} into Go value of type types.Kustomization",
                if matches!(first.value, Value::Seq(_)) {
                    "array"
                } else {
                    "a scalar"
                }
            ),
            at: Some(Span::new(file.clone(), first.line)),
        }));
    }
    let mut doc = Node::new(Value::Map(Vec::new()));
    doc.line = first.line;
    doc.set("apiVersion", s("kustomize.config.k8s.io/v1beta1"));
    doc.set("kind", s("Kustomization"));
    let text = artifact
        .read(&file)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    // sigs.k8s.io/yaml.Unmarshal into types.Kustomization: unknown
    // fields (at any depth) are dropped, scalars become the strings
    // their fields want, other mismatches fail.
    let (decoded, lost) = crate::render::types::loose(&first, &crate::render::types::KUSTOMIZATION)
        .map_err(|e| {
            BuildError::Failed(RenderFailure {
                message: format!("{file}:{}: {}", e.line, e.message),
                at: Some(Span::new(file.clone(), e.line)),
            })
        })?;
    for lost in lost {
        let line = if lost.path.contains(['.', '[']) {
            lost.line
        } else {
            key_line(&text, &lost.path).unwrap_or(lost.line)
        };
        dropped.push((Span::new(file.clone(), line), lost.path));
    }
    for (key, value) in decoded.as_map() {
        doc.set(key, value.clone());
    }
    let resources = doc.get("resources").is_some_and(|r| !r.as_seq().is_empty());
    if !resources {
        // Flux sets this to avoid kustomize's "kustomization.yaml is
        // empty" on a file without resources.
        doc.set(
            "buildMetadata",
            Node::new(Value::Seq(vec![s("originAnnotations")])),
        );
    }
    Ok((doc, dropped))
}

/// The kustomization Flux generates for a path without one: every YAML
/// file below it (a subdirectory with its own kustomization file is one
/// resource).
fn generate(artifact: &Artifact, path: &str) -> (String, Node) {
    let resources: Vec<Node> = generated_resources(artifact, path)
        .iter()
        .map(|r| {
            s(&format!(
                "./{}",
                crate::render::paths::relative_str(path, r)
            ))
        })
        .collect();
    let mut doc = Node::new(Value::Map(Vec::new()));
    doc.set("apiVersion", s("kustomize.config.k8s.io/v1beta1"));
    doc.set("kind", s("Kustomization"));
    if resources.is_empty() {
        doc.set("namespace", s("_placeholder"));
    } else {
        doc.set("resources", Node::new(Value::Seq(resources)));
    }
    (repo::join(path, "kustomization.yaml"), doc)
}

/// `spec.patches`, pruned as the API server prunes them, each at its line
/// in the Flux Kustomization's file (offset by [`SPEC_LINE`]).
fn patches(spec: &Node) -> Vec<Node> {
    let spec_field = |key: &str| spec.path(&["spec", key]);
    let spec_line = spec.path(&["spec"]).map_or(0, |n| n.line);
    spec_field("patches")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .map(|p| {
            let mut out = Node::new(Value::Map(Vec::new()));
            if let Some(text) = p.get("patch") {
                out.set("patch", text.clone());
            }
            if let Some(target) = p.get("target") {
                out.set("target", target.clone());
            }
            // The API server prunes what the CRD's schema does not name
            // (a misspelt selector field), as the loose decode drops it.
            if let Ok((pruned, _)) = crate::render::types::loose(&out, &crate::render::types::PATCH)
            {
                out = pruned;
            }
            // A patch the Flux Kustomization's file spells out has a line
            // below `spec:`; one a parent's patch added took its parent's
            // line (adopt_lines), which says nothing: line unknown.
            out.line = SPEC_LINE + if p.line > spec_line { p.line } else { 0 };
            out
        })
        .collect()
}

/// `spec.components`: each local and relative, a missing one dropped with
/// `spec.ignoreMissingComponents`, each at its line in the Flux
/// Kustomization's file (offset by [`SPEC_LINE`]).
fn components(artifact: &Artifact, path: &str, spec: &Node) -> Result<Vec<Node>, BuildError> {
    let spec_field = |key: &str| spec.path(&["spec", key]);
    let spec_line = spec.path(&["spec"]).map_or(0, |n| n.line);
    let ignore_missing =
        spec_field("ignoreMissingComponents").and_then(Node::as_bool) == Some(true);
    let mut components = Vec::new();
    for component in spec_field("components")
        .map(Node::as_seq)
        .unwrap_or_default()
    {
        let Some(c) = component.as_scalar_string() else {
            continue;
        };
        if !is_local_relative(&c) {
            return Err(BuildError::Failed(RenderFailure {
                message: format!(
                    "component path '{c}' must be local and relative (spec.components; kustomize-controller's GenerateManifest refuses remote and absolute components)"
                ),
                at: Some(Span::new("", component.line)),
            }));
        }
        let exists = artifact
            .resolve(path, &c)
            .is_ok_and(|p| artifact.stat(&p).is_ok());
        if !exists && ignore_missing {
            continue;
        }
        let mut entry = s(&c);
        entry.line = SPEC_LINE
            + if component.line > spec_line {
                component.line
            } else {
                0
            };
        components.push(entry);
    }
    Ok(components)
}

/// `spec.images`, merged by name into the kustomization's `images`
/// (`newTag` and `digest` select the version together).
fn merge_images(doc: &mut Node, spec: &Node) {
    let spec_field = |key: &str| spec.path(&["spec", key]);
    let mut images = doc
        .get("images")
        .map(|n| n.as_seq().to_vec())
        .unwrap_or_default();
    for image in spec_field("images").map(Node::as_seq).unwrap_or_default() {
        let name = image.str_at(&["name"]).unwrap_or_default();
        let field = |k: &str| image.str_at(&[k]).filter(|v| !v.is_empty());
        match images
            .iter_mut()
            .find(|i| i.str_at(&["name"]).as_deref() == Some(name.as_str()))
        {
            Some(existing) => {
                if let Some(v) = field("newName") {
                    existing.set("newName", s(&v));
                }
                // newTag and digest select the version together.
                if field("newTag").is_some() || field("digest").is_some() {
                    for k in ["newTag", "digest"] {
                        match field(k) {
                            Some(v) => existing.set(k, s(&v)),
                            None => {
                                existing.remove(k);
                            }
                        }
                    }
                }
            }
            None => {
                let mut entry = Node::new(Value::Map(Vec::new()));
                entry.set("name", s(&name));
                for k in ["newName", "newTag", "digest"] {
                    if let Some(v) = field(k) {
                        entry.set(k, s(&v));
                    }
                }
                images.push(entry);
            }
        }
    }
    if !images.is_empty() {
        doc.set("images", Node::new(Value::Seq(images)));
    }
}

/// The line of a top-level key in a block-style YAML file (the node tree
/// keeps the lines of values, not of keys).
fn key_line(text: &str, key: &str) -> Option<u32> {
    text.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i as u32 + 1)
}

/// fluxcd/pkg `IsLocalRelativePath`: not a URL or git address, not absolute.
fn is_local_relative(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let remote = [
        "git::",
        "gh:",
        "ssh://",
        "https://",
        "http://",
        "git@",
        "github.com:",
        "github.com/",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    !remote && !path.starts_with('/') && !lower.starts_with("file://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_relative_components() {
        assert!(is_local_relative("../components/x"));
        assert!(!is_local_relative("https://github.com/x/y"));
        assert!(!is_local_relative("GitHub.com/x/y"));
        assert!(!is_local_relative("/abs"));
    }
}
