//! Helm charts: a HelmRelease of a chart the catalog knows installs the
//! CRDs of its groups when helm-controller reconciles it.

use std::collections::BTreeMap;

use super::{Provenance, Provider, ProviderSource, RuntimeHow, SourceCx};
use crate::model::{Cluster, Object, ObjectId, Tier};

/// HelmReleases of catalogued charts.
#[derive(Debug)]
pub struct Charts;

impl ProviderSource for Charts {
    fn name(&self) -> &'static str {
        "chart"
    }
    fn scan(&self, cx: &SourceCx, tier: &Tier, o: &Object, out: &mut Vec<Provider>) {
        let id = &o.id;
        if id.group != "helm.toolkit.fluxcd.io" || id.kind != "HelmRelease" {
            return;
        }
        let chart = o
            .body
            .str_at(&["spec", "chart", "spec", "chart"])
            .or_else(|| {
                let kind = o.body.str_at(&["spec", "chartRef", "kind"])?;
                let name = o.body.str_at(&["spec", "chartRef", "name"])?;
                let ns = o
                    .body
                    .str_at(&["spec", "chartRef", "namespace"])
                    .unwrap_or_else(|| ns_of(id));
                cx.chart_sources.get(&(kind, ns, name)).cloned()
            });
        let Some(chart) = chart else { return };
        // A chart in an OCI or HTTP repository may be written as a path.
        let short = chart.rsplit('/').next().unwrap_or(&chart).to_string();
        for group in cx.chart_groups.get(short.as_str()).into_iter().flatten() {
            out.push(Provider {
                group: (*group).to_string(),
                kind: None,
                scope: None,
                provenance: Provenance::Runtime {
                    how: RuntimeHow::Chart {
                        chart: short.clone(),
                    },
                    trigger: id.clone(),
                    tier: tier.id.clone(),
                    at: o.source.clone(),
                },
            });
        }
    }
}

/// (kind, namespace, name) of OCIRepository and HelmChart objects → the
/// chart they hold, to name the chart of a HelmRelease's `chartRef`.
pub type ChartSources = BTreeMap<(String, String, String), String>;

/// The chart sources rendered anywhere in the cluster.
pub fn chart_sources(cluster: &Cluster) -> ChartSources {
    let mut out = ChartSources::new();
    for tier in cluster.tiers.values() {
        for o in tier.objects() {
            if o.id.kind == "OCIRepository"
                && let Some(url) = o.body.str_at(&["spec", "url"])
            {
                let chart = url
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                out.insert(
                    ("OCIRepository".into(), ns_of(&o.id), o.id.name.clone()),
                    chart,
                );
            }
            if o.id.kind == "HelmChart"
                && let Some(chart) = o.body.str_at(&["spec", "chart"])
            {
                out.insert(("HelmChart".into(), ns_of(&o.id), o.id.name.clone()), chart);
            }
        }
    }
    out
}

fn ns_of(id: &ObjectId) -> String {
    id.namespace.clone().unwrap_or_else(|| "default".into())
}
