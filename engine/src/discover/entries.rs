//! Cluster entries: sync Kustomizations first (a Flux Kustomization whose own
//! build contains the file that defines it), then a FluxInstance's sync
//! path, then directories of Kustomizations that nothing builds; and the
//! names clusters get.

use std::collections::{BTreeMap, BTreeSet};

use super::coverage::{RawKustomization, StaticReach};
use super::operator::{Instance, directory_entry, flux_instance_sync_dirs};
use super::walk::EntryPoint;
use super::{LocalSources, is_flux_kustomization, layouts, parent_dir, tier_from};
use crate::model::{Entry, Span};
use crate::repo::{self, RepoIndex};
use crate::yaml::Node;

/// Finds cluster entries, in four steps: sync Kustomizations with a
/// specific path; else the directories FluxInstances sync; else directories
/// of Kustomizations that nothing builds; then Kustomizations whose empty
/// path builds the whole repository, if nothing else claims them.
pub(super) fn find_entries(
    index: &RepoIndex,
    local: &LocalSources,
    instances: &[Instance],
    self_urls: &BTreeSet<String>,
    vars: &[(String, BTreeMap<String, String>)],
) -> (Vec<EntryPoint>, Vec<String>, BTreeMap<String, String>) {
    let written = raw_kustomizations(index, local, self_urls);
    // Sync Kustomizations whose path a patch of the cluster's build sets
    // (per-cluster bootstrap patches over a shared, variable base).
    let patched = patched_syncs(index, &written);
    let mut raw = written.clone();
    raw.extend(patched.iter().map(|(file, doc, base)| RawKustomization {
        file,
        doc,
        base: "",
        local: base.local,
        from_patch: true,
    }));
    let mut by_file: BTreeMap<&str, Vec<&RawKustomization>> = BTreeMap::new();
    for k in &raw {
        by_file.entry(k.file).or_default().push(k);
    }
    let mut search = Search {
        index,
        local,
        raw: &raw,
        reach: StaticReach {
            index,
            by_file,
            by_path: Default::default(),
        },
        entries: Vec::new(),
        covered: BTreeSet::new(),
        entry_paths: BTreeSet::new(),
        instance_paths: BTreeMap::new(),
        notes: Vec::new(),
        vars,
        named: BTreeMap::new(),
    };
    let (specific, whole_repo) = search.sync_candidates();
    // A FluxInstance's sync path is an entry beside sync Kustomizations (one
    // cluster bootstrapped with `flux bootstrap`, another by the Flux
    // Operator). It goes first: a Kustomization its walk renders (one whose
    // path holds its own file) is a tier of that cluster, not another.
    search.instance_entries(instances);
    let from_instances = search.entries.len();
    for k in specific {
        search.accept_sync(k);
    }
    // Only a fallback: with a sync Kustomization or a FluxInstance in git, an
    // unreferenced directory is not a cluster.
    if search.entries.is_empty() {
        search.cluster_directories();
        search.orphan_entries();
    } else if from_instances == search.entries.len() {
        return (search.entries, search.notes, search.named);
    }
    // Like directories nothing builds, a whole-repository Kustomization in
    // a hidden directory (`.archive/`) is kept, not synced.
    for k in whole_repo
        .into_iter()
        .filter(|k| !k.file.split('/').any(|part| part.starts_with('.')))
    {
        search.accept_sync(k);
    }
    (search.entries, search.notes, search.named)
}

/// The URLs this repository is known by: the URLs its FluxInstances and
/// its `flux-system` GitRepository sync, and its git remotes
/// (`.git/config`) when one of them is a URL the repository's
/// GitRepositories name (normalised), and the URLs conformance.yaml
/// declares (`repository.url`). Empty when nothing says.
pub(super) fn self_urls(
    index: &RepoIndex,
    instances: &[Instance],
    declared: &[String],
) -> BTreeSet<String> {
    let mut urls: BTreeSet<String> = checkout_urls(index, declared);
    urls.extend(
        instances
            .iter()
            .filter(|i| i.kind == "GitRepository")
            .filter_map(|i| i.url.as_deref())
            .map(super::normalize_url),
    );
    // The repository's own sync source, by Flux's convention
    // (`flux bootstrap` writes GitRepository flux-system/flux-system with
    // this repository's URL).
    urls.extend(
        super::git_repositories(index, "flux-system", "flux-system")
            .filter_map(|d| d.str_at(&["spec", "url"]))
            .map(|u| super::normalize_url(&u)),
    );
    // The checkout's git remotes count only when one of them is a URL a
    // GitRepository of the repository names: a mirror, a fork, a GitLab or
    // Gitea copy or a CI cache is known by a URL Flux never syncs, and says
    // nothing about which GitRepository is this repository (then, as in a
    // checkout without `.git`, a sync Kustomization is recognised by its
    // path holding its own file).
    urls
}

/// The URLs that name this checkout for certain: those conformance.yaml
/// declares, and its git remotes when one of them is a URL a GitRepository
/// of the repository names (normalised).
pub(super) fn checkout_urls(index: &RepoIndex, declared: &[String]) -> BTreeSet<String> {
    let mut urls: BTreeSet<String> = declared.iter().map(|u| super::normalize_url(u)).collect();
    let remotes = git_remotes(index);
    let named: BTreeSet<String> = git_urls(index)
        .values()
        .map(|u| super::normalize_url(u))
        .collect();
    if remotes.iter().any(|r| named.contains(r)) {
        urls.extend(remotes);
    }
    urls
}

/// The repository names the checkout goes by: its remotes' last path
/// segments and its root directory's name, lowercase.
pub(super) fn checkout_names(index: &RepoIndex) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = git_remotes(index)
        .iter()
        .filter_map(|u| u.rsplit('/').next().map(str::to_string))
        .filter(|n| !n.is_empty())
        .collect();
    if let Some(dir) = index.root().file_name() {
        names.insert(dir.to_string_lossy().to_ascii_lowercase());
    }
    names
}

/// The URLs of the checkout's git remotes (`.git/config`), normalised.
fn git_remotes(index: &RepoIndex) -> BTreeSet<String> {
    let Ok(config) = std::fs::read_to_string(index.root().join(".git/config")) else {
        return BTreeSet::new();
    };
    config
        .lines()
        .filter_map(|l| l.trim().strip_prefix("url"))
        .filter_map(|l| l.trim_start().strip_prefix('='))
        .map(|u| super::normalize_url(u.trim()))
        .collect()
}

/// The URLs of the GitRepositories the repository defines, by (name,
/// namespace); the first definition wins.
pub(super) fn git_urls(index: &RepoIndex) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for d in index
        .files()
        .filter_map(|(_, f)| f.docs().as_ref().ok())
        .flatten()
        .filter(|d| d.str_at(&["kind"]).as_deref() == Some("GitRepository"))
    {
        if let (Some(name), Some(url)) =
            (d.str_at(&["metadata", "name"]), d.str_at(&["spec", "url"]))
        {
            let ns = d
                .str_at(&["metadata", "namespace"])
                .unwrap_or_else(|| "default".into());
            out.entry((name, ns)).or_insert(url);
        }
    }
    out
}

/// Every Flux Kustomization as written in the repository's files. A
/// Kustomization of a GitRepository is this repository's unless the
/// repository's URLs are known and its GitRepository names another.
fn raw_kustomizations<'a>(
    index: &'a RepoIndex,
    local: &'a LocalSources,
    self_urls: &BTreeSet<String>,
) -> Vec<RawKustomization<'a>> {
    let urls = if self_urls.is_empty() {
        BTreeMap::new()
    } else {
        git_urls(index)
    };
    let urls = &urls;
    index
        .files()
        .filter_map(|(file, f)| f.docs().as_ref().ok().map(|docs| (file, docs)))
        .flat_map(|(file, docs)| {
            docs.iter()
                .filter(|d| is_flux_kustomization(d))
                .map(move |doc| {
                    let kind = doc
                        .str_at(&["spec", "sourceRef", "kind"])
                        .unwrap_or_default();
                    let name = doc
                        .str_at(&["spec", "sourceRef", "name"])
                        .unwrap_or_default();
                    let namespace = doc
                        .str_at(&["spec", "sourceRef", "namespace"])
                        .or_else(|| doc.str_at(&["metadata", "namespace"]));
                    let configured = local.dir_for(&kind, &name, namespace.as_deref());
                    let ns = namespace.clone().unwrap_or_else(|| "flux-system".into());
                    let other_repository = kind == "GitRepository"
                        && urls
                            .get(&(name.clone(), ns))
                            .is_some_and(|url| !self_urls.contains(&super::normalize_url(url)));
                    // No sourceRef as written: a patch of the build that
                    // includes it completes it (an entry directory's
                    // `patches` setting sourceRef, interval, namespace), so
                    // its source is the one that build gives, this
                    // repository's until the build shows otherwise.
                    let completed_by_build = doc.path(&["spec", "sourceRef"]).is_none();
                    RawKustomization {
                        file,
                        doc,
                        base: configured.unwrap_or_default(),
                        local: (kind == "GitRepository" && !other_repository)
                            || configured.is_some()
                            || completed_by_build,
                        from_patch: false,
                    }
                })
        })
        .collect()
}

/// Sync Kustomizations made literal by a patch: a Flux Kustomization
/// document that a build of its own `spec.path` P reads as a patch (not as
/// a resource), applied to the Kustomization of the same name that the
/// build renders. Each is the entry of the cluster P.
fn patched_syncs<'a>(
    index: &'a RepoIndex,
    raw: &[RawKustomization<'a>],
) -> Vec<(&'a str, Node, RawKustomization<'a>)> {
    if !raw.iter().any(|k| {
        k.doc
            .str_at(&["spec", "path"])
            .is_some_and(|p| p.contains("${"))
    }) {
        return Vec::new();
    }
    let name_of = |doc: &Node| {
        (
            doc.str_at(&["metadata", "name"]).unwrap_or_default(),
            doc.str_at(&["metadata", "namespace"])
                .unwrap_or_else(|| "flux-system".into()),
        )
    };
    let artifact = index.artifact();
    let mut out = Vec::new();
    for patch in raw {
        let path = patch.path();
        if path.is_empty() || !artifact.is_dir(&path) {
            continue;
        }
        let reach = crate::render::flux::reach(&artifact, &path);
        if !reach.reads.contains(patch.file) || reach.resources.contains(patch.file) {
            continue;
        }
        let Some(base) = raw
            .iter()
            .find(|b| reach.resources.contains(b.file) && name_of(b.doc) == name_of(patch.doc))
        else {
            continue;
        };
        let text = serde_json::to_string(&patch.doc.to_json()).unwrap_or_default();
        if let Ok(Some(merged)) = crate::render::native::patch_one(base.doc, &text, None) {
            out.push((patch.file, merged, base.clone()));
        }
    }
    out
}

/// The entry search in progress.
struct Search<'a> {
    index: &'a RepoIndex,
    local: &'a LocalSources,
    raw: &'a [RawKustomization<'a>],
    reach: StaticReach<'a>,
    entries: Vec<EntryPoint>,
    /// Files some accepted entry's walk builds.
    covered: BTreeSet<String>,
    entry_paths: BTreeSet<String>,
    /// The entry paths a FluxInstance syncs: path → the instance's file and
    /// the sync Kustomization it creates.
    instance_paths: BTreeMap<String, (String, crate::model::TierId)>,
    /// What the search decided that a user should hear (`discovery:` notes).
    notes: Vec<String>,
    /// `clusters.<name>.vars`.
    vars: &'a [(String, BTreeMap<String, String>)],
    /// Entry directories named by the cluster whose vars fill them in.
    named: BTreeMap<String, String>,
}

impl<'a> Search<'a> {
    /// Sync Kustomizations: they build the file that defines them. Most
    /// specific path first, the conventional flux-system name first among
    /// equals. Those with an empty path build the whole repository and so
    /// "contain themselves" trivially: they come separately, last.
    fn sync_candidates(&self) -> (Vec<&'a RawKustomization<'a>>, Vec<&'a RawKustomization<'a>>) {
        let mut candidates: Vec<&RawKustomization> = self
            .raw
            .iter()
            .filter(|k| {
                let path = k.path();
                k.is_git_sourced()
                    && (self.reach.files(&path).contains(k.file)
                        || (k.from_patch && self.reach.reads(&path).contains(k.file))
                        || (inside(k.file, &path)
                            && (broken_kustomization(self.index, &path) || bootstrapped(k))))
            })
            .collect();
        candidates.sort_by_key(|k| {
            let path = k.path();
            let depth = path.split('/').filter(|s| !s.is_empty()).count();
            let conventional =
                k.doc.str_at(&["metadata", "name"]).as_deref() == Some("flux-system");
            (std::cmp::Reverse(depth), !conventional, path, k.file)
        });
        // A Kustomization that contains its own file but is rendered by
        // another candidate's walk (which it does not render in turn) is a
        // tier of that cluster, not a cluster of its own.
        let covers: Vec<BTreeSet<String>> = candidates
            .iter()
            .map(|k| self.reach.transitive(k.path(), k.source()))
            .collect();
        // A whole-repository Kustomization (`path: ./`) builds every
        // file, so it claims only a candidate that is no cluster's sync
        // (an app's Kustomization listed in its own directory's
        // kustomization.yaml): one not named flux-system whose build
        // defines no source it syncs.
        let phantom = |j: usize| {
            (0..candidates.len()).any(|i| {
                i != j
                    && (!candidates[i].path().is_empty() || !self.a_sync(candidates[j]))
                    && covers[i].contains(candidates[j].file)
                    && !covers[j].contains(candidates[i].file)
            })
        };
        let keep: Vec<bool> = (0..candidates.len()).map(|j| !phantom(j)).collect();
        candidates
            .into_iter()
            .zip(keep)
            .filter_map(|(k, keep)| keep.then_some(k))
            .partition(|k| !k.path().is_empty())
    }

    /// Whether a Kustomization that builds its own file looks like a
    /// cluster's sync: named `flux-system` (what `flux bootstrap` writes),
    /// or its build defines the source it syncs (gotk-sync.yaml's
    /// GitRepository beside it).
    fn a_sync(&self, k: &RawKustomization) -> bool {
        k.doc.str_at(&["metadata", "name"]).as_deref() == Some("flux-system")
            || self.sources_built(&k.path()).contains(&k.source())
    }

    /// The Flux sources (kind, name) the build of a path defines.
    fn sources_built(&self, path: &str) -> BTreeSet<(String, String)> {
        self.reach
            .files(path)
            .iter()
            .filter_map(|f| self.index.file(f)?.docs().as_ref().ok())
            .flatten()
            .filter(|d| {
                d.str_at(&["apiVersion"])
                    .is_some_and(|a| a.starts_with("source.toolkit.fluxcd.io/"))
            })
            .filter_map(|d| Some((d.str_at(&["kind"])?, d.str_at(&["metadata", "name"])?)))
            .collect()
    }

    /// Accepts a sync Kustomization, unless an accepted cluster already
    /// builds its file (then it belongs to that cluster).
    fn accept_sync(&mut self, k: &RawKustomization) {
        let path = k.path();
        if let Some((file, created)) = self.instance_paths.get(&path) {
            // A FluxInstance and a sync Kustomization of the same path: one
            // physical cluster. Under the instance's own sync name, the
            // operator's Kustomization is this one (a move to the Flux
            // Operator, adopting it); under another name both reconcile the
            // path and every object has two owners (duplicate-object).
            let id = crate::model::TierId::new(
                k.doc
                    .str_at(&["metadata", "namespace"])
                    .unwrap_or_else(|| "default".into()),
                k.doc.str_at(&["metadata", "name"]).unwrap_or_default(),
            );
            self.notes.push(if id == *created {
                format!(
                    "{} and the FluxInstance of {file} both sync ./{path} as Kustomization {id}: one cluster, which the Flux Operator reconciles once it takes the Kustomization over",
                    k.file
                )
            } else {
                format!(
                    "{} syncs ./{path}, which the FluxInstance of {file} syncs too as Kustomization {created}: one cluster, where both Kustomizations apply every object of the path",
                    k.file
                )
            });
            return;
        }
        if self.covered.contains(k.file) || !self.entry_paths.insert(path.clone()) {
            return;
        }
        self.covered
            .extend(self.reach.transitive(path.clone(), k.source()));
        let tier = tier_from(k.doc, Span::new(k.file, k.doc.line), None, self.local);
        self.entries.push(EntryPoint {
            entry: Entry::SyncKustomization {
                tier: tier.id.clone(),
                path,
            },
            tier,
            outside: None,
        });
    }

    /// A FluxInstance (or the flux-instance chart's values) in the
    /// repository says which directory it syncs: that is the entry, and no
    /// guessing.
    fn instance_entries(&mut self, instances: &[Instance]) {
        let mut notes = Vec::new();
        let dirs =
            flux_instance_sync_dirs(self.index, self.local, instances, self.vars, &mut notes);
        self.notes.extend(notes);
        for (dir, instance, name) in dirs {
            if let Some(name) = name {
                self.named.insert(dir.clone(), name);
            }
            // Built by a cluster already found: part of it, not another.
            let built = self.covered.iter().any(|f| parent_dir(f) == dir);
            if !built && self.entry_paths.insert(dir.clone()) {
                self.instance_paths.insert(
                    dir.clone(),
                    (
                        instance.file.to_string(),
                        crate::model::TierId::new(
                            instance.names.namespace.clone(),
                            instance.names.name.clone(),
                        ),
                    ),
                );
                self.covered.extend(
                    self.reach
                        .transitive(dir.clone(), ("GitRepository".into(), "flux-system".into())),
                );
                self.entries
                    .push(directory_entry(&dir, self.local, Some(instance)));
            }
        }
    }

    /// Flux Operator layout without a FluxInstance in git: directories of
    /// Kustomizations in files that no git-sourced Kustomization reads (as a
    /// resource or as a patch). Hidden directories (`.archive`, `.github`)
    /// never are.
    fn orphan_entries(&mut self) {
        let reach = &self.reach;
        let mut read_by_any: BTreeSet<String> = self
            .raw
            .iter()
            .filter(|k| k.is_git_sourced() && !k.path().is_empty())
            .flat_map(|k| reach.reads(&k.path()))
            .collect();
        // Files another directory's kustomization includes are part of some
        // build (an overlay of an artifact we cannot follow, say), whatever
        // its source: not a cluster's entry. So is anything inside a
        // directory such a build enters (an app left out of its overlay is
        // disabled, not a cluster).
        let mut build_dirs: BTreeSet<String> = self
            .raw
            .iter()
            .filter(|k| k.is_git_sourced() && !k.path().is_empty())
            .flat_map(|k| reach.reach(&k.path()).2)
            .collect();
        for (file, _) in self.index.files() {
            let name = file.rsplit('/').next().unwrap_or(file);
            if !repo::KUSTOMIZATION_FILE_NAMES.contains(&name) {
                continue;
            }
            let dir = parent_dir(file);
            // A directory's own files are what make it an entry; files in
            // its subdirectories are part of its build like any other.
            let own = |f: &String| dir.is_empty() || *f == dir || parent_dir(f) == dir;
            let (_, reads, dirs) = reach.reach(&dir);
            read_by_any.extend(reads.into_iter().filter(|f| !own(f)));
            build_dirs.extend(dirs.into_iter().filter(|d| dir.is_empty() || *d != dir));
        }
        let inside_a_build = |dir: &str| {
            build_dirs
                .iter()
                .any(|b| !b.is_empty() && (dir == b || dir.starts_with(&format!("{b}/"))))
        };
        // Sync objects applied by hand (`kubectl apply -k flux/config`)
        // define the source their Kustomizations sync, as `flux bootstrap`'s
        // gotk-sync.yaml does. When some orphan directory does, it is the
        // entry, and the others (an `_archive/`, a forgotten app) are files
        // nothing applies, not clusters; only when none does is each taken
        // for a FluxInstance's sync outside git (its GitRepository too).
        let self_contained = |dir: &String| {
            let defined = self.sources_built(dir);
            self.raw
                .iter()
                .any(|k| parent_dir(k.file) == *dir && defined.contains(&k.source()))
        };
        // Such a directory may lie inside the path it syncs, left out of
        // that path's own kustomization (`flux/config` under `flux/`).
        let orphan_dirs: BTreeSet<String> = self
            .raw
            .iter()
            .filter(|k| !k.file.split('/').any(|part| part.starts_with('.')))
            .filter(|k| !read_by_any.contains(k.file) && !self.covered.contains(k.file))
            .filter(|k| {
                let dir = parent_dir(k.file);
                !inside_a_build(&dir) || self_contained(&dir)
            })
            .filter(|k| !(k.is_git_sourced() && k.path().is_empty()))
            .map(|k| parent_dir(k.file))
            .collect();
        let by_hand: BTreeSet<String> = orphan_dirs
            .iter()
            .filter(|d| self_contained(d))
            .cloned()
            .collect();
        let applied_by_hand = !by_hand.is_empty();
        let orphan_dirs = if by_hand.is_empty() {
            orphan_dirs
        } else {
            by_hand
        };
        let (orphan_dirs, layout_notes) =
            not_catalogs_or_test_data(orphan_dirs, !self.entries.is_empty());
        self.notes.extend(layout_notes);
        for dir in &orphan_dirs {
            let inside_other = orphan_dirs.iter().any(|other| {
                other != dir && {
                    let files = reach.files(other);
                    self.raw
                        .iter()
                        .filter(|k| parent_dir(k.file) == *dir)
                        .all(|k| files.contains(k.file))
                }
            });
            if inside_other || !self.entry_paths.insert(dir.clone()) {
                continue;
            }
            if applied_by_hand {
                self.notes.push(format!(
                    "{dir}/ is a cluster's entry: it defines the source its own Kustomizations sync, so it is applied by hand at bootstrap (as `flux bootstrap` applies gotk-sync.yaml), and what it builds exists before Flux starts"
                ));
            }
            let mut entry = directory_entry(dir, self.local, None);
            if applied_by_hand {
                // The repository defines the source it syncs.
                entry.outside = None;
            }
            self.covered.extend(
                reach.transitive(dir.clone(), ("GitRepository".into(), "flux-system".into())),
            );
            self.entries.push(entry);
        }
    }
}

impl Search<'_> {
    /// A cluster directory under `clusters/` whose kustomization builds
    /// Flux Kustomizations kept elsewhere, included by no other build: its
    /// sync object is made outside git ([`layouts::cluster_directories`]).
    fn cluster_directories(&mut self) {
        for (dir, note) in layouts::cluster_directories(self.index, self.raw, &self.reach) {
            if !self.entry_paths.insert(dir.clone()) {
                continue;
            }
            self.notes.push(note);
            let entry = directory_entry(&dir, self.local, None);
            self.covered.extend(
                self.reach
                    .transitive(dir.clone(), ("GitRepository".into(), "flux-system".into())),
            );
            self.entries.push(entry);
        }
    }
}

/// Directories nothing builds that are not clusters: an application
/// catalog's versioned app directories, always; test-data trees, when some
/// other directory remains or the repository has entries elsewhere. With
/// the notes that say so.
fn not_catalogs_or_test_data(
    dirs: BTreeSet<String>,
    entries_elsewhere: bool,
) -> (BTreeSet<String>, Vec<String>) {
    let mut notes = Vec::new();
    // Beside cluster directories (sync made outside git), only a directory
    // under `clusters/` is another cluster; anything else is files nothing
    // applies.
    let dirs: BTreeSet<String> = if entries_elsewhere {
        dirs.into_iter()
            .filter(|d| d.split('/').any(|s| s == "clusters"))
            .collect()
    } else {
        dirs
    };
    {
        // (Their Kustomizations are then files nothing applies, and the
        // note on those says the catalog.)
        let catalogs = layouts::catalogs(dirs.iter().map(String::as_str));
        let outside: BTreeSet<String> = dirs
            .iter()
            .filter(|d| !layouts::in_catalog(&catalogs, d))
            .cloned()
            .collect();
        let real: BTreeSet<String> = outside
            .iter()
            .filter(|d| !layouts::is_test_data(d))
            .cloned()
            .collect();
        if (real.is_empty() && !entries_elsewhere) || real.len() == outside.len() {
            return (outside, notes);
        }
        let skipped: Vec<&String> = outside.difference(&real).collect();
        notes.push(format!(
            "{} director{} of Flux Kustomizations in test-data trees ({}) {} not checked as clusters: they hold a program's test inputs, and the repository has clusters elsewhere",
            skipped.len(),
            if skipped.len() == 1 { "y" } else { "ies" },
            skipped.iter().take(5).map(|d| format!("{d}/")).collect::<Vec<_>>().join(", "),
            if skipped.len() == 1 { "is" } else { "are" },
        ));
        (real, notes)
    }
}

/// Whether a Kustomization is the sync object `flux bootstrap` writes: the
/// `flux-system` Kustomization in namespace `flux-system`, in a
/// `gotk-sync.yaml`. It is a cluster's entry when its path holds its file,
/// even if the path's kustomization leaves `flux-system/` out (Flux's own
/// components then are not managed from git, but the path is synced).
fn bootstrapped(k: &RawKustomization) -> bool {
    k.file.rsplit('/').next() == Some("gotk-sync.yaml")
        && k.doc.str_at(&["metadata", "name"]).as_deref() == Some("flux-system")
        && k.doc.str_at(&["metadata", "namespace"]).as_deref() == Some("flux-system")
}

/// Whether `file` lies below the directory `dir`.
fn inside(file: &str, dir: &str) -> bool {
    !dir.is_empty() && file.starts_with(&format!("{dir}/"))
}

/// Whether the kustomization file of `dir` is one Flux cannot read as
/// written (invalid YAML, not a mapping, or a field kustomize does not
/// have): then whether it lists the Kustomization's own file cannot be
/// told, and a Kustomization inside `dir` is taken for the entry it most
/// likely is, so that the broken file is reported rather than the cluster
/// lost.
fn broken_kustomization(index: &RepoIndex, dir: &str) -> bool {
    let artifact = index.artifact();
    let Some(file) = artifact.kustomization_file(dir) else {
        return false;
    };
    match artifact.documents(&file) {
        Err(_) => true,
        Ok(docs) => docs.first().is_none_or(|doc| {
            !doc.is_map()
                || doc
                    .as_map()
                    .iter()
                    .any(|(k, _)| crate::render::paths::canonical_field(k).is_none())
        }),
    }
}

/// Names clusters by the shortest unique tail of their entry paths
/// (`clusters/prod` → `prod`; two `…/cluster` paths keep one more segment).
pub(super) fn cluster_names(paths: &[String]) -> Vec<String> {
    let segments: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| p.split('/').filter(|s| !s.is_empty()).collect())
        .collect();
    let tail = |segs: &[&str], n: usize| -> String {
        if segs.is_empty() {
            return "root".to_string();
        }
        segs[segs.len().saturating_sub(n)..].join("/")
    };
    segments
        .iter()
        .map(|segs| {
            let mut n = 1;
            loop {
                let candidate = tail(segs, n);
                let clashes = segments
                    .iter()
                    .filter(|other| tail(other, n) == candidate)
                    .count();
                if clashes <= 1 || n >= segs.len() {
                    return candidate;
                }
                n += 1;
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn cluster_names_are_shortest_unique_tails() {
        let paths = vec![
            "clusters/prod".to_string(),
            "clusters/dev".to_string(),
            "a/cluster".to_string(),
            "b/cluster".to_string(),
            String::new(),
        ];
        assert_eq!(
            cluster_names(&paths),
            vec!["prod", "dev", "a/cluster", "b/cluster", "root"]
        );
    }
}
