//! `namespace-unspecified`: a namespaced object without `metadata.namespace`
//! in a Kustomization without `targetNamespace`.

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::provenance::Scope;

#[derive(Debug)]
pub(crate) struct NamespaceUnspecified;

impl Rule for NamespaceUnspecified {
    fn id(&self) -> RuleId {
        RuleId::NamespaceUnspecified
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a namespaced object has no metadata.namespace and its Kustomization has no targetNamespace, so Flux's dry-run of the tier fails"
    }
    fn example(&self) -> &'static str {
        "Deployment/web in apps has no namespace, and apps sets no targetNamespace: 'namespace not specified'"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for a in &cx.analyses {
            // One finding per tier: the objects share its fix (a
            // `namespace:` or a targetNamespace), and a tier of 300,000
            // such objects is one finding, not 300,000.
            let mut by_tier: Vec<(&crate::model::Tier, Vec<&crate::model::Object>)> = Vec::new();
            let mut index: std::collections::BTreeMap<&crate::model::TierId, usize> =
                std::collections::BTreeMap::new();
            for u in &a.uses {
                if u.object.id.namespace.is_some() || u.tier.target_namespace.is_some() {
                    continue;
                }
                let id = &u.object.id;
                if a.providers.scope(&id.group, &id.kind) != Some(Scope::Namespaced) {
                    continue;
                }
                match index.get(&u.tier.id) {
                    Some(&i) => by_tier[i].1.push(u.object),
                    None => {
                        index.insert(&u.tier.id, by_tier.len());
                        by_tier.push((u.tier, vec![u.object]));
                    }
                }
            }
            for (tier, objects) in by_tier {
                out.push(self.finding(a, tier, &objects));
            }
        }
        out
    }
}

/// How many objects a finding names; the rest are counted.
const NAMED: usize = 8;

impl NamespaceUnspecified {
    fn finding(
        &self,
        a: &crate::convergence::ClusterAnalysis,
        tier: &crate::model::Tier,
        objects: &[&crate::model::Object],
    ) -> Finding {
        let label = a.cluster.tier_label(&tier.id);
        let first = objects[0];
        let id = &first.id;
        let (subject, stage) = if objects.len() == 1 {
            (
                format!("{id} in {label} has no metadata.namespace"),
                format!("the stage holding {id}"),
            )
        } else {
            let mut named: Vec<String> = objects
                .iter()
                .take(NAMED)
                .map(|o| o.id.to_string())
                .collect();
            if objects.len() > NAMED {
                named.push(format!("and {} more", objects.len() - NAMED));
            }
            (
                format!(
                    "{} objects in {label} have no metadata.namespace ({})",
                    objects.len(),
                    named.join(", ")
                ),
                "the stages holding them".to_string(),
            )
        };
        let mut finding = Finding::new(
            self,
            a.cluster.name.clone(),
            label.clone(),
            format!(
                "{subject}, and {label} sets no targetNamespace: Flux's dry-run fails with 'namespace not specified'"
            ),
        )
        .object(id)
        .at(first.source.clone().unwrap_or_else(|| tier.defined_at.clone()))
        .related(tier.defined_at.clone(), format!("Kustomization {label}"));
        for other in objects.iter().skip(1).take(NAMED - 1) {
            if let Some(source) = &other.source {
                finding = finding.related(
                    source.clone(),
                    format!("{} has no namespace either", other.id),
                );
            }
        }
        finding
            .why(format!(
                "kustomize-controller applies server-side with no default namespace; the dry-run of {stage} fails, nothing after it in {label} is applied, and {label} never becomes Ready"
            ))
            .fix(if objects.len() == 1 {
                format!(
                    "set metadata.namespace on {id}, `namespace:` in the kustomization, or spec.targetNamespace on {label}"
                )
            } else {
                format!(
                    "set `namespace:` in the kustomization or spec.targetNamespace on {label} (or metadata.namespace on each object)"
                )
            })
            .build()
    }
}
