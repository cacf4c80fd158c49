//! Flux's `envsubst` dialect: the parser and evaluator behind
//! `spec.postBuild`, reproducing fluxcd/pkg/envsubst (the version
//! kustomize-controller 1.9 uses), quirks included.
//!
//! * `${name}` substitutes; a bare `$name` and a lone `$` are literal.
//! * `$$` is an escape for `$` outside `${…}`, so `$${x}` yields `${x}`.
//! * Defaults: `=`, `:=`, `:-`, and also `:?` and `:+`, which Flux treats
//!   exactly like `:-` (not as bash's error or alternate-value forms): the
//!   default applies when the value is empty or unset.
//! * `${#v}` length (bytes); `^ ^^ , ,,` case; `:o` and `:o:l` substring
//!   (byte offsets, negative offset from the end); `# ## % %%` trim with a
//!   glob; `/ // /# /%` replace with a literal pattern.
//! * Forms bash has but Flux rejects (`${v-x}`, `${v+x}`, `${v?x}`, …) are
//!   parse errors: Flux fails the build with "missing closing brace".
//! * In strict mode (Flux 2.9's default) an unset variable is an error unless
//!   a default form applies; otherwise it is the empty string.
//!
//! Nesting is bounded ([`MAX_DEPTH`]) and everything else is linear in the
//! input, so no input can exhaust the stack or the CPU.

use std::fmt;

/// Deepest `${a:-${b:-…}}` nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(pub Vec<Piece>);

/// Text, or a `${…}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Var(Var),
}

/// One `${…}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    pub name: String,
    pub op: Op,
    /// Byte offset of the `$` in the input.
    pub offset: usize,
}

/// The function of a `${…}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Plain,
    Length,
    /// `=`, `:=`, `:-`, `:?`, `:+` (the operator as written).
    Default(&'static str, Template),
    UpperFirst,
    UpperAll,
    LowerFirst,
    LowerAll,
    Substring(String, Option<String>),
    TrimPrefix(Template),
    TrimPrefixLongest(Template),
    TrimSuffix(Template),
    TrimSuffixLongest(Template),
    /// `/`, `//`, `/#`, `/%` with pattern and replacement.
    Replace(&'static str, Template, Template),
}

impl Op {
    /// Whether an unset variable is fine under strict mode.
    pub fn is_default(&self) -> bool {
        matches!(self, Op::Default(..))
    }
}

/// Why a template does not parse, as Flux reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset where the failing expression starts.
    pub offset: usize,
    pub message: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.message)
    }
}

/// A variable's value, as far as this check can know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Value(String),
    /// Defined, value unknown (a SOPS-encrypted Secret, a source outside the
    /// repository): the expression is left as written.
    Unknown,
    Missing,
}

/// Evaluation failed as Flux's would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// Strict mode and an unset variable without a default.
    NotSet { name: String, offset: usize },
    /// An invalid substring length (Flux's code panics on it).
    BadSubstring { name: String, offset: usize },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            EvalError::NotSet { name, .. } => write!(f, "variable not set (strict mode): {name:?}"),
            EvalError::BadSubstring { name, .. } => {
                write!(f, "invalid substring length for {name:?}")
            }
        }
    }
}

/// Parses a template.
pub fn parse(input: &str) -> Result<Template, ParseError> {
    let mut p = Parser {
        s: input.as_bytes(),
        input,
        pos: 0,
    };
    let pieces = p.text(0, None)?;
    Ok(Template(pieces))
}

struct Parser<'a> {
    s: &'a [u8],
    input: &'a str,
    pos: usize,
}

/// What ends an argument being parsed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
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
    fn text(&mut self, depth: usize, stop: Option<Stop>) -> Result<Vec<Piece>, ParseError> {
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
            Some(b'^' | b',') => {
                let first = self.s[self.pos];
                let double = self.peek(1) == Some(first);
                let mixed = matches!(self.peek(1), Some(b'^' | b',')) && !double;
                self.pos += if double || mixed { 2 } else { 1 };
                if matches!(self.peek(0), Some(b'^' | b',')) {
                    return Err(err("bad substitution"));
                }
                match (first, double, mixed) {
                    (_, _, true) => Op::Plain, // `^,` and `,^` return the value unchanged
                    (b'^', false, _) => Op::UpperFirst,
                    (b'^', true, _) => Op::UpperAll,
                    (_, false, _) => Op::LowerFirst,
                    (_, true, _) => Op::LowerAll,
                }
            }
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
                _ => {
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
                        return Err(err("unable to parse substitution within function"));
                    }
                    Op::Substring(from, len)
                }
            },
            Some(b'#' | b'%') => {
                let c = self.s[self.pos];
                let longest = self.peek(1) == Some(c);
                self.pos += if longest { 2 } else { 1 };
                let pattern = self.argument(depth, offset)?;
                if pattern.0.is_empty() {
                    return Err(err("unable to parse substitution within function"));
                }
                match (c, longest) {
                    (b'#', false) => Op::TrimPrefix(pattern),
                    (b'#', true) => Op::TrimPrefixLongest(pattern),
                    (_, false) => Op::TrimSuffix(pattern),
                    (_, true) => Op::TrimSuffixLongest(pattern),
                }
            }
            Some(b'/') => {
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
                Op::Replace(kind, pattern, replacement)
            }
            Some(_) => return Err(err("missing closing brace")),
        };
        if self.peek(0) != Some(b'}') {
            return Err(err("missing closing brace"));
        }
        self.pos += 1;
        Ok(Var { name, op, offset })
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

impl Template {
    /// Every variable referenced, with its operator (nested ones included).
    pub fn vars(&self) -> Vec<&Var> {
        let mut out = Vec::new();
        collect(&self.0, &mut out);
        out
    }

    /// Whether the template has any `${…}` at all.
    pub fn has_vars(&self) -> bool {
        self.0.iter().any(|p| matches!(p, Piece::Var(_)))
    }

    /// Evaluates with `lookup`. Variables whose value is unknown are left as
    /// written (the input is needed to reproduce them).
    pub fn eval(
        &self,
        input: &str,
        lookup: &dyn Fn(&str) -> Lookup,
        strict: bool,
    ) -> Result<String, EvalError> {
        let mut out = String::new();
        eval_pieces(&self.0, input, lookup, strict, &mut out)?;
        Ok(out)
    }
}

fn collect<'t>(pieces: &'t [Piece], out: &mut Vec<&'t Var>) {
    for piece in pieces {
        if let Piece::Var(var) = piece {
            out.push(var);
            match &var.op {
                Op::Default(_, t)
                | Op::TrimPrefix(t)
                | Op::TrimPrefixLongest(t)
                | Op::TrimSuffix(t)
                | Op::TrimSuffixLongest(t) => collect(&t.0, out),
                Op::Replace(_, a, b) => {
                    collect(&a.0, out);
                    collect(&b.0, out);
                }
                _ => {}
            }
        }
    }
}

/// Raised internally when a value is unknown: the whole expression is kept.
struct Keep;

fn eval_pieces(
    pieces: &[Piece],
    input: &str,
    lookup: &dyn Fn(&str) -> Lookup,
    strict: bool,
    out: &mut String,
) -> Result<(), EvalError> {
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Var(var) => match eval_var(var, input, lookup, strict)? {
                Ok(value) => out.push_str(&value),
                Err(Keep) => out.push_str(&source_of(var, input)),
            },
        }
    }
    Ok(())
}

/// The expression's own text in the input (to leave it as written).
fn source_of(var: &Var, input: &str) -> String {
    let rest = &input[var.offset.min(input.len())..];
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return rest[..=i].to_string();
                }
            }
            _ => {}
        }
    }
    rest.to_string()
}

fn eval_arg(
    t: &Template,
    input: &str,
    lookup: &dyn Fn(&str) -> Lookup,
    strict: bool,
) -> Result<Result<String, Keep>, EvalError> {
    let mut out = String::new();
    for piece in &t.0 {
        match piece {
            Piece::Text(s) => out.push_str(s),
            Piece::Var(v) => match eval_var(v, input, lookup, strict)? {
                Ok(s) => out.push_str(&s),
                Err(Keep) => return Ok(Err(Keep)),
            },
        }
    }
    Ok(Ok(out))
}

fn eval_var(
    var: &Var,
    input: &str,
    lookup: &dyn Fn(&str) -> Lookup,
    strict: bool,
) -> Result<Result<String, Keep>, EvalError> {
    let looked = lookup(&var.name);
    // Flux evaluates every argument before applying the function.
    let args: Vec<Result<String, Keep>> = match &var.op {
        Op::Default(_, t)
        | Op::TrimPrefix(t)
        | Op::TrimPrefixLongest(t)
        | Op::TrimSuffix(t)
        | Op::TrimSuffixLongest(t) => {
            vec![eval_arg(t, input, lookup, strict)?]
        }
        Op::Replace(_, a, b) => vec![
            eval_arg(a, input, lookup, strict)?,
            eval_arg(b, input, lookup, strict)?,
        ],
        _ => Vec::new(),
    };
    let value = match looked {
        Lookup::Value(v) => v,
        Lookup::Unknown => return Ok(Err(Keep)),
        Lookup::Missing if strict && !var.op.is_default() => {
            return Err(EvalError::NotSet {
                name: var.name.clone(),
                offset: var.offset,
            });
        }
        Lookup::Missing => String::new(),
    };
    let mut args_ok = Vec::with_capacity(args.len());
    for a in args {
        match a {
            Ok(s) => args_ok.push(s),
            Err(Keep) => return Ok(Err(Keep)),
        }
    }
    let result = match &var.op {
        Op::Plain => value,
        Op::Length => value.len().to_string(),
        Op::Default(..) => {
            if value.is_empty() {
                args_ok.remove(0)
            } else {
                value
            }
        }
        Op::UpperFirst => first_mapped(&value, true),
        Op::LowerFirst => first_mapped(&value, false),
        Op::UpperAll => value.to_uppercase(),
        Op::LowerAll => value.to_lowercase(),
        Op::Substring(from, len) => {
            substring(&value, from, len.as_deref()).ok_or_else(|| EvalError::BadSubstring {
                name: var.name.clone(),
                offset: var.offset,
            })?
        }
        Op::TrimPrefix(_) => trim_prefix(&value, &args_ok[0], false),
        Op::TrimPrefixLongest(_) => trim_prefix(&value, &args_ok[0], true),
        Op::TrimSuffix(_) => trim_suffix(&value, &args_ok[0], false),
        Op::TrimSuffixLongest(_) => trim_suffix(&value, &args_ok[0], true),
        Op::Replace(kind, _, _) => {
            let (pattern, with) = (&args_ok[0], &args_ok[1]);
            match *kind {
                "/" => value.replacen(pattern.as_str(), with, 1),
                "//" => value.replace(pattern.as_str(), with),
                // Flux returns the value unchanged when the replacement is empty.
                _ if with.is_empty() => value,
                "/#" => match value.strip_prefix(pattern.as_str()) {
                    Some(rest) => format!("{with}{rest}"),
                    None => value,
                },
                _ => match value.strip_suffix(pattern.as_str()) {
                    Some(rest) => format!("{rest}{with}"),
                    None => value,
                },
            }
        }
    };
    Ok(Ok(result))
}

fn first_mapped(s: &str, upper: bool) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if upper => c.to_uppercase().chain(chars).collect(),
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `${v:o}` / `${v:o:l}` with byte offsets. `None` when Flux's code would
/// panic (a negative length).
fn substring(s: &str, from: &str, len: Option<&str>) -> Option<String> {
    let Ok(from) = from.trim().parse::<i64>() else {
        return Some(s.to_string());
    };
    let n = s.len() as i64;
    let start = if from < 0 { (n + from).max(0) } else { from };
    if start >= n {
        return Some(String::new());
    }
    let end = match len {
        None => n,
        Some(l) => match l.trim().parse::<i64>() {
            Err(_) => return Some(s.to_string()),
            Ok(l) if l < 0 => return None,
            Ok(l) => (start + l).min(n),
        },
    };
    let bytes = &s.as_bytes()[start as usize..end as usize];
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// Flux's glob for trims: `*` matches any run (including `/`), `?` one
/// character, `\x` a literal x; everything else matches itself.
fn glob(pattern: &[char], text: &[char]) -> bool {
    // Iterative matcher with single-star backtracking: linear-ish, no recursion.
    let (mut p, mut t) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while t < text.len() {
        if p < pattern.len()
            && pattern[p] == '\\'
            && p + 1 < pattern.len()
            && pattern[p + 1] == text[t]
        {
            p += 2;
            t += 1;
        } else if p < pattern.len()
            && (pattern[p] == '?'
                || (pattern[p] == text[t] && pattern[p] != '*' && pattern[p] != '\\'))
        {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some(p);
            mark = t;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    while p < pattern.len() && pattern[p] == '*' {
        p += 1;
    }
    p == pattern.len()
}

fn trim_prefix(value: &str, pattern: &str, longest: bool) -> String {
    let chars: Vec<char> = value.chars().collect();
    let pat: Vec<char> = pattern.chars().collect();
    let cut = if longest {
        (1..=chars.len()).rev().find(|&i| glob(&pat, &chars[..i]))
    } else {
        (1..=chars.len()).find(|&i| glob(&pat, &chars[..i]))
    };
    match cut {
        Some(i) => chars[i..].iter().collect(),
        None => value.to_string(),
    }
}

fn trim_suffix(value: &str, pattern: &str, longest: bool) -> String {
    let chars: Vec<char> = value.chars().collect();
    let pat: Vec<char> = pattern.chars().collect();
    let n = chars.len();
    let cut = if longest {
        (0..n).find(|&i| glob(&pat, &chars[i..]))
    } else {
        (0..n).rev().find(|&i| glob(&pat, &chars[i..]))
    };
    match cut {
        Some(i) => chars[..i].iter().collect(),
        None => value.to_string(),
    }
}

/// Flux's rule for variable names (checked on the keys of the merged map).
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Lookup {
        let v = match name {
            "var01" => "abcdEFGH28ij",
            "default_var" => "foo",
            "stringZ" => "abcABC123ABCabc",
            "path_name" => "/home/bozo/ideas/thoughts.for.today",
            "filename" => "/path/to/file",
            "slashed" => "foo/bar/baz",
            "dotted" => "foo.bar",
            "empty" => "",
            "n" => "123",
            "upper" => "HELLO",
            "secret" => return Lookup::Unknown,
            _ => return Lookup::Missing,
        };
        Lookup::Value(v.to_string())
    }

    fn run(input: &str, strict: bool) -> Result<String, String> {
        let t = parse(input).map_err(|e| format!("parse: {e}"))?;
        t.eval(input, &vars, strict)
            .map_err(|e| format!("eval: {e}"))
    }

    /// Every form Flux supports, its escapes and its failures, with the
    /// expected output (vectors from fluxcd/pkg/envsubst's tests where they
    /// exist, the rest traced from its code).
    #[test]
    fn table() {
        let cases: &[(&str, bool, Result<&str, &str>)] = &[
            // plain, bare and escaped
            ("${var01}", true, Ok("abcdEFGH28ij")),
            ("$var01", true, Ok("$var01")),
            ("a $ b", true, Ok("a $ b")),
            ("trailing $", true, Ok("trailing $")),
            ("$${var01}", true, Ok("${var01}")),
            ("$$$", true, Ok("$$")),
            ("$$${var01}", true, Ok("$abcdEFGH28ij")),
            (
                "some text ${var01}$${var$${var01}$var01${var01}",
                true,
                Ok("some text abcdEFGH28ij${var${var01}$var01abcdEFGH28ij"),
            ),
            ("}text", true, Ok("}text")),
            (
                "\\\\something ${var=${default_var}}",
                true,
                Ok("\\\\something foo"),
            ),
            // defaults: unset and empty are the same; :? and :+ act like :-
            ("${missing:-fallback}", true, Ok("fallback")),
            ("${missing=assigned}", true, Ok("assigned")),
            ("${missing:=x}", true, Ok("x")),
            ("${empty:-x}", true, Ok("x")),
            ("${empty=x}", true, Ok("x")),
            ("${var01:-x}", true, Ok("abcdEFGH28ij")),
            ("${var01:+alt}", true, Ok("abcdEFGH28ij")),
            ("${missing:+alt}", true, Ok("alt")),
            ("${missing:?msg}", true, Ok("msg")),
            (
                "foo: ${var=prefix${default_var}-suffix}",
                true,
                Ok("foo: prefixfoo-suffix"),
            ),
            (
                "something $${var=${default_var}}",
                true,
                Ok("something ${var=foo}"),
            ),
            ("${var=${var01^^}}", true, Ok("ABCDEFGH28IJ")),
            ("${missing:-$$}", true, Ok("$$")),
            ("${missing:-$${var01}}", true, Ok("$abcdEFGH28ij")),
            ("${a:-{}}", true, Ok("{}")),
            // strict mode: unset without default fails, empty is fine
            (
                "${missing}",
                true,
                Err("eval: variable not set (strict mode): \"missing\""),
            ),
            (
                "${#missing}",
                true,
                Err("eval: variable not set (strict mode): \"missing\""),
            ),
            (
                "${missing:0}",
                true,
                Err("eval: variable not set (strict mode): \"missing\""),
            ),
            (
                "${missing/pattern/replacement}",
                true,
                Err("eval: variable not set (strict mode): \"missing\""),
            ),
            (
                "${var01:-${missing}}",
                true,
                Err("eval: variable not set (strict mode): \"missing\""),
            ),
            ("${empty}", true, Ok("")),
            ("x${missing}y", false, Ok("xy")),
            // unknown values are left as written
            ("a ${secret} b", true, Ok("a ${secret} b")),
            ("${secret:-x}", true, Ok("${secret:-x}")),
            // length and case
            ("${#var01}", true, Ok("12")),
            ("${var01^}", true, Ok("AbcdEFGH28ij")),
            ("${var01^^}", true, Ok("ABCDEFGH28IJ")),
            ("${upper,}", true, Ok("hELLO")),
            ("${upper,,}", true, Ok("hello")),
            ("${var01^,}", true, Ok("abcdEFGH28ij")),
            // substring
            ("${path_name:11:5}", true, Ok("ideas")),
            ("${var01:4}", true, Ok("EFGH28ij")),
            ("${var01:50}", true, Ok("")),
            ("${var01:x}", true, Ok("abcdEFGH28ij")),
            (
                "${var01:2:-1}",
                true,
                Err("eval: invalid substring length for \"var01\""),
            ),
            // trim (glob, * matches /)
            ("${filename#*/}", true, Ok("path/to/file")),
            ("${filename##*/}", true, Ok("file")),
            ("${filename%/*}", true, Ok("/path/to")),
            ("${filename%%/*}", true, Ok("")),
            ("${var01#*}", true, Ok("bcdEFGH28ij")),
            ("${var01#zzz}", true, Ok("abcdEFGH28ij")),
            // replace (literal pattern, escapes)
            ("${slashed/\\//-}", true, Ok("foo-bar/baz")),
            ("${slashed//\\//-}", true, Ok("foo-bar-baz")),
            ("${dotted/./}", true, Ok("foobar")),
            ("${stringZ/%abc/XYZ}", true, Ok("abcABC123ABCXYZ")),
            ("${stringZ/#abc/XYZ}", true, Ok("XYZABC123ABCabc")),
            ("${stringZ/#abc/}", true, Ok("abcABC123ABCabc")),
            ("${stringZ//abc/_}", true, Ok("_ABC123ABC_")),
            // forms Flux rejects
            ("${var01-x}", true, Err("parse: missing closing brace")),
            ("${var01+x}", true, Err("parse: missing closing brace")),
            ("${var01?x}", true, Err("parse: missing closing brace")),
            ("${var01.x}", true, Err("parse: missing closing brace")),
            ("${var01 }", true, Err("parse: missing closing brace")),
            ("${var01", true, Err("parse: missing closing brace")),
            ("${", true, Err("parse: unable to parse variable name")),
            ("${}", true, Err("parse: unable to parse variable name")),
            ("${-x}", true, Err("parse: unable to parse variable name")),
            (
                "${var01:-abc",
                true,
                Err("parse: unable to parse substitution within function"),
            ),
            (
                "${var01:}",
                true,
                Err("parse: unable to parse substitution within function"),
            ),
            (
                "${var01#}",
                true,
                Err("parse: unable to parse substitution within function"),
            ),
            ("${var01^^^}", true, Err("parse: bad substitution")),
            ("${#}", true, Err("parse: bad substitution")),
            ("${#var01:-x}", true, Err("parse: bad substitution")),
            ("${var01/a}", true, Err("parse: bad substitution")),
            // names may start with a digit and be Unicode inside braces
            ("${1x:-d}", true, Ok("d")),
            ("${é:-d}", true, Ok("d")),
        ];
        let mut failures = Vec::new();
        for (input, strict, want) in cases {
            let got = run(input, *strict);
            let want = want.map(str::to_string).map_err(str::to_string);
            if got != want {
                failures.push(format!(
                    "{input:?} (strict={strict}): got {got:?}, want {want:?}"
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn variable_names_follow_fluxs_regex() {
        for ok in ["a", "_a", "A_1", "cluster_vars"] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in ["", "1a", "my-key", "a.b", "é", "a b"] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut input = String::new();
        for _ in 0..10_000 {
            input.push_str("${a:-");
        }
        input.push('x');
        input.push_str(&"}".repeat(10_000));
        let err = parse(&input).unwrap_err();
        assert_eq!(err.message, "substitution nested too deeply");
    }

    #[test]
    fn huge_inputs_parse_in_one_pass() {
        // 4 MiB of text and a few thousand expressions: no quadratic blow-up
        // in the parser (a timing bound lives in the benchmarks, not here).
        let mut input = "x".repeat(4 << 20);
        for _ in 0..5_000 {
            input.push_str("${var01} $${escaped} ");
        }
        let t = parse(&input).unwrap();
        assert_eq!(t.vars().len(), 5_000);
        let out = t.eval(&input, &vars, true).unwrap();
        assert!(out.ends_with("abcdEFGH28ij ${escaped} "));
    }
}
