//! `graph-parity`: clusters of one parity group whose tier graphs differ.
//!
//! Groups come from `parity.groups` in conformance.yaml, or else are formed
//! from the clusters themselves: two clusters are overlays of one another
//! when most of their Kustomizations are the same (by namespace and name: at
//! least half of the union, [`SIMILAR`]). Clusters that share little (a home
//! cluster and a backup NAS) are not compared at all.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_saphyr::Spanned;
use similar::TextDiff;

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::graph::TierGraph;
use crate::model::{Cluster, Model, TierId};

/// `parity:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parity {
    /// Groups of cluster names whose graphs must be identical. Absent: every
    /// discovered cluster is one group. An empty list turns parity off.
    #[serde(default)]
    pub groups: Option<Vec<Vec<Spanned<String>>>>,
}

/// The share of Kustomizations (of the union of both clusters') two
/// clusters must have in common to be compared without configuration.
pub(crate) const SIMILAR: f64 = 0.5;

/// How the parity groups of a run were formed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Groups {
    /// Each group's clusters, sorted by name.
    pub groups: Vec<Vec<String>>,
    /// Formed from the clusters (no `parity.groups` in conformance.yaml).
    pub automatic: bool,
    /// Clusters in no group of two or more (compared with nothing).
    pub alone: Vec<String>,
}

/// The parity groups of a model.
pub fn groups(parity: &Parity, model: &Model) -> Groups {
    let names: Vec<String> = model.clusters.iter().map(|c| c.name.clone()).collect();
    if let Some(configured) = &parity.groups {
        let groups: Vec<Vec<String>> = configured
            .iter()
            .map(|g| g.iter().map(|s| s.value.clone()).collect())
            .collect();
        let grouped: BTreeSet<&String> = groups.iter().flatten().collect();
        let alone = names
            .iter()
            .filter(|n| !grouped.contains(n))
            .cloned()
            .collect();
        return Groups {
            groups,
            automatic: false,
            alone,
        };
    }
    let mut clusters: Vec<&Cluster> = model.clusters.iter().collect();
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    let ids: Vec<BTreeSet<&TierId>> = clusters.iter().map(|c| c.tiers.keys().collect()).collect();
    // Union-find over "similar enough".
    let mut root: Vec<usize> = (0..clusters.len()).collect();
    fn find(root: &mut [usize], i: usize) -> usize {
        let mut i = i;
        while root[i] != i {
            root[i] = root[root[i]];
            i = root[i];
        }
        i
    }
    for i in 0..clusters.len() {
        for j in i + 1..clusters.len() {
            if similarity(&ids[i], &ids[j]) >= SIMILAR {
                let (a, b) = (find(&mut root, i), find(&mut root, j));
                root[b.max(a)] = a.min(b);
            }
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
    for (i, cluster) in clusters.iter().enumerate() {
        let r = find(&mut root, i);
        groups.entry(r).or_default().push(cluster.name.clone());
    }
    let (groups, alone): (Vec<Vec<String>>, Vec<Vec<String>>) =
        groups.into_values().partition(|g| g.len() > 1);
    Groups {
        groups,
        automatic: true,
        alone: alone.into_iter().flatten().collect(),
    }
}

/// Shared Kustomizations over all of both clusters'.
fn similarity(a: &BTreeSet<&TierId>, b: &BTreeSet<&TierId>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

#[derive(Debug)]
pub(crate) struct GraphParity;

impl Rule for GraphParity {
    fn id(&self) -> RuleId {
        RuleId::GraphParity
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "clusters that should be alike (dev, prod) have different Kustomizations, dependsOn edges, wait or prune"
    }
    fn example(&self) -> &'static str {
        "prod: apps-vms dependsOn platform-config-cdi in dev but not in prod"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let model = cx.model;
        let formed = groups(cx.settings.parity, model);
        let mut out = Vec::new();
        for group in &formed.groups {
            let mut clusters: Vec<&Cluster> = model
                .clusters
                .iter()
                .filter(|c| group.contains(&c.name))
                .collect();
            clusters.sort_by(|a, b| a.name.cmp(&b.name));
            // Each cluster is compared with the most similar cluster before
            // it (by name): a declared group with its first as the baseline
            // (all are alike); a formed one along the pairs that made it.
            for (k, other) in clusters.iter().enumerate().skip(1) {
                let baseline = if formed.automatic {
                    let ids: BTreeSet<&TierId> = other.tiers.keys().collect();
                    clusters[..k]
                        .iter()
                        .max_by(|a, b| {
                            let sa = similarity(&a.tiers.keys().collect(), &ids);
                            let sb = similarity(&b.tiers.keys().collect(), &ids);
                            sa.total_cmp(&sb).then(b.name.cmp(&a.name))
                        })
                        .copied()
                        .unwrap_or(clusters[0])
                } else {
                    clusters[0]
                };
                compare(self, baseline, other, &formed, &mut out);
            }
        }
        out
    }
}

fn compare(
    rule: &GraphParity,
    baseline: &Cluster,
    other: &Cluster,
    formed: &Groups,
    out: &mut Vec<Finding>,
) {
    let base_graph = TierGraph::of(baseline);
    {
        let graph = TierGraph::of(other);
        let ids: std::collections::BTreeSet<_> =
            base_graph.nodes.keys().chain(graph.nodes.keys()).collect();
        for id in ids {
            let base_lines = base_graph.lines_of(id);
            let lines = graph.lines_of(id);
            if base_lines == lines {
                continue;
            }
            // Overlays found by similarity legitimately differ in which
            // tiers they run (a dev-only tool); what they share must be
            // ordered and gated alike. A declared group must match whole.
            if formed.automatic && (base_lines.is_empty() || lines.is_empty()) {
                continue;
            }
            // A tier one cluster knows only from its files is no evidence
            // of a difference.
            if baseline.known_statically(id) || other.known_statically(id) {
                continue;
            }
            // One name for two different Kustomizations (another path,
            // beyond the clusters' own directories) is no drift.
            if !same_kustomization(baseline, other, id) {
                continue;
            }
            let (tier_cluster, tier) = match other.tiers.get(id) {
                Some(t) => (other, t),
                None => (baseline, &baseline.tiers[id]),
            };
            let label = tier_cluster.tier_label(id);
            let diff = unified(&base_lines, &lines, &baseline.name, &other.name);
            let message = match (base_lines.is_empty(), lines.is_empty()) {
                (false, true) => format!(
                    "Kustomization {label} exists in cluster {} but not in {}",
                    baseline.name, other.name
                ),
                (true, false) => format!(
                    "Kustomization {label} exists in cluster {} but not in {}",
                    other.name, baseline.name
                ),
                _ => format!(
                    "Kustomization {label} has different dependsOn/wait/prune in clusters {} and {}",
                    baseline.name, other.name
                ),
            };
            let mut related = Vec::new();
            if let Some(base_tier) = baseline.tiers.get(id)
                && !std::ptr::eq(base_tier, tier)
            {
                related.push((
                    base_tier.defined_at.clone(),
                    format!("{label} in cluster {}", baseline.name),
                ));
            }
            // Point at the field that differs: dependsOn when an edge
            // line differs, else wait/prune, else the object.
            let edges_differ = base_lines.iter().chain(&lines).any(|l| {
                l.starts_with("dependsOn ") && !(base_lines.contains(l) && lines.contains(l))
            });
            let field = if edges_differ { "dependsOn" } else { "wait" };
            let line = tier
                .spec
                .path(&["spec", field])
                .or_else(|| tier.spec.path(&["spec", "prune"]))
                .map_or(tier.defined_at.line, |n| n.line);
            let grouped = if formed.automatic {
                format!(
                    "{} and {} share most of their Kustomizations, so they are taken as overlays of one another (one parity group)",
                    baseline.name, other.name
                )
            } else {
                format!(
                    "{} and {} are one parity group (conformance.yaml)",
                    baseline.name, other.name
                )
            };
            let fix = if formed.automatic {
                format!(
                    "make the lines below identical in both clusters (see `conformance graph --cluster {}` and `--cluster {}`); if they are not meant to match, declare parity.groups in conformance.yaml",
                    baseline.name, other.name
                )
            } else {
                format!(
                    "make the lines below identical in both clusters (see `conformance graph --cluster {}` and `--cluster {}`)",
                    baseline.name, other.name
                )
            };
            out.push(
                Finding::new(rule, other.name.clone(), label, message)
                    .at(crate::model::Span::new(tier.defined_at.file.clone(), line))
                    .related_all(related)
                    .why(format!(
                        "{grouped}: a difference in the graph means one cluster orders or gates its tiers differently, so what was proven on one is not what runs on the other"
                    ))
                    .fix(fix)
                    .detail(diff).build(),
            );
        }
    }
}

/// Whether the tier `id` of both clusters is one Kustomization in two
/// overlays: the same path once the segments that
/// name a cluster are set aside (each cluster's name, as a segment or a
/// word of one, and the segments of its entry's path the other's lacks:
/// `clusters/dev/apps` and `clusters/prod/apps`, `apps/overlays/dev` and
/// `apps/overlays/prod`, `tools/dev-values` and `tools/prod-values`).
/// The source may differ (dev from its GitRepository, prod from an
/// OCIRepository of the same directories). A tier only one cluster has is
/// compared as it is.
fn same_kustomization(a: &Cluster, b: &Cluster, id: &TierId) -> bool {
    let (Some(ta), Some(tb)) = (a.tiers.get(id), b.tiers.get(id)) else {
        return true;
    };
    let entry_a: BTreeSet<&str> = a.entry.path().split('/').collect();
    let entry_b: BTreeSet<&str> = b.entry.path().split('/').collect();
    // A path with the segments naming its cluster set aside: a segment of
    // its entry's path the other entry lacks, and the cluster's name as a
    // word of a segment (`dev`, `dev-tools`, `apps_dev`).
    let general = |path: &str, this: &Cluster, mine: &BTreeSet<&str>, theirs: &BTreeSet<&str>| {
        path.split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .map(|seg| {
                if mine.contains(seg) && !theirs.contains(seg) {
                    return "*".to_string();
                }
                seg.split_inclusive(['-', '_', '.'])
                    .map(|word| {
                        let bare = word.trim_end_matches(['-', '_', '.']);
                        if bare == this.name {
                            word.replacen(bare, "*", 1)
                        } else {
                            word.to_string()
                        }
                    })
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
    };
    general(&ta.path, a, &entry_a, &entry_b) == general(&tb.path, b, &entry_b, &entry_a)
}

fn unified(a: &[String], b: &[String], a_name: &str, b_name: &str) -> String {
    let a = lines_text(a);
    let b = lines_text(b);
    TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header(a_name, b_name)
        .to_string()
}

fn lines_text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}
