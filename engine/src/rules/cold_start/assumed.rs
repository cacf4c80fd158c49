//! A premise of absence made an assumption: when a live bootstrap step
//! this tool saw but could not read (a template piped into `kubectl apply
//! -f -`, `kubectl apply -k "$DIR"`) could create what a finding says
//! nothing creates before Flux, the finding is a warning that names the
//! step and the line of conformance.yaml that settles it.

use super::Need;
use crate::convergence::{ClusterAnalysis, Deadlock, Verdict};
use crate::provenance::bootstrap::unread::Unread;
use crate::provenance::crd_name;

/// Whether a step could create the thing a need lacks.
type Could<'a> = dyn Fn(&Unread) -> bool + 'a;

/// The unread step that could create what `need` lacks, and that thing as
/// conformance.yaml's `provides` names it, when the finding's premise is
/// that nothing before Flux creates it: nothing supplies it (`Unknown`), or
/// the tier deadlocks on it (a root; a consequence follows its root).
pub(super) fn unread_step<'a>(
    a: &'a ClusterAnalysis,
    need: Need,
    follows_a_root: bool,
) -> Option<(&'a Unread, String)> {
    let absent = matches!(
        need.verdict(),
        Verdict::Unknown
            | Verdict::Deadlock(Deadlock::SameTier | Deadlock::OwnOutput | Deadlock::Never { .. })
    );
    if !absent || follows_a_root {
        return None;
    }
    let creates = declared_as(need);
    let could: Box<Could<'_>> = match need {
        Need::Kind(_) => Box::new(Unread::could_create_crd),
        Need::Namespace(_) => Box::new(|s: &Unread| s.could_create_object("Namespace", "")),
        Need::Reference(u) => {
            let r = &u.reference;
            let ns = r.namespace.clone().unwrap_or_default();
            Box::new(move |s: &Unread| s.could_create_object(r.kind, &ns))
        }
    };
    a.bootstrap
        .unread_of(&a.cluster.name)
        .find(|s| could(s))
        .map(|s| (s, creates))
}

/// What a need lacks, as conformance.yaml's `provides` and `external`
/// name it (`group/Kind`, `Namespace/NAME`, `Kind/namespace/name`).
pub(super) fn declared_as(need: Need) -> String {
    match need {
        Need::Kind(u) => format!("{}/{}", u.object.id.group, u.object.id.kind),
        Need::Namespace(u) => format!("Namespace/{}", u.namespace),
        Need::Reference(u) => u.reference.target(),
    }
}

/// The words a finding gains: why it is only an assumption, and how to
/// settle it.
pub(super) fn hedge(step: &Unread, creates: &str, need: Need) -> (String, String) {
    let what = match need {
        Need::Kind(u) => format!("CRD {}", crd_name(&u.object.id.group, &u.object.id.kind)),
        _ => creates.to_string(),
    };
    (
        format!(
            "this assumes nothing creates {what} before Flux, but the bootstrap step {}, which this tool could not read, may create it",
            step.describe()
        ),
        step.settle(&format!("\"{creates}\"")),
    )
}
