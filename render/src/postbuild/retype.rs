//! What a substituted string becomes after Flux's YAML round trip.
//!
//! kustomize-controller substitutes the YAML text of each object
//! (`SubstituteVariables` in fluxcd/pkg `kustomize_varsub.go`): the object is
//! marshalled to YAML, substituted, and unmarshalled again with
//! sigs.k8s.io/yaml, whose go-yaml v2 resolves plain scalars by YAML 1.1
//! rules. A string that was written plain (most are: `${VAR}` needs no
//! quotes) is resolved anew: `on`, `yes`, `y` become booleans, `0755` an
//! octal integer, `1.5` a float, `~` null, and a `#` after a space (or at
//! the start) begins a comment. A string the marshaller had to quote (one
//! that already looked like something else, or held `: `) stays a string.

use crate::yaml::{Node, Value};

/// The value a string becomes after substitution: `original` is the text
/// before (what the marshaller saw), `substituted` the text after.
pub(crate) fn retype(original: &str, substituted: String) -> Value {
    if !emitted_plain(original) {
        return Value::String(substituted);
    }
    resolve_plain(&substituted)
}

/// Why the substituted text is not YAML once Flux reads it back, if it is
/// not: a string the marshaller wrote plain is parsed again as it stands
/// (`v: [unclosed` fails `yaml.YAMLToJSON`, and with it the whole build of
/// the Kustomization, in `SubstituteVariables`).
pub(crate) fn unparsable(original: &str, substituted: &str) -> Option<String> {
    if !emitted_plain(original) || substituted.contains('\n') {
        return None;
    }
    // A word of letters, digits and `._/-` that starts with a letter or a
    // digit is one plain scalar to any YAML parser: no need to ask one
    // (most substituted values are such words).
    let mut chars = substituted.chars();
    if chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-'))
    {
        return None;
    }
    match crate::yaml::parse_documents(&format!("v: {substituted}\n")) {
        Ok(docs) if docs.len() == 1 && docs[0].as_map().len() == 1 => None,
        Ok(_) => Some("the value reads as more than one value".into()),
        Err(e) => Some(e.message),
    }
}

/// Whether go-yaml v2's emitter writes the string as a plain scalar
/// (`yaml_emitter_analyze_scalar` and the `canUsePlain` check of
/// `encode.go`).
fn emitted_plain(s: &str) -> bool {
    if s.is_empty() || s.contains('\n') || !matches!(resolve_plain(s), Value::String(_)) {
        return false;
    }
    if s.starts_with(char::is_whitespace) || s.ends_with(char::is_whitespace) {
        return false;
    }
    let first = s.chars().next().unwrap_or(' ');
    let second_blank = s.chars().nth(1).is_none_or(char::is_whitespace);
    if matches!(
        first,
        ',' | '['
            | ']'
            | '{'
            | '}'
            | '#'
            | '&'
            | '*'
            | '!'
            | '|'
            | '>'
            | '\''
            | '"'
            | '%'
            | '@'
            | '`'
    ) || (matches!(first, '-' | '?' | ':') && second_blank)
    {
        return false;
    }
    !(s.contains(": ") || s.contains(" #") || s.ends_with(':'))
}

/// go-yaml v2's resolution of a plain scalar (`resolve` in resolve.go),
/// with the structure a plain text can take on when parsed again: a comment,
/// a flow collection, a quoted string.
pub(crate) fn resolve_plain(text: &str) -> Value {
    let t = text.trim();
    // A comment starts at `#` at the beginning or after whitespace.
    if t.starts_with('#') {
        return Value::Null;
    }
    if let Some(cut) = t.find(" #").or_else(|| t.find("\t#")) {
        return resolve_plain(&t[..cut]);
    }
    if (t.starts_with('[') && t.ends_with(']')) || (t.starts_with('{') && t.ends_with('}')) {
        if let Ok(mut docs) = crate::yaml::parse_documents(&format!("v: {t}\n"))
            && let Some(v) = docs.pop().and_then(|mut d| d.remove("v"))
        {
            return retyped(v).value;
        }
        return Value::String(text.to_string());
    }
    for q in ['\'', '"'] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return Value::String(t[1..t.len() - 1].to_string());
        }
    }
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Value::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Value::Bool(false);
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN),
        _ => {}
    }
    if let Some(i) = int(t) {
        return Value::Int(i);
    }
    if is_float(t)
        && let Ok(f) = t.parse::<f64>()
    {
        return Value::Float(f);
    }
    Value::String(text.to_string())
}

/// An integer as go-yaml v2 reads one: `_` ignored, an optional sign, and
/// `strconv.ParseInt(s, 0, 64)` prefixes (`0x`, `0b`, a leading `0` for
/// octal).
fn int(t: &str) -> Option<i64> {
    let plain: String = t.chars().filter(|c| *c != '_').collect();
    let (negative, digits) = match plain.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, plain.strip_prefix('+').unwrap_or(&plain)),
    };
    if digits.is_empty() {
        return None;
    }
    let value = if let Some(hex) = digits.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(bin) = digits.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else if digits.chars().all(|c| c.is_ascii_digit()) {
        digits.parse().ok()?
    } else {
        return None;
    };
    Some(if negative { -value } else { value })
}

/// `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_float(t: &str) -> bool {
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((whole, frac)) => digits(whole) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

/// A parsed flow collection with its scalars resolved as go-yaml v2 would.
fn retyped(mut node: Node) -> Node {
    node.value = match node.value {
        Value::String(s) => resolve_plain(&s),
        Value::Seq(items) => Value::Seq(items.into_iter().map(retyped).collect()),
        Value::Map(entries) => {
            Value::Map(entries.into_iter().map(|(k, v)| (k, retyped(v))).collect())
        }
        other => other,
    };
    node
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_value_that_breaks_the_yaml_is_unparsable() {
        assert!(super::unparsable("${Y}", "[unclosed").is_some());
        assert!(super::unparsable("${Y}", "{a").is_some());
        assert!(super::unparsable("${Y}", "@x").is_some());
        assert!(super::unparsable("x-${Y}", "x-a: b").is_some());
        assert!(super::unparsable("${Y}", "[a, b]").is_none());
        assert!(super::unparsable("${Y}", "plain text").is_none());
        assert!(super::unparsable("${Y}", "").is_none());
        // A string the marshaller quotes stays a string.
        assert!(super::unparsable("a: ${Y}", "a: [x").is_none());
    }

    use super::*;

    #[test]
    fn yaml_one_one_resolution() {
        let s = |t: &str| resolve_plain(t);
        assert_eq!(s("on"), Value::Bool(true));
        assert_eq!(s("yes"), Value::Bool(true));
        assert_eq!(s("y"), Value::Bool(true));
        assert_eq!(s("Off"), Value::Bool(false));
        assert_eq!(s("0755"), Value::Int(493));
        assert_eq!(s("0x1F"), Value::Int(31));
        assert_eq!(s("1_000"), Value::Int(1000));
        assert_eq!(s("-12"), Value::Int(-12));
        assert_eq!(s("1.5"), Value::Float(1.5));
        assert_eq!(s("1.0"), Value::Float(1.0));
        assert_eq!(s("1e3"), Value::Float(1000.0));
        assert_eq!(s(".5"), Value::Float(0.5));
        assert_eq!(s("~"), Value::Null);
        assert_eq!(s(""), Value::Null);
        assert_eq!(s("#fff"), Value::Null);
        assert_eq!(s("blue #fff"), Value::String("blue".into()));
        assert_eq!(s("1.2.3"), Value::String("1.2.3".into()));
        assert_eq!(s("v1"), Value::String("v1".into()));
        assert_eq!(s("2026-12-01"), Value::String("2026-12-01".into()));
        assert!(matches!(s("[a, 1]"), Value::Seq(ref v) if v[1].value == Value::Int(1)));
    }

    #[test]
    fn quoted_originals_stay_strings() {
        assert_eq!(retype("${X}", "on".into()), Value::Bool(true));
        assert_eq!(retype("${X}", "8080".into()), Value::Int(8080));
        assert_eq!(
            retype("port ${X}", "port 1".into()),
            Value::String("port 1".into())
        );
        // The marshaller quotes what already resolved to something else or
        // held `: ` or ` #`.
        assert_eq!(
            retype("a: ${X}", "a: on".into()),
            Value::String("a: on".into())
        );
        assert_eq!(retype("#${X}", "#1".into()), Value::String("#1".into()));
        assert_eq!(retype("${X} ", "1 ".into()), Value::String("1 ".into()));
    }
}
