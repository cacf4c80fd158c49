//! Other checkouts read beside the repository: a fleet repository's
//! infrastructure and apps repositories (`--source REF=DIR`, `sources:`
//! with `dir:`). Each is indexed like the repository (listed through git,
//! under the same budgets) and placed under a directory name of its own
//! that no path of the repository has (`@infra`), so every path the model
//! and the reports carry says which checkout it is in, and a build of one
//! source never sees another's files by accident.
//!
//! A mounted checkout is its own source artifact, as source-controller
//! archives each repository on its own: only its own `.sourceignore` files
//! decide what it holds (the repository's root `.sourceignore` and a
//! GitRepository's `spec.ignore` are anchored at the repository's root and
//! never reach into it), and a file is read from the checkout's own root,
//! never outside it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::artifact::Visibility;
use super::{File, Kind, RepoError, RepoIndex, SourceIgnore, join};

/// One checkout read under a directory name of its own.
#[derive(Debug, Clone)]
pub struct Mount {
    /// The directory name it is read under (`@infra`).
    pub prefix: String,
    /// The checkout's canonical root on disk.
    pub root: PathBuf,
    /// Its own `.sourceignore` files, with their directories under the prefix.
    sourceignores: Vec<(String, String)>,
}

impl Mount {
    /// Whether the repository path `rel` is inside this checkout.
    pub fn holds(&self, rel: &str) -> bool {
        rel == self.prefix
            || rel
                .strip_prefix(self.prefix.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }

    /// `rel` relative to the checkout's own root.
    pub fn inner<'r>(&self, rel: &'r str) -> &'r str {
        rel.strip_prefix(self.prefix.as_str())
            .map(|rest| rest.trim_start_matches('/'))
            .unwrap_or(rel)
    }
}

impl RepoIndex {
    /// Reads the checkout at `root` under the directory name `prefix`
    /// (which no path of the repository may have). Its files are listed
    /// and loaded as the repository's are, under the same budgets.
    pub fn mount(&mut self, prefix: &str, root: &Path) -> Result<(), RepoError> {
        if self.paths.contains_key(prefix) || prefix.contains('/') || prefix.is_empty() {
            return Err(RepoError::Outside {
                path: format!("{prefix} (a path the repository already has)"),
            });
        }
        let other = RepoIndex::load(root)?;
        self.paths.insert(prefix.to_string(), Kind::Dir);
        for (rel, kind) in other.paths {
            self.paths.insert(join(prefix, &rel), kind);
        }
        for (rel, file) in other.files {
            let name = join(prefix, &rel);
            let file = File {
                source: match file.source {
                    super::Source::Disk(path, _) => super::Source::Disk(path, name.clone()),
                    text => text,
                },
                docs: file.docs,
                marks: file.marks,
            };
            self.files.insert(name, file);
        }
        let sourceignores = other
            .sourceignores
            .into_iter()
            .map(|(dir, text)| (join(prefix, &dir), text))
            .collect();
        self.notes.extend(
            other
                .notes
                .into_iter()
                .map(|n| format!("{prefix} ({}): {n}", other.root.display())),
        );
        self.mounts.push(Mount {
            prefix: prefix.to_string(),
            root: other.root,
            sourceignores,
        });
        self.default = self.visibility(SourceIgnore::new(&self.sourceignores, None));
        Ok(())
    }

    /// The checkouts read beside the repository.
    pub fn mounts(&self) -> &[Mount] {
        &self.mounts
    }

    /// The checkout that holds `rel`, when it is not the repository's own.
    pub fn mount_of(&self, rel: &str) -> Option<&Mount> {
        self.mounts.iter().find(|m| m.holds(rel))
    }

    /// Where `rel` is on disk: the checkout that holds it and the path
    /// relative to that checkout's root.
    pub(super) fn on_disk<'r>(&self, rel: &'r str) -> (&Path, &'r str) {
        match self.mount_of(rel) {
            Some(m) => (&m.root, m.inner(rel)),
            None => (&self.root, rel),
        }
    }

    /// What an artifact with `ignore` (the repository's rules) holds: the
    /// repository's paths judged by `ignore`, each mounted checkout's by
    /// its own `.sourceignore` files.
    pub(super) fn visibility(&self, ignore: SourceIgnore) -> Visibility {
        if self.mounts.is_empty() {
            return Visibility::of(&self.paths, ignore);
        }
        let own: BTreeMap<String, Kind> = self
            .paths
            .iter()
            .filter(|(rel, _)| self.mount_of(rel).is_none())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut visibility = Visibility::of(&own, ignore);
        for mount in &self.mounts {
            let theirs: BTreeMap<String, Kind> = self
                .below(&mount.prefix)
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect();
            let ignore = SourceIgnore::new(&mount.sourceignores, None);
            visibility.merge(Visibility::of(&theirs, ignore));
        }
        visibility
    }
}
