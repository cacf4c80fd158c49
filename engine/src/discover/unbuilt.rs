//! What no build shows: Kustomizations that a tier which did not build
//! would apply (kept under that tier, not checked, never clusters of their
//! own), and Kustomization files that no cluster applies at all (listed
//! once). kustomize-controller applies a child only from its parent's build
//! output (`KustomizationReconciler.apply`), so neither exists on a cluster
//! until something builds it.

use std::collections::BTreeSet;

use super::{LocalSources, is_flux_kustomization, tier_from};
use crate::model::{Cluster, Entry, Span, Tier, TierId, TierState};
use crate::render::flux;
use crate::repo::RepoIndex;
use crate::yaml::Node;

/// Whether a tier of this repository was not built (its build failed, a
/// remote base it needs is not here, a file over a budget): what its path
/// holds is unknown, not unapplied.
fn unbuilt(tier: &Tier) -> bool {
    match &tier.state {
        TierState::RenderFailed(_) => true,
        TierState::NotChecked(_) => !tier.remote_bases.is_empty() || tier.over_budget.is_some(),
        _ => false,
    }
}

/// The unbuilt tier whose path holds `file`, in any cluster but `except`.
fn unbuilt_holding<'a>(
    clusters: &'a [Cluster],
    file: &str,
    except: Option<usize>,
) -> Option<(usize, &'a Tier)> {
    clusters.iter().enumerate().find_map(|(i, c)| {
        (Some(i) != except)
            .then(|| {
                c.tiers.values().find(|t| {
                    unbuilt(t) && {
                        let path = t.path.trim_matches('/');
                        path.is_empty() || file.starts_with(&format!("{path}/"))
                    }
                })
            })
            .flatten()
            .map(|t| (i, t))
    })
}

/// A cluster whose entry lies under the path of another cluster's tier that
/// did not build is no cluster: it is a child that tier would apply, so its
/// entry becomes a tier of that cluster, not checked until its parent
/// builds (kustomize-controller applies a child only from its parent's
/// build output).
pub(super) fn adopt_under_unbuilt(
    mut clusters: Vec<Cluster>,
    notes: &mut Vec<String>,
) -> Vec<Cluster> {
    let mut i = 0;
    while i < clusters.len() {
        let entry_file = match &clusters[i].entry {
            Entry::SyncKustomization { tier, .. } => clusters[i]
                .tiers
                .get(tier)
                .map(|t| t.defined_at.file.clone()),
            Entry::Directory { path } => Some(format!("{path}/")),
        };
        let holder = entry_file
            .as_deref()
            .and_then(|f| unbuilt_holding(&clusters, f, Some(i)))
            .map(|(j, t)| (j, t.id.clone(), t.path.clone()));
        let Some((j, parent, parent_path)) = holder else {
            i += 1;
            continue;
        };
        let child = clusters.remove(i);
        let j = if j > i { j - 1 } else { j };
        let reason = format!(
            "its parent {parent} did not build, so what ./{parent_path} applies is not known"
        );
        notes.push(format!(
            "{} is not a cluster: it lies under ./{parent_path}, the path of {}/{parent}, which did not build; it is checked once that tier builds",
            entry_file.unwrap_or_default().trim_end_matches('/'),
            clusters[j].name,
        ));
        if let Entry::SyncKustomization { tier, .. } = &child.entry
            && let Some(mut t) = child.tiers.get(tier).cloned()
            && !clusters[j].tiers.contains_key(tier)
        {
            t.parent = Some(parent);
            t.state = TierState::NotChecked(reason);
            clusters[j].tiers.insert(tier.clone(), t);
        }
    }
    clusters
}

/// The Flux Kustomizations in the repository's files that no tier of any
/// cluster is (by file and name) and no build reads, outside hidden
/// directories and outside the paths of tiers that did not build.
pub(super) fn unreferenced(
    index: &RepoIndex,
    clusters: &[Cluster],
    read_files: &BTreeSet<String>,
) -> Vec<crate::model::Unreferenced> {
    let tiers: BTreeSet<(&str, &str)> = clusters
        .iter()
        .flat_map(|c| c.tiers.values())
        .map(|t| (t.defined_at.file.as_str(), t.id.name.as_str()))
        .collect();
    let artifact = index.artifact();
    let unknown = unbuilt_reach(index, clusters);
    let mut out = Vec::new();
    for (file, f) in index.files() {
        if file.split('/').any(|part| part.starts_with('.'))
            || read_files.contains(file)
            || unknown.contains(file)
            || !artifact.is_file(file)
        {
            continue;
        }
        let Ok(docs) = f.docs().as_ref() else {
            continue;
        };
        for doc in docs.iter().filter(|d| is_flux_kustomization(d)) {
            let name = doc.str_at(&["metadata", "name"]).unwrap_or_default();
            if tiers.contains(&(file, name.as_str()))
                || unbuilt_holding(clusters, file, None).is_some()
            {
                continue;
            }
            let namespace = doc.str_at(&["metadata", "namespace"]);
            out.push(crate::model::Unreferenced {
                applied_by: None,
                at: Span::new(file, doc.line),
                name: match namespace {
                    Some(ns) => format!("{ns}/{name}"),
                    None => name,
                },
            });
        }
    }
    out
}

/// The files a tier that did not build might apply, statically: what its
/// path reads, and through the Flux Kustomizations in those files, what
/// their paths read, and so on. Nothing in them is known to be unapplied.
fn unbuilt_reach(index: &RepoIndex, clusters: &[Cluster]) -> BTreeSet<String> {
    let artifact = index.artifact();
    let mut queue: Vec<String> = clusters
        .iter()
        .flat_map(|c| c.tiers.values())
        .filter(|t| unbuilt(t))
        .map(|t| t.path.clone())
        .collect();
    let mut seen = BTreeSet::new();
    let mut files = BTreeSet::new();
    while let Some(path) = queue.pop() {
        if !seen.insert(path.clone()) || !index.is_dir(&path) {
            continue;
        }
        let (reads, children) = read_by(index, &artifact, &path);
        for (_, doc) in children {
            if let Some(child) = doc.str_at(&["spec", "path"]) {
                queue.push(crate::repo::normalize("", &child).0);
            }
        }
        files.extend(reads);
    }
    files
}

/// The lines that list what nothing applies: application catalogs, what a
/// script applies by hand (once the bootstrap is read), and the rest.
pub(crate) fn unreferenced_notes(list: &[crate::model::Unreferenced]) -> Vec<String> {
    // An application catalog among them is said as one.
    let catalogs = super::layouts::catalogs(list.iter().map(|u| super::parent_dir_str(&u.at.file)));
    let mut notes: Vec<String> = catalogs
        .iter()
        .map(|(root, versions)| super::layouts::catalog_note(root, versions))
        .collect();
    let (by_hand, rest): (
        Vec<&crate::model::Unreferenced>,
        Vec<&crate::model::Unreferenced>,
    ) = list
        .iter()
        .filter(|u| !super::layouts::in_catalog(&catalogs, super::parent_dir_str(&u.at.file)))
        .partition(|u| u.applied_by.is_some());
    notes.extend(by_hand_note(&by_hand));
    notes.extend(unreferenced_note(&rest));
    notes
}

/// At most eight of them, `file:line (namespace/name)`, each with the step
/// that applies it when one does, and how many more.
fn listed(list: &[&crate::model::Unreferenced]) -> String {
    const SHOWN: usize = 8;
    let mut text = list
        .iter()
        .take(SHOWN)
        .map(|u| match &u.applied_by {
            Some(by) => format!("{} ({}) by {by}", u.at, u.name),
            None => format!("{} ({})", u.at, u.name),
        })
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > SHOWN {
        text.push_str(&format!(
            ", and {} more (all under `unreferenced` in --format json)",
            list.len() - SHOWN
        ));
    }
    text
}

/// Kustomizations a script applies by hand (discovery finds roots in git
/// only; [`crate::provenance::bootstrap::by_hand`] marks them): where, and
/// the line of conformance.yaml that checks one as its cluster's entry.
fn by_hand_note(list: &[&crate::model::Unreferenced]) -> Option<String> {
    let first = list.first()?;
    let dir = super::parent_dir_str(&first.at.file);
    let name = dir
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or("NAME");
    let entry = if dir.is_empty() { "." } else { dir };
    let one = list.len() == 1;
    Some(format!(
        "{} Flux Kustomization{} applied by hand, not by a Flux Kustomization of this repository, so the cluster {} join{} is not known and {} not checked: {}; to check one, declare its cluster in conformance.yaml: `clusters: {{{name}: {{entry: {entry}}}}}`",
        list.len(),
        if one { "" } else { "s" },
        if one { "it" } else { "they" },
        if one { "s" } else { "" },
        if one { "it is" } else { "they are" },
        listed(list),
    ))
}

fn unreferenced_note(list: &[&crate::model::Unreferenced]) -> Option<String> {
    if list.is_empty() {
        return None;
    }
    let one = list.len() == 1;
    Some(format!(
        "{} Flux Kustomization{} that no cluster applies (no build reads {}), so not checked: {}; a cluster whose sync is made outside git (Terraform, a cloud extension, `flux create`) is declared in conformance.yaml: `clusters: {{NAME: {{entry: DIR}}}}`",
        list.len(),
        if one { "" } else { "s" },
        if one { "its file" } else { "their files" },
        listed(list)
    ))
}

/// The Kustomizations a tier that did not build would apply, as far as its
/// path shows them statically (and theirs, and so on), become tiers of its
/// cluster under it, not checked: what the build would give is unknown, but
/// they are neither clusters nor forgotten files, and `dependsOn` on them
/// names something real.
pub(super) fn adopt_unbuilt_children(
    index: &RepoIndex,
    clusters: &mut [Cluster],
    local: &LocalSources,
) {
    let artifact = index.artifact();
    for cluster in clusters.iter_mut() {
        let mut queue: Vec<(TierId, String, bool)> = cluster
            .tiers
            .values()
            .filter(|t| unbuilt(t))
            .map(|t| (t.id.clone(), t.path.clone(), true))
            .collect();
        let mut seen = BTreeSet::new();
        while let Some((parent, path, built_failed)) = queue.pop() {
            if !seen.insert(path.clone()) || !index.is_dir(&path) {
                continue;
            }
            for (file, doc) in read_by(index, &artifact, &path).1 {
                let mut tier =
                    tier_from(doc, Span::new(&file, doc.line), Some(parent.clone()), local);
                if cluster.tiers.contains_key(&tier.id) {
                    continue;
                }
                tier.state = TierState::NotChecked(if built_failed {
                    format!(
                        "its parent {parent} did not build, so whether ./{path} applies it is not known"
                    )
                } else {
                    format!("its parent {parent} is not checked")
                });
                queue.push((tier.id.clone(), tier.path.clone(), false));
                cluster.tiers.insert(tier.id.clone(), tier);
            }
        }
    }
}

/// What a build of `path` reads, statically, and the Flux Kustomizations in
/// those files (with their file): the one walk both the unreferenced list
/// and the adoption of unbuilt children follow.
fn read_by<'a>(
    index: &'a RepoIndex,
    artifact: &crate::repo::Artifact,
    path: &str,
) -> (BTreeSet<String>, Vec<(String, &'a Node)>) {
    let reads = flux::reach(artifact, path).reads;
    let children = reads
        .iter()
        .filter_map(|file| Some((file, index.file(file)?.docs().as_ref().ok()?)))
        .flat_map(|(file, docs)| {
            docs.iter()
                .filter(|d| is_flux_kustomization(d))
                .map(move |d| (file.clone(), d))
        })
        .collect();
    (reads, children)
}
