//! Reports: findings rendered for people ([`human`]: each finding with the
//! snippet of its place and of every related place) and for tools ([`json`],
//! the documented document with `related`, `why` and `fix`; [`ci`]: GitHub
//! annotations, JUnit XML, SARIF), and the audits: kind provenance
//! ([`crds`]) and postBuild substitution ([`substitutions`]).

pub mod ci;
pub mod crds;
pub mod human;
pub mod json;
pub mod substitutions;

use crate::check::Outcome;
use crate::model::TierState;

/// Counts of what a run covered, for summary lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    pub clusters: usize,
    pub kustomizations: usize,
    pub rendered: usize,
    pub failed: usize,
    pub not_checked: usize,
    pub objects: usize,
}

impl Coverage {
    /// Coverage of the clusters a run reports on (`selected` empty: all).
    pub fn of(outcome: &Outcome, selected: &[String]) -> Coverage {
        let mut c = Coverage::default();
        for cluster in outcome
            .model
            .clusters
            .iter()
            .filter(|c| selected.is_empty() || selected.contains(&c.name))
        {
            c.clusters += 1;
            for tier in cluster.tiers.values() {
                c.kustomizations += 1;
                match &tier.state {
                    TierState::Rendered(objects) => {
                        c.rendered += 1;
                        c.objects += objects.len();
                    }
                    TierState::RenderFailed(_) => c.failed += 1,
                    TierState::NotChecked(_) => c.not_checked += 1,
                }
            }
        }
        c
    }
}
