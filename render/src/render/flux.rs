//! Flux's build of one Kustomization, around a [`Kustomize`] backend.
//!
//! kustomize-controller extracts the source artifact, then edits the
//! kustomization file of `spec.path` in its checkout, or generates one
//! (`GenerateManifest` and `findOrGenerateKustomization`, fluxcd/pkg
//! `kustomize_generator.go`), and builds it:
//!
//! * an existing file is decoded loosely (field names case-insensitively,
//!   unknown fields dropped) and written back with its known fields;
//! * `spec.targetNamespace` overwrites `namespace`, `spec.namePrefix` and
//!   `spec.nameSuffix` overwrite theirs, `spec.patches` and `spec.components`
//!   are appended (a component must be local and relative, and a missing
//!   one is dropped with `spec.ignoreMissingComponents`), `spec.images` are
//!   merged by name, `spec.buildMetadata` replaces `buildMetadata`;
//! * without a file, Flux lists every `.yaml`/`.yml` file below the path (a
//!   subdirectory with its own kustomization file is one resource), and
//!   every one must decode as Kubernetes objects.
//!
//! So Flux's fields run in the same transformer pass as the user's. We
//! never write into the user's repository: the edited file is written over
//! the artifact in memory ([`Tree::written`]). Both backends build that tree.
//! The build asks for origin annotations, which map every object back to the
//! file it came from; they are removed afterwards, and `spec.commonMetadata`
//! and the owner labels are set on each object, as `apply` does.
//!
//! Before any backend runs, the files the build would read are checked: a YAML
//! error, a file Flux's generator cannot decode, a remote base (which Flux
//! would fetch from the network on every reconcile) or a path outside the
//! source becomes a [`RenderFailure`] that points at the file and line.

use std::collections::HashMap;

pub use super::paths::is_remote;
use super::reach::reach_tree;
pub use super::reach::{Reach, generated_resources, reach};
use super::{Kustomize, Tree};
use crate::model::{Object, ObjectId, RenderFailure, Span, TierId};
use crate::repo::artifact::DocError;
use crate::repo::{self, Artifact, Kind};
use crate::yaml::{Node, Value};

const ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";

/// Builds the Kustomization `spec` (whose normalised `spec.path` is `path`) as
/// Flux would, returning the objects it applies.
pub fn build(
    artifact: &Artifact,
    tier: &TierId,
    path: &str,
    spec: &Node,
    kustomize: &dyn Kustomize,
    remote: Option<&crate::remote::Fetcher>,
) -> Result<Built, BuildError> {
    let failed =
        |message: String, at: Option<Span>| BuildError::Failed(RenderFailure { message, at });
    match artifact.stat(path) {
        Ok(Kind::Dir) => {}
        Ok(Kind::File) => {
            return Err(failed(
                format!(
                    "kustomization path ./{path} is a file; spec.path must name a directory of the source"
                ),
                None,
            ));
        }
        Ok(Kind::Unreadable(why)) => {
            return Err(failed(
                format!("kustomization path ./{path} cannot be read: {why}"),
                None,
            ));
        }
        Ok(Kind::Symlink) | Err(_) => {
            let why = match artifact.stat(path) {
                Err(
                    m @ (repo::Missing::Symlink
                    | repo::Missing::Ignored(_)
                    | repo::Missing::Outside),
                ) => {
                    format!(": {}", m.describe(&format!("./{path}")))
                }
                _ => match root_below(artifact, path) {
                    Some(dir) => format!(
                        " (spec.path is relative to the source root; it exists below {dir}/: if the artifact Flux builds from is {dir}/, check with --repo pointing there, or map the source under `sources` in conformance.yaml)"
                    ),
                    None => " (spec.path is relative to the source root)".to_string(),
                },
            };
            return Err(failed(
                format!("kustomization path not found: ./{path}{why}"),
                None,
            ));
        }
    }
    let written = flux_kustomization(artifact, path, spec)?;
    let mut tree = Tree::new(artifact);
    tree.written.insert(written.file.clone(), written.doc);
    let mut reach = reach_tree(&tree, path);
    // With --fetch-remote, what the build would download is fetched first
    // and mounted into the tree, round by round (a remote base may name
    // others), so the whole tier is built from what Flux would fetch.
    let mut fetch = Fetching::default();
    if let Some(fetcher) = remote {
        if kustomize.reads_mounts() {
            fetch.run(fetcher, &mut tree, &mut reach, path)?;
        } else if !reach.remotes.is_empty() {
            // An external kustomize fetches them itself, with git under
            // the same limits as ours, and only what passes our checks.
            if let Some(transports) = fetch.admit(fetcher, &reach.remotes)? {
                fetch.by_backend = true;
                tree.git = Some(transports);
            }
        }
    }
    // What is not fetched is left out. A backend that can leave it out
    // builds the local part, which is checked; what the remote part adds
    // stays unknown (the tier is then not fully known, and every
    // conclusion drawn from absence is hedged). If the local part does not
    // build on its own (a patch aimed at a remote object), the tier is not
    // checked, as before.
    let remote_bases = std::mem::take(&mut reach.remotes);
    if !remote_bases.is_empty() && !fetch.by_backend {
        if !kustomize.builds_local_part() {
            return Err(fetch.unbuilt(remote_bases));
        }
        tree.skip_remote = true;
    }
    precheck(&tree, &reach).map_err(|e| fetch.relocate_error(&tree, e))?;
    if written.generated {
        check_decodable(artifact, &reach.resources).map_err(BuildError::Failed)?;
    }
    let built = kustomize.build(&tree, path);
    if built.is_err() && !remote_bases.is_empty() {
        return Err(fetch.unbuilt(remote_bases));
    }
    let built = built.map_err(|err| {
        // The place the backend names (the native renderer says it, the
        // external program's message starts with it), when it is a file of
        // the build; else the kustomization.
        let message = err.to_string();
        let at = err
            .place()
            .filter(|(file, _)| blamable(&tree, file))
            .map(|(file, line)| Span::new(file.clone(), *line))
            .or_else(|| blamed_place(&tree, &message))
            .or_else(|| {
                let (file, _) = err.place()?;
                fetch.place_of(&tree, &Span::new(file.clone(), 0))
            })
            .or_else(|| (!written.generated).then(|| Span::new(written.file.clone(), 0)));
        let (message, at) = match spec_place(&written.file, &message) {
            // A `spec.patches` or `spec.components` entry of the Flux
            // Kustomization: its own file (filled in by discovery) and line.
            Some((line, message)) => (message, Some(Span::new("", line))),
            None => (message, at),
        };
        BuildError::Failed(RenderFailure {
            message: fetch.rewrite(&tree, &message),
            at,
        })
    })?;
    let mut lookup = SourceDocs::new(artifact);
    let mut objects = Vec::with_capacity(built.len());
    for mut body in built {
        let mut source = take_origin(&mut body, path, &mut lookup);
        if let Some(span) = source.as_ref().and_then(|s| fetch.place_of(&tree, s)) {
            source = Some(span); // from a fetched remote: where it is named
        }
        let Some(id) = ObjectId::of(&body).filter(|_| body.is_map()) else {
            let what = ["apiVersion", "kind"]
                .into_iter()
                .find(|key| body.str_at(&[key]).is_none())
                .unwrap_or("metadata.name");
            return Err(failed(
                format!(
                    "an object has no {what}; Flux rejects the whole Kustomization when any object lacks apiVersion, kind or metadata.name"
                ),
                source,
            ));
        };
        apply_common_metadata(&mut body, spec, tier);
        objects.push(Object { id, source, body });
    }
    let mut fetched = fetch.fetched;
    if fetch.by_backend {
        fetched.extend(remote_bases.iter().map(|(at, url)| crate::model::Fetched {
            at: at.clone(),
            reference: url.clone(),
            content: format!("by {}", kustomize.name()),
            stale: None,
            input: false,
        }));
    }
    let remote_bases = if fetch.by_backend {
        Vec::new()
    } else {
        remote_bases
    };
    let mut generator_inputs = reach.generator_inputs;
    generator_inputs.retain(|g| tree.in_mount(&g.file).is_none());
    Ok(Built {
        objects,
        files_read: reach.reads.len(),
        reads: reach.reads,
        generator_inputs,
        remote_inputs: reach.remote_inputs,
        dropped: written.dropped,
        remote_bases,
        fetched,
        fetch_failures: fetch.failures,
    })
}

/// The line offset that marks an entry Flux appended from the
/// Kustomization's `spec.patches` or `spec.components` to the kustomization
/// it writes: the backend reports `<written file>:<SPEC_LINE + line>`, which
/// is the line in the Flux Kustomization's own file.
const SPEC_LINE: u32 = 1 << 30;

/// A backend message that names an entry appended from the spec: that
/// entry's line in the Flux Kustomization's file, and the message saying
/// so instead of naming the written file.
fn spec_place(written: &str, message: &str) -> Option<(u32, String)> {
    let marker = format!("{written}:");
    let mut from = 0;
    while let Some(i) = message[from..].find(&marker) {
        let start = from + i;
        let digits_at = start + marker.len();
        let digits: String = message[digits_at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse::<u32>()
            && n >= SPEC_LINE
        {
            let line = n - SPEC_LINE;
            let place = if line > 0 {
                format!("the Flux Kustomization's spec (line {line})")
            } else {
                "the Flux Kustomization's spec (as a patch of the tier that applies it sets it)"
                    .to_string()
            };
            let text = format!(
                "{}{place}{}",
                &message[..start],
                &message[digits_at + digits.len()..]
            );
            return Some((line, text));
        }
        from = digits_at;
    }
    None
}

/// How many rounds of remote bases naming remote bases are fetched
/// (kustomize has no limit but its cycle check; ten is deeper than any
/// repository shows).
const FETCH_ROUNDS: usize = 10;

/// What `--fetch-remote` did for one build.
#[derive(Debug, Default)]
struct Fetching {
    fetched: Vec<crate::model::Fetched>,
    failures: Vec<(String, String)>,
    /// Every address tried, fetched or not.
    tried: std::collections::BTreeSet<String>,
    /// Mount prefix → where the repository (or an outer remote) names it.
    named_at: HashMap<String, Span>,
    /// The backend fetches for itself (an external kustomize).
    by_backend: bool,
}

impl Fetching {
    /// The build stops for the remote bases left out: what it had of them.
    fn unbuilt(self, left_out: Vec<(Span, String)>) -> BuildError {
        BuildError::RemoteBases(Box::new(RemotePart {
            left_out,
            fetched: self.fetched,
            failures: self.failures,
        }))
    }

    /// The transports an external program needs for `remotes`; `None`
    /// when one of them may not be handed to git for a reason that says
    /// nothing about Flux (it is then left out, and listed as not
    /// fetched); the build's failure when Flux's fetch would fail too.
    fn admit(
        &mut self,
        fetcher: &crate::remote::Fetcher,
        remotes: &[(Span, String)],
    ) -> Result<Option<crate::exec::Transports>, BuildError> {
        let mut transports = crate::exec::Transports::Network;
        for (at, reference) in remotes {
            match fetcher.admit(reference) {
                Ok(Some(t @ crate::exec::Transports::NetworkAndLocal)) => transports = t,
                Ok(_) => {}
                Err(failure) if failure.definitive => {
                    return Err(BuildError::Failed(RenderFailure {
                        message: format!(
                            "remote base {}: {}",
                            crate::exec::printable(reference),
                            failure.message
                        ),
                        at: Some(at.clone()),
                    }));
                }
                Err(failure) => {
                    self.failures.push((reference.clone(), failure.message));
                    return Ok(None);
                }
            }
        }
        Ok(Some(transports))
    }

    fn run(
        &mut self,
        fetcher: &crate::remote::Fetcher,
        tree: &mut Tree,
        reach: &mut Reach,
        path: &str,
    ) -> Result<(), BuildError> {
        for _ in 0..FETCH_ROUNDS {
            let bases: Vec<(Span, String, bool)> = reach
                .remotes
                .iter()
                .map(|(at, url)| (at.clone(), url.clone(), true))
                .chain(
                    reach
                        .remote_inputs
                        .iter()
                        .map(|(at, url)| (at.clone(), url.clone(), false)),
                )
                .filter(|(_, url, _)| !self.tried.contains(url.trim()))
                .collect();
            if bases.is_empty() {
                break;
            }
            for (at, url, is_base) in bases {
                self.tried.insert(url.trim().to_string());
                let at = self.place_of(tree, &at).unwrap_or(at);
                let outcome = if is_base {
                    fetcher.base(&url)
                } else {
                    fetcher.input(&url)
                };
                match outcome {
                    Ok(mount) => {
                        self.named_at.insert(mount.prefix.clone(), at.clone());
                        self.fetched.push(crate::model::Fetched {
                            at,
                            reference: url,
                            content: mount.content.clone(),
                            stale: mount.stale.clone(),
                            input: !is_base,
                        });
                        tree.mounts.push(mount);
                    }
                    Err(failure) if failure.definitive => {
                        return Err(BuildError::Failed(RenderFailure {
                            message: format!(
                                "accumulating resources: `{url}` could not be fetched: {} (kustomize-controller's build fails the same way)",
                                failure.message
                            ),
                            at: Some(at),
                        }));
                    }
                    Err(failure) => self.failures.push((url, failure.message)),
                }
            }
            *reach = reach_tree(tree, path);
        }
        Ok(())
    }

    /// Where a place inside a fetched remote is named in the repository.
    fn place_of(&self, tree: &Tree, at: &Span) -> Option<Span> {
        let (mount, _) = tree.in_mount(&at.file)?;
        self.named_at.get(&mount.prefix).cloned()
    }

    /// A message with the mounts' paths written as the remote addresses.
    fn rewrite(&self, tree: &Tree, message: &str) -> String {
        let mut out = message.to_string();
        for mount in &tree.mounts {
            out = mount.rewrite(&out);
        }
        out
    }

    fn relocate_error(&self, tree: &Tree, err: BuildError) -> BuildError {
        match err {
            BuildError::Failed(mut f) => {
                if let Some(at) = f.at.as_ref().and_then(|a| self.place_of(tree, a)) {
                    f.at = Some(at);
                }
                f.message = self.rewrite(tree, &f.message);
                BuildError::Failed(f)
            }
            other => other,
        }
    }
}

/// A successful build: the objects, and what the build fed to generators.
#[derive(Debug)]
pub struct Built {
    /// The built objects, with `spec.commonMetadata` and the owner labels merged in.
    pub objects: Vec<Object>,
    /// How many files the build reads.
    pub files_read: usize,
    /// The files the build reads (resources, kustomization files, patches).
    pub reads: std::collections::BTreeSet<String>,
    /// Files read by configMapGenerator/secretGenerator, with where the
    /// kustomization names them.
    pub generator_inputs: Vec<crate::model::GeneratorInput>,
    /// Generator inputs that are URLs (read as empty), with where they are
    /// written.
    pub remote_inputs: Vec<(Span, String)>,
    /// Fields of the path's kustomization file that Flux drops when it
    /// rewrites it (not kustomization fields), with where they are.
    pub dropped: Vec<(Span, String)>,
    /// Remote bases left out (the objects are the local part only), with
    /// where each is written; empty for a whole build.
    pub remote_bases: Vec<(Span, String)>,
    /// Remote bases and inputs fetched (`--fetch-remote`).
    pub fetched: Vec<crate::model::Fetched>,
    /// Remote references that could not be fetched here, and why.
    pub fetch_failures: Vec<(String, String)>,
}

/// Why a Kustomization was not built.
#[derive(Debug)]
pub enum BuildError {
    /// The build fails as Flux's would.
    Failed(RenderFailure),
    /// A file the build reads exceeds a loader budget: this tool does not
    /// read it, whatever Flux would do (the message names file, line and
    /// budget).
    Budget(RenderFailure),
    /// The build needs remote bases that were not fetched (or not all of
    /// them), and its local part does not build without them.
    RemoteBases(Box<RemotePart>),
}

/// What a build that needs remote bases it could not get had of them.
#[derive(Debug, Default)]
pub struct RemotePart {
    /// Remote references left out, with where each is written.
    pub left_out: Vec<(Span, String)>,
    /// What was fetched (`--fetch-remote`).
    pub fetched: Vec<crate::model::Fetched>,
    /// What `--fetch-remote` could not fetch here, and why.
    pub failures: Vec<(String, String)>,
}

/// The kustomization file Flux builds `path` from: the path's own, edited,
/// or the one it generates.
struct Written {
    file: String,
    doc: Node,
    /// Flux generated it (the directory had none).
    generated: bool,
    dropped: Vec<(Span, String)>,
}

fn s(text: &str) -> Node {
    Node::new(Value::String(text.to_string()))
}

/// `GenerateManifest`: the path's kustomization as Flux writes it before
/// the build.
fn flux_kustomization(artifact: &Artifact, path: &str, spec: &Node) -> Result<Written, BuildError> {
    let spec_field = |key: &str| spec.path(&["spec", key]);
    let mut dropped = Vec::new();
    let (file, mut doc, generated) = match artifact.kustomization_file(path) {
        Some(file) => {
            let docs = artifact.documents(&file).map_err(|e| doc_error(e, &file))?;
            // sigs.k8s.io/yaml reads the first document.
            let first = docs
                .first()
                .cloned()
                .unwrap_or(Node::new(Value::Map(Vec::new())));
            if !first.is_map() {
                return Err(BuildError::Failed(RenderFailure {
                    message: format!(
                        "{file}: json: cannot unmarshal {} into Go value of type types.Kustomization",
                        if matches!(first.value, Value::Seq(_)) {
                            "array"
                        } else {
                            "a scalar"
                        }
                    ),
                    at: Some(Span::new(file.clone(), first.line)),
                }));
            }
            let mut doc = Node::new(Value::Map(Vec::new()));
            doc.line = first.line;
            doc.set("apiVersion", s("kustomize.config.k8s.io/v1beta1"));
            doc.set("kind", s("Kustomization"));
            let text = artifact
                .read(&file)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            // sigs.k8s.io/yaml.Unmarshal into types.Kustomization: unknown
            // fields (at any depth) are dropped, scalars become the strings
            // their fields want, other mismatches fail.
            let (decoded, lost) = super::types::loose(&first, &super::types::KUSTOMIZATION)
                .map_err(|e| {
                    BuildError::Failed(RenderFailure {
                        message: format!("{file}:{}: {}", e.line, e.message),
                        at: Some(Span::new(file.clone(), e.line)),
                    })
                })?;
            for lost in lost {
                let line = if lost.path.contains(['.', '[']) {
                    lost.line
                } else {
                    key_line(&text, &lost.path).unwrap_or(lost.line)
                };
                dropped.push((Span::new(file.clone(), line), lost.path));
            }
            for (key, value) in decoded.as_map() {
                doc.set(key, value.clone());
            }
            let resources = doc.get("resources").is_some_and(|r| !r.as_seq().is_empty());
            if !resources {
                // Flux sets this to avoid kustomize's "kustomization.yaml is
                // empty" on a file without resources.
                doc.set(
                    "buildMetadata",
                    Node::new(Value::Seq(vec![s("originAnnotations")])),
                );
            }
            (file, doc, false)
        }
        None => {
            let resources: Vec<Node> = generated_resources(artifact, path)
                .iter()
                .map(|r| s(&format!("./{}", super::paths::relative_str(path, r))))
                .collect();
            let mut doc = Node::new(Value::Map(Vec::new()));
            doc.set("apiVersion", s("kustomize.config.k8s.io/v1beta1"));
            doc.set("kind", s("Kustomization"));
            if resources.is_empty() {
                doc.set("namespace", s("_placeholder"));
            } else {
                doc.set("resources", Node::new(Value::Seq(resources)));
            }
            (repo::join(path, "kustomization.yaml"), doc, true)
        }
    };
    if let Some(ns) = spec_field("targetNamespace") {
        doc.set("namespace", s(&ns.as_scalar_string().unwrap_or_default()));
    }
    for key in ["namePrefix", "nameSuffix"] {
        if let Some(value) = spec_field(key) {
            doc.set(key, s(&value.as_scalar_string().unwrap_or_default()));
        }
    }
    let mut append = |key: &str, items: Vec<Node>| {
        if items.is_empty() {
            return;
        }
        let mut list = doc
            .get(key)
            .map(|n| n.as_seq().to_vec())
            .unwrap_or_default();
        list.extend(items);
        doc.set(key, Node::new(Value::Seq(list)));
    };
    let spec_line = spec.path(&["spec"]).map_or(0, |n| n.line);
    let patches: Vec<Node> = spec_field("patches")
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .map(|p| {
            let mut out = Node::new(Value::Map(Vec::new()));
            if let Some(text) = p.get("patch") {
                out.set("patch", text.clone());
            }
            if let Some(target) = p.get("target") {
                out.set("target", target.clone());
            }
            // The API server prunes what the CRD's schema does not name
            // (a misspelt selector field), as the loose decode drops it.
            if let Ok((pruned, _)) = super::types::loose(&out, &super::types::PATCH) {
                out = pruned;
            }
            // A patch the Flux Kustomization's file spells out has a line
            // below `spec:`; one a parent's patch added took its parent's
            // line (adopt_lines), which says nothing: line unknown.
            out.line = SPEC_LINE + if p.line > spec_line { p.line } else { 0 };
            out
        })
        .collect();
    append("patches", patches);
    let ignore_missing =
        spec_field("ignoreMissingComponents").and_then(Node::as_bool) == Some(true);
    let mut components = Vec::new();
    for component in spec_field("components")
        .map(Node::as_seq)
        .unwrap_or_default()
    {
        let Some(c) = component.as_scalar_string() else {
            continue;
        };
        if !is_local_relative(&c) {
            return Err(BuildError::Failed(RenderFailure {
                message: format!(
                    "component path '{c}' must be local and relative (spec.components; kustomize-controller's GenerateManifest refuses remote and absolute components)"
                ),
                at: Some(Span::new("", component.line)),
            }));
        }
        let exists = artifact
            .resolve(path, &c)
            .is_ok_and(|p| artifact.stat(&p).is_ok());
        if !exists && ignore_missing {
            continue;
        }
        let mut entry = s(&c);
        entry.line = SPEC_LINE
            + if component.line > spec_line {
                component.line
            } else {
                0
            };
        components.push(entry);
    }
    append("components", components);
    for key in ["patchesStrategicMerge", "patchesJson6902"] {
        append(
            key,
            spec_field(key)
                .map(|n| n.as_seq().to_vec())
                .unwrap_or_default(),
        );
    }
    let mut images = doc
        .get("images")
        .map(|n| n.as_seq().to_vec())
        .unwrap_or_default();
    for image in spec_field("images").map(Node::as_seq).unwrap_or_default() {
        let name = image.str_at(&["name"]).unwrap_or_default();
        let field = |k: &str| image.str_at(&[k]).filter(|v| !v.is_empty());
        match images
            .iter_mut()
            .find(|i| i.str_at(&["name"]).as_deref() == Some(name.as_str()))
        {
            Some(existing) => {
                if let Some(v) = field("newName") {
                    existing.set("newName", s(&v));
                }
                // newTag and digest select the version together.
                if field("newTag").is_some() || field("digest").is_some() {
                    for k in ["newTag", "digest"] {
                        match field(k) {
                            Some(v) => existing.set(k, s(&v)),
                            None => {
                                existing.remove(k);
                            }
                        }
                    }
                }
            }
            None => {
                let mut entry = Node::new(Value::Map(Vec::new()));
                entry.set("name", s(&name));
                for k in ["newName", "newTag", "digest"] {
                    if let Some(v) = field(k) {
                        entry.set(k, s(&v));
                    }
                }
                images.push(entry);
            }
        }
    }
    if !images.is_empty() {
        doc.set("images", Node::new(Value::Seq(images)));
    }
    let mut metadata: Vec<Node> = spec_field("buildMetadata")
        .map(|n| n.as_seq().to_vec())
        .filter(|m| !m.is_empty())
        .or_else(|| doc.get("buildMetadata").map(|n| n.as_seq().to_vec()))
        .unwrap_or_default();
    // Origins map each object back to its file; they are removed after.
    if !metadata
        .iter()
        .any(|m| m.as_str() == Some("originAnnotations"))
    {
        metadata.push(s("originAnnotations"));
    }
    doc.set("buildMetadata", Node::new(Value::Seq(metadata)));
    Ok(Written {
        file,
        doc,
        generated,
        dropped,
    })
}

/// Whether a finding may point at `file`: a file of the source, including
/// a kustomization file Flux edited (its lines are the user's), but not one
/// Flux generated where there was none.
fn blamable(tree: &Tree, file: &str) -> bool {
    tree.artifact.is_file(file)
}

/// The `file:line` a backend's message starts with, when it names a file of
/// the build.
fn blamed_place(tree: &Tree, message: &str) -> Option<Span> {
    let (file, rest) = message.split_once(':')?;
    if !blamable(tree, file) {
        return None;
    }
    let line = rest
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Some(Span::new(file, line))
}

/// The line of a top-level key in a block-style YAML file (the node tree
/// keeps the lines of values, not of keys).
fn key_line(text: &str, key: &str) -> Option<u32> {
    text.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i as u32 + 1)
}

/// fluxcd/pkg `IsLocalRelativePath`: not a URL or git address, not absolute.
fn is_local_relative(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let remote = [
        "git::",
        "gh:",
        "ssh://",
        "https://",
        "http://",
        "git@",
        "github.com:",
        "github.com/",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    !remote && !path.starts_with('/') && !lower.starts_with("file://")
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

/// Removes the origin annotation and turns it into a repository span
/// (origins are relative to the build directory `dir`).
fn take_origin(body: &mut Node, dir: &str, docs: &mut SourceDocs) -> Option<Span> {
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
struct SourceDocs<'a> {
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
    fn new(artifact: &'a Artifact<'a>) -> SourceDocs<'a> {
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
fn adopt_lines(rendered: &mut Node, source: &Node) {
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

/// A directory (one or two levels deep) below which `path` exists, when it
/// does not at the root.
fn root_below(artifact: &Artifact, path: &str) -> Option<String> {
    artifact
        .index()
        .below("")
        .filter(|(p, k)| **k == Kind::Dir && p.matches('/').count() < 2)
        .map(|(p, _)| p)
        .find(|d| artifact.is_dir(&repo::join(d, path)))
        .map(str::to_string)
}

/// A file that could not be read for the build, as a build error.
fn doc_error(e: DocError, file: &str) -> BuildError {
    match e {
        DocError::Load(message, line) => BuildError::Failed(RenderFailure {
            message,
            at: Some(Span::new(file, line.unwrap_or(0))),
        }),
        DocError::Budget(message, line) => BuildError::Budget(RenderFailure {
            message,
            at: Some(Span::new(file, line.unwrap_or(0))),
        }),
        DocError::Missing(m) => BuildError::Failed(RenderFailure {
            message: m.describe(file),
            at: Some(Span::new(file, 0)),
        }),
    }
}

/// Broken input the build would read, reported at its own file and line.
fn precheck(tree: &Tree, reach: &Reach) -> Result<(), BuildError> {
    let failed = BuildError::Failed;
    if let Some((at, reference)) = reach.escapes.first() {
        return Err(failed(RenderFailure {
            message: format!(
                "`{reference}` points outside the repository; Flux confines a build to its source"
            ),
            at: Some(at.clone()),
        }));
    }
    if let Some((at, dir)) = reach.cycles.first() {
        return Err(failed(RenderFailure {
            message: format!(
                "cyclic kustomization reference: {dir} includes itself (kustomize: cycle detected: candidate root {dir} contains visited root)"
            ),
            at: Some(at.clone()),
        }));
    }
    for file in &reach.reads {
        let name = file.rsplit('/').next().unwrap_or(file);
        if !repo::is_manifest_name(name) || tree.written.contains_key(file) {
            continue;
        }
        // A generator input is data (a config file, a Go template): kustomize
        // never decodes it as Kubernetes YAML.
        if !reach.resources.contains(file) && reach.generator_inputs.iter().any(|g| g.file == *file)
        {
            continue;
        }
        if let Err(e @ (DocError::Load(..) | DocError::Budget(..))) = tree.documents(file) {
            return Err(doc_error(e, file));
        }
    }
    Ok(())
}

/// Flux's generator decodes every file it lists and fails on a document
/// without `kind` or `metadata.name` (a `*List` needs no name).
fn check_decodable<'f>(
    artifact: &Artifact,
    files: impl IntoIterator<Item = &'f String>,
) -> Result<(), RenderFailure> {
    for file in files {
        let Ok(docs) = artifact.documents(file) else {
            continue;
        };
        for doc in docs.iter() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_relative_components() {
        assert!(is_local_relative("../components/x"));
        assert!(!is_local_relative("https://github.com/x/y"));
        assert!(!is_local_relative("GitHub.com/x/y"));
        assert!(!is_local_relative("/abs"));
    }
}
