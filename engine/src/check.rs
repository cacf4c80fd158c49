//! The engine's front door: open a [`Session`] on a repository, run every
//! rule, and return the findings with the model they are about.

use std::path::PathBuf;

use crate::model::Model;
use crate::rules::{self, Finding};
use crate::session::Session;
pub use crate::session::{RunOptions, SessionError};

/// What a check covers: the run, and what `check` adds to it.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The repository and what the command line says over its
    /// conformance.yaml.
    pub run: RunOptions,
    /// Report only these clusters (all when empty). Rules still see every
    /// cluster, so parity is judged against the whole repository.
    pub clusters: Vec<String>,
    /// The previous revision, for rules that compare (prune-transient).
    pub base: Option<crate::base::Base>,
    /// Findings accepted as they are (`--baseline`): only others count.
    pub baseline: Option<rules::baseline::Baseline>,
}

impl CheckOptions {
    /// Every cluster of the repository at `repo`, as conformance.yaml says.
    pub fn at(repo: impl Into<PathBuf>) -> CheckOptions {
        CheckOptions {
            run: RunOptions::at(repo),
            ..CheckOptions::default()
        }
    }
}

/// The result of a run.
#[derive(Debug)]
pub struct Outcome {
    /// The discovered, rendered and substituted clusters.
    pub model: Model,
    /// The repository's conformance.yaml (defaults when absent).
    pub config: crate::config::Config,
    /// What the repository installs before Flux.
    pub bootstrap: crate::provenance::bootstrap::Bootstrap,
    /// The findings on the reported clusters, waived ones included.
    pub findings: Vec<Finding>,
    /// The renderer that built the tiers.
    pub renderer: String,
    /// Kustomizations the external program built instead (`auto`), and why.
    pub fallbacks: Vec<String>,
    /// What the baseline accepted, when one was given.
    pub baseline: Option<rules::baseline::Applied>,
}

/// One boundary item of a cluster: something its objects refer to that
/// nothing the run reads creates, on a cluster whose world the run does not
/// read whole ([`crate::provenance::boundary`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundaryItem {
    /// The cluster.
    pub cluster: String,
    /// The item, as `external:` declares it (`Namespace/kommander`).
    pub item: String,
    /// The Kustomizations whose objects refer to it.
    pub referred_by: Vec<String>,
    /// Why the run is not the cluster's whole world.
    pub evidence: Vec<String>,
}

impl Outcome {
    /// The boundary items of the reported clusters (waived findings
    /// left out), one per cluster and item.
    pub fn boundary(&self) -> Vec<BoundaryItem> {
        let mut items: std::collections::BTreeMap<(String, String), Vec<String>> =
            std::collections::BTreeMap::new();
        for f in self.findings.iter().filter(|f| f.counts()) {
            if let Some(item) = f.boundary_item() {
                let by = items
                    .entry((f.cluster().to_string(), item.to_string()))
                    .or_default();
                if !by.iter().any(|k| k == f.kustomization()) {
                    by.push(f.kustomization().to_string());
                }
            }
        }
        // Each cluster's evidence, judged once.
        let mut evidence: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        items
            .into_iter()
            .map(|((cluster, item), referred_by)| BoundaryItem {
                evidence: evidence
                    .entry(cluster.clone())
                    .or_insert_with(|| {
                        self.model
                            .clusters
                            .iter()
                            .find(|c| c.name == cluster)
                            .map(|c| crate::provenance::boundary::World::of(c).open)
                            .unwrap_or_default()
                    })
                    .clone(),
                cluster,
                item,
                referred_by,
            })
            .collect()
    }

    /// Error findings that count (not waived).
    pub fn errors(&self) -> usize {
        self.findings.iter().filter(|f| f.is_error()).count()
    }

    /// Error findings that follow from a root (`caused_by`): context on
    /// that root, listed in its `blocks`, not counted in [`Outcome::errors`].
    pub fn consequences(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity() == rules::Severity::Error && f.counts() && f.is_blocked())
            .count()
    }

    /// The Kustomizations the roots block (each counted once), summed over
    /// clusters.
    pub fn blocked(&self) -> usize {
        let mut seen = std::collections::BTreeSet::new();
        for f in self.findings.iter().filter(|f| f.counts()) {
            for b in f.blocks() {
                seen.insert((f.cluster(), b.kustomization.as_str()));
            }
        }
        seen.len()
    }

    /// Warning findings that count (not waived, and not a consequence of
    /// another finding).
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity() == rules::Severity::Warning && f.counts() && !f.is_blocked())
            .count()
    }

    /// Findings the baseline accepted.
    pub fn baselined(&self) -> usize {
        self.findings.iter().filter(|f| f.baselined()).count()
    }

    /// Findings accepted by a waiver.
    pub fn waived(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.waived().is_some())
            .count()
    }
}

/// Opens a session, checks conformance.yaml against discovery, and runs
/// every rule.
pub fn check(options: &CheckOptions) -> Result<Outcome, SessionError> {
    check_session(Session::open(&options.run)?, options)
}

/// As [`check`], on an open session.
pub(crate) fn check_session(
    session: Session,
    options: &CheckOptions,
) -> Result<Outcome, SessionError> {
    session.check_config()?;
    for wanted in &options.clusters {
        session.cluster(wanted)?;
    }
    let base_model = options
        .base
        .as_ref()
        .map(|base| session.base_model(base))
        .transpose()?;
    let mut findings = {
        let cx = session.rule_context(base_model.as_ref());
        crate::pipeline::findings(&cx)
    };
    if !options.clusters.is_empty() {
        findings.retain(|f| options.clusters.iter().any(|c| c == f.cluster()));
    }
    let baseline = options
        .baseline
        .as_ref()
        .map(|baseline| baseline.apply(&mut findings));
    let renderer = session.renderer_name();
    let fallbacks = session.fallbacks();
    Ok(Outcome {
        model: session.model,
        config: session.declared.config,
        bootstrap: session.bootstrap,
        findings,
        renderer,
        fallbacks,
        baseline,
    })
}
