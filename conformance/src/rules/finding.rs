//! Findings: what a rule reports, built in one place.
//!
//! A rule pushes a [`Finding`] made with [`Finding::new`] (rule, cluster,
//! Kustomization and the one-sentence message) and the builder methods for
//! the rest (`object`, `at`, `related`, `why`, `fix`, `detail`). Severity
//! comes from the rule (and `severity:` in conformance.yaml, applied after
//! every rule ran); `waived` is set by the waivers pass. No other module
//! writes the struct by hand.

use serde::{Deserialize, Serialize};

use super::Rule;
use crate::model::Span;

/// How bad a finding is. Errors fail `check` (exit 1) and l0 trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    /// `error` or `warning`, as in every report.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    pub cluster: String,
    /// The Kustomization the finding belongs to, as the cluster labels it.
    pub kustomization: String,
    /// `Kind/namespace/name` of the object at fault, when there is one.
    pub object: Option<String>,
    /// Where to look first.
    pub at: Option<Span>,
    /// The second places: what pulls the first one in (usually the
    /// Kustomization's definition), each with a label.
    pub related: Vec<(Span, String)>,
    /// What is wrong, in one sentence.
    pub message: String,
    /// Why it breaks in the cluster.
    pub why: String,
    /// What to change.
    pub fix: String,
    /// Extra text shown verbatim (a diff).
    pub detail: Option<String>,
    /// Accepted by a waiver in conformance.yaml (reported, not counted).
    pub waived: Option<Waived>,
    /// The root cause this finding shares with others (one supplier tier,
    /// one missing `dependsOn`): the human and GitHub reports group
    /// findings by it; JSON, JUnit, SARIF and the l0 trials keep each.
    pub cause: Option<Cause>,
}

/// A root cause shared by several findings.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cause {
    /// Findings of one rule and cluster with the same key share the cause.
    pub key: String,
    /// The cause, in words, about the whole group ("external-secrets.io
    /// comes from external-secrets, which none of them depends on").
    pub text: String,
    /// The one fix for all of them.
    pub fix: String,
}

/// The waiver a finding is accepted under.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Waived {
    pub reason: String,
    pub expires: String,
}

impl Finding {
    /// A finding of `rule` about `kustomization` in `cluster`, with the
    /// rule's default severity.
    pub fn new(
        rule: &dyn Rule,
        cluster: impl Into<String>,
        kustomization: impl Into<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            rule: rule.id(),
            severity: rule.severity(),
            cluster: cluster.into(),
            kustomization: kustomization.into(),
            object: None,
            at: None,
            related: Vec::new(),
            message: message.into(),
            why: String::new(),
            fix: String::new(),
            detail: None,
            waived: None,
            cause: None,
        }
    }

    /// The root cause shared with other findings.
    pub fn cause(mut self, cause: Cause) -> Finding {
        self.cause = Some(cause);
        self
    }

    /// The object at fault (`Kind/namespace/name`).
    pub fn object(mut self, object: impl ToString) -> Finding {
        self.object = Some(object.to_string());
        self
    }

    /// The object at fault, when there is one.
    pub fn object_opt(mut self, object: Option<impl ToString>) -> Finding {
        self.object = object.map(|o| o.to_string());
        self
    }

    /// Where to look first.
    pub fn at(mut self, at: impl Into<Option<Span>>) -> Finding {
        self.at = at.into();
        self
    }

    /// A second place, with what it is.
    pub fn related(mut self, at: Span, label: impl Into<String>) -> Finding {
        self.related.push((at, label.into()));
        self
    }

    /// Several second places.
    pub fn related_all(mut self, related: impl IntoIterator<Item = (Span, String)>) -> Finding {
        self.related.extend(related);
        self
    }

    /// Why it breaks in the cluster.
    pub fn why(mut self, why: impl Into<String>) -> Finding {
        self.why = why.into();
        self
    }

    /// What to change.
    pub fn fix(mut self, fix: impl Into<String>) -> Finding {
        self.fix = fix.into();
        self
    }

    /// Extra text shown verbatim (a diff).
    pub fn detail(mut self, detail: impl Into<String>) -> Finding {
        self.detail = Some(detail.into());
        self
    }

    /// Whether it counts as an error (an error, and not waived).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error && self.waived.is_none()
    }
}
