//! ArtifactGenerator (source-watcher, `source.extensions.fluxcd.io`): which
//! directory of this repository an ExternalArtifact stands for.
//!
//! A generator copies paths of its sources into named artifacts; a
//! Kustomization with `sourceRef.kind: ExternalArtifact` builds `spec.path`
//! inside that artifact. When every copy of an artifact is a whole
//! directory of this repository (`@repo/apps/base/**` to
//! `@artifact/base/`) and all copies keep the repository's layout (the same
//! directory is stripped from each), the artifact is that directory and the
//! Kustomization is built from it like any other. Anything else (single
//! files, `*.yaml` patterns, `exclude`, the Merge and Extract strategies,
//! copies from other sources) is reported as not modelled, naming the
//! generator and the copy.

use crate::model::{SourceRef, Span};
use crate::yaml::Node;

/// The API group of ArtifactGenerator.
pub const GENERATOR_GROUP: &str = "source.extensions.fluxcd.io";

/// Whether a document is an ArtifactGenerator.
pub fn is_generator(doc: &Node) -> bool {
    doc.str_at(&["kind"]).as_deref() == Some("ArtifactGenerator")
        && doc
            .str_at(&["apiVersion"])
            .is_some_and(|v| v.starts_with(&format!("{GENERATOR_GROUP}/")))
}

/// Which directory of this repository an artifact of `generator` is, if any.
///
/// `None`: the generator does not produce `artifact` (or is not in
/// `namespace`). `Some(Err(why))`: it does, but not as a directory of this
/// repository. `repo_dir` tells which sources are this repository (and
/// which directory of it they stand for).
pub fn artifact_dir(
    generator: &Node,
    at: &Span,
    namespace: &str,
    artifact: &str,
    repo_dir: &dyn Fn(&SourceRef) -> Option<String>,
) -> Option<Result<String, String>> {
    let gen_ns = generator
        .str_at(&["metadata", "namespace"])
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "default".into());
    if gen_ns != namespace {
        return None;
    }
    let spec = generator.path(&["spec", "artifacts"])?;
    let out = spec
        .as_seq()
        .iter()
        .find(|a| a.str_at(&["name"]).as_deref() == Some(artifact))?;
    let gen_name = generator.str_at(&["metadata", "name"]).unwrap_or_default();
    let who = format!(
        "its ArtifactGenerator {gen_ns}/{gen_name} ({}:{})",
        at.file, out.line
    );
    Some(layout(generator, out, &gen_ns, repo_dir).map_err(|why| format!("{who} {why}")))
}

fn layout(
    generator: &Node,
    out: &Node,
    gen_ns: &str,
    repo_dir: &dyn Fn(&SourceRef) -> Option<String>,
) -> Result<String, String> {
    let copies = out.path(&["copy"]).map(Node::as_seq).unwrap_or_default();
    if copies.is_empty() {
        return Err("copies nothing into it".into());
    }
    let mut dir: Option<String> = None;
    for copy in copies {
        let from = copy.str_at(&["from"]).unwrap_or_default();
        let to = copy.str_at(&["to"]).unwrap_or_default();
        let line = copy.line;
        if let Some(strategy) = copy.str_at(&["strategy"]).filter(|s| s != "Overwrite") {
            return Err(format!(
                "copies {from} with strategy {strategy} (line {line}); only Overwrite copies are modelled"
            ));
        }
        if copy
            .path(&["exclude"])
            .is_some_and(|e| !e.as_seq().is_empty())
        {
            return Err(format!(
                "copies {from} with exclude patterns (line {line}); exclusions are not modelled"
            ));
        }
        let Some((alias, rest)) = from
            .strip_prefix('@')
            .map(|f| f.split_once('/').unwrap_or((f, "")))
        else {
            return Err(format!(
                "copies from `{from}` (line {line}), which does not start with @alias"
            ));
        };
        let source = generator
            .path(&["spec", "sources"])
            .map(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .find(|s| s.str_at(&["alias"]).as_deref() == Some(alias))
            .map(|s| SourceRef {
                kind: s.str_at(&["kind"]).unwrap_or_default(),
                namespace: s
                    .str_at(&["namespace"])
                    .filter(|ns| !ns.is_empty())
                    .unwrap_or_else(|| gen_ns.to_string()),
                name: s.str_at(&["name"]).unwrap_or_default(),
            });
        let Some(source) = source else {
            return Err(format!(
                "copies from alias @{alias} (line {line}), which its spec.sources does not define"
            ));
        };
        let Some(base) = repo_dir(&source) else {
            return Err(format!(
                "copies from {source} (line {line}), which is not this repository"
            ));
        };
        let Some(from_dir) = rest
            .strip_suffix("**")
            .map(|d| d.trim_end_matches('/'))
            .filter(|d| !d.contains('*'))
        else {
            return Err(format!(
                "copies `{from}` (line {line}); only whole directories (`@{alias}/dir/**`) are modelled"
            ));
        };
        let Some(to_dir) = to
            .strip_prefix("@artifact")
            .filter(|t| t.is_empty() || t.starts_with('/'))
            .map(|t| t.trim_matches('/'))
        else {
            return Err(format!(
                "copies to `{to}` (line {line}), which is not inside @artifact/"
            ));
        };
        // The artifact keeps the repository's layout when the destination
        // is the tail of the source directory: strip it to find the root.
        let from_parts: Vec<&str> = from_dir.split('/').filter(|p| !p.is_empty()).collect();
        let to_parts: Vec<&str> = to_dir.split('/').filter(|p| !p.is_empty()).collect();
        if !from_parts.ends_with(&to_parts) {
            return Err(format!(
                "copies {from} to {to} (line {line}): the artifact's layout is not a directory of the repository"
            ));
        }
        let root = from_parts[..from_parts.len() - to_parts.len()].join("/");
        let root = crate::repo::normalize(&base, &root).0;
        match &dir {
            None => dir = Some(root),
            Some(d) if *d == root => {}
            Some(d) => {
                return Err(format!(
                    "copies from {} and {} (line {line}); no single directory of the repository has that layout",
                    if d.is_empty() { "the root" } else { d },
                    if root.is_empty() { "the root" } else { &root },
                ));
            }
        }
    }
    Ok(dir.unwrap_or_default())
}
