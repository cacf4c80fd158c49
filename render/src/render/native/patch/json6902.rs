//! JSON 6902 patches, with evanphx/json-patch's quirks (as kustomize uses
//! it).

use super::super::Res;
use crate::render::Error;
use crate::yaml::{Node, Value};

/// The `path` of an operation, decoded as evanphx/json-patch does: it
/// must be a string (`null`, a list or a mapping fail, with the message
/// that operation's decoder gives).
fn path_of(op: &Node, name: &str) -> Result<String, Error> {
    let strict = matches!(name, "replace" | "test" | "move");
    match op.get("path").map(|n| &n.value) {
        Some(Value::String(p)) => Ok(p.clone()),
        None | Some(Value::Null) if strict => Err(format!(
            "{name} operation failed to decode path: operation missing path field: missing value"
        )
        .into()),
        Some(other) if strict => {
            let what = match other {
                Value::Seq(_) => "array",
                Value::Map(_) => "object",
                Value::Bool(_) => "bool",
                _ => "number",
            };
            Err(format!(
                "{name} operation failed to decode path: json: cannot unmarshal {what} into Go value of type string"
            ).into())
        }
        _ => Err(format!("{name} operation failed to decode path: missing value").into()),
    }
}

/// Applies JSON 6902 operations. A result that is no longer a mapping is
/// dropped and the object kept as it was (kustomize's patch filter does the
/// same).
pub fn apply_json(target: &mut Res, ops: &[Node]) -> Result<(), Error> {
    // kustomize's PatchTransformer stores the previous id of every object a
    // JSON patch targets (`transformJson6902`), so references follow a
    // patched name or namespace.
    target.store_previous();
    let mut doc = target.node.to_json();
    // kustomize patches its resources with its internal annotations on
    // them (`config.kubernetes.io/…`, removed on output), so
    // `/metadata/annotations` always exists to a JSON patch: `add
    // /metadata/annotations/x` works on an object written without
    // annotations (and `/metadata/labels/x` does not).
    let annotations_added = match doc.get_mut("metadata") {
        Some(serde_json::Value::Object(m))
            if m.get("annotations").is_none_or(serde_json::Value::is_null) =>
        {
            m.insert(
                "annotations".into(),
                serde_json::Value::Object(serde_json::Map::new()),
            );
            true
        }
        _ => false,
    };
    for op in ops {
        let name = op.str_at(&["op"]).unwrap_or_default();
        let path = path_of(op, &name)?;
        let value = op
            .get("value")
            .map_or(serde_json::Value::Null, Node::to_json);
        let at_root = |what: &str| {
            Err(Error::from(format!(
                "{name} operation does not apply: doc is missing {what}path: {}: missing value",
                if what.is_empty() { "\"\"" } else { "" }
            )))
        };
        match name.as_str() {
            "add" if path.is_empty() => return at_root(""),
            "remove" if path.is_empty() => return at_root(""),
            "move" | "copy" if path.is_empty() => return at_root("destination "),
            "test" if path.is_empty() => {
                if doc != value {
                    return Err("testing value  failed: test failed".into());
                }
            }
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
                    get(&doc, &from).cloned().ok_or_else(|| {
                        Error::from(format!("copy from {from}: doc is missing path"))
                    })?
                };
                add(&mut doc, &path, moved)?;
            }
            "test" => {
                if get(&doc, &path) != Some(&value) {
                    return Err(format!("test operation for path {path} failed").into());
                }
            }
            other => return Err(format!("Unexpected kind: {other}").into()),
        }
    }
    if annotations_added
        && let Some(serde_json::Value::Object(m)) = doc.get_mut("metadata")
        && m.get("annotations")
            .is_some_and(|a| a.as_object().is_some_and(|o| o.is_empty()))
    {
        m.remove("annotations");
    }
    if doc.is_object() {
        target.node = merge_lines(Node::from_json(&doc), &target.node);
    }
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

fn tokens(path: &str) -> Result<Vec<String>, Error> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    if !path.starts_with('/') {
        return Err(format!("invalid JSON pointer `{path}`").into());
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

fn index(token: &str, len: usize) -> Result<usize, Error> {
    let i: i64 = token
        .parse()
        .map_err(|_| Error::from(format!("invalid array index `{token}`")))?;
    let i = if i < 0 { len as i64 + i } else { i };
    if i < 0 {
        return Err(format!("array index `{token}` out of bounds").into());
    }
    Ok(i as usize)
}

fn parent<'a>(
    doc: &'a mut serde_json::Value,
    path: &str,
) -> Result<(&'a mut serde_json::Value, String), Error> {
    let mut toks = tokens(path)?;
    let last = toks
        .pop()
        .ok_or_else(|| "cannot operate on the document root".to_string())?;
    let mut cur = doc;
    for t in toks {
        cur = match cur {
            serde_json::Value::Object(m) => m
                .get_mut(&t)
                .ok_or_else(|| Error::from(format!("doc is missing path: {path}")))?,
            serde_json::Value::Array(a) => {
                let i = index(&t, a.len())?;
                a.get_mut(i)
                    .ok_or_else(|| Error::from(format!("doc is missing path: {path}")))?
            }
            _ => return Err(format!("doc is missing path: {path}").into()),
        };
    }
    Ok((cur, last))
}

fn add(doc: &mut serde_json::Value, path: &str, value: serde_json::Value) -> Result<(), Error> {
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
                return Err(
                    format!("add operation does not apply: index out of bounds at {path}").into(),
                );
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(format!("add operation does not apply: doc is missing path: {path}").into()),
    }
}

fn remove(doc: &mut serde_json::Value, path: &str) -> Result<serde_json::Value, Error> {
    let (p, last) = parent(doc, path)?;
    match p {
        serde_json::Value::Object(m) => m
            .remove(&last)
            .ok_or_else(|| Error::from(format!("Unable to remove nonexistent key: {last}"))),
        serde_json::Value::Array(a) => {
            let i = index(&last, a.len())?;
            if i >= a.len() {
                return Err(format!(
                    "remove operation does not apply: index out of bounds at {path}"
                )
                .into());
            }
            Ok(a.remove(i))
        }
        _ => Err(format!("remove operation does not apply: doc is missing path: {path}").into()),
    }
}

fn replace(doc: &mut serde_json::Value, path: &str, value: serde_json::Value) -> Result<(), Error> {
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
        _ => Err(format!("replace operation does not apply: doc is missing path: {path}").into()),
    }
}

#[cfg(test)]
mod tests {
    use crate::repo::RepoIndex;

    /// The fixture `fixtures/kustomize/json6902-annotations-always-exist`
    /// (compared with `kubectl kustomize` by the differential test), built
    /// natively: `/metadata/annotations` exists to a JSON patch.
    #[test]
    fn metadata_annotations_always_exist_to_a_json_patch() {
        let dir = "fixtures/kustomize/json6902-annotations-always-exist";
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let read = |f: &str| std::fs::read_to_string(root.join(dir).join(f)).unwrap();
        let (k, r) = (read("kustomization.yaml"), read("resources.yaml"));
        let index = RepoIndex::from_memory(&[
            ("kustomization.yaml", k.as_str()),
            ("resources.yaml", r.as_str()),
        ]);
        let built =
            crate::render::build_directory(&crate::render::native::Native, &index, "").unwrap();
        let sa = built
            .iter()
            .find(|o| o.str_at(&["kind"]).as_deref() == Some("ServiceAccount"));
        assert_eq!(
            sa.and_then(|o| o.str_at(&[
                "metadata",
                "annotations",
                "iam.gke.io/gcp-service-account"
            ]))
            .as_deref(),
            Some("decrypter@example.iam.gserviceaccount.com")
        );
        let deployment = built
            .iter()
            .find(|o| o.str_at(&["kind"]).as_deref() == Some("Deployment"));
        assert!(deployment.is_some_and(|d| d.path(&["metadata", "annotations"]).is_none()));
        // A missing parent other than the annotations still fails the add.
        let index = RepoIndex::from_memory(&[
            (
                "kustomization.yaml",
                "resources: [r.yaml]\npatches:\n  - patch: |-\n      - op: add\n        path: /metadata/labels/x\n        value: v\n    target:\n      kind: ConfigMap\n",
            ),
            (
                "r.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
            ),
        ]);
        let err = crate::render::build_directory(&crate::render::native::Native, &index, "")
            .unwrap_err()
            .to_string();
        assert!(err.contains("doc is missing path"), "{err}");
    }
}
