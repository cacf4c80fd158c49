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

mod eval;
mod parse;

use std::fmt;

use parse::Parser;

/// Deepest `${a:-${b:-…}}` nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(pub Vec<Piece>);

/// Text, or a `${…}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal text, escapes resolved.
    Text(String),
    /// A `${…}` expression.
    Var(Var),
}

/// One `${…}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    /// The variable's name.
    pub name: String,
    /// What the expression does with the value.
    pub op: Op,
    /// Byte offset of the `$` in the input.
    pub offset: usize,
}

/// The function of a `${…}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `${v}`: the value itself.
    Plain,
    /// `${#v}`: the value's length in bytes.
    Length,
    /// `=`, `:=`, `:-`, `:?`, `:+` (the operator as written).
    Default(&'static str, Template),
    /// `${v^}`: the first character upper-cased.
    UpperFirst,
    /// `${v^^}`: the whole value upper-cased.
    UpperAll,
    /// `${v,}`: the first character lower-cased.
    LowerFirst,
    /// `${v,,}`: the whole value lower-cased.
    LowerAll,
    /// `${v:o}` / `${v:o:l}`: offset and optional length as written (byte offsets).
    Substring(String, Option<String>),
    /// `${v#p}`: the shortest prefix matching the glob removed.
    TrimPrefix(Template),
    /// `${v##p}`: the longest prefix matching the glob removed.
    TrimPrefixLongest(Template),
    /// `${v%p}`: the shortest suffix matching the glob removed.
    TrimSuffix(Template),
    /// `${v%%p}`: the longest suffix matching the glob removed.
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
    /// Flux's error text.
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
    /// Defined, with this value.
    Value(String),
    /// Defined, value unknown (a SOPS-encrypted Secret, a source outside the
    /// repository): the expression is left as written.
    Unknown,
    /// Not defined by any variable source.
    Missing,
}

/// Evaluation failed as Flux's would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// Strict mode and an unset variable without a default.
    NotSet {
        /// The variable's name.
        name: String,
        /// Byte offset of the expression's `$` in the input.
        offset: usize,
    },
    /// An invalid substring length (Flux's code panics on it).
    BadSubstring {
        /// The variable's name.
        name: String,
        /// Byte offset of the expression's `$` in the input.
        offset: usize,
    },
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
    let mut p = Parser::new(input);
    let pieces = p.text(0, None)?;
    Ok(Template(pieces))
}

/// Flux's rule for variable names (checked on the keys of the merged map).
pub(crate) fn is_valid_name(name: &str) -> bool {
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
