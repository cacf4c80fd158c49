//! How a plain scalar with no tag resolves, exactly as the full loader
//! (serde-saphyr's typeless `deserialize_any`, with this loader's options:
//! YAML 1.2 booleans, legacy `0`-prefixed octal) resolves it. The fast
//! path ([`super::events`]) uses it; anything it does not settle (a
//! non-finite float) sends the file to the full loader.

use super::Value;

/// The value of a plain scalar; `None` when the full loader must decide
/// (`.inf`, `.nan`, a literal that overflows `f64`: the loader rejects a
/// non-finite float in an untyped position).
pub(super) fn resolve(value: &str) -> Option<Value> {
    if matches!(value, "" | "~" | "null" | "Null" | "NULL") {
        return Some(Value::Null);
    }
    let t = trim(value);
    match t {
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        _ => {}
    }
    // Not every character can start a number: most scalars are words.
    let first = t.as_bytes().first().copied().unwrap_or(b' ');
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return Some(Value::String(value.to_string()));
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    // An upper-case radix prefix (`0X1F`) and a signed NaN stay strings.
    if matches!(unsigned.as_bytes(), [b'0', b'X' | b'O' | b'B', ..])
        || matches!(unsigned, ".nan" | ".NaN" | ".NAN") && unsigned.len() < t.len()
    {
        return Some(Value::String(value.to_string()));
    }
    if let Some(rest) = t.strip_prefix('-') {
        if let Some(v) = integer(rest).and_then(|m| 0i128.checked_sub(m))
            && let Ok(v) = i64::try_from(v)
        {
            return Some(Value::Int(v));
        }
    } else if let Some(v) = integer(t.strip_prefix('+').unwrap_or(t))
        && let Ok(v) = u64::try_from(v)
    {
        // An unsigned integer past i64 is kept as a float (the loader's
        // visitor does the same).
        return Some(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int));
    }
    match float(t) {
        Some(f) if f.is_finite() => Some(Value::Float(f)),
        Some(_) => None,
        None => Some(Value::String(value.to_string())),
    }
}

/// YAML's padding: spaces, tabs and line breaks (not other Unicode space).
fn trim(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\r', '\n'])
}

/// The magnitude of an unsigned integer literal: `0x`, `0o`, `0b`, a
/// leading `0` for octal (each prefix may be followed by one `_`), else
/// decimal; `_` allowed between digits only.
fn integer(rest: &str) -> Option<i128> {
    let (radix, digits) = if let Some(r) = rest.strip_prefix("0x") {
        (16, r.strip_prefix('_').unwrap_or(r))
    } else if let Some(r) = rest.strip_prefix("0o") {
        (8, r.strip_prefix('_').unwrap_or(r))
    } else if let Some(r) = rest.strip_prefix("0b") {
        (2, r.strip_prefix('_').unwrap_or(r))
    } else if rest == "0" {
        (8, "0")
    } else if let Some(r) = rest.strip_prefix('0') {
        (8, r.strip_prefix('_').unwrap_or(r))
    } else {
        (10, rest)
    };
    let bytes = digits.as_bytes();
    let mut value: u128 = 0;
    let mut seen = false;
    for (i, &b) in bytes.iter().enumerate() {
        let digit = match b {
            b'_' => {
                let between =
                    i > 0 && bytes[i - 1] != b'_' && i + 1 < bytes.len() && bytes[i + 1] != b'_';
                if !between {
                    return None;
                }
                continue;
            }
            b'0'..=b'9' => u32::from(b - b'0'),
            b'a'..=b'f' if radix == 16 => 10 + u32::from(b - b'a'),
            b'A'..=b'F' if radix == 16 => 10 + u32::from(b - b'A'),
            _ => return None,
        };
        if digit >= radix {
            return None;
        }
        value = value
            .checked_mul(u128::from(radix))?
            .checked_add(u128::from(digit))?;
        seen = true;
    }
    if !seen {
        return None;
    }
    i128::try_from(value).ok()
}

/// A float literal: `.inf` and `.nan` spellings (signed or not), else what
/// Rust's parser reads as a finite number, else a numeral (sign, then a
/// digit) that overflows to infinity.
fn float(t: &str) -> Option<f64> {
    let (negative, unsigned) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    match unsigned {
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        ".inf" | ".Inf" | ".INF" if negative => return Some(f64::NEG_INFINITY),
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        _ => {}
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Some(v),
        Ok(v) if v.is_infinite() && unsigned.as_bytes().first().is_some_and(u8::is_ascii_digit) => {
            Some(v)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_scalars_resolve_as_the_full_loader_does() {
        let cases: &[(&str, Value)] = &[
            ("", Value::Null),
            ("~", Value::Null),
            ("NULL", Value::Null),
            ("nULL", Value::String("nULL".into())),
            ("True", Value::Bool(true)),
            ("yes", Value::String("yes".into())),
            ("on", Value::String("on".into())),
            ("0755", Value::Int(493)),
            ("0", Value::Int(0)),
            ("-0", Value::Int(0)),
            ("08", Value::Float(8.0)),
            ("0x1F", Value::Int(31)),
            ("0X1F", Value::String("0X1F".into())),
            ("0o17", Value::Int(15)),
            ("0b101", Value::Int(5)),
            ("1_000", Value::Int(1000)),
            ("1__0", Value::String("1__0".into())),
            ("+5", Value::Int(5)),
            ("-12", Value::Int(-12)),
            ("1.5", Value::Float(1.5)),
            (".5", Value::Float(0.5)),
            ("1e3", Value::Float(1000.0)),
            (
                "18446744073709551615",
                Value::Float(18_446_744_073_709_551_615.0),
            ),
            ("+.nan", Value::String("+.nan".into())),
            ("1.2.3", Value::String("1.2.3".into())),
            ("v1", Value::String("v1".into())),
            ("infinity", Value::String("infinity".into())),
            ("-", Value::String("-".into())),
        ];
        for (text, want) in cases {
            assert_eq!(resolve(text).as_ref(), Some(want), "{text}");
        }
        // Non-finite floats are left to the full loader.
        for text in [".inf", "-.Inf", ".nan", "1e999"] {
            assert_eq!(resolve(text), None, "{text}");
        }
    }
}
