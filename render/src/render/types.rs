//! kustomize's `types.Kustomization` (kustomize 5.8, `api/types`), and the
//! two ways a kustomization file is decoded into it:
//!
//! * **strict**, as kustomize reads every kustomization of a build
//!   (`Kustomization.Unmarshal`: `yaml.YAMLToJSON`, then `encoding/json`
//!   with `DisallowUnknownFields`): a field it does not know, at any depth,
//!   or a value of the wrong JSON type fails the build;
//! * **loose**, as kustomize-controller reads the kustomization of
//!   `spec.path` before it writes it back (`GenerateManifest` in fluxcd/pkg
//!   `kustomize_generator.go`: `sigs.k8s.io/yaml.Unmarshal`): unknown fields
//!   are dropped (silently, at any depth), a number or boolean where a
//!   string belongs becomes that string, and any other mismatch fails.
//!
//! Field names match case-insensitively in both (`encoding/json`). A null
//! is a Go zero value. YAML 1.1's booleans (`yes`, `on`) are booleans to
//! `YAMLToJSON`; this loader reads them as strings, so a boolean field
//! takes them too.

use crate::yaml::{Node, Value};

/// The shape of a field's value, as its Go type decodes JSON.
#[derive(Debug)]
pub enum Shape {
    /// `string`.
    Str,
    /// `bool`.
    Bool,
    /// An integer (`int`, `int64`: the name).
    Int(&'static str),
    /// `[]string`.
    Strs,
    /// `map[string]string`.
    StrMap,
    /// A struct.
    Struct(&'static Struct),
    /// A slice of structs.
    List(&'static Struct),
    /// Not checked (types the native renderer does not implement).
    Any,
}

/// A Go struct: its name and its JSON fields (inlined structs flattened).
#[derive(Debug)]
pub struct Struct {
    /// The Go type's name, as encoding/json names it in errors.
    pub name: &'static str,
    /// JSON name and shape of each field.
    pub fields: &'static [(&'static str, Shape)],
}

const SELECTOR: Struct = Struct {
    name: "Selector",
    fields: &[
        ("group", Shape::Str),
        ("version", Shape::Str),
        ("kind", Shape::Str),
        ("name", Shape::Str),
        ("namespace", Shape::Str),
        ("annotationSelector", Shape::Str),
        ("labelSelector", Shape::Str),
    ],
};

const PATCH_ARGS: Struct = Struct {
    name: "PatchArgs",
    fields: &[
        ("allowNameChange", Shape::Bool),
        ("allowKindChange", Shape::Bool),
    ],
};

/// `types.Patch` (`patches` and `patchesJson6902` entries).
pub const PATCH: Struct = Struct {
    name: "Patch",
    fields: &[
        ("path", Shape::Str),
        ("patch", Shape::Str),
        ("target", Shape::Struct(&SELECTOR)),
        ("options", Shape::Struct(&PATCH_ARGS)),
    ],
};

const FIELD_OPTIONS: Struct = Struct {
    name: "FieldOptions",
    fields: &[
        ("delimiter", Shape::Str),
        ("index", Shape::Int("int")),
        ("encoding", Shape::Str),
        ("create", Shape::Bool),
    ],
};

const SOURCE_SELECTOR: Struct = Struct {
    name: "SourceSelector",
    fields: &[
        ("group", Shape::Str),
        ("version", Shape::Str),
        ("kind", Shape::Str),
        ("name", Shape::Str),
        ("namespace", Shape::Str),
        ("fieldPath", Shape::Str),
        ("options", Shape::Struct(&FIELD_OPTIONS)),
    ],
};

const TARGET_SELECTOR: Struct = Struct {
    name: "TargetSelector",
    fields: &[
        ("select", Shape::Struct(&SELECTOR)),
        ("reject", Shape::List(&SELECTOR)),
        ("fieldPaths", Shape::Strs),
        ("options", Shape::Struct(&FIELD_OPTIONS)),
    ],
};

/// `types.ReplacementField` (a replacement, or `path:` to a file of them).
pub(crate) const REPLACEMENT: Struct = Struct {
    name: "ReplacementField",
    fields: &[
        ("source", Shape::Struct(&SOURCE_SELECTOR)),
        ("targets", Shape::List(&TARGET_SELECTOR)),
        ("sourceValue", Shape::Str),
        ("path", Shape::Str),
    ],
};

const IMAGE: Struct = Struct {
    name: "Image",
    fields: &[
        ("name", Shape::Str),
        ("newName", Shape::Str),
        ("tagSuffix", Shape::Str),
        ("newTag", Shape::Str),
        ("digest", Shape::Str),
    ],
};

const REPLICA: Struct = Struct {
    name: "Replica",
    fields: &[("name", Shape::Str), ("count", Shape::Int("int64"))],
};

const FIELD_SPEC: Struct = Struct {
    name: "FieldSpec",
    fields: &[
        ("group", Shape::Str),
        ("version", Shape::Str),
        ("kind", Shape::Str),
        ("path", Shape::Str),
        ("create", Shape::Bool),
    ],
};

const LABEL: Struct = Struct {
    name: "Label",
    fields: &[
        ("pairs", Shape::StrMap),
        ("includeSelectors", Shape::Bool),
        ("includeTemplates", Shape::Bool),
        ("fields", Shape::List(&FIELD_SPEC)),
    ],
};

const GENERATOR_OPTIONS: Struct = Struct {
    name: "GeneratorOptions",
    fields: &[
        ("labels", Shape::StrMap),
        ("annotations", Shape::StrMap),
        ("disableNameSuffixHash", Shape::Bool),
        ("immutable", Shape::Bool),
    ],
};

const CONFIG_MAP_ARGS: Struct = Struct {
    name: "ConfigMapArgs",
    fields: &[
        ("namespace", Shape::Str),
        ("name", Shape::Str),
        ("behavior", Shape::Str),
        ("literals", Shape::Strs),
        ("files", Shape::Strs),
        ("envs", Shape::Strs),
        ("env", Shape::Str),
        ("options", Shape::Struct(&GENERATOR_OPTIONS)),
    ],
};

const SECRET_ARGS: Struct = Struct {
    name: "SecretArgs",
    fields: &[
        ("namespace", Shape::Str),
        ("name", Shape::Str),
        ("behavior", Shape::Str),
        ("literals", Shape::Strs),
        ("files", Shape::Strs),
        ("envs", Shape::Strs),
        ("env", Shape::Str),
        ("options", Shape::Struct(&GENERATOR_OPTIONS)),
        ("type", Shape::Str),
    ],
};

const OBJECT_META: Struct = Struct {
    name: "ObjectMeta",
    fields: &[
        ("name", Shape::Str),
        ("namespace", Shape::Str),
        ("labels", Shape::StrMap),
        ("annotations", Shape::StrMap),
    ],
};

const LEGACY_SORT_OPTIONS: Struct = Struct {
    name: "LegacySortOptions",
    fields: &[("orderFirst", Shape::Strs), ("orderLast", Shape::Strs)],
};

const SORT_OPTIONS: Struct = Struct {
    name: "SortOptions",
    fields: &[
        ("order", Shape::Str),
        ("legacySortOptions", Shape::Struct(&LEGACY_SORT_OPTIONS)),
    ],
};

/// `types.Kustomization`.
pub(crate) const KUSTOMIZATION: Struct = Struct {
    name: "Kustomization",
    fields: &[
        ("apiVersion", Shape::Str),
        ("kind", Shape::Str),
        ("metadata", Shape::Struct(&OBJECT_META)),
        ("openapi", Shape::StrMap),
        ("namePrefix", Shape::Str),
        ("nameSuffix", Shape::Str),
        ("namespace", Shape::Str),
        ("commonLabels", Shape::StrMap),
        ("labels", Shape::List(&LABEL)),
        ("commonAnnotations", Shape::StrMap),
        ("patchesStrategicMerge", Shape::Strs),
        ("patchesJson6902", Shape::List(&PATCH)),
        ("patches", Shape::List(&PATCH)),
        ("images", Shape::List(&IMAGE)),
        ("imageTags", Shape::List(&IMAGE)),
        ("replacements", Shape::List(&REPLACEMENT)),
        ("replicas", Shape::List(&REPLICA)),
        ("vars", Shape::Any),
        ("sortOptions", Shape::Struct(&SORT_OPTIONS)),
        ("resources", Shape::Strs),
        ("components", Shape::Strs),
        ("crds", Shape::Strs),
        ("bases", Shape::Strs),
        ("configMapGenerator", Shape::List(&CONFIG_MAP_ARGS)),
        ("secretGenerator", Shape::List(&SECRET_ARGS)),
        ("helmGlobals", Shape::Any),
        ("helmCharts", Shape::Any),
        ("helmChartInflationGenerator", Shape::Any),
        ("generatorOptions", Shape::Struct(&GENERATOR_OPTIONS)),
        ("configurations", Shape::Strs),
        ("generators", Shape::Strs),
        ("transformers", Shape::Strs),
        ("validators", Shape::Strs),
        ("buildMetadata", Shape::Strs),
    ],
};

/// A value encoding/json refuses, at its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The line of the value (or of the key, for an unknown field).
    pub line: u32,
    /// encoding/json's words (`json: unknown field "x"`, `json: cannot
    /// unmarshal number into Go struct field Image.images.newTag of type
    /// string`).
    pub message: String,
}

/// A field kustomize-controller dropped: where, and its path
/// (`images[0].newTg`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// The line of the dropped value.
    pub line: u32,
    /// The field's path from the top of the file.
    pub path: String,
}

/// Decodes `doc` strictly, as kustomize does.
pub fn strict(doc: &Node, shape: &'static Struct) -> Result<(), DecodeError> {
    let mut cx = Decoder {
        loose: false,
        dropped: Vec::new(),
    };
    let mut doc = doc.clone();
    cx.value(&mut doc, &Shape::Struct(shape), shape.name, "", "")
}

/// Decodes `doc` loosely, as kustomize-controller does: the document as it
/// writes it back (unknown fields dropped, scalars coerced to strings where
/// strings belong) and what it dropped.
pub(crate) fn loose(
    doc: &Node,
    shape: &'static Struct,
) -> Result<(Node, Vec<Dropped>), DecodeError> {
    let mut cx = Decoder {
        loose: true,
        dropped: Vec::new(),
    };
    let mut doc = doc.clone();
    cx.value(&mut doc, &Shape::Struct(shape), shape.name, "", "")?;
    Ok((doc, cx.dropped))
}

/// The field of `shape` a key names: exactly, else ignoring case (as
/// encoding/json matches).
fn field<'s>(shape: &'s Struct, key: &str) -> Option<&'s (&'static str, Shape)> {
    shape
        .fields
        .iter()
        .find(|(name, _)| *name == key)
        .or_else(|| {
            shape
                .fields
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(key))
        })
}

struct Decoder {
    loose: bool,
    dropped: Vec<Dropped>,
}

/// encoding/json's name for a value's JSON type.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Int(_) | Value::Float(_) => "number",
        Value::String(_) => "string",
        Value::Seq(_) => "array",
        Value::Map(_) => "object",
    }
}

/// YAML 1.1's boolean words, which `YAMLToJSON` (go-yaml v2) reads as
/// booleans when they are plain.
fn yaml11_bool(text: &str) -> bool {
    matches!(
        text,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
    )
}

impl Decoder {
    /// Checks (and, loosely, normalises) `node` against `shape`. `owner` is
    /// the innermost struct's name and `path` the JSON path from the top,
    /// as encoding/json names a field in its errors; `shown` is the path
    /// with list indexes, for what is dropped.
    fn value(
        &mut self,
        node: &mut Node,
        shape: &Shape,
        owner: &str,
        path: &str,
        shown: &str,
    ) -> Result<(), DecodeError> {
        if matches!(node.value, Value::Null) {
            return Ok(());
        }
        let refuse = |node: &Node, go_type: &str| {
            let at = if path.is_empty() {
                "Go value".to_string()
            } else {
                format!("Go struct field {owner}.{path}")
            };
            Err(DecodeError {
                line: node.line,
                message: format!(
                    "json: cannot unmarshal {} into {at} of type {go_type}",
                    json_type(&node.value)
                ),
            })
        };
        match shape {
            Shape::Any => Ok(()),
            Shape::Str => match &node.value {
                Value::String(_) => Ok(()),
                Value::Int(_) | Value::Float(_) | Value::Bool(_) if self.loose => {
                    // sigs.k8s.io/yaml turns a scalar into the string its
                    // target wants.
                    let text = node.as_scalar_string().unwrap_or_default();
                    node.value = Value::String(text);
                    Ok(())
                }
                _ => refuse(node, "string"),
            },
            Shape::Bool => match &node.value {
                Value::Bool(_) => Ok(()),
                Value::String(s) if yaml11_bool(s) => Ok(()),
                _ => refuse(node, "bool"),
            },
            Shape::Int(go_type) => match &node.value {
                Value::Int(_) => Ok(()),
                Value::Float(f) if f.fract() == 0.0 => Ok(()),
                _ => refuse(node, go_type),
            },
            Shape::Strs => {
                let Value::Seq(items) = &mut node.value else {
                    return refuse(node, "[]string");
                };
                for item in items {
                    self.value(item, &Shape::Str, owner, path, shown)?;
                }
                Ok(())
            }
            Shape::StrMap => {
                let Value::Map(entries) = &mut node.value else {
                    return refuse(node, "map[string]string");
                };
                for (_, item) in entries {
                    self.value(item, &Shape::Str, owner, path, shown)?;
                }
                Ok(())
            }
            Shape::List(inner) => {
                let Value::Seq(items) = &mut node.value else {
                    return refuse(node, &format!("[]types.{}", inner.name));
                };
                for (i, item) in items.iter_mut().enumerate() {
                    self.value(
                        item,
                        &Shape::Struct(inner),
                        owner,
                        path,
                        &format!("{shown}[{i}]"),
                    )?;
                }
                Ok(())
            }
            Shape::Struct(inner) => {
                let line = node.line;
                let Value::Map(entries) = &mut node.value else {
                    return refuse(node, &format!("types.{}", inner.name));
                };
                let mut kept = Vec::with_capacity(entries.len());
                for (key, mut child) in std::mem::take(entries) {
                    let Some((name, child_shape)) = field(inner, &key) else {
                        if !self.loose {
                            return Err(DecodeError {
                                line: if child.line > 0 { child.line } else { line },
                                message: format!("json: unknown field \"{key}\""),
                            });
                        }
                        self.dropped.push(Dropped {
                            line: child.line,
                            path: join(shown, &key),
                        });
                        continue;
                    };
                    self.value(
                        &mut child,
                        child_shape,
                        inner.name,
                        &join(path, name),
                        &join(shown, name),
                    )?;
                    kept.push((name.to_string(), child));
                }
                *entries = kept;
                Ok(())
            }
        }
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Node {
        crate::yaml::parse_documents(text)
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0)
    }

    fn strict_message(text: &str) -> Option<String> {
        strict(&doc(text), &KUSTOMIZATION).err().map(|e| e.message)
    }

    /// Each case and the message kubectl kustomize (5.5) gives for it.
    #[test]
    fn strict_decoding_refuses_what_kustomize_refuses() {
        let cases = [
            (
                "patches:\n- patch: x\n  targt: {kind: A}\n",
                "json: unknown field \"targt\"",
            ),
            (
                "patches:\n- patch: x\n  target: {kind: A, nme: x}\n",
                "json: unknown field \"nme\"",
            ),
            (
                "replacements:\n- source: {kind: A}\n  targts: []\n",
                "json: unknown field \"targts\"",
            ),
            (
                "replacements:\n- source: {kind: A, fieldPth: x}\n",
                "json: unknown field \"fieldPth\"",
            ),
            (
                "configMapGenerator:\n- name: g\n  literal: [a=b]\n",
                "json: unknown field \"literal\"",
            ),
            (
                "metadata: {name: x, foo: 1}\n",
                "json: unknown field \"foo\"",
            ),
            (
                "commonLabels: {v: 1}\n",
                "json: cannot unmarshal number into Go struct field Kustomization.commonLabels of type string",
            ),
            (
                "replicas:\n- name: web\n  count: '3'\n",
                "json: cannot unmarshal string into Go struct field Replica.replicas.count of type int64",
            ),
            (
                "images:\n- name: nginx\n  newTag: 1.25\n",
                "json: cannot unmarshal number into Go struct field Image.images.newTag of type string",
            ),
            (
                "labels:\n- pairs: {a: b}\n  includeSelectors: 'x'\n",
                "json: cannot unmarshal string into Go struct field Label.labels.includeSelectors of type bool",
            ),
            (
                "kind: [Kustomization]\n",
                "json: cannot unmarshal array into Go struct field Kustomization.kind of type string",
            ),
            (
                "kind: 5\n",
                "json: cannot unmarshal number into Go struct field Kustomization.kind of type string",
            ),
        ];
        for (text, said) in cases {
            assert_eq!(strict_message(text).as_deref(), Some(said), "{text}");
        }
        for ok in [
            "images:\n- name: nginx\n  NEWTAG: '1'\n",
            "labels:\n- pairs: {a: b}\n  includeSelectors: yes\n",
            "resources: [a.yaml]\nnamespace: x\n",
            "replacements:\n- path: r.yaml\n",
            "patches:\n- path: p.yaml\n  options: {allowNameChange: true}\n",
        ] {
            assert_eq!(strict_message(ok), None, "{ok}");
        }
    }

    #[test]
    fn loose_decoding_drops_unknown_fields_and_makes_scalars_strings() {
        let (written, dropped) = loose(
            &doc("images:\n- name: nginx\n  newTg: x\n  newTag: 1.25\nnamespace: 5\nfoo: bar\n"),
            &KUSTOMIZATION,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        let paths: Vec<&str> = dropped.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["images[0].newTg", "foo"]);
        assert_eq!(written.str_at(&["namespace"]).as_deref(), Some("5"));
        assert_eq!(
            written
                .path(&["images"])
                .map(|i| i.as_seq()[0].get("newTag").map(|t| t.value.clone())),
            Some(Some(Value::String("1.25".into())))
        );
        assert!(strict(&written, &KUSTOMIZATION).is_ok());
        // What cannot be coerced still fails.
        assert!(loose(&doc("replicas:\n- name: a\n  count: x\n"), &KUSTOMIZATION).is_err());
    }
}
