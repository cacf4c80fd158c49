//! Strategic merge patches, as kyaml's merge2 applies them, with the merge
//! keys of built-in Kubernetes types.

use super::super::Res;
use crate::render::Error;
use crate::yaml::{Node, Value};

/// Applies one strategic merge patch document to a resource.
pub fn apply_strategic(
    target: &mut Res,
    patch: &Node,
    allow_name_change: bool,
    allow_kind_change: bool,
) -> Result<(), Error> {
    let kind = target.kind();
    let name = target.name();
    let namespace = target.node.path(&["metadata", "namespace"]).cloned();
    if allow_name_change || allow_kind_change {
        target.store_previous();
    }
    let group = target.group();
    let builtin = crate::builtin::builtin_kind(&group, &kind).is_some()
        && !(group == "autoscaling" && target.api_version().ends_with("/v2"));
    // kyaml's merge leaves the object as it is for `$patch: replace` at the
    // top of a patch document (only nested replaces take effect).
    if patch.str_at(&["$patch"]).as_deref() == Some("replace") {
        return Ok(());
    }
    let mut patch = patch.clone();
    // The patch takes the target's apiVersion (kustomize copies it over).
    patch.remove("apiVersion");
    merge(
        &mut target.node,
        &patch,
        &MergeCtx {
            builtin,
            kind: &kind,
            path: Vec::new(),
        },
    )?;
    if matches!(target.node.value, Value::Null) {
        return Ok(()); // `$patch: delete` at the top: the object goes
    }
    if !allow_kind_change {
        target.node.set("kind", Node::new(Value::String(kind)));
    }
    if !allow_name_change {
        target.set_name(&name);
    }
    let metadata = target.node.map_entry("metadata");
    match namespace {
        Some(ns) => metadata.set("namespace", ns),
        None => {
            metadata.remove("namespace");
        }
    }
    Ok(())
}

struct MergeCtx<'a> {
    builtin: bool,
    kind: &'a str,
    path: Vec<String>,
}

impl MergeCtx<'_> {
    fn child(&self, key: &str) -> MergeCtx<'_> {
        let mut path = self.path.clone();
        path.push(key.to_string());
        MergeCtx {
            builtin: self.builtin,
            kind: self.kind,
            path,
        }
    }

    /// The merge keys of the list at this path, when the built-in schema
    /// says it merges (kustomize's 1.21 OpenAPI); `Some(vec![])` for a
    /// primitive list merged as a set.
    fn merge_keys(&self) -> Option<Vec<&'static str>> {
        if !self.builtin {
            return None;
        }
        let field = self.path.last()?.as_str();
        let parent = self.path.iter().rev().nth(1).map(String::as_str);
        Some(match field {
            "containers"
            | "initContainers"
            | "ephemeralContainers"
            | "imagePullSecrets"
            | "env"
            | "volumes" => vec!["name"],
            "ports" if self.kind == "Service" && parent == Some("spec") => vec!["port", "protocol"],
            "ports" => vec!["containerPort", "protocol"],
            "volumeMounts" => vec!["mountPath"],
            "volumeDevices" => vec!["devicePath"],
            "hostAliases" => vec!["ip"],
            "ownerReferences" => vec!["uid"],
            "topologySpreadConstraints" => vec!["topologyKey", "whenUnsatisfiable"],
            "conditions" => vec!["type"],
            "secrets" if self.kind == "ServiceAccount" => vec!["name"],
            "webhooks" => vec!["name"],
            "finalizers" | "podCIDRs" => vec![],
            _ => return None,
        })
    }
}

fn is_null(node: &Node) -> bool {
    matches!(node.value, Value::Null)
}

fn merge(target: &mut Node, patch: &Node, ctx: &MergeCtx) -> Result<(), Error> {
    let target_is_null = is_null(target);
    let target_shape = shape(target);
    match (&mut target.value, &patch.value) {
        (Value::Map(_), Value::Map(pentries)) => {
            match patch.str_at(&["$patch"]).as_deref() {
                None | Some("merge") => {}
                Some("replace") => {
                    let mut replacement = patch.clone();
                    replacement.remove("$patch");
                    *target = replacement;
                    return Ok(());
                }
                Some("delete") => {
                    target.value = Value::Null;
                    return Ok(());
                }
                Some(other) => return Err(format!("unknown patch strategy '{other}'").into()),
            }
            for (key, pvalue) in pentries {
                if key == "$patch" {
                    continue;
                }
                if is_null(pvalue) {
                    target.remove(key);
                    continue;
                }
                let child_ctx = ctx.child(key);
                match target.get(key) {
                    None => {
                        let mut value = pvalue.clone();
                        strip_directives(&mut value);
                        target.set(key, value);
                    }
                    Some(_) => {
                        if let Value::Map(entries) = &mut target.value
                            && let Some((_, slot)) = entries.iter_mut().find(|(k, _)| k == key)
                        {
                            merge(slot, pvalue, &child_ctx)?;
                            if is_null(slot) {
                                target.remove(key);
                            }
                        }
                    }
                }
            }
            Ok(())
        }
        (Value::Seq(_), Value::Seq(pitems)) => {
            match ctx.merge_keys() {
                Some(keys) if keys.is_empty() => {
                    // A primitive list with strategy merge: union.
                    if let Value::Seq(items) = &mut target.value {
                        for p in pitems {
                            if !items.iter().any(|i| i.value == p.value) {
                                items.push(p.clone());
                            }
                        }
                    }
                    Ok(())
                }
                Some(keys) => merge_keyed(target, pitems, &keys, ctx),
                None => {
                    *target = patch.clone();
                    Ok(())
                }
            }
        }
        (Value::Map(_) | Value::Seq(_), _) | (_, Value::Map(_) | Value::Seq(_))
            if !target_is_null =>
        {
            Err(format!(
                "wrong node kind at {}: cannot merge a {} into a {}",
                ctx.path.join("."),
                shape(patch),
                target_shape
            )
            .into())
        }
        _ => {
            let mut value = patch.clone();
            strip_directives(&mut value);
            *target = value;
            Ok(())
        }
    }
}

fn shape(n: &Node) -> &'static str {
    match n.value {
        Value::Map(_) => "mapping",
        Value::Seq(_) => "list",
        _ => "scalar",
    }
}

/// Removes `$patch: merge` markers from values copied in whole.
fn strip_directives(node: &mut Node) {
    if node.str_at(&["$patch"]).as_deref() == Some("merge")
        || node.str_at(&["$patch"]).as_deref() == Some("replace")
    {
        node.remove("$patch");
    }
    match &mut node.value {
        Value::Map(entries) => entries.iter_mut().for_each(|(_, v)| strip_directives(v)),
        Value::Seq(items) => items.iter_mut().for_each(strip_directives),
        _ => {}
    }
}

fn key_matches(item: &Node, patch: &Node, keys: &[&str]) -> bool {
    let mut any = false;
    for k in keys {
        let p = patch
            .get(k)
            .and_then(Node::as_scalar_string)
            .filter(|s| !s.is_empty());
        let i = item
            .get(k)
            .and_then(Node::as_scalar_string)
            .filter(|s| !s.is_empty());
        match (p, i) {
            (Some(p), Some(i)) if p != i => return false,
            (Some(_), Some(_)) => any = true,
            // A missing key value acts as a wildcard.
            _ => {}
        }
    }
    any
}

fn merge_keyed(
    target: &mut Node,
    pitems: &[Node],
    keys: &[&str],
    ctx: &MergeCtx,
) -> Result<(), Error> {
    // A lone {$patch: …} element directs the whole list.
    if let [only] = pitems
        && only.as_map().len() == 1
    {
        match only.str_at(&["$patch"]).as_deref() {
            Some("delete") => {
                target.value = Value::Seq(Vec::new());
                return Ok(());
            }
            Some("replace") => {
                target.value = Value::Seq(Vec::new());
                return Ok(());
            }
            _ => {}
        }
    }
    let Value::Seq(items) = &mut target.value else {
        return Ok(());
    };
    let mut merged: Vec<Node> = Vec::new();
    let mut used = vec![false; items.len()];
    for p in pitems {
        if p.as_map().len() == 1 && p.get("$patch").is_some() {
            continue;
        }
        let found = items
            .iter()
            .enumerate()
            .position(|(i, item)| !used[i] && key_matches(item, p, keys));
        let delete = p.str_at(&["$patch"]).as_deref() == Some("delete");
        match found {
            Some(i) => {
                used[i] = true;
                if delete {
                    continue;
                }
                let mut item = items[i].clone();
                merge(&mut item, p, ctx)?;
                merged.push(item);
            }
            None if delete => {}
            None => {
                let mut item = p.clone();
                strip_directives(&mut item);
                merged.push(item);
            }
        }
    }
    // Patched items first, in patch order; then the untouched ones.
    for (i, item) in items.iter().enumerate() {
        if !used[i] {
            merged.push(item.clone());
        }
    }
    *items = merged;
    Ok(())
}
