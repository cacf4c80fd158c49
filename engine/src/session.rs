//! A run, resolved once: a [`Session`] runs the first stages of the
//! [`crate::pipeline`] (declared, built, substituted) and holds what they
//! produce. Every subcommand opens one (as nextest's `BaseApp` and
//! ripgrep's `HiArgs` are built once per command); the rules and reports
//! borrow from it.

use crate::base::Base;
use crate::config::ConfigError;
use crate::convergence::ClusterAnalysis;
use crate::model::{Cluster, Model};
use crate::pipeline::{self, Declared, Substituted};
use crate::provenance::bootstrap::Bootstrap;
use crate::rules;

pub use crate::pipeline::{RunOptions, SessionError};
pub use crate::stats::stat;

/// Everything a run needs, built once.
#[derive(Debug)]
pub struct Session {
    /// What the run was given: the repository, its configuration with the
    /// command line over it, the catalog, the index and the renderer.
    pub declared: Declared,
    /// The discovered, built and substituted clusters.
    pub model: Model,
    /// What the repository installs before Flux.
    pub bootstrap: Bootstrap,
}

impl Session {
    /// Opens a run: declares it (conformance.yaml or `--config`, the
    /// command line over it, the renderer, the index), builds every
    /// cluster and substitutes it.
    pub fn open(options: &RunOptions) -> Result<Session, SessionError> {
        let mut declared = pipeline::declare(options)?;
        let built = pipeline::build(&declared)?;
        let Substituted { model, bootstrap } = pipeline::substitute(&declared, built);
        // The rendered objects are copies: the parsed files are no longer
        // needed (a reader after this parses a file again).
        declared.index.release_documents();
        Ok(Session {
            declared,
            model,
            bootstrap,
        })
    }

    /// The renderer's name, for reports.
    pub(crate) fn renderer_name(&self) -> String {
        self.declared.renderer().name().to_string()
    }

    /// Kustomizations the external program built instead (`auto`), and why.
    pub fn fallbacks(&self) -> Vec<String> {
        self.declared.renderer().fallbacks()
    }

    /// The cluster with this name, or an error listing the discovered ones.
    pub fn cluster(&self, name: &str) -> Result<&Cluster, SessionError> {
        self.model
            .clusters
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| SessionError::UnknownCluster {
                name: name.to_string(),
                repo: self.declared.repo.display().to_string(),
                known: self
                    .model
                    .clusters
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The cluster `name` names, or, when none is named, the repository's
    /// only cluster (several: an error that lists them).
    pub fn cluster_or_only(&self, name: Option<&str>) -> Result<&Cluster, SessionError> {
        match (name, self.model.clusters.as_slice()) {
            (Some(name), _) => self.cluster(name),
            (None, [only]) => Ok(only),
            (None, clusters) => Err(SessionError::ClusterNeeded {
                repo: self.declared.repo.display().to_string(),
                count: clusters.len(),
                known: clusters
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// The convergence analysis of one cluster.
    pub fn analysis<'s>(&'s self, cluster: &'s Cluster) -> ClusterAnalysis<'s> {
        pipeline::analysis(&self.declared, &self.bootstrap, cluster)
    }

    /// What the rules read: every cluster's analysis with the model and the
    /// configuration; `base` is the previous revision's model when the run
    /// compares.
    pub(crate) fn rule_context<'s>(&'s self, base: Option<&'s Model>) -> rules::Context<'s> {
        pipeline::analyse(&self.declared, &self.model, &self.bootstrap, base)
    }

    /// The model of a previous revision, built with the same renderer (and
    /// that revision's own conformance.yaml) and substituted.
    pub fn base_model(&self, base: &Base) -> Result<Model, SessionError> {
        let tree = base.materialise(&self.declared.repo)?;
        let declared = pipeline::declare_base(&tree.root, self.declared.renderer.clone())?;
        let built = pipeline::build(&declared)?;
        Ok(pipeline::substitute(&declared, built).model)
    }

    /// Checks what conformance.yaml says about clusters against discovery.
    pub fn check_config(&self) -> Result<(), SessionError> {
        let names: Vec<String> = self.model.clusters.iter().map(|c| c.name.clone()).collect();
        if let Some((name, line)) = self
            .declared
            .config
            .unknown_clusters(&names)
            .into_iter()
            .next()
        {
            // What discovery said about this cluster's vars, if any.
            let said: Vec<&str> = self
                .model
                .notes
                .iter()
                .filter(|n| n.contains(&format!("clusters.{name}.vars")))
                .map(String::as_str)
                .collect();
            let said = if said.is_empty() {
                String::new()
            } else {
                format!(" ({})", said.join("; "))
            };
            return Err(SessionError::Config(ConfigError::new(
                line,
                format!(
                    "no cluster named `{name}` was discovered; clusters: {}{said}",
                    names.join(", ")
                ),
            )));
        }
        for m in &self.declared.config.l1.manifests {
            let (path, _) = crate::repo::normalize("", &m.file.value);
            if !self.declared.index.is_file(&path) {
                return Err(SessionError::Config(crate::config::error_at(
                    &m.file,
                    format!(
                        "l1.manifests file `{}` is not a file of the repository",
                        m.file.value
                    ),
                )));
            }
        }
        Ok(())
    }
}
