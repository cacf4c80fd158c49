//! `--fetch-remote` inside one build: what the build would download is
//! fetched first and mounted into its tree, round by round (a remote base
//! may name others), with every place in a fetched file mapped back to
//! where the repository names the remote.

use std::collections::HashMap;

use super::{BuildError, RemotePart};
use crate::model::{RenderFailure, Span};
use crate::render::Tree;
use crate::render::reach::{Reach, reach_tree};

/// How many rounds of remote bases naming remote bases are fetched
/// (kustomize has no limit but its cycle check; ten is deeper than any
/// repository shows).
const FETCH_ROUNDS: usize = 10;

/// What `--fetch-remote` did for one build.
#[derive(Debug, Default)]
pub(super) struct Fetching {
    pub(super) fetched: Vec<crate::model::Fetched>,
    pub(super) failures: Vec<(String, String)>,
    /// Every address tried, fetched or not.
    tried: std::collections::BTreeSet<String>,
    /// Mount prefix → where the repository (or an outer remote) names it.
    named_at: HashMap<String, Span>,
    /// The backend fetches for itself (an external kustomize).
    pub(super) by_backend: bool,
}

impl Fetching {
    /// The build stops for the remote bases left out: what it had of them.
    pub(super) fn unbuilt(self, left_out: Vec<(Span, String)>) -> BuildError {
        BuildError::RemoteBases(Box::new(RemotePart {
            left_out,
            fetched: self.fetched,
            failures: self.failures,
        }))
    }

    /// The transports an external program needs for `remotes`; `None`
    /// when one of them may not be handed to git for a reason that says
    /// nothing about Flux (it is then left out, and listed as not
    /// fetched); the build's failure when Flux's fetch would fail too.
    pub(super) fn admit(
        &mut self,
        fetcher: &crate::remote::Fetcher,
        remotes: &[(Span, String)],
    ) -> Result<Option<crate::exec::Transports>, BuildError> {
        let mut transports = crate::exec::Transports::Network;
        for (at, reference) in remotes {
            match fetcher.admit(reference) {
                Ok(Some(t @ crate::exec::Transports::NetworkAndLocal)) => transports = t,
                Ok(_) => {}
                Err(failure) if failure.definitive => {
                    return Err(BuildError::Failed(RenderFailure {
                        message: format!(
                            "remote base {}: {}",
                            crate::exec::printable(reference),
                            failure.message
                        ),
                        at: Some(at.clone()),
                    }));
                }
                Err(failure) => {
                    self.failures.push((reference.clone(), failure.message));
                    return Ok(None);
                }
            }
        }
        Ok(Some(transports))
    }

    pub(super) fn run(
        &mut self,
        fetcher: &crate::remote::Fetcher,
        tree: &mut Tree,
        reach: &mut Reach,
        path: &str,
    ) -> Result<(), BuildError> {
        for _ in 0..FETCH_ROUNDS {
            let bases: Vec<(Span, String, bool)> = reach
                .remotes
                .iter()
                .map(|(at, url)| (at.clone(), url.clone(), true))
                .chain(
                    reach
                        .remote_inputs
                        .iter()
                        .map(|(at, url)| (at.clone(), url.clone(), false)),
                )
                .filter(|(_, url, _)| !self.tried.contains(url.trim()))
                .collect();
            if bases.is_empty() {
                break;
            }
            for (at, url, is_base) in bases {
                self.tried.insert(url.trim().to_string());
                let at = self.place_of(tree, &at).unwrap_or(at);
                let outcome = if is_base {
                    fetcher.base(&url)
                } else {
                    fetcher.input(&url)
                };
                match outcome {
                    Ok(mount) => {
                        self.named_at.insert(mount.prefix.clone(), at.clone());
                        self.fetched.push(crate::model::Fetched {
                            at,
                            reference: url,
                            content: mount.content.clone(),
                            stale: mount.stale.clone(),
                            input: !is_base,
                        });
                        tree.mounts.push(mount);
                    }
                    Err(failure) if failure.definitive => {
                        return Err(BuildError::Failed(RenderFailure {
                            message: format!(
                                "accumulating resources: `{url}` could not be fetched: {} (kustomize-controller's build fails the same way)",
                                failure.message
                            ),
                            at: Some(at),
                        }));
                    }
                    Err(failure) => self.failures.push((url, failure.message)),
                }
            }
            *reach = reach_tree(tree, path);
        }
        Ok(())
    }

    /// Where a place inside a fetched remote is named in the repository.
    pub(super) fn place_of(&self, tree: &Tree, at: &Span) -> Option<Span> {
        let (mount, _) = tree.in_mount(&at.file)?;
        self.named_at.get(&mount.prefix).cloned()
    }

    /// A message with the mounts' paths written as the remote addresses.
    pub(super) fn rewrite(&self, tree: &Tree, message: &str) -> String {
        let mut out = message.to_string();
        for mount in &tree.mounts {
            out = mount.rewrite(&out);
        }
        out
    }

    pub(super) fn relocate_error(&self, tree: &Tree, err: BuildError) -> BuildError {
        match err {
            BuildError::Failed(mut f) => {
                if let Some(at) = f.at.as_ref().and_then(|a| self.place_of(tree, a)) {
                    f.at = Some(at);
                }
                f.message = self.rewrite(tree, &f.message);
                BuildError::Failed(f)
            }
            other => other,
        }
    }
}
