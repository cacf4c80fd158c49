//! CustomResourceDefinitions rendered in git: the kind exists once the tier
//! that renders the CRD has applied its first stage.

use super::{Provenance, Provider, ProviderSource, Scope, SourceCx};
use crate::model::{Object, Tier};

/// The API group of CustomResourceDefinition.
pub(crate) const CRD_GROUP: &str = "apiextensions.k8s.io";

/// CRDs in the rendered output.
#[derive(Debug)]
pub(crate) struct GitCrds;

impl ProviderSource for GitCrds {
    fn scan(&self, _: &SourceCx, tier: &Tier, o: &Object, out: &mut Vec<Provider>) {
        if o.id.group != CRD_GROUP || o.id.kind != "CustomResourceDefinition" {
            return;
        }
        let group = o.body.str_at(&["spec", "group"]).unwrap_or_default();
        let kind = o
            .body
            .str_at(&["spec", "names", "kind"])
            .unwrap_or_default();
        let scope = match o.body.str_at(&["spec", "scope"]).as_deref() {
            Some("Cluster") => Scope::Cluster,
            _ => Scope::Namespaced,
        };
        out.push(Provider {
            group,
            kind: Some(kind),
            scope: Some(scope),
            provenance: Provenance::Crd {
                tier: tier.id.clone(),
                at: o.source.clone(),
            },
        });
    }
}
