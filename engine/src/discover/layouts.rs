//! Platform layouts that are not clusters, and a cluster whose sync lives
//! outside git.
//!
//! * **A cluster directory under `clusters/`** (Flux's documented layout,
//!   `clusters/<name>`) whose kustomization builds Flux Kustomizations kept
//!   elsewhere (`resources: [../../common/base]`), which no other build
//!   includes: the sync path of a cluster whose sync object an installer
//!   creates (a platform controller, Terraform, a cloud extension). It is
//!   the entry, as a FluxInstance's sync path is.
//! * **An application catalog**: Flux Kustomizations kept in versioned app
//!   directories (`applications/<app>/<version>/`) that nothing syncs: a
//!   platform controller instantiates them (with `${releaseNamespace}` and
//!   the like filled in). They are not clusters; each app version can be
//!   checked as a tier with `--entry`.
//! * **Test data**: trees named `testdata`, `test-data`, `apptests`,
//!   `fixtures` hold inputs of a program's tests, not a cluster, when the
//!   repository has entries elsewhere.

use std::collections::{BTreeMap, BTreeSet};

use super::coverage::{RawKustomization, StaticReach};
use super::parent_dir;
use crate::repo::{self, RepoIndex};

/// Directory names whose trees hold test inputs.
const TEST_DATA: &[&str] = &[
    "testdata",
    "test-data",
    "apptests",
    "fixtures",
    "__fixtures__",
];

/// Whether `dir` lies in a test-data tree.
pub(super) fn is_test_data(dir: &str) -> bool {
    dir.split('/').any(|segment| TEST_DATA.contains(&segment))
}

/// Whether a path segment names a version (`1.19.3`, `v2.3.0`,
/// `0.8.0-dev.8`): at least a major and a minor number.
fn is_version(segment: &str) -> bool {
    let s = segment.strip_prefix('v').unwrap_or(segment);
    let core = s.split(['-', '+']).next().unwrap_or(s);
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// The catalog a directory belongs to: for `applications/cert-manager/1.19.3/…`,
/// (`applications`, `cert-manager`, `applications/cert-manager/1.19.3`).
fn catalog_place(dir: &str) -> Option<(String, String, String)> {
    let segments: Vec<&str> = dir.split('/').collect();
    let at = segments.iter().position(|s| is_version(s))?;
    if at < 1 {
        return None;
    }
    let app = segments[at - 1].to_string();
    let root = segments[..at - 1].join("/");
    let version_dir = segments[..=at].join("/");
    Some((root, app, version_dir))
}

/// The catalogs among `dirs`: a root holding at least three apps in
/// versioned directories. Each catalog root with its apps' version
/// directories.
pub(super) fn catalogs<'d>(
    dirs: impl Iterator<Item = &'d str>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut by_root: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
    for dir in dirs {
        if let Some((root, app, version_dir)) = catalog_place(dir) {
            let entry = by_root.entry(root).or_default();
            entry.0.insert(app);
            entry.1.insert(version_dir);
        }
    }
    by_root
        .into_iter()
        .filter(|(_, (apps, _))| apps.len() >= 3)
        .map(|(root, (_, versions))| (root, versions))
        .collect()
}

/// Whether `dir` is inside one of `catalogs`.
pub(super) fn in_catalog(catalogs: &BTreeMap<String, BTreeSet<String>>, dir: &str) -> bool {
    catalogs
        .values()
        .flatten()
        .any(|v| dir == v || dir.starts_with(&format!("{v}/")))
}

/// The note for a catalog: what it is, and how to check one app.
pub(super) fn catalog_note(root: &str, versions: &BTreeSet<String>) -> String {
    let example = versions.iter().next().cloned().unwrap_or_default();
    format!(
        "{}/ is an application catalog: {} versioned app directories ({}/<app>/<version>/) whose Flux Kustomizations nothing in the repository syncs (a platform controller instantiates them); they are not checked as clusters: check one app as a tier with `--entry {example}`",
        if root.is_empty() { "." } else { root },
        versions.len(),
        if root.is_empty() { "." } else { root },
    )
}

/// Cluster directories under `clusters/` that build Flux Kustomizations
/// kept outside them and that no other build includes, with the note that
/// says why each is an entry.
pub(super) fn cluster_directories(
    index: &RepoIndex,
    raw: &[RawKustomization],
    reach: &StaticReach,
) -> Vec<(String, String)> {
    let flux_files: BTreeSet<&str> = raw
        .iter()
        .filter(|k| k.is_git_sourced())
        .map(|k| k.file)
        .collect();
    let mut candidates = Vec::new();
    let mut read_elsewhere: BTreeSet<String> = BTreeSet::new();
    for (file, _) in index.files() {
        let name = file.rsplit('/').next().unwrap_or(file);
        if !repo::KUSTOMIZATION_FILE_NAMES.contains(&name) {
            continue;
        }
        let dir = parent_dir(file);
        let (_, reads, _) = reach.reach(&dir);
        read_elsewhere.extend(reads.into_iter().filter(|f| parent_dir(f) != dir));
        let under_clusters = parent_dir(&dir).rsplit('/').next() == Some("clusters");
        if under_clusters && !is_test_data(&dir) {
            candidates.push(dir);
        }
    }
    candidates
        .into_iter()
        .filter(|dir| {
            let own = index.kustomization_file(dir).unwrap_or_default();
            !read_elsewhere.contains(&own)
        })
        .filter_map(|dir| {
            // Flux Kustomizations kept outside the directory: a directory
            // holding its own is found as any directory nothing builds is.
            let files = reach.files(&dir);
            let below = format!("{dir}/");
            let outside = files
                .iter()
                .filter(|f| flux_files.contains(f.as_str()) && !f.starts_with(&below))
                .count();
            let count = files.iter().filter(|f| flux_files.contains(f.as_str())).count();
            (outside > 0).then(|| {
                let note = format!(
                    "{dir}/ is a cluster's entry: it is a cluster directory that no other build includes, and its kustomization builds {count} Flux Kustomization file{} (its sync object is created outside git: by an installer, a platform controller or a cloud extension)",
                    if count == 1 { "" } else { "s" }
                );
                (dir, note)
            })
        })
        .collect()
}
