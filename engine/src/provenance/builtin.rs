//! Built-in Kubernetes kinds as a source of kinds: they exist on every
//! cluster. The table itself ([`crate::builtin`]) is a leaf below the model,
//! which also reads it (object ids, strategic-merge semantics).

pub use crate::builtin::{BuiltinKind, builtin, builtin_kind};

use super::{Provenance, ProviderSource, SourceCx};

/// Built-in kinds exist on every cluster.
#[derive(Debug)]
pub struct BuiltIn;

impl ProviderSource for BuiltIn {
    fn initial(&self, _: &SourceCx, group: &str, kind: &str) -> Option<Provenance> {
        builtin_kind(group, kind).map(|_| Provenance::BuiltIn)
    }
}
