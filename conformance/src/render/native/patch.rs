//! Patches: strategic merge (kyaml merge2 semantics, with the merge keys of
//! built-in Kubernetes types) and JSON 6902, and kustomize's target
//! selectors.

use std::path::Path;

use super::{Res, is_cluster_scoped};
use crate::yaml::{self, Node, Value};

/// One parsed patch.
#[derive(Debug, Clone)]
pub enum Patch {
    Strategic(Vec<Node>),
    Json(Vec<Node>),
}

/// Parses patch text as kustomize does: both as strategic merge documents
/// and as a JSON 6902 operation list; exactly one must succeed.
pub fn parse(text: &str, what: &str) -> Result<Patch, String> {
    let docs = yaml::parse_documents(text).map_err(|e| format!("{what}: {e}"))?;
    let is_json = docs.len() == 1 && matches!(docs[0].value, Value::Seq(_));
    if is_json {
        let ops = docs[0].as_seq().to_vec();
        if ops
            .iter()
            .all(|op| op.get("op").is_some() && op.get("path").is_some())
        {
            return Ok(Patch::Json(ops));
        }
        return Err(format!("unable to parse SM or JSON patch from {what}"));
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
            ));
        }
        out.push(doc);
    }
    Ok(Patch::Strategic(out))
}

/// A `target:` selector (fields are anchored regexes).
#[derive(Debug, Clone, Default)]
pub struct Selector {
    group: Option<regex::Regex>,
    version: Option<regex::Regex>,
    kind: Option<regex::Regex>,
    name: Option<regex::Regex>,
    namespace: Option<regex::Regex>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

impl Selector {
    pub fn parse(node: &Node) -> Result<Selector, String> {
        let re = |key: &str| -> Result<Option<regex::Regex>, String> {
            match node.str_at(&[key]).filter(|s| !s.is_empty()) {
                None => Ok(None),
                Some(p) => regex::Regex::new(&format!("^(?:{p})$"))
                    .map(Some)
                    .map_err(|e| format!("target {key} `{p}` is not a valid regex: {e}")),
            }
        };
        Ok(Selector {
            group: re("group")?,
            version: re("version")?,
            kind: re("kind")?,
            name: re("name")?,
            namespace: re("namespace")?,
            labels: parse_label_selector(node.str_at(&["labelSelector"]).as_deref())?,
            annotations: parse_label_selector(node.str_at(&["annotationSelector"]).as_deref())?,
        })
    }

    pub fn matches(&self, r: &Res) -> bool {
        let id = r.id();
        let original = r.original();
        let ok = |re: &Option<regex::Regex>, value: &str| {
            re.as_ref().is_none_or(|re| re.is_match(value))
        };
        let effective_ns = |ns: &str| {
            if is_cluster_scoped(&r.api_version(), &r.kind()) {
                "_non_namespaceable_".to_string()
            } else if ns.is_empty() {
                "default".to_string()
            } else {
                ns.to_string()
            }
        };
        ok(&self.group, &id.group)
            && ok(&self.version, &id.version)
            && ok(&self.kind, &id.kind)
            && (ok(&self.name, &id.name) || ok(&self.name, &original.name))
            && (ok(&self.namespace, &effective_ns(&id.namespace))
                || ok(&self.namespace, &effective_ns(&original.namespace)))
            && selector_matches(&self.labels, r.node.path(&["metadata", "labels"]))
            && selector_matches(&self.annotations, r.node.path(&["metadata", "annotations"]))
    }
}

/// One requirement of a Kubernetes label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    Exists(String),
    NotExists(String),
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// Kubernetes label selector syntax (labels.Parse): `a=b`, `a==b`, `a!=b`,
/// `a`, `!a`, `a in (x,y)`, `a notin (x,y)`, comma-separated.
fn parse_label_selector(text: Option<&str>) -> Result<Vec<Requirement>, String> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    // Split on commas outside parentheses.
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    let mut out = Vec::new();
    for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        let set = |rest: &str| -> Result<Vec<String>, String> {
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| format!("selector `{part}`: expected a (value, …) list"))?;
            Ok(inner
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect())
        };
        let words: Vec<&str> = part.split_whitespace().collect();
        let requirement = if let Some(key) = part.strip_prefix('!') {
            Requirement::NotExists(key.trim().to_string())
        } else if words.len() >= 2 && words[1] == "in" {
            Requirement::In(
                words[0].to_string(),
                set(part.split_once(" in ").map_or("", |x| x.1))?,
            )
        } else if words.len() >= 2 && words[1] == "notin" {
            Requirement::NotIn(
                words[0].to_string(),
                set(part.split_once(" notin ").map_or("", |x| x.1))?,
            )
        } else if let Some((k, v)) = part.split_once("!=") {
            Requirement::NotEquals(k.trim().to_string(), v.trim().to_string())
        } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
            Requirement::Equals(k.trim().to_string(), v.trim().to_string())
        } else {
            Requirement::Exists(part.to_string())
        };
        out.push(requirement);
    }
    Ok(out)
}

fn selector_matches(want: &[Requirement], have: Option<&Node>) -> bool {
    let value = |k: &str| have.and_then(|m| m.get(k)).and_then(Node::as_scalar_string);
    want.iter().all(|r| match r {
        Requirement::Exists(k) => value(k).is_some(),
        Requirement::NotExists(k) => value(k).is_none(),
        Requirement::Equals(k, v) => value(k).as_deref() == Some(v.as_str()),
        Requirement::NotEquals(k, v) => value(k).as_deref() != Some(v.as_str()),
        Requirement::In(k, vs) => value(k).is_some_and(|x| vs.contains(&x)),
        Requirement::NotIn(k, vs) => value(k).is_none_or(|x| !vs.contains(&x)),
    })
}

/// Applies one strategic merge patch document to a resource.
pub fn apply_strategic(
    target: &mut Res,
    patch: &Node,
    allow_name_change: bool,
    allow_kind_change: bool,
) -> Result<(), String> {
    let kind = target.kind();
    let name = target.name();
    let namespace = target.node.path(&["metadata", "namespace"]).cloned();
    if allow_name_change || allow_kind_change {
        target.store_previous();
    }
    let group = target.group();
    let builtin = crate::provenance::builtin_kind(&group, &kind).is_some()
        && !(group == "autoscaling" && target.api_version().ends_with("/v2"));
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

fn merge(target: &mut Node, patch: &Node, ctx: &MergeCtx) -> Result<(), String> {
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
                Some(other) => return Err(format!("unknown patch strategy '{other}'")),
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
            ))
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
) -> Result<(), String> {
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

/// Applies JSON 6902 operations.
pub fn apply_json(target: &mut Res, ops: &[Node]) -> Result<(), String> {
    let mut doc = target.node.to_json();
    for op in ops {
        let name = op.str_at(&["op"]).unwrap_or_default();
        let path = op.str_at(&["path"]).unwrap_or_default();
        let value = op
            .get("value")
            .map_or(serde_json::Value::Null, Node::to_json);
        match name.as_str() {
            "add" => add(&mut doc, &path, value)?,
            "remove" => {
                remove(&mut doc, &path)?;
            }
            "replace" => {
                if path.is_empty() {
                    doc = value;
                } else {
                    replace(&mut doc, &path, value)?;
                }
            }
            "move" | "copy" => {
                let from = op.str_at(&["from"]).unwrap_or_default();
                let moved = if name == "move" {
                    remove(&mut doc, &from)?
                } else {
                    get(&doc, &from)
                        .cloned()
                        .ok_or_else(|| format!("copy from {from}: doc is missing path"))?
                };
                add(&mut doc, &path, moved)?;
            }
            "test" => {
                if get(&doc, &path) != Some(&value) {
                    return Err(format!("test operation for path {path} failed"));
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    target.node = merge_lines(Node::from_json(&doc), &target.node);
    Ok(())
}

/// Keeps the original lines where the structure is unchanged.
fn merge_lines(mut new: Node, old: &Node) -> Node {
    new.line = old.line;
    if let (Value::Map(entries), Value::Map(_)) = (&mut new.value, &old.value) {
        for (k, v) in entries.iter_mut() {
            if let Some(o) = old.get(k) {
                *v = merge_lines(std::mem::replace(v, Node::new(Value::Null)), o);
            }
        }
    }
    new
}

fn tokens(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    if !path.starts_with('/') {
        return Err(format!("invalid JSON pointer `{path}`"));
    }
    Ok(path[1..]
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn get<'a>(doc: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    let mut cur = doc;
    for t in tokens(path).ok()? {
        cur = match cur {
            serde_json::Value::Object(m) => m.get(&t)?,
            serde_json::Value::Array(a) => a.get(index(&t, a.len()).ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn index(token: &str, len: usize) -> Result<usize, String> {
    let i: i64 = token
        .parse()
        .map_err(|_| format!("invalid array index `{token}`"))?;
    let i = if i < 0 { len as i64 + i } else { i };
    if i < 0 {
        return Err(format!("array index `{token}` out of bounds"));
    }
    Ok(i as usize)
}

fn parent<'a>(
    doc: &'a mut serde_json::Value,
    path: &str,
) -> Result<(&'a mut serde_json::Value, String), String> {
    let mut toks = tokens(path)?;
    let last = toks
        .pop()
        .ok_or_else(|| "cannot operate on the document root".to_string())?;
    let mut cur = doc;
    for t in toks {
        cur = match cur {
            serde_json::Value::Object(m) => m
                .get_mut(&t)
                .ok_or_else(|| format!("doc is missing path: {path}"))?,
            serde_json::Value::Array(a) => {
                let i = index(&t, a.len())?;
                a.get_mut(i)
                    .ok_or_else(|| format!("doc is missing path: {path}"))?
            }
            _ => return Err(format!("doc is missing path: {path}")),
        };
    }
    Ok((cur, last))
}

fn add(doc: &mut serde_json::Value, path: &str, value: serde_json::Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (p, last) = parent(doc, path)?;
    match p {
        serde_json::Value::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        serde_json::Value::Array(a) => {
            let i = if last == "-" {
                a.len()
            } else {
                index(&last, a.len())?
            };
            if i > a.len() {
                return Err(format!(
                    "add operation does not apply: index out of bounds at {path}"
                ));
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(format!(
            "add operation does not apply: doc is missing path: {path}"
        )),
    }
}

fn remove(doc: &mut serde_json::Value, path: &str) -> Result<serde_json::Value, String> {
    let (p, last) = parent(doc, path)?;
    match p {
        serde_json::Value::Object(m) => m
            .remove(&last)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {last}")),
        serde_json::Value::Array(a) => {
            let i = index(&last, a.len())?;
            if i >= a.len() {
                return Err(format!(
                    "remove operation does not apply: index out of bounds at {path}"
                ));
            }
            Ok(a.remove(i))
        }
        _ => Err(format!(
            "remove operation does not apply: doc is missing path: {path}"
        )),
    }
}

fn replace(
    doc: &mut serde_json::Value,
    path: &str,
    value: serde_json::Value,
) -> Result<(), String> {
    let (p, last) = parent(doc, path)?;
    match p {
        // evanphx/json-patch v4 lets replace create a missing key.
        serde_json::Value::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        serde_json::Value::Array(a) => {
            let i = index(&last, a.len())?;
            let slot = a.get_mut(i).ok_or_else(|| {
                format!("replace operation does not apply: index out of bounds at {path}")
            })?;
            *slot = value;
            Ok(())
        }
        _ => Err(format!(
            "replace operation does not apply: doc is missing path: {path}"
        )),
    }
}

/// Reads a patch file relative to the kustomization directory.
pub fn read_patch_file(
    dir: &Path,
    rel_file: &Path,
    path: &str,
    line: u32,
) -> Result<String, String> {
    std::fs::read_to_string(dir.join(path))
        .map_err(|e| format!("{}:{line}: patch file {path}: {e}", rel_file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_documents;

    #[test]
    fn label_selectors_follow_kubernetes_syntax() {
        let labels = parse_documents("a: x\nb: y\n").unwrap().remove(0);
        let matches =
            |sel: &str| selector_matches(&parse_label_selector(Some(sel)).unwrap(), Some(&labels));
        assert!(matches("a=x"));
        assert!(matches("a==x,b"));
        assert!(matches("a!=z"));
        assert!(matches("c!=z"));
        assert!(matches("!c"));
        assert!(!matches("!a"));
        assert!(matches("a in (x, q)"));
        assert!(!matches("a in (q)"));
        assert!(matches("a notin (q),c notin (true)"));
        assert!(!matches("b notin (y)"));
        assert!(parse_label_selector(Some("a in x")).is_err());
    }
}
