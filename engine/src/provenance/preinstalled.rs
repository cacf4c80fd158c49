//! Kinds declared as installed outside Flux (`catalog.preinstalled` in
//! conformance.yaml): a bootstrap script, the distribution.

use super::{Provenance, ProviderSource, SourceCx};

/// `catalog.preinstalled` groups and kinds.
#[derive(Debug)]
pub struct Preinstalled;

impl ProviderSource for Preinstalled {
    fn initial(&self, cx: &SourceCx, group: &str, kind: &str) -> Option<Provenance> {
        cx.catalog
            .is_preinstalled(group, kind)
            .then_some(Provenance::Preinstalled)
    }
}
