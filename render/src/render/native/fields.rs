//! Field specs: kustomize's `path/with/slashes` addresses into objects,
//! walked through lists, optionally creating missing maps.

use crate::yaml::{Node, Value};

/// Applies `f` to every node at `path` (segments separated by `/`; lists
/// along the way are walked item by item). With `create`, missing
/// intermediate maps and the final field are created (the final field as an
/// empty map, for `f` to fill).
pub fn visit(node: &mut Node, path: &str, create: bool, f: &mut dyn FnMut(&mut Node)) {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    walk(node, &segments, create, f);
}

fn walk(node: &mut Node, segments: &[&str], create: bool, f: &mut dyn FnMut(&mut Node)) {
    if let Value::Seq(items) = &mut node.value {
        for item in items {
            walk(item, segments, create, f);
        }
        return;
    }
    let Some((first, rest)) = segments.split_first() else {
        f(node);
        return;
    };
    if !node.is_map() {
        return;
    }
    if node.get(first).is_none() {
        // kustomize creates missing maps, never missing lists.
        if !create || LIST_FIELDS.contains(first) {
            return;
        }
        node.set(first, Node::new(Value::Map(Vec::new())));
    }
    if let Value::Map(entries) = &mut node.value
        && let Some((_, child)) = entries.iter_mut().find(|(k, _)| k == first)
    {
        if matches!(child.value, Value::Null) && create {
            child.value = Value::Map(Vec::new());
        }
        walk(child, rest, create, f);
    }
}

/// Fields that are lists in Kubernetes types: a field spec never creates them.
const LIST_FIELDS: &[&str] = &[
    "volumeClaimTemplates",
    "containers",
    "initContainers",
    "volumes",
    "ports",
    "env",
];

/// A field spec: an optional kind (and group) filter, a path, create.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldSpec<'a> {
    pub group: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub path: &'a str,
    pub create: bool,
}

impl<'a> FieldSpec<'a> {
    pub const fn any(path: &'a str, create: bool) -> FieldSpec<'a> {
        FieldSpec {
            group: None,
            kind: None,
            path,
            create,
        }
    }

    pub const fn kind(kind: &'a str, path: &'a str, create: bool) -> FieldSpec<'a> {
        FieldSpec {
            group: None,
            kind: Some(kind),
            path,
            create,
        }
    }

    pub const fn group_kind(
        group: &'a str,
        kind: &'a str,
        path: &'a str,
        create: bool,
    ) -> FieldSpec<'a> {
        FieldSpec {
            group: Some(group),
            kind: Some(kind),
            path,
            create,
        }
    }

    pub fn applies(&self, group: &str, kind: &str) -> bool {
        self.kind.is_none_or(|k| k == kind) && self.group.is_none_or(|g| g == group)
    }
}

/// Sets string entries into the map at each field spec (labels, annotations).
pub(crate) fn set_pairs(
    node: &mut Node,
    group: &str,
    kind: &str,
    specs: &[FieldSpec],
    pairs: &[(String, String)],
) {
    for spec in specs.iter().filter(|s| s.applies(group, kind)) {
        visit(node, spec.path, spec.create, &mut |target| {
            if matches!(target.value, Value::Null) {
                target.value = Value::Map(Vec::new());
            }
            if target.is_map() {
                for (k, v) in pairs {
                    target.set(k, Node::new(Value::String(v.clone())));
                }
            }
        });
    }
}

/// Field specs written under `key` (`fieldSpecs` in a transformer config,
/// `fields` in a kustomization's `labels` entry).
pub(crate) fn specs_at<'a>(config: &'a Node, key: &str) -> Vec<FieldSpec<'a>> {
    config
        .get(key)
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|s| {
            Some(FieldSpec {
                group: s.get("group").and_then(Node::as_str),
                kind: s.get("kind").and_then(Node::as_str),
                path: s.get("path").and_then(Node::as_str)?,
                create: s.get("create").and_then(Node::as_bool).unwrap_or(false),
            })
        })
        .collect()
}
