//! What a directory or file applied before Flux installs: its
//! CustomResourceDefinitions, Namespaces, ConfigMaps and Secrets, k3s
//! `HelmChart`s, the chart a rendered chart came from (`helm.sh/chart`),
//! and, for a
//! kustomization (`kubectl apply -k`, `kustomize build --enable-helm`), its
//! `helmCharts` (the chart's CRDs and namespace) and the resources it lists,
//! followed through their own kustomizations. Templated files (`.j2`,
//! `.gotmpl`, `.tpl`) are read with their template markup stripped.

use super::{Provides, untemplate};
use crate::repo::{Kind, RepoIndex};
use crate::yaml::Node;

/// Everything `rel` (a directory or a file) installs.
pub fn read(index: &RepoIndex, rel: &str) -> Vec<Provides> {
    read_in(index, rel, "default")
}

/// As [`read`], with objects that name no namespace placed in `namespace`
/// (`kubectl apply --namespace NS -f FILE`).
pub(crate) fn read_in(index: &RepoIndex, rel: &str, namespace: &str) -> Vec<Provides> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    walk(index, rel, namespace, &mut out, &mut seen, 0);
    out.dedup();
    out
}

fn walk(
    index: &RepoIndex,
    rel: &str,
    ns: &str,
    out: &mut Vec<Provides>,
    seen: &mut Vec<String>,
    depth: usize,
) {
    if depth > 32 || seen.iter().any(|s| s == rel) {
        return;
    }
    seen.push(rel.to_string());
    match index.kind(rel) {
        Some(Kind::Dir) => {
            let kustomization = ["kustomization.yaml", "kustomization.yml", "Kustomization"]
                .iter()
                .map(|n| crate::repo::join(rel, n))
                .find(|p| index.kind(p) == Some(&Kind::File));
            match kustomization {
                // Built as kustomize would (namespace and name transformers,
                // components); a kustomization the native renderer cannot
                // build (helmCharts) is read by hand.
                Some(k) => {
                    match crate::render::build_directory(&crate::render::native::Native, index, rel)
                    {
                        Ok(built) => objects(&built, ns, out),
                        Err(_) => kustomization_file(index, rel, &k, ns, out, seen, depth),
                    }
                }
                None => {
                    // `kubectl apply -f DIR`: the manifests directly in it.
                    let files: Vec<String> = index
                        .below(rel)
                        .filter(|(p, k)| {
                            **k == Kind::File
                                && crate::repo::is_manifest_name(p.rsplit('/').next().unwrap_or(p))
                                && p[rel.len()..].trim_start_matches('/').matches('/').count() == 0
                        })
                        .map(|(p, _)| p.to_string())
                        .collect();
                    for f in files {
                        objects(&docs(index, &f), ns, out);
                    }
                }
            }
        }
        Some(Kind::File) => objects(&docs(index, rel), ns, out),
        _ => {}
    }
}

/// The documents of a file: as indexed, or read and untemplated.
fn docs(index: &RepoIndex, rel: &str) -> Vec<Node> {
    if let Some(file) = index.file(rel)
        && let Ok(docs) = file.docs()
    {
        return docs.clone();
    }
    let Ok(text) = index.read_text(rel) else {
        return Vec::new();
    };
    crate::yaml::parse_documents(&untemplate(&text)).unwrap_or_default()
}

fn kustomization_file(
    index: &RepoIndex,
    dir: &str,
    file: &str,
    ns: &str,
    out: &mut Vec<Provides>,
    seen: &mut Vec<String>,
    depth: usize,
) {
    let Some(k) = docs(index, file).into_iter().next() else {
        return;
    };
    let namespace = k.str_at(&["namespace"]);
    for chart in k.get("helmCharts").map(Node::as_seq).unwrap_or_default() {
        if let Some(name) = chart.str_at(&["name"]) {
            out.push(Provides::Chart {
                chart: crate::provenance::chart::short_name(&name),
                namespace: chart.str_at(&["namespace"]).or_else(|| namespace.clone()),
                crds_only: false,
            });
        }
    }
    for key in ["resources", "bases", "components"] {
        for entry in k.get(key).map(Node::as_seq).unwrap_or_default() {
            let Some(path) = entry.as_scalar_string() else {
                continue;
            };
            if path.contains("://") || path.starts_with("github.com/") {
                // A remote CRD file (`…/crds/bases/GROUP_PLURAL.yaml`):
                // its name says which CRD it is.
                if let Some(crd) = super::url_crd(&path) {
                    out.push(crd);
                }
                continue;
            }
            let (normal, escapes) = crate::repo::normalize(dir, &path);
            if !escapes {
                walk(index, &normal, ns, out, seen, depth + 1);
            }
        }
    }
}

/// What these objects install.
pub fn objects_of(docs: &[Node]) -> Vec<Provides> {
    let mut out = Vec::new();
    objects(docs, "default", &mut out);
    out
}

/// The chart a rendered chart's object came from: Helm's standard
/// `helm.sh/chart: NAME-VERSION` label (what `helm template` and
/// `kustomize --enable-helm` output carries), else the release Helm's
/// ownership annotations name (`meta.helm.sh/release-name`, which
/// [`super::Bootstrap::read`] turns into the chart of the Flux HelmRelease
/// of that namespace and name), with the release namespace of
/// `meta.helm.sh/release-namespace`.
fn rendered_chart(doc: &Node) -> Option<Provides> {
    let namespace = doc.str_at(&["metadata", "annotations", "meta.helm.sh/release-namespace"]);
    if let Some(label) = doc.str_at(&["metadata", "labels", "helm.sh/chart"]) {
        // NAME-VERSION: the version is the first `-` part that starts with
        // a digit (or `v` and a digit); chart names may hold dashes.
        let cut = label
            .char_indices()
            .filter(|&(_, c)| c == '-')
            .find(|&(i, _)| {
                let rest = &label[i + 1..];
                let rest = rest.strip_prefix('v').unwrap_or(rest);
                rest.starts_with(|c: char| c.is_ascii_digit())
            })?;
        let chart = &label[..cut.0];
        return (!chart.is_empty()).then(|| Provides::Chart {
            chart: chart.to_string(),
            namespace,
            crds_only: false,
        });
    }
    let release = doc.str_at(&["metadata", "annotations", "meta.helm.sh/release-name"])?;
    Some(Provides::Chart {
        chart: release,
        namespace,
        crds_only: false,
    })
}

/// What the objects of a file install.
fn objects(docs: &[Node], default_ns: &str, out: &mut Vec<Provides>) {
    for doc in docs {
        if let Some(chart) = rendered_chart(doc)
            && !out.contains(&chart)
        {
            out.push(chart);
        }
        let kind = doc.str_at(&["kind"]).unwrap_or_default();
        let api = doc.str_at(&["apiVersion"]).unwrap_or_default();
        match (api.rsplit_once('/').map_or("", |(g, _)| g), kind.as_str()) {
            ("apiextensions.k8s.io", "CustomResourceDefinition") => {
                if let (Some(group), Some(kind)) = (
                    doc.str_at(&["spec", "group"]),
                    doc.str_at(&["spec", "names", "kind"]),
                ) {
                    out.push(Provides::Group(format!("{group}/{kind}")));
                } else if let Some(name) = doc.str_at(&["metadata", "name"]) {
                    out.push(Provides::Crd(name));
                }
            }
            ("", "Namespace") => {
                if let Some(name) = doc.str_at(&["metadata", "name"]) {
                    out.push(Provides::Namespace(name));
                }
            }
            ("", "ConfigMap" | "Secret") => {
                if let Some(name) = doc.str_at(&["metadata", "name"]) {
                    let ns = doc
                        .str_at(&["metadata", "namespace"])
                        .unwrap_or_else(|| default_ns.into());
                    out.push(Provides::Object(format!("{kind}/{ns}/{name}")));
                }
            }
            ("helm.cattle.io", "HelmChart") => {
                if let Some(chart) = doc.str_at(&["spec", "chart"]) {
                    out.push(Provides::Chart {
                        chart: crate::provenance::chart::short_name(&chart),
                        namespace: doc.str_at(&["spec", "targetNamespace"]),
                        crds_only: false,
                    });
                }
            }
            (_, k) if k.ends_with("List") => objects(
                doc.get("items").map(Node::as_seq).unwrap_or_default(),
                default_ns,
                out,
            ),
            _ => {}
        }
    }
}
