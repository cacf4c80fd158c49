//! Loading YAML: multi-document files into a small value tree that remembers
//! the line of every node, under input budgets.
//!
//! Everything the engine reads from disk or from a renderer goes through
//! [`parse_documents`]. Each node keeps its 1-based line so a finding can point
//! at `file:line`. The budgets make a YAML bomb (alias expansion), a document
//! nested thousands of levels deep or a multi-gigabyte file a clear error
//! instead of an exhausted machine.

mod blocks;
mod events;
mod full;
pub mod goyaml;
mod scalar;
mod serde_impls;

use std::path::Path;

use blocks::{go_yaml_block_at_eof, go_yaml_folding};
use full::parse_documents_full;

/// Largest file the loader reads, in bytes. Real manifests (even CRD bundles
/// such as gotk-components.yaml) are a few MiB.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Deepest nesting accepted. OpenAPI schemas inside CRDs reach ~40 levels;
/// kustomize builds far deeper documents, so this only stops pathological
/// input.
pub const MAX_DEPTH: usize = 256;
/// Most parser events (nodes and their ends) in one file.
pub(crate) const MAX_EVENTS: usize = 20_000_000;
/// Most nodes (scalars, sequences, mappings) in one file.
pub(crate) const MAX_NODES: usize = 10_000_000;
/// Most documents accepted in one stream (a rendered cluster tier can hold
/// thousands of objects).
pub const MAX_DOCUMENTS: usize = 50_000;

/// A YAML node with the 1-based line it starts on (0 when unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The 1-based line the node starts on (0 when unknown).
    pub line: u32,
    /// What the node holds.
    pub value: Value,
}

/// The value of a [`Node`]. Mapping keys are kept in document order and are
/// always strings (a non-string scalar key is written as its YAML text).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`, `~` or an empty value.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A string.
    String(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping: key and value, in document order.
    Map(Vec<(String, Node)>),
}

/// A YAML syntax or budget error, with the 1-based line and column where the
/// parser stopped (0 when the parser could not tell).
#[derive(Debug, Clone, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct YamlError {
    /// The 1-based line (0 when unknown).
    pub line: u32,
    /// The 1-based column (0 when unknown).
    pub column: u32,
    /// What is wrong, without the position.
    pub message: String,
    /// The input exceeds one of this loader's budgets: a limit of ours, not
    /// invalid YAML (kustomize may well read it).
    pub budget: bool,
}

impl Node {
    /// A node holding `value`, with no known line.
    pub fn new(value: Value) -> Self {
        Node { line: 0, value }
    }

    /// The child at `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at `key` of a mapping, to change it in place.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        match &mut self.value {
            Value::Map(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Follows a path of mapping keys.
    pub fn path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    /// The scalar at `keys` as a string (numbers and booleans as written).
    pub fn str_at(&self, keys: &[&str]) -> Option<String> {
        self.path(keys).and_then(Node::as_scalar_string)
    }

    /// The string, when the node is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Scalars as text; `None` for null, sequences and mappings.
    pub fn as_scalar_string(&self) -> Option<String> {
        match &self.value {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Null | Value::Seq(_) | Value::Map(_) => None,
        }
    }

    /// The boolean, when the node is a boolean.
    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The items of a sequence; empty for other nodes.
    pub fn as_seq(&self) -> &[Node] {
        match &self.value {
            Value::Seq(items) => items,
            _ => &[],
        }
    }

    /// The entries of a mapping; empty for other nodes.
    pub fn as_map(&self) -> &[(String, Node)] {
        match &self.value {
            Value::Map(entries) => entries,
            _ => &[],
        }
    }

    /// Whether the node is a mapping.
    pub fn is_map(&self) -> bool {
        matches!(self.value, Value::Map(_))
    }

    /// Sets `key` in a mapping node (appending when absent). No-op on other
    /// node kinds.
    pub fn set(&mut self, key: &str, value: Node) {
        if let Value::Map(entries) = &mut self.value {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some((_, slot)) => *slot = value,
                None => entries.push((key.to_string(), value)),
            }
        }
    }

    /// The mapping at `key`, created empty when absent or not a mapping.
    /// On a node that is not a mapping itself, the node becomes an empty
    /// mapping first (callers check [`Node::is_map`] where that matters).
    pub fn map_entry(&mut self, key: &str) -> &mut Node {
        if !self.is_map() {
            self.value = Value::Map(Vec::new());
        }
        let Value::Map(entries) = &mut self.value else {
            unreachable!("made a mapping above")
        };
        let index = match entries.iter().position(|(k, _)| k == key) {
            Some(i) => {
                if !entries[i].1.is_map() {
                    entries[i].1 = Node::new(Value::Map(Vec::new()));
                }
                i
            }
            None => {
                entries.push((key.to_string(), Node::new(Value::Map(Vec::new()))));
                entries.len() - 1
            }
        };
        &mut entries[index].1
    }

    /// Gives the node and everything in it the line `line`.
    pub fn set_lines(&mut self, line: u32) {
        self.line = line;
        match &mut self.value {
            Value::Map(entries) => entries.iter_mut().for_each(|(_, v)| v.set_lines(line)),
            Value::Seq(items) => items.iter_mut().for_each(|v| v.set_lines(line)),
            _ => {}
        }
    }

    /// Removes `key` from a mapping node, returning it.
    pub fn remove(&mut self, key: &str) -> Option<Node> {
        if let Value::Map(entries) = &mut self.value {
            let index = entries.iter().position(|(k, _)| k == key)?;
            return Some(entries.remove(index).1);
        }
        None
    }

    /// Converts to JSON (for the JSON report and for writing YAML back out:
    /// JSON is valid YAML).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::String(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// Builds a node (without lines) from JSON.
    pub fn from_json(json: &serde_json::Value) -> Node {
        use serde_json::Value as J;
        let value = match json {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            J::String(s) => Value::String(s.clone()),
            J::Array(items) => Value::Seq(items.iter().map(Node::from_json).collect()),
            J::Object(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::from_json(v)))
                    .collect(),
            ),
        };
        Node::new(value)
    }
}

/// Parses every document of a YAML stream. Empty and null documents are
/// skipped, as kustomize skips them.
///
/// An alias written right before a colon (`*app: value`, the app-template
/// idiom of an alias as a mapping key) is read as go-yaml reads it: go-yaml's
/// scanner (yaml_parser_scan_anchor) ends an anchor or alias name at the
/// first character that is not alphanumeric, `_` or `-`, while YAML 1.2 (and
/// our parser) let `:` continue the name. When the parser fails on a line
/// that holds such an alias, the alias is split from its colon on that line
/// only and the text parsed again: a text that parses is never changed, and
/// the scanner only fails there on a token of the document (never inside a
/// quoted or block scalar).
pub fn parse_documents(text: &str) -> Result<Vec<Node>, YamlError> {
    let original = text;
    let mut text = std::borrow::Cow::Borrowed(text);
    // Each round splits at least one alias, or turns the leading tabs of
    // one line into spaces, so the rounds are bounded by the text.
    loop {
        match parse_documents_once(&text) {
            Err(err) if !err.budget => {
                // The scanner stops on the alias's line, or just after it.
                let fixed = if err.message.contains("tabs disallowed") {
                    goyaml::untab_line(&text, err.line)
                } else {
                    split_alias_keys(&text, err.line)
                        .or_else(|| split_alias_keys(&text, err.line.saturating_sub(1)))
                };
                match fixed {
                    Some(fixed) => text = std::borrow::Cow::Owned(fixed),
                    None => return Err(err),
                }
            }
            Ok(docs) => {
                // What go-yaml refuses and this parser read.
                goyaml::check(original, &text)?;
                return Ok(docs);
            }
            other => return other,
        }
    }
}

/// `text` with every `*name:` alias on line `line` (1-based) followed by a
/// space, go-yaml's reading of it; `None` when the line holds none.
fn split_alias_keys(text: &str, line: u32) -> Option<String> {
    let index = (line as usize).checked_sub(1)?;
    let mut out = String::with_capacity(text.len() + 8);
    let mut changed = false;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i != index {
            out.push_str(l);
            continue;
        }
        // Every delimiter is ASCII, so slicing at them is slicing at
        // character boundaries.
        let bytes = l.as_bytes();
        let mut copied = 0;
        for k in 0..bytes.len() {
            let boundary = k == 0 || matches!(bytes[k - 1], b' ' | b'\t' | b'[' | b'{' | b',');
            if bytes[k] != b'*' || !boundary {
                continue;
            }
            let mut j = k + 1;
            while j < bytes.len()
                && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || bytes[j] == b'-')
            {
                j += 1;
            }
            if j > k + 1 && j < bytes.len() && bytes[j] == b':' {
                out.push_str(&l[copied..j]);
                out.push(' ');
                copied = j;
                changed = true;
            }
        }
        out.push_str(&l[copied..]);
    }
    changed.then_some(out)
}

fn parse_documents_once(text: &str) -> Result<Vec<Node>, YamlError> {
    // Plain YAML is built straight from the parser's events; anything else
    // (and every error) is the full loader's below.
    if let Some(docs) = events::parse(text) {
        return Ok(docs);
    }
    parse_documents_full(text)
}

/// Reads a file under the size budget and parses it.
pub(crate) fn read_documents(path: &Path) -> Result<Vec<Node>, LoadError> {
    let text = read_text_within_budget(path)?;
    parse_text(&text).map_err(|source| LoadError::Yaml {
        path: path.display().to_string(),
        source,
    })
}

/// Reads a file's text under the size budget.
pub(crate) fn read_text_within_budget(path: &Path) -> Result<String, LoadError> {
    let meta = std::fs::metadata(path).map_err(|source| LoadError::Io {
        path: path.display().to_string(),
        source,
    })?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(LoadError::TooLarge {
            path: path.display().to_string(),
            bytes: meta.len(),
        });
    }
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.display().to_string(),
        source,
    })?;
    goyaml::decode(bytes).map_err(|why| LoadError::Io {
        path: path.display().to_string(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, why),
    })
}

/// Parses a file's text as the loader does ([`parse_documents`], then
/// go-yaml's folded-scalar quirk).
pub fn parse_text(text: &str) -> Result<Vec<Node>, YamlError> {
    let mut docs = parse_documents(text)?;
    go_yaml_folding(text, &mut docs);
    go_yaml_block_at_eof(text, &mut docs);
    Ok(docs)
}

/// Why a file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file's path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error(
        "{path}: file is {bytes} bytes, which exceeds the file-size budget of {MAX_FILE_BYTES} bytes"
    )]
    TooLarge {
        /// The file's path.
        path: String,
        /// The file's size in bytes.
        bytes: u64,
    },
    /// The file is not valid YAML or exceeds a parsing budget.
    #[error("{path}:{}: {}", source.line, source.message)]
    Yaml {
        /// The file's path.
        path: String,
        /// The parse or budget error.
        #[source]
        source: YamlError,
    },
}

impl LoadError {
    /// Whether the file exceeds one of this loader's budgets (size,
    /// nesting, documents, nodes, aliases) rather than being invalid.
    pub(crate) fn is_budget(&self) -> bool {
        match self {
            LoadError::TooLarge { .. } => true,
            LoadError::Yaml { source, .. } => source.budget,
            LoadError::Io { .. } => false,
        }
    }

    /// The 1-based line of the problem, when known.
    pub fn line(&self) -> Option<u32> {
        match self {
            LoadError::Yaml { source, .. } if source.line > 0 => Some(source.line),
            _ => None,
        }
    }
}

/// A node as YAML text (one document, no `---`).
pub fn to_yaml(node: &Node) -> String {
    serde_saphyr::to_string(node)
        .unwrap_or_else(|err| format!("# cannot write this object: {err}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_comment_blocks_read_as_go_yaml_reads_them() {
        let comments: String = (0..500).map(|i| format!("# note {i}\n")).collect();
        let text = format!("items:\n{comments}- a\n{comments}- b\nnext:\n{comments}  key: v\n");
        let docs = parse_text(&text).unwrap();
        assert_eq!(
            docs[0].to_json(),
            serde_json::json!({"items": ["a", "b"], "next": {"key": "v"}})
        );
    }

    #[test]
    fn an_alias_before_a_colon_is_a_key_as_go_yaml_reads_it() {
        let docs = parse_documents(
            "name: &app web\ncontrollers:\n  *app:\n    replicas: 2\nlabels: {a: &n x, *n: y}\n",
        )
        .unwrap();
        let d = &docs[0];
        assert_eq!(d.str_at(&["labels", "x"]).as_deref(), Some("y"));
        assert_eq!(
            d.path(&["controllers", "web", "replicas"])
                .map(|n| n.value.clone()),
            Some(Value::Int(2))
        );
        // Text inside a scalar is never touched.
        let docs = parse_documents("script: |\n  echo *app: x\nq: \"*b: c\"\n").unwrap();
        assert_eq!(
            docs[0].str_at(&["script"]).as_deref(),
            Some("echo *app: x\n")
        );
        assert_eq!(docs[0].str_at(&["q"]).as_deref(), Some("*b: c"));
        // An alias of an anchor that does not exist stays an error.
        assert!(parse_documents("a:\n  *nope: x\n").is_err());
    }

    #[test]
    fn documents_keep_their_lines() {
        let text = "a: 1\n---\n# comment\nkind: Foo\nmetadata:\n  name: x\n---\n---\nb: [1, 2]\n";
        let docs = parse_documents(text).unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[1].line, 4);
        assert_eq!(docs[1].path(&["metadata", "name"]).unwrap().line, 6);
        assert_eq!(docs[1].str_at(&["metadata", "name"]).as_deref(), Some("x"));
        assert_eq!(docs[2].get("b").unwrap().as_seq().len(), 2);
    }

    #[test]
    fn syntax_error_has_a_line() {
        let err = parse_documents("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(err.line >= 2, "{err:?}");
    }

    #[test]
    fn alias_bomb_is_an_error_not_an_explosion() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let err = parse_documents(&text).unwrap_err();
        assert!(!err.message.is_empty());
        assert!(err.budget, "{err:?}");
    }

    #[test]
    fn go_yaml_compatible_scalars() {
        let docs = parse_documents("mode: 0775\nflag: yes\non: true\n").unwrap();
        assert_eq!(docs[0].get("mode").unwrap().value, Value::Int(509));
        assert_eq!(
            docs[0].get("flag").unwrap().value,
            Value::String("yes".into())
        );
        let text = "e: >-\n  a(c,\n    b\n  )\n";
        let mut docs = parse_documents(text).unwrap();
        go_yaml_folding(text, &mut docs);
        assert_eq!(docs[0].str_at(&["e"]).as_deref(), Some("a(c,\n\n  b\n)"));
    }

    #[test]
    fn a_block_scalar_ending_the_file_keeps_no_final_break_as_in_go_yaml() {
        let docs = parse_text("a: |\n  x\n  y").unwrap();
        assert_eq!(docs[0].str_at(&["a"]).as_deref(), Some("x\ny"));
        let docs = parse_text("b:\n- c: >+ # kept\n    x").unwrap();
        assert_eq!(
            docs[0].as_map()[0].1.as_seq()[0].str_at(&["c"]).as_deref(),
            Some("x")
        );
        // With the break, or not a block scalar: unchanged.
        let docs = parse_text("a: |\n  x\n").unwrap();
        assert_eq!(docs[0].str_at(&["a"]).as_deref(), Some("x\n"));
        let docs = parse_text("a: \"x\\n\"").unwrap();
        assert_eq!(docs[0].str_at(&["a"]).as_deref(), Some("x\n"));
        let docs = parse_text("k:\n  s: |\n    a:\n      b").unwrap();
        assert_eq!(docs[0].str_at(&["k", "s"]).as_deref(), Some("a:\n  b"));
        let docs = parse_text("a: |\n  x\nb:\n  c: \"d\\n\"").unwrap();
        assert_eq!(docs[0].str_at(&["b", "c"]).as_deref(), Some("d\n"));
        let docs = parse_text("a: |\n  x\nb: y").unwrap();
        assert_eq!(docs[0].str_at(&["a"]).as_deref(), Some("x\n"));
    }

    #[test]
    fn folding_fixes_repeated_lines_in_order() {
        let text = "e: >-\n  a(\n    b\n  c(\n    b\n";
        let docs = parse_text(text).unwrap();
        assert_eq!(
            docs[0].str_at(&["e"]).as_deref(),
            Some("a(\n\n  b\nc(\n\n  b")
        );
        let text = "e: >-\n  a(\n    b \n  c\n";
        let docs = parse_text(text).unwrap();
        assert_eq!(docs[0].str_at(&["e"]).as_deref(), Some("a(\n  b \nc"));
    }

    #[test]
    fn deep_nesting_is_an_error() {
        let text = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        assert!(parse_documents(&text).is_err());
    }

    #[test]
    fn duplicate_key_is_an_error_as_in_kustomize() {
        let err = parse_documents("a: 1\na: 2\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("duplicate"), "{}", err.message);
        assert!(!err.message.contains("at line"), "{}", err.message);
    }
}

#[cfg(test)]
mod fast_path {
    use super::*;

    /// Every YAML file below `dir`.
    fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && path.file_name().is_some_and(|n| n != ".git") {
                yaml_files(&path, out);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "yaml" || e == "yml")
            {
                out.push(path);
            }
        }
    }

    #[test]
    fn the_fast_path_reads_every_file_as_the_full_loader_does() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut dirs = vec![manifest.join("../fixtures")];
        for (var, default) in [
            ("CONFORMANCE_CORPUS", "../../shared/corpus"),
            ("CONFORMANCE_CORPUS_WIDE", "../../shared/corpus-wide"),
        ] {
            dirs.push(
                std::env::var_os(var)
                    .map(std::path::PathBuf::from)
                    .unwrap_or_else(|| manifest.join(default)),
            );
        }
        let mut files = Vec::new();
        for dir in &dirs {
            yaml_files(dir, &mut files);
        }
        let (mut fast, mut full) = (0, 0);
        for file in &files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            let Some(quick) = events::parse(&text) else {
                full += 1;
                continue;
            };
            fast += 1;
            match parse_documents_full(&text) {
                Ok(slow) => assert_eq!(quick, slow, "{}", file.display()),
                Err(e) => panic!("{}: the full loader fails ({e})", file.display()),
            }
        }
        eprintln!("{fast} files on the fast path, {full} left to the full loader");
    }
}
