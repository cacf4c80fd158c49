//! Helm charts: a HelmRelease of a chart the catalog knows installs the
//! CRDs of its groups when helm-controller reconciles it, as the chart ships
//! them (helm-controller `crdPolicyOrDefault`): the chart's `crds/`
//! directory unless `spec.install.crds: Skip`; templates when the values
//! that gate them are true (read from `spec.values` and from the
//! `valuesFrom` ConfigMaps and Secrets the repository renders); a hook Job
//! or the operator at start-up whatever `install.crds` says.
//!
//! A HelmRelease whose chart the catalog does not know may still plausibly
//! install a group its name matches ([`plausible`]): such a provider is
//! *probable*, never the ground for an error.

use std::collections::BTreeMap;

use super::{CrdShipping, Provenance, Provider, ProviderSource, RuntimeHow, SourceCx};
use crate::model::{Cluster, Object, ObjectId, Tier};
use crate::yaml::Node;

/// HelmReleases of catalogued charts.
#[derive(Debug)]
pub struct Charts;

impl ProviderSource for Charts {
    fn scan(&self, cx: &SourceCx, tier: &Tier, o: &Object, out: &mut Vec<Provider>) {
        let id = &o.id;
        if id.group != "helm.toolkit.fluxcd.io" || id.kind != "HelmRelease" {
            return;
        }
        // The chart read for real comes first; the catalog answers for
        // charts that could not be read.
        if let Some(Ok(contents)) = cx.cluster.charts.get(id) {
            read_providers(cx.cluster, tier, o, contents, out);
            return;
        }
        let Some(chart) = chart_of(cx, o) else { return };
        let Some(entry) = cx.catalog.chart(&chart) else {
            return;
        };
        if !installs_crds(cx.cluster, o, entry.crds, &entry.values, entry.default) {
            return;
        }
        for group in &entry.groups {
            out.push(Provider {
                group: group.clone(),
                kind: None,
                scope: None,
                provenance: Provenance::Runtime {
                    how: RuntimeHow::Chart {
                        chart: chart.clone(),
                        probable: false,
                    },
                    trigger: id.clone(),
                    tier: tier.id.clone(),
                    at: o.source.clone(),
                },
            });
        }
    }
}

/// The providers of a chart read for real: every CRD it ships that this
/// release installs (a `crds/` one unless `install.crds: Skip`; one
/// under gates when the release's values, or the chart's defaults, turn
/// them on). A CRD under a condition this reader cannot evaluate is a
/// probable provider.
fn read_providers(
    cluster: &Cluster,
    tier: &Tier,
    hr: &Object,
    contents: &conformance_core::chart::ChartContents,
    out: &mut Vec<Provider>,
) {
    let skip_dir = hr.body.str_at(&["spec", "install", "crds"]).as_deref() == Some("Skip");
    let chart = format!("{} {}", contents.name, contents.version);
    for crd in &contents.crds {
        if crd.in_crds_dir && skip_dir {
            continue;
        }
        let probable = match &crd.gates {
            None => true,
            Some(gates) => {
                let on = gates.iter().all(|g| {
                    helm_value(cluster, hr, &g.path)
                        .and_then(|n| truthy(&n))
                        .unwrap_or(g.default)
                });
                if !on {
                    continue;
                }
                false
            }
        };
        out.push(Provider {
            group: crd.group.clone(),
            kind: Some(crd.kind.clone()),
            scope: None,
            provenance: Provenance::Runtime {
                how: RuntimeHow::Chart {
                    chart: chart.clone(),
                    probable,
                },
                trigger: hr.id.clone(),
                tier: tier.id.clone(),
                at: hr.source.clone(),
            },
        });
    }
}

/// The chart a HelmRelease installs, by its short name: `spec.chart.spec.
/// chart` (a path or OCI reference reduced to its last segment), or the
/// chart of the OCIRepository/HelmChart its `chartRef` names.
pub(crate) fn chart_of(cx: &SourceCx, o: &Object) -> Option<String> {
    let chart = o
        .body
        .str_at(&["spec", "chart", "spec", "chart"])
        .or_else(|| {
            let kind = o.body.str_at(&["spec", "chartRef", "kind"])?;
            let name = o.body.str_at(&["spec", "chartRef", "name"])?;
            let ns = o
                .body
                .str_at(&["spec", "chartRef", "namespace"])
                .unwrap_or_else(|| ns_of(&o.id));
            cx.chart_sources.get(&(kind, ns, name)).cloned()
        })?;
    Some(short_name(&chart))
}

/// `oci://ghcr.io/org/charts/cilium:1.2` or `repo/cilium` → `cilium`.
pub(crate) fn short_name(chart: &str) -> String {
    let last = chart
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(chart);
    last.split([':', '@']).next().unwrap_or(last).to_string()
}

/// Whether the HelmRelease installs the chart's CRDs on a cold cluster.
fn installs_crds(
    cluster: &Cluster,
    hr: &Object,
    shipping: CrdShipping,
    values: &[String],
    default: Option<bool>,
) -> bool {
    match shipping {
        CrdShipping::Dir => {
            // An install's policy (the cold start installs): Create unless
            // Skip; CreateReplace creates too.
            hr.body.str_at(&["spec", "install", "crds"]).as_deref() != Some("Skip")
        }
        CrdShipping::Template if values.is_empty() => true,
        CrdShipping::Template => {
            let set: Vec<bool> = values
                .iter()
                .filter_map(|v| helm_value(cluster, hr, v).and_then(|n| truthy(&n)))
                .collect();
            if set.is_empty() {
                default.unwrap_or(false)
            } else {
                set.into_iter().any(|b| b)
            }
        }
        CrdShipping::Hook | CrdShipping::Runtime => true,
        CrdShipping::None => false,
    }
}

/// The namespaces a chart read for real creates for this release (those
/// whose gates its values turn on).
pub(crate) fn read_namespaces(cluster: &Cluster, hr: &Object) -> Vec<String> {
    let Some(Ok(contents)) = cluster.charts.get(&hr.id) else {
        return Vec::new();
    };
    contents
        .namespaces
        .iter()
        .filter(|n| {
            n.gates.as_ref().is_some_and(|gates| {
                gates.iter().all(|g| {
                    helm_value(cluster, hr, &g.path)
                        .and_then(|v| truthy(&v))
                        .unwrap_or(g.default)
                })
            })
        })
        .map(|n| n.value.clone())
        .collect()
}

/// A Helm value as a boolean: `true`/`false`, and the strings Helm's
/// templates treat alike.
fn truthy(node: &Node) -> Option<bool> {
    node.as_bool().or_else(|| match node.as_str()? {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    })
}

/// The value at a dotted path (`crds.enabled`) of a HelmRelease's values as
/// helm-controller merges them: `spec.values` over the `valuesFrom` entries
/// (later ones over earlier), each read from a ConfigMap or Secret the
/// cluster's tiers render. `None` when nothing the repository shows sets it.
pub(crate) fn helm_value(cluster: &Cluster, hr: &Object, dotted: &str) -> Option<Node> {
    let keys: Vec<&str> = dotted.split('.').collect();
    if let Some(v) = hr
        .body
        .path(&["spec", "values"])
        .and_then(|v| v.path(&keys))
    {
        return Some(v.clone());
    }
    let ns = ns_of(&hr.id);
    for entry in hr
        .body
        .path(&["spec", "valuesFrom"])
        .map(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .rev()
    {
        let (Some(kind), Some(name)) = (entry.str_at(&["kind"]), entry.str_at(&["name"])) else {
            continue;
        };
        let key = entry
            .str_at(&["valuesKey"])
            .unwrap_or_else(|| "values.yaml".into());
        let Some(text) = data_of(cluster, &kind, &ns, &name, &key) else {
            continue;
        };
        if let Some(target) = entry.str_at(&["targetPath"]) {
            if target == dotted {
                return crate::yaml::parse_documents(&text)
                    .ok()
                    .and_then(|d| d.into_iter().next())
                    .or_else(|| Some(Node::new(crate::yaml::Value::String(text))));
            }
            continue;
        }
        let docs = crate::yaml::parse_documents(&text).ok()?;
        if let Some(v) = docs.first().and_then(|d| d.path(&keys)) {
            return Some(v.clone());
        }
    }
    None
}

/// `data[key]` (or, for a Secret, `stringData[key]`) of a ConfigMap or
/// Secret some tier of the cluster renders.
fn data_of(cluster: &Cluster, kind: &str, ns: &str, name: &str, key: &str) -> Option<String> {
    for tier in cluster.tiers.values() {
        for o in tier.objects() {
            if o.id.group.is_empty()
                && o.id.kind == kind
                && o.id.name == name
                && o.id.namespace.as_deref().unwrap_or("default") == ns
            {
                // A Secret's data is base64 (and usually encrypted in git):
                // only its stringData is legible here.
                let field = if kind == "Secret" {
                    "stringData"
                } else {
                    "data"
                };
                if let Some(text) = o.body.str_at(&[field, key]) {
                    return Some(text);
                }
            }
        }
    }
    None
}

/// (kind, namespace, name) of OCIRepository and HelmChart objects → the
/// chart they hold, to name the chart of a HelmRelease's `chartRef`.
pub(crate) type ChartSources = BTreeMap<(String, String, String), String>;

/// The chart sources rendered anywhere in the cluster.
pub(crate) fn chart_sources(cluster: &Cluster) -> ChartSources {
    let mut out = ChartSources::new();
    for tier in cluster.tiers.values() {
        for o in tier.objects() {
            if o.id.kind == "OCIRepository"
                && let Some(url) = o.body.str_at(&["spec", "url"])
            {
                out.insert(
                    ("OCIRepository".into(), ns_of(&o.id), o.id.name.clone()),
                    short_name(&url),
                );
            }
            if o.id.kind == "HelmChart"
                && o.id.group == "source.toolkit.fluxcd.io"
                && let Some(chart) = o.body.str_at(&["spec", "chart"])
            {
                out.insert(
                    ("HelmChart".into(), ns_of(&o.id), o.id.name.clone()),
                    short_name(&chart),
                );
            }
        }
    }
    out
}

fn ns_of(id: &ObjectId) -> String {
    id.namespace.clone().unwrap_or_else(|| "default".into())
}

/// Words a chart name carries that say nothing about what it installs.
const NOISE: &[&str] = &[
    "operator",
    "controller",
    "controllers",
    "chart",
    "charts",
    "helm",
    "crd",
    "crds",
    "k8s",
    "kubernetes",
    "io",
    "com",
    "org",
    "dev",
    "net",
    "app",
    "apps",
    "system",
    "manager",
    // Words many unrelated groups share.
    "gateway",
    "proxy",
    "ingress",
    "server",
    "client",
    "agent",
    "webhook",
    "exporter",
    "stack",
    "cluster",
    "cloud",
    "networking",
    "network",
    "storage",
    "policy",
    "monitoring",
    "metrics",
    "security",
    "config",
    "template",
    "common",
];

/// Whether a chart (by name, and the address it comes from) plausibly
/// installs `group`: a distinctive word of the chart's name is a label of
/// the group (`acme-operator` and `gizmos.acme.example.com`), or the chart's
/// repository host ends in the group's domain.
pub(crate) fn plausible(chart: &str, repository: Option<&str>, group: &str) -> bool {
    const GENERIC: &[&str] = &[
        "github",
        "ghcr",
        "docker",
        "quay",
        "gcr",
        "ecr",
        "aws",
        "charts",
        "chart",
        "helm",
        "oci",
        "registry",
        "public",
        "io",
        "com",
        "org",
        "dev",
        "net",
        "k8s",
        "x-k8s",
        "sigs",
        "kubernetes",
        "cloud",
        "www",
        "raw",
        "githubusercontent",
        "azure",
        "azurecr",
        "google",
        "amazon",
        "amazonaws",
        "microsoft",
        "hashicorp",
        "gitlab",
        "bitbucket",
    ];
    let distinctive = |w: &str| w.len() >= 4 && !NOISE.contains(&w) && !GENERIC.contains(&w);
    // The group's labels, and the words of its hyphenated labels.
    let labels: Vec<&str> = group.split('.').collect();
    let mut group_words: Vec<&str> = labels.clone();
    group_words.extend(labels.iter().flat_map(|l| l.split('-')));
    group_words.retain(|w| distinctive(w));
    if group_words.is_empty() {
        return false;
    }
    let chart_words = std::iter::once(chart).chain(chart.split(['-', '_', '.']));
    if chart_words
        .filter(|w| distinctive(w))
        .any(|w| group_words.iter().any(|g| g.eq_ignore_ascii_case(w)))
    {
        return true;
    }
    // The repository's host labels and path segments (an organisation's
    // name: `oci://ghcr.io/mogenius/helm-charts/…`, `movetokube.github.io`),
    // also as the group's domain written without its dot (the GitHub
    // organisation `netbirdio` of `netbird.io`).
    let joined: Vec<String> = labels
        .windows(2)
        .filter(|pair| distinctive(pair[0]))
        .map(|pair| format!("{}{}", pair[0], pair[1]))
        .collect();
    if let Some(url) = repository {
        let rest = url.split("://").nth(1).unwrap_or(url);
        let mut parts = rest.split('/');
        let host = parts.next().unwrap_or_default();
        let words = host
            .split(['.', ':'])
            .chain(parts)
            .flat_map(|p| std::iter::once(p).chain(p.split('-')));
        for w in words {
            if distinctive(w)
                && (group_words.iter().any(|g| g.eq_ignore_ascii_case(w))
                    || joined.iter().any(|j| j.eq_ignore_ascii_case(w)))
            {
                return true;
            }
        }
    }
    false
}

/// HelmReleases with their chart and where it comes from, for
/// [`plausible`] matches of groups nothing the catalog knows provides.
/// Catalogued charts are included: chart names are not unique across
/// vendors (`keycloak-operator` is both Keycloak's, `k8s.keycloak.org`, and
/// others'), and a group the catalog entry does not list may still be the
/// chart's when its name or address says so.
pub(crate) fn uncatalogued<'c>(
    cx: &SourceCx,
    cluster: &'c Cluster,
) -> Vec<(&'c Tier, &'c Object, String, Option<String>)> {
    let mut out = Vec::new();
    for tier in cluster.local_tiers() {
        for o in tier.objects() {
            if o.id.group != "helm.toolkit.fluxcd.io" || o.id.kind != "HelmRelease" {
                continue;
            }
            // Its chart was read: what it installs is known, not guessed.
            if cluster.charts.get(&o.id).is_some_and(Result::is_ok) {
                continue;
            }
            let Some(chart) = chart_of(cx, o) else {
                continue;
            };
            let repository = repository_of(cluster, o);
            out.push((tier, o, chart, repository));
        }
    }
    out
}

/// The address of the repository a HelmRelease's chart comes from: its
/// HelmRepository's or OCIRepository's `spec.url`, when rendered.
fn repository_of(cluster: &Cluster, hr: &Object) -> Option<String> {
    let ns = ns_of(&hr.id);
    let (kind, name, source_ns) =
        if let Some(r) = hr.body.path(&["spec", "chart", "spec", "sourceRef"]) {
            (
                r.str_at(&["kind"])?,
                r.str_at(&["name"])?,
                r.str_at(&["namespace"]).unwrap_or(ns),
            )
        } else {
            let r = hr.body.path(&["spec", "chartRef"])?;
            (
                r.str_at(&["kind"])?,
                r.str_at(&["name"])?,
                r.str_at(&["namespace"]).unwrap_or(ns),
            )
        };
    cluster
        .tiers
        .values()
        .flat_map(|t| t.objects())
        .find_map(|o| {
            (o.id.kind == kind && o.id.name == name && ns_of(&o.id) == source_ns)
                .then(|| o.body.str_at(&["spec", "url"]))
                .flatten()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_names_are_their_last_segment() {
        assert_eq!(
            short_name("oci://ghcr.io/org/charts/cilium:1.16.0"),
            "cilium"
        );
        assert_eq!(short_name("jetstack/cert-manager"), "cert-manager");
        assert_eq!(short_name("./charts/app"), "app");
    }

    #[test]
    fn plausible_matches_want_a_distinctive_word_or_the_domain() {
        assert!(plausible(
            "kubernetes-operator",
            Some("https://netbirdio.github.io/helms"),
            "netbird.io"
        ));
        assert!(!plausible(
            "kubernetes-operator",
            Some("https://netbirdio.github.io/helms"),
            "example.io"
        ));
        assert!(plausible("acme-operator", None, "gizmos.acme.example.com"));
        assert!(!plausible("my-operator", None, "gizmos.acme.example.com"));
        assert!(plausible(
            "ext-postgres-operator",
            Some("https://movetokube.github.io/postgres-operator/"),
            "db.movetokube.com"
        ));
        assert!(plausible(
            "renovate-operator",
            Some("oci://ghcr.io/mogenius/helm-charts/renovate-operator"),
            "renovate-operator.mogenius.com"
        ));
        assert!(!plausible(
            "thing",
            Some("https://charts.github.io/charts"),
            "thing2.example.io"
        ));
        assert!(!plausible("app-template", None, "apps.example.com"));
        assert!(!plausible(
            "app-template",
            Some("oci://ghcr.io/bjw-s/helm"),
            "k8s.io"
        ));
    }
}
