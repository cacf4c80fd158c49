//! The budgets of one run, checked before anything is parsed: how many
//! paths the tree lists, and how much YAML it holds. Over either, the
//! error names the largest top-level directories.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Kind, RepoError};

/// An error when the tree lists more than `max_paths` paths.
pub(super) fn paths(
    root: &Path,
    paths: &BTreeMap<String, Kind>,
    max_paths: usize,
) -> Result<(), RepoError> {
    if paths.len() <= max_paths {
        return Ok(());
    }
    let mut by_dir: BTreeMap<&str, usize> = BTreeMap::new();
    for rel in paths.keys() {
        *by_dir
            .entry(rel.split('/').next().unwrap_or(rel))
            .or_default() += 1;
    }
    let mut largest: Vec<(&str, usize)> = by_dir.into_iter().collect();
    largest.sort_by_key(|d| std::cmp::Reverse(d.1));
    Err(RepoError::TooManyPaths {
        path: root.display().to_string(),
        limit: max_paths,
        largest: largest
            .iter()
            .take(3)
            .map(|(d, n)| format!("{d}/ {n} paths"))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// The total size of the manifest files, or an error when it is over
/// `max_yaml` bytes: a tree too large to read in reasonable time stops
/// here, with the budget, before any of it is parsed.
pub(super) fn yaml(root: &Path, manifests: &[&String], max_yaml: u64) -> Result<u64, RepoError> {
    let sizes: Vec<u64> = manifests
        .iter()
        .map(|rel| std::fs::metadata(root.join(rel)).map_or(0, |m| m.len()))
        .collect();
    let total: u64 = sizes.iter().sum();
    if total <= max_yaml {
        return Ok(total);
    }
    let mut by_dir: BTreeMap<&str, u64> = BTreeMap::new();
    for (rel, size) in manifests.iter().zip(&sizes) {
        let top = rel.split('/').next().unwrap_or(rel);
        *by_dir.entry(top).or_default() += size;
    }
    let mut largest: Vec<(&str, u64)> = by_dir.into_iter().collect();
    largest.sort_by_key(|d| std::cmp::Reverse(d.1));
    Err(RepoError::Budget {
        path: root.display().to_string(),
        files: manifests.len(),
        bytes: total,
        largest: largest
            .iter()
            .take(3)
            .map(|(d, b)| format!("{d}/ {} MiB", b / (1024 * 1024)))
            .collect::<Vec<_>>()
            .join(", "),
    })
}
