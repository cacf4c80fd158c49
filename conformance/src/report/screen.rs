//! The first screen: what the human, GitHub and Markdown reports show, in
//! the order a reader should fix it. Findings that share a cause are one
//! block (the rule's own cause, or the same place in a file several
//! Kustomizations include); the very same finding on several clusters is
//! one block; errors come before warnings, and among them the roots that
//! keep most Kustomizations from becoming Ready.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{Blocks, Following, plural};
use crate::check::Outcome;
use crate::rules::{self, Cause, Finding};

/// A finding, or several that share a root cause: what the human and
/// GitHub reports show one by one.
#[derive(Debug, Clone)]
pub enum Item<'f> {
    /// A finding shown on its own.
    One(&'f Finding),
    /// Findings of one rule and cluster with the same [`Cause`] (two or
    /// more; waived ones are never grouped): the rule's, or, for findings
    /// without one, the same place in a file several Kustomizations
    /// include.
    Group {
        /// The root cause the members share.
        cause: Cow<'f, Cause>,
        /// The findings of the group, in report order.
        members: Vec<&'f Finding>,
    },
}

/// The findings in report order, those sharing a cause folded into one
/// group where the first of them was. Findings the baseline accepts are
/// left out (they are counted, not shown).
pub fn items(findings: &[Finding]) -> Vec<Item<'_>> {
    // The rule's cause, else the place: one file (a component, a base)
    // included by several Kustomizations reports the same problem in each.
    let key = |f: &Finding| -> Option<(rules::RuleId, String, String)> {
        if f.waived().is_some() {
            return None;
        }
        match (f.cause(), f.at()) {
            (Some(c), _) => Some((f.rule(), f.cluster().to_string(), c.key.clone())),
            (None, Some(at)) if at.line > 0 => Some((
                f.rule(),
                f.cluster().to_string(),
                format!("\0place:{}:{at}", f.severity().as_str()),
            )),
            _ => None,
        }
    };
    let mut groups: BTreeMap<(rules::RuleId, String, String), Vec<&Finding>> = BTreeMap::new();
    for f in findings.iter().filter(|f| !f.baselined()) {
        if let Some(k) = key(f) {
            groups.entry(k).or_default().push(f);
        }
    }
    // A consequence is shown under its root, when the root is reported.
    let ids: std::collections::BTreeSet<String> = findings.iter().map(|f| f.id()).collect();
    let mut out = Vec::new();
    for f in findings.iter().filter(|f| !f.baselined()) {
        if f.caused_by().is_some_and(|c| ids.contains(c)) {
            continue;
        }
        match key(f).and_then(|k| groups.get(&k)) {
            Some(members) if members.len() > 1 && (f.cause().is_some() || one_each(members)) => {
                if std::ptr::eq(members[0], f) {
                    out.push(Item::Group {
                        cause: match f.cause() {
                            Some(c) => Cow::Borrowed(c),
                            None => Cow::Owned(same_place(members)),
                        },
                        members: members.clone(),
                    });
                }
            }
            _ => out.push(Item::One(f)),
        }
    }
    out
}

/// Whether findings at one place are one per Kustomization: the same
/// problem in each Kustomization that includes the file (two findings of
/// one Kustomization at one place are two problems).
fn one_each(members: &[&Finding]) -> bool {
    let tiers: std::collections::BTreeSet<&str> =
        members.iter().map(|f| f.kustomization()).collect();
    tiers.len() == members.len()
}

/// The cause of findings at one place of a file several Kustomizations
/// include: the first one's message, and the fix they share (or the
/// first one's, said to apply to each).
fn same_place(members: &[&Finding]) -> Cause {
    let first = members[0];
    let at = first.at().map(|a| a.to_string()).unwrap_or_default();
    let same_fix = members.iter().all(|m| m.fix() == first.fix());
    Cause {
        key: format!("place:{at}"),
        text: format!(
            "{at}, included by each of them: {}{}",
            first.message(),
            if members.len() > 1 {
                " (and likewise in the others)"
            } else {
                ""
            }
        ),
        fix: if same_fix {
            first.fix().to_string()
        } else {
            format!("{} (and likewise for each)", first.fix())
        },
    }
}

impl<'f> Item<'f> {
    /// The findings it shows.
    pub fn members(&self) -> Vec<&'f Finding> {
        match self {
            Item::One(f) => vec![*f],
            Item::Group { members, .. } => members.clone(),
        }
    }

    /// The first finding (a group's place and severity).
    pub fn first(&self) -> &'f Finding {
        match self {
            Item::One(f) => f,
            Item::Group { members, .. } => members[0],
        }
    }

    /// What makes two items on different clusters the same: everything
    /// but the cluster.
    fn same_key(&self) -> String {
        let f = self.first();
        let mut key = format!(
            "{}\0{}\0{}",
            f.rule(),
            f.severity().as_str(),
            f.waived().is_some()
        );
        match self {
            Item::One(f) => {
                let at = f.at().map(|a| a.to_string()).unwrap_or_default();
                // A message that names its cluster ("not a Kustomization in
                // cluster prod") is the same on every cluster.
                let message = f
                    .message()
                    .replace(&format!("cluster {}", f.cluster()), "cluster \0");
                key.push_str(&format!(
                    "\0{}\0{}\0{at}\0{message}",
                    f.kustomization(),
                    f.object().unwrap_or(""),
                ));
            }
            Item::Group { cause, members } => {
                let text = cause
                    .text
                    .replace(&format!("cluster {}", members[0].cluster()), "cluster \0");
                key.push_str(&format!("\0{text}\0{}", cause.fix));
                for m in members {
                    let at = m.at().map(|a| a.to_string()).unwrap_or_default();
                    key.push_str(&format!(
                        "\0{}\0{}\0{at}",
                        m.kustomization(),
                        m.object().unwrap_or(m.message())
                    ));
                }
            }
        }
        key
    }
}

/// One block of the first screen: an item, the other clusters where the
/// very same item is (an overlay's copy of a base reports the same problem
/// once per cluster), and what its roots block.
#[derive(Debug)]
pub struct Shown<'f> {
    /// The item, on the first cluster it was found on.
    pub item: Item<'f>,
    /// The other clusters with the same item (same rule, Kustomization,
    /// object, place and message).
    pub also_on: Vec<&'f str>,
    /// The findings that follow from the item's roots (on its first
    /// cluster).
    pub following: Vec<&'f Finding>,
    /// Kustomizations the item blocks on a cold start, summed over the
    /// clusters it is on.
    pub blocked: usize,
    /// For an error, the Kustomizations that wait for its Kustomization
    /// (depend on it or are applied by it), summed over the clusters it
    /// is on: what it holds back, as the order counts it.
    pub behind: usize,
    /// Findings that follow from it, summed over the clusters it is on.
    pub consequences: usize,
}

impl Shown<'_> {
    /// How it ranks: counted errors, then warnings, then waived findings;
    /// within each, what it blocks or holds back, then what follows from
    /// it, then how many findings and clusters it stands for.
    fn rank(&self) -> (u8, std::cmp::Reverse<(usize, usize, usize)>) {
        let f = self.item.first();
        let class = match (f.waived(), f.severity()) {
            (None, rules::Severity::Error) => 0,
            (None, rules::Severity::Warning) => 1,
            (Some(_), _) => 2,
        };
        let size = self.item.members().len() * (1 + self.also_on.len());
        (
            class,
            std::cmp::Reverse((self.blocked.max(self.behind), self.consequences, size)),
        )
    }
}

/// What the human, GitHub and Markdown reports show, in the order a reader
/// should fix it: each shared cause once (one block per cause, and one per
/// identical finding on several clusters), errors before warnings, and
/// within them the roots that block most first. The order is stable:
/// equal ranks keep the report order (cluster, Kustomization, rule).
pub fn screen(outcome: &Outcome) -> Vec<Shown<'_>> {
    let findings = &outcome.findings;
    let index = Following::of(findings);
    let mut reach = Reach::of(outcome);
    let mut shown: Vec<Shown<'_>> = Vec::new();
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for item in items(findings) {
        let members = item.members();
        let following = index.of_roots(&members);
        let blocks = Blocks::of(&members, &following);
        // What an error holds back orders the errors; warnings keep the
        // model's own count.
        let behind = if item.first().is_error() {
            reach.behind(&members)
        } else {
            0
        };
        let key = item.same_key();
        if let Some(&i) = by_key.get(&key) {
            let s = &mut shown[i];
            s.also_on.push(item.first().cluster());
            s.blocked += blocks.kustomizations.len();
            s.behind += behind;
            s.consequences += blocks.findings;
            continue;
        }
        by_key.insert(key, shown.len());
        shown.push(Shown {
            blocked: blocks.kustomizations.len(),
            behind,
            consequences: blocks.findings,
            item,
            also_on: Vec::new(),
            following,
        });
    }
    shown.sort_by_key(|s| s.rank());
    shown
}

/// Per cluster and Kustomization, how many Kustomizations wait for it:
/// those that depend on it, directly or through others, and those it
/// applies. An error that stops a Kustomization holds them all back,
/// whether or not the cold-start model (which takes a missing dependency
/// or an unbuilt tier as met, so as not to claim what it cannot see)
/// lists them as blocked; the order of the first screen counts them.
/// Counted only for the Kustomizations errors are in, each once.
struct Reach {
    /// Per cluster, each Kustomization's label → the labels of those that
    /// wait for it directly.
    after: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    counted: BTreeMap<(String, String), usize>,
}

impl Reach {
    fn of(outcome: &Outcome) -> Reach {
        let mut after: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for cluster in &outcome.model.clusters {
            let graph = crate::graph::TierGraph::of(cluster);
            let label = |id| cluster.tier_label(id);
            let edges = after.entry(cluster.name.clone()).or_default();
            for (dependent, deps) in &graph.edges {
                for dep in deps {
                    edges.entry(label(dep)).or_default().push(label(dependent));
                }
            }
            for (child, parent) in &graph.parents {
                edges.entry(label(parent)).or_default().push(label(child));
            }
        }
        Reach {
            after,
            counted: BTreeMap::new(),
        }
    }

    /// The most Kustomizations behind any of the members' Kustomizations.
    fn behind(&mut self, members: &[&Finding]) -> usize {
        members
            .iter()
            .map(|f| self.behind_one(f.cluster(), f.kustomization()))
            .max()
            .unwrap_or(0)
    }

    fn behind_one(&mut self, cluster: &str, tier: &str) -> usize {
        let key = (cluster.to_string(), tier.to_string());
        if let Some(&n) = self.counted.get(&key) {
            return n;
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(edges) = self.after.get(cluster) {
            let mut stack = vec![tier];
            while let Some(t) = stack.pop() {
                for next in edges.get(t).into_iter().flatten() {
                    if next != tier && seen.insert(next.as_str()) {
                        stack.push(next);
                    }
                }
            }
        }
        self.counted.insert(key, seen.len());
        seen.len()
    }
}

/// "also on 3 more clusters: dev, stg and test", naming at most `names`.
pub fn also_on(clusters: &[&str], names: usize) -> Option<String> {
    if clusters.is_empty() {
        return None;
    }
    let shown: Vec<&str> = clusters.iter().take(names).copied().collect();
    let more = clusters.len() - shown.len();
    let list = if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    };
    Some(format!(
        "the same on {} more cluster{}: {list}",
        clusters.len(),
        plural(clusters.len())
    ))
}
