//! The external kustomize backend: runs `kustomize build` when that program is
//! on `PATH`, otherwise `kubectl kustomize`.

use std::path::PathBuf;
use std::process::Command;

use super::{Kustomize, Tree};
use crate::yaml::{self, Node};

/// Runs an installed kustomize (standalone, or the one built in to kubectl).
#[derive(Debug, Clone)]
pub struct External {
    program: PathBuf,
    /// Arguments before the directory.
    args: Vec<&'static str>,
    label: String,
}

/// No program to render with.
#[derive(Debug, thiserror::Error)]
#[error(
    "no kustomize renderer found: install kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) \
     or kubectl (it has kustomize built in) and make sure it is on PATH"
)]
pub struct MissingRenderer;

impl External {
    /// Finds `kustomize`, then `kubectl`, on `PATH`.
    pub fn detect() -> Result<External, MissingRenderer> {
        if let Some(program) = find_on_path("kustomize") {
            return Ok(External {
                program,
                args: vec!["build", "--load-restrictor", "LoadRestrictionsNone"],
                label: "kustomize".into(),
            });
        }
        if let Some(program) = find_on_path("kubectl") {
            return Ok(External {
                program,
                args: vec!["kustomize", "--load-restrictor", "LoadRestrictionsNone"],
                label: "kubectl kustomize".into(),
            });
        }
        Err(MissingRenderer)
    }
}

impl Kustomize for External {
    fn name(&self) -> &str {
        &self.label
    }

    fn build(&self, tree: &Tree, dir: &str) -> Result<Vec<Node>, crate::render::Error> {
        // The program reads a real directory: lay out the files the build
        // reads (and the kustomization Flux writes) in a private one, so it
        // sees exactly the artifact, nothing ignored and nothing outside.
        let work = tempfile::Builder::new()
            .prefix("conformance-build-")
            .tempdir()
            .map_err(|err| {
                crate::render::Error::from(format!("cannot create a temporary directory: {err}"))
            })?;
        let root = work.path().canonicalize().map_err(|err| {
            crate::render::Error::from(format!("cannot resolve the temporary directory: {err}"))
        })?;
        let reach = super::reach::reach_tree(tree, dir);
        for d in reach.dirs.iter().chain(std::iter::once(&dir.to_string())) {
            std::fs::create_dir_all(root.join(d))
                .map_err(|err| crate::render::Error::from(format!("cannot lay out {d}: {err}")))?;
        }
        for file in reach.reads.iter().chain(tree.written.keys()) {
            let bytes = tree.read(file).map_err(|m| m.describe(file))?;
            let target = root.join(file);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|err| {
                    crate::render::Error::from(format!("cannot lay out {file}: {err}"))
                })?;
            }
            std::fs::write(&target, &bytes).map_err(|err| {
                crate::render::Error::from(format!("cannot lay out {file}: {err}"))
            })?;
        }
        let mut command = Command::new(&self.program);
        command.args(&self.args).arg(root.join(dir));
        crate::exec::harden_kustomize(&mut command, tree.git);
        let output = command
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|err| {
                crate::render::Error::from(format!(
                    "could not run {}: {err}",
                    self.program.display()
                ))
            })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(clean_stderr(&stderr)
                .replace(&format!("{}/", root.display()), "")
                .into());
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        yaml::parse_documents(&stdout).map_err(|err| {
            crate::render::Error::from(format!(
                "{} printed YAML we could not read: {err}",
                self.label
            ))
        })
    }
}

/// kubectl wraps kustomize's error in klog noise (`E1130 10:42:25 … run.go:72]
/// "command failed" err="…"`); keep the error itself.
fn clean_stderr(stderr: &str) -> String {
    let text = stderr.trim();
    if let Some(start) = text.find("err=\"") {
        let inner = &text[start + 5..];
        let inner = inner.strip_suffix('"').unwrap_or(inner);
        return inner.replace("\\\"", "\"").replace("\\'", "'");
    }
    text.strip_prefix("Error: ").unwrap_or(text).to_string()
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_noise_is_stripped() {
        let raw = "E1130 10:42:25.505171    2129 run.go:72] \"command failed\" err=\"accumulating resources: 'x' is a directory\"";
        assert_eq!(
            clean_stderr(raw),
            "accumulating resources: 'x' is a directory"
        );
        assert_eq!(clean_stderr("Error: boom\n"), "boom");
    }
}
