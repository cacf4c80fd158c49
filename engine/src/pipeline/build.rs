//! The second stage: every cluster discovered and every tier built, as
//! kustomize-controller would build it ([`crate::discover`] walks, the
//! renderer builds, and each build's places are complete when it returns);
//! then the bootstrap is read, and the clusters one script applies
//! together become one.

use std::path::Path;

use super::{Declared, SessionError};
use crate::discover;
use crate::model::Model;
use crate::provenance::bootstrap::{self, Bootstrap};
use crate::repo::RepoIndex;
use crate::stats::stat;

/// The clusters as built, before postBuild substitution, with what the
/// repository installs before Flux.
#[derive(Debug)]
pub struct Built {
    /// The discovered clusters, every tier built (objects not yet
    /// substituted), merged as the bootstrap applies them.
    pub model: Model,
    /// What the repository installs before Flux.
    pub bootstrap: Bootstrap,
}

/// Discovers and builds every cluster, reads the bootstrap, and merges the
/// entries one script applies into one cluster.
pub fn build(declared: &Declared) -> Result<Built, SessionError> {
    let started = std::time::Instant::now();
    let input = super::discovery::discovery_input(&declared.config);
    let mut model = discover::discover_with(&declared.index, declared.renderer(), &input);
    stat("discover+render", started);
    if model.clusters.is_empty() {
        // A repository that is only an application catalog says so.
        if let Some(note) = model
            .notes
            .iter()
            .find(|n| n.contains("is an application catalog"))
        {
            return Err(SessionError::Catalog {
                repo: declared.repo.display().to_string(),
                note: note.clone(),
            });
        }
        return Err(no_clusters(&declared.repo, &declared.index));
    }
    let started = std::time::Instant::now();
    crate::progress::show("reading the bootstrap");
    let scripts = bootstrap::scripts::read(
        &declared.index,
        declared.catalog.documented_steps.unwrap_or(true),
    );
    // Entries one script applies into one cluster are one cluster.
    let merged = bootstrap::merge::apply(&mut model, &scripts);
    model.notes.extend(merged);
    // A Kustomization no build applies but a script does is a root of a
    // cluster the repository does not name, not a forgotten file.
    bootstrap::by_hand::mark(&mut model, &scripts, &declared.index);
    let mut bootstrap = Bootstrap::read_with(&declared.index, &model, &declared.catalog, &scripts);
    // A step conformance.yaml's `provides:` speaks for is no longer unknown.
    bootstrap
        .unread
        .retain(|u| !declared.config.provides.iter().any(|p| p.settles(&u.at)));
    stat("bootstrap", started);
    // What each HelmRelease's chart installs, read from the chart.
    let started = std::time::Instant::now();
    super::charts::read_charts(&mut model, &declared.index, input.remote.as_deref());
    stat("charts", started);
    Ok(Built { model, bootstrap })
}

/// Why a repository has no cluster: no Flux Kustomization at all, or only
/// ones built from other sources (which are named, so the user can map an
/// OCI artifact built from this repository).
fn no_clusters(repo: &Path, index: &RepoIndex) -> SessionError {
    let repo = repo.display().to_string();
    let mut sources: Vec<String> = index
        .files()
        .filter_map(|(_, f)| f.docs().as_ref().ok())
        .flatten()
        .filter(|d| discover::is_flux_kustomization(d))
        .filter_map(|d| {
            Some(format!(
                "{}/{}",
                d.str_at(&["spec", "sourceRef", "kind"])?,
                d.str_at(&["spec", "sourceRef", "name"])?
            ))
        })
        .collect();
    sources.sort();
    sources.dedup();
    if sources.len() > 6 {
        let more = sources.len() - 5;
        sources.truncate(5);
        sources.push(format!("and {more} more"));
    }
    if let Some(dir) = subdirectory_root(index) {
        return SessionError::RootBelow {
            hint: format!("{}/{dir}", repo.trim_end_matches('/')),
            repo,
            dir,
        };
    }
    if let Some(at) = bicep_flux_configuration(index) {
        return SessionError::NotReadYet {
            repo,
            what: format!(
                "{at} defines a Flux configuration in Bicep (Microsoft.KubernetesConfiguration/fluxConfigurations), which this tool does not read yet"
            ),
        };
    }
    if sources.is_empty() {
        SessionError::NoClusters { repo }
    } else {
        SessionError::NoLocalClusters {
            repo,
            sources: sources.join(", "),
        }
    }
}

/// A Bicep file (or ARM template) defining an AKS Flux configuration: its
/// entry is outside what this tool reads, and saying so beats "no Flux
/// Kustomization".
fn bicep_flux_configuration(index: &RepoIndex) -> Option<String> {
    index
        .below("")
        .filter(|(p, k)| {
            **k == crate::repo::Kind::File && (p.ends_with(".bicep") || p.ends_with(".json"))
        })
        .find_map(|(p, _)| {
            let text = index.read_text(p).ok()?;
            let line = text
                .lines()
                .position(|l| l.contains("Microsoft.KubernetesConfiguration/fluxConfigurations"))?;
            Some(format!("{p}:{}", line + 1))
        })
}

/// The directory the repository's Flux paths are relative to, when they do
/// not resolve at the root but do below one directory (the artifact is a
/// subdirectory of this checkout).
fn subdirectory_root(index: &RepoIndex) -> Option<String> {
    let paths: Vec<String> = index
        .all_files()
        .filter_map(|(_, f)| f.docs().as_ref().ok())
        .flatten()
        .filter(|d| discover::is_flux_kustomization(d))
        .filter_map(|d| d.str_at(&["spec", "path"]))
        .map(|p| crate::repo::normalize("", &p).0)
        .filter(|p| !p.is_empty() && !p.contains("${"))
        .collect();
    if paths.is_empty() || paths.iter().any(|p| index.is_dir(p)) {
        return None;
    }
    let dirs: Vec<&str> = index
        .below("")
        .filter(|(p, k)| **k == crate::repo::Kind::Dir && p.matches('/').count() < 2)
        .map(|(p, _)| p)
        .collect();
    dirs.into_iter()
        .map(|d| {
            let hits = paths
                .iter()
                .filter(|p| index.is_dir(&crate::repo::join(d, p)))
                .count();
            (hits, d)
        })
        .filter(|(hits, _)| *hits > 0)
        .max_by_key(|(hits, d)| (*hits, std::cmp::Reverse(d.len())))
        .map(|(_, d)| d.to_string())
}
