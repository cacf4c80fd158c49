//! The builds, wave by wave: every tier whose source is decided is built
//! (in parallel, one rayon worker per core), and what each build leaves is
//! recorded on its tier, which queues the Kustomizations it renders for the
//! next wave.

use std::collections::BTreeSet;

use rayon::prelude::*;

use super::walk::Walk;
use crate::model::{TierId, TierState};
use crate::remote::Fetcher;
use crate::render::{Kustomize, flux};
use crate::repo::Artifact;

/// Builds every cluster's tiers until no walk has one ready; returns every
/// file some tier's build read (for the Kustomizations nothing applies).
pub(super) fn build_all(
    walks: &mut [Walk],
    artifacts: &[Artifact],
    kustomize: &dyn Kustomize,
    remote: Option<&Fetcher>,
    index: &crate::repo::RepoIndex,
) -> BTreeSet<String> {
    let mut built = 0usize;
    // Every file some tier's build read, for the Kustomizations nothing applies.
    let mut read_files: BTreeSet<String> = BTreeSet::new();
    loop {
        for walk in walks.iter_mut() {
            walk.settle_sources(index);
        }
        let jobs: Vec<(usize, TierId)> = walks
            .iter()
            .enumerate()
            .flat_map(|(i, w)| w.ready.iter().map(move |id| (i, id.clone())))
            .collect();
        if jobs.is_empty() {
            break;
        }
        let known: usize = walks.iter().map(|w| w.tiers.len()).sum();
        crate::progress::show(&format!(
            "building Kustomizations: {built} of {known} found so far"
        ));
        built += jobs.len();
        let results: Vec<(usize, TierId, Result<flux::Built, flux::BuildError>)> = jobs
            .par_iter()
            .map(|(i, id)| {
                let tier = &walks[*i].tiers[id];
                let target = flux::Target {
                    id,
                    path: &tier.path,
                    spec: &tier.spec,
                    defined_at: &tier.defined_at,
                };
                let built = flux::build(&artifacts[*i], &target, kustomize, remote);
                (*i, id.clone(), built)
            })
            .collect();
        for walk in walks.iter_mut() {
            walk.ready.clear();
        }
        for (i, id, built) in results {
            let state = state_of(&mut walks[i], &id, built, &mut read_files);
            walks[i].record(&id, state);
            // Its local part did not build without its remote bases: the
            // Kustomizations its local files hold are still built.
            if walks[i].tiers.get(&id).is_some_and(|t| {
                matches!(t.state, TierState::NotChecked(_)) && !t.remote_bases.is_empty()
            }) {
                walks[i].adopt_local_part(&id, &artifacts[i], index);
            }
        }
    }
    read_files
}

/// What a build leaves on its tier (its remote bases, fetched inputs,
/// generator inputs, dropped fields, what was over budget), and the tier's
/// state.
fn state_of(
    walk: &mut Walk,
    id: &TierId,
    built: Result<flux::Built, flux::BuildError>,
    read_files: &mut BTreeSet<String>,
) -> TierState {
    match built {
        Ok(mut built) => {
            if let Some(tier) = walk.tiers.get_mut(id) {
                tier.remote_bases = built.remote_bases;
                tier.fetched = built.fetched;
                tier.fetch_failures = built.fetch_failures;
                tier.generator_inputs = built.generator_inputs;
                tier.remote_inputs = built.remote_inputs;
                tier.files_read = built.files_read;
                read_files.extend(std::mem::take(&mut built.reads));
                tier.dropped_fields = built.dropped;
            }
            TierState::Rendered(built.objects)
        }
        Err(flux::BuildError::Failed(failure)) => TierState::RenderFailed(failure),
        Err(flux::BuildError::Budget(failure)) => {
            let reason = format!(
                "{} ({}): this tool does not read it, so the tier is not checked (see budget-exceeded)",
                failure.message,
                failure
                    .at
                    .as_ref()
                    .map(|a| a.to_string())
                    .unwrap_or_default()
            );
            if let Some(tier) = walk.tiers.get_mut(id) {
                tier.over_budget = Some(failure);
            }
            TierState::NotChecked(reason)
        }
        Err(flux::BuildError::RemoteBases(part)) => {
            let flux::RemotePart {
                left_out,
                fetched,
                failures,
            } = *part;
            let list: Vec<String> = left_out.iter().map(|(_, url)| url.clone()).collect();
            let reason = if failures.is_empty() {
                format!(
                    "its local part does not build without its remote bases ({}), which are not fetched without --fetch-remote (see remote-base)",
                    list.join(", ")
                )
            } else {
                let why: Vec<String> = failures
                    .iter()
                    .map(|(url, why)| format!("{url}: {why}"))
                    .collect();
                format!(
                    "its local part does not build without remote bases that could not be fetched here ({})",
                    why.join("; ")
                )
            };
            if let Some(tier) = walk.tiers.get_mut(id) {
                tier.remote_bases = left_out;
                tier.fetched = fetched;
                tier.fetch_failures = failures;
            }
            TierState::NotChecked(reason)
        }
    }
}
