//! Helmfile releases installed before Flux: `helmfile.yaml`, `helmfile.d/`,
//! any `helmfile*.yaml[.gotmpl]`, YAML files in a `helmfile/` directory,
//! the files a script syncs (`helmfile -f FILE sync|apply`) and the nested
//! `helmfiles:` they name. Each is rendered ([`template`]) and read as YAML
//! ([`state`]); one that still does not parse is read line by line
//! ([`lines`]), with a note saying so.
//!
//! Each release installs its chart (the catalog's groups for it) unless
//! its values switch the chart's CRDs off ([`super::values`]) or
//! `--skip-crds` is among its args, and, as helmfile creates it by default
//! (`createNamespace`), its namespace. A release without a literal chart
//! takes the chart of the Flux HelmRelease of the same namespace and name,
//! else its own name. A file whose CRDs only are applied (`--include-crds`
//! in its `helmDefaults.args`, or a script that pipes `helmfile template`
//! through a `CustomResourceDefinition` filter) installs the charts' CRDs,
//! not their namespaces. Hook commands are read as script lines (`kubectl
//! apply -f PATH`, `sh -c "…"`). A `flux-instance` release's
//! `instance.distribution.version` is the Flux version the cluster runs.

pub mod lines;
pub mod state;
pub mod template;

use super::{Item, Provides};
use crate::model::{Model, Span};
use crate::repo::Kind;

/// Whether a path is a helmfile.
pub(crate) fn is_helmfile(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let yaml = [".yaml", ".yml", ".yaml.gotmpl", ".yml.gotmpl", ".gotmpl"]
        .iter()
        .any(|e| name.ends_with(e));
    let parent = rel.rsplit('/').nth(1).unwrap_or_default();
    yaml && (name.starts_with("helmfile") || parent == "helmfile.d" || parent == "helmfile")
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
                    // The OCIRepository/HelmChart its chartRef names.
                    let source = |kind: &str, source: &str| {
                        cluster
                            .tiers
                            .values()
                            .flat_map(|t| t.objects())
                            .find(|s| s.id.kind == kind && s.id.name == source)
                    };
                    return release_chart(o, source);
                }
            }
        }
    }
    None
}

/// A HelmRelease's chart, by short name: `spec.chart.spec.chart`, or the
/// URL or chart of the source its `spec.chartRef` names (`source(kind,
/// name)` finds it).
fn release_chart<'o>(
    release: &crate::model::Object,
    source: impl Fn(&str, &str) -> Option<&'o crate::model::Object>,
) -> Option<String> {
    if let Some(chart) = release.body.str_at(&["spec", "chart", "spec", "chart"]) {
        return Some(crate::provenance::chart::short_name(&chart));
    }
    let kind = release.body.str_at(&["spec", "chartRef", "kind"])?;
    let name = release.body.str_at(&["spec", "chartRef", "name"])?;
    let s = source(&kind, &name)?;
    let chart = s
        .body
        .str_at(&["spec", "url"])
        .or_else(|| s.body.str_at(&["spec", "chart"]))?;
    Some(crate::provenance::chart::short_name(&chart))
}

/// The helmfiles that run before Flux. When the entrypoints (scripts,
/// Taskfiles, justfiles, Makefiles, documented steps) name every helmfile
/// they run (`helmfile -f FILE|DIR`), only those run for the clusters they
/// are for (a helmfile elsewhere is an old copy, an example, a variant);
/// a cluster no named helmfile is for, or a repository whose entrypoints
/// run a helmfile this reader cannot locate, keeps the conventional
/// locations ([`is_helmfile`]), except under an archive folder. Each
/// helmfile left out gets a note saying which rule left it out.
fn live(cx: &super::ReadCx) -> (Vec<String>, Vec<(String, String)>) {
    let (index, scripts) = (cx.index, cx.scripts);
    let conventional: Vec<String> = index
        .below("")
        .filter(|(rel, kind)| **kind == Kind::File && is_helmfile(rel))
        .map(|(rel, _)| rel.to_string())
        .collect();
    let named: Vec<&String> = scripts
        .synced
        .iter()
        .chain(&scripts.crds_only)
        .chain(&scripts.helmfile_named)
        .collect();
    let in_named = |rel: &str| {
        named
            .iter()
            .any(|n| n.as_str() == rel || rel.starts_with(&format!("{n}/")))
    };
    let restricted = !named.is_empty() && !scripts.helmfile_unresolved;
    let applies = |file: &str, cluster: &str| cx.clusters.applies(file, cluster);
    // Left out when every cluster it is for has a named helmfile of its own.
    let superseded = |rel: &str| {
        cx.clusters
            .told_apart()
            .filter(|c| applies(rel, c))
            .all(|c| named.iter().any(|n| applies(n, c)))
    };
    let mut named_shown: Vec<&str> = named.iter().map(|n| n.as_str()).collect();
    named_shown.sort();
    named_shown.dedup();
    let mut out = Vec::new();
    let mut left_out = Vec::new();
    for rel in conventional {
        if restricted && !in_named(&rel) && superseded(&rel) {
            left_out.push((
                rel,
                format!(
                    "not read as bootstrap: the entrypoints name the helmfiles they run ({}), and not this one",
                    named_shown.join(", ")
                ),
            ));
            continue;
        }
        if super::is_archived(&rel) && !in_named(&rel) {
            left_out.push((rel, super::ARCHIVED_NOTE.into()));
            continue;
        }
        out.push(rel);
    }
    (out, left_out)
}

/// Webhooks that inject substitution variables installed by the
/// cluster's own Flux HelmReleases ([`crate::postbuild::injected`]): a
/// Kustomization admitted before the webhook runs is mutated on its next
/// apply (kustomize-controller re-applies its children every interval, an
/// UPDATE the webhook admits), so the variables are there once Flux's
/// retries converge.
pub(crate) fn flux_injections(
    model: &Model,
    cluster: &crate::model::Cluster,
) -> Vec<crate::postbuild::injected::Injection> {
    let mut out = Vec::new();
    // The chartRef sources, once per cluster (not a scan per release).
    let sources: std::collections::BTreeMap<(&str, &str), &crate::model::Object> = cluster
        .tiers
        .values()
        .flat_map(|t| t.objects())
        .filter(|o| o.id.kind == "OCIRepository" || o.id.kind == "HelmChart")
        .map(|o| ((o.id.kind.as_str(), o.id.name.as_str()), o))
        .collect();
    for o in cluster.tiers.values().flat_map(|t| t.objects()) {
        if o.id.kind != "HelmRelease" || o.id.group != "helm.toolkit.fluxcd.io" {
            continue;
        }
        let namespace = o.id.namespace.clone().unwrap_or_else(|| "default".into());
        let chart = release_chart(o, |kind, name| sources.get(&(kind, name)).copied());
        if chart.as_deref() != Some(crate::postbuild::injected::WEBHOOK_CHART) {
            continue;
        }
        let Some(chart) = chart else { continue };
        let at = o.source.clone().unwrap_or_else(|| Span::new("", 0));
        let values = flux_values(model, &namespace, &o.id.name);
        if let Some(mut injection) =
            crate::postbuild::injected::from_chart(&chart, &namespace, &values, at, &o.id.name)
        {
            injection.via = format!("{} (HelmRelease {namespace}/{})", injection.via, o.id.name);
            out.push(injection);
        }
    }
    out
}

/// The values of the Flux HelmRelease `namespace/name`: `spec.values`
/// over its `valuesFrom` ConfigMaps (the `values.yaml` key, or its
/// `valuesKey`), as the repository renders them. Later mappings win, as in
/// helm-controller's `chartutil.MergeValues` order (valuesFrom, then
/// spec.values).
pub(super) fn flux_values(model: &Model, namespace: &str, name: &str) -> Vec<crate::yaml::Node> {
    let mut out = Vec::new();
    for cluster in &model.clusters {
        let objects = || cluster.tiers.values().flat_map(|t| t.objects().iter());
        let Some(release) = objects().find(|o| {
            o.id.kind == "HelmRelease"
                && o.id.group == "helm.toolkit.fluxcd.io"
                && o.id.name == name
                && o.id.namespace.as_deref() == Some(namespace)
        }) else {
            continue;
        };
        for from in release
            .body
            .path(&["spec", "valuesFrom"])
            .map(crate::yaml::Node::as_seq)
            .unwrap_or_default()
        {
            if from.str_at(&["kind"]).as_deref() != Some("ConfigMap") {
                continue;
            }
            let Some(source) = from.str_at(&["name"]) else {
                continue;
            };
            let key = from
                .str_at(&["valuesKey"])
                .unwrap_or_else(|| "values.yaml".into());
            let text = objects()
                .find(|o| {
                    o.id.kind == "ConfigMap"
                        && o.id.group.is_empty()
                        && o.id.name == source
                        && o.id.namespace.as_deref() == Some(namespace)
                })
                .and_then(|o| o.body.path(&["data", &key]))
                .and_then(crate::yaml::Node::as_scalar_string);
            if let Some(docs) = text.and_then(|t| crate::yaml::parse_text(&t).ok()) {
                out.extend(docs.into_iter().filter(crate::yaml::Node::is_map));
            }
        }
        if let Some(values) = release.body.path(&["spec", "values"]) {
            out.push(values.clone());
        }
        break;
    }
    out
}

/// Every release of every helmfile of the repository (the helmfiles a
/// script syncs, and the nested ones they name, included), and what their
/// hooks apply.
pub fn read(cx: &super::ReadCx) -> Vec<Item> {
    let (index, scripts) = (cx.index, cx.scripts);
    let mut out = Vec::new();
    let (mut files, left_out) = live(cx);
    let mut layered: Vec<String> = Vec::new();
    for synced in &scripts.synced {
        for f in synced_files(index, synced) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    let mut k = 0;
    while k < files.len() {
        let rel = files[k].clone();
        k += 1;
        let Ok(text) = index.read_text(&rel) else {
            continue;
        };
        let crds_only = (text.contains("--include-crds") && !scripts.synced.contains(&rel))
            || scripts.crds_only.contains(&rel);
        for r in releases(cx, &rel, &text, &mut files, &mut layered) {
            release_items(cx, &r, crds_only, &mut out);
        }
    }
    // A helmfile left out that a live one layers on or nests is read
    // through it: no note.
    for (rel, why) in left_out {
        if !layered.contains(&rel) && !files.contains(&rel) {
            cx.note(Span::new(&rel, 0), why);
        }
    }
    out
}

/// The files a script syncs with `helmfile -f PATH`: the file, or the
/// directory's YAML files (`helmfile -f DIR` reads them).
fn synced_files(index: &crate::repo::RepoIndex, synced: &str) -> Vec<String> {
    match index.kind(synced) {
        Some(Kind::File) => vec![synced.to_string()],
        Some(Kind::Dir) => index
            .below(synced)
            .filter(|(rel, kind)| {
                **kind == Kind::File
                    && rel[synced.len()..]
                        .trim_start_matches('/')
                        .matches('/')
                        .count()
                        == 0
                    && [".yaml", ".yml", ".gotmpl"]
                        .iter()
                        .any(|e| rel.ends_with(e))
            })
            .map(|(rel, _)| rel.to_string())
            .collect(),
        _ => Vec::new(),
    }
}

/// The releases of one helmfile, read as YAML once rendered (its bases
/// added to `layered`, its nested helmfiles to `files`), else line by
/// line with a note saying so.
fn releases(
    cx: &super::ReadCx,
    rel: &str,
    text: &str,
    files: &mut Vec<String>,
    layered: &mut Vec<String>,
) -> Vec<state::Release> {
    let index = cx.index;
    match state::read(index, rel, text) {
        Ok(state) => {
            layered.extend(state.bases);
            for nested in state.nested {
                if !files.contains(&nested) && index.kind(&nested) == Some(&Kind::File) {
                    files.push(nested);
                }
            }
            state.releases
        }
        Err(e) => {
            cx.note(
                Span::new(rel, e.line),
                format!(
                    "not read as YAML once its templates are rendered ({}); its releases are taken line by line, their values not read",
                    e.why
                ),
            );
            lines::releases(rel, text)
        }
    }
}

/// What one release installs (its chart's CRDs, its namespace, what its
/// hooks apply; only the CRDs when `crds_only`), the Flux version it pins
/// and the injection its chart makes.
fn release_items(cx: &super::ReadCx, r: &state::Release, crds_only: bool, out: &mut Vec<Item>) {
    let (index, model) = (cx.index, cx.model);
    let at = Span::new(&r.file, r.line);
    let chart = r
        .chart
        .clone()
        .or_else(|| flux_chart(model, r.namespace.as_deref(), &r.name))
        .unwrap_or_else(|| r.name.clone());
    if let Some(version) = &r.flux {
        cx.flux(at.clone(), version, &format!("helmfile release {}", r.name));
    }
    if !crds_only {
        let namespace = r.namespace.as_deref().unwrap_or("default");
        // Values the helmfile cannot show (a templated path) are
        // the Flux HelmRelease's that later adopts the release.
        let values = if r.values.is_empty() {
            flux_values(model, namespace, &r.name)
        } else {
            r.values.clone()
        };
        if let Some(injection) =
            crate::postbuild::injected::from_chart(&chart, namespace, &values, at.clone(), &r.name)
        {
            cx.injection(injection);
        }
    }
    if r.crds {
        let via = if crds_only {
            format!("helmfile release {} (its CRDs)", r.name)
        } else {
            format!("helmfile release {}", r.name)
        };
        out.push(Item {
            at: at.clone(),
            via,
            provides: Provides::Chart {
                chart,
                namespace: r.namespace.clone().filter(|_| r.create_namespace),
                crds_only,
            },
        });
    }
    if !crds_only
        && r.create_namespace
        && let Some(ns) = &r.namespace
    {
        out.push(Item {
            at: at.clone(),
            via: format!("helmfile release {} (its namespace)", r.name),
            provides: Provides::Namespace(ns.clone()),
        });
    }
    if crds_only {
        return;
    }
    for (line, hook) in &r.hooks {
        for command in super::scripts::command_line(index, &r.file, *line, hook) {
            for item in command.items(index, cx.catalog) {
                out.push(Item {
                    via: format!("helmfile hook: {}", item.via),
                    ..item
                });
            }
        }
    }
}

/// The bootstrap reader of helmfiles (releases, their charts and CRD switches, hooks).
#[derive(Debug)]
pub(crate) struct Helmfiles;

impl super::Reader for Helmfiles {
    fn read(&self, cx: &super::ReadCx) -> Vec<super::Item> {
        read(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helmfile_names() {
        assert!(is_helmfile("bootstrap/helmfile.yaml"));
        assert!(is_helmfile("bootstrap/helmfile.d/00-crds.yaml"));
        assert!(is_helmfile("bootstrap/helmfile/apps.yaml"));
        assert!(is_helmfile("helmfile.yaml.gotmpl"));
        assert!(!is_helmfile("kubernetes/apps/x/helmrelease.yaml"));
    }
}
