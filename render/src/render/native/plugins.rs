//! Builtin transformer and generator configs: the `transformers:` and
//! `generators:` entries of a kustomization (files, directories of them, or
//! inline YAML), each an object of `apiVersion: builtin` naming one of
//! kustomize's builtin plugins (api/internal/plugins/builtinhelpers). They
//! run after the kustomization's own fields: generators after
//! configMapGenerator/secretGenerator, transformers after every builtin
//! field, in list order (`accumulateTarget`). Only the field specs a config
//! gives are used (a LabelTransformer without fieldSpecs changes nothing).
//! Any other apiVersion is an external plugin, which Flux (plugins disabled)
//! refuses.

use super::fields::FieldSpec;
use super::generate::{self, Generated};
use super::transform::{self, Cx};
use super::{Res, load::Entry};
use crate::render::Error;
use crate::yaml::{Node, Value};

/// The config objects an entry names: inline YAML, a file, or a directory
/// built as a kustomization (whose output is the configs).
fn configs(cx: &Cx, entry: &Entry) -> Result<Vec<Node>, Error> {
    if entry.value.contains('\n') {
        return crate::yaml::parse_documents(&entry.value)
            .map_err(|e| Error::at(cx.file, entry.line, format!("{e}")));
    }
    let path = cx
        .tree
        .resolve(cx.dir, &entry.value)
        .map_err(|m| Error::at(cx.file, entry.line, m.describe(&entry.value).to_string()))?;
    if cx.tree.is_dir(&path) {
        return super::build_configs(cx.tree, &path)
            .map_err(|e| Error::at(cx.file, entry.line, format!("{e}")));
    }
    super::load::documents(cx.tree, &path)
        .map_err(|e| Error::at(cx.file, entry.line, format!("{e}")))
}

/// Checks a config is a builtin one and returns its kind.
fn builtin_kind(config: &Node, at: &str) -> Result<String, Error> {
    let kind = config.str_at(&["kind"]).unwrap_or_default();
    if config.str_at(&["apiVersion"]).as_deref() != Some("builtin") {
        return Err(format!(
            "{at}: external plugins disabled; unable to load external plugin '{kind}' (kustomize-controller builds without plugins; only apiVersion: builtin configs run)"
        ).into());
    }
    Ok(kind)
}

/// The field specs a config gives.
fn field_specs(config: &Node) -> Vec<FieldSpec<'_>> {
    super::fields::specs_at(config, "fieldSpecs")
}

/// The namespace at a NamespaceTransformer's own field specs, beyond
/// `metadata/namespace` and binding subjects (which kustomize's filter sets
/// by hand): `spec/targetNamespace` of Flux Kustomizations, for one. With
/// `unsetOnly`, only a field that is empty (`SetEntryIfEmpty`).
pub(super) fn namespace_fields(acc: &mut [Res], specs: &[FieldSpec], ns: &str, unset_only: bool) {
    for r in acc.iter_mut() {
        let (group, kind) = (r.group(), r.kind());
        let binding = kind == "RoleBinding" || kind == "ClusterRoleBinding";
        for spec in specs.iter().filter(|s| s.applies(&group, &kind)) {
            if spec.path == "metadata/namespace" || (binding && spec.path == "subjects") {
                continue;
            }
            super::fields::visit(&mut r.node, spec.path, spec.create, &mut |target| {
                let empty = match &target.value {
                    Value::Null => true,
                    Value::String(s) => s.is_empty(),
                    Value::Map(m) => m.is_empty(),
                    _ => false,
                };
                if empty || (!unset_only && matches!(target.value, Value::String(_))) {
                    target.value = Value::String(ns.to_string());
                }
            });
        }
    }
}

/// Runs one `transformers:` entry.
pub fn transform(cx: &Cx, acc: &mut Vec<Res>, entry: &Entry) -> Result<(), Error> {
    let at = format!("{}:{}", cx.file, entry.line);
    for config in configs(cx, entry)? {
        let kind = builtin_kind(&config, &at)?;
        let specs = field_specs(&config);
        match kind.as_str() {
            "LabelTransformer" => {
                let pairs = transform::pairs(config.get("labels"));
                transform::set_all(acc, &specs, &pairs);
            }
            "AnnotationsTransformer" => {
                let pairs = transform::pairs(config.get("annotations"));
                transform::set_all(acc, &specs, &pairs);
            }
            "NamespaceTransformer" => namespace_transformer(cx, acc, entry, &config, &specs)?,
            "PrefixSuffixTransformer" | "PrefixTransformer" | "SuffixTransformer" => {
                affix_transformer(acc, &config, &specs);
            }
            "ImageTagTransformer" => {
                if !specs.is_empty()
                    && !specs
                        .iter()
                        .all(|s| s.path.contains("containers") && s.path.ends_with("image"))
                {
                    return Err(Error::unsupported(format!(
                        "ImageTagTransformer with fieldSpecs outside containers in {at} (the native renderer implements its default image locations; use --renderer kustomize or auto)"
                    )));
                }
                if let Some(tag) = config.get("imageTag") {
                    transform::images(acc, tag)
                        .map_err(|e| Error::at(cx.file, entry.line, format!("{e}")))?;
                }
            }
            "ReplicaCountTransformer" => {
                let kinds: Vec<&str> = specs
                    .iter()
                    .filter(|s| s.path == "spec/replicas")
                    .filter_map(|s| s.kind)
                    .collect();
                if let Some(replica) = config.get("replica") {
                    transform::replicas(acc, replica, &kinds)
                        .map_err(|e| Error::at(cx.file, entry.line, format!("{e}")))?;
                }
            }
            "PatchTransformer" => transform::patch_entry(cx, acc, &config)?,
            "PatchStrategicMergeTransformer" => {
                for path in config.get("paths").map(Node::as_seq).unwrap_or_default() {
                    transform::strategic_merge_entry(cx, acc, path)?;
                }
                if let Some(patches) = config.get("patches") {
                    transform::strategic_merge_entry(cx, acc, patches)?;
                }
            }
            "PatchJson6902Transformer" => {
                if config.str_at(&["target", "name"]).is_none() {
                    return Err(Error::at(cx.file, entry.line, "plugin PatchJson6902Transformer fails configuration: must specify the target name".to_string()));
                }
                transform::json6902_entry(cx, acc, &config, config.get("jsonOp"))?;
            }
            "ReplacementTransformer" => {
                let replacements = config
                    .get("replacements")
                    .map(|r| r.as_seq().to_vec())
                    .unwrap_or_default();
                generate::replacements(acc, &replacements, cx.tree, cx.dir, cx.file)?;
            }
            other => {
                return Err(Error::unsupported(format!(
                    "builtin transformer {other} in {at} (the native renderer does not implement it; use --renderer kustomize or auto)"
                )));
            }
        }
    }
    Ok(())
}

/// A NamespaceTransformer config: its namespace set on the objects (only
/// those without one, with `unsetOnly`) and at its own field specs, its
/// binding subjects as `setRoleBindingSubjects` says.
fn namespace_transformer(
    cx: &Cx,
    acc: &mut Vec<Res>,
    entry: &Entry,
    config: &Node,
    specs: &[FieldSpec],
) -> Result<(), Error> {
    let Some(ns) = config
        .str_at(&["metadata", "namespace"])
        .filter(|n| !n.is_empty())
    else {
        return Ok(());
    };
    let subjects = match config.str_at(&["setRoleBindingSubjects"]).as_deref() {
        None | Some("" | "defaultOnly") => transform::Subjects::DefaultOnly,
        Some("allServiceAccounts") => transform::Subjects::AllServiceAccounts,
        Some("none") => transform::Subjects::None,
        Some(other) => {
            return Err(Error::at(
                cx.file,
                entry.line,
                format!(
                    "invalid value for setRoleBindingSubjects: {other:?} (kustomize accepts defaultOnly, allServiceAccounts, none)"
                ),
            ));
        }
    };
    let unset_only = config.get("unsetOnly").and_then(Node::as_bool) == Some(true);
    if unset_only {
        let mut unset: Vec<Res> = Vec::new();
        let mut kept: Vec<Res> = Vec::new();
        for r in acc.drain(..) {
            if r.namespace().is_empty() {
                unset.push(r);
            } else {
                kept.push(r);
            }
        }
        transform::namespace_with(&mut unset, &ns, subjects)?;
        acc.extend(kept);
        acc.extend(unset);
    } else {
        transform::namespace_with(acc, &ns, subjects)?;
    }
    namespace_fields(acc, specs, &ns, unset_only);
    Ok(())
}

/// A PrefixSuffixTransformer (or PrefixTransformer, SuffixTransformer)
/// config: its prefix and suffix on the names of the kinds its
/// `metadata/name` field specs select (none: nothing renamed).
fn affix_transformer(acc: &mut Vec<Res>, config: &Node, specs: &[FieldSpec]) {
    if !specs.iter().any(|s| s.path == "metadata/name") {
        return; // no field spec: nothing renamed
    }
    let names_kinds: Vec<Option<&str>> = specs
        .iter()
        .filter(|s| s.path == "metadata/name")
        .map(|s| s.kind)
        .collect();
    let all = names_kinds.contains(&None);
    let mut selected: Vec<Res> = Vec::new();
    let mut rest: Vec<Res> = Vec::new();
    for r in acc.drain(..) {
        if all || names_kinds.contains(&Some(r.kind().as_str())) {
            selected.push(r);
        } else {
            rest.push(r);
        }
    }
    if let Some(prefix) = config.str_at(&["prefix"]).filter(|p| !p.is_empty()) {
        transform::affix(&mut selected, &prefix, true);
    }
    if let Some(suffix) = config.str_at(&["suffix"]).filter(|p| !p.is_empty()) {
        transform::affix(&mut selected, &suffix, false);
    }
    acc.extend(selected);
    acc.extend(rest);
}

/// Runs one `generators:` entry: ConfigMapGenerator and SecretGenerator
/// configs (the generated name defaults to the config's metadata.name, its
/// namespace to the config's metadata.namespace).
pub fn generate(cx: &Cx, entry: &Entry, origin: &str) -> Result<Vec<Generated>, Error> {
    let at = format!("{}:{}", cx.file, entry.line);
    let mut out = Vec::new();
    for mut config in configs(cx, entry)? {
        let kind = builtin_kind(&config, &at)?;
        let generated = match kind.as_str() {
            "ConfigMapGenerator" => "ConfigMap",
            "SecretGenerator" => "Secret",
            other => {
                return Err(Error::unsupported(format!(
                    "builtin generator {other} in {at} (the native renderer implements ConfigMapGenerator and SecretGenerator; use --renderer kustomize or auto)"
                )));
            }
        };
        for field in ["name", "namespace"] {
            if config.str_at(&[field]).is_none()
                && let Some(v) = config.str_at(&["metadata", field])
            {
                config.set(field, Node::new(Value::String(v)));
            }
        }
        out.push(generate::generate(
            &config, generated, None, cx.tree, cx.dir, cx.file, origin,
        )?);
    }
    Ok(out)
}
