//! Where each built object comes from: kustomize's origin annotation,
//! removed from the object and turned into a repository place (the file
//! and the line of its document), with the lines of the document adopted
//! by the rendered object.

use std::collections::HashMap;

use crate::model::Span;
use crate::repo::{self, Artifact};
use crate::yaml::{Node, Value};

const ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";

/// Removes the origin annotation and turns it into a repository span
/// (origins are relative to the build directory `dir`).
pub(super) fn take_origin(body: &mut Node, dir: &str, docs: &mut SourceDocs) -> Option<Span> {
    if !body.is_map() {
        return None;
    }
    let kind = body.str_at(&["kind"]);
    let name = body.str_at(&["metadata", "name"]);
    let group = body
        .str_at(&["apiVersion"])
        .map(|v| {
            v.split_once('/')
                .map_or(String::new(), |(g, _)| g.to_string())
        })
        .unwrap_or_default();
    let metadata = body.get("metadata").filter(|m| m.is_map())?;
    let origin = metadata
        .get("annotations")
        .and_then(|a| a.get(ORIGIN_ANNOTATION))
        .and_then(Node::as_scalar_string)?;
    let metadata = body.map_entry("metadata");
    let annotations = metadata.map_entry("annotations");
    annotations.remove(ORIGIN_ANNOTATION);
    if annotations.as_map().is_empty() {
        metadata.remove("annotations");
    }
    let field = |key: &str| {
        origin.lines().find_map(|line| {
            line.trim()
                .strip_prefix(key)
                .map(|rest| rest.trim().trim_matches('"').to_string())
        })
    };
    // Generated objects (ConfigMapGenerator, …) carry `configuredIn`.
    let (file_path, generated) = match (field("path:"), field("configuredIn:")) {
        (Some(p), _) => (p, false),
        (None, Some(p)) => (p, true),
        (None, None) => return None,
    };
    let (rel, escaped) = repo::normalize(dir, &file_path);
    if escaped {
        return None;
    }
    if generated {
        // The generator entry in the kustomization file is the best place;
        // the backend's own output lines mean nothing here.
        let line = docs
            .artifact
            .documents(&rel)
            .ok()
            .and_then(|d| {
                d.first().and_then(|doc| {
                    doc.get("configMapGenerator")
                        .or_else(|| doc.get("secretGenerator"))
                        .map(|n| n.line)
                })
            })
            .unwrap_or(0);
        body.set_lines(line);
        return Some(Span::new(rel, line));
    }
    let line = match docs.find(&rel, &group, kind.as_deref(), name.as_deref()) {
        Some(doc) => {
            adopt_lines(body, doc);
            doc.line
        }
        None => {
            body.set_lines(0);
            0
        }
    };
    Some(Span::new(rel, line))
}

/// The source documents of a build, indexed by file, kind and name on
/// first use (a file may hold thousands of objects).
pub(super) struct SourceDocs<'a> {
    artifact: &'a Artifact<'a>,
    by_file: HashMap<String, FileDocs<'a>>,
}

struct FileDocs<'a> {
    docs: std::borrow::Cow<'a, [Node]>,
    /// (group, kind, name) → the first document with them.
    by_name: HashMap<(String, String, String), usize>,
    /// kind → documents of that kind, in order.
    by_kind: HashMap<String, Vec<usize>>,
}

impl<'a> SourceDocs<'a> {
    pub(super) fn new(artifact: &'a Artifact<'a>) -> SourceDocs<'a> {
        SourceDocs {
            artifact,
            by_file: HashMap::new(),
        }
    }

    /// The document in `file` that defines `kind`/`name` (names may have
    /// been prefixed by the build, so fall back to the longest own name the
    /// built name contains, then the kind, then the first document).
    fn find(
        &mut self,
        file: &str,
        group: &str,
        kind: Option<&str>,
        name: Option<&str>,
    ) -> Option<&Node> {
        if !self.by_file.contains_key(file) {
            let docs = self.artifact.documents(file).ok()?;
            let mut by_name = HashMap::new();
            let mut by_kind: HashMap<String, Vec<usize>> = HashMap::new();
            for (i, d) in docs.iter().enumerate() {
                let k = d.str_at(&["kind"]).unwrap_or_default();
                let g = d
                    .str_at(&["apiVersion"])
                    .map(|v| {
                        v.split_once('/')
                            .map_or(String::new(), |(g, _)| g.to_string())
                    })
                    .unwrap_or_default();
                if let Some(n) = d.str_at(&["metadata", "name"]) {
                    by_name.entry((g, k.clone(), n)).or_insert(i);
                }
                by_kind.entry(k).or_default().push(i);
            }
            self.by_file.insert(
                file.to_string(),
                FileDocs {
                    docs,
                    by_name,
                    by_kind,
                },
            );
        }
        let f = self.by_file.get(file)?;
        let kind = kind.unwrap_or_default();
        let index = name
            .and_then(|n| {
                f.by_name
                    .get(&(group.to_string(), kind.to_string(), n.to_string()))
                    .copied()
            })
            .or_else(|| {
                let same_kind = f.by_kind.get(kind)?;
                let name = name?;
                same_kind
                    .iter()
                    .filter_map(|&i| Some((i, f.docs[i].str_at(&["metadata", "name"])?)))
                    .filter(|(_, own)| name.contains(own.as_str()))
                    .max_by_key(|(_, own)| own.len())
                    .map(|(i, _)| i)
            })
            .or_else(|| f.by_kind.get(kind).and_then(|v| v.first().copied()))
            .or((!f.docs.is_empty()).then_some(0))?;
        f.docs.get(index)
    }
}

/// Gives every node of a rendered object the line of the same node in its
/// source document (matched by key, and by index in sequences); a node the
/// build added takes its parent's line. The build's output has no useful
/// lines of its own.
pub(super) fn adopt_lines(rendered: &mut Node, source: &Node) {
    rendered.line = source.line;
    let inherit = Node::set_lines;
    match (&mut rendered.value, &source.value) {
        (Value::Map(entries), Value::Map(src_entries)) => {
            // Keys are looked up by hash once a mapping is large (a
            // ConfigMap may hold many thousands).
            let index: Option<HashMap<&str, &Node>> = (src_entries.len() > 16)
                .then(|| src_entries.iter().map(|(k, v)| (k.as_str(), v)).collect());
            for (key, child) in entries.iter_mut() {
                let src = match &index {
                    Some(index) => index.get(key.as_str()).copied(),
                    None => source.get(key),
                };
                match src {
                    Some(src) => adopt_lines(child, src),
                    None => inherit(child, source.line),
                }
            }
        }
        (Value::Seq(items), Value::Seq(src_items)) => {
            for (i, child) in items.iter_mut().enumerate() {
                match src_items.get(i) {
                    Some(src) => adopt_lines(child, src),
                    None => inherit(child, source.line),
                }
            }
        }
        (Value::Map(_) | Value::Seq(_), _) => inherit(rendered, source.line),
        _ => {}
    }
}
