//! Flux's build of one Kustomization, around a [`Kustomize`] backend.
//!
//! kustomize-controller edits the kustomization file of `spec.path` in its
//! own checkout (or generates one) and builds it. We never write into the
//! user's repository, so we build a wrapper kustomization in a private
//! temporary directory instead: its `resources` is `spec.path` (or the file
//! list Flux would generate), and it carries the fields Flux injects:
//! `spec.targetNamespace` as `namespace`, `spec.patches` and
//! `spec.components` appended, `spec.images`, `spec.namePrefix`/`nameSuffix`.
//! The wrapper asks kustomize for origin annotations, which map every object
//! back to the file it came from; they are removed afterwards.
//!
//! Known difference from editing in place: Flux's patches run in the same
//! kustomization as the user's own `namePrefix`/`namespace`, ours run after
//! them. A patch targeting an object by its pre-prefix name is the only case
//! where that shows.
//!
//! Before any backend runs, the files the build would read are checked: a YAML
//! error, a file Flux's generator cannot decode, a remote base (which Flux
//! would fetch from the network on every reconcile) or a path outside the
//! repository becomes a [`RenderFailure`] that points at the file and line.

use std::path::{Component, Path, PathBuf};

use super::Kustomize;
use super::native::relative;
pub use super::reach::{Reach, generated_resources, reach};
use crate::model::{Object, ObjectId, RenderFailure, Span, TierId};
use crate::repo::{self, RepoIndex};
use crate::yaml::{Node, Value};

const ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";

/// Builds the Kustomization `spec` (whose normalised `spec.path` is `path`) as
/// Flux would, returning the objects it applies.
pub fn build(
    index: &RepoIndex,
    tier: &TierId,
    path: &str,
    spec: &Node,
    kustomize: &dyn Kustomize,
) -> Result<Built, BuildError> {
    if !index.is_dir(path) {
        return Err(BuildError::Failed(RenderFailure {
            message: format!(
                "kustomization path not found: ./{path} (spec.path is relative to the source root)"
            ),
            at: None,
        }));
    }
    let mut reach = reach(index, path);
    for component in spec
        .path(&["spec", "components"])
        .map(Node::as_seq)
        .unwrap_or_default()
    {
        if let Some(c) = component.as_scalar_string().filter(|c| is_remote(c)) {
            reach.remotes.push((Span::new("", component.line), c));
        }
    }
    if !reach.remotes.is_empty() {
        return Err(BuildError::RemoteBases(reach.remotes));
    }
    precheck(index, &reach).map_err(BuildError::Failed)?;
    let objects = build_checked(index, tier, path, spec, kustomize).map_err(BuildError::Failed)?;
    Ok(Built {
        objects,
        files_read: reach.reads.len(),
        generator_inputs: reach.generator_inputs,
    })
}

/// A successful build: the objects, and what the build fed to generators.
#[derive(Debug)]
pub struct Built {
    pub objects: Vec<Object>,
    /// How many files the build reads.
    pub files_read: usize,
    /// Files read by configMapGenerator/secretGenerator, with where the
    /// kustomization names them.
    pub generator_inputs: Vec<(Span, String)>,
}

/// Why a Kustomization was not built.
#[derive(Debug)]
pub enum BuildError {
    /// The build fails as Flux's would.
    Failed(RenderFailure),
    /// The build needs remote bases (never fetched here): where each is
    /// written and its address. A `Span` with an empty file means the
    /// Flux Kustomization's own `spec.components`.
    RemoteBases(Vec<(Span, String)>),
}

fn build_checked(
    index: &RepoIndex,
    tier: &TierId,
    path: &str,
    spec: &Node,
    kustomize: &dyn Kustomize,
) -> Result<Vec<Object>, RenderFailure> {
    let own_kustomization = index.kustomization_file(path);
    let resources: Vec<String> = match &own_kustomization {
        Some(_) => vec![path.to_string()],
        None => {
            let generated = generated_resources(index, path);
            check_decodable(index, &generated)?;
            generated
        }
    };
    if resources.is_empty() {
        // Flux generates `namespace: _placeholder` and no resources: nothing to apply.
        return Ok(Vec::new());
    }

    let workdir = tempfile::Builder::new()
        .prefix("conformance-build-")
        .tempdir()
        .map_err(|err| internal(format!("cannot create a temporary directory: {err}")))?;
    let work = workdir
        .path()
        .canonicalize()
        .map_err(|err| internal(format!("cannot resolve the temporary directory: {err}")))?;
    let to_repo = relative(&work, index.root());
    let rel = |repo_path: &str| -> String {
        let joined = to_repo.join(repo_path);
        let text = joined.to_string_lossy().replace('\\', "/");
        if text.is_empty() { ".".into() } else { text }
    };

    let wrapper = wrapper_kustomization(spec, path, &resources, &rel);
    let text = serde_json::to_string_pretty(&wrapper.to_json())
        .map_err(|err| internal(format!("cannot serialise the wrapper kustomization: {err}")))?;
    std::fs::write(work.join("kustomization.yaml"), text)
        .map_err(|err| internal(format!("cannot write the wrapper kustomization: {err}")))?;

    let built = kustomize.build(&work).map_err(|message| RenderFailure {
        message: clean_message(&message, &work, index.root(), &to_repo),
        at: own_kustomization.clone().map(|file| Span::new(file, 0)),
    })?;

    let mut objects = Vec::with_capacity(built.len());
    for mut body in built {
        let source = take_origin(&mut body, &work, index);
        let Some(id) = ObjectId::of(&body) else {
            let what = ["apiVersion", "kind"]
                .into_iter()
                .find(|key| body.str_at(&[key]).is_none())
                .unwrap_or("metadata.name");
            return Err(RenderFailure {
                message: format!(
                    "an object has no {what}; Flux rejects the whole Kustomization when any object lacks apiVersion, kind or metadata.name"
                ),
                at: source,
            });
        };
        apply_common_metadata(&mut body, spec, tier);
        objects.push(Object { id, source, body });
    }
    Ok(objects)
}

fn internal(message: String) -> RenderFailure {
    RenderFailure { message, at: None }
}

/// The kustomization we build: the user's path (or Flux's generated list)
/// plus what Flux injects from the Kustomization spec.
fn wrapper_kustomization(
    spec: &Node,
    path: &str,
    resources: &[String],
    rel: &dyn Fn(&str) -> String,
) -> Node {
    let string = |s: String| Node::new(Value::String(s));
    let mut k = Node::new(Value::Map(Vec::new()));
    k.set(
        "apiVersion",
        string("kustomize.config.k8s.io/v1beta1".into()),
    );
    k.set("kind", string("Kustomization".into()));
    k.set(
        "resources",
        Node::new(Value::Seq(
            resources.iter().map(|r| string(rel(r))).collect(),
        )),
    );
    let spec_field = |key: &str| spec.path(&["spec", key]);
    if let Some(ns) = spec_field("targetNamespace").and_then(Node::as_scalar_string) {
        k.set("namespace", string(ns));
    }
    for key in ["namePrefix", "nameSuffix"] {
        if let Some(value) = spec_field(key).and_then(Node::as_scalar_string) {
            k.set(key, string(value));
        }
    }
    if let Some(patches) = spec_field("patches").filter(|p| !p.as_seq().is_empty()) {
        k.set("patches", patches.clone());
    }
    if let Some(images) = spec_field("images").filter(|p| !p.as_seq().is_empty()) {
        k.set("images", images.clone());
    }
    let components: Vec<Node> = spec_field("components")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::as_scalar_string)
        .map(|c| {
            if is_remote(&c) {
                string(c)
            } else {
                string(rel(&repo::normalize(path, &c).0))
            }
        })
        .collect();
    if !components.is_empty() {
        k.set("components", Node::new(Value::Seq(components)));
    }
    k.set(
        "buildMetadata",
        Node::new(Value::Seq(vec![string("originAnnotations".into())])),
    );
    k
}

/// `spec.commonMetadata` and the owner labels, merged into each object's
/// metadata as kustomize-controller does after the build.
fn apply_common_metadata(body: &mut Node, spec: &Node, tier: &TierId) {
    let metadata = body.map_entry("metadata");
    for (field, extra) in [
        ("labels", spec.path(&["spec", "commonMetadata", "labels"])),
        (
            "annotations",
            spec.path(&["spec", "commonMetadata", "annotations"]),
        ),
    ] {
        let Some(extra) = extra else { continue };
        let target = metadata.map_entry(field);
        for (key, value) in extra.as_map() {
            target.set(key, value.clone());
        }
    }
    let labels = metadata.map_entry("labels");
    labels.set(
        "kustomize.toolkit.fluxcd.io/name",
        Node::new(Value::String(tier.name.clone())),
    );
    labels.set(
        "kustomize.toolkit.fluxcd.io/namespace",
        Node::new(Value::String(tier.namespace.clone())),
    );
}

/// Removes the origin annotation and turns it into a repository span.
fn take_origin(body: &mut Node, work: &Path, index: &RepoIndex) -> Option<Span> {
    let kind = body.str_at(&["kind"]);
    let name = body.str_at(&["metadata", "name"]);
    let metadata = body.map_entry("metadata");
    let annotations = metadata.map_entry("annotations");
    let origin = annotations.remove(ORIGIN_ANNOTATION)?.as_scalar_string();
    if annotations.as_map().is_empty() {
        metadata.remove("annotations");
    }
    let origin = origin?;
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
    let absolute = lexical_join(work, &file_path);
    let rel = absolute
        .strip_prefix(index.root())
        .ok()?
        .to_string_lossy()
        .replace('\\', "/");
    if generated {
        // The generator entry in the kustomization file is the best place;
        // the backend's own output lines mean nothing here.
        let line = index
            .file(&rel)
            .and_then(|f| f.docs.as_ref().ok())
            .and_then(|docs| docs.first())
            .and_then(|doc| {
                doc.get("configMapGenerator")
                    .or_else(|| doc.get("secretGenerator"))
            })
            .map_or(0, |n| n.line);
        set_lines(body, line);
        return Some(Span::new(rel, line));
    }
    let line = match source_doc(index, &rel, kind.as_deref(), name.as_deref()) {
        Some(doc) => {
            adopt_lines(body, doc);
            doc.line
        }
        None => {
            set_lines(body, 0);
            0
        }
    };
    Some(Span::new(rel, line))
}

/// Gives every node the same line.
fn set_lines(node: &mut Node, line: u32) {
    node.line = line;
    match &mut node.value {
        Value::Map(entries) => entries.iter_mut().for_each(|(_, v)| set_lines(v, line)),
        Value::Seq(items) => items.iter_mut().for_each(|v| set_lines(v, line)),
        _ => {}
    }
}

/// The document in `file` that defines `kind`/`name` (names may have been
/// prefixed by the build, so fall back to the kind, then the first document).
fn source_doc<'a>(
    index: &'a RepoIndex,
    file: &str,
    kind: Option<&str>,
    name: Option<&str>,
) -> Option<&'a Node> {
    let docs = index.file(file)?.docs.as_ref().ok()?;
    let same_kind = |d: &&Node| d.str_at(&["kind"]).as_deref() == kind;
    let own_name = |d: &&Node| d.str_at(&["metadata", "name"]);
    docs.iter()
        .filter(same_kind)
        .find(|d| own_name(d).as_deref() == name)
        .or_else(|| {
            // A prefixed or suffixed name still contains the source's name.
            docs.iter()
                .filter(same_kind)
                .filter_map(|d| Some((d, own_name(&d)?)))
                .filter(|(_, own)| name.is_some_and(|n| n.contains(own.as_str())))
                .max_by_key(|(_, own)| own.len())
                .map(|(d, _)| d)
        })
        .or_else(|| docs.iter().find(same_kind))
        .or(docs.first())
}

/// Gives every node of a rendered object the line of the same node in its
/// source document (matched by key, and by index in sequences); a node the
/// build added takes its parent's line. The build's output has no useful
/// lines of its own.
fn adopt_lines(rendered: &mut Node, source: &Node) {
    rendered.line = source.line;
    let inherit = set_lines;
    match (&mut rendered.value, &source.value) {
        (Value::Map(entries), Value::Map(_)) => {
            for (key, child) in entries.iter_mut() {
                match source.get(key) {
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

/// Broken input the build would read, reported at its own file and line.
fn precheck(index: &RepoIndex, reach: &Reach) -> Result<(), RenderFailure> {
    if let Some((at, reference)) = reach.escapes.first() {
        return Err(RenderFailure {
            message: format!(
                "`{reference}` points outside the repository; Flux confines a build to its source"
            ),
            at: Some(at.clone()),
        });
    }
    if let Some(at) = reach.cycles.first() {
        return Err(RenderFailure {
            message: format!(
                "cyclic kustomization reference: {} includes itself",
                at.file
            ),
            at: Some(at.clone()),
        });
    }
    for file in &reach.reads {
        if let Some(Err(err)) = index.file(file).map(|f| &f.docs) {
            return Err(RenderFailure {
                message: err.to_string(),
                at: Some(Span::new(file.clone(), err.line().unwrap_or(0))),
            });
        }
    }
    Ok(())
}

/// Flux's generator decodes every file it lists and fails on a document
/// without `kind` or `metadata.name` (a `*List` needs no name).
fn check_decodable(index: &RepoIndex, files: &[String]) -> Result<(), RenderFailure> {
    for file in files {
        let Some(Ok(docs)) = index.file(file).map(|f| f.docs.as_ref()) else {
            continue;
        };
        for doc in docs {
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

/// kustomize's idea of a remote reference: a URL or a git address.
pub fn is_remote(reference: &str) -> bool {
    let r = reference.trim();
    r.contains("://")
        || r.starts_with("git@")
        || r.starts_with("git::")
        || r.starts_with("gh:")
        || r.starts_with("github.com/")
        || r.starts_with("github.com:")
        || r.starts_with("gitlab.com/")
        || r.starts_with("bitbucket.org/")
}

/// Error text from the backend names our temporary paths; make it name the
/// repository's.
fn clean_message(message: &str, work: &Path, root: &Path, to_repo: &Path) -> String {
    let mut text = message.to_string();
    let to_repo = to_repo.to_string_lossy();
    if !to_repo.is_empty() {
        text = text.replace(&format!("{to_repo}/"), "");
    }
    text = text.replace(&format!("{}/", root.display()), "");
    text.replace(&work.display().to_string(), "<flux build>")
}

/// Joins and resolves `.`/`..` without touching the file system.
fn lexical_join(base: &Path, rel: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for component in base.join(rel).components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_then_descend() {
        assert_eq!(
            relative(Path::new("/tmp/x"), Path::new("/work/repo")),
            PathBuf::from("../../work/repo")
        );
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/b/c")),
            PathBuf::from("c")
        );
    }

    #[test]
    fn remote_references_are_recognised() {
        assert!(is_remote("https://github.com/x/y//config?ref=v1"));
        assert!(is_remote(
            "github.com/kubernetes-csi/external-snapshotter/client/config/crd?ref=v8.2.0"
        ));
        assert!(is_remote("git@github.com:x/y.git"));
        assert!(!is_remote("../base"));
        assert!(!is_remote("./crds.yaml"));
    }
}
