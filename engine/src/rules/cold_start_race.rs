//! `cold-start-race`: a tier needs a kind, a namespace or an object that an
//! unordered tier provides. On a cold start it fails (a kind or namespace
//! the dry-run needs) or waits (a reference a controller resolves), and
//! converges after retries.
//!
//! A race (and a supplier whose Ready comes before the need exists) is
//! worded as every cold-start rule words it ([`cold_start::said`]): a
//! reference that loses its race for good is an `unresolved-reference`.

use super::cold_start::{self, Cx, Said, Wording};
use super::{Context, Finding, Rule, RuleId, Severity};

#[derive(Debug)]
pub struct ColdStartRace;

impl Rule for ColdStartRace {
    fn id(&self) -> RuleId {
        RuleId::ColdStartRace
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn summary(&self) -> &'static str {
        "a tier needs a kind, namespace or object that a tier it is not ordered after provides: on a cold start it fails (a kind, a namespace) or waits (a reference) and converges only after retries"
    }
    fn example(&self) -> &'static str {
        "ExternalSecret/grafana/admin in grafana needs externalsecrets.external-secrets.io, installed by chart external-secrets in external-secrets, but grafana is not ordered after external-secrets"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        cold_start::findings(cx, self)
    }
}

impl Wording for ColdStartRace {
    fn said(&self, cx: &Cx) -> Said {
        cold_start::said(cx)
    }
}
