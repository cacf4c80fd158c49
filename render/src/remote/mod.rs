//! Fetching remote bases, behind `--fetch-remote` (`remote: fetch` in
//! conformance.yaml): what kustomize-controller downloads on every
//! reconcile, downloaded once per run so the whole tier is built and
//! checked.
//!
//! kustomize's order is kept (`KustTarget.accumulateResources`): an
//! http(s) address is first tried as one file (a GET whose 2xx body must be
//! YAML, [`http`]), and when that gives nothing usable and the address is a
//! git reference ([`spec`]), the repository is cloned with git ([`git`]).
//! An address that names a git repository explicitly (`//`, `.git`,
//! `_git/`) is cloned straight away: the GET could only return a web page.
//! What was fetched lives in a content-addressed cache ([`cache`]); a full
//! commit id is never fetched twice, and when an address cannot be reached
//! the copy it gave last is used and the tier says so.
//!
//! A failure is *definitive* only when the remote itself answers that the
//! content is not there (HTTP 4xx, "couldn't find remote ref"): then Flux's
//! build fails the same way, and the tier is `render-failed`. No network,
//! a timeout, or credentials this machine lacks say nothing about the
//! cluster: the tier keeps its local part and says what could not be
//! fetched.

pub mod cache;
pub mod chart;
pub mod git;
pub mod http;
pub mod spec;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::repo::RepoIndex;

pub use cache::Cache;

/// Fetched remote content, mounted into a build's tree under a prefix no
/// repository path has.
#[derive(Debug)]
pub struct Mount {
    /// The address as the kustomization writes it.
    pub reference: String,
    /// The mount's root in the tree (`.remote-<hash>`).
    pub prefix: String,
    /// The fetched files.
    pub index: RepoIndex,
    /// What the address names inside the mount: the kustomization's
    /// directory of a clone, or the one file of a GET.
    pub root: String,
    /// What was fetched, for reports: `commit 3f2a… of https://…` or
    /// `sha256 9c1e… (2,431 bytes)`.
    pub content: String,
    /// How a file of the mount is named in messages: the clone address, or
    /// the URL.
    base: String,
    /// Set when the fetch failed now and an earlier copy is used: why.
    pub stale: Option<String>,
}

impl Mount {
    /// The tree path the reference resolves to.
    pub(crate) fn root_path(&self) -> String {
        crate::repo::join(&self.prefix, &self.root)
    }

    /// `text` with this mount's tree paths written as the remote address.
    pub fn rewrite(&self, text: &str) -> String {
        if !text.contains(&self.prefix) {
            return text.to_string();
        }
        let root = self.root_path();
        let text = if self.index.is_file(&self.root) {
            text.replace(&root, &self.base)
        } else {
            text.to_string()
        };
        text.replace(&format!("{}/", self.prefix), &format!("{}//", self.base))
            .replace(&self.prefix, &self.base)
    }
}

/// Why an address gave nothing.
#[derive(Debug, Clone)]
pub struct Failure {
    /// What went wrong, kustomize's way where it has one.
    pub message: String,
    /// Flux's build would fail the same way (the remote answered); else
    /// only this machine could not fetch it.
    pub definitive: bool,
}

type Outcome = Result<Arc<Mount>, Failure>;

/// Whether remote bases are fetched (`remote:` in conformance.yaml,
/// `--fetch-remote` on the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Setting {
    /// Never: a tier's remote part stays unknown (the default).
    #[default]
    Offline,
    /// Fetched once per run into the cache, so the whole tier is checked.
    Fetch,
}

/// Fetches remote bases and generator inputs, each address once per run.
#[derive(Debug)]
pub struct Fetcher {
    cache: Cache,
    timeout: std::time::Duration,
    memo: Mutex<HashMap<String, Arc<OnceLock<Outcome>>>>,
    /// Charts fetched this run ([`chart`]).
    charts: Mutex<HashMap<String, Arc<OnceLock<chart::ChartOutcome>>>>,
}

impl Fetcher {
    /// A fetcher over a cache directory.
    pub fn new(cache: Cache) -> Fetcher {
        Fetcher {
            cache,
            timeout: spec::DEFAULT_TIMEOUT,
            memo: Mutex::new(HashMap::new()),
            charts: Mutex::new(HashMap::new()),
        }
    }

    /// A `resources`/`components` entry that is remote: a file or a
    /// kustomization directory.
    pub fn base(&self, reference: &str) -> Outcome {
        self.once(format!("base {reference}"), || {
            self.fetch_base(reference.trim())
        })
    }

    /// A generator input that is an http(s) URL: one file, any bytes.
    pub fn input(&self, url: &str) -> Outcome {
        self.once(format!("input {url}"), || {
            self.fetch_file(url.trim(), false).map(Arc::new)
        })
    }

    /// Whether a program that fetches for itself (an external kustomize)
    /// may be handed `reference`, and with which git transports: the
    /// checks [`Fetcher::base`] makes before it runs git. An address that
    /// is not a git reference (a plain URL) needs no git.
    pub(crate) fn admit(
        &self,
        reference: &str,
    ) -> Result<Option<crate::exec::Transports>, Failure> {
        let Ok(spec) = spec::git_spec(reference.trim()) else {
            return Ok(None);
        };
        spec.check(self.cache.root())
            .map(Some)
            .map_err(|refused| Failure {
                definitive: matches!(refused, crate::exec::Refused::Ref(..)),
                message: refused.to_string(),
            })
    }

    fn once(&self, key: String, fetch: impl FnOnce() -> Outcome) -> Outcome {
        let cell = {
            let mut memo = match self.memo.lock() {
                Ok(m) => m,
                Err(poisoned) => poisoned.into_inner(),
            };
            memo.entry(key).or_default().clone()
        };
        cell.get_or_init(fetch).clone()
    }

    fn fetch_base(&self, reference: &str) -> Outcome {
        let git = spec::git_spec(reference);
        let is_http = ["http://", "https://"].iter().any(|s| {
            reference
                .get(..s.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(s))
        });
        let mut file_failure = None;
        if is_http && !(git.is_ok() && names_a_repository(reference)) {
            match self.fetch_file(reference, true) {
                Ok(mount) => return Ok(Arc::new(mount)),
                Err(failure) => file_failure = Some(failure),
            }
        }
        match git {
            Ok(spec) => self
                .fetch_tree(reference, &spec)
                .map(Arc::new)
                .map_err(|f| {
                    match file_failure {
                        // Neither as a file nor as a git repository: both
                        // reasons; definitive when the server answered
                        // the GET with "not here".
                        Some(file) => Failure {
                            message: format!(
                                "{}; as a git repository: {}",
                                file.message, f.message
                            ),
                            definitive: file.definitive,
                        },
                        None => f,
                    }
                }),
            Err(why) => Err(file_failure.unwrap_or(Failure {
                message: format!(
                    "`{reference}` is neither a URL nor a git address kustomize can fetch ({why})"
                ),
                definitive: true,
            })),
        }
    }

    /// GET one file; `resources` must be YAML.
    fn fetch_file(&self, url: &str, resources: bool) -> Result<Mount, Failure> {
        let address = format!("GET {url}");
        let name = file_name(url);
        let (bytes, stale) = match http::get(url, self.timeout, crate::yaml::MAX_FILE_BYTES) {
            Ok(bytes) => {
                let hash = self
                    .cache
                    .put_blob(&bytes)
                    .map_err(|e| unknown(e.to_string()))?;
                self.cache
                    .put_record(&address, &format!("blob {hash}"))
                    .map_err(|e| unknown(e.to_string()))?;
                (bytes, None)
            }
            Err(e) if e.definitive() => {
                return Err(Failure {
                    message: format!("{url}: {}", e.describe()),
                    definitive: true,
                });
            }
            Err(e) => {
                let cached = self.cache.record(&address).and_then(|r| {
                    let hash = r.content.strip_prefix("blob ")?.to_string();
                    Some((self.cache.blob(&hash)?, cache::ago(r.fetched)))
                });
                match cached {
                    Some((bytes, ago)) => (
                        bytes,
                        Some(format!("{}; the copy fetched {ago} is used", e.describe())),
                    ),
                    None => return Err(unknown(e.describe())),
                }
            }
        };
        let text = String::from_utf8(bytes).map_err(|_| Failure {
            message: format!("{url}: the content is not UTF-8 text"),
            definitive: true,
        })?;
        if resources && let Err(why) = crate::yaml::parse_text(&text) {
            return Err(Failure {
                message: format!("{url}: the content is not YAML ({why})"),
                definitive: true,
            });
        }
        let hash = cache::sha256(text.as_bytes());
        Ok(Mount {
            reference: url.to_string(),
            prefix: prefix(url),
            content: format!("sha256 {} ({} bytes)", &hash[..12], text.len()),
            index: RepoIndex::from_memory(&[(name.as_str(), text.as_str())]),
            root: name,
            base: url.to_string(),
            stale,
        })
    }

    /// Clone (or find in the cache) a git reference.
    fn fetch_tree(&self, reference: &str, spec: &spec::GitSpec) -> Result<Mount, Failure> {
        let suffix = if spec.submodules { "" } else { "-nosub" };
        let wanted = spec.reference.as_deref().unwrap_or("HEAD");
        let address = format!("git {} {wanted}{suffix}", spec.clone);
        let shown = format!("{}@{wanted}", spec.clone);
        let is_commit = wanted.len() == 40 && wanted.bytes().all(|b| b.is_ascii_hexdigit());
        let mut stale = None;
        let name = if is_commit && self.cache.tree_path(&format!("{wanted}{suffix}")).is_dir() {
            format!("{}{suffix}", wanted.to_ascii_lowercase())
        } else {
            // Only what passes the checks reaches git. A ref git would
            // read as an option, or that is no ref name, fails Flux's
            // fetch too; an address this machine will not fetch says
            // nothing about the cluster.
            let transports = spec.check(self.cache.root()).map_err(|refused| Failure {
                definitive: matches!(refused, crate::exec::Refused::Ref(..)),
                message: format!("cloning {}: {refused}", crate::exec::printable(&shown)),
            })?;
            let scratch = self.cache.scratch().map_err(|e| unknown(e.to_string()))?;
            match git::clone(spec, &scratch, transports) {
                Ok(commit) => {
                    let _ = std::fs::remove_dir_all(scratch.join(".git"));
                    let name = format!("{commit}{suffix}");
                    self.cache
                        .put_tree(&scratch, &name)
                        .map_err(|e| unknown(e.to_string()))?;
                    self.cache
                        .put_record(&address, &format!("tree {name}"))
                        .map_err(|e| unknown(e.to_string()))?;
                    name
                }
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&scratch);
                    let cached = (!e.definitive)
                        .then(|| self.cache.record(&address))
                        .flatten()
                        .and_then(|r| {
                            let name = r.content.strip_prefix("tree ")?.to_string();
                            self.cache
                                .tree_path(&name)
                                .is_dir()
                                .then(|| (name, cache::ago(r.fetched)))
                        });
                    match cached {
                        Some((name, ago)) => {
                            stale =
                                Some(format!("{}; the checkout fetched {ago} is used", e.message));
                            name
                        }
                        None => {
                            return Err(Failure {
                                message: format!("cloning {shown}: {}", e.message),
                                definitive: e.definitive,
                            });
                        }
                    }
                }
            }
        };
        let dir = self.cache.tree_path(&name);
        let index = RepoIndex::load(&dir)
            .map_err(|e| unknown(format!("reading the checkout of {shown}: {e}")))?;
        if !spec.dir.is_empty() && !index.unfiltered().is_dir(&spec.dir) {
            return Err(Failure {
                message: format!(
                    "'{}' is not a directory of {shown} (kustomize: the path after `//` must name a kustomization directory)",
                    spec.dir
                ),
                definitive: stale.is_none(),
            });
        }
        let commit = name.trim_end_matches(suffix);
        Ok(Mount {
            reference: reference.to_string(),
            prefix: prefix(reference),
            content: format!(
                "commit {} of {}",
                &commit[..commit.len().min(12)],
                spec.clone
            ),
            index,
            root: spec.dir.clone(),
            base: shown,
            stale,
        })
    }
}

fn unknown(message: String) -> Failure {
    Failure {
        message,
        definitive: false,
    }
}

/// Explicit marks of a git repository in an address: `//` after the host,
/// `_git/`, a `.git` segment.
fn names_a_repository(reference: &str) -> bool {
    let path = url_path(reference);
    path.contains("//") || path.contains("_git/") || path.split('/').any(|s| s.ends_with(".git"))
}

/// The path of a URL: after the host, before the query.
fn url_path(url: &str) -> &str {
    let no_query = url.split(['?', '#']).next().unwrap_or(url);
    let after_scheme = no_query.split_once("://").map_or(no_query, |(_, r)| r);
    after_scheme.split_once('/').map_or("", |(_, path)| path)
}

/// The mount's root: a name no repository path starts with, the same for
/// the same address.
fn prefix(reference: &str) -> String {
    format!(
        "{MOUNT_PREFIX}{}",
        &cache::sha256(reference.as_bytes())[..16]
    )
}

/// What every mount's root starts with.
pub(crate) const MOUNT_PREFIX: &str = ".remote-";

/// The name a fetched file gets: the URL's last segment, with `.yaml`
/// added when it has no manifest extension (the loader reads by name).
fn file_name(url: &str) -> String {
    let last = url_path(url)
        .rsplit('/')
        .find(|s| !s.is_empty())
        .filter(|s| !s.contains(':') && *s != "." && *s != "..")
        .unwrap_or("index");
    if crate::repo::is_manifest_name(last) || last.ends_with(".json") {
        last.to_string()
    } else {
        format!("{last}.yaml")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_repository_marks_skip_the_get() {
        assert!(names_a_repository(
            "https://github.com/org/repo//base?ref=v1"
        ));
        assert!(names_a_repository("https://example.com/org/repo.git/base"));
        assert!(names_a_repository("https://dev.azure.com/o/p/_git/r/base"));
        assert!(!names_a_repository(
            "https://raw.githubusercontent.com/org/repo/v1/deploy.yaml"
        ));
    }

    #[test]
    fn fetched_files_are_named_by_their_last_segment() {
        assert_eq!(file_name("https://x.example/a/crds.yaml?x=1"), "crds.yaml");
        assert_eq!(file_name("https://x.example/download/v1"), "v1.yaml");
        assert_eq!(file_name("https://x.example/"), "index.yaml");
    }
}
