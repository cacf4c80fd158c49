//! The evaluator: a parsed template against a lookup, with Flux's
//! operators (defaults, length, case, substring, trim, replace).

use super::{EvalError, Lookup, Op, Piece, Template, Var};

impl Template {
    /// Every variable referenced, with its operator (nested ones included).
    pub fn vars(&self) -> Vec<&Var> {
        let mut out = Vec::new();
        collect(&self.0, &mut out);
        out
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
