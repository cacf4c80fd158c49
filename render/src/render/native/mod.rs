//! The native kustomize renderer: `kustomize build` in Rust, no external
//! program.
//!
//! It follows kustomize v5's pipeline (api/internal/target/kusttarget.go):
//! resources (files, directories built as their own kustomizations), then
//! generators (configMapGenerator, secretGenerator), then components (which
//! see and transform everything accumulated so far), then the builtin
//! transformers in kustomize's order: patchesStrategicMerge, patches,
//! namespace, namePrefix, nameSuffix, labels, commonLabels, commonAnnotations,
//! patchesJson6902, replicas, images, replacements. At the top level only:
//! name hash suffixes for generated objects, then name references are fixed
//! (previous names → current names), then `local-config` objects are dropped.
//! Output keeps input order (as Flux does; the CLI's legacy sort is not
//! applied).
//!
//! Builtin transformer and generator configs under `transformers:` and
//! `generators:` run after the kustomization's own fields (`plugins.rs`).
//! Anything it does not implement (helmCharts, vars, validators, external
//! plugins' kinds, `crds`, `openapi`, …) is an error `unsupported: <field>
//! in <file>:<line>`, so a run never silently differs from kustomize. Every
//! file is read through the build's [`Tree`]: the artifact, never the disk
//! directly.

mod fields;
mod generate;
mod load;
mod nameref;
mod patch;
mod plugins;
mod steps;
mod transform;

pub use crate::render::paths::{FIELDS, canonical_field, relative_str};
pub use patch::selector::go_regex;

use super::{Kustomize, Tree};
use crate::render::Error;
use crate::yaml::{Node, Value};

/// The native renderer.
#[derive(Debug, Default, Clone, Copy)]
pub struct Native;

impl Kustomize for Native {
    fn name(&self) -> &str {
        "native"
    }

    fn builds_local_part(&self) -> bool {
        true
    }

    fn build(&self, tree: &Tree, dir: &str) -> Result<Vec<Node>, Error> {
        let mut builder = Builder {
            tree,
            root: dir.to_string(),
            stack: Vec::new(),
            origin_annotations: false,
            name_refs: Vec::new(),
        };
        let mut resources = builder.build_dir(dir, Vec::new(), false)?;
        generate::add_hash_suffixes(&mut resources)?;
        nameref::fix_back_references(&mut resources, &builder.name_refs)?;
        resources.retain(|r| !r.is_local_config());
        for r in &mut resources {
            if let Err((line, value)) = json_numbers(&mut r.node) {
                let message = format!(
                    "json: unsupported value: {value} (in {}; kustomize writes every object as JSON)",
                    r.id().text()
                );
                return Err(match &r.origin {
                    Origin::File(path) if !path.split('/').any(|p| p == "..") => {
                        Error::at(crate::repo::join(dir, path), line, message)
                    }
                    _ => Error::new(message),
                });
            }
        }
        Ok(resources
            .into_iter()
            .map(|r| r.finish(builder.origin_annotations))
            .collect())
    }
}

/// Numbers as kustomize outputs them: it decodes every object into Go
/// values and encodes them with `encoding/json` (`resource.Resource`'s
/// `MarshalJSON`, then `AsYaml`), so a float with no fraction is an integer
/// (`1.0` is `1`, `-0.0` is `0`) and an infinity or NaN fails the build.
/// Flux applies what kustomize outputs, so this is what the cluster gets.
/// The error is the line and text of the first value JSON cannot hold.
fn json_numbers(node: &mut Node) -> Result<(), (u32, &'static str)> {
    match &mut node.value {
        Value::Float(f) if f.is_nan() => Err((node.line, "NaN")),
        Value::Float(f) if f.is_infinite() => {
            Err((node.line, if *f > 0.0 { "+Inf" } else { "-Inf" }))
        }
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
            node.value = Value::Int(*f as i64);
            Ok(())
        }
        Value::Seq(items) => items.iter_mut().try_for_each(json_numbers),
        Value::Map(entries) => entries.iter_mut().try_for_each(|(_, v)| json_numbers(v)),
        _ => Ok(()),
    }
}

/// A resource being built, with the bookkeeping kustomize keeps on it.
#[derive(Debug, Clone)]
pub(crate) struct Res {
    /// The object as built so far.
    pub node: Node,
    /// Where it came from, relative to the build root: the file, or for a
    /// generated object the kustomization that configured it.
    pub origin: Origin,
    /// Every identity it had before renames (kind, namespace, name), oldest
    /// first; kustomize's "previous ids".
    pub previous: Vec<Id>,
    /// A generated object that gets a name hash suffix at the end.
    pub needs_hash: bool,
    /// Name prefixes and suffixes applied (for name-reference tie breaks).
    pub prefixes: Vec<String>,
    /// Name suffixes applied, likewise.
    pub suffixes: Vec<String>,
}

/// Where a resource came from: paths relative to the top directory of the
/// build, as kustomize's origin annotation has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Read from this file.
    File(String),
    /// Made by a generator of a kustomization.
    Generated {
        /// The kustomization file that configures the generator.
        kustomization: String,
        /// `ConfigMapGenerator` or `SecretGenerator`.
        generator: &'static str,
    },
}

/// An identity: group, version, kind, namespace, name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Id {
    /// The API group (empty for the core group).
    pub group: String,
    /// The API version.
    pub version: String,
    /// The kind.
    pub kind: String,
    /// The namespace (empty when none is set).
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl Id {
    /// kustomize's rendering of an id: `Kind.version.group/name.namespace`.
    pub fn text(&self) -> String {
        let group = if self.group.is_empty() {
            "[noGrp]"
        } else {
            &self.group
        };
        let namespace = if self.namespace.is_empty() {
            "[noNs]"
        } else {
            &self.namespace
        };
        format!(
            "{}.{}.{group}/{}.{namespace}",
            self.kind, self.version, self.name
        )
    }
}

impl Res {
    /// A resource from `origin`, with no renames recorded yet.
    pub fn new(node: Node, origin: Origin) -> Res {
        Res {
            node,
            origin,
            previous: Vec::new(),
            needs_hash: false,
            prefixes: Vec::new(),
            suffixes: Vec::new(),
        }
    }

    /// `kind` (empty when missing).
    pub fn kind(&self) -> String {
        self.node.str_at(&["kind"]).unwrap_or_default()
    }

    /// `metadata.name` (empty when missing).
    pub fn name(&self) -> String {
        self.node.str_at(&["metadata", "name"]).unwrap_or_default()
    }

    /// `metadata.namespace` (empty when missing).
    pub fn namespace(&self) -> String {
        self.node
            .str_at(&["metadata", "namespace"])
            .unwrap_or_default()
    }

    /// `apiVersion` (empty when missing).
    pub fn api_version(&self) -> String {
        self.node.str_at(&["apiVersion"]).unwrap_or_default()
    }

    /// The API group of `apiVersion` (empty for the core group).
    pub fn group(&self) -> String {
        let v = self.api_version();
        v.split_once('/')
            .map(|(g, _)| g.to_string())
            .unwrap_or_default()
    }

    /// The current identity.
    pub fn id(&self) -> Id {
        let api = self.api_version();
        let (group, version) = match api.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api),
        };
        Id {
            group,
            version,
            kind: self.kind(),
            namespace: self.namespace(),
            name: self.name(),
        }
    }

    /// Records the current identity before a rename or a namespace change.
    pub(crate) fn store_previous(&mut self) {
        let id = self.id();
        if self.previous.last() != Some(&id) {
            self.previous.push(id);
        }
    }

    /// The first identity the object had.
    pub fn original(&self) -> Id {
        self.previous.first().cloned().unwrap_or_else(|| self.id())
    }

    /// Sets `metadata.name`.
    pub(crate) fn set_name(&mut self, name: &str) {
        self.node
            .map_entry("metadata")
            .set("name", Node::new(Value::String(name.to_string())));
    }

    fn is_local_config(&self) -> bool {
        self.node
            .path(&[
                "metadata",
                "annotations",
                "config.kubernetes.io/local-config",
            ])
            .and_then(Node::as_scalar_string)
            .is_some_and(|v| v != "false")
    }

    /// The finished object, with kustomize's origin annotation when asked.
    fn finish(mut self, annotate: bool) -> Node {
        stringify_annotations(&mut self.node);
        if annotate {
            let text = match &self.origin {
                Origin::File(path) => format!("path: {path}\n"),
                Origin::Generated {
                    kustomization,
                    generator,
                } => format!(
                    "configuredIn: {kustomization}\nconfiguredBy:\n  apiVersion: builtin\n  kind: {generator}\n"
                ),
            };
            self.node
                .map_entry("metadata")
                .map_entry("annotations")
                .set(
                    "config.kubernetes.io/origin",
                    Node::new(Value::String(text)),
                );
        }
        self.node
    }
}

/// kustomize writes every annotation back through its string map (it sets
/// and removes its own build annotations on every resource), so a scalar
/// annotation value comes out as a string: `true` as `"true"`, `10` as
/// `"10"` (`kubectl kustomize` prints `b: "true"`). Labels are left as
/// written. The original text of floats and octals is not kept by the
/// loader; they come out as the number's own text.
fn stringify_annotations(node: &mut Node) {
    let Some(metadata) = node.get_mut("metadata") else {
        return;
    };
    let Some(annotations) = metadata.get_mut("annotations") else {
        return;
    };
    if let Value::Map(entries) = &mut annotations.value {
        for (_, value) in entries.iter_mut() {
            let text = match &value.value {
                Value::Bool(b) => b.to_string(),
                Value::Int(i) => i.to_string(),
                Value::Float(f) => f.to_string(),
                Value::Null => String::new(),
                _ => continue,
            };
            value.value = Value::String(text);
        }
    }
}

/// Cluster-scoped kinds, as kustomize's precomputed table knows them
/// (kyaml/openapi precomputedIsNamespaceScoped); everything else, every CRD
/// kind included, is treated as namespaced.
pub fn is_cluster_scoped(api_version: &str, kind: &str) -> bool {
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    matches!(
        (group, kind),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration"
        ) | ("apiextensions.k8s.io", "CustomResourceDefinition")
            | ("apiregistration.k8s.io", "APIService")
            | ("certificates.k8s.io", "CertificateSigningRequest")
            | (
                "flowcontrol.apiserver.k8s.io",
                "FlowSchema" | "PriorityLevelConfiguration"
            )
            | ("networking.k8s.io", "IngressClass")
            | ("node.k8s.io", "RuntimeClass")
            | ("policy", "PodSecurityPolicy")
            | (
                "rbac.authorization.k8s.io",
                "ClusterRole" | "ClusterRoleBinding"
            )
            | ("scheduling.k8s.io", "PriorityClass")
            | (
                "storage.k8s.io",
                "CSIDriver" | "CSINode" | "StorageClass" | "VolumeAttachment"
            )
            | (
                "",
                "ComponentStatus" | "Namespace" | "Node" | "NodeProxyOptions" | "PersistentVolume"
            )
    )
}

struct Builder<'t> {
    /// What the build reads.
    tree: &'t Tree<'t>,
    /// The top build directory (paths in origins are relative to it).
    root: String,
    /// Directories being built, to report cycles.
    stack: Vec<String>,
    /// Whether the top kustomization asked for origin annotations.
    origin_annotations: bool,
    /// Name references added by `configurations` files anywhere in the
    /// build (kustomize merges every layer's configuration).
    name_refs: Vec<load::NameRef>,
}

impl Builder<'_> {
    /// Builds the kustomization in `dir` on top of `acc` (empty for a normal
    /// kustomization; the parent's resources for a component).
    fn build_dir(&mut self, dir: &str, acc: Vec<Res>, component: bool) -> Result<Vec<Res>, Error> {
        if self.stack.iter().any(|d| d == dir) {
            return Err(format!(
                "cyclic kustomization reference: {dir} includes itself (through {})",
                self.stack.join(" → ")
            )
            .into());
        }
        let files = self.tree.kustomization_files(dir);
        let file = match files.as_slice() {
            [] => {
                return Err(format!(
                    "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{dir}'"
                ).into());
            }
            [one] => one.clone(),
            [_, second, ..] => {
                // At the first line of the second file: the one too many.
                return Err(Error::at(
                    second.clone(),
                    1,
                    format!(
                        "Found multiple kustomization files under: {dir} ({})",
                        files
                            .iter()
                            .map(|f| f.rsplit('/').next().unwrap_or(f))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        };
        let k = load::Kustomization::read(self.tree, &file)?;
        // A Component at the root builds like a Kustomization (kustomize
        // checks the kind only of what a kustomization includes,
        // `accumulateDirectory`).
        let root_component = self.stack.is_empty() && !component && k.kind == "Component";
        if component != (k.kind == "Component") && !root_component {
            return Err(if component {
                format!("{file}: a component's kustomization must have kind: Component").into()
            } else {
                format!(
                    "{file}: a Component cannot be used as a resource; list it under components"
                )
                .into()
            });
        }
        if self.stack.is_empty() && k.build_metadata.iter().any(|m| m == "originAnnotations") {
            self.origin_annotations = true;
        }
        self.stack.push(dir.to_string());
        let result = self.run(dir, &file, &k, acc);
        self.stack.pop();
        result
    }

    /// Resolves an entry of the kustomization file `file` inside the source.
    fn resolve(&self, dir: &str, file: &str, entry: &load::Entry) -> Result<String, Error> {
        self.tree
            .resolve(dir, &entry.value)
            .map_err(|m| Error::at(file, entry.line, m.describe(&format!("`{}`", entry.value))))
    }

    fn run(
        &mut self,
        dir: &str,
        file: &str,
        k: &load::Kustomization,
        mut acc: Vec<Res>,
    ) -> Result<Vec<Res>, Error> {
        let mut namespace_specs = Vec::new();
        for entry in &k.configurations {
            let path = self.resolve(dir, file, entry)?;
            if !self.tree.is_file(&path) {
                return Err(Error::at(
                    file,
                    entry.line,
                    format!("configurations file {} not found", entry.value),
                ));
            }
            let configs = load::configuration(self.tree, &path)?;
            self.name_refs.extend(configs.name_refs);
            namespace_specs.extend(configs.namespace);
        }
        let mut seen: std::collections::HashSet<IdKey> =
            acc.iter().map(|r| id_key(&r.id())).collect();
        for entry in &k.resources {
            if self.tree.left_out(&entry.value) {
                continue; // not fetched: the Flux layer lists it
            }
            let path = self.resolve(dir, file, entry)?;
            // A duplicate id is blamed on the entry that brings it in; in a
            // kustomization Flux generated (no lines), on the document that
            // repeats the id.
            let is_file = self.tree.is_file(&path);
            let here = |e: Error| match e.place() {
                Some((f, line)) if f.is_empty() => {
                    if entry.line > 0 {
                        Error::at(file, entry.line, e.message())
                    } else if is_file {
                        Error::at(path.clone(), *line, e.message())
                    } else {
                        Error::from(e.message())
                    }
                }
                Some(_) => e,
                None => Error::at(file, entry.line, e.message()),
            };
            if self.tree.is_file(&path) {
                let loaded = load::resources_from_file(self.tree, &path, &self.rel(&path))?;
                append(&mut acc, &mut seen, loaded).map_err(here)?;
            } else if self.tree.is_dir(&path) {
                let built = self.build_dir(&path, Vec::new(), false)?;
                append(&mut acc, &mut seen, built).map_err(here)?;
            } else {
                let why = match self.tree.artifact.stat(&path) {
                    Err(m @ (crate::repo::Missing::Symlink | crate::repo::Missing::Ignored(_))) => {
                        format!(": {}", m.describe(&path))
                    }
                    _ => String::new(),
                };
                return Err(Error::at(
                    file,
                    entry.line,
                    format!(
                        "accumulating resources: '{}' is neither a file nor a directory{why}",
                        entry.value
                    ),
                ));
            }
        }
        let generated = generate::run(k, self.tree, dir, file, &self.rel(file))?;
        generate::absorb(&mut acc, generated)?;
        let cx = transform::Cx {
            tree: self.tree,
            dir,
            file,
        };
        for entry in &k.generators {
            let generated = plugins::generate(&cx, entry, &self.rel(file))?;
            generate::absorb(&mut acc, generated)?;
        }
        for entry in &k.components {
            if self.tree.left_out(&entry.value) {
                continue; // not fetched: the Flux layer lists it
            }
            let path = self.resolve(dir, file, entry)?;
            if !self.tree.is_dir(&path) {
                return Err(Error::at(
                    file,
                    entry.line,
                    format!("component '{}' is not a directory", entry.value),
                ));
            }
            acc = self.build_dir(&path, acc, true)?;
        }
        steps::run(k, self.tree, dir, file, &namespace_specs, &mut acc)?;
        Ok(acc)
    }

    /// A path relative to the top build directory, for origins.
    fn rel(&self, path: &str) -> String {
        relative_str(&self.root, path)
    }
}

/// Builds a directory of transformer or generator configs as a
/// kustomization; its objects are the configs.
fn build_configs(tree: &Tree, dir: &str) -> Result<Vec<Node>, Error> {
    let mut builder = Builder {
        tree,
        root: dir.to_string(),
        stack: Vec::new(),
        origin_annotations: false,
        name_refs: Vec::new(),
    };
    Ok(builder
        .build_dir(dir, Vec::new(), false)?
        .into_iter()
        .map(|r| r.node)
        .collect())
}

/// Appends resources, failing on a duplicate identity as kustomize does.
/// Appends resources, refusing an id already there (kustomize's
/// `resWrangler.appendReplaceOrMerge`). `seen` holds the ids of `acc`, kept
/// across calls so many resource files cost linear time, not quadratic.
fn append(
    acc: &mut Vec<Res>,
    seen: &mut std::collections::HashSet<IdKey>,
    more: Vec<Res>,
) -> Result<(), Error> {
    for r in more {
        let id = r.id();
        if !seen.insert(id_key(&id)) {
            // The place is filled in by the caller (the entry, or this
            // document's line in its file).
            return Err(Error::at(
                "",
                r.node.line,
                format!(
                    "may not add resource with an already registered id: {}",
                    id.text()
                ),
            ));
        }
        acc.push(r);
    }
    Ok(())
}

/// An id normalised for kustomize's equality (see [`same_id`]).
type IdKey = (String, String, String, String, String);

fn id_key(id: &Id) -> IdKey {
    let ns = if is_cluster_scoped(&format!("{}/{}", id.group, id.version), &id.kind) {
        String::new()
    } else if id.namespace.is_empty() {
        "default".to_string()
    } else {
        id.namespace.clone()
    };
    (
        id.group.clone(),
        id.version.clone(),
        id.kind.clone(),
        id.name.clone(),
        ns,
    )
}

/// kustomize's id equality: GVK, name, and namespace ("" is "default";
/// cluster-scoped objects ignore it).
pub(crate) fn same_id(a: &Id, b: &Id) -> bool {
    let ns = |id: &Id| {
        if is_cluster_scoped(&format!("{}/{}", id.group, id.version), &id.kind) {
            String::new()
        } else if id.namespace.is_empty() {
            "default".to_string()
        } else {
            id.namespace.clone()
        }
    };
    a.group == b.group
        && a.version == b.version
        && a.kind == b.kind
        && a.name == b.name
        && ns(a) == ns(b)
}

/// `to` relative to `from` (both absolute).
pub fn relative(from: &std::path::Path, to: &std::path::Path) -> std::path::PathBuf {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = std::path::PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &to[common..] {
        out.push(part.as_os_str());
    }
    out
}

/// Checks one kustomize patch (`patch:` text and optional `target:`
/// selector) as kustomize reads it before applying it: the text parses as
/// strategic-merge documents or a JSON 6902 list, and the target's fields
/// are valid (helm-controller's kustomize post-renderer reads
/// `postRenderers[].kustomize.patches` the same way).
pub fn check_patch(text: &str, target: Option<&Node>) -> Result<(), Error> {
    if let patch::Patch::Json(ops) = patch::parse(text, "patch")? {
        // kustomize applies JSON 6902 with evanphx/json-patch, which knows
        // these operations and fails on any other ("Unexpected kind").
        for op in &ops {
            let name = op.str_at(&["op"]).unwrap_or_default();
            if !["add", "remove", "replace", "move", "copy", "test"].contains(&name.as_str()) {
                return Err(Error::new(format!(
                    "JSON 6902 operation `{name}` is none of add, remove, replace, move, copy, test"
                )));
            }
        }
    }
    if let Some(t) = target {
        patch::Selector::parse(t)?;
    }
    Ok(())
}

/// Applies one inline kustomize patch (`patch:` text and optional `target:`
/// selector, as in `spec.patches`) to one object, as kustomize would.
/// `Ok(None)`: the selector does not select it.
pub fn patch_one(object: &Node, text: &str, target: Option<&Node>) -> Result<Option<Node>, Error> {
    let mut res = Res {
        node: object.clone(),
        origin: Origin::File(String::new()),
        previous: Vec::new(),
        needs_hash: false,
        prefixes: Vec::new(),
        suffixes: Vec::new(),
    };
    let parsed = patch::parse(text, "patch")?;
    let selector = match target {
        Some(t) => Some(patch::Selector::parse(t)?),
        None => None,
    };
    match parsed {
        patch::Patch::Strategic(docs) => {
            for doc in docs {
                let selected = match &selector {
                    Some(s) => s.matches(&res),
                    None => {
                        doc.str_at(&["kind"]) == object.str_at(&["kind"])
                            && doc.str_at(&["metadata", "name"])
                                == object.str_at(&["metadata", "name"])
                    }
                };
                if !selected {
                    return Ok(None);
                }
                patch::apply_strategic(&mut res, &doc, false, false)?;
            }
        }
        patch::Patch::Json(ops) => {
            if !selector.as_ref().is_some_and(|s| s.matches(&res)) {
                return Ok(None);
            }
            patch::apply_json(&mut res, &ops)?;
        }
    }
    Ok(Some(res.node))
}
