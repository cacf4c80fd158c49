//! The repository index: every YAML file under the root, loaded once (in
//! parallel) with its documents or its load error.
//!
//! Discovery reads the index to find entry points and Flux objects; rendering
//! reads it to list the files Flux's generated kustomization would include and
//! to report a broken file at its line before any renderer runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::yaml::{self, LoadError, Node};

/// Directories source-controller leaves out of an artifact by default (its
/// built-in ignore list), so Flux never sees their files.
const IGNORED_DIRS: &[&str] = &[".git", ".github", ".circleci"];
/// Files source-controller ignores by default.
const IGNORED_FILES: &[&str] = &[".sops.yaml", ".flux.yaml", ".goreleaser.yml"];

/// The names kustomize recognises as a kustomization file, in its order.
pub const KUSTOMIZATION_FILE_NAMES: &[&str] =
    &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Why the repository could not be indexed at all.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The root does not exist or is not a directory.
    #[error("{path}: not a directory")]
    NotADirectory { path: String },
    /// A directory or file could not be read.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A path (or the symlink it names) leads outside the repository.
    #[error("{path}: points outside the repository")]
    Outside { path: String },
    /// A file is larger than the loader's budget.
    #[error(
        "{path}: file is {bytes} bytes, larger than the {}-byte limit",
        yaml::MAX_FILE_BYTES
    )]
    TooLarge { path: String, bytes: u64 },
}

/// One indexed YAML file.
#[derive(Debug)]
pub struct File {
    pub docs: Result<Vec<Node>, LoadError>,
}

/// All YAML files of a repository, keyed by path relative to the root with
/// `/` separators, and the paths of every other file (scripts, env files:
/// what rules read besides manifests).
#[derive(Debug)]
pub struct RepoIndex {
    root: PathBuf,
    files: BTreeMap<String, File>,
    /// Every regular file below the root except under `.git`, sorted.
    paths: std::collections::BTreeSet<String>,
}

impl RepoIndex {
    /// Walks `root` (not following symlinked directories, as Flux's walk does
    /// not) and loads every `.yaml`/`.yml` file and every `Kustomization`.
    pub fn load(root: &Path) -> Result<RepoIndex, RepoError> {
        if !root.is_dir() {
            return Err(RepoError::NotADirectory {
                path: root.display().to_string(),
            });
        }
        let root = root.canonicalize().map_err(|source| RepoError::Io {
            path: root.display().to_string(),
            source,
        })?;
        let mut paths = Vec::new();
        let mut all = std::collections::BTreeSet::new();
        walk(&root, "", &mut paths, &mut all, false)?;
        let files = paths
            .into_par_iter()
            .map(|rel| {
                let docs =
                    yaml::read_documents(&root.join(&rel)).map_err(|err| relative_error(err, &rel));
                (rel, File { docs })
            })
            .collect();
        Ok(RepoIndex {
            root,
            files,
            paths: all,
        })
    }

    /// Every file of the repository (not only manifests) whose name is
    /// `name`, sorted.
    pub fn files_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.paths
            .iter()
            .map(String::as_str)
            .filter(move |p| p.rsplit('/').next() == Some(name))
    }

    /// The text of a repository file, under the file-size budget. Nothing
    /// outside the root is read, whatever the path or a symlink says.
    pub fn read_text(&self, rel: &str) -> Result<String, RepoError> {
        let (normal, escapes) = normalize("", rel);
        let io = |source| RepoError::Io {
            path: rel.to_string(),
            source,
        };
        let real = self.root.join(&normal).canonicalize().map_err(io)?;
        if escapes || !real.starts_with(&self.root) {
            return Err(RepoError::Outside {
                path: rel.to_string(),
            });
        }
        let meta = std::fs::metadata(&real).map_err(io)?;
        if meta.len() > yaml::MAX_FILE_BYTES {
            return Err(RepoError::TooLarge {
                path: rel.to_string(),
                bytes: meta.len(),
            });
        }
        std::fs::read_to_string(&real).map_err(io)
    }

    /// The canonical absolute root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn file(&self, rel: &str) -> Option<&File> {
        self.files.get(rel)
    }

    /// Every indexed file, sorted by path.
    pub fn files(&self) -> impl Iterator<Item = (&str, &File)> {
        self.files.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn is_dir(&self, rel: &str) -> bool {
        self.root.join(rel).is_dir()
    }

    pub fn is_file(&self, rel: &str) -> bool {
        self.root.join(rel).is_file()
    }

    /// The kustomization file of directory `dir`, if it has one.
    pub fn kustomization_file(&self, dir: &str) -> Option<String> {
        KUSTOMIZATION_FILE_NAMES
            .iter()
            .map(|name| join(dir, name))
            .find(|rel| self.is_file(rel))
    }
}

/// Error messages name files relative to the repository root.
fn relative_error(err: LoadError, rel: &str) -> LoadError {
    match err {
        LoadError::Io { source, .. } => LoadError::Io {
            path: rel.to_string(),
            source,
        },
        LoadError::TooLarge { bytes, .. } => LoadError::TooLarge {
            path: rel.to_string(),
            bytes,
        },
        LoadError::Yaml { source, .. } => LoadError::Yaml {
            path: rel.to_string(),
            source,
        },
    }
}

/// Lists manifests (outside the directories Flux ignores) into `out` and
/// every file (outside `.git`) into `all`. Inside an ignored directory
/// (`ignored`), files are only listed, and an unreadable directory is
/// skipped.
fn walk(
    root: &Path,
    rel: &str,
    out: &mut Vec<String>,
    all: &mut std::collections::BTreeSet<String>,
    ignored: bool,
) -> Result<(), RepoError> {
    let dir = root.join(rel);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(_) if ignored => return Ok(()),
        Err(source) => {
            return Err(RepoError::Io {
                path: dir.display().to_string(),
                source,
            });
        }
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = join(rel, &name);
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            if name != ".git" {
                let skip = ignored || IGNORED_DIRS.contains(&name.as_str());
                walk(root, &child, out, all, skip)?;
            }
        } else {
            if !ignored && is_manifest_name(&name) && !IGNORED_FILES.contains(&name.as_str()) {
                // Symlinked files are read through (Flux's loader does too); a
                // symlinked directory is never entered (file_type is the link's).
                out.push(child.clone());
            }
            all.insert(child);
        }
    }
    Ok(())
}

/// Files Flux's generator would pick up, plus extensionless `Kustomization`.
pub fn is_manifest_name(name: &str) -> bool {
    name.ends_with(".yaml") || name.ends_with(".yml") || name == "Kustomization"
}

/// Joins repository-relative paths with `/`.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Normalises a path relative to `base` (a repo-relative directory) the way
/// Flux's secure join does: `.` and empty segments vanish, `..` never climbs
/// above the root. Returns the repo-relative result and whether a `..` tried
/// to leave the root.
pub fn normalize(base: &str, path: &str) -> (String, bool) {
    let mut parts: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        base.split('/').filter(|p| !p.is_empty()).collect()
    };
    let mut escaped = false;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    escaped = true;
                }
            }
            other => parts.push(other),
        }
    }
    (parts.join("/"), escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_clamps_at_root() {
        assert_eq!(
            normalize("", "./clusters/prod/"),
            ("clusters/prod".into(), false)
        );
        assert_eq!(normalize("a/b", "../c"), ("a/c".into(), false));
        assert_eq!(normalize("a", "../../x"), ("x".into(), true));
        assert_eq!(normalize("", ""), (String::new(), false));
    }
}
