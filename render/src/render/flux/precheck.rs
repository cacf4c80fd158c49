//! What is checked before any backend runs: a YAML error, a file Flux's
//! generator cannot decode, a path outside the source or a cycle becomes a
//! [`RenderFailure`] at its own file and line.

use super::BuildError;
use crate::model::{RenderFailure, Span};
use crate::render::Tree;
use crate::render::reach::Reach;
use crate::repo::{self, Artifact, artifact::DocError};

/// A file that could not be read for the build, as a build error.
pub(super) fn doc_error(e: DocError, file: &str) -> BuildError {
    match e {
        DocError::Load(message, line) => BuildError::Failed(RenderFailure {
            message,
            at: Some(Span::new(file, line.unwrap_or(0))),
        }),
        DocError::Budget(message, line) => BuildError::Budget(RenderFailure {
            message,
            at: Some(Span::new(file, line.unwrap_or(0))),
        }),
        DocError::Missing(m) => BuildError::Failed(RenderFailure {
            message: m.describe(file),
            at: Some(Span::new(file, 0)),
        }),
    }
}

/// Broken input the build would read, reported at its own file and line.
pub(super) fn precheck(tree: &Tree, reach: &Reach) -> Result<(), BuildError> {
    let failed = BuildError::Failed;
    if let Some((at, reference)) = reach.escapes.first() {
        return Err(failed(RenderFailure {
            message: format!(
                "`{reference}` points outside the repository; Flux confines a build to its source"
            ),
            at: Some(at.clone()),
        }));
    }
    if let Some((at, dir)) = reach.cycles.first() {
        return Err(failed(RenderFailure {
            message: format!(
                "cyclic kustomization reference: {dir} includes itself (kustomize: cycle detected: candidate root {dir} contains visited root)"
            ),
            at: Some(at.clone()),
        }));
    }
    for file in &reach.reads {
        let name = file.rsplit('/').next().unwrap_or(file);
        if !repo::is_manifest_name(name) || tree.written.contains_key(file) {
            continue;
        }
        // A generator input is data (a config file, a Go template): kustomize
        // never decodes it as Kubernetes YAML.
        if !reach.resources.contains(file) && reach.generator_inputs.iter().any(|g| g.file == *file)
        {
            continue;
        }
        if let Err(e @ (DocError::Load(..) | DocError::Budget(..))) = tree.documents(file) {
            return Err(doc_error(e, file));
        }
    }
    Ok(())
}

/// Flux's generator decodes every file it lists and fails on a document
/// without `kind` or `metadata.name` (a `*List` needs no name).
pub(super) fn check_decodable<'f>(
    artifact: &Artifact,
    files: impl IntoIterator<Item = &'f String>,
) -> Result<(), RenderFailure> {
    for file in files {
        let Ok(docs) = artifact.documents(file) else {
            continue;
        };
        for doc in docs.iter() {
            let kind = doc.str_at(&["kind"]);
            let missing = match &kind {
                None => Some("kind"),
                Some(k) if !k.ends_with("List") && doc.str_at(&["metadata", "name"]).is_none() => {
                    Some("metadata.name")
                }
                _ => None,
            };
            if let Some(missing) = missing {
                return Err(RenderFailure {
                    message: format!(
                        "failed to decode Kubernetes YAML from {file}: missing {missing}. The directory has no kustomization.yaml, so Flux generates one that lists every YAML file below it, and every document must be a Kubernetes object"
                    ),
                    at: Some(Span::new(file.clone(), doc.line)),
                });
            }
        }
    }
    Ok(())
}
