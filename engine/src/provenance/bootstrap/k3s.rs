//! k3s: the manifests its auto-deploy directory
//! (`/var/lib/rancher/k3s/server/manifests`) applies before anything else,
//! as the repository provides them (files under a `server/manifests/`
//! directory; Ansible's `k3s_server_manifests_templates` and
//! `k3s_server_manifests_urls`), and k3s's own kinds (`helm.cattle.io`
//! HelmChart and HelmChartConfig, `k3s.cattle.io` Addon) once the
//! repository shows it runs k3s.

use super::{Item, Provides, manifests};
use crate::model::Span;
use crate::provenance::Catalog;
use crate::repo::{Kind, RepoIndex};

/// What k3s applies before Flux: the server manifests the repository provides (files,
/// Ansible templates and URLs), and k3s's own kinds once the repository shows it runs k3s.
pub fn read(index: &RepoIndex, catalog: &Catalog) -> Vec<Item> {
    let mut out = Vec::new();
    let mut k3s: Option<Span> = None;
    let paths: Vec<String> = index
        .below("")
        .filter(|(_, k)| **k == Kind::File)
        .map(|(p, _)| p.to_string())
        .collect();
    for rel in &paths {
        if rel.contains("/server/manifests/") || rel.starts_with("server/manifests/") {
            for provides in manifests::read(index, rel) {
                out.push(Item {
                    at: Span::new(rel, 0),
                    via: "k3s server manifest".into(),
                    provides,
                });
            }
            k3s.get_or_insert_with(|| Span::new(rel, 0));
        }
        let yaml = rel.ends_with(".yaml") || rel.ends_with(".yml");
        if !yaml || !rel.contains("ansible") && !rel.contains("group_vars") {
            continue;
        }
        let Ok(text) = index.read_text(rel) else {
            continue;
        };
        if !text.contains("k3s_") {
            continue;
        }
        let mut section: Option<&str> = None;
        for (n, line) in text.lines().enumerate() {
            let at = Span::new(rel, n as u32 + 1);
            let t = line.trim();
            if !line.starts_with(' ') && !line.starts_with('-') && !t.is_empty() {
                section = None;
                if t.starts_with("k3s_server_manifests_urls:") {
                    section = Some("urls");
                } else if t.starts_with("k3s_server_manifests_templates:") {
                    section = Some("templates");
                }
                if t.starts_with("k3s_") && !t.starts_with('#') {
                    k3s.get_or_insert_with(|| at.clone());
                }
                continue;
            }
            if t.starts_with('#') {
                continue;
            }
            match section {
                Some("urls") => {
                    let url = t
                        .trim_start_matches("- ")
                        .trim_start_matches("url:")
                        .trim()
                        .trim_matches(|c| c == '"' || c == '\'');
                    if url.starts_with("http") {
                        for provides in super::fetched(index, catalog, url) {
                            out.push(Item {
                                at: at.clone(),
                                via: format!("k3s manifest {url}"),
                                provides,
                            });
                        }
                    }
                }
                Some("templates") => {
                    let name = t
                        .trim_start_matches("- ")
                        .trim()
                        .trim_matches(|c| c == '"' || c == '\'');
                    if name.is_empty() || name.contains(' ') {
                        continue;
                    }
                    // The template file, wherever the playbook keeps it.
                    for file in paths.iter().filter(|p| p.rsplit('/').next() == Some(name)) {
                        for provides in manifests::read(index, file) {
                            out.push(Item {
                                at: at.clone(),
                                via: format!("k3s manifest template {file}"),
                                provides,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(at) = k3s {
        for group in ["helm.cattle.io", "k3s.cattle.io"] {
            out.push(Item {
                at: at.clone(),
                via: "k3s (its own kinds)".into(),
                provides: Provides::Group(group.into()),
            });
        }
    }
    out
}

/// The bootstrap reader of k3s auto-deploy manifests and HelmChart objects.
#[derive(Debug)]
pub struct K3s;

impl super::Reader for K3s {
    fn read(&self, cx: &super::ReadCx) -> Vec<super::Item> {
        read(cx.index, cx.catalog)
    }
}
