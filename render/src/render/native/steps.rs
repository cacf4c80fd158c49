//! One kustomization's transformer steps, in kustomize's order
//! (kusttarget_configplugin.go configureBuiltinTransformers): its own
//! fields through the builtin transformers ([`super::transform`]), then its
//! `transformers:` entries ([`super::plugins`]).

use super::Res;
use super::fields::FieldSpec;
use super::load::Kustomization;
use super::transform::{
    COMMON_ANNOTATIONS, COMMON_LABELS, Cx, REPLICA_KINDS, TEMPLATE_LABELS, affix, images,
    json6902_entry, namespace, pairs, patch_entry, replicas, set_all, strategic_merge_entry,
};
use crate::render::Error;
use crate::yaml::Node;

/// Runs the transformer steps of the kustomization `k` (the file `file` in
/// `dir`) over the accumulated resources.
pub fn run(
    k: &Kustomization,
    tree: &crate::render::Tree,
    dir: &str,
    file: &str,
    namespace_specs: &[crate::yaml::Node],
    acc: &mut Vec<Res>,
) -> Result<(), Error> {
    let cx = Cx { tree, dir, file };
    // 1. patchesStrategicMerge: paths or inline documents, matched by id.
    for entry in &k.patches_strategic_merge {
        strategic_merge_entry(&cx, acc, entry)?;
    }
    // 2. patches.
    for entry in &k.patches {
        patch_entry(&cx, acc, entry)?;
    }
    // 3. namespace.
    if let Some(ns) = &k.namespace {
        namespace(acc, ns)?;
        // `namespace` field specs from `configurations` files.
        if !namespace_specs.is_empty() {
            let config = crate::yaml::Node::new(crate::yaml::Value::Map(vec![(
                "fieldSpecs".to_string(),
                crate::yaml::Node::new(crate::yaml::Value::Seq(namespace_specs.to_vec())),
            )]));
            let specs = super::fields::specs_at(&config, "fieldSpecs");
            super::plugins::namespace_fields(acc, &specs, ns, false);
        }
    }
    // 4, 5. namePrefix, nameSuffix.
    if let Some(prefix) = k.name_prefix.as_deref().filter(|p| !p.is_empty()) {
        affix(acc, prefix, true);
    }
    if let Some(suffix) = k.name_suffix.as_deref().filter(|p| !p.is_empty()) {
        affix(acc, suffix, false);
    }
    // 6. labels entries, then commonLabels.
    for entry in &k.labels {
        let pairs = pairs(entry.get("pairs"));
        let mut specs: Vec<FieldSpec> = vec![FieldSpec::any("metadata/labels", true)];
        if entry.get("includeSelectors").and_then(Node::as_bool) == Some(true) {
            specs.extend_from_slice(COMMON_LABELS);
        } else if entry.get("includeTemplates").and_then(Node::as_bool) == Some(true) {
            specs.extend_from_slice(TEMPLATE_LABELS);
        }
        // `fields`: more field specs, added to the defaults above
        // (kustomize's labels entry `FieldSpecs`).
        specs.extend(super::fields::specs_at(entry, "fields"));
        set_all(acc, &specs, &pairs);
    }
    if let Some(labels) = &k.common_labels {
        let pairs = pairs(Some(labels));
        set_all(acc, &[FieldSpec::any("metadata/labels", true)], &pairs);
        set_all(acc, COMMON_LABELS, &pairs);
    }
    // 7. commonAnnotations.
    if let Some(annotations) = &k.common_annotations {
        set_all(acc, COMMON_ANNOTATIONS, &pairs(Some(annotations)));
    }
    // 8. patchesJson6902.
    for entry in &k.patches_json6902 {
        json6902_entry(&cx, acc, entry, entry.get("patch").or(entry.get("jsonOp")))?;
    }
    // 9. replicas.
    for entry in &k.replicas {
        replicas(acc, entry, REPLICA_KINDS)
            .map_err(|e| Error::from(format!("{}: {e}", cx.at(entry))))?;
    }
    // 10. images.
    for entry in &k.images {
        images(acc, entry).map_err(|e| Error::from(format!("{}: {e}", cx.at(entry))))?;
    }
    // 11. replacements.
    if !k.replacements.is_empty() {
        super::generate::replacements(acc, &k.replacements, tree, dir, file)?;
    }
    // 12. the `transformers:` entries, in order.
    for entry in &k.transformers {
        super::plugins::transform(&cx, acc, entry)?;
    }
    Ok(())
}
