//! The artifact Flux builds from: the repository as source-controller
//! archives it (`storage.Archive` with `SourceIgnoreFilter`): regular files
//! and directories only, minus the ignored paths. Every build reads through
//! an [`Artifact`], and this is the one place that decides what a path is:
//! a path is resolved lexically inside the root (a `..` above it is refused),
//! a symlink does not exist, an ignored path does not exist, and a file is
//! read under the loader's budget.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use super::{Kind, RepoIndex, SourceIgnore, normalize};
use crate::yaml::{self, LoadError, Node};

/// Why a path of a build is not a readable file of the artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// Nothing at that path.
    NotFound,
    /// `..` climbs above the root of the source.
    Outside,
    /// A symbolic link: source-controller does not archive it.
    Symlink,
    /// Left out by the ignore rules (the files that set them).
    Ignored(Vec<String>),
    /// A directory where a file is needed, or the reverse.
    WrongKind,
    /// The file or a directory above it could not be read.
    Unreadable(String),
    /// Larger than the loader's budget.
    TooLarge(u64),
}

impl Missing {
    /// Why, in words that say what Flux sees.
    pub fn describe(&self, path: &str) -> String {
        match self {
            Missing::NotFound => format!("{path} does not exist"),
            Missing::Outside => {
                format!("{path} points outside the repository; Flux confines a build to its source")
            }
            Missing::Symlink => format!(
                "{path} is a symlink, and source-controller archives regular files and directories only (storage.Archive), so it does not exist for Flux"
            ),
            Missing::Ignored(origins) if origins.is_empty() => format!(
                "{path} is left out of the artifact by source-controller's default ignore rules"
            ),
            Missing::Ignored(origins) => format!(
                "{path} is left out of the artifact by the ignore rules of {}",
                origins.join(", ")
            ),
            Missing::WrongKind => format!("{path} is not the kind of entry the build needs"),
            Missing::Unreadable(why) => format!("{path} cannot be read: {why}"),
            Missing::TooLarge(bytes) => format!(
                "{path} is {bytes} bytes, larger than the {}-byte budget",
                yaml::MAX_FILE_BYTES
            ),
        }
    }
}

/// Which paths ignore rules leave out, precomputed over the repository.
#[derive(Debug, Clone, Default)]
pub(crate) struct Visibility {
    ignore: SourceIgnore,
    /// Ignored paths (files and directories).
    ignored: BTreeSet<String>,
    /// Directories that hold a file of the artifact (kept even when the
    /// directory itself matches an ignore pattern).
    holding: BTreeSet<String>,
}

impl Visibility {
    pub(super) fn of(paths: &BTreeMap<String, Kind>, ignore: SourceIgnore) -> Visibility {
        let mut ignored = BTreeSet::new();
        let mut holding = BTreeSet::new();
        for (path, kind) in paths {
            let is_dir = matches!(kind, Kind::Dir | Kind::Unreadable(_));
            if ignore.ignores(path, is_dir) {
                ignored.insert(path.clone());
            } else if *kind == Kind::File {
                let mut dir = path.as_str();
                while let Some((parent, _)) = dir.rsplit_once('/') {
                    if !holding.insert(parent.to_string()) {
                        break;
                    }
                    dir = parent;
                }
            }
        }
        Visibility {
            ignore,
            ignored,
            holding,
        }
    }

    /// Adds what another checkout's artifact leaves out and holds (its
    /// paths are disjoint from these).
    pub(super) fn merge(&mut self, other: Visibility) {
        self.ignored.extend(other.ignored);
        self.holding.extend(other.holding);
    }
}

/// A view of the repository as one source artifact.
#[derive(Debug, Clone)]
pub struct Artifact<'a> {
    index: &'a RepoIndex,
    visibility: Cow<'a, Visibility>,
}

impl<'a> Artifact<'a> {
    pub(super) fn new(index: &'a RepoIndex, visibility: Cow<'a, Visibility>) -> Artifact<'a> {
        Artifact { index, visibility }
    }

    /// The repository behind the artifact.
    pub fn index(&self) -> &'a RepoIndex {
        self.index
    }

    /// The ignore rules.
    pub fn ignore(&self) -> &SourceIgnore {
        &self.visibility.ignore
    }

    /// What a normalised path is in the artifact, or why it is not there.
    fn lookup(&self, rel: &str) -> Result<&'a Kind, Missing> {
        if rel.is_empty() {
            return Ok(&Kind::Dir);
        }
        // A path below a symlink, an unreadable directory or a file does
        // not exist either.
        let mut prefix = rel;
        while let Some((parent, _)) = prefix.rsplit_once('/') {
            match self.index.paths.get(parent) {
                Some(Kind::Symlink) => return Err(Missing::Symlink),
                Some(Kind::Unreadable(why)) => return Err(Missing::Unreadable(why.clone())),
                Some(Kind::File) => return Err(Missing::NotFound),
                _ => {}
            }
            prefix = parent;
        }
        let kind = self.index.paths.get(rel).ok_or(Missing::NotFound)?;
        let v = &self.visibility;
        match kind {
            Kind::Symlink => Err(Missing::Symlink),
            Kind::Dir if v.ignored.contains(rel) && !v.holding.contains(rel) => {
                Err(Missing::Ignored(v.ignore.origins.clone()))
            }
            Kind::File if v.ignored.contains(rel) => {
                Err(Missing::Ignored(v.ignore.origins.clone()))
            }
            other => Ok(other),
        }
    }

    /// Resolves `reference` relative to the directory `base` (both in the
    /// artifact) lexically, as Flux's secure join does; a `..` above the
    /// root is refused.
    pub fn resolve(&self, base: &str, reference: &str) -> Result<String, Missing> {
        let (path, escaped) = normalize(base, reference);
        if escaped || reference.starts_with('/') {
            return Err(Missing::Outside);
        }
        Ok(path)
    }

    /// What is at `rel`, or why nothing usable is.
    pub fn stat(&self, rel: &str) -> Result<&'a Kind, Missing> {
        self.lookup(rel)
    }

    /// Whether `rel` is a directory of the artifact.
    pub fn is_dir(&self, rel: &str) -> bool {
        matches!(self.lookup(rel), Ok(Kind::Dir))
    }

    /// Whether `rel` is a regular file of the artifact.
    pub fn is_file(&self, rel: &str) -> bool {
        matches!(self.lookup(rel), Ok(Kind::File))
    }

    /// The bytes of a file of the artifact.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, Missing> {
        match self.lookup(rel)? {
            Kind::File => {}
            Kind::Unreadable(why) => return Err(Missing::Unreadable(why.clone())),
            _ => return Err(Missing::WrongKind),
        }
        if let Some(text) = self.index.texts.get(rel) {
            return Ok(text.as_bytes().to_vec());
        }
        let (root, inner) = self.index.on_disk(rel);
        let path = root.join(inner);
        let meta = std::fs::metadata(&path).map_err(|e| Missing::Unreadable(e.to_string()))?;
        if meta.len() > yaml::MAX_FILE_BYTES {
            return Err(Missing::TooLarge(meta.len()));
        }
        std::fs::read(&path).map_err(|e| Missing::Unreadable(e.to_string()))
    }

    /// The documents of a YAML file of the artifact, parsed once by the
    /// index (or now, for a file the index did not load by name).
    pub fn documents(&self, rel: &str) -> Result<std::borrow::Cow<'a, [Node]>, DocError> {
        self.lookup(rel).map_err(DocError::Missing)?;
        match self.index.files.get(rel) {
            Some(file) => match file.docs() {
                Ok(docs) => Ok(std::borrow::Cow::Borrowed(docs.as_slice())),
                Err(err) => Err(DocError::of(err)),
            },
            None => {
                let bytes = self.read(rel).map_err(|m| match m {
                    Missing::TooLarge(bytes) => DocError::of(&LoadError::TooLarge {
                        path: rel.to_string(),
                        bytes,
                    }),
                    other => DocError::Missing(other),
                })?;
                let text = yaml::goyaml::decode(bytes)
                    .map_err(|why| DocError::Load(format!("{rel}: {why}"), None))?;
                let docs = yaml::parse_text(&text).map_err(|e| {
                    DocError::of(&LoadError::Yaml {
                        path: rel.to_string(),
                        source: e,
                    })
                })?;
                Ok(std::borrow::Cow::Owned(docs))
            }
        }
    }

    /// The entries of a directory of the artifact: (name, is a directory),
    /// sorted by name.
    pub fn list(&self, dir: &str) -> Vec<(&'a str, bool)> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        self.index
            .paths
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| !k[prefix.len()..].contains('/'))
            .filter_map(|(k, _)| match self.lookup(k) {
                Ok(Kind::Dir) => Some((&k[prefix.len()..], true)),
                Ok(Kind::File) => Some((&k[prefix.len()..], false)),
                _ => None,
            })
            .collect()
    }

    /// The kustomization file of a directory, as kustomize looks for it (the
    /// first of its recognised names).
    pub fn kustomization_file(&self, dir: &str) -> Option<String> {
        super::KUSTOMIZATION_FILE_NAMES
            .iter()
            .map(|name| super::join(dir, name))
            .find(|rel| self.is_file(rel))
    }

    /// Every YAML file of the artifact, sorted by path.
    pub fn files(&self) -> impl Iterator<Item = (&'a str, &'a super::File)> + '_ {
        self.index
            .files
            .iter()
            .filter(|(rel, _)| self.lookup(rel).is_ok())
            .map(|(k, v)| (k.as_str(), v))
    }
}

/// Why a YAML file of a build has no documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocError {
    /// The file is not a readable file of the artifact.
    Missing(Missing),
    /// The loader's message (naming the file) and line: invalid YAML.
    Load(String, Option<u32>),
    /// The file exceeds a loader budget (message naming the file and the
    /// budget, and line): a limit of this tool, not a Flux failure.
    Budget(String, Option<u32>),
}

impl DocError {
    fn of(err: &LoadError) -> DocError {
        if err.is_budget() {
            DocError::Budget(err.to_string(), err.line())
        } else {
            DocError::Load(err.to_string(), err.line())
        }
    }
}
