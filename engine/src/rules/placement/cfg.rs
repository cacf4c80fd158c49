//! `policies:` in conformance.yaml (placement and field policies), parsed
//! strictly and validated here, beside the rules that enforce them.

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::config_error::{ConfigError, error_at};

/// `policies:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policies {
    /// `placement`: the `kind-placement` policies.
    #[serde(default)]
    pub placement: Vec<Placement>,
    /// `fields`: the `field-policy` policies.
    #[serde(default)]
    pub fields: Vec<FieldPolicy>,
}

/// One `kind-placement` policy.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// Kustomization name or glob (`platform-config`, `apps-*`).
    pub kustomization: Spanned<String>,
    /// Cluster name or glob (default: every cluster).
    #[serde(default)]
    pub cluster: Option<String>,
    /// Kinds (`Kind` or `group/Kind`) that must not appear.
    #[serde(default)]
    pub forbid: Vec<String>,
    /// Kinds that must appear at least once.
    #[serde(default)]
    pub require: Vec<String>,
    /// Kinds that must appear exactly this many times.
    #[serde(default)]
    pub count: std::collections::BTreeMap<String, usize>,
    /// Why (shown in findings).
    #[serde(default)]
    pub reason: Option<String>,
}

/// One `field-policy`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldPolicy {
    /// `Kind` or `group/Kind`.
    pub kind: String,
    /// Kustomization name or glob (default: every Kustomization).
    #[serde(default)]
    pub kustomization: Option<String>,
    /// Cluster name or glob (default: every cluster).
    #[serde(default)]
    pub cluster: Option<String>,
    /// Namespace name or glob (default: any object, cluster-scoped ones included).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Object name or glob (default: any name).
    #[serde(default)]
    pub name: Option<String>,
    /// The field: `spec.configuration.evictionStrategy`,
    /// `spec.template.spec.containers[*].image`, `metadata.labels["app.kubernetes.io/name"]`.
    pub path: Spanned<String>,
    /// `absent: true`: the field must not be set.
    #[serde(default)]
    pub absent: Option<bool>,
    /// `present: true`: the field must be set.
    #[serde(default)]
    pub present: Option<bool>,
    /// The field must be set, and every value it reaches equal this (compared as text).
    #[serde(default)]
    pub equals: Option<Spanned<String>>,
    /// The field must be set, and every value it reaches match this regex.
    #[serde(default)]
    pub matches: Option<Spanned<String>>,
    /// Why (shown in findings).
    #[serde(default)]
    pub reason: Option<String>,
}

impl Policies {
    /// Every problem the types cannot catch: field paths, regexes, globs,
    /// exclusive options.
    pub fn validate(&self, problems: &mut Vec<ConfigError>) {
        for policy in &self.fields {
            if let Err(message) = FieldPath::parse(&policy.path.value) {
                problems.push(error_at(
                    &policy.path,
                    format!("field path `{}`: {message}", policy.path.value),
                ));
            }
            let checks = [
                policy.absent.is_some(),
                policy.present.is_some(),
                policy.equals.is_some(),
                policy.matches.is_some(),
            ]
            .into_iter()
            .filter(|set| *set)
            .count();
            if checks != 1 {
                problems.push(error_at(
                    &policy.path,
                    format!(
                        "field policy on `{}` needs exactly one of absent, present, equals, matches (found {checks})",
                        policy.path.value
                    ),
                ));
            }
            if let Some(pattern) = &policy.matches
                && let Err(err) = regex::Regex::new(&pattern.value)
            {
                problems.push(error_at(
                    pattern,
                    format!("regex `{}` does not compile: {err}", pattern.value),
                ));
            }
        }
        for placement in &self.placement {
            if placement.forbid.is_empty()
                && placement.require.is_empty()
                && placement.count.is_empty()
            {
                problems.push(error_at(
                    &placement.kustomization,
                    "placement policy needs at least one of forbid, require, count".into(),
                ));
            }
            if let Err(err) = glob(&placement.kustomization.value) {
                problems.push(error_at(&placement.kustomization, err.to_string()));
            }
        }
    }
}

pub use crate::config_error::glob;

/// Whether `name` matches the optional glob (absent matches everything).
pub fn matches_glob(pattern: Option<&str>, name: &str) -> bool {
    match pattern {
        None => true,
        Some(p) => glob(p).is_ok_and(|g| g.is_match(name)),
    }
}

/// A field path: keys separated by `.`, `["quoted.key"]` for keys with dots,
/// `[N]` for a list index and `[*]` for every item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Segment>);

/// Why a field path does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldPathError {
    /// Nothing at all.
    #[error("empty path")]
    Empty,
    /// Two dots, or a dot first.
    #[error("empty key at character {0}")]
    EmptyKey(usize),
    /// A key with nothing in it at the end.
    #[error("empty key")]
    EmptyLastKey,
    /// `[` never closed.
    #[error("unclosed `[` at character {0}")]
    Unclosed(usize),
    /// Brackets holding something else.
    #[error("`[{0}]` is not an index, [*] or a quoted key")]
    BadBracket(String),
    /// Something glued to a `]`.
    #[error("expected `.` or `[` after `]` at character {0}")]
    AfterBracket(usize),
    /// A trailing dot.
    #[error("path ends with `.`")]
    TrailingDot,
}

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A mapping key.
    Key(String),
    /// `[N]`: a list index.
    Index(usize),
    /// `[*]`: every item of a list.
    Every,
}

impl FieldPath {
    /// Parses a field path (`spec.template.spec.containers[*].image`).
    pub fn parse(text: &str) -> Result<FieldPath, FieldPathError> {
        let mut segments = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        let mut key = String::new();
        let flush = |key: &mut String, segments: &mut Vec<Segment>| -> Result<(), FieldPathError> {
            if key.is_empty() {
                return Err(FieldPathError::EmptyLastKey);
            }
            segments.push(Segment::Key(std::mem::take(key)));
            Ok(())
        };
        if chars.is_empty() {
            return Err(FieldPathError::Empty);
        }
        while i < chars.len() {
            match chars[i] {
                '.' => {
                    if !key.is_empty() {
                        flush(&mut key, &mut segments)?;
                    } else if i == 0 || chars[i - 1] != ']' {
                        return Err(FieldPathError::EmptyKey(i + 1));
                    }
                    i += 1;
                }
                '[' => {
                    if !key.is_empty() {
                        flush(&mut key, &mut segments)?;
                    }
                    let close = chars[i..]
                        .iter()
                        .position(|c| *c == ']')
                        .ok_or(FieldPathError::Unclosed(i + 1))?;
                    let inner: String = chars[i + 1..i + close].iter().collect();
                    let segment = if inner == "*" {
                        Segment::Every
                    } else if let Ok(n) = inner.parse::<usize>() {
                        Segment::Index(n)
                    } else if inner.len() >= 2
                        && (inner.starts_with('"') && inner.ends_with('"')
                            || inner.starts_with('\'') && inner.ends_with('\''))
                    {
                        Segment::Key(inner[1..inner.len() - 1].to_string())
                    } else {
                        return Err(FieldPathError::BadBracket(inner));
                    };
                    segments.push(segment);
                    i += close + 1;
                    if i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                        return Err(FieldPathError::AfterBracket(i + 1));
                    }
                }
                c => {
                    key.push(c);
                    i += 1;
                }
            }
        }
        if !key.is_empty() {
            flush(&mut key, &mut segments)?;
        } else if text.ends_with('.') {
            return Err(FieldPathError::TrailingDot);
        }
        Ok(FieldPath(segments))
    }

    /// Every node the path reaches in `node`.
    pub fn select<'n>(&self, node: &'n crate::yaml::Node) -> Vec<&'n crate::yaml::Node> {
        let mut current = vec![node];
        for segment in &self.0 {
            let mut next = Vec::new();
            for n in current {
                match segment {
                    Segment::Key(k) => next.extend(n.get(k)),
                    Segment::Index(i) => next.extend(n.as_seq().get(*i)),
                    Segment::Every => next.extend(n.as_seq()),
                }
            }
            current = next;
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_parse() {
        assert_eq!(
            FieldPath::parse("spec.template.spec.containers[*].image")
                .unwrap()
                .0,
            vec![
                Segment::Key("spec".into()),
                Segment::Key("template".into()),
                Segment::Key("spec".into()),
                Segment::Key("containers".into()),
                Segment::Every,
                Segment::Key("image".into()),
            ]
        );
        assert_eq!(
            FieldPath::parse("metadata.annotations[\"a.b/c\"]")
                .unwrap()
                .0
                .last(),
            Some(&Segment::Key("a.b/c".into()))
        );
        for bad in ["", ".", "a.", "a..b", "a[", "a[x]", "a[0]b"] {
            assert!(FieldPath::parse(bad).is_err(), "{bad}");
        }
    }
}
