//! configMapGenerator / secretGenerator (with generatorOptions, behaviors and
//! kustomize's exact name hash), and replacements.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::load::Kustomization;
use super::{Origin, Res, same_id};
use crate::render::Error;
use crate::render::Tree;
use crate::yaml::{Node, Value};

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

#[allow(clippy::too_many_arguments)]
pub(super) fn generate(
    entry: &Node,
    kind: &str,
    global: Option<&Node>,
    tree: &Tree,
    dir: &str,
    file: &str,
    origin: &str,
) -> Result<Generated, Error> {
    let at = format!("{file}:{}", entry.line);
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
    let strings = |field: &str| -> Vec<String> {
        entry
            .get(field)
            .map(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(Node::as_scalar_string)
            .collect()
    };
    let mut envs = strings("envs");
    envs.extend(entry.str_at(&["env"]));
    for env in envs {
        let text = read_input(tree, dir, &at, "env file", &env)?;
        let text = String::from_utf8(text).map_err(|_| {
            Error::at(
                file,
                entry.line,
                format!("env file {env} is not valid UTF-8"),
            )
        })?;
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
            push(k.to_string(), v.as_bytes().to_vec())?;
        }
    }
    for literal in strings("literals") {
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
    for file in strings("files") {
        let (key, path) = match file.split_once('=') {
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
                file.rsplit('/').next().unwrap_or(&file).to_string(),
                file.clone(),
            ),
        };
        let bytes = read_input(tree, dir, &at, "file", &path)?;
        push(key, bytes)?;
    }
    data.sort_by(|a, b| a.0.cmp(&b.0));

    let mut node = Node::new(Value::Map(Vec::new()));
    node.set("apiVersion", s("v1"));
    node.set("kind", s(kind));
    let metadata = node.map_entry("metadata");
    metadata.set("name", s(&name));
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
    let flag = |key: &str| {
        [global, local]
            .into_iter()
            .flatten()
            .any(|o| o.get(key).and_then(Node::as_bool) == Some(true))
    };
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
pub fn absorb(acc: &mut Vec<Res>, generated: Vec<Generated>) -> Result<(), Error> {
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
pub fn add_hash_suffixes(acc: &mut [Res]) -> Result<(), Error> {
    for r in acc.iter_mut().filter(|r| r.needs_hash) {
        let hash = name_hash(&r.node)?;
        r.store_previous();
        let name = r.name();
        r.set_name(&format!("{name}-{hash}"));
    }
    Ok(())
}

/// kustomize's ConfigMap/Secret hash (api/hasher): sha256 of Go's JSON of
/// {kind, name: "" (kustomize's lookup never finds it), data, binaryData |
/// type, stringData}, first 10 hex digits, with 0→g 1→h 3→k a→m e→t.
pub fn name_hash(node: &Node) -> Result<String, Error> {
    let kind = node.str_at(&["kind"]).unwrap_or_default();
    let field = |key: &str| -> serde_json::Value {
        match node.get(key) {
            Some(n) if n.is_map() => n.to_json(),
            _ => serde_json::Value::String(String::new()),
        }
    };
    let mut map = serde_json::Map::new();
    map.insert("kind".into(), serde_json::Value::String(kind.clone()));
    map.insert("name".into(), serde_json::Value::String(String::new()));
    map.insert("data".into(), field("data"));
    if kind == "ConfigMap" {
        if node.get("binaryData").is_some_and(Node::is_map) {
            map.insert("binaryData".into(), field("binaryData"));
        }
    } else {
        map.insert(
            "type".into(),
            serde_json::Value::String(node.str_at(&["type"]).unwrap_or_default()),
        );
        if node.get("stringData").is_some_and(Node::is_map) {
            map.insert("stringData".into(), field("stringData"));
        }
    }
    let json = go_json(&serde_json::Value::Object(map));
    let digest = Sha256::digest(json.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(hex[..10]
        .chars()
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            other => other,
        })
        .collect())
}

/// JSON as Go's encoding/json writes it: sorted keys, no spaces, `<`, `>`,
/// `&`, U+2028 and U+2029 escaped.
fn go_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", go_string(k), go_json(&m[*k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        serde_json::Value::Array(a) => {
            format!("[{}]", a.iter().map(go_json).collect::<Vec<_>>().join(","))
        }
        serde_json::Value::String(s) => go_string(s),
        other => other.to_string(),
    }
}

fn go_string(s: &str) -> String {
    let json = serde_json::Value::String(s.to_string()).to_string();
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// kustomize wraps long base64 values at 70 characters, each line ending in
/// a newline (the last one too).
fn wrap_base64(encoded: &str) -> String {
    if encoded.len() < 70 {
        return encoded.to_string();
    }
    let mut out = String::new();
    for chunk in encoded.as_bytes().chunks(70) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// `replacements`: copy a source field into target fields.
pub fn replacements(
    acc: &mut [Res],
    entries: &[Node],
    tree: &Tree,
    dir: &str,
    file: &str,
) -> Result<(), Error> {
    // A `path:` entry names a file holding one replacement or a list of
    // them (kustomize unmarshals either).
    let mut expanded: Vec<(String, Node)> = Vec::new();
    for entry in entries {
        let at = format!("{file}:{}", entry.line);
        match entry.str_at(&["path"]) {
            Some(path) => {
                if entry.get("source").is_some() || entry.get("targets").is_some() {
                    return Err(Error::at(
                        file,
                        entry.line,
                        "cannot specify both path and inline replacement".to_string(),
                    ));
                }
                let bytes = read_input(tree, dir, &at, "replacements file", &path)?;
                let text = String::from_utf8(bytes).map_err(|_| {
                    Error::at(file, entry.line, format!("{path} is not valid UTF-8"))
                })?;
                let doc = crate::yaml::parse_documents(&text)
                    .map_err(|e| Error::at(file, entry.line, format!("{path}: {e}")))?
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::at(file, entry.line, format!("{path} is empty")))?;
                match &doc.value {
                    Value::Seq(items) => {
                        for item in items {
                            expanded.push((format!("{at} ({path}:{})", item.line), item.clone()));
                        }
                    }
                    Value::Map(_) => expanded.push((format!("{at} ({path}:{})", doc.line), doc)),
                    _ => {
                        return Err(Error::at(
                            file,
                            entry.line,
                            format!(
                                "{path}: unsupported replacement type (neither a replacement nor a list of them)"
                            ),
                        ));
                    }
                }
            }
            None => expanded.push((at, entry.clone())),
        }
    }
    for (at, entry) in expanded {
        let source = entry
            .get("source")
            .ok_or_else(|| Error::from(format!("{at}: replacement has no source")))?;
        let source_path = source
            .str_at(&["fieldPath"])
            .unwrap_or_else(|| "metadata.name".into());
        let candidates: Vec<&Res> = acc.iter().filter(|r| select_matches(source, r)).collect();
        let [src] = candidates.as_slice() else {
            return Err(Error::from(format!(
                "{at}: replacement source matches {} resources, expected exactly one",
                candidates.len()
            )));
        };
        let mut value = get_path(&src.node, &source_path)
            .cloned()
            .ok_or_else(|| Error::from(format!("{at}: source field {source_path} not found")))?;
        if let Some(opts) = source.get("options")
            && let (Some(delim), Some(Value::Int(i))) = (
                opts.str_at(&["delimiter"]),
                opts.get("index").map(|n| n.value.clone()),
            )
        {
            // kustomize (replacement getRefinedValue): an index outside
            // the parts fails the build.
            let text = value.as_scalar_string().unwrap_or_default();
            let part = usize::try_from(i)
                .ok()
                .and_then(|i| text.split(delim.as_str()).nth(i))
                .ok_or_else(|| {
                    Error::from(format!(
                        "{at}: options.index {i} is out of bounds for value {text}"
                    ))
                })?
                .to_string();
            value = Node::new(Value::String(part));
        }
        for target in entry.get("targets").map(Node::as_seq).unwrap_or_default() {
            let select = target
                .get("select")
                .ok_or_else(|| Error::from(format!("{at}: replacement target has no select")))?;
            let rejects = target.get("reject").map(Node::as_seq).unwrap_or_default();
            let create = target
                .path(&["options", "create"])
                .and_then(Node::as_bool)
                .unwrap_or(false);
            let delim = target
                .path(&["options", "delimiter"])
                .and_then(Node::as_scalar_string);
            let index = match target.path(&["options", "index"]).map(|n| &n.value) {
                Some(Value::Int(i)) => Some(*i),
                _ => None,
            };
            for r in acc.iter_mut() {
                if !select_matches(select, r) || rejects.iter().any(|rej| select_matches(rej, r)) {
                    continue;
                }
                for fp in target
                    .get("fieldPaths")
                    .map(Node::as_seq)
                    .unwrap_or_default()
                {
                    let fp = fp.as_scalar_string().unwrap_or_default();
                    let source = value.as_scalar_string().unwrap_or_default();
                    let mut set = |node: &mut Node| -> Result<(), PathError> {
                        match (&delim, index) {
                            (Some(d), Some(i)) => {
                                if matches!(node.value, Value::Map(_) | Value::Seq(_)) {
                                    return Err(PathError::Delimiter);
                                }
                                // kustomize (replacement setFieldValue): a
                                // negative index prepends, one past the
                                // parts appends, any other replaces that
                                // part.
                                let current = node.as_scalar_string().unwrap_or_default();
                                let mut parts: Vec<String> =
                                    current.split(d.as_str()).map(str::to_string).collect();
                                match usize::try_from(i) {
                                    Err(_) => parts.insert(0, source.clone()),
                                    Ok(i) if i >= parts.len() => parts.push(source.clone()),
                                    Ok(i) => parts[i] = source.clone(),
                                }
                                *node = Node::new(Value::String(parts.join(d)));
                            }
                            _ => *node = value.clone(),
                        }
                        Ok(())
                    };
                    let found = set_targets(&mut r.node, &segments(&fp), create, &mut set)
                        .map_err(|e| {
                            Error::from(format!(
                                "{at}: unable to find field \"{fp}\" in replacement target: {e}"
                            ))
                        })?;
                    if found == 0 {
                        return Err(Error::from(format!(
                            "{at}: unable to find field \"{fp}\" in replacement target"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether a replacement's `select` (or `reject`, or `source`) picks `r`:
/// by its current id or any id it had before a prefix, suffix or namespace
/// changed it (kustomize's `utils.MakeResIds` in the replacement filter), so
/// a kubebuilder scaffold's `name: serving-cert` still finds the
/// Certificate its `namePrefix` renamed.
fn select_matches(select: &Node, r: &Res) -> bool {
    let eq = |key: &str, have: &str| select.str_at(&[key]).is_none_or(|want| want == have);
    let matches = |id: &super::Id| {
        eq("group", &id.group)
            && eq("version", &id.version)
            && eq("kind", &id.kind)
            && eq("name", &id.name)
            && eq("namespace", &id.namespace)
    };
    matches(&r.id()) || r.previous.iter().any(matches)
}

/// Replacement field paths: `a.b.c`, `list.[name=x].field`, `list.0.field`.
fn segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth -= 1;
                cur.push(c);
            }
            '.' if depth == 0 => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .filter(|s| !s.is_empty())
        // `[key.with.dots]` without `=` is a map key, not a list selector
        // (kyaml's field paths: `metadata.annotations.[cert-manager.io/inject-ca-from]`).
        .map(
            |s| match s.strip_prefix('[').and_then(|k| k.strip_suffix(']')) {
                Some(key) if !key.contains('=') => key.to_string(),
                _ => s,
            },
        )
        .collect()
}

fn get_path<'a>(node: &'a Node, path: &str) -> Option<&'a Node> {
    let mut cur = node;
    for seg in segments(path) {
        cur = step(cur, &seg)?;
    }
    Some(cur)
}

fn step<'a>(node: &'a Node, seg: &str) -> Option<&'a Node> {
    if let Some(sel) = seg.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        let (k, v) = sel.split_once('=')?;
        return node
            .as_seq()
            .iter()
            .find(|i| i.str_at(&[k]).as_deref() == Some(v));
    }
    if let Ok(i) = seg.parse::<usize>()
        && let Value::Seq(items) = &node.value
    {
        return items.get(i);
    }
    node.get(seg)
}

/// Why kyaml's `PathMatcher` cannot walk a replacement target's path
/// (its words).
#[derive(Debug, thiserror::Error)]
enum PathError {
    /// A segment of the wrong kind for the node it meets.
    #[error("wrong node kind: expected {expected} but got {found}")]
    WrongKind {
        /// `SequenceNode` or `MappingNode`.
        expected: &'static str,
        /// What the node is.
        found: &'static str,
    },
    /// An index past the end.
    #[error("index {index} specified but only {len} elements found")]
    Index {
        /// The index.
        index: usize,
        /// The sequence's length.
        len: usize,
    },
    /// An index too large to be one.
    #[error("index {0} is out of range")]
    IndexRange(String),
    /// `[field]` without `=`.
    #[error("list path element must contain fieldName=fieldValue for element to match")]
    ListElement,
    /// `[field=regex]` whose regex does not compile.
    #[error(transparent)]
    Regex(#[from] regex::Error),
    /// A delimiter option on a map or a list.
    #[error("delimiter option can only be used with scalar nodes")]
    Delimiter,
}

/// kyaml's `PathMatcher` over a replacement target: `set` is called on
/// every node `segs` names (creating what is missing when `create`), and
/// the count is returned; 0 is kustomize's "unable to find field". A
/// segment is a field, an index (`0`: only an existing element, or the
/// one just past the end when creating), a `[field=regex]` or
/// `[=regex]` element match (Go regular expressions, unanchored, as
/// kyaml's `visitElem`), or `*`. The wrong kind of node for a segment is
/// kyaml's error, as is an index past the end. A path that continues into
/// a scalar names structured data inside it (kustomize 5.8): not modelled,
/// it is left as it is.
fn set_targets(
    cur: &mut Node,
    segs: &[String],
    create: bool,
    set: &mut dyn FnMut(&mut Node) -> Result<(), PathError>,
) -> Result<usize, PathError> {
    let Some((seg, rest)) = segs.split_first() else {
        set(cur)?;
        return Ok(1);
    };
    let fresh = |next: Option<&String>| match next {
        Some(n) if is_index(n) || n.starts_with('[') || n == "*" => {
            Node::new(Value::Seq(Vec::new()))
        }
        Some(_) => Node::new(Value::Map(Vec::new())),
        None => Node::new(Value::Null),
    };
    let kind = |node: &Node| match node.value {
        Value::Map(_) => "MappingNode",
        Value::Seq(_) => "SequenceNode",
        _ => "ScalarNode",
    };
    if is_index(seg) || seg.starts_with('[') || seg == "*" {
        let found = kind(cur);
        let Value::Seq(items) = &mut cur.value else {
            return Err(PathError::WrongKind {
                expected: "SequenceNode",
                found,
            });
        };
        if is_index(seg) {
            let i: usize = seg
                .parse()
                .map_err(|_| PathError::IndexRange(seg.clone()))?;
            if create && items.len() == i {
                items.push(fresh(rest.first()));
            }
            let len = items.len();
            let item = items.get_mut(i).ok_or(PathError::Index { index: i, len })?;
            return set_targets(item, rest, create, set);
        }
        if seg == "*" {
            let mut n = 0;
            for item in items.iter_mut() {
                n += set_targets(item, rest, create, set)?;
            }
            return Ok(n);
        }
        let inner = &seg[1..seg.len() - 1];
        let (field, pattern) = inner.split_once('=').ok_or(PathError::ListElement)?;
        let matcher = regex::Regex::new(pattern)?;
        let picks = |item: &Node| {
            let text = if field.is_empty() {
                item.as_scalar_string()
            } else {
                item.get(field).and_then(Node::as_scalar_string)
            };
            text.is_some_and(|t| matcher.is_match(t.trim()))
        };
        let mut n = 0;
        let mut any = false;
        for item in items.iter_mut().filter(|item| picks(item)) {
            any = true;
            n += set_targets(item, rest, create, set)?;
        }
        if !any && create {
            let scalar = Node::new(Value::String(pattern.to_string()));
            let mut item = if field.is_empty() {
                scalar
            } else {
                Node::new(Value::Map(vec![(field.to_string(), scalar)]))
            };
            n += set_targets(&mut item, rest, create, set)?;
            items.push(item);
        }
        return Ok(n);
    }
    let found = kind(cur);
    if !cur.is_map() {
        return Err(PathError::WrongKind {
            expected: "MappingNode",
            found,
        });
    }
    if cur.get(seg).is_none() {
        if !create {
            return Ok(0);
        }
        cur.set(seg, fresh(rest.first()));
    }
    let Value::Map(entries) = &mut cur.value else {
        return Ok(0);
    };
    let Some((_, child)) = entries.iter_mut().find(|(k, _)| k == seg) else {
        return Ok(0);
    };
    if !rest.is_empty() && !matches!(child.value, Value::Map(_) | Value::Seq(_) | Value::Null) {
        return Ok(1);
    }
    set_targets(child, rest, create, set)
}

/// kyaml's `IsIdxNumber`: a non-negative integer.
fn is_index(seg: &str) -> bool {
    seg.parse::<i64>().is_ok_and(|i| i >= 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(yaml: &str) -> String {
        name_hash(&crate::yaml::parse_documents(yaml).unwrap()[0]).unwrap()
    }

    /// kustomize's api/hasher/hasher_test.go vectors.
    #[test]
    fn name_hash_matches_kustomize_vectors() {
        assert_eq!(hash("kind: ConfigMap\n"), "6ct58987ht");
        assert_eq!(hash("kind: ConfigMap\ndata:\n  one: \"\"\n"), "9g67k2htb6");
        assert_eq!(
            hash("kind: ConfigMap\ndata:\n  two: 2\n  one: \"\"\n  three: 3\n"),
            "7757f9kkct"
        );
        assert_eq!(
            hash("kind: ConfigMap\nbinaryData:\n  one: \"\"\n"),
            "6mtk2m274t"
        );
        assert_eq!(
            hash("kind: ConfigMap\nbinaryData:\n  two: 2\n  one: \"\"\n  three: 3\n"),
            "9th7kc28dg"
        );
        assert_eq!(
            hash("kind: ConfigMap\ndata:\n  one: \"\"\nbinaryData:\n  two: \"\"\n"),
            "698h7c7t9m"
        );
        assert_eq!(hash("kind: Secret\ntype: my-type\n"), "5gmgkf8578");
        assert_eq!(
            hash("kind: Secret\ntype: my-type\ndata:\n  one: \"\"\n"),
            "74bd68bm66"
        );
        assert_eq!(
            hash("kind: Secret\ntype: my-type\ndata:\n  two: 2\n  one: \"\"\n  three: 3\n"),
            "4gf75c7476"
        );
        assert_eq!(
            hash("kind: Secret\ntype: my-type\ndata:\n  one: \"\"\nstringData:\n  two: 2\n"),
            "c4h4264gdb"
        );
    }

    #[test]
    fn base64_wraps_like_kustomize() {
        assert_eq!(base64(b"hello"), "aGVsbG8=");
        let long = base64(&[7u8; 60]);
        assert_eq!(long.len(), 80);
        let wrapped = wrap_base64(&long);
        assert_eq!(wrapped.lines().next().unwrap().len(), 70);
        assert!(wrapped.ends_with('\n'));
    }
}
