//! A Flux Kustomization object read into a tier of the model.

use super::LocalSources;
use crate::model::{DependsOn, SourceRef, Span, Tier, TierId, TierState};
use crate::repo;
use crate::yaml::Node;

/// Reads a Flux Kustomization object into a tier (not yet built).
pub fn tier_from(
    doc: &Node,
    defined_at: Span,
    parent: Option<TierId>,
    local: &LocalSources,
) -> Tier {
    let namespace = doc
        .str_at(&["metadata", "namespace"])
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "default".to_string());
    let name = doc.str_at(&["metadata", "name"]).unwrap_or_default();
    let spec = |key: &str| doc.path(&["spec", key]);
    let depends_on = spec("dependsOn")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|entry| {
            let name = entry.str_at(&["name"])?;
            let explicit = entry.str_at(&["namespace"]).filter(|ns| !ns.is_empty());
            Some(DependsOn {
                target: TierId::new(explicit.clone().unwrap_or_else(|| namespace.clone()), name),
                explicit_namespace: explicit.is_some(),
                ready_expr: entry
                    .str_at(&["readyExpr"])
                    .is_some_and(|e| !e.trim().is_empty()),
                line: entry.line,
            })
        })
        .collect();
    let source_ref = SourceRef {
        kind: doc
            .str_at(&["spec", "sourceRef", "kind"])
            .unwrap_or_default(),
        namespace: doc
            .str_at(&["spec", "sourceRef", "namespace"])
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| namespace.clone()),
        name: doc
            .str_at(&["spec", "sourceRef", "name"])
            .unwrap_or_default(),
    };
    // A configured source's artifact is a directory of this repository.
    let base = local
        .dir_for(
            &source_ref.kind,
            &source_ref.name,
            Some(&source_ref.namespace),
        )
        .unwrap_or_default();
    let path = repo::normalize(
        base,
        &spec("path")
            .and_then(Node::as_scalar_string)
            .unwrap_or_default(),
    )
    .0;
    Tier {
        id: TierId::new(namespace, name),
        path,
        depends_on,
        source_ref,
        wait: spec("wait").and_then(Node::as_bool).unwrap_or(false),
        prune: spec("prune").and_then(Node::as_bool).unwrap_or(false),
        suspend: spec("suspend").and_then(Node::as_bool).unwrap_or(false),
        post_build: spec("postBuild").cloned(),
        decryption: spec("decryption").cloned(),
        target_namespace: spec("targetNamespace")
            .and_then(Node::as_scalar_string)
            .filter(|ns| !ns.is_empty()),
        defined_at,
        parent,
        with_entry: false,
        spec: doc.clone(),
        remote_bases: Vec::new(),
        fetched: Vec::new(),
        fetch_failures: Vec::new(),
        over_budget: None,
        remote_inputs: Vec::new(),
        generator_inputs: Vec::new(),
        dropped_fields: Vec::new(),
        files_read: 0,
        substitution: Default::default(),
        state: TierState::NotChecked("not built yet".into()),
    }
}
