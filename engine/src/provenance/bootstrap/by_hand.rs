//! Flux Kustomizations that no cluster's build applies, but a script does
//! (`kubectl apply -f clusters/$CLUSTER/infra.yaml` after `flux bootstrap
//! --path clusters/base`).
//!
//! kustomize-controller reconciles a Kustomization however it reached the
//! API server (`KustomizationReconciler.Reconcile` watches the kind, not
//! who applied it), so one applied by hand is a root of its cluster, like
//! the sync Kustomization `flux bootstrap` applies. Discovery finds roots
//! in git only, so it lists such a file as applied by no cluster; that is
//! true of the builds and false of the cluster. Which cluster the script
//! runs against is not in the repository (a kubeconfig context, an
//! argument), so the tool does not guess one: it says which step applies
//! the file, and the one line of conformance.yaml that checks it.

use super::scripts::{Scripts, Target};
use crate::model::Model;
use crate::repo::RepoIndex;

/// Marks each unreferenced Kustomization a script (or a documented step)
/// applies with where, and rewrites discovery's note about them.
pub fn mark(model: &mut Model, scripts: &Scripts, index: &RepoIndex) {
    let before = crate::discover::unreferenced_notes(&model.unreferenced);
    let artifact = index.artifact();
    let mut marked = false;
    for u in &mut model.unreferenced {
        let file = u.at.file.as_str();
        let step = scripts.commands.iter().find(|c| match &c.target {
            // `kubectl apply -f FILE`, or `-f DIR` (the manifests directly in it).
            Target::Path(p) | Target::PathIn(p, _) => {
                let p = p.trim_end_matches('/');
                p == file || crate::discover::parent_dir_str(file) == p
            }
            // `kubectl apply -k DIR`: what its kustomization lists.
            Target::Kustomization(dir) => {
                artifact.is_dir(dir)
                    && crate::render::flux::reach(&artifact, dir)
                        .resources
                        .contains(file)
            }
            _ => false,
        });
        if let Some(step) = step {
            u.applied_by = Some(step.at.clone());
            marked = true;
        }
    }
    if marked {
        let after = crate::discover::unreferenced_notes(&model.unreferenced);
        let at = model.notes.iter().position(|n| before.contains(n));
        model.notes.retain(|n| !before.contains(n));
        let at = at.unwrap_or(model.notes.len()).min(model.notes.len());
        model.notes.splice(at..at, after);
    }
}
