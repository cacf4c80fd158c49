//! Which cluster a bootstrap file is for.
//!
//! A script that applies some clusters' entries (`kubectl apply -f
//! flux/config/flux-config-ks.yaml`) is for those clusters: what else it
//! creates (`kubectl create namespace cso-system`) exists on them, not on
//! a cluster another script sets up. When it applies a base entry and an
//! overlay entry that the base is part of (`flux/config` and
//! `prod/flux/config`), it is for the overlay's cluster. Any other file is
//! for the clusters whose distinctive path segments (the parts of their
//! entry path no other cluster's has) its path names, else for every
//! cluster.

use std::collections::{BTreeMap, BTreeSet};

use super::merge::{entries_applied, is_base};
use super::scripts::Scripts;
use crate::model::Model;

/// Which cluster each bootstrap file is for.
#[derive(Debug, Clone, Default)]
pub struct Owners {
    /// Each cluster's distinctive path segments.
    segments: Vec<(String, Vec<String>)>,
    /// Scripts that apply some clusters' entries: file → those clusters.
    scripts: BTreeMap<String, BTreeSet<String>>,
}

impl Owners {
    /// Reads them from the clusters (as merged) and the scripts.
    pub fn of(model: &Model, scripts: &Scripts) -> Owners {
        // A script that applies a base and an overlay of it is for the
        // overlay's cluster.
        let path = |i: usize| model.clusters[i].entry.path();
        let scripts = entries_applied(model, scripts)
            .into_iter()
            .map(|(file, applied)| {
                let names = applied
                    .iter()
                    .filter(|(i, _)| !applied.iter().any(|(j, _)| is_base(path(*i), path(*j))))
                    .map(|(i, _)| model.clusters[*i].name.clone())
                    .collect();
                (file.to_string(), names)
            })
            .collect();
        Owners {
            segments: distinctive(model),
            scripts,
        }
    }

    /// The clusters told apart by their paths (none when there is one).
    pub fn told_apart(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().map(|(name, _)| name.as_str())
    }

    /// Whether a bootstrap file (by its path) is for a cluster.
    pub fn applies(&self, file: &str, cluster: &str) -> bool {
        if let Some(clusters) = self.scripts.get(file) {
            return clusters.contains(cluster);
        }
        let segments: Vec<&str> = file.split('/').collect();
        let named: Vec<&str> = self
            .segments
            .iter()
            .filter(|(_, own)| own.iter().any(|s| segments.contains(&s.as_str())))
            .map(|(name, _)| name.as_str())
            .collect();
        named.is_empty() || named.contains(&cluster)
    }
}

/// Each cluster's distinctive path segments (none when there is one
/// cluster).
fn distinctive(model: &Model) -> Vec<(String, Vec<String>)> {
    let paths: Vec<(String, Vec<String>)> = model
        .clusters
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                c.entry.path().split('/').map(str::to_string).collect(),
            )
        })
        .collect();
    paths
        .iter()
        .map(|(name, segs)| {
            let own = segs
                .iter()
                .filter(|s| {
                    !s.is_empty()
                        && paths
                            .iter()
                            .filter(|(n, _)| n != name)
                            .all(|(_, other)| !other.contains(s))
                })
                .cloned()
                .collect();
            (name.clone(), own)
        })
        .filter(|_| paths.len() > 1)
        .collect()
}
