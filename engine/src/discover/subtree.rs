//! A source whose artifact is a subdirectory of this repository.
//!
//! Platform samples and company monorepos often keep the GitOps tree in a
//! subdirectory (`gitops/`, `repos/gitops-system/`) that their setup pushes
//! as a repository of its own (`git push` of the subtree, a Terraform
//! `gitea_repository`, a CodeCommit copy). Flux then resolves every
//! `spec.path` against that subdirectory: source-controller's artifact is
//! the pushed tree, and kustomize-controller joins `spec.path` to its root
//! (`SecureJoin(tmpDir, obj.Spec.Path)` in `reconcile`).
//!
//! Read as if the artifact were this repository's root, every such path is
//! "not found". When, for one source, the Kustomizations that name it have
//! paths that do not exist at the root but do exist below one and the same
//! ancestor directory of each Kustomization's own file, that ancestor is
//! taken as the source's root, exactly as if `sources:` in conformance.yaml
//! said so, and the report says it was inferred. One path that resolves at
//! the root, one that two ancestors would fit, two different ancestors, or
//! a GitRepository the repository defines with the URL of a repository not
//! named like the directory, and nothing is inferred; a path that exists nowhere (a typo, a template
//! placeholder) says nothing either way and stays `render-failed`.

use std::collections::BTreeMap;

use super::LocalSource;
use super::parent_dir;
use crate::repo::{self, RepoIndex};

/// One inferred root, with the reason in words.
#[derive(Debug, Clone)]
pub(crate) struct Inferred {
    /// The source, with the directory taken as its root.
    pub source: LocalSource,
    /// How many Kustomizations agree.
    pub kustomizations: usize,
}

impl Inferred {
    /// The note the report prints.
    pub fn note(&self) -> String {
        let s = &self.source;
        format!(
            "source {}/{}/{} is read as directory {}/ of this repository: every path its {} Kustomization{} name{} exists only below it (the subtree is pushed as its own repository); declare `sources` in conformance.yaml to override",
            s.kind,
            s.namespace.as_deref().unwrap_or("flux-system"),
            s.name,
            s.dir,
            self.kustomizations,
            if self.kustomizations == 1 { "" } else { "s" },
            if self.kustomizations == 1 { "s" } else { "" },
        )
    }
}

/// Roots inferred for sources that `configured` does not already map.
pub(crate) fn infer(index: &RepoIndex, configured: &super::LocalSources) -> Vec<Inferred> {
    // (kind, namespace, name) → candidate root per Kustomization; `None`
    // when one resolves at the root or below two ancestors.
    let mut votes: BTreeMap<(String, String, String), Vec<Option<String>>> = BTreeMap::new();
    for (file, f) in index.files() {
        let Ok(docs) = f.docs() else { continue };
        for doc in docs.iter().filter(|d| super::is_flux_kustomization(d)) {
            let kind = doc
                .str_at(&["spec", "sourceRef", "kind"])
                .unwrap_or_default();
            if !matches!(kind.as_str(), "GitRepository" | "OCIRepository" | "Bucket") {
                continue;
            }
            let name = doc
                .str_at(&["spec", "sourceRef", "name"])
                .unwrap_or_default();
            let namespace = doc
                .str_at(&["spec", "sourceRef", "namespace"])
                .or_else(|| doc.str_at(&["metadata", "namespace"]))
                .unwrap_or_else(|| "flux-system".into());
            if configured.dir_for(&kind, &name, Some(&namespace)).is_some() {
                continue;
            }
            let path = doc.str_at(&["spec", "path"]).unwrap_or_default();
            if path.contains("${") {
                continue;
            }
            let (path, escapes) = repo::normalize("", &path);
            if escapes || path.is_empty() {
                // The whole artifact: says nothing about where it is.
                continue;
            }
            let vote = if index.is_dir(&path) {
                None
            } else {
                match candidate(index, file, &path) {
                    Candidate::One(dir) => Some(dir),
                    Candidate::Several => None,
                    Candidate::Nowhere => continue,
                }
            };
            votes.entry((kind, namespace, name)).or_default().push(vote);
        }
    }
    let urls = super::entries::git_urls(index);
    let mut out = Vec::new();
    for ((kind, namespace, name), roots) in votes {
        let Some(Some(first)) = roots.first() else {
            continue;
        };
        // A GitRepository the repository defines names its repository: the
        // subtree only when that repository is named like it
        // (`…/gitops-system` for `repos/gitops-system/`); one that names
        // another repository is another repository, whatever its paths.
        // (A GitRepository written without a namespace gets one from its
        // kustomization: any definition of the name counts.)
        let defined = urls.get(&(name.clone(), namespace.clone())).or_else(|| {
            urls.iter()
                .find(|((n, _), _)| *n == name)
                .map(|(_, url)| url)
        });
        if kind == "GitRepository"
            && let Some(url) = defined
        {
            let repo_name = super::normalize_url(url)
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string();
            let dir_name = first
                .rsplit('/')
                .next()
                .unwrap_or(first)
                .to_ascii_lowercase();
            if repo_name != dir_name {
                continue;
            }
        }
        if roots.iter().all(|r| r.as_ref() == Some(first)) {
            out.push(Inferred {
                source: LocalSource {
                    kind,
                    name,
                    namespace: Some(namespace),
                    dir: first.clone(),
                },
                kustomizations: roots.len(),
            });
        }
    }
    out
}

enum Candidate {
    One(String),
    Several,
    Nowhere,
}

/// The ancestor directory A of `file` (not the root) with `A/path` a
/// directory.
fn candidate(index: &RepoIndex, file: &str, path: &str) -> Candidate {
    let mut found = None;
    let mut dir = parent_dir(file);
    while !dir.is_empty() {
        if index.is_dir(&repo::join(&dir, path)) {
            if found.is_some() {
                return Candidate::Several;
            }
            found = Some(dir.clone());
        }
        dir = parent_dir(&dir);
    }
    found.map_or(Candidate::Nowhere, Candidate::One)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ks(name: &str, path: &str, source: &str) -> String {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec: {{interval: 10m, path: {path}, prune: true, sourceRef: {{kind: GitRepository, name: {source}}}}}\n"
        )
    }

    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";

    #[test]
    fn paths_that_exist_only_below_one_ancestor_make_it_the_root() {
        let a = ks("infra", "./infrastructure/prod", "flux-system");
        let b = ks("apps", "apps/prod", "flux-system");
        let index = RepoIndex::from_memory(&[
            ("gitops/clusters/prod/infra.yaml", a.as_str()),
            ("gitops/clusters/prod/apps.yaml", b.as_str()),
            ("gitops/infrastructure/prod/cm.yaml", CM),
            ("gitops/apps/prod/cm.yaml", CM),
        ]);
        let found = infer(&index, &Default::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].source.dir, "gitops");
        assert_eq!(found[0].source.name, "flux-system");
        assert!(found[0].note().contains("directory gitops/"));
    }

    #[test]
    fn one_path_at_the_root_or_a_missing_one_infers_nothing() {
        let a = ks("infra", "./infrastructure/prod", "flux-system");
        let b = ks("apps", "./apps/prod", "flux-system");
        // apps/prod exists at the root: the root is the artifact.
        let index = RepoIndex::from_memory(&[
            ("gitops/clusters/prod/infra.yaml", a.as_str()),
            ("gitops/clusters/prod/apps.yaml", b.as_str()),
            ("gitops/infrastructure/prod/cm.yaml", CM),
            ("apps/prod/cm.yaml", CM),
        ]);
        assert!(infer(&index, &Default::default()).is_empty());
        // A path nowhere (a typo) neither votes nor vetoes.
        let c = ks("typo", "./infrastucture/prod", "flux-system");
        let index = RepoIndex::from_memory(&[
            ("gitops/clusters/prod/infra.yaml", a.as_str()),
            ("gitops/clusters/prod/typo.yaml", c.as_str()),
            ("gitops/infrastructure/prod/cm.yaml", CM),
        ]);
        let found = infer(&index, &Default::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kustomizations, 1);
        // A GitRepository of another repository is not a subtree of this one.
        let other = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {interval: 1m, url: 'https://github.com/example/other-repo'}\n";
        let index = RepoIndex::from_memory(&[
            ("gitops/clusters/prod/infra.yaml", a.as_str()),
            ("gitops/clusters/prod/source.yaml", other),
            ("gitops/infrastructure/prod/cm.yaml", CM),
        ]);
        assert!(infer(&index, &Default::default()).is_empty());
        // Written without a namespace (its kustomization sets one): the
        // same.
        let bare = other.replace(", namespace: flux-system}", "}");
        let index = RepoIndex::from_memory(&[
            ("gitops/clusters/prod/infra.yaml", a.as_str()),
            ("gitops/clusters/prod/source.yaml", bare.as_str()),
            ("gitops/infrastructure/prod/cm.yaml", CM),
        ]);
        assert!(infer(&index, &Default::default()).is_empty());
        // One named like the subtree is the subtree pushed on its own.
        let same = other.replace("other-repo", "gitops.git");
        let index = RepoIndex::from_memory(&[
            ("gitops/clusters/prod/infra.yaml", a.as_str()),
            ("gitops/clusters/prod/source.yaml", same.as_str()),
            ("gitops/infrastructure/prod/cm.yaml", CM),
        ]);
        assert_eq!(infer(&index, &Default::default()).len(), 1);
        // Nothing but typos: nothing inferred.
        let index = RepoIndex::from_memory(&[
            ("gitops/clusters/prod/typo.yaml", c.as_str()),
            ("gitops/infrastructure/prod/cm.yaml", CM),
        ]);
        assert!(infer(&index, &Default::default()).is_empty());
    }
}
