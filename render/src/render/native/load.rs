//! Reading kustomization files and resource files.

use super::{Origin, Res};
use crate::render::Error;
use crate::render::Tree;
use crate::render::paths::canonical_field;
use crate::repo::artifact::DocError;
use crate::yaml::{Node, Value};

/// A string with the line it was written on.
#[derive(Debug, Clone)]
pub struct Entry {
    pub value: String,
    pub line: u32,
}

/// The fields of a kustomization file this renderer implements.
#[derive(Debug, Clone, Default)]
pub struct Kustomization {
    pub kind: String,
    pub resources: Vec<Entry>,
    pub components: Vec<Entry>,
    pub namespace: Option<String>,
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    pub common_labels: Option<Node>,
    pub labels: Vec<Node>,
    pub common_annotations: Option<Node>,
    pub patches: Vec<Node>,
    pub patches_strategic_merge: Vec<Node>,
    pub patches_json6902: Vec<Node>,
    pub images: Vec<Node>,
    pub replicas: Vec<Node>,
    pub config_map_generator: Vec<Node>,
    pub secret_generator: Vec<Node>,
    pub generator_options: Option<Node>,
    pub replacements: Vec<Node>,
    pub build_metadata: Vec<String>,
    /// Transformer configuration files (`configurations`).
    pub configurations: Vec<Entry>,
    /// `generators:` entries: builtin generator configs (files, directories,
    /// or inline).
    pub generators: Vec<Entry>,
    /// `transformers:` entries: builtin transformer configs.
    pub transformers: Vec<Entry>,
}

/// Fields kustomize has that this renderer does not implement.
const UNSUPPORTED: &[&str] = &[
    "helmCharts",
    "helmChartInflationGenerator",
    "helmGlobals",
    "vars",
    "validators",
    "openapi",
    "crds",
    "nameReference",
];

/// Fields that do not change the built objects.
const IGNORED: &[&str] = &["apiVersion", "kind", "metadata", "sortOptions"];

/// The documents of a YAML file of the build, with the loader's message
/// (naming the file) on failure.
pub fn documents(tree: &Tree, file: &str) -> Result<Vec<Node>, Error> {
    match tree.documents(file) {
        Ok(docs) => Ok(docs.into_owned()),
        Err(DocError::Missing(m)) => Err(m.describe(file).into()),
        Err(DocError::Load(message, _)) => Err(message.into()),
        // The message names the file and line already.
        Err(DocError::Budget(message, _)) => Err(Error::Budget { at: None, message }),
    }
}

impl Kustomization {
    /// Reads and checks a kustomization file of the build.
    pub fn read(tree: &Tree, file: &str) -> Result<Kustomization, Error> {
        let docs = documents(tree, file)?;
        let doc = the_document(&docs, file)?;
        let mut k = Kustomization {
            kind: header(doc, file)?,
            ..Kustomization::default()
        };
        // kustomize decodes every kustomization strictly into its Go
        // types: an unknown field at any depth, or a value of the wrong
        // JSON type, fails the build.
        crate::render::types::strict(doc, &crate::render::types::KUSTOMIZATION).map_err(|e| {
            Error::at(
                file,
                if e.line > 0 { e.line } else { doc.line },
                format!("invalid Kustomization: {}", e.message),
            )
        })?;
        for (written, value) in doc.as_map() {
            k.field(written, value, file)?;
        }
        Ok(k)
    }

    /// Reads one field of the file (`written` as the file spells it), with
    /// the shape kustomize decodes it to.
    fn field(&mut self, written: &str, value: &Node, file: &str) -> Result<(), Error> {
        let at = |n: &Node| format!("{file}:{}", n.line);
        let Some(key) = canonical_field(written) else {
            return Err(format!(
                "{}: invalid Kustomization: unknown field \"{written}\"",
                at(value)
            )
            .into());
        };
        let key = &key.to_string();
        check_shape(key, value).map_err(|expected| {
            format!(
                "{}: invalid Kustomization: {key} must be {expected}",
                at(value)
            )
        })?;
        match key.as_str() {
            k_ if IGNORED.contains(&k_) => {}
            k_ if UNSUPPORTED.contains(&k_) => {
                return Err(Error::unsupported(format!(
                    "{key} in {} (the native renderer does not implement it; use --renderer kustomize or auto)",
                    at(value)
                )));
            }
            "resources" | "bases" => self.resources.extend(entries(value, file, key)?),
            "configurations" => self.configurations.extend(entries(value, file, key)?),
            "generators" => self.generators.extend(entries(value, file, key)?),
            "transformers" => self.transformers.extend(entries(value, file, key)?),
            "components" => self.components.extend(entries(value, file, key)?),
            "namespace" => self.namespace = value.as_scalar_string().filter(|s| !s.is_empty()),
            "namePrefix" => self.name_prefix = value.as_scalar_string(),
            "nameSuffix" => self.name_suffix = value.as_scalar_string(),
            "commonLabels" => self.common_labels = Some(value.clone()),
            "labels" => self.labels.extend(value.as_seq().iter().cloned()),
            "commonAnnotations" => self.common_annotations = Some(value.clone()),
            "patches" => self.patches.extend(value.as_seq().iter().cloned()),
            "patchesStrategicMerge" => self
                .patches_strategic_merge
                .extend(value.as_seq().iter().cloned()),
            "patchesJson6902" => self.patches_json6902.extend(value.as_seq().iter().cloned()),
            "images" => self.images.extend(value.as_seq().iter().cloned()),
            "replicas" => self.replicas.extend(value.as_seq().iter().cloned()),
            "configMapGenerator" => self
                .config_map_generator
                .extend(value.as_seq().iter().cloned()),
            "secretGenerator" => self.secret_generator.extend(value.as_seq().iter().cloned()),
            "generatorOptions" => self.generator_options = Some(value.clone()),
            "replacements" => self.replacements.extend(value.as_seq().iter().cloned()),
            "buildMetadata" => {
                self.build_metadata = value
                    .as_seq()
                    .iter()
                    .filter_map(Node::as_scalar_string)
                    .collect();
            }
            other => {
                return Err(format!(
                    "{}: invalid Kustomization: unknown field \"{other}\"",
                    at(value)
                )
                .into());
            }
        }
        Ok(())
    }
}

/// The one document of a kustomization file: a mapping, and not empty.
fn the_document<'d>(docs: &'d [Node], file: &str) -> Result<&'d Node, Error> {
    let doc = match docs.len() {
        // kustomize refuses a file with nothing in it.
        0 => return Err(format!("{file}: kustomization.yaml is empty").into()),
        1 => &docs[0],
        _ => {
            return Err(format!("{file}: a kustomization file must hold one document").into());
        }
    };
    if !doc.is_map() {
        return Err(Error::at(
            file,
            doc.line,
            "a kustomization must be a mapping".to_string(),
        ));
    }
    // kustomize compares the decoded file with an empty Kustomization
    // (`KustTarget.Load`): apiVersion and kind alone, or fields that
    // decode to Go zero values (`resources:`, `namespace: ""`), are
    // empty; an empty list or map (`resources: []`) is not.
    let zero = |v: &Node| match &v.value {
        Value::Null | Value::Bool(false) | Value::Int(0) => true,
        Value::String(s) => s.is_empty(),
        Value::Float(f) => *f == 0.0,
        _ => false,
    };
    if doc
        .as_map()
        .iter()
        .all(|(k, v)| k == "apiVersion" || k == "kind" || zero(v))
    {
        return Err(format!("{file}: kustomization.yaml is empty").into());
    }
    Ok(doc)
}

/// The file's kind (`Kustomization` when left out), checked with its
/// apiVersion: kustomize's own check of the header (types.Kustomization
/// CheckEmpty/EnforceFields, via kusttarget's load): either may be
/// left out; when written, they must agree.
fn header(doc: &Node, file: &str) -> Result<String, Error> {
    let kind = doc
        .str_at(&["kind"])
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "Kustomization".into());
    let line_of = |key: &str| doc.get(key).map_or(doc.line, |n| n.line);
    if kind != "Kustomization" && kind != "Component" {
        return Err(Error::at(
            file,
            line_of("kind"),
            "kind should be Kustomization or Component",
        ));
    }
    if let Some(api) = doc.str_at(&["apiVersion"]).filter(|a| !a.is_empty()) {
        let want = if kind == "Component" {
            "kustomize.config.k8s.io/v1alpha1"
        } else {
            "kustomize.config.k8s.io/v1beta1"
        };
        if api != want {
            return Err(Error::at(
                file,
                line_of("apiVersion"),
                format!("apiVersion for {kind} should be {want}"),
            ));
        }
    }
    Ok(kind)
}

/// kustomize decodes the file strictly into its Go types: a field of the
/// wrong shape fails the build. Returns what was expected.
fn check_shape(key: &str, value: &Node) -> Result<(), &'static str> {
    let null = matches!(value.value, Value::Null);
    let scalar = |n: &Node| n.as_scalar_string().is_some() || matches!(n.value, Value::Null);
    let list_of = |pred: &dyn Fn(&Node) -> bool| {
        null || matches!(&value.value, Value::Seq(items) if items.iter().all(pred))
    };
    let ok = match key {
        "resources"
        | "bases"
        | "components"
        | "patchesStrategicMerge"
        | "buildMetadata"
        | "generators"
        | "transformers" => list_of(&scalar),
        "namespace" | "namePrefix" | "nameSuffix" => scalar(value),
        "commonLabels" | "commonAnnotations" => {
            null || (value.is_map() && value.as_map().iter().all(|(_, v)| scalar(v)))
        }
        "generatorOptions" => null || value.is_map(),
        "labels" => list_of(&|n: &Node| {
            n.is_map()
                && n.get("pairs").is_none_or(|p| {
                    matches!(p.value, Value::Null)
                        || (p.is_map() && p.as_map().iter().all(|(_, v)| scalar(v)))
                })
        }),
        "patches" | "patchesJson6902" | "images" | "replicas" | "configMapGenerator"
        | "secretGenerator" | "replacements" => list_of(&Node::is_map),
        _ => true,
    };
    if ok {
        return Ok(());
    }
    Err(match key {
        "resources" | "bases" | "components" | "patchesStrategicMerge" | "buildMetadata" => {
            "a list of strings"
        }
        "namespace" | "namePrefix" | "nameSuffix" => "a string",
        "commonLabels" | "commonAnnotations" => "a mapping of strings",
        "generatorOptions" => "a mapping",
        "labels" => "a list of mappings with string pairs",
        _ => "a list of mappings",
    })
}

fn entries(value: &Node, file: &str, key: &str) -> Result<Vec<Entry>, Error> {
    match &value.value {
        Value::Null => Ok(Vec::new()),
        Value::Seq(items) => items
            .iter()
            .map(|n| {
                n.as_scalar_string()
                    .map(|value| Entry {
                        value,
                        line: n.line,
                    })
                    .ok_or_else(|| {
                        Error::at(file, n.line, format!("{key} entries must be strings"))
                    })
            })
            .collect(),
        _ => Err(Error::at(file, value.line, format!("{key} must be a list"))),
    }
}

/// The objects of a resource file: documents, with `List` kinds expanded
/// (kustomize inlines any kind ending in `List` that has `items`).
pub(crate) fn resources_from_file(
    tree: &Tree,
    path: &str,
    origin: &str,
) -> Result<Vec<Res>, Error> {
    let docs = documents(tree, path)?;
    let rel = path;
    let mut out = Vec::new();
    let mut queue: std::collections::VecDeque<Node> = docs.into();
    while let Some(doc) = queue.pop_front() {
        let kind = doc.str_at(&["kind"]);
        if let Some(kind) = &kind
            && kind.ends_with("List")
            && let Some(items) = doc.get("items")
        {
            match &items.value {
                Value::Seq(list) => {
                    queue.extend(list.iter().cloned());
                    continue;
                }
                Value::Null => continue,
                _ => {
                    return Err(Error::at(
                        rel,
                        items.line,
                        format!("items of a {kind} must be a list"),
                    ));
                }
            }
        }
        match (&kind, doc.str_at(&["metadata", "name"])) {
            (None, _) => {
                return Err(Error::at(
                    rel,
                    doc.line,
                    "missing Resource metadata: kind is required".to_string(),
                ));
            }
            (Some(k), None) if !k.ends_with("List") => {
                return Err(Error::at(
                    rel,
                    doc.line,
                    format!("missing metadata.name in object {k}"),
                ));
            }
            _ => {}
        }
        out.push(Res::new(doc, Origin::File(origin.to_string())));
    }
    Ok(out)
}

/// A name reference from a `configurations` file: objects of `referrer` (any
/// kind when `None`) refer by `path` to objects of `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NameRef {
    pub target: String,
    pub referrer: Option<String>,
    pub path: String,
}

/// What a `configurations` file adds to the kustomization's transformer
/// config.
#[derive(Debug, Default)]
pub(crate) struct Configs {
    /// `nameReference` entries.
    pub name_refs: Vec<NameRef>,
    /// `namespace` field specs, added to the namespace transformer's.
    pub namespace: Vec<Node>,
}

/// Reads a transformer configuration file: `nameReference` and `namespace`
/// are implemented; `varReference` only matters to `vars`, which the
/// native renderer refuses on its own; any other non-empty section is
/// unsupported.
pub fn configuration(tree: &Tree, path: &str) -> Result<Configs, Error> {
    let docs = documents(tree, path)?;
    let mut out = Configs::default();
    for doc in &docs {
        for (key, value) in doc.as_map() {
            let empty =
                matches!(value.value, Value::Null) || value.as_seq().is_empty() && !value.is_map();
            match key.as_str() {
                "nameReference" => {
                    for entry in value.as_seq() {
                        let target = entry.str_at(&["kind"]).unwrap_or_default();
                        for spec in entry
                            .get("fieldSpecs")
                            .map(Node::as_seq)
                            .unwrap_or_default()
                        {
                            out.name_refs.push(NameRef {
                                target: target.clone(),
                                referrer: spec.str_at(&["kind"]),
                                path: spec.str_at(&["path"]).unwrap_or_default(),
                            });
                        }
                    }
                }
                "namespace" => out.namespace.extend(value.as_seq().iter().cloned()),
                "varReference" => {}
                _ if empty => {}
                other => {
                    return Err(Error::unsupported(format!(
                        "configurations section `{other}` in {path}:{} (the native renderer implements nameReference, namespace and varReference; use --renderer kustomize or auto)",
                        value.line
                    )));
                }
            }
        }
    }
    Ok(out)
}
