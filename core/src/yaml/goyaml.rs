//! What go-yaml (the reader of kustomize and Flux) refuses, or reads
//! differently, where this loader's parser (granit-parser, YAML 1.2) would
//! not: a text that parses here but not in the cluster must fail here too.
//!
//! * **Encodings** ([`decode`]): go-yaml reads UTF-8 (a leading BOM
//!   skipped) and UTF-16 with a BOM (`yaml_parser_determine_encoding`);
//!   anything else is an error naming the byte offset and line.
//! * **Tabs** ([`check`]): libyaml's scanner, which go-yaml ports, eats
//!   tabs as separation only in flow context, inside quoted scalars, or
//!   where no simple key may start (`yaml_parser_scan_to_next_token`); a
//!   tab that starts a line (a whitespace-only line holding one, or one
//!   before an indented comment), or follows a `-` or `?` indicator, cannot
//!   start any token, and one in a plain scalar's continuation left of its
//!   indentation "violates indentation". Our parser allows what YAML 1.2
//!   allows, and refuses a leading tab in a flow collection, which go-yaml
//!   reads ([`untab_line`] lets the loader read it again without it).
//! * **Markers**: kustomize splits a file at `---` lines before go-yaml
//!   reads each part (kio's `ByteReader`), so a `%YAML` or `%TAG`
//!   directive is never followed by its document ("did not find expected
//!   <document start>", or "found incompatible YAML document" for a
//!   version other than 1.1), and a `...` that ends no document has no
//!   node ("did not find expected node content").

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, StructureStyle};

use super::YamlError;

/// Bytes go-yaml cannot read as text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not UTF-8, and no UTF-16 byte-order mark.
    #[error(
        "invalid UTF-8 at byte offset {offset} (line {line}); go-yaml reads UTF-8, or UTF-16 with a byte-order mark"
    )]
    Utf8 {
        /// The first byte that is not UTF-8.
        offset: usize,
        /// Its 1-based line.
        line: usize,
    },
    /// UTF-16 with half a character at the end.
    #[error("UTF-16 text with an odd number of bytes ({bytes}): the last one is half a character")]
    Utf16Odd {
        /// The file's length, the mark included.
        bytes: usize,
    },
    /// UTF-16 with a surrogate that has no pair.
    #[error("invalid UTF-16 (an unpaired surrogate) at byte offset {offset} (line {line})")]
    Utf16Surrogate {
        /// Where the unit starts.
        offset: usize,
        /// Its 1-based line.
        line: usize,
    },
}

/// Text from a file's bytes, as go-yaml decodes them.
pub fn decode(bytes: Vec<u8>) -> Result<String, DecodeError> {
    let utf16 = |big: bool, body: &[u8]| -> Result<String, DecodeError> {
        if !body.len().is_multiple_of(2) {
            return Err(DecodeError::Utf16Odd {
                bytes: body.len() + 2,
            });
        }
        let units = body.chunks_exact(2).map(|pair| {
            if big {
                u16::from_be_bytes([pair[0], pair[1]])
            } else {
                u16::from_le_bytes([pair[0], pair[1]])
            }
        });
        let mut out = String::with_capacity(body.len() / 2);
        for (i, unit) in char::decode_utf16(units).enumerate() {
            match unit {
                Ok(c) => out.push(c),
                Err(_) => {
                    return Err(DecodeError::Utf16Surrogate {
                        offset: 2 + i * 2,
                        line: out.matches('\n').count() + 1,
                    });
                }
            }
        }
        Ok(out)
    };
    match bytes.as_slice() {
        [0xFF, 0xFE, body @ ..] => utf16(false, body),
        [0xFE, 0xFF, body @ ..] => utf16(true, body),
        _ => String::from_utf8(bytes).map_err(|err| {
            let offset = err.utf8_error().valid_up_to();
            let line = err.as_bytes()[..offset]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1;
            DecodeError::Utf8 { offset, line }
        }),
    }
}

/// Refuses what go-yaml refuses in `original`, a text that parses here.
/// `parsed` is the text the parser read: `original`, or it with leading
/// tabs turned into spaces on lines of flow collections ([`untab_line`]),
/// which keeps every position.
pub(super) fn check(original: &str, parsed: &str) -> Result<(), YamlError> {
    markers(original)?;
    tabs(original, parsed)
}

fn error(line: usize, message: impl Into<String>) -> YamlError {
    YamlError {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: 0,
        message: message.into(),
        budget: false,
    }
}

/// Directives, and `...` with no document before it.
fn markers(text: &str) -> Result<(), YamlError> {
    if !(text.starts_with('%')
        || text.starts_with("...")
        || text.contains("\n%")
        || text.contains("\n..."))
    {
        return Ok(());
    }
    // At the start, and after `...`, a document has yet to begin.
    let mut expecting = true;
    for (i, line) in text.lines().enumerate() {
        let marker = |m: &str| {
            line.strip_prefix(m)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '#', '\r']))
        };
        if marker("...") {
            if expecting {
                return Err(error(
                    i + 1,
                    "did not find expected node content (go-yaml: `...` ends no document here)",
                ));
            }
            expecting = true;
            continue;
        }
        if !expecting {
            continue;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(directive) = line.strip_prefix('%') {
            let version = directive
                .strip_prefix("YAML")
                .map(|v| v.split('#').next().unwrap_or("").trim());
            let message = match version {
                Some(v) if v != "1.1" => "found incompatible YAML document",
                _ => "did not find expected <document start>",
            };
            return Err(error(
                i + 1,
                format!(
                    "{message} (kustomize reads each part between `---` lines on its own, so go-yaml refuses a `%` directive)"
                ),
            ));
        }
        expecting = false;
    }
    Ok(())
}

/// Where a tab stands that go-yaml may refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TabAt {
    /// The first character of its line that is not a space.
    LineStart,
    /// In the blanks after a `-` or `?` indicator.
    AfterIndicator,
}

/// A position: 1-based line, 0-based column in characters (as the
/// parser's markers count).
type Pos = (usize, usize);

/// Every tab of `text` that go-yaml may refuse, with where it stands.
fn candidates(text: &str) -> Vec<(Pos, TabAt)> {
    let mut out = Vec::new();
    if !text.contains('\t') {
        return out;
    }
    for (i, line) in text.lines().enumerate() {
        if !line.contains('\t') {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let first = chars.iter().position(|c| *c != ' ');
        let Some(first) = first else { continue };
        match chars[first] {
            '\t' => out.push(((i + 1, first), TabAt::LineStart)),
            '-' | '?' if matches!(chars.get(first + 1), Some(' ' | '\t')) => {
                let blanks = chars[first + 1..]
                    .iter()
                    .take_while(|c| matches!(c, ' ' | '\t'))
                    .count();
                if let Some(tab) = chars[first + 1..first + 1 + blanks]
                    .iter()
                    .position(|c| *c == '\t')
                {
                    out.push(((i + 1, first + 1 + tab), TabAt::AfterIndicator));
                }
            }
            _ => {}
        }
    }
    out
}

/// What the parser's events say about where tabs may stand.
#[derive(Default)]
struct Regions {
    /// Flow collections, from their opening to their closing bracket.
    flow: Vec<(Pos, Pos)>,
    /// Quoted and block scalars (tabs there are the scalar's business).
    quoted: Vec<(Pos, Pos)>,
    /// Plain scalars over several lines, with their indentation.
    plain: Vec<(Pos, Pos, usize)>,
    /// Where each event ends, and whether it is a plain scalar.
    ends: Vec<(Pos, bool)>,
}

fn regions(text: &str) -> Option<Regions> {
    let mut options = serde_saphyr::granit_parser::Options::default();
    options.emit_comments = false;
    options.strict_indentation = false;
    let parser = Parser::new_from_str_with_options(text, options);
    let mut out = Regions::default();
    // Open collections: style and where each began.
    let mut open: Vec<(StructureStyle, Pos)> = Vec::new();
    for event in parser {
        let (event, span) = event.ok()?;
        let start = (span.start.line(), span.start.col());
        let end = (span.end.line(), span.end.col());
        let mut plain = false;
        match event {
            Event::SequenceStart(style, ..) | Event::MappingStart(style, ..) => {
                open.push((style, start));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((StructureStyle::Flow, from)) = open.pop() {
                    out.flow.push((from, end));
                }
            }
            Event::Scalar(_, style, ..) => match style {
                ScalarStyle::Plain => {
                    plain = true;
                    if start.0 != end.0 {
                        // libyaml's plain scalar indentation: one more
                        // than its block parent's.
                        let indent = open
                            .iter()
                            .rev()
                            .find(|(s, _)| *s == StructureStyle::Block)
                            .map_or(0, |(_, p)| p.1 + 1);
                        out.plain.push((start, end, indent));
                    }
                }
                _ => out.quoted.push((start, end)),
            },
            _ => {}
        }
        out.ends.push((end, plain));
    }
    Some(out)
}

fn tabs(original: &str, parsed: &str) -> Result<(), YamlError> {
    let found = candidates(original);
    if found.is_empty() {
        return Ok(());
    }
    // The text parsed; the events give the regions (a text the parser
    // refuses has its own error already).
    let Some(regions) = regions(parsed) else {
        return Ok(());
    };
    let within = |ranges: &[(Pos, Pos)], p: Pos| ranges.iter().any(|(a, b)| *a <= p && p <= *b);
    for (pos, at) in found {
        if within(&regions.flow, pos) || within(&regions.quoted, pos) {
            continue;
        }
        if let Some((_, _, indent)) = regions
            .plain
            .iter()
            .find(|(a, b, _)| *a <= pos && pos <= *b)
        {
            if pos.1 >= *indent {
                continue;
            }
            return Err(error(
                pos.0,
                "while scanning a plain scalar, found a tab character that violates indentation (go-yaml, which Flux reads YAML with)",
            ));
        }
        // After a plain scalar that ends a line (not a key: its `:`
        // follows), libyaml is still scanning that scalar's trailing
        // blanks when it meets the tab.
        let previous = original
            .lines()
            .take(pos.0 - 1)
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .last();
        let after_plain = regions
            .ends
            .iter()
            .rev()
            .find(|(end, _)| *end <= pos)
            .is_some_and(|(end, plain)| *plain && end.0 < pos.0)
            && !previous.is_some_and(|l| l.ends_with(':') || l.ends_with('-'));
        let message = match at {
            TabAt::LineStart if after_plain => {
                "found a tab character that violates indentation (go-yaml, which Flux reads YAML with, refuses a tab where a line's indentation is)"
            }
            TabAt::LineStart => {
                "found character that cannot start any token (go-yaml, which Flux reads YAML with, refuses a tab at the start of a line outside a flow collection or a quoted scalar)"
            }
            TabAt::AfterIndicator => {
                "found character that cannot start any token (go-yaml, which Flux reads YAML with, refuses a tab after a `-` or `?` indicator)"
            }
        };
        return Err(error(pos.0, message));
    }
    Ok(())
}

/// `text` with the tabs of line `line` (1-based) that lead it turned into
/// spaces; `None` when it has none. For our parser's refusal of a leading
/// tab inside a flow collection, which go-yaml reads: the spaces keep
/// every position, and [`check`] still refuses the tabs go-yaml refuses.
pub(super) fn untab_line(text: &str, line: u32) -> Option<String> {
    let index = (line as usize).checked_sub(1)?;
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i != index {
            out.push_str(l);
            continue;
        }
        let lead = l.len() - l.trim_start_matches([' ', '\t']).len();
        changed = l[..lead].contains('\t');
        out.push_str(&l[..lead].replace('\t', " "));
        out.push_str(&l[lead..]);
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t\n  namespace: default\n";

    fn refused(text: &str) -> Option<(u32, String)> {
        crate::yaml::parse_documents(text)
            .err()
            .map(|e| (e.line, e.message))
    }

    /// Each case as kubectl kustomize (go-yaml v3) answers it.
    #[test]
    fn tabs_go_yaml_refuses_are_refused_and_those_it_reads_are_read() {
        let refused_cases = [
            (
                format!("{HEAD}\t\ndata:\n  a: b\n"),
                6,
                "violates indentation",
            ),
            (
                format!("{HEAD}data:\n\t  # comment\n  a: b\n"),
                7,
                "cannot start any token",
            ),
            (
                format!("{HEAD}\t# c\ndata:\n  a: b\n"),
                6,
                "violates indentation",
            ),
            (format!("\t\n{HEAD}"), 1, "cannot start any token"),
            (format!("{HEAD}data:\n  a: x\n\t y\n"), 7, "found a tab"),
            (
                format!("{HEAD}data:\n  b:\n  -\tx\n"),
                8,
                "cannot start any token",
            ),
            (
                format!("{HEAD}data: {{a: b}}\n  \t# c\n"),
                7,
                "cannot start any token",
            ),
        ];
        for (text, line, said) in refused_cases {
            let got = refused(&text);
            assert!(
                got.as_ref()
                    .is_some_and(|(l, m)| *l == line && m.contains(said)),
                "{text:?}: {got:?}"
            );
        }
        for read in [
            format!("{HEAD}data:\n  a:\tb\n"),
            format!("{HEAD}data:\n  a: b   \t  # c\n"),
            format!("{HEAD}data:\n  a: \"x\n\ty\"\n"),
            format!("{HEAD}data:\n  a: x\n   \ty\n"),
            format!("{HEAD}data:\n  a: b\n  c: [x,\n\ty]\n"),
        ] {
            assert_eq!(refused(&read), None, "{read:?}");
        }
        let docs = crate::yaml::parse_documents(&format!("{HEAD}data:\n  c: [x,\n\ty]\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            docs[0].path(&["data", "c"]).map(|c| c.as_seq().len()),
            Some(2)
        );
    }

    #[test]
    fn directives_and_stray_document_ends_are_refused() {
        for (text, said) in [
            (
                format!("%YAML 1.2\n---\n{HEAD}"),
                "found incompatible YAML document",
            ),
            (
                format!("%YAML 1.1\n---\n{HEAD}"),
                "did not find expected <document start>",
            ),
            (
                format!("%TAG ! tag:x,2000:\n---\n{HEAD}"),
                "did not find expected <document start>",
            ),
            ("...\n".to_string(), "did not find expected node content"),
            (
                format!("{HEAD}...\n...\n"),
                "did not find expected node content",
            ),
        ] {
            let got = refused(&text);
            assert!(
                got.as_ref().is_some_and(|(_, m)| m.contains(said)),
                "{text:?}: {got:?}"
            );
        }
        for read in ["---\n", "---\n...\n", "---\n...\n---\n", "# c\n...\n"] {
            let read = read.replace("# c\n...", &format!("{HEAD}..."));
            assert_eq!(refused(&read), None, "{read:?}");
        }
    }

    #[test]
    fn utf16_with_a_bom_is_read_and_bad_bytes_are_placed() {
        let text = "a: b\nc: d\n";
        let mut le = vec![0xFF, 0xFE];
        le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode(le).as_deref(), Ok(text));
        let mut be = vec![0xFE, 0xFF];
        be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decode(be).as_deref(), Ok(text));
        let bad = b"a: b\nc: \xff\n".to_vec();
        let err = decode(bad).unwrap_err();
        assert_eq!(err, DecodeError::Utf8 { offset: 8, line: 2 });
        assert!(err.to_string().contains("byte offset 8 (line 2)"), "{err}");
    }
}
