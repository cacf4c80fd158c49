//! The boundary: whether what a cluster's run reads is the cluster's whole
//! world.
//!
//! A cluster is often more than its repository: its sync object (and the
//! variables ConfigMap, the source, the namespaces that come with it) made
//! by an installer (Terraform, a cloud extension, a platform controller),
//! other repositories it syncs that this run does not read. Where the
//! repository shows that (the evidence), something it refers to that
//! nothing read here creates is a **boundary item**, not a certain failure:
//! at most a warning that names the evidence and the one line that settles
//! it (`external:` in conformance.yaml, or `--source`). Only where the
//! repository is shown to be the whole world (it bootstraps Flux from git
//! itself and every source it syncs is read) is "nothing creates it" an
//! error, and the finding says which evidence made it so.

use crate::model::{Cluster, Entry, TierId, TierState};

/// What a cluster's world is, as far as the repository shows.
#[derive(Debug, Clone, Default)]
pub struct World {
    /// Why things outside the run may exist on the cluster (empty: the run
    /// reads the cluster's whole world).
    pub open: Vec<String>,
    /// What shows the world closed, in words (when `open` is empty).
    pub closed: String,
    /// The tiers not checked because their source is not read, each with
    /// its source: the evidence behind the "syncs sources" reason.
    unread: Vec<(TierId, String)>,
    /// The reasons other than unread sources.
    others: Vec<String>,
}

/// How many unread sources a reason names before "and N more".
const SHOWN: usize = 3;

impl World {
    /// The world of `cluster`: open when its sync object is made outside
    /// git, or when it syncs sources this run does not read.
    pub fn of(cluster: &Cluster) -> World {
        let mut others = Vec::new();
        if let Some(why) = &cluster.sync_outside {
            others.push(why.clone());
        }
        // Sources the cluster defines (rendered) and the run does not read;
        // a source defined nowhere is not another world, only missing.
        let unread: Vec<(TierId, String)> = cluster
            .tiers
            .values()
            .filter(|t| matches!(t.state, TierState::NotChecked(_)))
            .filter(|t| {
                !cluster.known_statically(&t.id) && cluster.source_object(&t.source_ref).is_some()
            })
            .map(|t| (t.id.clone(), t.source_ref.to_string()))
            .collect();
        let closed = match &cluster.entry {
            Entry::SyncKustomization { tier, .. } => format!(
                "cluster {} bootstraps Flux from git itself (its sync Kustomization {tier} is in the repository) and every source it syncs is read",
                cluster.name
            ),
            Entry::Directory { path } => format!(
                "cluster {} is synced from git by what the repository defines ({path}/) and every source it syncs is read",
                cluster.name
            ),
        };
        World::assemble(others, unread, closed)
    }

    /// The world as one consumer sees it: tiers `skip` names (the
    /// Kustomizations the consumer applies itself, which exist only after
    /// its dry-run) cannot have created anything it needs by then, so the
    /// sources only they sync are no evidence for it.
    pub fn without(&self, skip: impl Fn(&TierId) -> bool) -> World {
        let unread = self
            .unread
            .iter()
            .filter(|(t, _)| !skip(t))
            .cloned()
            .collect();
        World::assemble(self.others.clone(), unread, self.closed.clone())
    }

    fn assemble(others: Vec<String>, unread: Vec<(TierId, String)>, closed: String) -> World {
        let mut open = others.clone();
        let sources: Vec<&String> = unread
            .iter()
            .map(|(_, s)| s)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !sources.is_empty() {
            let unread = &sources;
            let more = match unread.len().saturating_sub(SHOWN) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            open.push(format!(
                "it syncs sources this run does not read ({}{more}): what they apply may create it",
                unread
                    .iter()
                    .take(SHOWN)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        World {
            open,
            closed,
            unread,
            others,
        }
    }

    /// Whether something nothing here creates may exist anyway.
    pub fn is_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// Why the finding about `what` is a boundary item (the world is open),
    /// and the lines that settle it; or, in a closed world, the evidence
    /// that makes "nothing creates it" certain.
    pub fn words(&self, what: &str) -> (String, Option<String>) {
        if self.open.is_empty() {
            return (
                format!(
                    "{}; if {what} comes from outside (an installer, another repository, an in-cluster provider), declare it: `external: [\"{what}\"]` in conformance.yaml",
                    self.closed
                ),
                None,
            );
        }
        (
            format!(
                "nothing this run reads creates {what}, but this run is not the cluster's whole world: {}",
                self.open.join("; ")
            ),
            Some(format!(
                "if {what} comes from outside, declare it: `external: [\"{what}\"]` in conformance.yaml (or check the repository that creates it in the same run with `--source REF=DIR`); if nothing creates it, create it"
            )),
        )
    }
}
