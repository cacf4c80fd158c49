//! Bootstrap steps the readers saw but could not read: what each could
//! create, so a conclusion drawn from absence ("nothing creates the Secret
//! this tier needs") is an assumption while such a step may create it;
//! and conformance.yaml's `provides:`, which settles what a step creates.

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::model::Span;

/// A live bootstrap step that installs something this tool did not read:
/// `kubectl apply -f -` fed by a pipeline, `kubectl apply -k "$DIR"`, a
/// `kubectl create secret "$NAME"`, a script over the size budget.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unread {
    /// Where the step is.
    pub at: Span,
    /// The command, as the note shows it.
    pub command: String,
    /// What it could create.
    pub could: Could,
}

/// What an unread step could create.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Could {
    /// Objects of any kind but CustomResourceDefinitions: what a pipeline
    /// feeds `kubectl apply -f -` (a rendered template, a decrypted file,
    /// a here-document: in practice the Secrets, ConfigMaps, Namespaces and
    /// sources Flux's first tiers read). CRDs through such a feed are not
    /// assumed: a chart's or an operator's CRDs are installed by steps this
    /// tool reads (helmfile, `kubectl apply -k`, a manifest URL).
    Objects,
    /// Anything, CRDs included (`kubectl apply -k "$DIR"`, a script not
    /// read at all).
    Anything,
    /// Objects of one kind, in a namespace when the command names one
    /// (`kubectl create secret generic "$NAME" -n flux-system`).
    Kind {
        /// `Secret`, `ConfigMap`, `Namespace`, …
        kind: String,
        /// `-n`, when given.
        namespace: Option<String>,
    },
    /// Objects of the kinds of the repository files the step's path could
    /// name (`-f "{{.DIR}}/oci/registry-config.yaml"`: every file ending in
    /// `oci/registry-config.yaml`).
    Kinds(Vec<String>),
}

impl Unread {
    /// Whether the step could create the object `kind` `namespace/name`.
    pub fn could_create_object(&self, kind: &str, namespace: &str) -> bool {
        match &self.could {
            Could::Anything => true,
            Could::Objects => kind != "CustomResourceDefinition",
            Could::Kind {
                kind: k,
                namespace: ns,
            } => k == kind && ns.as_deref().is_none_or(|n| n == namespace),
            Could::Kinds(kinds) => kinds.iter().any(|k| k == kind),
        }
    }

    /// Whether the step could create a CustomResourceDefinition.
    pub fn could_create_crd(&self) -> bool {
        match &self.could {
            Could::Anything => true,
            Could::Kinds(kinds) => kinds.iter().any(|k| k == "CustomResourceDefinition"),
            _ => false,
        }
    }

    /// "`kubectl apply -f -` (bootstrap/apply.sh:12)", for a finding.
    pub fn describe(&self) -> String {
        format!("`{}` ({})", self.command, self.at)
    }

    /// The `provides:` entry of conformance.yaml that settles what the step
    /// creates, for a finding's fix.
    pub fn settle(&self, creates: &str) -> String {
        format!(
            "declare what it creates in conformance.yaml: `provides: [{{step: \"{}\", creates: [{creates}]}}]` (or `creates: []` if it creates none of this)",
            self.at
        )
    }
}

/// `provides:` entry: a bootstrap step (as its warning names it,
/// `FILE:LINE`, or `FILE` for every step of the file) and what it creates
/// before Flux (`Kind/namespace/name`, `Kind/name` for a cluster-scoped
/// object, `Namespace/NAME`, `group/Kind` for a CRD; `[]`: none of what
/// the tiers need).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvidedStep {
    /// `bootstrap/apply.sh:12`.
    pub step: Spanned<String>,
    /// What it creates.
    #[serde(default)]
    pub creates: Vec<Spanned<String>>,
}

impl ProvidedStep {
    /// Whether this entry is about the step at `at`.
    pub fn settles(&self, at: &crate::model::Span) -> bool {
        let (file, line) = self.file_and_line();
        file == at.file && line.is_none_or(|l| l == at.line)
    }

    /// The step's file and, when given, its line (`FILE:LINE`).
    pub fn file_and_line(&self) -> (&str, Option<u32>) {
        match self.step.value.rsplit_once(':') {
            Some((file, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => {
                (file, line.parse().ok())
            }
            _ => (&self.step.value, None),
        }
    }
}

/// What a `provides:` `creates` entry names, or why it names nothing.
pub(crate) enum Created<'a> {
    /// `Namespace/NAME`.
    Namespace(&'a str),
    /// `group/Kind`: a CRD.
    Kind,
    /// `Kind/namespace/name` or `Kind/name`.
    Object,
}

/// Reads a `creates` entry.
pub(crate) fn created(entry: &str) -> Result<Created<'_>, &'static str> {
    let parts: Vec<&str> = entry.split('/').collect();
    if parts.iter().any(|p| p.is_empty()) || !(2..=3).contains(&parts.len()) {
        return Err("is not Kind/namespace/name, Kind/name, Namespace/NAME or group/Kind");
    }
    match parts.as_slice() {
        ["Namespace", ns] => Ok(Created::Namespace(ns)),
        [group, _] if group.contains('.') => Ok(Created::Kind),
        [kind, ..] if kind.starts_with(|c: char| c.is_ascii_uppercase()) => Ok(Created::Object),
        _ => Err("starts with neither a Kind (capitalised) nor an API group (with a dot)"),
    }
}
