//! `render-failed`: a tier whose build fails as kustomize-controller's would.

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::TierState;

#[derive(Debug)]
pub struct RenderFailed;

impl Rule for RenderFailed {
    fn id(&self) -> RuleId {
        RuleId::RenderFailed
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn other_severities(&self) -> Option<&'static str> {
        Some(
            "a warning when the file the build lacks is one a setup step writes into the repository (`sops --encrypt a.yaml > a.enc.yaml` in the README): the build needs that step first",
        )
    }
    fn summary(&self) -> &'static str {
        "a Kustomization's path does not build (missing path, invalid YAML, a file Flux cannot decode, a kustomize error)"
    }
    fn example(&self) -> &'static str {
        "apps/vms/unifi/20-datavolume.yaml:7: did not find expected key; so Kustomization apps-vms cannot build"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let model = cx.model;
        let mut out = Vec::new();
        for cluster in &model.clusters {
            for tier in cluster.tiers.values() {
                let label = cluster.tier_label(&tier.id);
                for (at, field) in &tier.dropped_fields {
                    let message = if field.is_empty() {
                        format!(
                            "{} is empty: kustomize-controller builds nothing from it (and `kustomize build` refuses it: kustomization.yaml is empty), so {label} applies nothing",
                            at.file
                        )
                    } else {
                        format!(
                            "`{field}` in {} is not a kustomization field: kustomize-controller drops it when it rewrites the file before the build, so {label} is built without it (and `kustomize build` refuses the file)",
                            at.file
                        )
                    };
                    out.push(
                        Finding::new(self, cluster.name.clone(), label.clone(), message)
                        .at(at.clone())
                        .related(
                            tier.defined_at.clone(),
                            format!("Kustomization {label} builds {}", tier.display_path()),
                        )
                        .why(format!(
                            "Flux decodes the kustomization of spec.path loosely (GenerateManifest in fluxcd/pkg kustomize_generator.go), so a misspelt field silently does nothing: {label} applies something other than what the file says"
                        ))
                        .fix(if field.is_empty() {
                            "list what the path must apply under `resources:`".to_string()
                        } else {
                            format!("correct or remove `{field}` (kustomize's fields: resources, components, patches, …)")
                        }).build(),
                    );
                }
                let TierState::RenderFailed(failure) = &tier.state else {
                    continue;
                };
                let f = Finding::new(self, cluster.name.clone(), label.clone(), format!(
                        "Kustomization {label} does not build: {}",
                        failure.message
                    )).at(failure.at.clone().unwrap_or_else(|| at_path(tier))).related_all(vec![(
                        tier.defined_at.clone(),
                        format!("Kustomization {label} builds {}", tier.display_path()),
                    )]).why(format!(
                        "kustomize-controller cannot build {}, so {label} never becomes Ready: nothing in it is applied and every Kustomization that depends on it waits",
                        tier.display_path()
                    )).fix("fix the file named above (or spec.path) until the path builds");
                // A file the build lacks that a setup step writes into the
                // repository: the build needs that step first, which this
                // tool does not run, so the failure is an assumption.
                let writer = missing_file(failure).and_then(|missing| {
                    let bootstrap = cx
                        .analyses
                        .iter()
                        .find(|a| a.cluster.name == cluster.name)?
                        .bootstrap;
                    Some((missing.clone(), bootstrap.writes(&missing)?.clone()))
                });
                out.push(match writer {
                    Some((missing, step)) => f
                        .severity(Severity::Warning)
                        .related(step.at.clone(), format!("{} (writes {missing})", step.via))
                        .why(format!(
                            "{missing} is not in git, but the setup step at {} writes it ({}): the build reads it once that step has run, which this tool does not run",
                            step.at, step.via
                        ))
                        .fix(format!(
                            "run the setup step and commit {missing} (what the cluster's source holds is what git holds), or leave it out of the build until it exists"
                        ))
                        .build(),
                    None => f.build(),
                });
            }
        }
        out
    }
}

/// The repository path of a file a build needed and did not find, from
/// the renderer's words (a resource, an env file, a generator file),
/// relative to the kustomization that names it.
fn missing_file(failure: &crate::model::RenderFailure) -> Option<String> {
    let message = &failure.message;
    let name = if let Some(rest) = message.split("accumulating resources: '").nth(1) {
        rest.split("' is neither a file nor a directory")
            .next()?
            .to_string()
    } else {
        let (head, _) = message.split_once(" does not exist")?;
        let name = head.rsplit(' ').next()?;
        (head.ends_with(&format!("env file {name}")) || head.ends_with(&format!("file {name}")))
            .then(|| name.to_string())?
    };
    let dir = failure
        .at
        .as_ref()
        .map(|at| crate::discover::parent_dir(&at.file))
        .unwrap_or_default();
    let (path, escapes) = crate::repo::normalize(&dir, &name);
    (!escapes).then_some(path)
}

/// Where a failure with no file of its own is: the `spec.path` of the
/// Kustomization when the path itself is at fault (not found, a file,
/// unreadable), else the Kustomization.
fn at_path(tier: &crate::model::Tier) -> crate::model::Span {
    let path_line = tier
        .spec
        .path(&["spec", "path"])
        .map(|n| n.line)
        .filter(|&l| l > 0);
    match (&tier.state, path_line) {
        (TierState::RenderFailed(f), Some(line)) if f.message.starts_with("kustomization path") => {
            crate::model::Span::new(tier.defined_at.file.clone(), line)
        }
        _ => tier.defined_at.clone(),
    }
}
