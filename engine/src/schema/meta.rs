//! What the API server validates in every object's metadata, whatever its
//! schema says (apimachinery `ValidateObjectMeta`, the names each kind
//! requires), and the Flux Kustomization fields the model relies on when
//! the repository carries no Flux CRDs.

use super::Violation;
use crate::model::Object;
use crate::yaml::{Node, Value};

/// A DNS-1123 label: at most 63 lowercase alphanumerics or '-', starting
/// and ending alphanumeric.
fn dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A DNS-1123 subdomain: at most 253 characters, dot-separated labels.
fn dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && !s.is_empty()
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// A label value: empty, or at most 63 alphanumerics, '-', '_', '.',
/// starting and ending alphanumeric.
fn label_value(s: &str) -> bool {
    s.is_empty()
        || (s.len() <= 63
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && s.chars().last().is_some_and(|c| c.is_ascii_alphanumeric()))
}

/// Which name rule a kind's objects follow.
fn name_rule(group: &str, kind: &str) -> (&'static str, fn(&str) -> bool) {
    match (group, kind) {
        ("", "Namespace") => (
            "a DNS-1123 label (lowercase alphanumerics and '-', at most 63)",
            dns_label,
        ),
        ("", "Service") => (
            "a DNS-1035 label (a lowercase letter, then lowercase alphanumerics and '-', at most 63)",
            |s| dns_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase()),
        ),
        // RBAC names are path segments (`system:controller:x`).
        ("rbac.authorization.k8s.io", _) => ("a path segment (no '/' or '%')", path_segment),
        // Custom resources: the API server only requires a path segment
        // unless the CRD says more.
        (g, _) if g.contains('.') && !g.ends_with(".k8s.io") => {
            ("a path segment (no '/' or '%')", path_segment)
        }
        _ => (
            "a DNS-1123 subdomain (lowercase alphanumerics, '-' and '.', at most 253)",
            dns_subdomain,
        ),
    }
}

fn path_segment(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains('/') && !s.contains('%')
}

/// Metadata problems of an object. `cluster_scoped`: the kind is known to
/// be cluster-scoped, so the API server clears its `metadata.namespace`
/// (`rest.BeforeCreate` in k8s.io/apiserver sets it to "" for a resource that is not namespace-scoped) and
/// whatever it holds is never validated.
pub fn check(o: &Object, cluster_scoped: bool) -> Vec<Violation> {
    let mut out = Vec::new();
    let meta = o.body.get("metadata");
    let push = |out: &mut Vec<Violation>, path: &str, node: Option<&Node>, message: String| {
        out.push(Violation {
            path: path.into(),
            line: node.map_or(o.body.line, |n| n.line),
            message,
            unknown_field: false,
            schema_line: 0,
        });
    };
    if let Some(name) = meta.and_then(|m| m.get("name"))
        && let Some(text) = name.as_str()
        && !text.contains("${")
    {
        let (rule, ok) = name_rule(&o.id.group, &o.id.kind);
        if !ok(text) {
            push(
                &mut out,
                "metadata.name",
                Some(name),
                format!("\"{text}\" is not {rule}"),
            );
        }
    }
    if let Some(ns) = meta.and_then(|m| m.get("namespace"))
        && !cluster_scoped
        && let Some(text) = ns.as_str()
        && !text.contains("${")
        && !dns_label(text)
    {
        push(
            &mut out,
            "metadata.namespace",
            Some(ns),
            format!("\"{text}\" is not a DNS-1123 label"),
        );
    }
    for (k, v) in meta
        .and_then(|m| m.get("labels"))
        .map(Node::as_map)
        .unwrap_or_default()
    {
        if let Some(text) = v.as_scalar_string()
            && !text.contains("${")
            && !label_value(&text)
        {
            push(
                &mut out,
                &format!("metadata.labels[\"{k}\"]"),
                Some(v),
                format!(
                    "\"{text}\" is not a valid label value (at most 63 alphanumerics, '-', '_', '.', starting and ending alphanumeric)"
                ),
            );
        }
    }
    out
}

/// The fields of a Flux Kustomization (`kustomize.toolkit.fluxcd.io/v1`)
/// the API server checks from its CRD (kustomize-controller
/// `api/v1/kustomization_types.go`: `interval`, `prune` and `sourceRef`
/// are required; `dependsOn` is a list of references), for repositories that
/// do not carry the CRD. Only what would otherwise pass silently: a
/// `dependsOn` entry that is not a reference with a name is dropped by
/// nothing but rejected by the API server.
pub fn flux_kustomization(o: &Object) -> Vec<Violation> {
    let mut out = Vec::new();
    if o.id.group != "kustomize.toolkit.fluxcd.io" || o.id.kind != "Kustomization" {
        return out;
    }
    let Some(spec) = o.body.get("spec") else {
        return out;
    };
    for key in ["interval", "prune", "sourceRef"] {
        if spec.get(key).is_none() {
            out.push(Violation {
                path: format!("spec.{key}"),
                line: spec.line,
                message: "required field missing".into(),
                unknown_field: false,
                schema_line: 0,
            });
        }
    }
    if let Some(deps) = spec.get("dependsOn") {
        match &deps.value {
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    let ok = item.is_map() && item.get("name").and_then(Node::as_str).is_some();
                    if !ok {
                        out.push(Violation {
                            path: format!("spec.dependsOn[{i}]"),
                            line: item.line,
                            message: "expected a reference with a name (`- name: apps`), not a bare value".into(),
                            unknown_field: false,
                            schema_line: 0,
                        });
                    }
                }
            }
            Value::Null => {}
            _ => out.push(Violation {
                path: "spec.dependsOn".into(),
                line: deps.line,
                message: "expected a list of references (`- name: apps`)".into(),
                unknown_field: false,
                schema_line: 0,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_label_values() {
        assert!(dns_subdomain("web-1.example"));
        assert!(!dns_subdomain("Web"));
        assert!(!dns_subdomain("web_1"));
        assert!(dns_label("flux-system"));
        assert!(!dns_label("flux.system"));
        assert!(label_value("v1.2.3"));
        assert!(!label_value("has space"));
        assert!(!label_value(&"x".repeat(64)));
        assert!(path_segment("system:controller:x"));
        assert!(!path_segment("a/b"));
    }
}
