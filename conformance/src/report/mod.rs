//! Reports: findings rendered for people ([`human`]: each finding with the
//! snippet of its place and of every related place) and for tools ([`json`],
//! the documented document with `related`, `why` and `fix`; [`ci`]: GitHub
//! annotations, JUnit XML, SARIF), the audits: kind provenance ([`crds`])
//! and postBuild substitution ([`substitutions`]), and the rendered objects
//! and their changes ([`manifests`]: `build`, `diff`).

pub mod ci;
pub mod colour;
pub mod crds;
pub mod dot;
pub mod human;
pub mod json;
pub mod manifests;
pub mod markdown;
pub mod output;
mod screen;
pub mod starter;
pub mod substitutions;

use std::collections::BTreeMap;

use std::time::Duration;

use crate::check::Outcome;
use crate::model::TierState;
use crate::rules::{self, Finding};
pub use screen::{Item, Shown, also_on, items, screen};

/// The formats of a check's report (the variants carry no doc comments:
/// clap would print them in `--help`, which the CLI contract fixes).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    // For people: each finding with its snippets, grouped by root cause.
    Human,
    // The documented JSON document.
    Json,
    // JUnit XML, one test case per cluster, rule and Kustomization.
    Junit,
    // SARIF 2.1.0.
    Sarif,
    // GitHub workflow annotations.
    Github,
    // For a pull-request comment or a job summary.
    Markdown,
}

/// What a report says first: the counts, the rules to fix first, the
/// Kustomizations that do not build and those not checked (each as
/// `cluster/name (file:line)`, with why for the latter).
#[derive(Debug, Default)]
pub struct Overview {
    /// Error findings that count: roots.
    pub errors: usize,
    /// Error findings that follow from a root (`caused_by`), listed under
    /// it and not counted.
    pub consequences: usize,
    /// Kustomizations the roots block.
    pub blocked: usize,
    /// Warning findings that count.
    pub warnings: usize,
    /// Root-cause errors by rule, most first.
    pub roots_by_rule: Vec<(String, usize)>,
    /// Warnings by rule, most first.
    pub warnings_by_rule: Vec<(String, usize)>,
    /// Kustomizations whose build fails.
    pub unbuilt: Vec<String>,
    /// Kustomizations not checked, or checked in part (`cluster/name
    /// (file:line)`), and why.
    pub unchecked: Vec<(String, String)>,
    /// What the clusters refer to that may come from outside what the run
    /// reads: per cluster, its items (with who refers to each) and the
    /// evidence that the run is not the cluster's whole world.
    pub boundary: Vec<(String, Vec<String>, Vec<String>)>,
}

impl Overview {
    /// The overview of the clusters a run reports on (`selected` empty:
    /// all).
    pub fn of(outcome: &Outcome, selected: &[String]) -> Overview {
        let by_rule = |keep: &dyn Fn(&Finding) -> bool| -> Vec<(String, usize)> {
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for f in outcome.findings.iter().filter(|f| f.counts() && keep(f)) {
                *counts.entry(f.rule().as_str().to_string()).or_default() += 1;
            }
            let mut counts: Vec<(String, usize)> = counts.into_iter().collect();
            counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            counts
        };
        let mut o = Overview {
            errors: outcome.errors(),
            consequences: outcome.consequences(),
            blocked: outcome.blocked(),
            warnings: outcome.warnings(),
            roots_by_rule: by_rule(&|f| f.is_error()),
            warnings_by_rule: by_rule(&|f| {
                f.severity() == rules::Severity::Warning && !f.is_blocked()
            }),
            ..Overview::default()
        };
        for item in outcome.boundary() {
            let line = match item.referred_by.as_slice() {
                [one] => format!("{} (referred to by {one})", item.item),
                many => format!(
                    "{} (referred to by {} Kustomizations: {})",
                    item.item,
                    many.len(),
                    many.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                        + if many.len() > 3 { ", …" } else { "" }
                ),
            };
            match o.boundary.iter_mut().find(|(c, _, _)| *c == item.cluster) {
                Some((_, lines, _)) => lines.push(line),
                None => o.boundary.push((item.cluster, vec![line], item.evidence)),
            }
        }
        for cluster in &outcome.model.clusters {
            if !selected.is_empty() && !selected.contains(&cluster.name) {
                continue;
            }
            for tier in cluster.tiers.values() {
                let name = format!("{}/{}", cluster.name, cluster.tier_label(&tier.id));
                match &tier.state {
                    TierState::RenderFailed(_) => {
                        o.unbuilt.push(format!("{name} ({})", tier.defined_at));
                    }
                    TierState::NotChecked(reason) => {
                        o.unchecked
                            .push((format!("{name} ({})", tier.defined_at), reason.to_string()));
                    }
                    _ => {
                        if let Some(reason) = tier.partial_reason() {
                            o.unchecked
                                .push((format!("{name} ({})", tier.defined_at), reason));
                        }
                    }
                }
            }
        }
        o
    }

    /// No finding, and every Kustomization built and checked.
    pub fn is_clean(&self) -> bool {
        self.errors == 0
            && self.warnings == 0
            && self.unbuilt.is_empty()
            && self.unchecked.is_empty()
    }
}

/// The "not checked" lines, `who: why`, with those that share their
/// reason folded: a parent that does not build leaves every child it
/// applies unchecked for the same reason (112 lines on one home lab),
/// said once with the first `names` of them.
pub fn fold_unchecked(unchecked: &[(String, String)], names: usize) -> Vec<String> {
    let mut order: Vec<&str> = Vec::new();
    let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (who, why) in unchecked {
        let whos = by_reason.entry(why.as_str()).or_insert_with(|| {
            order.push(why);
            Vec::new()
        });
        whos.push(who);
    }
    let mut out = Vec::new();
    for why in order {
        let whos = &by_reason[why];
        if whos.len() <= names {
            out.extend(whos.iter().map(|who| format!("{who}: {why}")));
        } else {
            out.push(format!(
                "{} Kustomizations: {why} ({} and {} more; every one in --format json)",
                whos.len(),
                whos[..names].join(", "),
                whos.len() - names
            ));
        }
    }
    out
}

/// What a report needs beside the outcome.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// The repository as the user named it.
    pub repo: &'a str,
    /// The clusters the user asked for (all when empty).
    pub clusters: &'a [String],
    /// How long the check took (the human report says).
    pub elapsed: Duration,
    /// Where the rules are documented (`--doc-url`): SARIF's
    /// `informationUri` and each rule's `helpUri`.
    pub doc_url: Option<&'a str>,
}

/// The report of one check in `format`. Every format is rendered from the
/// same outcome: nothing reruns the check.
pub fn render(
    format: Format,
    outcome: &Outcome,
    options: &Options,
) -> Result<String, serde_json::Error> {
    Ok(match format {
        Format::Json => {
            let doc = json::render(outcome, options.repo, options.clusters);
            let mut text = serde_json::to_string_pretty(&doc)?;
            text.push('\n');
            text
        }
        Format::Github => text_safe(&ci::github(outcome)).into_owned(),
        Format::Junit => text_safe(&ci::junit(outcome, options.clusters)).into_owned(),
        Format::Sarif => {
            let mut text = serde_json::to_string_pretty(&ci::sarif(outcome, options.doc_url))?;
            text.push('\n');
            text
        }
        Format::Human => {
            text_safe(&human::render(outcome, options.clusters, options.elapsed)).into_owned()
        }
        Format::Markdown => text_safe(&markdown::render(outcome, options.clusters)).into_owned(),
    })
}

/// `text` safe to print or to embed in a report: every control character
/// but the line break and the tab (an escape sequence a terminal would
/// obey, a character XML 1.0 cannot carry), and the bidirectional
/// overrides that reorder what a reader sees, written as `\xNN` or
/// `\u{NNNN}`. Repository text (a name, a message quoting a file) reaches
/// every text report; JSON and SARIF escape it themselves.
pub fn text_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
        } else if (c as u32) <= 0xff {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The findings that follow from each root, by the root's id
/// (`caused_by`), in report order: built once per report, so listing the
/// consequences under each root stays linear.
#[derive(Debug, Default)]
pub struct Following<'f> {
    by_root: BTreeMap<&'f str, Vec<&'f Finding>>,
}

impl<'f> Following<'f> {
    /// The index of `findings`.
    pub fn of(findings: &'f [Finding]) -> Following<'f> {
        let mut by_root: BTreeMap<&'f str, Vec<&'f Finding>> = BTreeMap::new();
        for f in findings {
            if let Some(root) = f.caused_by() {
                by_root.entry(root).or_default().push(f);
            }
        }
        Following { by_root }
    }

    /// The findings that follow from any of `roots`, in report order.
    pub fn of_roots(&self, roots: &[&Finding]) -> Vec<&'f Finding> {
        if self.by_root.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<&'f Finding> = roots
            .iter()
            .flat_map(|r| {
                self.by_root
                    .get(r.id().as_str())
                    .into_iter()
                    .flatten()
                    .copied()
            })
            .collect();
        out.dedup_by(|a, b| std::ptr::eq(*a, *b));
        out
    }
}

/// What a set of roots blocks, once: the Kustomizations (first `names` of
/// them by name, in order) and the findings in them that follow from the
/// roots, by rule.
#[derive(Debug, Default)]
pub struct Blocks {
    /// `cluster/kustomization`, each once, in the roots' order.
    pub kustomizations: Vec<String>,
    /// Findings that follow from the roots, by rule, most first.
    pub by_rule: Vec<(String, usize)>,
    /// How many findings follow from the roots.
    pub findings: usize,
}

impl Blocks {
    /// What `roots` block, with `following` their consequences.
    pub fn of(roots: &[&Finding], following: &[&Finding]) -> Blocks {
        let mut seen = std::collections::BTreeSet::new();
        let mut kustomizations = Vec::new();
        for r in roots {
            for b in r.blocks() {
                let name = format!("{}/{}", r.cluster(), b.kustomization);
                if seen.insert(name.clone()) {
                    kustomizations.push(name);
                }
            }
        }
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for f in following {
            *counts.entry(f.rule().as_str().to_string()).or_default() += 1;
        }
        let mut by_rule: Vec<(String, usize)> = counts.into_iter().collect();
        by_rule.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Blocks {
            kustomizations,
            by_rule,
            findings: following.len(),
        }
    }

    /// Nothing blocked.
    pub fn is_empty(&self) -> bool {
        self.kustomizations.is_empty() && self.findings == 0
    }

    /// "blocks 3 Kustomizations on a cold start: prod/apps, prod/db and
    /// 1 more", naming at most `names` of them.
    pub fn headline(&self, names: usize) -> String {
        let n = self.kustomizations.len();
        let shown: Vec<&str> = self
            .kustomizations
            .iter()
            .take(names)
            .map(String::as_str)
            .collect();
        let more = n.saturating_sub(shown.len());
        let list = match more {
            0 => shown.join(", "),
            _ => format!("{} and {more} more", shown.join(", ")),
        };
        format!(
            "blocks {n} Kustomization{} on a cold start{}",
            plural(n),
            if n > 0 {
                format!(": {list}")
            } else {
                String::new()
            }
        )
    }

    /// "5 findings in them follow from it (crd-unavailable 3,
    /// namespace-missing 2)", or nothing.
    pub fn following(&self) -> Option<String> {
        (self.findings > 0).then(|| {
            format!(
                "{} finding{}{} follow{} from it ({})",
                self.findings,
                plural(self.findings),
                if self.kustomizations.is_empty() {
                    ""
                } else {
                    " in them"
                },
                if self.findings == 1 { "s" } else { "" },
                self.by_rule
                    .iter()
                    .map(|(rule, n)| format!("{rule} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

/// "44 ExternalSecrets in 30 Kustomizations", for a group's header.
pub fn group_size(members: &[&Finding]) -> String {
    let tiers: std::collections::BTreeSet<&str> =
        members.iter().map(|f| f.kustomization()).collect();
    let kinds: std::collections::BTreeSet<&str> = members
        .iter()
        .filter_map(|f| f.object())
        .map(|o| o.split('/').next().unwrap_or(o))
        .collect();
    let what = match (kinds.len(), members.iter().all(|f| f.object().is_some())) {
        (1, true) => format!(
            "{} {}",
            members.len(),
            plural_kind(kinds.iter().next().expect("one kind"))
        ),
        _ => format!("{} findings", members.len()),
    };
    let where_ = if tiers.len() == 1 {
        "in 1 Kustomization".to_string()
    } else {
        format!("in {} Kustomizations", tiers.len())
    };
    format!("{what} {where_}")
}

/// The plural ending of a count: `""` for one, `"s"` otherwise.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A kind in the plural, as the API server names its resource (`Policy`
/// → `Policies`, `Ingress` → `Ingresses`, `Endpoints` stays).
fn plural_kind(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with("endpoints") {
        kind.to_string()
    } else if lower.ends_with('y')
        && !lower.ends_with("ay")
        && !lower.ends_with("ey")
        && !lower.ends_with("oy")
        && !lower.ends_with("uy")
    {
        format!("{}ies", &kind[..kind.len() - 1])
    } else if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        format!("{kind}es")
    } else {
        format!("{kind}s")
    }
}

/// Counts of what a run covered, for summary lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Clusters reported on.
    pub clusters: usize,
    /// Their Kustomizations (tiers).
    pub kustomizations: usize,
    /// Kustomizations that rendered.
    pub rendered: usize,
    /// Kustomizations whose build failed.
    pub failed: usize,
    /// Kustomizations not built (another source, remote bases, …).
    pub not_checked: usize,
    /// Objects the rendered Kustomizations produce.
    pub objects: usize,
    /// The clusters' names, in discovery order.
    pub names: Vec<String>,
}

impl Coverage {
    /// Coverage of the clusters a run reports on (`selected` empty: all).
    pub fn of(outcome: &Outcome, selected: &[String]) -> Coverage {
        let mut c = Coverage::default();
        for cluster in outcome
            .model
            .clusters
            .iter()
            .filter(|c| selected.is_empty() || selected.contains(&c.name))
        {
            c.clusters += 1;
            c.names.push(cluster.name.clone());
            for tier in cluster.tiers.values() {
                c.kustomizations += 1;
                match &tier.state {
                    TierState::Rendered(objects) => {
                        c.rendered += 1;
                        c.objects += objects.len();
                    }
                    TierState::RenderFailed(_) => c.failed += 1,
                    TierState::NotChecked(_) => c.not_checked += 1,
                }
            }
        }
        c
    }

    /// `1 cluster (prod), 79 Kustomizations (79 rendered, 0 failed, 0 not
    /// checked; 519 objects)`: what every report says was checked, the
    /// clusters by name (the first eight).
    pub fn describe(&self) -> String {
        let mut names = self
            .names
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if self.names.len() > 8 {
            names.push_str(&format!(" and {} more", self.names.len() - 8));
        }
        let names = if names.is_empty() {
            String::new()
        } else {
            format!(" ({names})")
        };
        format!(
            "{} cluster{}{names}, {} Kustomization{} ({} rendered, {} failed, {} not checked; {} object{})",
            self.clusters,
            plural(self.clusters),
            self.kustomizations,
            plural(self.kustomizations),
            self.rendered,
            self.failed,
            self.not_checked,
            self.objects,
            plural(self.objects)
        )
    }
}

#[cfg(test)]
mod plural_tests {
    use super::fold_unchecked;

    #[test]
    fn unchecked_lines_with_one_reason_are_said_once() {
        let unchecked: Vec<(String, String)> = (0..5)
            .map(|i| {
                (
                    format!("prod/app{i} (apps/{i}/ks.yaml:3)"),
                    "its parent apps did not build".to_string(),
                )
            })
            .chain([(
                "prod/other (o.yaml:1)".to_string(),
                "a remote base".to_string(),
            )])
            .collect();
        let folded = fold_unchecked(&unchecked, 3);
        assert_eq!(folded.len(), 2, "{folded:?}");
        assert_eq!(
            folded[0],
            "5 Kustomizations: its parent apps did not build (prod/app0 (apps/0/ks.yaml:3), prod/app1 (apps/1/ks.yaml:3), prod/app2 (apps/2/ks.yaml:3) and 2 more; every one in --format json)"
        );
        assert_eq!(folded[1], "prod/other (o.yaml:1): a remote base");
        // Three or fewer keep a line each.
        assert_eq!(
            fold_unchecked(&unchecked[..3], 3),
            unchecked[..3]
                .iter()
                .map(|(who, why)| format!("{who}: {why}"))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn kinds_in_the_plural() {
        for (k, p) in [
            ("HelmRepository", "HelmRepositories"),
            ("ImagePolicy", "ImagePolicies"),
            ("Gateway", "Gateways"),
            ("Ingress", "Ingresses"),
            ("ExternalSecret", "ExternalSecrets"),
            ("Endpoints", "Endpoints"),
        ] {
            assert_eq!(super::plural_kind(k), p);
        }
    }
}
