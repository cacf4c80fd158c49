//! Rendering: turning a Flux Kustomization into the objects Flux would apply.
//!
//! Two layers. [`Kustomize`] is the kustomize build itself, behind one trait
//! so backends can be swapped: the built-in renderer ([`native`], the
//! default), the external `kustomize` or `kubectl kustomize` program
//! ([`external`]), or [`Auto`] (native, and the program for what native does
//! not implement). [`flux`] adds what kustomize-controller does around that
//! build, and [`reach`] says what a build reads without running it: the generated `kustomization.yaml` for
//! directories without one, `spec.patches`, `spec.components`,
//! `spec.targetNamespace`, `spec.images`, name prefix/suffix, then per object
//! the required fields, `spec.commonMetadata` and the owner labels.
//! Rendering never touches the network: remote bases fetched beforehand
//! ([`crate::remote`], with `--fetch-remote`) are mounted into the tree.

mod error;
pub mod external;
pub mod flux;
pub mod native;
pub mod paths;
pub mod reach;
pub mod types;

use std::borrow::Cow;
use std::collections::BTreeMap;

pub use error::Error;

use crate::repo::artifact::DocError;
use crate::repo::{Artifact, Missing, RepoIndex};
use crate::yaml::Node;

/// What a build sees: the files of the source artifact (repository paths,
/// `/`-separated, relative to its root) and the kustomization files Flux
/// writes into its checkout before it builds (the edited or generated
/// `kustomization.yaml` of `spec.path`), which shadow what is there.
#[derive(Debug)]
pub struct Tree<'a> {
    /// The source artifact the build reads.
    pub artifact: &'a Artifact<'a>,
    /// Kustomization files written over the artifact: path → document.
    pub written: BTreeMap<String, Node>,
    /// Remote `resources` and `components` (URLs, git references) are left
    /// out of the build instead of failing it: the local part is built, and
    /// the Flux layer lists what it could not fetch.
    pub skip_remote: bool,
    /// Remote bases fetched before the build, each under its own prefix
    /// ([`crate::remote::MOUNT_PREFIX`]); a reference to one resolves to
    /// its root, and references inside it stay inside it.
    pub mounts: Vec<std::sync::Arc<crate::remote::Mount>>,
    /// The git transports an external program may clone remote bases with
    /// ([`crate::exec::harden_kustomize`]); `None`: none at all (offline,
    /// or the backend reads [`Tree::mounts`]).
    pub git: Option<crate::exec::Transports>,
}

impl<'a> Tree<'a> {
    /// The artifact as it is.
    pub fn new(artifact: &'a Artifact<'a>) -> Tree<'a> {
        Tree {
            artifact,
            written: BTreeMap::new(),
            skip_remote: false,
            mounts: Vec::new(),
            git: None,
        }
    }

    /// The fetched remote a reference names, if it was fetched.
    pub(crate) fn mounted(&self, reference: &str) -> Option<&crate::remote::Mount> {
        let reference = reference.trim();
        self.mounts
            .iter()
            .find(|m| m.reference == reference)
            .map(|m| m.as_ref())
    }

    /// The mount a tree path is in, and the path inside it.
    pub(crate) fn in_mount<'p>(&self, rel: &'p str) -> Option<(&crate::remote::Mount, &'p str)> {
        if !rel.starts_with(crate::remote::MOUNT_PREFIX) {
            return None;
        }
        let (head, sub) = rel.split_once('/').unwrap_or((rel, ""));
        let mount = self.mounts.iter().find(|m| m.prefix == head)?;
        Some((mount.as_ref(), sub))
    }

    /// A remote reference the build leaves out: not fetched, and the
    /// backend builds the local part.
    pub fn left_out(&self, reference: &str) -> bool {
        self.skip_remote && paths::is_remote(reference) && self.mounted(reference).is_none()
    }

    /// Resolves `reference` relative to the directory `base`, inside the
    /// source (inside the remote, for a directory of a fetched one).
    pub fn resolve(&self, base: &str, reference: &str) -> Result<String, Missing> {
        if let Some(mount) = self.mounted(reference) {
            return Ok(mount.root_path());
        }
        if let Some((mount, sub)) = self.in_mount(base) {
            let inner = mount.index.unfiltered().resolve(sub, reference)?;
            return Ok(crate::repo::join(&mount.prefix, &inner));
        }
        self.artifact.resolve(base, reference)
    }

    /// Whether `rel` is a file of the artifact or a kustomization file written over it.
    pub fn is_file(&self, rel: &str) -> bool {
        if let Some((mount, sub)) = self.in_mount(rel) {
            return mount.index.unfiltered().is_file(sub);
        }
        self.written.contains_key(rel) || self.artifact.is_file(rel)
    }

    /// Whether `rel` is a directory of the artifact.
    pub fn is_dir(&self, rel: &str) -> bool {
        if let Some((mount, sub)) = self.in_mount(rel) {
            return mount.index.unfiltered().is_dir(sub);
        }
        self.artifact.is_dir(rel)
    }

    /// The bytes of a file.
    pub fn read(&self, rel: &str) -> Result<Cow<'_, [u8]>, Missing> {
        if let Some((mount, sub)) = self.in_mount(rel) {
            return mount.index.unfiltered().read(sub).map(Cow::Owned);
        }
        if let Some(doc) = self.written.get(rel) {
            return Ok(Cow::Owned(doc.to_json().to_string().into_bytes()));
        }
        self.artifact.read(rel).map(Cow::Owned)
    }

    /// The text of a file (UTF-8).
    pub fn read_text(&self, rel: &str) -> Result<String, crate::render::Error> {
        let bytes = self.read(rel).map_err(|m| m.describe(rel))?;
        crate::yaml::goyaml::decode(bytes.into_owned())
            .map_err(|why| crate::render::Error::from(format!("{rel}: {why}")))
    }

    /// The YAML documents of a file.
    pub fn documents(&self, rel: &str) -> Result<Cow<'_, [Node]>, DocError> {
        if let Some((mount, sub)) = self.in_mount(rel) {
            return mount.index.unfiltered().documents(sub);
        }
        if let Some(doc) = self.written.get(rel) {
            return Ok(Cow::Owned(vec![doc.clone()]));
        }
        self.artifact.documents(rel)
    }

    /// The kustomization files of a directory, in kustomize's order of
    /// names (more than one is an error for kustomize).
    pub(crate) fn kustomization_files(&self, dir: &str) -> Vec<String> {
        crate::repo::KUSTOMIZATION_FILE_NAMES
            .iter()
            .map(|name| crate::repo::join(dir, name))
            .filter(|rel| self.is_file(rel))
            .collect()
    }

    /// The kustomization file kustomize builds in `dir`, if any.
    pub fn kustomization_file(&self, dir: &str) -> Option<String> {
        self.kustomization_files(dir).into_iter().next()
    }

    /// The entries of a directory: (name, is a directory), sorted.
    pub fn list(&self, dir: &str) -> Vec<(String, bool)> {
        if let Some((mount, sub)) = self.in_mount(dir) {
            return mount
                .index
                .unfiltered()
                .list(sub)
                .into_iter()
                .map(|(n, d)| (n.to_string(), d))
                .collect();
        }
        let mut out: Vec<(String, bool)> = self
            .artifact
            .list(dir)
            .into_iter()
            .map(|(n, d)| (n.to_string(), d))
            .collect();
        for path in self.written.keys() {
            let parent = path.rsplit_once('/').map_or("", |(d, _)| d);
            let name = path.rsplit('/').next().unwrap_or(path);
            if parent == dir && !out.iter().any(|(n, _)| n == name) {
                out.push((name.to_string(), false));
            }
        }
        out.sort();
        out
    }
}

/// A kustomize build backend.
pub trait Kustomize: Sync + std::fmt::Debug {
    /// A short name for reports (`kubectl kustomize`, `kustomize`).
    fn name(&self) -> &str;

    /// Builds the kustomization in directory `dir` of `tree` with load
    /// restrictions off and plugins disabled, returning the objects in build
    /// order, each with kustomize's origin annotation when the kustomization
    /// asks for it (paths relative to `dir`). `Err` carries the backend's
    /// own message.
    fn build(&self, tree: &Tree, dir: &str) -> Result<Vec<Node>, crate::render::Error>;

    /// Builds the backend handed to another one (with `--renderer auto`),
    /// and why: one line each.
    fn fallbacks(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether the backend honours [`Tree::skip_remote`] (builds the local
    /// part of a kustomization with remote bases). An external program
    /// would try to fetch them.
    fn builds_local_part(&self) -> bool {
        false
    }

    /// Whether the backend reads [`Tree::mounts`] (fetched remote bases).
    /// An external program fetches them itself instead.
    fn reads_mounts(&self) -> bool {
        self.builds_local_part()
    }
}

/// Builds the plain kustomization directory `dir` (repository-relative)
/// of `index` (kustomize's semantics, not Flux's: nothing ignored, nothing
/// written), for tests and tools. References may climb up to the root.
pub fn build_directory(
    kustomize: &dyn Kustomize,
    index: &RepoIndex,
    dir: &str,
) -> Result<Vec<Node>, crate::render::Error> {
    let artifact = index.unfiltered();
    kustomize.build(&Tree::new(&artifact), dir)
}

/// Which backend renders (`renderer:` in conformance.yaml, `--renderer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Choice {
    /// The built-in renderer (the default).
    #[default]
    Native,
    /// The external kustomize or kubectl program.
    Kustomize,
    /// Native, and the external program for kustomizations that use
    /// something the native renderer does not implement.
    Auto,
}

/// `--renderer native|kustomize|auto` (by hand: the derive would list each
/// value's documentation in `--help`, which the CLI contract fixes).
impl clap::ValueEnum for Choice {
    fn value_variants<'a>() -> &'a [Self] {
        &[Choice::Native, Choice::Kustomize, Choice::Auto]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(match self {
            Choice::Native => "native",
            Choice::Kustomize => "kustomize",
            Choice::Auto => "auto",
        }))
    }
}

impl Choice {
    /// The backend for this choice.
    pub fn backend(self) -> Result<Box<dyn Kustomize>, external::MissingRenderer> {
        Ok(match self {
            Choice::Kustomize => Box::new(external::External::detect()?),
            Choice::Native => Box::new(native::Native),
            Choice::Auto => Box::new(Auto {
                external: external::External::detect().ok(),
                fallbacks: std::sync::Mutex::new(Vec::new()),
            }),
        })
    }
}

/// Native first; the external program where native says "unsupported".
#[derive(Debug)]
pub struct Auto {
    external: Option<external::External>,
    fallbacks: std::sync::Mutex<Vec<String>>,
}

impl Kustomize for Auto {
    fn name(&self) -> &str {
        "native (auto)"
    }

    fn build(&self, tree: &Tree, dir: &str) -> Result<Vec<Node>, crate::render::Error> {
        let message = match native::Native.build(tree, dir) {
            Ok(objects) => return Ok(objects),
            Err(message) => message,
        };
        let unsupported = message.is_unsupported();
        let Some(external) = &self.external else {
            return Err(if unsupported {
                format!("{message}; and no kustomize or kubectl is installed to take over").into()
            } else {
                message
            });
        };
        match external.build(tree, dir) {
            Ok(objects) => {
                if let Ok(mut list) = self.fallbacks.lock() {
                    list.push(if unsupported {
                        format!("{} took over: {message}", external.name())
                    } else {
                        format!(
                            "{} built {dir}, which the native renderer could not: {message}",
                            external.name()
                        )
                    });
                }
                Ok(objects)
            }
            // Both fail: the native message names the file and line.
            Err(external_message) if unsupported => Err(external_message),
            Err(_) => Err(message),
        }
    }

    fn fallbacks(&self) -> Vec<String> {
        self.fallbacks.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Native builds first and reads fetched bases; the program it may
    /// hand a kustomization to fetches them itself.
    fn reads_mounts(&self) -> bool {
        true
    }
}
