//! The repository index: every path under the root (files, directories,
//! symlinks, unreadable directories), every YAML file loaded once (in
//! parallel) with its documents or its load error, and the artifact Flux
//! builds from ([`artifact`]: what source-controller archives, after its
//! ignore rules, [`ignore`]).
//!
//! Discovery and rendering read the repository only through an
//! [`Artifact`]: paths are resolved lexically inside the root, symlinks and
//! ignored paths do not exist, and files are read under the loader's
//! budgets. Rules that read files outside Flux (scripts, version pins) use
//! [`RepoIndex::read_text`], confined to the root the same way.

pub mod artifact;
mod budget;
pub mod ignore;
mod listing;
mod mount;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

pub use artifact::{Artifact, Missing};
pub use ignore::SourceIgnore;
pub use mount::Mount;

use crate::yaml::{self, LoadError, Node};

/// The names kustomize recognises as a kustomization file, in its order.
pub const KUSTOMIZATION_FILE_NAMES: &[&str] =
    &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Why the repository could not be indexed at all.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The tree holds more YAML than one run reads.
    #[error(
        "{path}: {files} YAML files, {bytes} bytes in all, over this tool's budget of 1 GiB of YAML per run (largest: {largest}); point --repo at the directory Flux syncs, or move vendored or generated YAML out of it"
    )]
    Budget {
        /// The root.
        path: String,
        /// How many YAML files.
        files: usize,
        /// Their total size.
        bytes: u64,
        /// The largest top-level directories, with their YAML size.
        largest: String,
    },
    /// The tree holds more paths than one run lists.
    #[error(
        "{path}: over {limit} files and directories, this tool's budget per run (largest: {largest}); point --repo at the directory Flux syncs, or check it out on its own"
    )]
    TooManyPaths {
        /// The root.
        path: String,
        /// The budget that was reached.
        limit: usize,
        /// The largest top-level directories, with their path counts.
        largest: String,
    },
    /// The root does not exist or is not a directory.
    #[error("{path}: not a directory")]
    NotADirectory {
        /// The root, as given.
        path: String,
    },
    /// A directory or file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path that failed (the root, or a path relative to it).
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A path (or the symlink it names) leads outside the repository.
    #[error("{path}: points outside the repository")]
    Outside {
        /// The path, as given.
        path: String,
    },
    /// A file is larger than the loader's budget.
    #[error(
        "{path}: file is {bytes} bytes, larger than the {}-byte budget",
        yaml::MAX_FILE_BYTES
    )]
    TooLarge {
        /// The path, as given.
        path: String,
        /// The file's size, in bytes.
        bytes: u64,
    },
}

/// One indexed YAML file: its documents, parsed when the index loads.
/// Once the model is built they can be released
/// ([`RepoIndex::release_documents`]): they are parsed again from the file
/// if anything asks for them later.
#[derive(Debug)]
pub struct File {
    /// The file's YAML documents, or why it did not load.
    docs: std::sync::OnceLock<Result<Vec<Node>, LoadError>>,
    /// Where they are parsed from again.
    source: Source,
    /// Which of [`MARKED`] the text holds (bit `i` for `MARKED[i]`).
    marks: u8,
}

/// Words that searches over every file look for after the documents are
/// released ([`File::may_contain`]): noted while the text is at hand, so
/// such a search parses again only the files that hold them.
/// (`distribution`: a FluxInstance's version; `fluxcd/flux2/`: Flux's own
/// install manifests.)
const MARKED: &[&str] = &["distribution", "fluxcd/flux2/"];

/// The bits of [`MARKED`] a text holds.
fn marks(text: &str) -> u8 {
    MARKED
        .iter()
        .enumerate()
        .filter(|(_, word)| text.contains(*word))
        .fold(0, |bits, (i, _)| bits | (1 << i))
}

/// Where a file's documents come from.
#[derive(Debug)]
enum Source {
    /// A file of the checkout: its absolute path and its path in the
    /// repository (for messages).
    Disk(PathBuf, String),
    /// An in-memory repository's text.
    Text(String, String),
}

impl File {
    fn loaded(docs: Result<Vec<Node>, LoadError>, source: Source, marks: u8) -> File {
        File {
            docs: std::sync::OnceLock::from(docs),
            source,
            marks,
        }
    }

    /// The file's YAML documents, or why it did not load (parsed again
    /// if they were released).
    pub fn docs(&self) -> &Result<Vec<Node>, LoadError> {
        self.docs.get_or_init(|| match &self.source {
            Source::Disk(path, rel) => {
                yaml::read_documents(path).map_err(|err| relative_error(err, rel))
            }
            Source::Text(text, rel) => parse_file(text, rel),
        })
    }

    /// Whether the file's documents can hold `needle` (a key or a value
    /// a search looks for): true when they are in memory (the search reads
    /// them), else whether the file's text holds it, so a search over
    /// every file parses again only the files that can match.
    pub fn may_contain(&self, needle: &str) -> bool {
        if self.docs.get().is_some() {
            return true;
        }
        if let Some(i) = MARKED.iter().position(|w| *w == needle) {
            return self.marks & (1 << i) != 0;
        }
        match &self.source {
            Source::Text(text, _) => text.contains(needle),
            Source::Disk(path, _) => std::fs::read(path).is_ok_and(|bytes| {
                bytes
                    .windows(needle.len().max(1))
                    .any(|w| w == needle.as_bytes())
            }),
        }
    }
}

/// What a path of the repository is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link: never followed, and never part of an artifact
    /// (source-controller archives regular files and directories only).
    Symlink,
    /// A directory that could not be listed (the reason): an error only for
    /// a build that needs it.
    Unreadable(String),
}

/// A repository: every path, the YAML files loaded, the `.sourceignore`
/// files, and the default artifact's ignore rules.
#[derive(Debug)]
pub struct RepoIndex {
    root: PathBuf,
    /// Every path below the root except inside `.git`, sorted.
    paths: BTreeMap<String, Kind>,
    /// Every file with a manifest name, loaded.
    files: BTreeMap<String, File>,
    /// `.sourceignore` files: their directory and text, depth-first.
    sourceignores: Vec<(String, String)>,
    /// The artifact of a GitRepository without `spec.ignore`.
    default: artifact::Visibility,
    /// The texts of an in-memory repository ([`RepoIndex::from_memory`]).
    texts: BTreeMap<String, String>,
    /// Discovery notes about how the tree was read.
    notes: Vec<String>,
    /// Other checkouts read beside it ([`RepoIndex::mount`]).
    mounts: Vec<Mount>,
}

impl RepoIndex {
    /// Walks `root` (not following symlinks) and loads every
    /// `.yaml`/`.yml` file and every `Kustomization`.
    pub fn load(root: &Path) -> Result<RepoIndex, RepoError> {
        RepoIndex::load_within(root, MAX_TOTAL_YAML_BYTES, MAX_PATHS)
    }

    /// As [`RepoIndex::load`], with a budget of `max_yaml` bytes of YAML
    /// and `max_paths` files and directories.
    fn load_within(root: &Path, max_yaml: u64, max_paths: usize) -> Result<RepoIndex, RepoError> {
        let root = readable_root(root)?;
        let (paths, committed) = listing::paths(&root, max_paths);
        budget::paths(&root, &paths, max_paths)?;
        let manifests: Vec<&String> = paths
            .iter()
            .filter(|(rel, kind)| {
                **kind == Kind::File && is_manifest_name(rel.rsplit('/').next().unwrap_or(rel))
            })
            .map(|(rel, _)| rel)
            .collect();
        let total = budget::yaml(&root, &manifests, max_yaml)?;
        crate::progress::show(&format!(
            "indexing {} YAML files ({} MiB)",
            manifests.len(),
            total / (1024 * 1024)
        ));
        let files = load_files(&root, manifests);
        let sourceignores = sourceignores(&root, &paths);
        let default = artifact::Visibility::of(&paths, SourceIgnore::new(&sourceignores, None));
        Ok(RepoIndex {
            root,
            paths,
            files,
            sourceignores,
            default,
            texts: BTreeMap::new(),
            notes: committed.into_iter().collect(),
            mounts: Vec::new(),
        })
    }

    /// A repository held in memory (path → text), for fuzzing and tests:
    /// the same index a checkout with these files would give, rooted at a
    /// directory that does not exist (nothing is read from disk but the
    /// texts given).
    pub fn from_memory(files: &[(&str, &str)]) -> RepoIndex {
        let mut paths = BTreeMap::new();
        let mut loaded = BTreeMap::new();
        let mut sourceignores = Vec::new();
        let mut texts = BTreeMap::new();
        for (rel, text) in files {
            let (rel, escapes) = normalize("", rel);
            if escapes || rel.is_empty() {
                continue;
            }
            let mut dir = rel.as_str();
            while let Some((parent, _)) = dir.rsplit_once('/') {
                paths.insert(parent.to_string(), Kind::Dir);
                dir = parent;
            }
            paths.insert(rel.clone(), Kind::File);
            texts.insert(rel.clone(), text.to_string());
            let name = rel.rsplit('/').next().unwrap_or(&rel);
            if is_manifest_name(name) {
                loaded.insert(
                    rel.clone(),
                    File::loaded(
                        parse_file(text, &rel),
                        Source::Text(text.to_string(), rel.clone()),
                        marks(text),
                    ),
                );
            }
            if name == ignore::IGNORE_FILE {
                let dir = rel
                    .rsplit_once('/')
                    .map(|(d, _)| d.to_string())
                    .unwrap_or_default();
                sourceignores.push((dir, text.to_string()));
            }
        }
        let default = artifact::Visibility::of(&paths, SourceIgnore::new(&sourceignores, None));
        RepoIndex {
            root: PathBuf::from("/nonexistent/in-memory"),
            paths,
            files: loaded,
            sourceignores,
            default,
            texts,
            notes: Vec::new(),
            mounts: Vec::new(),
        }
    }

    /// What the index could not do as Flux would (a git checkout that `git`
    /// could not list), for the report's discovery notes.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The canonical absolute root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A loaded YAML file, whether or not an artifact holds it.
    pub fn file(&self, rel: &str) -> Option<&File> {
        self.files.get(rel)
    }

    /// Every YAML file of the default artifact, sorted by path: the
    /// repository's own, not those of checkouts read beside it.
    pub fn files(&self) -> impl Iterator<Item = (&str, &File)> {
        self.files_with_sources()
            .filter(|(rel, _)| self.mount_of(rel).is_none())
    }

    /// Every YAML file of the default artifact, the repository's and those
    /// of the checkouts read beside it ([`RepoIndex::mount`]).
    pub fn files_with_sources(&self) -> impl Iterator<Item = (&str, &File)> {
        self.files
            .iter()
            .filter(|(rel, _)| self.artifact().stat(rel).is_ok())
            .map(|(k, v)| (k.as_str(), v))
    }

    /// Every loaded YAML file of the repository, in or out of any artifact
    /// (scripts' inputs, bootstrap configuration), sorted by path.
    pub fn all_files(&self) -> impl Iterator<Item = (&str, &File)> {
        self.files
            .iter()
            .filter(|(rel, _)| self.mount_of(rel).is_none())
            .map(|(k, v)| (k.as_str(), v))
    }

    /// What the path is, if it exists.
    pub fn kind(&self, rel: &str) -> Option<&Kind> {
        if rel.is_empty() {
            return Some(&Kind::Dir);
        }
        self.paths.get(rel)
    }

    /// Every path below `dir` (its whole subtree), sorted.
    pub fn below<'a>(&'a self, dir: &str) -> impl Iterator<Item = (&'a str, &'a Kind)> + 'a {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        self.paths
            .range(prefix.clone()..)
            .take_while(move |(k, _)| k.starts_with(&prefix))
            .map(|(k, v)| (k.as_str(), v))
    }

    /// The artifact of a GitRepository without `spec.ignore`.
    pub fn artifact(&self) -> Artifact<'_> {
        Artifact::new(self, std::borrow::Cow::Borrowed(&self.default))
    }

    /// The repository with nothing ignored (a plain directory, as kustomize
    /// sees it; symlinks still do not exist).
    pub fn unfiltered(&self) -> Artifact<'_> {
        let visibility = self.visibility(SourceIgnore::none());
        Artifact::new(self, std::borrow::Cow::Owned(visibility))
    }

    /// The artifact of a GitRepository with this `spec.ignore` (`None`:
    /// the default one).
    pub fn artifact_with(&self, spec_ignore: Option<&str>) -> Artifact<'_> {
        match spec_ignore {
            None => self.artifact(),
            Some(text) => {
                let ignore = SourceIgnore::new(&self.sourceignores, Some(text));
                let visibility = self.visibility(ignore);
                Artifact::new(self, std::borrow::Cow::Owned(visibility))
            }
        }
    }

    /// Every file of the repository (not only manifests, and whether or not
    /// an artifact holds it) whose name is `name`, sorted.
    pub fn files_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.paths
            .iter()
            .filter(|(_, k)| **k == Kind::File)
            .map(|(p, _)| p.as_str())
            .filter(move |p| p.rsplit('/').next() == Some(name))
    }

    /// The text of a repository file, under the file-size budget. Nothing
    /// outside the root is read, whatever the path or a symlink says.
    pub fn read_text(&self, rel: &str) -> Result<String, RepoError> {
        let (normal, escapes) = normalize("", rel);
        if !self.texts.is_empty() {
            // An in-memory repository: nothing on disk.
            return match self.texts.get(&normal) {
                _ if escapes => Err(RepoError::Outside {
                    path: rel.to_string(),
                }),
                Some(text) => Ok(text.clone()),
                None => Err(RepoError::Io {
                    path: rel.to_string(),
                    source: std::io::ErrorKind::NotFound.into(),
                }),
            };
        }
        let io = |source| RepoError::Io {
            path: rel.to_string(),
            source,
        };
        let (root, inner) = self.on_disk(&normal);
        let real = root.join(inner).canonicalize().map_err(io)?;
        if escapes || !real.starts_with(root) {
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
        let bytes = std::fs::read(&real).map_err(io)?;
        yaml::goyaml::decode(bytes)
            .map_err(|why| io(std::io::Error::new(std::io::ErrorKind::InvalidData, why)))
    }

    /// Frees every file's parsed documents once the model is built (the
    /// rendered objects are copies): a large platform's parsed YAML is a
    /// third of the run's memory. A later reader gets them parsed again,
    /// file by file ([`File::docs`]).
    pub fn release_documents(&mut self) {
        for file in self.files.values_mut() {
            file.docs.take();
        }
    }

    /// Whether the default artifact has this directory.
    pub fn is_dir(&self, rel: &str) -> bool {
        self.artifact().is_dir(rel)
    }

    /// Whether the default artifact has this file.
    pub fn is_file(&self, rel: &str) -> bool {
        self.artifact().is_file(rel)
    }

    /// The kustomization file of directory `dir` in the default artifact.
    pub fn kustomization_file(&self, dir: &str) -> Option<String> {
        self.artifact().kustomization_file(dir)
    }
}

/// The root, canonical, when it is a directory that can be listed (the
/// root itself must be readable; anything below only when used).
fn readable_root(root: &Path) -> Result<PathBuf, RepoError> {
    if !root.is_dir() {
        return Err(RepoError::NotADirectory {
            path: root.display().to_string(),
        });
    }
    let root = root.canonicalize().map_err(|source| RepoError::Io {
        path: root.display().to_string(),
        source,
    })?;
    std::fs::read_dir(&root).map_err(|source| RepoError::Io {
        path: root.display().to_string(),
        source,
    })?;
    Ok(root)
}

/// Every manifest file loaded, in parallel: its documents (or why they
/// did not load), and which of [`MARKED`] its text holds.
fn load_files(root: &Path, manifests: Vec<&String>) -> BTreeMap<String, File> {
    manifests
        .into_par_iter()
        .map(|rel| {
            let path = root.join(rel);
            let (docs, marks) = match yaml::read_text_within_budget(&path) {
                Ok(text) => (parse_file(&text, rel), marks(&text)),
                Err(err) => (Err(relative_error(err, rel)), 0),
            };
            (
                rel.clone(),
                File::loaded(docs, Source::Disk(path, rel.clone()), marks),
            )
        })
        .collect()
}

/// The `.sourceignore` files of the tree: their directory and text, in
/// the order source-controller reads them.
fn sourceignores(root: &Path, paths: &BTreeMap<String, Kind>) -> Vec<(String, String)> {
    let mut sourceignores = Vec::new();
    for (rel, kind) in paths {
        if *kind == Kind::File && rel.rsplit('/').next() == Some(ignore::IGNORE_FILE) {
            let dir = rel
                .rsplit_once('/')
                .map(|(d, _)| d.to_string())
                .unwrap_or_default();
            if let Ok(text) = std::fs::read_to_string(root.join(rel)) {
                sourceignores.push((dir, text));
            }
        }
    }
    // LoadIgnorePatterns reads a directory's file before its
    // subdirectories', in lexical order.
    sourceignores.sort_by(|a, b| {
        let key = |d: &str| d.split('/').map(str::to_string).collect::<Vec<_>>();
        key(&a.0).cmp(&key(&b.0))
    });
    sourceignores
}

/// A file's text parsed as the loader does, its errors named by its path
/// in the repository.
fn parse_file(text: &str, rel: &str) -> Result<Vec<Node>, LoadError> {
    yaml::parse_text(text).map_err(|source| LoadError::Yaml {
        path: rel.to_string(),
        source,
    })
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

/// The most YAML one run reads (every manifest file of the tree, in all):
/// a tree over it (a checkout holding vendored charts or generated data by
/// the gigabyte) is refused at once instead of parsed for many minutes.
pub(crate) const MAX_TOTAL_YAML_BYTES: u64 = 1024 * 1024 * 1024;

/// The most files and directories one run lists: a tree over it (a home
/// directory, a monorepo's build outputs outside git) is refused with its
/// largest directories instead of walked for many minutes.
pub(crate) const MAX_PATHS: usize = 2_000_000;

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
    fn a_tree_over_the_yaml_budget_stops_before_parsing_with_its_largest_directories() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("vendor/charts")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("clusters")).expect("mkdir");
        std::fs::write(
            dir.path().join("vendor/charts/big.yaml"),
            "a: b\n".repeat(600),
        )
        .expect("write");
        std::fs::write(dir.path().join("clusters/x.yaml"), "a: b\n").expect("write");
        let err = RepoIndex::load_within(dir.path(), 1024, MAX_PATHS).expect_err("over budget");
        let text = err.to_string();
        assert!(matches!(err, RepoError::Budget { files: 2, .. }), "{text}");
        assert!(text.contains("largest: vendor/"), "{text}");
        assert!(RepoIndex::load_within(dir.path(), 1 << 20, MAX_PATHS).is_ok());
    }

    #[test]
    fn a_tree_over_the_path_budget_stops_with_its_largest_directories() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("node_modules/pkg")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("clusters")).expect("mkdir");
        for i in 0..20 {
            std::fs::write(dir.path().join(format!("node_modules/pkg/{i}.js")), "").expect("write");
        }
        std::fs::write(dir.path().join("clusters/x.yaml"), "a: b\n").expect("write");
        let err = RepoIndex::load_within(dir.path(), 1 << 20, 10).expect_err("over budget");
        let text = err.to_string();
        assert!(
            matches!(err, RepoError::TooManyPaths { limit: 10, .. }),
            "{text}"
        );
        assert!(text.contains("largest: node_modules/"), "{text}");
        assert!(RepoIndex::load_within(dir.path(), 1 << 20, 100).is_ok());
    }

    #[test]
    fn unreadable_and_symlinked_paths_are_not_in_the_artifact() {
        let mut paths = BTreeMap::new();
        paths.insert("apps".to_string(), Kind::Dir);
        paths.insert("apps/a.yaml".to_string(), Kind::File);
        paths.insert(
            "docs".to_string(),
            Kind::Unreadable("permission denied".into()),
        );
        paths.insert("link".to_string(), Kind::Symlink);
        let index = RepoIndex {
            root: PathBuf::from("/nonexistent"),
            default: artifact::Visibility::of(&paths, SourceIgnore::new(&[], None)),
            paths,
            files: BTreeMap::new(),
            sourceignores: Vec::new(),
            texts: BTreeMap::new(),
            notes: Vec::new(),
            mounts: Vec::new(),
        };
        let a = index.artifact();
        assert!(a.is_file("apps/a.yaml"));
        assert!(!a.is_dir("docs"));
        assert_eq!(
            a.stat("docs/x.yaml"),
            Err(Missing::Unreadable("permission denied".into()))
        );
        assert_eq!(a.stat("link"), Err(Missing::Symlink));
        assert_eq!(a.stat("link/inside.yaml"), Err(Missing::Symlink));
        assert_eq!(a.resolve("apps", "../../x"), Err(Missing::Outside));
        let names: Vec<(&str, bool)> = a.list("");
        assert_eq!(names, [("apps", true)]);
    }

    #[test]
    fn released_documents_are_parsed_again_the_same() {
        let mut index = RepoIndex::from_memory(&[
            (
                "a.yaml",
                "kind: FluxInstance\nspec:\n  distribution:\n    version: 2.x\n",
            ),
            ("b.yaml", "a: 1\n---\nb: [2]\n"),
            ("bad.yaml", "a: [\n"),
        ]);
        let before: Vec<String> = index
            .all_files()
            .map(|(rel, f)| format!("{rel} {:?}", f.docs()))
            .collect();
        index.release_documents();
        let a = index.file("a.yaml").unwrap();
        let b = index.file("b.yaml").unwrap();
        // Released: a search reads only the files that can match.
        assert!(a.may_contain("distribution"));
        assert!(!b.may_contain("distribution"));
        assert!(b.may_contain("b: ["));
        assert!(!b.may_contain("FluxInstance"));
        let after: Vec<String> = index
            .all_files()
            .map(|(rel, f)| format!("{rel} {:?}", f.docs()))
            .collect();
        assert_eq!(before, after);
        // Loaded again, every search reads them.
        assert!(index.file("b.yaml").unwrap().may_contain("distribution"));
    }

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
