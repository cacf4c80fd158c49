//! The parser of Flux's envsubst dialect: `${…}` forms, escapes and
//! nesting, with fluxcd/pkg/envsubst's errors.

use super::{MAX_DEPTH, Op, ParseError, Piece, Template, Var};

pub(super) struct Parser<'a> {
    s: &'a [u8],
    input: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `input`.
    pub(super) fn new(input: &'a str) -> Parser<'a> {
        Parser {
            s: input.as_bytes(),
            input,
            pos: 0,
        }
    }
}

/// What ends an argument being parsed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// `}` ends it, no escapes (default and trim arguments).
    Brace,
    /// `}` ends it, with `\/`, `\\` and `$$` escapes (the replacement).
    EscapedBrace,
    /// `/` ends it (a `}` does not), with the same escapes: the replace
    /// pattern.
    Slash,
}

impl Parser<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.s.get(self.pos + ahead).copied()
    }

    /// Text with embedded expressions, until `stop` (not consumed) or EOF.
    pub(super) fn text(
        &mut self,
        depth: usize,
        stop: Option<Stop>,
    ) -> Result<Vec<Piece>, ParseError> {
        let mut pieces = Vec::new();
        let mut buf = String::new();
        while self.pos < self.s.len() {
            let c = self.s[self.pos];
            let escapes = matches!(stop, Some(Stop::Slash | Stop::EscapedBrace));
            match (c, stop) {
                (b'}', Some(Stop::Brace | Stop::EscapedBrace)) => break,
                (b'/', Some(Stop::Slash)) => break,
                (b'\\', _) if escapes && matches!(self.peek(1), Some(b'/' | b'\\')) => {
                    buf.push(self.s[self.pos + 1] as char);
                    self.pos += 2;
                }
                (b'$', _) if self.peek(1) == Some(b'$') && stop != Some(Stop::Brace) => {
                    // `$$` escapes `$` at top level and in replace patterns;
                    // default arguments take it literally.
                    buf.push('$');
                    self.pos += 2;
                }
                (b'$', _) if self.peek(1) == Some(b'{') => {
                    if !buf.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut buf)));
                    }
                    pieces.push(Piece::Var(self.var(depth)?));
                }
                _ => {
                    // Copy one UTF-8 character.
                    let ch = self.input[self.pos..].chars().next().unwrap_or('\u{FFFD}');
                    buf.push(ch);
                    self.pos += ch.len_utf8().max(1);
                }
            }
        }
        if !buf.is_empty() {
            pieces.push(Piece::Text(buf));
        }
        Ok(pieces)
    }

    fn ident(&mut self) -> String {
        let start = self.pos;
        while let Some(ch) = self.input[self.pos..].chars().next() {
            if ch.is_alphanumeric() || ch == '_' {
                self.pos += ch.len_utf8();
            } else {
                break;
            }
        }
        self.input[start..self.pos].to_string()
    }

    /// One `${…}` expression, from its `$`.
    fn var(&mut self, depth: usize) -> Result<Var, ParseError> {
        let offset = self.pos;
        let err = |message| ParseError { offset, message };
        if depth >= MAX_DEPTH {
            return Err(err("substitution nested too deeply"));
        }
        self.pos += 2; // `${`
        if self.peek(0) == Some(b'#') {
            self.pos += 1;
            let name = self.ident();
            if name.is_empty() || self.peek(0) != Some(b'}') {
                return Err(err("bad substitution"));
            }
            self.pos += 1;
            return Ok(Var {
                name,
                op: Op::Length,
                offset,
            });
        }
        let name = self.ident();
        if name.is_empty() {
            return Err(err("unable to parse variable name"));
        }
        let op = match self.peek(0) {
            None => return Err(err("missing closing brace")),
            Some(b'}') => Op::Plain,
            Some(b'^' | b',') => self.case(offset)?,
            Some(b'=') => {
                self.pos += 1;
                Op::Default("=", self.argument(depth, offset)?)
            }
            Some(b':') => match self.peek(1) {
                Some(b'=' | b'-' | b'?' | b'+') => {
                    let op = match self.s[self.pos + 1] {
                        b'=' => ":=",
                        b'-' => ":-",
                        b'?' => ":?",
                        _ => ":+",
                    };
                    self.pos += 2;
                    Op::Default(op, self.argument(depth, offset)?)
                }
                _ => self.substring(offset)?,
            },
            Some(b'#' | b'%') => self.trim(depth, offset)?,
            Some(b'/') => self.replace(depth, offset)?,
            Some(_) => return Err(err("missing closing brace")),
        };
        if self.peek(0) != Some(b'}') {
            return Err(err("missing closing brace"));
        }
        self.pos += 1;
        Ok(Var { name, op, offset })
    }

    /// Case modification: `^`, `^^`, `,`, `,,` (`^,` and `,^` change
    /// nothing).
    fn case(&mut self, offset: usize) -> Result<Op, ParseError> {
        let first = self.s[self.pos];
        let double = self.peek(1) == Some(first);
        let mixed = matches!(self.peek(1), Some(b'^' | b',')) && !double;
        self.pos += if double || mixed { 2 } else { 1 };
        if matches!(self.peek(0), Some(b'^' | b',')) {
            return Err(ParseError {
                offset,
                message: "bad substitution",
            });
        }
        Ok(match (first, double, mixed) {
            (_, _, true) => Op::Plain, // `^,` and `,^` return the value unchanged
            (b'^', false, _) => Op::UpperFirst,
            (b'^', true, _) => Op::UpperAll,
            (_, false, _) => Op::LowerFirst,
            (_, true, _) => Op::LowerAll,
        })
    }

    /// A substring: `:FROM` or `:FROM:LEN`, both literal.
    fn substring(&mut self, offset: usize) -> Result<Op, ParseError> {
        self.pos += 1;
        let start = self.pos;
        while !matches!(self.peek(0), None | Some(b'}' | b':')) {
            self.pos += 1;
        }
        let from = self.input[start..self.pos].to_string();
        let len = if self.peek(0) == Some(b':') {
            self.pos += 1;
            let start = self.pos;
            while !matches!(self.peek(0), None | Some(b'}')) {
                self.pos += 1;
            }
            Some(self.input[start..self.pos].to_string())
        } else {
            None
        };
        if from.is_empty() || len.as_deref() == Some("") || self.peek(0).is_none() {
            return Err(ParseError {
                offset,
                message: "unable to parse substitution within function",
            });
        }
        Ok(Op::Substring(from, len))
    }

    /// A trim: `#`, `##` (prefix), `%`, `%%` (suffix), then its pattern.
    fn trim(&mut self, depth: usize, offset: usize) -> Result<Op, ParseError> {
        let c = self.s[self.pos];
        let longest = self.peek(1) == Some(c);
        self.pos += if longest { 2 } else { 1 };
        let pattern = self.argument(depth, offset)?;
        if pattern.0.is_empty() {
            return Err(ParseError {
                offset,
                message: "unable to parse substitution within function",
            });
        }
        Ok(match (c, longest) {
            (b'#', false) => Op::TrimPrefix(pattern),
            (b'#', true) => Op::TrimPrefixLongest(pattern),
            (_, false) => Op::TrimSuffix(pattern),
            (_, true) => Op::TrimSuffixLongest(pattern),
        })
    }

    /// A replacement: `/`, `//`, `/#`, `/%`, its pattern up to `/`, then
    /// the replacement.
    fn replace(&mut self, depth: usize, offset: usize) -> Result<Op, ParseError> {
        let err = |message| ParseError { offset, message };
        let kind = match self.peek(1) {
            Some(b'/') => "//",
            Some(b'#') => "/#",
            Some(b'%') => "/%",
            _ => "/",
        };
        self.pos += kind.len();
        let pattern = Template(self.text(depth + 1, Some(Stop::Slash))?);
        match self.peek(0) {
            Some(b'/') => self.pos += 1,
            _ => return Err(err("bad substitution")),
        }
        if pattern.0.is_empty() {
            return Err(err("unable to parse substitution within function"));
        }
        let replacement = Template(self.text(depth + 1, Some(Stop::EscapedBrace))?);
        if self.peek(0).is_none() {
            return Err(err("unable to parse substitution within function"));
        }
        Ok(Op::Replace(kind, pattern, replacement))
    }

    /// An argument up to the closing `}` of the expression (consumed by the
    /// caller's final check, not here).
    fn argument(&mut self, depth: usize, offset: usize) -> Result<Template, ParseError> {
        let pieces = self.text(depth + 1, Some(Stop::Brace))?;
        if self.peek(0).is_none() {
            return Err(ParseError {
                offset,
                message: "unable to parse substitution within function",
            });
        }
        Ok(Template(pieces))
    }
}
