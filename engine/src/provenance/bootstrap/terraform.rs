//! Terraform (OpenTofu) in the repository that creates Kubernetes objects
//! before Flux: `kubernetes_namespace`, `kubernetes_config_map`,
//! `kubernetes_secret` (and their `_v1` forms) with literal names,
//! `helm_release` (its chart, and its namespace with `create_namespace`),
//! and `kubectl_manifest` / `kubernetes_manifest` documents written inline.
//! Read block by block, literals only: a name computed from variables is
//! left out.

use super::{Item, Provides, untemplate};
use crate::model::Span;
use crate::repo::{Kind, RepoIndex};

/// What the Terraform (`*.tf`, `*.tofu`) files of the repository create in the cluster.
pub fn read(index: &RepoIndex) -> Vec<Item> {
    let mut out = Vec::new();
    let files: Vec<String> = index
        .below("")
        .filter(|(p, k)| **k == Kind::File && (p.ends_with(".tf") || p.ends_with(".tofu")))
        .map(|(p, _)| p.to_string())
        .collect();
    for rel in files {
        let Ok(text) = index.read_text(&rel) else {
            continue;
        };
        for block in blocks(&text) {
            let at = Span::new(&rel, block.line);
            let via = format!("terraform {} {}", block.kind, block.name);
            let item = |provides| Item {
                at: at.clone(),
                via: via.clone(),
                provides,
            };
            let literal = |key: &str| attribute(&block.body, key);
            match block.kind.trim_end_matches("_v1") {
                "kubernetes_namespace" => {
                    if let Some(name) = literal("name") {
                        out.push(item(Provides::Namespace(name)));
                    }
                }
                "kubernetes_config_map" | "kubernetes_secret" => {
                    let kind = if block.kind.starts_with("kubernetes_config_map") {
                        "ConfigMap"
                    } else {
                        "Secret"
                    };
                    if let Some(name) = literal("name") {
                        let ns = literal("namespace").unwrap_or_else(|| "default".into());
                        out.push(item(Provides::Object(format!("{kind}/{ns}/{name}"))));
                    }
                }
                "helm_release" => {
                    if let Some(chart) = literal("chart") {
                        let namespace = literal("namespace");
                        if attribute(&block.body, "create_namespace").as_deref() == Some("true")
                            && let Some(ns) = &namespace
                        {
                            out.push(item(Provides::Namespace(ns.clone())));
                        }
                        out.push(item(Provides::Chart {
                            chart: crate::provenance::chart::short_name(&chart),
                            namespace,
                            crds_only: false,
                        }));
                    }
                }
                "kubectl_manifest" | "kubernetes_manifest" => {
                    // A heredoc of YAML (kubectl_manifest's yaml_body).
                    if let Some(yaml) = heredoc(&block.body) {
                        let docs = crate::yaml::parse_documents(&untemplate(
                            &yaml.replace("${", "{{").replace('}', "}}"),
                        ))
                        .unwrap_or_default();
                        for provides in super::manifests::objects_of(&docs) {
                            out.push(item(provides));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// One `resource "kind" "name" { … }` block.
pub(super) struct Block {
    pub(super) kind: String,
    pub(super) name: String,
    pub(super) line: u32,
    pub(super) body: String,
}

pub(super) fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if let Some(rest) = t.strip_prefix("resource \"") {
            let mut parts = rest.split('"');
            let kind = parts.next().unwrap_or_default().to_string();
            let name = parts.nth(1).unwrap_or_default().to_string();
            let mut depth: i32 = 0;
            let mut body = String::new();
            let start = i;
            loop {
                let line = lines[i];
                depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
                body.push_str(line);
                body.push('\n');
                i += 1;
                if depth <= 0 || i >= lines.len() {
                    break;
                }
            }
            out.push(Block {
                kind,
                name,
                line: start as u32 + 1,
                body,
            });
            continue;
        }
        i += 1;
    }
    out
}

/// The first `key = "literal"` of a block (`None` when it is computed).
pub(super) fn attribute(body: &str, key: &str) -> Option<String> {
    for line in body.lines() {
        let t = line.trim();
        let Some(rest) = t.strip_prefix(key) else {
            continue;
        };
        let Some(value) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim();
        if let Some(v) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            if v.contains("${") {
                return None;
            }
            return Some(v.to_string());
        }
        if value == "true" || value == "false" {
            return Some(value.to_string());
        }
        return None;
    }
    None
}

/// The text of the first heredoc (`<<-EOT … EOT`, `<<YAML … YAML`).
fn heredoc(body: &str) -> Option<String> {
    let start = body.find("<<")?;
    let rest = &body[start + 2..];
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    let marker: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if marker.is_empty() {
        return None;
    }
    let after = rest[marker.len()..].split_once('\n')?.1;
    let mut out = String::new();
    for line in after.lines() {
        if line.trim() == marker {
            return Some(out);
        }
        out.push_str(line);
        out.push('\n');
    }
    None
}

/// The bootstrap reader of Terraform helm_release and manifest resources.
#[derive(Debug)]
pub struct Terraform;

impl super::Reader for Terraform {
    fn read(&self, cx: &super::ReadCx) -> Vec<super::Item> {
        read(cx.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_resources_and_helm_releases() {
        let index = RepoIndex::from_memory(&[(
            "terraform/k8s.tf",
            "resource \"kubernetes_config_map_v1\" \"ips\" {\n  metadata {\n    name      = \"cluster-ips\"\n    namespace = \"flux-system\"\n  }\n  data = {\n    A = var.a\n  }\n}\n\nresource \"helm_release\" \"karpenter\" {\n  name             = \"karpenter\"\n  chart            = \"oci://public.ecr.aws/karpenter/karpenter\"\n  namespace        = \"karpenter\"\n  create_namespace = true\n}\n\nresource \"kubernetes_namespace\" \"apps\" {\n  metadata {\n    name = var.ns\n  }\n}\n",
        )]);
        let items = read(&index);
        let provides: Vec<&Provides> = items.iter().map(|i| &i.provides).collect();
        assert!(
            provides.contains(&&Provides::Object(
                "ConfigMap/flux-system/cluster-ips".into()
            )),
            "{provides:?}"
        );
        assert!(provides.contains(&&Provides::Namespace("karpenter".into())));
        assert!(
            provides
                .iter()
                .any(|p| matches!(p, Provides::Chart { chart, .. } if chart == "karpenter"))
        );
        assert_eq!(provides.len(), 3, "{provides:?}");
        assert_eq!(items[0].at.line, 1);
    }
}
