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
