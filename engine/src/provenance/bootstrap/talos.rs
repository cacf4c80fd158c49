//! Talos machine configuration in the repository (`talconfig.yaml`,
//! machine-config templates and patches): `cluster.inlineManifests` (their
//! `contents`), `cluster.extraManifests` and a custom CNI's
//! `cluster.network.cni.urls` (URLs; one that names a file of this
//! repository on GitHub is read from the repository), and Talos API access
//! (`machine.features.kubernetesTalosAPIAccess`, or a
//! `KubeTalosAPIAccessConfig` document), which makes Talos install its
//! `talos.dev` kinds (`ServiceAccount`).

use super::{Item, Provides, untemplate};
use crate::model::Span;
use crate::provenance::Catalog;
use crate::repo::{Kind, RepoIndex};

/// Whether a file may hold Talos machine configuration.
fn candidate(rel: &str) -> bool {
    let lower = rel.to_ascii_lowercase();
    (lower.ends_with(".yaml")
        || lower.ends_with(".yml")
        || lower.ends_with(".j2")
        || lower.ends_with(".tmpl")
        || lower.ends_with(".gotmpl"))
        && (lower.contains("talos")
            || lower.contains("talconfig")
            || lower.contains("machineconfig")
            || lower.contains("controlplane"))
}

/// What Talos installs before Flux, as the repository's machine configuration says:
/// its inline manifests' CRDs and namespaces, its extra manifests and custom CNI
/// (fetched URLs), and the `talos.dev` kinds when Talos API access is enabled.
/// Also returns notes: extra manifests whose contents are not known.
pub fn read(index: &RepoIndex, catalog: &Catalog) -> (Vec<Item>, Vec<(Span, String)>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let files: Vec<String> = index
        .below("")
        .filter(|(p, k)| **k == Kind::File && candidate(p))
        .map(|(p, _)| p.to_string())
        .collect();
    for rel in files {
        let Ok(text) = index.read_text(&rel) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for n in 0..lines.len() {
            let at = Span::new(&rel, n as u32 + 1);
            if api_access(&lines, n) {
                out.push(Item {
                    at: at.clone(),
                    via: "Talos API access (kubernetesTalosAPIAccess)".into(),
                    provides: Provides::Group("talos.dev".into()),
                });
            }
            if let Some(what) = manifest_list(&lines, n) {
                for (line, url) in list_urls(&lines, n) {
                    let found = super::fetched(index, catalog, url);
                    if found.is_empty()
                        && let Some(note) = super::unknown_url(url)
                    {
                        notes.push((Span::new(&rel, line), format!("{what}: {note}")));
                    }
                    for provides in found {
                        out.push(Item {
                            at: Span::new(&rel, line),
                            via: format!("{what} {url}"),
                            provides,
                        });
                    }
                }
            }
            for provides in inline_manifests(&lines, n) {
                out.push(Item {
                    at: at.clone(),
                    via: "Talos inlineManifests".into(),
                    provides,
                });
            }
        }
    }
    (out, notes)
}

/// The indentation of a line.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Whether line `n` enables Talos API access: a `KubeTalosAPIAccessConfig`
/// document, or `enabled: true` anywhere in the block under
/// `kubernetesTalosAPIAccess:`.
fn api_access(lines: &[&str], n: usize) -> bool {
    let (line, t) = (lines[n], lines[n].trim());
    let indent = indent(line);
    t == "kind: KubeTalosAPIAccessConfig"
        || (t.starts_with("kubernetesTalosAPIAccess:")
            && lines[n + 1..]
                .iter()
                .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
                .any(|l| l.trim() == "enabled: true"))
}

/// Whether line `n` starts a list of manifest URLs Talos applies at
/// bootstrap, and which in words: `cluster.extraManifests`, or the
/// manifests of a custom CNI (`cluster.network.cni.urls`).
fn manifest_list(lines: &[&str], n: usize) -> Option<&'static str> {
    let t = lines[n].trim();
    let cni = t.starts_with("urls:")
        && lines[..n]
            .iter()
            .rev()
            .take(4)
            .any(|l| l.trim_start().starts_with("cni:"));
    if cni {
        Some("Talos custom CNI")
    } else if t.starts_with("extraManifests:") {
        Some("Talos extraManifests")
    } else {
        None
    }
}

/// The URLs of the list that line `n` starts, each with its 1-based line.
fn list_urls<'a>(lines: &[&'a str], n: usize) -> Vec<(u32, &'a str)> {
    let indent = indent(lines[n]);
    let mut out = Vec::new();
    for (m, item) in lines[n + 1..].iter().enumerate() {
        let it = item.trim();
        if it.is_empty() || it.starts_with('#') {
            continue;
        }
        let item_indent = item.len() - item.trim_start().len();
        if item_indent <= indent && !it.starts_with('-') {
            break;
        }
        let url = it
            .trim_start_matches('-')
            .trim()
            .trim_matches(|c| c == '"' || c == '\'');
        if url.starts_with("http") {
            out.push(((n + m) as u32 + 2, url));
        }
    }
    out
}

/// When line `n` is the `contents:` of an inline manifest
/// (`cluster.inlineManifests`), the CRDs and namespaces it holds.
fn inline_manifests(lines: &[&str], n: usize) -> Vec<Provides> {
    let line = lines[n];
    if !line.trim().starts_with("contents:")
        || !lines[..n]
            .iter()
            .rev()
            .take(40)
            .any(|l| l.contains("inlineManifests"))
    {
        return Vec::new();
    }
    // A block scalar: the lines indented deeper than `contents:`.
    let indent = indent(line);
    let block: Vec<&str> = lines[n + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
        .copied()
        .collect();
    let depth = block
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let body: String = block
        .iter()
        .map(|l| if l.len() >= depth { &l[depth..] } else { "" })
        .collect::<Vec<_>>()
        .join("\n");
    let docs = crate::yaml::parse_documents(&untemplate(&body)).unwrap_or_default();
    docs.iter()
        .filter_map(|doc| {
            let kind = doc.str_at(&["kind"]).unwrap_or_default();
            match kind.as_str() {
                "CustomResourceDefinition" => doc
                    .str_at(&["spec", "group"])
                    .zip(doc.str_at(&["spec", "names", "kind"]))
                    .map(|(g, k)| Provides::Group(format!("{g}/{k}"))),
                "Namespace" => doc.str_at(&["metadata", "name"]).map(Provides::Namespace),
                _ => None,
            }
        })
        .collect()
}

/// The bootstrap reader of Talos machine configuration (inline and extra manifests).
#[derive(Debug)]
pub struct Talos;

impl super::Reader for Talos {
    fn read(&self, cx: &super::ReadCx) -> Vec<super::Item> {
        let (items, notes) = read(cx.index, cx.catalog);
        for (at, note) in notes {
            cx.note(at, note);
        }
        items
    }
}
