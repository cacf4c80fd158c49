//! Crossplane: each CompositeResourceDefinition makes Crossplane create a
//! CRD for its composite (and claim) kind.

use super::{Provenance, Provider, ProviderSource, RuntimeHow, SourceCx};
use crate::model::{Object, Tier};

/// CompositeResourceDefinitions.
#[derive(Debug)]
pub struct Crossplane;

impl ProviderSource for Crossplane {
    fn name(&self) -> &'static str {
        "Crossplane"
    }
    fn scan(&self, _: &SourceCx, tier: &Tier, o: &Object, out: &mut Vec<Provider>) {
        let id = &o.id;
        if id.group != "apiextensions.crossplane.io" || id.kind != "CompositeResourceDefinition" {
            return;
        }
        let group = o.body.str_at(&["spec", "group"]).unwrap_or_default();
        for path in [["spec", "names", "kind"], ["spec", "claimNames", "kind"]] {
            if let Some(kind) = o.body.str_at(&path) {
                out.push(Provider {
                    group: group.clone(),
                    kind: Some(kind),
                    scope: None,
                    provenance: Provenance::Runtime {
                        how: RuntimeHow::Crossplane,
                        trigger: id.clone(),
                        tier: tier.id.clone(),
                        at: o.source.clone(),
                    },
                });
            }
        }
    }
}
