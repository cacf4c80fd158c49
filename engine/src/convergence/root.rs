//! Roots and consequences: which finding a deadlock follows from.
//!
//! A tier that never gets to Ready on a cold start is blocked by a chain of
//! reasons ([`super::simulate::Step`]) that ends at a root: a dependency
//! cycle (each member waits for another), a suspended tier (`Reconcile`
//! returns at once), or a tier that waits for itself (a kind its own
//! trigger creates after the dry-run, an object only its own output
//! defines). Fixing the root fixes every tier downstream of it, so the
//! findings of those tiers are reported as its consequences, with the
//! root's fix, instead of as causes of their own.

use super::ClusterAnalysis;
use super::simulate::Step;
use crate::model::TierId;

/// Where a deadlock chain starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// A dependency cycle, by its smallest member.
    Cycle(TierId),
    /// A suspended tier.
    Suspended(TierId),
    /// A tier that waits for itself.
    Itself(TierId),
    /// A loop through needs, dependencies and apply edges (a tier needs
    /// what only a tier that waits for it provides), by its smallest
    /// member, whichever tier of it a chain enters by.
    Loop(TierId),
}

impl Root {
    /// The key the root's findings and its consequences share, cluster
    /// included.
    pub fn key(&self, cluster: &str) -> String {
        match self {
            Root::Cycle(t) => format!("{cluster}|cycle:{t}"),
            Root::Suspended(t) => format!("{cluster}|suspended:{t}"),
            Root::Itself(t) => format!("{cluster}|itself:{t}"),
            Root::Loop(t) => format!("{cluster}|loop:{t}"),
        }
    }
}

impl ClusterAnalysis<'_> {
    /// The root a deadlock chain leads to: the first dependency cycle it
    /// enters, else the suspended tier or the tier that waits for itself it
    /// ends at, else the tier a loop through needs comes back to. `None`
    /// for a chain that ends anywhere else.
    pub(crate) fn root_of(&self, chain: &[Step]) -> Option<Root> {
        for step in chain {
            if let Some(c) = self.cycle_of(step.tier()) {
                return Some(Root::Cycle(self.cycles[c].members[0].clone()));
            }
        }
        let last = chain.last()?;
        match last {
            Step::Suspended { tier } => Some(Root::Suspended(tier.clone())),
            Step::Itself { tier, .. } => Some(Root::Itself(tier.clone())),
            // A chain that comes back to a tier already on it: the loop is
            // the chain from that tier on.
            step => {
                let next = step.next()?;
                let from = chain.iter().position(|s| s.tier() == next)?;
                chain[from..]
                    .iter()
                    .map(Step::tier)
                    .min()
                    .map(|t| Root::Loop(t.clone()))
            }
        }
    }

    /// The loop a consumer's own deadlock closes (its need's supplier
    /// `chain` leads back to it), as a root.
    pub(crate) fn loop_root(&self, consumer: &TierId, chain: &[Step]) -> Root {
        let smallest = chain
            .iter()
            .map(Step::tier)
            .chain(std::iter::once(consumer))
            .min()
            .unwrap_or(consumer);
        Root::Loop(smallest.clone())
    }

    /// Comment lines for `conformance graph`: each tier that never becomes
    /// Ready on a cold start, with the chain that says why (the verdict
    /// `check`, `crds` and `l1-plan` read).
    pub fn never_ready_notes(&self) -> String {
        let mut out = String::new();
        for id in &self.order.sequence {
            if self.live.ready(id) || self.under_suspension(id) {
                continue;
            }
            let chain = self.live.chain(id);
            if chain.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "# never Ready on a cold start: {id}: it {}\n",
                super::simulate::chain_text(self.cluster, &chain)
            ));
        }
        out
    }

    /// The tiers that never become Ready on a cold start, each with the
    /// chain that says why (`conformance graph --format dot` marks them).
    pub fn never_ready(&self) -> Vec<(TierId, String)> {
        self.order
            .sequence
            .iter()
            .filter(|id| !self.live.ready(id) && !self.under_suspension(id))
            .filter_map(|id| {
                let chain = self.live.chain(id);
                (!chain.is_empty()).then(|| {
                    (
                        id.clone(),
                        super::simulate::chain_text(self.cluster, &chain),
                    )
                })
            })
            .collect()
    }

    /// The index of the dependency cycle `tier` is a member of.
    pub(crate) fn cycle_of(&self, tier: &TierId) -> Option<usize> {
        self.cycle_index.get(tier).copied()
    }
}
