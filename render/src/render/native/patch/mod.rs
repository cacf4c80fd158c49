//! Patches: parsing patch text as kustomize does, then applying it as a
//! strategic merge ([`strategic`]: kyaml merge2 semantics with the merge
//! keys of built-in Kubernetes types) or JSON 6902 ([`json6902`]), to the
//! objects a [`selector`] picks.

mod json6902;
pub mod selector;
mod strategic;

pub use json6902::apply_json;
pub use selector::Selector;
pub use strategic::apply_strategic;

use crate::render::Error;
use crate::yaml::{self, Node, Value};

/// One parsed patch.
#[derive(Debug, Clone)]
pub enum Patch {
    Strategic(Vec<Node>),
    Json(Vec<Node>),
}

/// Parses patch text as kustomize does: both as strategic merge documents
/// and as a JSON 6902 operation list; exactly one must succeed.
pub fn parse(text: &str, what: &str) -> Result<Patch, Error> {
    // go-yaml's reading (a block scalar that ends the text, folded lines),
    // as kustomize's `SliceFromBytes` parses the (trimmed) patch text.
    let docs = yaml::parse_text(text).map_err(|e| Error::from(format!("{what}: {e}")))?;
    // Only null documents (`null`, `~`, `---`): kustomize's PatchTransformer
    // reads such a text as both kinds and refuses it.
    if docs.is_empty() {
        return Err(format!("{what}: illegally qualifies as both an SM and JSON patch").into());
    }
    let is_json = docs.len() == 1 && matches!(docs[0].value, Value::Seq(_));
    if is_json {
        let ops = docs[0].as_seq().to_vec();
        if ops
            .iter()
            .all(|op| op.get("op").is_some() && op.get("path").is_some())
        {
            return Ok(Patch::Json(ops));
        }
        return Err(format!("unable to parse SM or JSON patch from {what}").into());
    }
    let mut out = Vec::new();
    for doc in docs {
        let kind = doc.str_at(&["kind"]);
        if kind.is_none()
            || (doc.str_at(&["metadata", "name"]).is_none()
                && !kind.as_deref().is_some_and(|k| k.ends_with("List")))
        {
            return Err(format!(
                "unable to parse SM or JSON patch from {what}: a strategic merge patch needs kind and metadata.name"
            ).into());
        }
        out.push(doc);
    }
    Ok(Patch::Strategic(out))
}

/// Reads a patch file relative to the kustomization directory, inside the
/// source.
pub(crate) fn read_patch_file(
    tree: &crate::render::Tree,
    dir: &str,
    file: &str,
    path: &str,
    line: u32,
) -> Result<String, Error> {
    let resolved = tree
        .resolve(dir, path)
        .map_err(|m| Error::at(file, line, format!("patch file {}", m.describe(path))))?;
    tree.read_text(&resolved)
        .map_err(|e| Error::at(file, line, format!("patch file {e}")))
}
