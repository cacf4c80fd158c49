//! Findings: what a rule reports, built in one place.
//!
//! A rule pushes a [`Finding`] made with [`Finding::new`] (rule, cluster,
//! Kustomization and the one-sentence message) and the [`FindingBuilder`]
//! steps for the rest (`object`, `at`, `related`, `why`, `fix`, `detail`,
//! `severity`). Severity comes from the rule unless the rule says
//! otherwise (and `severity:` in conformance.yaml, applied after every rule
//! ran); `waived` is set by the waivers pass. The fields are private: no
//! other module writes a finding by hand.

use serde::{Deserialize, Serialize};

use super::{Rule, RuleId};
use crate::model::Span;

/// What `severity:` in conformance.yaml sets a rule to: a severity, or
/// `off` (its findings are not reported; what follows from them becomes a
/// root of its own, as under a waiver).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Configured {
    /// Every finding of the rule is an error.
    Error,
    /// Every finding of the rule is a warning.
    Warning,
    /// The rule's findings are dropped.
    Off,
}

/// How bad a finding is. Errors fail `check` (exit 1) and l0 trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Fails the run.
    Error,
    /// Reported; does not fail the run.
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

/// One problem, located. Built with [`Finding::new`] and the
/// [`FindingBuilder`] steps; read through its accessors. Only the rules
/// pass changes a built finding (the configured severity, a waiver).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    rule: RuleId,
    severity: Severity,
    cluster: String,
    /// The Kustomization the finding belongs to, as the cluster labels it.
    kustomization: String,
    /// `Kind/namespace/name` of the object at fault, when there is one.
    object: Option<String>,
    /// Where to look first.
    at: Option<Span>,
    /// The second places: what pulls the first one in (usually the
    /// Kustomization's definition), each with a label.
    related: Vec<(Span, String)>,
    /// What is wrong, in one sentence.
    message: String,
    /// Why it breaks in the cluster.
    why: String,
    /// What to change.
    fix: String,
    /// Extra text shown verbatim (a diff).
    detail: Option<String>,
    /// Accepted by a waiver in conformance.yaml (reported, not counted).
    waived: Option<Waived>,
    /// Accepted by the baseline (`check --baseline`): counted apart, and
    /// left out of the reports for people.
    baselined: bool,
    /// The root cause this finding shares with others (one supplier tier,
    /// one missing `dependsOn`): the human and GitHub reports group
    /// findings by it; JSON, JUnit, SARIF and the l0 trials keep each.
    cause: Option<Cause>,
    /// The root this finding is (a deadlock's own place: a dependency
    /// cycle, a suspended tier, a tier waiting for itself), as a key
    /// consequences name.
    root: Option<String>,
    /// The root this finding follows from, as a key (resolved to `caused_by`
    /// once every rule has run).
    consequence_of: Option<String>,
    /// The id of the finding this one is a consequence of.
    caused_by: Option<String>,
    /// What this root blocks: the Kustomizations that never become Ready
    /// on a cold start because of it, with the objects its consequences
    /// name in each.
    blocks: Vec<Blocked>,
    /// The boundary item it is (`Secret/flux-system/cluster-secrets`):
    /// what it refers to may come from outside what the run reads
    /// ([`crate::provenance::boundary`]).
    boundary: Option<String>,
}

/// A Kustomization a root finding blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// The Kustomization, as the cluster labels it.
    pub kustomization: String,
    /// Where it is defined.
    pub at: Option<Span>,
    /// `Kind/namespace/name` of the objects in it whose findings follow
    /// from the root (empty when the Kustomization is blocked as a whole:
    /// it waits for the root through `dependsOn` or its parent).
    pub objects: Vec<String>,
}

/// A finding being built by a rule.
#[derive(Debug, Clone)]
#[must_use = "a finding is reported only once built"]
pub struct FindingBuilder(Finding);

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
    /// The waiver's `reason`: why the finding is accepted.
    pub reason: String,
    /// The waiver's `expires` date (`YYYY-MM-DD`), the last day it applies.
    pub expires: String,
}

impl Finding {
    /// A finding of `rule` about `kustomization` in `cluster`, with the
    /// rule's default severity, to be completed with the builder's steps.
    #[expect(
        clippy::new_ret_no_self,
        reason = "every rule writes Finding::new(..).at(..).fix(..).build(); the builder is the finding in the making"
    )]
    pub fn new(
        rule: &dyn Rule,
        cluster: impl Into<String>,
        kustomization: impl Into<String>,
        message: impl Into<String>,
    ) -> FindingBuilder {
        FindingBuilder(Finding {
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
            baselined: false,
            cause: None,
            root: None,
            consequence_of: None,
            caused_by: None,
            blocks: Vec::new(),
            boundary: None,
        })
    }

    /// The rule that reported it.
    pub fn rule(&self) -> RuleId {
        self.rule
    }

    /// Its effective severity (the rule's, or `severity:` in
    /// conformance.yaml).
    pub fn severity(&self) -> Severity {
        self.severity
    }

    /// The cluster it is about.
    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    /// The Kustomization it belongs to, as the cluster labels it.
    pub fn kustomization(&self) -> &str {
        &self.kustomization
    }

    /// `Kind/namespace/name` of the object at fault, when there is one.
    pub fn object(&self) -> Option<&str> {
        self.object.as_deref()
    }

    /// Where to look first.
    pub fn at(&self) -> Option<&Span> {
        self.at.as_ref()
    }

    /// The second places, each with what it is.
    pub fn related(&self) -> &[(Span, String)] {
        &self.related
    }

    /// What is wrong, in one sentence.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Why it breaks in the cluster.
    pub fn why(&self) -> &str {
        &self.why
    }

    /// What to change.
    pub fn fix(&self) -> &str {
        &self.fix
    }

    /// Extra text shown verbatim (a diff).
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The waiver it is accepted under.
    pub fn waived(&self) -> Option<&Waived> {
        self.waived.as_ref()
    }

    /// Whether the baseline accepts it ([`super::baseline`]).
    pub fn baselined(&self) -> bool {
        self.baselined
    }

    /// Accepted by the baseline (its pass).
    pub(super) fn set_baselined(&mut self) {
        self.baselined = true;
    }

    /// Whether it counts: neither waived nor in the baseline.
    pub fn counts(&self) -> bool {
        self.waived.is_none() && !self.baselined
    }

    /// The root cause it shares with other findings.
    pub fn cause(&self) -> Option<&Cause> {
        self.cause.as_ref()
    }

    /// A stable id: a digest of what the finding is about (rule, cluster,
    /// Kustomization, object, place, message), the same on every run of the
    /// same repository.
    pub fn id(&self) -> String {
        digest(
            &[
                self.rule.as_str(),
                &self.cluster,
                &self.kustomization,
                self.object.as_deref().unwrap_or(""),
                &self.at.as_ref().map(|s| s.to_string()).unwrap_or_default(),
                &self.message,
            ],
            6,
        )
    }

    /// Whether it is a boundary item: it refers to something nothing the
    /// run reads creates, on a cluster whose world the run does not read
    /// whole.
    pub fn is_boundary(&self) -> bool {
        self.boundary.is_some()
    }

    /// The boundary item, as `external:` declares it.
    pub fn boundary_item(&self) -> Option<&str> {
        self.boundary.as_deref()
    }

    /// The id of the finding this one follows from (fixing that one fixes
    /// this), when it is reported.
    pub fn caused_by(&self) -> Option<&str> {
        self.caused_by.as_deref()
    }

    /// The root key this finding is ([`FindingBuilder::root`]).
    pub(super) fn root_key(&self) -> Option<&str> {
        self.root.as_deref()
    }

    /// The root key this finding follows from.
    pub(super) fn consequence_key(&self) -> Option<&str> {
        self.consequence_of.as_deref()
    }

    /// Links it to the finding it follows from (the rules pass).
    pub(super) fn set_caused_by(&mut self, id: String) {
        self.caused_by = Some(id);
    }

    /// Whether it counts as an error: an error, not waived nor in the
    /// baseline, and a root
    /// (a finding that follows from another is context on that one: it is
    /// listed in the root's [`Finding::blocks`] and counted there).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error && self.counts() && self.caused_by.is_none()
    }

    /// Whether it follows from another finding (`caused_by`) and so is
    /// context on that root rather than a finding of its own.
    pub fn is_blocked(&self) -> bool {
        self.caused_by.is_some()
    }

    /// What this root blocks, in the order of the cluster's tiers.
    pub fn blocks(&self) -> &[Blocked] {
        &self.blocks
    }

    /// Records what it blocks (the rules pass).
    pub(super) fn set_blocks(&mut self, blocks: Vec<Blocked>) {
        self.blocks = blocks;
    }

    /// `severity:` in conformance.yaml, applied after every rule ran.
    pub(super) fn set_severity(&mut self, severity: Severity) {
        self.severity = severity;
    }

    /// Accepted by a waiver (the waivers pass).
    pub(super) fn waive(&mut self, waived: Waived) {
        self.waived = Some(waived);
    }
}

/// The first `bytes` bytes of the SHA-256 of `parts` (each ended by a
/// NUL, so no two lists of parts hash alike), in hexadecimal: a finding's
/// id and its baseline fingerprint.
pub(super) fn digest(parts: &[&str], bytes: usize) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in parts {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize()[..bytes]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl FindingBuilder {
    /// The finding, built.
    pub fn build(self) -> Finding {
        self.0
    }

    /// A boundary item ([`Finding::is_boundary`]): a warning.
    pub fn boundary(mut self, item: String) -> FindingBuilder {
        self.0.boundary = Some(item);
        self.0.severity = Severity::Warning;
        self
    }

    /// A severity other than the rule's default (a finding the rule itself
    /// knows to be a warning).
    pub fn severity(mut self, severity: Severity) -> FindingBuilder {
        self.0.severity = severity;
        self
    }

    /// The root cause shared with other findings.
    pub fn cause(mut self, cause: Cause) -> FindingBuilder {
        self.0.cause = Some(cause);
        self
    }

    /// This finding is the root `key` names (`cycle:…`, `suspended:…`,
    /// `itself:…`, cluster included): findings that follow from it point
    /// at it.
    pub fn root(mut self, key: impl Into<String>) -> FindingBuilder {
        self.0.root = Some(key.into());
        self
    }

    /// This finding follows from the root `key` names: once every rule
    /// has run, it is linked to that root's finding (when there is one).
    pub(crate) fn consequence_of(mut self, key: impl Into<String>) -> FindingBuilder {
        self.0.consequence_of = Some(key.into());
        self
    }

    /// The object at fault (`Kind/namespace/name`).
    pub fn object(mut self, object: impl ToString) -> FindingBuilder {
        self.0.object = Some(object.to_string());
        self
    }

    /// The object at fault, when there is one.
    pub(crate) fn object_opt(mut self, object: Option<impl ToString>) -> FindingBuilder {
        self.0.object = object.map(|o| o.to_string());
        self
    }

    /// Where to look first.
    pub fn at(mut self, at: impl Into<Option<Span>>) -> FindingBuilder {
        self.0.at = at.into();
        self
    }

    /// A second place, with what it is.
    pub fn related(mut self, at: Span, label: impl Into<String>) -> FindingBuilder {
        self.0.related.push((at, label.into()));
        self
    }

    /// Several second places.
    pub(crate) fn related_all(
        mut self,
        related: impl IntoIterator<Item = (Span, String)>,
    ) -> FindingBuilder {
        self.0.related.extend(related);
        self
    }

    /// Why it breaks in the cluster.
    pub fn why(mut self, why: impl Into<String>) -> FindingBuilder {
        self.0.why = why.into();
        self
    }

    /// What to change.
    pub fn fix(mut self, fix: impl Into<String>) -> FindingBuilder {
        self.0.fix = fix.into();
        self
    }

    /// Extra text shown verbatim (a diff).
    pub fn detail(mut self, detail: impl Into<String>) -> FindingBuilder {
        self.0.detail = Some(detail.into());
        self
    }
}

impl From<FindingBuilder> for Finding {
    fn from(builder: FindingBuilder) -> Finding {
        builder.build()
    }
}
