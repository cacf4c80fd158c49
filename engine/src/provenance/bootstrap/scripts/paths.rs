//! Which files are scripts, and which are on the bootstrap path (by
//! their path, or, for a Taskfile task, by its name).

use super::markdown;

/// Whether a path is a script this module reads.
pub(crate) fn is_script(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".sh")
        || lower.ends_with(".bash")
        || lower.ends_with(".just")
        || lower == "justfile"
        || lower == ".justfile"
        || lower == "makefile"
        || lower.ends_with(".mk")
        || (lower.starts_with("taskfile") && (lower.ends_with(".yaml") || lower.ends_with(".yml")))
        || (rel.contains(".taskfiles/") && (lower.ends_with(".yaml") || lower.ends_with(".yml")))
}

/// Whether a file is a setup page whose shell blocks are documented steps.
fn documented_page(rel: &str) -> bool {
    markdown::is_markdown(rel) && markdown::is_setup_page(rel)
}

/// Whether a file holds the repository's bootstrap path rather than a
/// maintenance task: a setup page (its documented steps), or a script,
/// Taskfile or justfile whose path names the bootstrap (a folder or file
/// called `bootstrap`, `setup`, `install`, `init` or `provision`:
/// `bootstrap/mod.just`, `.taskfiles/Bootstrap/Taskfile.yaml`,
/// `scripts/setup.sh`). A task that applies one app's build by hand
/// (`flux build ks … | kubectl apply -f -` in `.taskfiles/Flux/`) is not
/// the bootstrap: what it could create is no premise of a cold start.
pub fn on_bootstrap_path(file: &str) -> bool {
    if documented_page(file) {
        return true;
    }
    file.split('/')
        .any(|segment| bootstrap_name(segment.rsplit_once('.').map_or(segment, |(stem, _)| stem)))
}

/// Whether a name (a path segment without its extension, a Taskfile
/// task's name) names the bootstrap: `bootstrap`, `setup`, `install`,
/// `init` or `provision`, alone or before `-`, `_` or `:`
/// (`bootstrap-flux`, `bootstrap:apps`).
pub(crate) fn bootstrap_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let name = name.trim_start_matches(['.', '_']);
    ["bootstrap", "setup", "install", "init", "provision"]
        .iter()
        .any(|word| {
            name == *word
                || name.starts_with(&format!("{word}-"))
                || name.starts_with(&format!("{word}_"))
                || name.starts_with(&format!("{word}:"))
        })
}
