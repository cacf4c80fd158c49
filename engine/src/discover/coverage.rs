//! The static view of the repository used to find entries: which files each
//! path builds, reads and enters, without running kustomize.

use std::collections::{BTreeMap, BTreeSet};

use crate::render::flux;
use crate::repo::{self, RepoIndex};
use crate::yaml::Node;

/// A Flux Kustomization as written in a file (before any build).
#[derive(Clone)]
pub(super) struct RawKustomization<'a> {
    pub(super) file: &'a str,
    pub(super) doc: &'a Node,
    /// The repository directory its source stands for ("" for git).
    pub(super) base: &'a str,
    /// Whether its source is (or may be) this repository.
    pub(super) local: bool,
    /// A sync Kustomization made literal by a patch of its own build
    /// (`file` is the patch).
    pub(super) from_patch: bool,
}

impl RawKustomization<'_> {
    /// `spec.path`, normalised; variables its own `postBuild.substitute`
    /// defines are substituted (Flux substitutes the sync Kustomization's
    /// own variables into its output, itself included).
    pub(super) fn path(&self) -> String {
        let written = self.doc.str_at(&["spec", "path"]).unwrap_or_default();
        let path = if written.contains("${") {
            own_substitution(self.doc, &written).unwrap_or(written)
        } else {
            written
        };
        repo::normalize(self.base, &path).0
    }

    /// `kind/name` of the source (namespaces are not known before the build).
    pub(super) fn source(&self) -> (String, String) {
        (
            self.doc
                .str_at(&["spec", "sourceRef", "kind"])
                .unwrap_or_default(),
            self.doc
                .str_at(&["spec", "sourceRef", "name"])
                .unwrap_or_default(),
        )
    }

    pub(super) fn is_git_sourced(&self) -> bool {
        self.local
    }
}

/// `text` with the variables of the Kustomization's own
/// `spec.postBuild.substitute`, when they define all it uses.
fn own_substitution(doc: &Node, text: &str) -> Option<String> {
    use crate::postbuild::envsubst::{self, Lookup};
    let vars = doc.path(&["spec", "postBuild", "substitute"])?;
    let lookup = |name: &str| match vars.get(name).and_then(Node::as_scalar_string) {
        Some(v) => Lookup::Value(v),
        None => Lookup::Missing,
    };
    envsubst::parse(text).ok()?.eval(text, &lookup, true).ok()
}

/// Files a path builds (resources), reads (also patches, kustomization
/// files), and the directories it enters.
pub(super) type ReachSets = (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>);

/// Static view of the repository used to find entries: which files each
/// path builds, without running kustomize.
pub(super) struct StaticReach<'a> {
    pub(super) index: &'a RepoIndex,
    /// The raw Kustomizations of each file.
    pub(super) by_file: BTreeMap<&'a str, Vec<&'a RawKustomization<'a>>>,
    pub(super) by_path: std::cell::RefCell<BTreeMap<String, ReachSets>>,
}

impl<'a> StaticReach<'a> {
    pub(super) fn files(&self, path: &str) -> BTreeSet<String> {
        self.reach(path).0
    }

    /// Every file a build of `path` reads (resources, kustomization files, patches).
    pub(super) fn reads(&self, path: &str) -> BTreeSet<String> {
        self.reach(path).1
    }

    pub(super) fn reach(&self, path: &str) -> ReachSets {
        if !self.index.is_dir(path) {
            return Default::default();
        }
        self.by_path
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| {
                let r = flux::reach(&self.index.artifact(), path);
                (r.resources, r.reads, r.dirs)
            })
            .clone()
    }

    /// Files built from `start`, following the Flux Kustomizations found in
    /// them that use the same source, as Flux would.
    pub(super) fn transitive(
        &self,
        start_path: String,
        source: (String, String),
    ) -> BTreeSet<String> {
        let mut seen_paths = BTreeSet::new();
        let mut files = BTreeSet::new();
        let mut queue = vec![start_path];
        while let Some(path) = queue.pop() {
            if !seen_paths.insert(path.clone()) {
                continue;
            }
            for file in self.files(&path) {
                // An empty path would claim the whole repository for this
                // cluster; it stays a tier of the cluster but not a claim.
                let in_file = self
                    .by_file
                    .get(file.as_str())
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                for k in in_file.iter().filter(|k| k.source() == source) {
                    let path = k.path();
                    if !path.is_empty() {
                        queue.push(path);
                    }
                }
                files.insert(file);
            }
        }
        files
    }
}
