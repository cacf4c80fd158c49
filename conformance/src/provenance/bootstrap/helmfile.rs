//! Helmfile releases installed before Flux: `helmfile.yaml`, `helmfile.d/`,
//! any `helmfile*.yaml[.gotmpl]`, and YAML files in a `helmfile/` directory
//! that hold `releases:`. Each release installs its chart (the catalog's
//! groups for it) and, as helmfile creates it by default, its namespace. A
//! release without a literal chart (a template that reads it elsewhere)
//! takes the chart of the Flux HelmRelease of the same namespace and name,
//! else its own name. A file whose CRDs only are applied (`--include-crds`
//! in its `helmDefaults.args`, or a script that pipes `helmfile template`
//! through a `CustomResourceDefinition` filter) installs the charts' CRDs,
//! not their namespaces. Hooks that `kubectl apply --filename=PATH` apply
//! that file too.

use super::scripts::Scripts;
use super::{Item, Provides, manifests};
use crate::model::{Model, Span};
use crate::repo::{Kind, RepoIndex};

/// Whether a path is a helmfile.
pub fn is_helmfile(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let yaml = [".yaml", ".yml", ".yaml.gotmpl", ".yml.gotmpl", ".gotmpl"]
        .iter()
        .any(|e| name.ends_with(e));
    let parent = rel.rsplit('/').nth(1).unwrap_or_default();
    yaml && (name.starts_with("helmfile") || parent == "helmfile.d" || parent == "helmfile")
}

/// One release of a helmfile.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Release {
    line: u32,
    name: String,
    namespace: Option<String>,
    chart: Option<String>,
}

/// The releases of a helmfile's text (line by line: helmfiles are Go
/// templates, rarely valid YAML).
fn releases(text: &str) -> Vec<Release> {
    let mut out: Vec<Release> = Vec::new();
    let mut inside = false;
    let mut item_indent: Option<usize> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 0 {
            inside = line.starts_with("releases:");
            item_indent = None;
            continue;
        }
        if !inside {
            continue;
        }
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("- ")
            && item_indent.is_none_or(|i| i == indent)
        {
            item_indent = Some(indent);
            out.push(Release {
                line: n as u32 + 1,
                name: String::new(),
                namespace: None,
                chart: None,
            });
            field(rest, out.last_mut().expect("just pushed"));
            continue;
        }
        if let (Some(i), Some(r)) = (item_indent, out.last_mut())
            && indent == i + 2
        {
            field(t, r);
        }
    }
    out.retain(|r| !r.name.is_empty());
    out
}

fn field(text: &str, r: &mut Release) {
    let Some((key, value)) = text.split_once(':') else {
        return;
    };
    let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
    let literal = !value.is_empty() && !value.contains("{{");
    match key.trim() {
        "name" if literal => r.name = value.to_string(),
        "namespace" if literal => r.namespace = Some(value.to_string()),
        "chart" if literal => r.chart = Some(crate::provenance::chart::short_name(value)),
        _ => {}
    }
}

/// The chart of the Flux HelmRelease `namespace/name`, if the model has it.
pub(super) fn flux_chart(model: &Model, namespace: Option<&str>, name: &str) -> Option<String> {
    for cluster in &model.clusters {
        for tier in cluster.tiers.values() {
            for o in tier.objects() {
                if o.id.kind == "HelmRelease"
                    && o.id.group == "helm.toolkit.fluxcd.io"
                    && o.id.name == name
                    && namespace.is_none_or(|ns| o.id.namespace.as_deref() == Some(ns))
                {
                    if let Some(chart) = o.body.str_at(&["spec", "chart", "spec", "chart"]) {
                        return Some(crate::provenance::chart::short_name(&chart));
                    }
                    let kind = o.body.str_at(&["spec", "chartRef", "kind"])?;
                    let source = o.body.str_at(&["spec", "chartRef", "name"])?;
                    // The OCIRepository/HelmChart it names.
                    for t in cluster.tiers.values() {
                        for s in t.objects() {
                            if s.id.kind == kind && s.id.name == source {
                                let chart = s
                                    .body
                                    .str_at(&["spec", "url"])
                                    .or_else(|| s.body.str_at(&["spec", "chart"]))?;
                                return Some(crate::provenance::chart::short_name(&chart));
                            }
                        }
                    }
                    return None;
                }
            }
        }
    }
    None
}

/// Every release of every helmfile of the repository, and what their hooks
/// apply.
pub fn read(index: &RepoIndex, model: &Model, scripts: &Scripts) -> Vec<Item> {
    let mut out = Vec::new();
    let files: Vec<String> = index
        .below("")
        .filter(|(rel, kind)| **kind == Kind::File && is_helmfile(rel))
        .map(|(rel, _)| rel.to_string())
        .collect();
    for rel in files {
        let Ok(text) = index.read_text(&rel) else {
            continue;
        };
        let crds_only = (text.contains("--include-crds") && !scripts.synced.contains(&rel))
            || scripts.crds_only.contains(&rel);
        for r in releases(&text) {
            let chart = r
                .chart
                .clone()
                .or_else(|| flux_chart(model, r.namespace.as_deref(), &r.name))
                .unwrap_or_else(|| r.name.clone());
            let via = if crds_only {
                format!("helmfile release {} (its CRDs)", r.name)
            } else {
                format!("helmfile release {}", r.name)
            };
            out.push(Item {
                at: Span::new(&rel, r.line),
                via,
                provides: Provides::Chart {
                    chart,
                    namespace: r.namespace.clone(),
                    crds_only,
                },
            });
            if !crds_only && let Some(ns) = &r.namespace {
                out.push(Item {
                    at: Span::new(&rel, r.line),
                    via: format!("helmfile release {} (its namespace)", r.name),
                    provides: Provides::Namespace(ns.clone()),
                });
            }
        }
        // Hooks: `--filename=PATH` / `-f PATH` of kubectl apply.
        let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
        for (n, line) in text.lines().enumerate() {
            let t = line.trim().trim_start_matches("- ").trim();
            let path = t
                .strip_prefix("--filename=")
                .or_else(|| t.strip_prefix("-f="));
            let Some(path) = path else { continue };
            if path.contains("{{") {
                continue;
            }
            let (normal, escapes) = crate::repo::normalize(dir, path.trim_matches('"'));
            if escapes {
                continue;
            }
            for provides in manifests::read(index, &normal) {
                out.push(Item {
                    at: Span::new(&rel, n as u32 + 1),
                    via: format!("helmfile hook: kubectl apply -f {normal}"),
                    provides,
                });
            }
        }
    }
    out
}

/// The bootstrap reader of helmfiles (releases, their charts and CRD switches, hooks).
#[derive(Debug)]
pub struct Helmfiles;

impl super::Reader for Helmfiles {
    fn name(&self) -> &'static str {
        "helmfile"
    }
    fn read(&self, cx: &super::ReadCx) -> Vec<super::Item> {
        read(cx.index, cx.model, cx.scripts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_read_line_by_line() {
        let text = "---\nhelmDefaults:\n  wait: true\nreleases:\n  - name: cilium\n    namespace: kube-system\n    chart: oci://ghcr.io/home-operations/charts-mirror/cilium\n    hooks:\n      - events: [postsync]\n        command: kubectl\n  - name: coredns\n    namespace: kube-system\n    chart: '{{ .Values.x }}'\n    needs:\n      - kube-system/cilium\n";
        let r = releases(text);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].chart.as_deref(), Some("cilium"));
        assert_eq!(r[0].line, 5);
        assert_eq!(r[1].name, "coredns");
        assert_eq!(r[1].chart, None);
    }

    #[test]
    fn helmfile_names() {
        assert!(is_helmfile("bootstrap/helmfile.yaml"));
        assert!(is_helmfile("bootstrap/helmfile.d/00-crds.yaml"));
        assert!(is_helmfile("bootstrap/helmfile/apps.yaml"));
        assert!(is_helmfile("helmfile.yaml.gotmpl"));
        assert!(!is_helmfile("kubernetes/apps/x/helmrelease.yaml"));
    }
}
