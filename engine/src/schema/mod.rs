//! Schemas rendered objects are validated against, as the API server would
//! on server-side apply: custom resources against their CRD's
//! `openAPIV3Schema` ([`crd`]), built-in kinds against the Kubernetes
//! OpenAPI of the cluster's minor ([`kubernetes`], embedded).
//!
//! One [`Schema`] type serves both: types, properties, required fields,
//! items, additional properties, enums, patterns, lengths and bounds,
//! `x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`,
//! `x-kubernetes-embedded-resource`, `oneOf`/`anyOf`/`allOf`, and
//! references (`$ref`, built-ins only). What an object carries that its
//! schema does not declare is an unknown field: server-side apply rejects
//! it for built-in kinds ("field not declared in schema") and prunes it for
//! custom resources.

pub mod crd;
pub mod flux;
pub mod kubernetes;
pub mod meta;

use std::collections::BTreeMap;

use crate::yaml::{Node, Value};

/// A JSON type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// `object`: a map.
    Object,
    /// `array`: a sequence.
    Array,
    /// `string`.
    String,
    /// `integer`: a whole number.
    Integer,
    /// `number`: an integer or a float.
    Number,
    /// `boolean`.
    Boolean,
}

impl Type {
    fn parse(s: &str) -> Option<Type> {
        Some(match s {
            "object" => Type::Object,
            "array" => Type::Array,
            "string" => Type::String,
            "integer" => Type::Integer,
            "number" => Type::Number,
            "boolean" => Type::Boolean,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Type::Object => "object",
            Type::Array => "array",
            Type::String => "string",
            Type::Integer => "integer",
            Type::Number => "number",
            Type::Boolean => "boolean",
        }
    }
}

/// What an object may carry besides its declared properties.
#[derive(Debug, Clone, Default)]
pub enum Additional {
    /// Nothing: an undeclared field is unknown.
    #[default]
    Closed,
    /// Anything.
    Any,
    /// Values of this schema (a map).
    Schema(Box<Schema>),
}

/// One schema node.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// Empty: any type.
    pub types: Vec<Type>,
    /// Declared properties (`properties`), by name.
    pub properties: BTreeMap<String, Schema>,
    /// Properties an object must carry (`required`).
    pub required: Vec<String>,
    /// The schema of an array's items (`items`).
    pub items: Option<Box<Schema>>,
    /// What an object may carry besides its properties (`additionalProperties`).
    pub additional: Additional,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields`: anything below goes.
    pub preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource`: an object with apiVersion, kind,
    /// metadata.
    pub embedded: bool,
    /// Allowed values (`enum`), as text; empty: any.
    pub enum_values: Vec<String>,
    /// The regular expression a string must match (`pattern`), when it compiles.
    pub pattern: Option<regex::Regex>,
    /// `format` (only `int32` is checked: a number must fit one).
    pub format: Option<String>,
    /// The fewest characters a string may have (`minLength`).
    pub min_length: Option<u64>,
    /// The most characters a string may have (`maxLength`).
    pub max_length: Option<u64>,
    /// The least a number may be (`minimum`).
    pub minimum: Option<f64>,
    /// The most a number may be (`maximum`).
    pub maximum: Option<f64>,
    /// The fewest items an array may have (`minItems`).
    pub min_items: Option<u64>,
    /// The most items an array may have (`maxItems`).
    pub max_items: Option<u64>,
    /// `oneOf` alternatives: a value must fit one, when they carry types.
    pub one_of: Vec<Schema>,
    /// `anyOf` alternatives: a value must fit one, when they carry types.
    pub any_of: Vec<Schema>,
    /// `allOf`: schemas a value must fit, every one.
    pub all_of: Vec<Schema>,
    /// `$ref` to a named definition.
    pub reference: Option<String>,
    /// Where the schema is written (a CRD's line), 0 when unknown.
    pub line: u32,
}

/// Named definitions `$ref`s resolve to.
pub(crate) trait Definitions {
    /// The definition named `name`, if there is one.
    fn get(&self, name: &str) -> Option<&Schema>;
}

/// One way an object breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// `spec.template.spec.containers[0].env[1].value`.
    pub path: String,
    /// The line of the offending value (or of the object missing a field).
    pub line: u32,
    /// What is wrong, in words.
    pub message: String,
    /// An undeclared field (pruned for custom resources, rejected for
    /// built-in kinds).
    pub unknown_field: bool,
    /// The schema's line (a CRD's), 0 when unknown.
    pub schema_line: u32,
}

/// Where a value is in its object, written out only for a violation:
/// `spec.template.spec.containers[0].env[1].value`, or a key with a `.` or
/// `/` in brackets (`metadata.labels["app.kubernetes.io/name"]`).
#[derive(Debug, Clone, Copy)]
pub enum Path<'p> {
    /// A path given as text (`""` for the object itself).
    Text(&'p str),
    /// A mapping key below a path.
    Key(&'p Path<'p>, &'p str),
    /// A list index below a path.
    Index(&'p Path<'p>, usize),
}

impl Path<'_> {
    fn is_root(&self) -> bool {
        matches!(self, Path::Text(""))
    }

    fn write(&self, out: &mut String) {
        match self {
            Path::Text(t) => out.push_str(t),
            Path::Key(parent, k) => {
                parent.write(out);
                if parent.is_root() {
                    out.push_str(k);
                } else if k.contains('.') || k.contains('/') {
                    out.push_str("[\"");
                    out.push_str(k);
                    out.push_str("\"]");
                } else {
                    out.push('.');
                    out.push_str(k);
                }
            }
            Path::Index(parent, i) => {
                parent.write(out);
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let mut out = String::new();
        self.write(&mut out);
        f.write_str(&out)
    }
}

/// What validation keeps track of.
pub(crate) struct Validator<'a> {
    /// The definitions `$ref`s resolve to.
    pub defs: &'a dyn Definitions,
    /// Stop after this many violations per object.
    pub limit: usize,
    /// The violations found so far.
    pub out: Vec<Violation>,
    /// Top-level fields of the object not validated (`status`, which the
    /// API server ignores on apply, and SOPS metadata).
    pub skip_top: &'static [&'static str],
}

impl std::fmt::Debug for Validator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("Validator")
            .field("limit", &self.limit)
            .field("out", &self.out)
            .finish()
    }
}

impl<'a> Validator<'a> {
    /// Validates `node` against `schema` at `path`.
    pub fn check(&mut self, schema: &'a Schema, node: &Node, path: &str) {
        self.check_at(schema, node, &Path::Text(path));
    }

    /// As [`Validator::check`], at a path written out only if needed.
    pub(crate) fn check_at(&mut self, schema: &'a Schema, node: &Node, path: &Path) {
        if self.out.len() >= self.limit {
            return;
        }
        let schema = self.resolve(schema);
        // A value postBuild did not substitute is reported on its own.
        if matches!(&node.value, Value::String(s) if s.contains("${")) {
            return;
        }
        if matches!(node.value, Value::Null) {
            return; // null removes the field under server-side apply
        }
        if schema.preserve_unknown && schema.properties.is_empty() && schema.types.is_empty() {
            return;
        }
        for s in &schema.all_of {
            self.check_at(s, node, path);
        }
        if !schema.one_of.is_empty() || !schema.any_of.is_empty() {
            let alternatives = if schema.one_of.is_empty() {
                &schema.any_of
            } else {
                &schema.one_of
            };
            let fits = alternatives.iter().any(|alt| {
                let mut probe = Validator {
                    defs: self.defs,
                    limit: 1,
                    out: Vec::new(),
                    skip_top: self.skip_top,
                };
                probe.check_at(alt, node, path);
                probe.out.is_empty()
            });
            // Structural schemas use oneOf/anyOf for validation only; when
            // the alternatives also carry types, a value that fits none is
            // wrong.
            let typed = alternatives
                .iter()
                .any(|a| !self.resolve(a).types.is_empty());
            if !fits && typed && schema.types.is_empty() {
                self.push(
                    path,
                    node.line,
                    format!("{} fits none of the schema's alternatives", describe(node)),
                    schema,
                );
                return;
            }
        }
        if !schema.types.is_empty() && !self.type_fits(schema, node) {
            let wanted: Vec<&str> = schema.types.iter().map(|t| t.name()).collect();
            self.push(
                path,
                node.line,
                format!("expected {}, got {}", wanted.join(" or "), describe(node)),
                schema,
            );
            return;
        }
        match &node.value {
            Value::Map(entries) => self.object(schema, node, entries, path),
            Value::Seq(items) => {
                if let Some(min) = schema.min_items
                    && (items.len() as u64) < min
                {
                    self.push(
                        path,
                        node.line,
                        format!("has {} items, fewer than {min}", items.len()),
                        schema,
                    );
                }
                if let Some(max) = schema.max_items
                    && (items.len() as u64) > max
                {
                    self.push(
                        path,
                        node.line,
                        format!("has {} items, more than {max}", items.len()),
                        schema,
                    );
                }
                if let Some(item) = &schema.items {
                    for (i, n) in items.iter().enumerate() {
                        self.check_at(item, n, &Path::Index(path, i));
                    }
                }
            }
            Value::String(s) => self.string(schema, node, s, path),
            Value::Int(i) => self.number(schema, node, *i as f64, path),
            Value::Float(f) => self.number(schema, node, *f, path),
            Value::Bool(_) | Value::Null => {}
        }
        if !schema.enum_values.is_empty() {
            let text = scalar_text(node);
            if let Some(text) = text
                && !schema.enum_values.contains(&text)
            {
                self.push(
                    path,
                    node.line,
                    format!(
                        "{} is not one of {}",
                        describe(node),
                        schema.enum_values.join(", ")
                    ),
                    schema,
                );
            }
        }
    }

    /// The schema a `$ref` names (followed through chains).
    fn resolve(&self, schema: &'a Schema) -> &'a Schema {
        let mut s = schema;
        for _ in 0..32 {
            match s.reference.as_deref().and_then(|r| self.defs.get(r)) {
                Some(t) => s = t,
                None => break,
            }
        }
        s
    }

    fn type_fits(&self, schema: &Schema, node: &Node) -> bool {
        if schema.int_or_string && matches!(node.value, Value::Int(_) | Value::String(_)) {
            return true;
        }
        schema.types.iter().any(|t| match (t, &node.value) {
            (Type::Object, Value::Map(_)) => true,
            (Type::Array, Value::Seq(_)) => true,
            (Type::String, Value::String(_)) => true,
            (Type::Integer, Value::Int(_)) => true,
            (Type::Integer, Value::Float(f)) => f.fract() == 0.0,
            (Type::Number, Value::Int(_) | Value::Float(_)) => true,
            (Type::Boolean, Value::Bool(_)) => true,
            _ => false,
        })
    }

    fn object(&mut self, schema: &'a Schema, node: &Node, entries: &[(String, Node)], path: &Path) {
        let top = path.is_root();
        for r in &schema.required {
            if !entries.iter().any(|(k, _)| k == r) {
                self.push(
                    &Path::Key(path, r),
                    node.line,
                    "required field missing".into(),
                    schema,
                );
            }
        }
        let open = schema.preserve_unknown
            || (schema.properties.is_empty()
                && matches!(schema.additional, Additional::Closed)
                && !schema.embedded);
        for (k, v) in entries {
            if top && self.skip_top.contains(&k.as_str()) {
                continue;
            }
            if let Some(p) = schema.properties.get(k) {
                self.check_at(p, v, &Path::Key(path, k));
                continue;
            }
            if schema.embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            match &schema.additional {
                Additional::Schema(s) => self.check_at(s, v, &Path::Key(path, k)),
                Additional::Any => {}
                Additional::Closed if open => {}
                Additional::Closed => {
                    if self.out.len() < self.limit {
                        self.out.push(Violation {
                            path: Path::Key(path, k).to_string(),
                            line: v.line.max(node.line),
                            message: "unknown field".into(),
                            unknown_field: true,
                            schema_line: schema.line,
                        });
                    }
                }
            }
        }
    }

    fn string(&mut self, schema: &Schema, node: &Node, s: &str, path: &Path) {
        let len = s.chars().count() as u64;
        if let Some(min) = schema.min_length
            && len < min
        {
            self.push(
                path,
                node.line,
                format!("is {len} characters, shorter than {min}"),
                schema,
            );
        }
        if let Some(max) = schema.max_length
            && len > max
        {
            self.push(
                path,
                node.line,
                format!("is {len} characters, longer than {max}"),
                schema,
            );
        }
        if let Some(re) = &schema.pattern
            && !re.is_match(s)
        {
            self.push(
                path,
                node.line,
                format!("\"{s}\" does not match {}", re.as_str()),
                schema,
            );
        }
    }

    fn number(&mut self, schema: &Schema, node: &Node, n: f64, path: &Path) {
        if let Some(min) = schema.minimum
            && n < min
        {
            self.push(
                path,
                node.line,
                format!("{n} is less than the minimum {min}"),
                schema,
            );
        }
        if let Some(max) = schema.maximum
            && n > max
        {
            self.push(
                path,
                node.line,
                format!("{n} is more than the maximum {max}"),
                schema,
            );
        }
        let bound = match schema.format.as_deref() {
            Some("int32") => Some(i32::MAX as f64),
            _ => None,
        };
        if let Some(b) = bound
            && n.abs() > b
        {
            self.push(
                path,
                node.line,
                format!("{n} does not fit an int32"),
                schema,
            );
        }
    }

    fn push(&mut self, path: &Path, line: u32, message: String, schema: &Schema) {
        if self.out.len() < self.limit {
            self.out.push(Violation {
                path: path.to_string(),
                line,
                message,
                unknown_field: false,
                schema_line: schema.line,
            });
        }
    }
}

/// A value in words: `string "3"`, `integer 8080`, `an object`.
fn describe(node: &Node) -> String {
    match &node.value {
        Value::String(s) => format!("string \"{}\"", truncate(s)),
        Value::Int(i) => format!("integer {i}"),
        Value::Float(f) => format!("number {f}"),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Null => "null".into(),
        Value::Seq(_) => "a list".into(),
        Value::Map(_) => "an object".into(),
    }
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

fn scalar_text(node: &Node) -> Option<String> {
    node.as_scalar_string()
}
