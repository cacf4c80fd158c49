//! Bootstrap steps the readers saw but could not read: what each could
//! create, so a conclusion drawn from absence ("nothing creates the Secret
//! this tier needs") is an assumption while such a step may create it.

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
