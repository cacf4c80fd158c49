//! Charts read for real: for every HelmRelease, the chart its source names
//! (helm-controller's HelmChart: `spec.chart.spec` with a HelmRepository,
//! or `spec.chartRef` to an OCIRepository or HelmChart), read as
//! source-controller would fetch it, and what it installs kept on the
//! cluster ([`crate::model::Cluster::charts`]) for the provenance to use
//! before the hand-kept catalog.
//!
//! A chart in the repository itself (a HelmRelease whose source is the
//! GitRepository this checkout is) is read from the checkout, always; a
//! chart from an HTTP(S) Helm repository or an OCI registry only with
//! `--fetch-remote`. What could not be read is noted, and the catalog
//! answers for it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use rayon::prelude::*;

use crate::chart::read;
use crate::model::{Cluster, Model, Object, ObjectId, TierState};
use crate::remote::Fetcher;
use crate::remote::chart::ChartRef;
use crate::repo::RepoIndex;
use conformance_core::chart::ChartContents;

/// Where one HelmRelease's chart is.
#[derive(Debug, Clone)]
enum Located {
    /// A chart repository or registry.
    Remote(ChartRef),
    /// A directory of this checkout.
    Local(String),
}

/// Reads the chart of every HelmRelease of every cluster; `fetcher`: the
/// remote fetcher when `--fetch-remote` is on.
pub(super) fn read_charts(model: &mut Model, index: &RepoIndex, fetcher: Option<&Fetcher>) {
    let mut wanted: Vec<(usize, ObjectId, Located)> = Vec::new();
    for (c, cluster) in model.clusters.iter().enumerate() {
        let sources = Sources::of(cluster);
        for tier in cluster.local_tiers() {
            for o in tier.objects() {
                if o.id.group == "helm.toolkit.fluxcd.io"
                    && o.id.kind == "HelmRelease"
                    && let Some(at) = sources.locate(o)
                {
                    wanted.push((c, o.id.clone(), at));
                }
            }
        }
    }
    if wanted.is_empty() {
        return;
    }
    crate::progress::show("reading charts");
    // Each remote chart once, in parallel.
    let remote: Vec<&ChartRef> = wanted
        .iter()
        .filter_map(|(_, _, at)| match at {
            Located::Remote(r) => Some(r),
            Located::Local(_) => None,
        })
        .collect::<std::collections::HashSet<_>>()
        .into_iter()
        .collect();
    let fetched: HashMap<&ChartRef, Result<Arc<ChartContents>, String>> = match fetcher {
        Some(f) => remote.par_iter().map(|r| (*r, fetch(f, r))).collect(),
        None => HashMap::new(),
    };
    let mut local: BTreeMap<String, Result<Arc<ChartContents>, String>> = BTreeMap::new();
    let mut notes = Vec::new();
    for (c, id, at) in &wanted {
        let contents = match at {
            Located::Remote(r) => match fetched.get(r) {
                Some(result) => result.clone(),
                // Not fetched (no --fetch-remote): the catalog answers,
                // as before; nothing to say per release.
                None => continue,
            },
            Located::Local(dir) => local
                .entry(dir.clone())
                .or_insert_with(|| from_checkout(index, dir))
                .clone(),
        };
        if let Err(why) = &contents {
            notes.push(format!(
                "chart of HelmRelease {} in cluster {}: {why}; what it installs is taken from the catalog",
                id, model.clusters[*c].name
            ));
        }
        model.clusters[*c].charts.insert(id.clone(), contents);
    }
    notes.sort();
    notes.dedup();
    model.notes.extend(notes);
}

fn fetch(fetcher: &Fetcher, r: &ChartRef) -> Result<Arc<ChartContents>, String> {
    let files = fetcher.chart(r).map_err(|f| f.message)?;
    let mut from = r.describe();
    if let Some(stale) = &files.stale {
        from = format!("{from} (not reachable now: {stale})");
    }
    read(&files.files, &from)
        .map(Arc::new)
        .ok_or_else(|| format!("{}: the archive holds no Chart.yaml", r.describe()))
}

/// A chart directory of this checkout.
fn from_checkout(index: &RepoIndex, dir: &str) -> Result<Arc<ChartContents>, String> {
    let artifact = index.unfiltered();
    let files: Vec<(String, Vec<u8>)> = index
        .below(dir)
        .filter(|(_, k)| matches!(k, crate::repo::Kind::File))
        .filter_map(|(p, _)| {
            let rel = p.strip_prefix(dir)?.trim_start_matches('/').to_string();
            Some((rel, artifact.read(p).ok()?))
        })
        .collect();
    read(&files, &format!("./{dir}"))
        .map(Arc::new)
        .ok_or_else(|| format!("./{dir} holds no Chart.yaml"))
}

/// The cluster's source objects, by kind, namespace and name, and the
/// GitRepositories that are this checkout.
struct Sources<'c> {
    objects: HashMap<(&'c str, &'c str, &'c str), &'c Object>,
    /// `namespace/name` of GitRepositories a rendered tier was built from
    /// (this checkout, not a mounted one).
    own: Vec<(String, String)>,
}

impl<'c> Sources<'c> {
    fn of(cluster: &'c Cluster) -> Sources<'c> {
        let mut objects = HashMap::new();
        for o in cluster.tiers.values().flat_map(|t| t.objects()) {
            if o.id.group == "source.toolkit.fluxcd.io" {
                objects.insert(
                    (
                        o.id.kind.as_str(),
                        o.id.namespace.as_deref().unwrap_or(""),
                        o.id.name.as_str(),
                    ),
                    o,
                );
            }
        }
        let mut own: Vec<(String, String)> = cluster
            .tiers
            .values()
            .filter(|t| matches!(t.state, TierState::Rendered(_)))
            .filter(|t| t.source_ref.kind == "GitRepository" && !t.path.starts_with('@'))
            .map(|t| (t.source_ref.namespace.clone(), t.source_ref.name.clone()))
            .collect();
        own.sort();
        own.dedup();
        Sources { objects, own }
    }

    fn get(&self, kind: &str, ns: &str, name: &str) -> Option<&'c Object> {
        self.objects.get(&(kind, ns, name)).copied()
    }

    /// Where a HelmRelease's chart is, when its source says (and nothing
    /// in it is left to substitute).
    fn locate(&self, hr: &Object) -> Option<Located> {
        let ns = hr.id.namespace.clone().unwrap_or_else(|| "default".into());
        let body = &hr.body;
        let located = if let Some(spec) = body.path(&["spec", "chart", "spec"]) {
            self.locate_spec(spec, &ns)
        } else {
            let kind = body.str_at(&["spec", "chartRef", "kind"])?;
            let name = body.str_at(&["spec", "chartRef", "name"])?;
            let ref_ns = body
                .str_at(&["spec", "chartRef", "namespace"])
                .unwrap_or_else(|| ns.clone());
            let source = self.get(&kind, &ref_ns, &name)?;
            match kind.as_str() {
                "OCIRepository" => Some(Located::Remote(ChartRef::Oci {
                    url: source.body.str_at(&["spec", "url"])?,
                    tag: source
                        .body
                        .str_at(&["spec", "ref", "digest"])
                        .or_else(|| source.body.str_at(&["spec", "ref", "tag"]))
                        .or_else(|| {
                            source
                                .body
                                .str_at(&["spec", "ref", "semver"])
                                .is_none()
                                .then(|| "latest".to_string())
                        }),
                    version: source.body.str_at(&["spec", "ref", "semver"]),
                    insecure: source
                        .body
                        .path(&["spec", "insecure"])
                        .and_then(crate::yaml::Node::as_bool)
                        == Some(true),
                })),
                "HelmChart" => self.locate_spec(source.body.get("spec")?, &ref_ns),
                _ => None,
            }
        }?;
        let text = format!("{located:?}");
        (!text.contains("${")).then_some(located)
    }

    /// A HelmChart template (`spec.chart.spec`, or a HelmChart's spec):
    /// its chart, version and source.
    fn locate_spec(&self, spec: &crate::yaml::Node, ns: &str) -> Option<Located> {
        let chart = spec.str_at(&["chart"])?;
        let version = spec.str_at(&["version"]).filter(|v| v != "*");
        let kind = spec.str_at(&["sourceRef", "kind"])?;
        let name = spec.str_at(&["sourceRef", "name"])?;
        let src_ns = spec
            .str_at(&["sourceRef", "namespace"])
            .unwrap_or_else(|| ns.to_string());
        match kind.as_str() {
            "HelmRepository" => {
                let repo = self.get("HelmRepository", &src_ns, &name)?;
                let url = repo.body.str_at(&["spec", "url"])?;
                let insecure = repo
                    .body
                    .path(&["spec", "insecure"])
                    .and_then(crate::yaml::Node::as_bool)
                    == Some(true);
                if repo.body.str_at(&["spec", "type"]).as_deref() == Some("oci")
                    || url.starts_with("oci://")
                {
                    Some(Located::Remote(ChartRef::Oci {
                        url: format!("{}/{chart}", url.trim_end_matches('/')),
                        tag: None,
                        version,
                        insecure,
                    }))
                } else {
                    Some(Located::Remote(ChartRef::Repository {
                        url,
                        chart,
                        version,
                    }))
                }
            }
            // A chart directory of a GitRepository this checkout is.
            "GitRepository" if self.own.iter().any(|(n, m)| *n == src_ns && *m == name) => {
                let dir = crate::repo::normalize("", &chart).0;
                Some(Located::Local(dir))
            }
            _ => None,
        }
    }
}
