//! Rule identity: every rule's stable id as one enum, so a typo in a rule
//! id does not compile (as clippy's `declare_clippy_lint!` and cargo-deny's
//! `Code` do). The ids are the rule-id contract: new rules get new ids, and
//! an id is never reused.

use std::cmp::Ordering;
use std::fmt;

/// Declares [`RuleId`]: each variant with the id it is written as.
macro_rules! rule_ids {
    ($($(#[$doc:meta])* $variant:ident => $id:literal,)*) => {
        /// A rule's stable id (`dependency-missing`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RuleId {
            $($(#[$doc])* $variant,)*
        }

        impl RuleId {
            /// Every rule id, in declaration order.
            #[cfg(test)]
            pub(crate) const ALL: &'static [RuleId] = &[$(RuleId::$variant,)*];

            /// The id as written in reports, conformance.yaml and trial names.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(RuleId::$variant => $id,)*
                }
            }

            /// The rule's documentation, `rules/docs/<id>.md` (What it
            /// catches, Why Flux fails, Example, Fix): a rule without one
            /// does not compile.
            pub const fn doc(self) -> &'static str {
                match self {
                    $(RuleId::$variant => include_str!(concat!("docs/", $id, ".md")),)*
                }
            }

            /// The rule id written `text`, if there is one.
            pub fn parse(text: &str) -> Option<RuleId> {
                match text {
                    $($id => Some(RuleId::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

rule_ids! {
    /// A Flux Kustomization's path does not build.
    RenderFailed => "render-failed",
    /// A `dependsOn` names a Kustomization that does not exist.
    DependencyMissing => "dependency-missing",
    /// Tiers that wait on each other.
    DependencyCycle => "dependency-cycle",
    /// Clusters of one parity group with different tier graphs.
    GraphParity => "graph-parity",
    /// A kind whose CRD does not exist when its tier is dry-run.
    CrdUnavailable => "crd-unavailable",
    /// A kind a controller creates at runtime, used in the tier that
    /// triggers it.
    SecondOrderCrd => "second-order-crd",
    /// A consumer that races an operator its supplier's health does not see.
    HealthGate => "health-gate",
    /// A namespace nothing creates in time.
    NamespaceMissing => "namespace-missing",
    /// A reference to an object nothing defines in time.
    UnresolvedReference => "unresolved-reference",
    /// One object rendered by two tiers.
    DuplicateObject => "duplicate-object",
    /// A `${VAR}` that substitution breaks or leaves.
    SubstitutionHazard => "substitution-hazard",
    /// `${VAR}` in a tier no substitution pass audits.
    SubstitutionUnaudited => "substitution-unaudited",
    /// A remote base fetched at every reconcile.
    RemoteBase => "remote-base",
    /// A SOPS-encrypted file in a tier that does not decrypt.
    SopsDecryption => "sops-decryption",
    /// A bootstrap script's tier list that does not match the graph.
    TierOrderScript => "tier-order-script",
    /// Toolchain pins outside the clusters' version skew.
    ToolchainSkew => "toolchain-skew",
    /// A kind outside the tiers a placement policy allows.
    KindPlacement => "kind-placement",
    /// A field a field policy forbids or requires.
    FieldPolicy => "field-policy",
    /// An object moved between tiers under `prune: true`.
    PruneTransient => "prune-transient",
    /// A waiver past its expiry date.
    WaiverExpired => "waiver-expired",
    /// A waiver that matches no finding.
    WaiverStale => "waiver-stale",
    /// A need that converges only after Flux retries.
    ColdStartRace => "cold-start-race",
    /// A dependency on a suspended Kustomization.
    DependencySuspended => "dependency-suspended",
    /// A namespaced object with no namespace from any layer.
    NamespaceUnspecified => "namespace-unspecified",
    /// An API version the cluster no longer serves.
    ApiRemoved => "api-removed",
    /// An API version the cluster deprecates.
    ApiDeprecated => "api-deprecated",
    /// An object the API server's schema rejects.
    SchemaViolation => "schema-violation",
    /// A HelmRelease whose inputs helm-controller refuses.
    HelmReleaseInvalid => "helmrelease-invalid",
    /// A file over an input budget: its tier is not checked.
    BudgetExceeded => "budget-exceeded",
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Ordered by the id's text, as findings and reports have always sorted.
impl Ord for RuleId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for RuleId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl serde::Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_parse_back() {
        let mut seen = std::collections::BTreeSet::new();
        for id in RuleId::ALL {
            let text = id.as_str();
            assert!(seen.insert(text), "{text} declared twice");
            assert!(
                !text.is_empty()
                    && !text.starts_with('-')
                    && !text.ends_with('-')
                    && !text.contains("--")
                    && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{text} is not kebab-case"
            );
            assert_eq!(RuleId::parse(text), Some(*id));
        }
        assert_eq!(RuleId::parse("cold-start-rcae"), None);
    }
}
