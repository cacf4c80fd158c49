//! kustomize's `target:` selectors: anchored regexes on group, version,
//! kind, name and namespace, and Kubernetes label and annotation selectors.

use super::super::{Res, is_cluster_scoped};
use crate::render::Error;
use crate::yaml::Node;

/// A `target:` selector (fields are anchored regexes).
#[derive(Debug, Clone, Default)]
pub struct Selector {
    group: Option<regex::Regex>,
    version: Option<regex::Regex>,
    kind: Option<regex::Regex>,
    name: Option<regex::Regex>,
    namespace: Option<regex::Regex>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

impl Selector {
    pub fn parse(node: &Node) -> Result<Selector, Error> {
        let re = |key: &str| -> Result<Option<regex::Regex>, Error> {
            match node.str_at(&[key]).filter(|s| !s.is_empty()) {
                None => Ok(None),
                Some(p) => regex::Regex::new(&format!("^(?:{})$", go_regex(&p)))
                    .map(Some)
                    .map_err(|e| {
                        Error::from(format!("target {key} `{p}` is not a valid regex: {e}"))
                    }),
            }
        };
        Ok(Selector {
            group: re("group")?,
            version: re("version")?,
            kind: re("kind")?,
            name: re("name")?,
            namespace: re("namespace")?,
            labels: parse_label_selector(node.str_at(&["labelSelector"]).as_deref())?,
            annotations: parse_label_selector(node.str_at(&["annotationSelector"]).as_deref())?,
        })
    }

    pub fn matches(&self, r: &Res) -> bool {
        let id = r.id();
        let original = r.original();
        let ok = |re: &Option<regex::Regex>, value: &str| {
            re.as_ref().is_none_or(|re| re.is_match(value))
        };
        let effective_ns = |ns: &str| {
            if is_cluster_scoped(&r.api_version(), &r.kind()) {
                "_non_namespaceable_".to_string()
            } else if ns.is_empty() {
                "default".to_string()
            } else {
                ns.to_string()
            }
        };
        ok(&self.group, &id.group)
            && ok(&self.version, &id.version)
            && ok(&self.kind, &id.kind)
            && (ok(&self.name, &id.name) || ok(&self.name, &original.name))
            && (ok(&self.namespace, &effective_ns(&id.namespace))
                || ok(&self.namespace, &effective_ns(&original.namespace)))
            && selector_matches(&self.labels, r.node.path(&["metadata", "labels"]))
            && selector_matches(&self.annotations, r.node.path(&["metadata", "annotations"]))
    }
}

/// A Go regular expression (what kustomize compiles target names with) in
/// the syntax of the `regex` crate: in Go a `{` that does not start a
/// repetition (`{n}`, `{n,}`, `{n,m}`) is a literal, and so is a `}` that
/// closes none; the `regex` crate rejects both, so they are escaped.
pub fn go_regex(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len());
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.get(i + 1) {
                    out.push(*next);
                }
                i += 2;
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '{' if !in_class => {
                let rest: String = chars[i + 1..].iter().collect();
                let repetition = rest.find('}').is_some_and(|end| {
                    let inner = &rest[..end];
                    let (lo, hi) = inner.split_once(',').unwrap_or((inner, "0"));
                    !lo.is_empty()
                        && lo.chars().all(|c| c.is_ascii_digit())
                        && hi.chars().all(|c| c.is_ascii_digit())
                });
                if repetition {
                    let end = i + 1 + rest.find('}').unwrap_or(0);
                    out.extend(&chars[i..=end]);
                    i = end + 1;
                    continue;
                }
                out.push_str("\\{");
                i += 1;
                continue;
            }
            '}' if !in_class => {
                out.push_str("\\}");
                i += 1;
                continue;
            }
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

/// One requirement of a Kubernetes label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    Exists(String),
    NotExists(String),
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// Kubernetes label selector syntax (labels.Parse): `a=b`, `a==b`, `a!=b`,
/// `a`, `!a`, `a in (x,y)`, `a notin (x,y)`, comma-separated.
fn parse_label_selector(text: Option<&str>) -> Result<Vec<Requirement>, Error> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    // Split on commas outside parentheses.
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    let mut out = Vec::new();
    for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        let set = |rest: &str| -> Result<Vec<String>, Error> {
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| {
                    Error::from(format!("selector `{part}`: expected a (value, …) list"))
                })?;
            Ok(inner
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect())
        };
        let words: Vec<&str> = part.split_whitespace().collect();
        let requirement = if let Some(key) = part.strip_prefix('!') {
            Requirement::NotExists(key.trim().to_string())
        } else if words.len() >= 2 && words[1] == "in" {
            Requirement::In(
                words[0].to_string(),
                set(part.split_once(" in ").map_or("", |x| x.1))?,
            )
        } else if words.len() >= 2 && words[1] == "notin" {
            Requirement::NotIn(
                words[0].to_string(),
                set(part.split_once(" notin ").map_or("", |x| x.1))?,
            )
        } else if let Some((k, v)) = part.split_once("!=") {
            Requirement::NotEquals(k.trim().to_string(), v.trim().to_string())
        } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
            Requirement::Equals(k.trim().to_string(), v.trim().to_string())
        } else {
            Requirement::Exists(part.to_string())
        };
        out.push(requirement);
    }
    Ok(out)
}

fn selector_matches(want: &[Requirement], have: Option<&Node>) -> bool {
    let value = |k: &str| have.and_then(|m| m.get(k)).and_then(Node::as_scalar_string);
    want.iter().all(|r| match r {
        Requirement::Exists(k) => value(k).is_some(),
        Requirement::NotExists(k) => value(k).is_none(),
        Requirement::Equals(k, v) => value(k).as_deref() == Some(v.as_str()),
        Requirement::NotEquals(k, v) => value(k).as_deref() != Some(v.as_str()),
        Requirement::In(k, vs) => value(k).is_some_and(|x| vs.contains(&x)),
        Requirement::NotIn(k, vs) => value(k).is_none_or(|x| !vs.contains(&x)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_documents;

    #[test]
    fn go_regexps_become_rust_regexps() {
        assert_eq!(go_regex("${cluster_name}-app"), "$\\{cluster_name\\}-app");
        assert_eq!(go_regex("a{2}b{1,}c{1,3}"), "a{2}b{1,}c{1,3}");
        assert_eq!(go_regex("[{}]x"), "[{}]x");
        assert_eq!(go_regex("\\{x"), "\\{x");
        assert!(regex::Regex::new(&go_regex("${cluster_name}-app")).is_ok());
        let re = regex::Regex::new(&format!("^(?:{})$", go_regex("app-{x}"))).unwrap();
        assert!(re.is_match("app-{x}"));
    }

    #[test]
    fn label_selectors_follow_kubernetes_syntax() {
        let labels = parse_documents("a: x\nb: y\n").unwrap().remove(0);
        let matches =
            |sel: &str| selector_matches(&parse_label_selector(Some(sel)).unwrap(), Some(&labels));
        assert!(matches("a=x"));
        assert!(matches("a==x,b"));
        assert!(matches("a!=z"));
        assert!(matches("c!=z"));
        assert!(matches("!c"));
        assert!(!matches("!a"));
        assert!(matches("a in (x, q)"));
        assert!(!matches("a in (q)"));
        assert!(matches("a notin (q),c notin (true)"));
        assert!(!matches("b notin (y)"));
        assert!(parse_label_selector(Some("a in x")).is_err());
    }
}
