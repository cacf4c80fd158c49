//! What an installing stage is, and, when it was not understood, why in
//! words (the note this reader leaves).

use std::collections::BTreeMap;

use super::super::expand::expand;
use super::super::words::flag;
use crate::repo::RepoIndex;

/// What kind of installing command a pipeline stage is, if it is one:
/// `kubectl apply|create|replace`, `helm install|upgrade --install`,
/// `helmfile sync|apply`. Other commands (`kubectl get`, `helm repo add`,
/// `helm template`, `kustomize build` on its own) install nothing.
pub(super) fn installing(stage: &[String]) -> Option<&'static str> {
    // `--dry-run` renders (for a later `kubectl apply -f -`), installing nothing.
    if stage.iter().any(|w| w.starts_with("--dry-run")) {
        return None;
    }
    let program = |name: &str| {
        stage
            .iter()
            .position(|w| w == name || w.ends_with(&format!("/{name}")))
    };
    if let Some(k) = program("kubectl") {
        let verb = stage[k + 1..].iter().find(|w| {
            [
                "apply",
                "create",
                "replace",
                "get",
                "delete",
                "wait",
                "kustomize",
                "patch",
                "label",
                "annotate",
                "rollout",
                "config",
                "logs",
                "exec",
                "describe",
                "scale",
                "cordon",
                "drain",
                "port-forward",
                "version",
                "cluster-info",
                "auth",
                "certificate",
                "edit",
                "cp",
                "debug",
                "top",
                "diff",
                "explain",
                "api-resources",
                "set",
            ]
            .contains(&w.as_str())
        })?;
        return match verb.as_str() {
            "apply" | "replace" => Some("kubectl apply"),
            "create" => {
                let i = stage.iter().position(|w| w == "create")?;
                let what = stage.get(i + 1).map(String::as_str).unwrap_or_default();
                [
                    "namespace",
                    "ns",
                    "configmap",
                    "cm",
                    "secret",
                    "-f",
                    "--filename",
                    "-k",
                    "--kustomize",
                ]
                .contains(&what)
                .then_some("kubectl create")
            }
            _ => None,
        };
    }
    if let Some(h) = program("helm") {
        let args = &stage[h + 1..];
        let verb = args.iter().find(|w| !w.starts_with('-'))?;
        return match verb.as_str() {
            "install" => Some("helm install"),
            "upgrade" if args.iter().any(|w| w == "--install" || w == "-i") => Some("helm install"),
            _ => None,
        };
    }
    if program("helmfile").is_some() && stage.iter().any(|w| w == "sync" || w == "apply") {
        return Some("helmfile sync");
    }
    None
}

/// Why an installing command was not understood, in words.
pub(super) fn unread_why(
    what: &str,
    stage: &[String],
    index: &RepoIndex,
    rel: &str,
    vars: &BTreeMap<String, String>,
) -> String {
    let unknown = |raw: &str| {
        let here = expand(raw, rel, vars, 0);
        let elsewhere = super::super::expand::elsewhere(index, rel, raw, vars);
        if here.is_none() {
            format!(
                "`{raw}` needs a value this tool cannot know (an argument, an environment variable, a command's output)"
            )
        } else if !elsewhere.is_empty() {
            format!(
                "`{raw}` is {} with the values its variables have here, which is no path of this repository, but {} {}: the step runs with another value (one given when it runs, such as `task … VAR=…`), which this tool cannot know",
                here.unwrap_or_default().trim_start_matches("@root/"),
                shown_paths(&elsewhere),
                if elsewhere.len() == 1 { "is" } else { "are" }
            )
        } else {
            format!("`{raw}` is not a file or directory of this repository")
        }
    };
    match what {
        "kubectl apply" | "kubectl create" => {
            if let Some(dir) = flag(stage, &["-k"], "--kustomize") {
                unknown(&dir)
            } else if let Some(f) = flag(stage, &["-f"], "--filename") {
                if f == "-" {
                    "what the pipeline or here-document feeds `-f -` is not something this tool reads".into()
                } else if f.starts_with("http") {
                    format!("the URL `{f}` needs a value this tool cannot know")
                } else {
                    unknown(&f)
                }
            } else {
                "its object's name or namespace needs a value this tool cannot know, or it names no -f/-k this tool reads".into()
            }
        }
        "helm install" => {
            "its chart is not named in a way this tool can read (a variable, a local .tgz)".into()
        }
        _ => match flag(stage, &["-f"], "--file") {
            Some(f) => unknown(&f),
            None => {
                "it names no helmfile (-f); the repository's helmfiles are read on their own".into()
            }
        },
    }
}

/// A stage's words, for a note (at most 120 characters).
pub(super) fn shown(stage: &[String]) -> String {
    let text = stage.join(" ");
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(117).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// Paths for a note: the first 8, and how many more.
pub(super) fn shown_paths(paths: &[String]) -> String {
    let mut text = paths.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
    if paths.len() > 8 {
        text.push_str(&format!(" and {} more", paths.len() - 8));
    }
    text
}
