//! `budget-exceeded`: a file a tier reads is over one of this tool's input
//! budgets, so the tier (and everything it applies) is not checked.

use super::{Context, Finding, Rule, RuleId, Severity};

#[derive(Debug)]
pub struct BudgetExceeded;

impl Rule for BudgetExceeded {
    fn id(&self) -> RuleId {
        RuleId::BudgetExceeded
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a file a tier reads exceeds an input budget (size, documents, nesting, aliases), so the tier and everything it applies are not checked"
    }
    fn example(&self) -> &'static str {
        "apps/cms.yaml:300000: exceeds the budget of 50000 documents in one file, so Kustomization apps is not checked"
    }
    fn explain(&self) -> &'static str {
        "This tool reads every file with fixed budgets (64 MiB per file, 50,000 documents per file, 256 levels of \
nesting, aliases that expand to no more than a bounded multiple of the file: a YAML alias bomb), so that no input \
can make a run take unbounded time or memory. kustomize-controller has no such limits of its own (its decoders, \
sigs.k8s.io/yaml and kyaml's kio.ByteReader, read what fits in the pod's memory), so an over-budget file says \
nothing about whether Flux can apply the tier: it says this check could not look. The tier is listed as not checked \
and this finding is an error, so a CI gate never passes a cluster whose tiers nothing checked. Split the file (a \
kustomization lists several), remove the alias expansion, or, if the file is generated data, move it out of the \
paths Flux builds."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for cluster in &cx.model.clusters {
            for tier in cluster.tiers.values() {
                let Some(failure) = &tier.over_budget else {
                    continue;
                };
                let label = cluster.tier_label(&tier.id);
                let mut f = Finding::new(
                    self,
                    cluster.name.clone(),
                    label.clone(),
                    format!(
                        "{}, so Kustomization {label} and everything it applies are not checked",
                        failure.message
                    ),
                )
                .related(
                    tier.defined_at.clone(),
                    format!("Kustomization {label} builds {}", tier.display_path()),
                )
                .why(format!(
                    "this tool does not read files over its budgets; Flux may well apply {label}, but nothing here checked it"
                ))
                .fix("split the file into smaller ones (a kustomization may list several), or remove the alias expansion");
                if let Some(at) = &failure.at {
                    f = f.at(at.clone());
                }
                out.push(f.build());
            }
        }
        out
    }
}
