//! What exists before Flux by necessity: the cluster's network plugin.
//!
//! Flux's controllers are ordinary pods: they get no network until a CNI
//! runs, so a cluster whose repository holds a HelmRelease of a network
//! plugin (Cilium, Calico's tigera-operator, Flannel, Antrea, …) ran that
//! plugin before Flux could reconcile anything; the HelmRelease takes over
//! the installation the bootstrap made (helm-controller adopts a release of
//! the same name, or upgrades it). The kinds its operator registers at run
//! time (`cilium.io`, which the cilium chart ships no CRD for) and the
//! namespaces its chart creates on its defaults (`cilium-secrets`) exist
//! from the start. A catalog chart entry with `cni: true` is such a plugin.

use super::{Provenance, ProviderSource, SourceCx, chart};
use crate::model::{Cluster, Object, Span};

/// A HelmRelease of a network plugin, found once per cluster.
#[derive(Debug, Clone)]
pub(crate) struct Plugin {
    /// The chart's short name.
    pub chart: String,
    /// The HelmRelease, as `namespace/name`.
    pub release: String,
    /// Where it is written.
    pub at: Option<Span>,
}

impl Plugin {
    /// How it came to exist before Flux, in words.
    pub(crate) fn via(&self) -> String {
        format!(
            "the network plugin {}, which runs before Flux can (Flux's controllers need pod networking; HelmRelease {} takes it over)",
            self.chart, self.release
        )
    }
}

/// The HelmReleases of network plugins in the cluster's local tiers.
pub(crate) fn plugins(cx: &SourceCx, cluster: &Cluster) -> Vec<Plugin> {
    let mut out = Vec::new();
    for tier in cluster.local_tiers() {
        for o in tier.objects() {
            if let Some(p) = plugin(cx, o) {
                out.push(p);
            }
        }
    }
    out
}

fn plugin(cx: &SourceCx, o: &Object) -> Option<Plugin> {
    if o.id.group != "helm.toolkit.fluxcd.io" || o.id.kind != "HelmRelease" {
        return None;
    }
    let chart = chart::chart_of(cx, o)?;
    let entry = cx.catalog.chart(&chart)?;
    entry.cni.then(|| Plugin {
        chart,
        release: format!(
            "{}/{}",
            o.id.namespace.as_deref().unwrap_or("default"),
            o.id.name
        ),
        at: o.source.clone(),
    })
}

/// The kinds of a network plugin's groups.
#[derive(Debug)]
pub struct NetworkPlugin;

impl ProviderSource for NetworkPlugin {
    fn initial(&self, cx: &SourceCx, group: &str, kind: &str) -> Option<Provenance> {
        cx.plugins.iter().find_map(|p| {
            let entry = cx.catalog.chart(&p.chart)?;
            (entry.groups.iter().any(|g| g == group) && !entry.cni_gated.iter().any(|k| k == kind))
                .then(|| Provenance::Bootstrap {
                    at: p.at.clone().unwrap_or_else(|| Span::new(String::new(), 0)),
                    via: p.via(),
                })
        })
    }
}
