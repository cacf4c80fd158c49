//! `replacements`: a source field copied into target fields, with
//! kyaml's field paths (`a.b`, `list.[name=x].field`, `list.0`, `*`) and
//! its errors.

use super::read_input;
use crate::render::native::Res;
use crate::render::{Error, Tree};
use crate::yaml::{Node, Value};

/// `replacements`: copy a source field into target fields.
pub fn replacements(
    acc: &mut [Res],
    entries: &[Node],
    tree: &Tree,
    dir: &str,
    file: &str,
) -> Result<(), Error> {
    for (at, entry) in expand(entries, tree, dir, file)? {
        let value = source_value(acc, &at, &entry)?;
        for target in entry.get("targets").map(Node::as_seq).unwrap_or_default() {
            replace_target(acc, &at, target, &value)?;
        }
    }
    Ok(())
}

/// The replacements of the entries, each with its place for messages: a
/// `path:` entry names a file holding one replacement or a list of
/// them (kustomize unmarshals either).
fn expand(
    entries: &[Node],
    tree: &Tree,
    dir: &str,
    file: &str,
) -> Result<Vec<(String, Node)>, Error> {
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
    Ok(expanded)
}

/// The value a replacement copies: its source's field (`metadata.name`
/// by default) in the one resource the source selects, or the part
/// `options.delimiter` and `options.index` pick of it.
fn source_value(acc: &[Res], at: &str, entry: &Node) -> Result<Node, Error> {
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
    Ok(value)
}

/// Puts `value` at each field path of one target, in every resource it
/// selects and does not reject.
fn replace_target(acc: &mut [Res], at: &str, target: &Node, value: &Node) -> Result<(), Error> {
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
            let mut set = |node: &mut Node| set_value(node, value, delim.as_deref(), index);
            let found =
                set_targets(&mut r.node, &segments(&fp), create, &mut set).map_err(|e| {
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
    Ok(())
}

/// Sets a target node to `value`, or, with a delimiter and an index, one
/// part of the scalar it holds.
fn set_value(
    node: &mut Node,
    value: &Node,
    delim: Option<&str>,
    index: Option<i64>,
) -> Result<(), PathError> {
    match (delim, index) {
        (Some(d), Some(i)) => {
            if matches!(node.value, Value::Map(_) | Value::Seq(_)) {
                return Err(PathError::Delimiter);
            }
            // kustomize (replacement setFieldValue): a
            // negative index prepends, one past the
            // parts appends, any other replaces that
            // part.
            let source = value.as_scalar_string().unwrap_or_default();
            let current = node.as_scalar_string().unwrap_or_default();
            let mut parts: Vec<String> = current.split(d).map(str::to_string).collect();
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
}

/// Whether a replacement's `select` (or `reject`, or `source`) picks `r`:
/// by its current id or any id it had before a prefix, suffix or namespace
/// changed it (kustomize's `utils.MakeResIds` in the replacement filter), so
/// a kubebuilder scaffold's `name: serving-cert` still finds the
/// Certificate its `namePrefix` renamed.
fn select_matches(select: &Node, r: &Res) -> bool {
    let eq = |key: &str, have: &str| select.str_at(&[key]).is_none_or(|want| want == have);
    let matches = |id: &crate::render::native::Id| {
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
