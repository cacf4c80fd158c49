//! The fast path of the loader: the node tree built straight from the
//! YAML parser's events (granit-parser, the parser serde-saphyr itself
//! runs), for the plain YAML that nearly every manifest is.
//!
//! serde-saphyr's typed deserialisation (spans, anchors, merge keys, tags,
//! budgets, error messages) costs about twice the parse itself on a large
//! platform. This path takes none of those detours: it reads the same
//! events with the same parser options and resolves scalars as that
//! deserialiser does ([`super::scalar`]). Whatever it does not handle
//! itself (a tag, a merge key, many aliases, a duplicate or complex
//! key, a non-finite float, a syntax error, input near a budget) gives
//! `None`, and the caller parses the text with serde-saphyr as before: the
//! result, and every error message, is the full loader's.

use std::borrow::Cow;

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

use super::serde_impls::key_text;
use super::{MAX_DEPTH, MAX_DOCUMENTS, MAX_EVENTS, MAX_NODES, Node, Value, scalar};

/// Deeper than this, the full loader decides (it reports the nesting
/// budget at [`MAX_DEPTH`]).
const DEPTH: usize = MAX_DEPTH / 2;

/// Most aliases the fast path expands; more, and the full loader decides
/// (its alias budget looks at aliases per anchor from 100 on).
const ALIASES: usize = 64;
/// Most anchors, and most nodes inside anchored nodes, the fast path takes
/// (half the full loader's default budgets of 50,000 anchors and 1,000,000
/// recorded events); text over [`ANCHORED_TEXT`] with any anchor goes to
/// the full loader too (its 64 MiB of recorded anchor text).
const ANCHORS: usize = 25_000;
const ANCHORED_NODES: usize = 500_000;
const ANCHORED_TEXT: usize = 16 * 1024 * 1024;

/// One collection being built, with its anchor (0 for none) and the node
/// count when it started.
enum Frame {
    Seq(u32, Vec<Node>, usize, usize),
    Map {
        anchor: usize,
        start: usize,
        line: u32,
        entries: Vec<(String, Node)>,
        /// The key read, waiting for its value.
        key: Option<String>,
        /// Hashes of the keys, once the mapping is large enough that
        /// comparing with every key would be quadratic.
        seen: Option<std::collections::HashSet<u64>>,
    },
}

/// The documents of `text` (null ones left out), or `None` when the full
/// loader must read it.
pub(super) fn parse(text: &str) -> Option<Vec<Node>> {
    let parser = Parser::new_from_str_with_options(text, parser_options());
    let mut build = Build {
        // Anchored nodes by id, with how many nodes each holds.
        anchors: Anchors {
            text: text.len(),
            ..Anchors::default()
        },
        ..Build::default()
    };
    for event in parser {
        let (event, span) = event.ok()?;
        build.events += 1;
        if build.events > MAX_EVENTS / 2 {
            return None;
        }
        let line = u32::try_from(span.start.line()).unwrap_or(u32::MAX);
        let Some(done) = build.event(event, line)? else {
            continue;
        };
        if build.nodes > MAX_NODES / 2 {
            return None;
        }
        build.attach(done)?;
    }
    if !build.stack.is_empty() || build.root.is_some() {
        return None;
    }
    Some(build.docs)
}

/// The parser options serde-saphyr derives from this loader's options
/// and budget (`Budget::parser_options`, `Options::parser_options`).
fn parser_options() -> serde_saphyr::granit_parser::Options {
    let defaults = serde_saphyr::granit_parser::Options::default();
    let mut options = defaults.clone();
    options.emit_comments = false;
    options.strict_indentation = false;
    options.flow_nesting_limit = MAX_DEPTH + 1;
    options.block_nesting_limit = defaults.block_nesting_limit.max(MAX_DEPTH + 1);
    options
}

/// The documents being built from the parser's events, and what they
/// have cost so far against the budgets.
#[derive(Default)]
struct Build {
    /// The documents read, null ones left out.
    docs: Vec<Node>,
    /// The collections open, innermost last.
    stack: Vec<Frame>,
    /// The current document's root, once complete.
    root: Option<Node>,
    events: usize,
    nodes: usize,
    anchors: Anchors,
    aliases: usize,
    /// Every document start counts against the document budget, empty
    /// documents too (as the full loader counts them).
    starts: usize,
}

impl Build {
    /// The node one event completes: `Some(None)` when it completes none
    /// (a document's bounds, a collection opening), `None` when the full
    /// loader must read the text.
    fn event(&mut self, event: Event<'_>, line: u32) -> Option<Option<Node>> {
        let node = match event {
            Event::StreamStart | Event::StreamEnd => return Some(None),
            Event::DocumentStart(..) => {
                self.root = None;
                self.anchors.by_id.clear();
                self.starts += 1;
                if self.starts >= MAX_DOCUMENTS {
                    return None;
                }
                return Some(None);
            }
            Event::DocumentEnd => {
                if let Some(doc) = self.root.take()
                    && !matches!(doc.value, Value::Null)
                {
                    self.docs.push(doc);
                }
                return Some(None);
            }
            Event::Scalar(value, style, anchor, tag) => {
                if tag.is_some() {
                    return None;
                }
                self.scalar(value, style, anchor, line)?
            }
            Event::Alias(id) => self.alias(id, line)?,
            Event::SequenceStart(_, _, Some(_)) | Event::MappingStart(_, _, Some(_)) => {
                return None;
            }
            Event::SequenceStart(_, anchor, None) => {
                self.open(|start| Frame::Seq(line, Vec::new(), anchor, start))?;
                return Some(None);
            }
            Event::MappingStart(_, anchor, None) => {
                self.open(|start| Frame::Map {
                    anchor,
                    start,
                    line,
                    entries: Vec::new(),
                    key: None,
                    seen: None,
                })?;
                return Some(None);
            }
            Event::SequenceEnd => self.close_seq()?,
            Event::MappingEnd => self.close_map()?,
            // Anything else (an unresolved alias) is the full loader's.
            _ => return None,
        };
        Some(Some(node))
    }

    /// A scalar, resolved as the full loader's deserialiser does.
    fn scalar(
        &mut self,
        value: Cow<'_, str>,
        style: ScalarStyle,
        anchor: usize,
        line: u32,
    ) -> Option<Node> {
        self.nodes += 1;
        let resolved = match style {
            ScalarStyle::Plain => scalar::resolve(&value)?,
            _ => Value::String(value.into_owned()),
        };
        let node = Node {
            line,
            value: resolved,
        };
        self.anchors.define(anchor, &node, 1)?;
        Some(node)
    }

    /// An alias: a copy of the anchored node.
    fn alias(&mut self, id: usize, line: u32) -> Option<Node> {
        self.aliases += 1;
        let (node, count) = self.anchors.by_id.get(&id)?;
        self.nodes += count;
        if self.aliases > ALIASES || self.nodes > MAX_NODES / 2 {
            return None;
        }
        // The value where the alias stands: every node of it has
        // the alias's line, as the full loader's spans do.
        let mut node = node.clone();
        node.set_lines(line);
        Some(node)
    }

    /// Opens a collection, `frame` given the node count it starts at.
    fn open(&mut self, frame: impl FnOnce(usize) -> Frame) -> Option<()> {
        self.nodes += 1;
        if self.stack.len() >= DEPTH {
            return None;
        }
        self.stack.push(frame(self.nodes));
        Some(())
    }

    /// The sequence that ends.
    fn close_seq(&mut self) -> Option<Node> {
        match self.stack.pop()? {
            Frame::Seq(line, mut items, anchor, start) => {
                items.shrink_to_fit();
                let node = Node {
                    line,
                    value: Value::Seq(items),
                };
                self.anchors.define(anchor, &node, self.nodes - start + 1)?;
                Some(node)
            }
            Frame::Map { .. } => None,
        }
    }

    /// The mapping that ends (not waiting for a key's value).
    fn close_map(&mut self) -> Option<Node> {
        match self.stack.pop()? {
            Frame::Map {
                anchor,
                start,
                line,
                mut entries,
                key: None,
                ..
            } => {
                entries.shrink_to_fit();
                let node = Node {
                    line,
                    value: Value::Map(entries),
                };
                self.anchors.define(anchor, &node, self.nodes - start + 1)?;
                Some(node)
            }
            _ => None,
        }
    }

    /// Puts a complete node where it belongs: the document's root, the
    /// next item of a sequence, a mapping's key or the value of its key.
    fn attach(&mut self, done: Node) -> Option<()> {
        match self.stack.last_mut() {
            None => self.root = Some(done),
            Some(Frame::Seq(_, items, ..)) => items.push(done),
            Some(Frame::Map {
                entries, key, seen, ..
            }) => match key.take() {
                Some(k) => entries.push((k, done)),
                None => {
                    let k = key_text(done.value)?;
                    if k == "<<" || duplicate(entries, seen, &k) {
                        return None;
                    }
                    *key = Some(k);
                }
            },
        }
        Some(())
    }
}

/// The anchored nodes of the document being read, by anchor id, with how
/// many nodes each holds; and what the whole file anchors, against the
/// full loader's anchor budgets.
#[derive(Default)]
struct Anchors {
    by_id: std::collections::HashMap<usize, (Node, usize)>,
    count: usize,
    nodes: usize,
    /// The file's length.
    text: usize,
}

impl Anchors {
    /// Records `node` under anchor `id` (0: no anchor); `None` past the
    /// budgets.
    fn define(&mut self, id: usize, node: &Node, count: usize) -> Option<()> {
        if id == 0 {
            return Some(());
        }
        self.count += 1;
        self.nodes += count;
        if self.count > ANCHORS || self.nodes > ANCHORED_NODES || self.text > ANCHORED_TEXT {
            return None;
        }
        self.by_id.insert(id, (node.clone(), count));
        Some(())
    }
}

/// Whether `key` is already in the mapping (a hash collision counts as a
/// duplicate: the full loader then decides).
fn duplicate(
    entries: &[(String, Node)],
    seen: &mut Option<std::collections::HashSet<u64>>,
    key: &str,
) -> bool {
    use std::hash::{BuildHasher, Hasher};
    const LINEAR: usize = 16;
    if entries.len() < LINEAR {
        return entries.iter().any(|(k, _)| k == key);
    }
    let state =
        std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
    let hash = |k: &str| {
        let mut h = state.build_hasher();
        h.write(k.as_bytes());
        h.finish()
    };
    let set = seen.get_or_insert_with(|| entries.iter().map(|(k, _)| hash(k)).collect());
    !set.insert(hash(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_fast_path_leaves_to_the_full_loader() {
        // Tags, merge keys, duplicate and complex keys, errors.
        for text in [
            "a: !!str 1\n",
            "base: &b {x: 1}\nc:\n  <<: *b\n",
            "a: 1\na: 2\n",
            "? [a]\n: 1\n",
            "a: [unclosed\n",
            "a: .inf\n",
        ] {
            assert!(parse(text).is_none(), "{text}");
        }
        // Near a budget: many aliases, many anchors, many documents.
        let aliases: String = std::iter::once("a: &x 1\n".to_string())
            .chain((0..ALIASES + 1).map(|i| format!("k{i}: *x\n")))
            .collect();
        assert!(parse(&aliases).is_none());
        let anchors: String = (0..ANCHORS + 1)
            .map(|i| format!("k{i}: &a{i} v\n"))
            .collect();
        assert!(parse(&anchors).is_none());
        let documents = "---\n".repeat(MAX_DOCUMENTS);
        assert!(parse(&documents).is_none());
        let documents = "---\na: 1\n".repeat(MAX_DOCUMENTS - 1);
        assert_eq!(parse(&documents).map(|d| d.len()), Some(MAX_DOCUMENTS - 1));
        // A large mapping is checked for duplicates by hash, not by scan.
        let keys: String = (0..10_000).map(|i| format!("k{i}: v\n")).collect();
        assert_eq!(parse(&keys).map(|d| d[0].as_map().len()), Some(10_000));
        let dup = format!("{keys}k5000: again\n");
        assert!(parse(&dup).is_none());
    }

    #[test]
    fn an_alias_is_the_anchored_value_at_the_alias_line() {
        let docs = parse("a: &x\n  b: 1\nc: *x\n").unwrap();
        let c = docs[0].get("c").unwrap();
        assert_eq!(c.line, 3);
        assert_eq!(
            c.get("b").map(|b| (b.line, b.value.clone())),
            Some((3, Value::Int(1)))
        );
        assert_eq!(
            docs[0].get("a").and_then(|a| a.get("b")).map(|b| b.line),
            Some(2)
        );
    }
}
