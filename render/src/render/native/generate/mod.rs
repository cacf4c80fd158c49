//! configMapGenerator / secretGenerator (with generatorOptions, behaviors and
//! kustomize's exact name hash), and replacements.

use std::collections::BTreeMap;

mod hash;
mod replacements;

use super::load::Kustomization;
use super::{Origin, Res, same_id};
use crate::render::Error;
use crate::render::Tree;
use crate::yaml::{Node, Value};
use hash::{base64, name_hash, wrap_base64};
pub(super) use replacements::replacements;

/// A generated object and how it meets existing ones.
pub struct Generated {
    res: Res,
    behavior: String,
}

/// Runs the kustomization's generators (ConfigMaps, then Secrets).
pub fn run(
    k: &Kustomization,
    tree: &Tree,
    dir: &str,
    file: &str,
    origin: &str,
) -> Result<Vec<Generated>, Error> {
    let global = k.generator_options.clone();
    let mut out = Vec::new();
    for (entries, kind) in [
        (&k.config_map_generator, "ConfigMap"),
        (&k.secret_generator, "Secret"),
    ] {
        for entry in entries {
            out.push(generate(
                entry,
                kind,
                global.as_ref(),
                tree,
                dir,
                file,
                origin,
            )?);
        }
    }
    Ok(out)
}

/// Reads a generator input (an env file, a file), relative to the
/// kustomization's directory and inside the source.
fn read_input(tree: &Tree, dir: &str, at: &str, what: &str, path: &str) -> Result<Vec<u8>, Error> {
    // kustomize fetches an http(s) input (`FileLoader.Load`); this tool
    // only with --fetch-remote (then it is mounted): otherwise the content
    // is empty, and remote-base says so.
    if crate::render::reach::is_url(path) && tree.mounted(path).is_none() {
        return Ok(Vec::new());
    }
    let resolved = tree
        .resolve(dir, path)
        .map_err(|m| Error::from(format!("{at}: {what} {}", m.describe(path))))?;
    tree.read(&resolved)
        .map(|b| b.into_owned())
        .map_err(|m| Error::from(format!("{at}: {what} {}", m.describe(path))))
}

/// One generator entry (of `configMapGenerator`, `secretGenerator` or a
/// generator config): the ConfigMap or Secret (`kind`) it makes, with the
/// kustomization's `generatorOptions` (`global`).
pub(super) fn generate(
    entry: &Node,
    kind: &str,
    global: Option<&Node>,
    tree: &Tree,
    dir: &str,
    file: &str,
    origin: &str,
) -> Result<Generated, Error> {
    let name = entry
        .str_at(&["name"])
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            Error::at(
                file,
                entry.line,
                format!("a {} must have a name", kind.to_lowercase()),
            )
        })?;
    let inputs = Inputs {
        entry,
        tree,
        dir,
        file,
        at: format!("{file}:{}", entry.line),
    };
    let data = inputs.data(&name)?;
    let local = entry.get("options");
    let flag = |key: &str| {
        [global, local]
            .into_iter()
            .flatten()
            .any(|o| o.get(key).and_then(Node::as_bool) == Some(true))
    };
    let mut node = object(entry, kind, &name, global);
    put_data(&mut node, entry, kind, data);
    if flag("immutable") {
        node.set("immutable", Node::new(Value::Bool(true)));
    }
    let mut res = Res::new(
        node,
        Origin::Generated {
            kustomization: origin.to_string(),
            generator: if kind == "ConfigMap" {
                "ConfigMapGenerator"
            } else {
                "SecretGenerator"
            },
        },
    );
    res.needs_hash = !flag("disableNameSuffixHash");
    Ok(Generated {
        res,
        behavior: entry.str_at(&["behavior"]).unwrap_or_default(),
    })
}

/// Where a generator entry reads its data: the entry, the source tree,
/// the kustomization's directory and file, and the entry's place
/// (`file:line`) for messages.
struct Inputs<'a> {
    entry: &'a Node,
    tree: &'a Tree<'a>,
    dir: &'a str,
    file: &'a str,
    at: String,
}

impl Inputs<'_> {
    /// The entry's data, sorted by key: its env files' pairs, its
    /// literals, its files; a repeated key is an error.
    fn data(&self, name: &str) -> Result<Vec<(String, Vec<u8>)>, Error> {
        let (entry, file) = (self.entry, self.file);
        let mut data: Vec<(String, Vec<u8>)> = Vec::new();
        let mut push = |key: String, value: Vec<u8>| -> Result<(), Error> {
            if data.iter().any(|(k, _)| *k == key) {
                return Err(Error::at(
                    file,
                    entry.line,
                    format!("configmap {name} illegally repeats the key `{key}`"),
                ));
            }
            data.push((key, value));
            Ok(())
        };
        let mut envs = self.strings("envs");
        envs.extend(entry.str_at(&["env"]));
        for env in envs {
            for (k, v) in self.env_file(&env)? {
                push(k, v.into_bytes())?;
            }
        }
        for literal in self.strings("literals") {
            let Some((k, v)) = literal.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                return Err(Error::at(
                    file,
                    entry.line,
                    format!("invalid literal source {literal}, expected key=value"),
                ));
            };
            let v = strip_matching_quotes(v);
            push(k.to_string(), v.as_bytes().to_vec())?;
        }
        for file in self.strings("files") {
            let (key, path) = self.file_source(&file)?;
            let bytes = read_input(self.tree, self.dir, &self.at, "file", &path)?;
            push(key, bytes)?;
        }
        data.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(data)
    }

    /// The entry's list `field`, as strings.
    fn strings(&self, field: &str) -> Vec<String> {
        self.entry
            .get(field)
            .map(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(Node::as_scalar_string)
            .collect()
    }

    /// The `KEY=value` pairs of an env file (a leading BOM, blank lines and
    /// comments skipped; a line without `=` is a key with an empty value).
    fn env_file(&self, env: &str) -> Result<Vec<(String, String)>, Error> {
        let text = read_input(self.tree, self.dir, &self.at, "env file", env)?;
        let text = String::from_utf8(text).map_err(|_| {
            Error::at(
                self.file,
                self.entry.line,
                format!("env file {env} is not valid UTF-8"),
            )
        })?;
        let mut out = Vec::new();
        for (i, line) in text.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let line = if i == 0 {
                line.strip_prefix('\u{feff}').unwrap_or(line)
            } else {
                line
            };
            let line = line.trim_start();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (k, v) = line.split_once('=').unwrap_or((line, ""));
            out.push((k.to_string(), v.to_string()));
        }
        Ok(out)
    }

    /// The key and path of a `files:` source: `KEY=PATH`, or `PATH` keyed
    /// by its file name.
    fn file_source(&self, file: &str) -> Result<(String, String), Error> {
        let at = &self.at;
        Ok(match file.split_once('=') {
            Some(("", _)) => {
                return Err(Error::from(format!(
                    "{at}: missing key name for file {file}"
                )));
            }
            Some((_, "")) => {
                return Err(Error::from(format!("{at}: missing file path for {file}")));
            }
            Some((k, p)) if p.contains('=') => {
                return Err(Error::from(format!(
                    "{at}: key names or file paths cannot contain '=': {k}"
                )));
            }
            Some((k, p)) => (k.to_string(), p.to_string()),
            None => (
                file.rsplit('/').next().unwrap_or(file).to_string(),
                file.to_string(),
            ),
        })
    }
}

/// The generated object without its data: kind, name, namespace, and
/// the labels and annotations of `generatorOptions` merged with the
/// entry's options (local keys win).
fn object(entry: &Node, kind: &str, name: &str, global: Option<&Node>) -> Node {
    let mut node = Node::new(Value::Map(Vec::new()));
    node.set("apiVersion", s("v1"));
    node.set("kind", s(kind));
    let metadata = node.map_entry("metadata");
    metadata.set("name", s(name));
    if let Some(ns) = entry.str_at(&["namespace"]).filter(|n| !n.is_empty()) {
        metadata.set("namespace", s(&ns));
    }
    // generatorOptions merged with the entry's options: local keys win.
    let local = entry.get("options");
    for field in ["labels", "annotations"] {
        let mut merged: BTreeMap<String, String> = BTreeMap::new();
        for source in [global, local].into_iter().flatten() {
            for (k, v) in source.get(field).map(Node::as_map).unwrap_or_default() {
                merged.insert(k.clone(), v.as_scalar_string().unwrap_or_default());
            }
        }
        if !merged.is_empty() {
            let target = node.map_entry("metadata").map_entry(field);
            for (k, v) in merged {
                target.set(&k, s(&v));
            }
        }
    }
    node
}

/// The data, as a ConfigMap holds it (text in `data`, the rest in
/// `binaryData`) or a Secret (base64, with its `type`).
fn put_data(node: &mut Node, entry: &Node, kind: &str, data: Vec<(String, Vec<u8>)>) {
    if kind == "ConfigMap" {
        let mut text_data = Vec::new();
        let mut binary = Vec::new();
        for (k, v) in data {
            match String::from_utf8(v) {
                Ok(t) => text_data.push((k, s(&t))),
                // Wrapped as Secret data is (kyaml's `encodeBase64`).
                Err(e) => binary.push((k, s(&wrap_base64(&base64(e.as_bytes()))))),
            }
        }
        if !text_data.is_empty() {
            node.set("data", Node::new(Value::Map(text_data)));
        }
        if !binary.is_empty() {
            node.set("binaryData", Node::new(Value::Map(binary)));
        }
    } else {
        let encoded: Vec<(String, Node)> = data
            .into_iter()
            .map(|(k, v)| (k, s(&wrap_base64(&base64(&v)))))
            .collect();
        node.set(
            "type",
            s(&entry.str_at(&["type"]).unwrap_or_else(|| "Opaque".into())),
        );
        node.set("data", Node::new(Value::Map(encoded)));
    }
}

fn s(text: &str) -> Node {
    Node::new(Value::String(text.to_string()))
}

fn strip_matching_quotes(v: &str) -> &str {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// Adds generated objects with kustomize's behaviors (create, merge, replace).
pub(crate) fn absorb(acc: &mut Vec<Res>, generated: Vec<Generated>) -> Result<(), Error> {
    for g in generated {
        let id = g.res.id();
        let existing = acc.iter().position(|r| {
            std::iter::once(r.id())
                .chain(r.previous.iter().cloned())
                .any(|rid| same_id(&rid, &id))
        });
        match (existing, g.behavior.as_str()) {
            (None, "merge" | "replace") => {
                return Err(format!(
                    "id {}/{} does not exist; cannot merge or replace",
                    id.kind, id.name
                )
                .into());
            }
            (None, _) => acc.push(g.res),
            (Some(_), "merge" | "replace") => {
                let i = existing.unwrap_or_default();
                let old = &mut acc[i];
                for field in ["data", "binaryData"] {
                    let new_value = g.res.node.get(field).cloned();
                    if g.behavior == "replace" {
                        match new_value {
                            Some(v) => old.node.set(field, v),
                            None => {
                                old.node.remove(field);
                            }
                        }
                    } else if let Some(v) = new_value {
                        let target = old.node.map_entry(field);
                        for (k, val) in v.as_map() {
                            target.set(k, val.clone());
                        }
                    }
                }
                for field in ["labels", "annotations"] {
                    if let Some(v) = g.res.node.path(&["metadata", field]).cloned() {
                        let target = old.node.map_entry("metadata").map_entry(field);
                        for (k, val) in v.as_map() {
                            target.set(k, val.clone());
                        }
                    }
                }
                old.needs_hash = old.needs_hash && g.res.needs_hash;
            }
            (Some(_), _) => {
                return Err(format!(
                    "id {}/{} exists; behavior must be merge or replace",
                    id.kind, id.name
                )
                .into());
            }
        }
    }
    Ok(())
}

/// Appends `-<hash>` to generated ConfigMaps and Secrets (once, at the top).
pub(crate) fn add_hash_suffixes(acc: &mut [Res]) -> Result<(), Error> {
    for r in acc.iter_mut().filter(|r| r.needs_hash) {
        let hash = name_hash(&r.node)?;
        r.store_previous();
        let name = r.name();
        r.set_name(&format!("{name}-{hash}"));
    }
    Ok(())
}
