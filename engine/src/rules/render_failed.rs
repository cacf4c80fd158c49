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
                out.push(Finding::new(self, cluster.name.clone(), label.clone(), format!(
                        "Kustomization {label} does not build: {}",
                        failure.message
                    )).at(failure.at.clone().unwrap_or_else(|| at_path(tier))).related_all(vec![(
                        tier.defined_at.clone(),
                        format!("Kustomization {label} builds {}", tier.display_path()),
                    )]).why(format!(
                        "kustomize-controller cannot build {}, so {label} never becomes Ready: nothing in it is applied and every Kustomization that depends on it waits",
                        tier.display_path()
                    )).fix("fix the file named above (or spec.path) until the path builds").build());
            }
        }
        out
    }
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
