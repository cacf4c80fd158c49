//! Controllers that create CRDs at runtime once a trigger object is
//! reconciled (the runtime catalog: CDI, KubeVirt, Tigera, Cilium, …).

use super::{Provenance, Provider, ProviderSource, RuntimeHow, SourceCx};
use crate::model::{Object, Tier};

/// Triggers of the runtime catalog.
#[derive(Debug)]
pub(crate) struct Operators;

impl ProviderSource for Operators {
    fn scan(&self, cx: &SourceCx, tier: &Tier, o: &Object, out: &mut Vec<Provider>) {
        let id = &o.id;
        for entry in &cx.catalog.runtime {
            let group = match entry.trigger.group.as_str() {
                "core" => "",
                other => other,
            };
            let kind_matches = if entry.trigger.kind.is_empty() {
                entry.trigger.image.is_some()
                    && matches!(
                        id.kind.as_str(),
                        "Deployment" | "DaemonSet" | "StatefulSet" | "HelmRelease"
                    )
            } else {
                id.group == group && id.kind == entry.trigger.kind
            };
            let matches = kind_matches
                && entry.trigger.name.as_ref().is_none_or(|n| *n == id.name)
                && entry
                    .trigger
                    .image
                    .as_ref()
                    .is_none_or(|image| mentions(&o.body, image))
                && entry.trigger.package.as_ref().is_none_or(|p| {
                    o.body.str_at(&["spec", "name"]).as_deref() == Some(p.as_str())
                });
            if !matches {
                continue;
            }
            for created in &entry.creates {
                for kind in &created.kinds {
                    out.push(Provider {
                        group: created.group.clone(),
                        kind: (kind != "*").then(|| kind.clone()),
                        scope: None,
                        provenance: Provenance::Runtime {
                            how: RuntimeHow::Operator {
                                operator: entry.operator.clone(),
                                kstatus: entry.kstatus,
                                health: entry.health.clone(),
                            },
                            trigger: id.clone(),
                            tier: tier.id.clone(),
                            at: o.source.clone(),
                        },
                    });
                }
            }
        }
    }
}

/// Whether any string of the object contains `needle` (an image a
/// Deployment runs or a HelmRelease's values name).
fn mentions(node: &crate::yaml::Node, needle: &str) -> bool {
    use crate::yaml::Value;
    match &node.value {
        Value::String(s) => s.contains(needle),
        Value::Seq(items) => items.iter().any(|n| mentions(n, needle)),
        Value::Map(entries) => entries.iter().any(|(_, n)| mentions(n, needle)),
        _ => false,
    }
}
