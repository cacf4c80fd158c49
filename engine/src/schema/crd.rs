//! Custom resources' schemas: the `openAPIV3Schema` of the version of a
//! CustomResourceDefinition (`spec.versions[].schema`, or the legacy
//! `spec.validation`), as the API server reads a structural schema.
//! Undeclared fields are pruned (unless `x-kubernetes-preserve-unknown-
//! fields`), so they are reported as unknown, not rejected.

use super::{Additional, Schema, Type};
use crate::yaml::{Node, Value};

/// The schema of `version` in a CRD, if it declares one.
pub(crate) fn version_schema(crd: &Node, version: &str) -> Option<Schema> {
    let versions = crd
        .path(&["spec", "versions"])
        .map(Node::as_seq)
        .unwrap_or_default();
    let node = versions
        .iter()
        .find(|v| v.str_at(&["name"]).as_deref() == Some(version))
        .and_then(|v| v.path(&["schema", "openAPIV3Schema"]))
        .or_else(|| crd.path(&["spec", "validation", "openAPIV3Schema"]))?;
    // apiVersion, kind and metadata are every object's, declared or not.
    let mut root = schema(node);
    root.embedded = true;
    Some(root)
}

/// An `openAPIV3Schema` node as a schema.
pub fn schema(n: &Node) -> Schema {
    let mut s = Schema {
        line: n.line,
        ..Default::default()
    };
    match n.get("type").map(|t| &t.value) {
        Some(Value::String(t)) => s.types.extend(Type::parse(t)),
        Some(Value::Seq(ts)) => s
            .types
            .extend(ts.iter().filter_map(|t| t.as_str().and_then(Type::parse))),
        _ => {}
    }
    for (k, p) in n.get("properties").map(Node::as_map).unwrap_or_default() {
        s.properties.insert(k.clone(), schema(p));
    }
    s.required = n
        .get("required")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::as_scalar_string)
        .collect();
    if let Some(items) = n.get("items")
        && items.is_map()
    {
        s.items = Some(Box::new(schema(items)));
    }
    s.additional = match n.get("additionalProperties").map(|a| &a.value) {
        Some(Value::Bool(true)) => Additional::Any,
        Some(Value::Map(_)) => Additional::Schema(Box::new(schema(
            n.get("additionalProperties").expect("matched"),
        ))),
        _ => Additional::Closed,
    };
    let flag = |k: &str| n.get(k).and_then(Node::as_bool) == Some(true);
    s.int_or_string = flag("x-kubernetes-int-or-string");
    s.preserve_unknown = flag("x-kubernetes-preserve-unknown-fields");
    s.embedded = flag("x-kubernetes-embedded-resource");
    s.enum_values = n
        .get("enum")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::as_scalar_string)
        .collect();
    // The API server's patterns are Go (RE2) regular expressions; one this
    // crate cannot compile is left unchecked.
    s.pattern = n
        .str_at(&["pattern"])
        .and_then(|p| regex::Regex::new(&crate::render::native::go_regex(&p)).ok());
    s.format = n.str_at(&["format"]);
    let uint = |k: &str| {
        n.get(k).and_then(|v| match v.value {
            Value::Int(i) if i >= 0 => Some(i as u64),
            _ => None,
        })
    };
    let float = |k: &str| {
        n.get(k).and_then(|v| match v.value {
            Value::Int(i) => Some(i as f64),
            Value::Float(f) => Some(f),
            _ => None,
        })
    };
    s.min_length = uint("minLength");
    s.max_length = uint("maxLength");
    s.min_items = uint("minItems");
    s.max_items = uint("maxItems");
    s.minimum = float("minimum");
    s.maximum = float("maximum");
    let list = |k: &str| {
        n.get(k)
            .map(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .map(schema)
            .collect::<Vec<_>>()
    };
    s.one_of = list("oneOf");
    s.any_of = list("anyOf");
    s.all_of = list("allOf");
    // An object with neither properties nor additionalProperties takes
    // anything only with x-kubernetes-preserve-unknown-fields; structurally
    // it is empty, but charts' and operators' CRDs that say nothing about a
    // subtree are common: treat such subtrees as open.
    if s.properties.is_empty() && matches!(s.additional, Additional::Closed) && !s.embedded {
        s.additional = Additional::Any;
    }
    s
}
