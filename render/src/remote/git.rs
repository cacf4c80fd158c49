//! Cloning a remote base with the `git` program, the way kustomize's
//! `ClonerUsingGitExec` does (`api/internal/git/cloner.go`): `git init`,
//! `git remote add origin`, `git fetch --depth=1 <address> <ref or HEAD>`,
//! `git checkout FETCH_HEAD`, then `git submodule update --init
//! --recursive` unless `?submodules=false`; each command within the
//! reference's timeout. kustomize shells out to git too, so credentials,
//! proxies and `insteadOf` rules apply as they would to it; git is never
//! allowed to prompt, and runs under [`crate::exec::git`]'s limits (clean
//! environment, https/http/ssh only, no hooks, every repository value
//! after `--`).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::spec::GitSpec;
use crate::exec::Transports;

/// Why a git command failed.
#[derive(Debug)]
pub struct GitError {
    /// The command and what git said.
    pub message: String,
    /// The remote answered that the ref does not exist: Flux's build fails
    /// the same way. Anything else (no network, a timeout, credentials
    /// this machine lacks) says nothing about Flux's.
    pub definitive: bool,
}

/// Clones `spec` into `dir` (which must not exist) and returns the commit
/// checked out. The address and ref have passed [`GitSpec::check`], which
/// gave `transports`; each reaches git after `--`, in a clean environment
/// ([`crate::exec::git`]).
pub fn clone(spec: &GitSpec, dir: &Path, transports: Transports) -> Result<String, GitError> {
    std::fs::create_dir_all(dir).map_err(|e| GitError {
        message: format!("cannot create {}: {e}", dir.display()),
        definitive: false,
    })?;
    let reference = spec.reference.as_deref().unwrap_or("HEAD");
    let git = |args: &[&str]| run(dir, transports, args, spec.timeout);
    // No template: no hooks copied from anywhere.
    git(&["init", "--quiet", "--template="])?;
    git(&["remote", "add", "--", "origin", &spec.clone])?;
    git(&[
        "fetch",
        "--quiet",
        "--depth=1",
        "--no-recurse-submodules",
        "--upload-pack=git-upload-pack",
        "--",
        &spec.clone,
        reference,
    ])?;
    git(&["checkout", "--quiet", "FETCH_HEAD", "--"])?;
    if spec.submodules {
        git(&["submodule", "update", "--quiet", "--init", "--recursive"])?;
    }
    let head = git(&["rev-parse", "--verify", "HEAD"])?;
    Ok(head.trim().to_string())
}

/// Runs one git command in `dir`, killed at the deadline; its stdout.
fn run(
    dir: &Path,
    transports: Transports,
    args: &[&str],
    timeout: Duration,
) -> Result<String, GitError> {
    let shown = format!("git {}", args.join(" "));
    let mut child = crate::exec::git(dir, transports)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| GitError {
            message: format!("cannot run git ({e}); remote bases are cloned with the git program, as kustomize does"),
            definitive: false,
        })?;
    // Read both pipes on threads, so a chatty git never blocks on a full
    // pipe while we wait.
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(GitError {
                    message: format!(
                        "`{shown}` did not finish within {} s (kustomize's limit for each git command; `?timeout=` in the address changes it)",
                        timeout.as_secs()
                    ),
                    definitive: false,
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                return Err(GitError {
                    message: format!("`{shown}`: {e}"),
                    definitive: false,
                });
            }
        }
    };
    let out = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let err = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    if status.success() {
        return Ok(out);
    }
    Err(GitError {
        definitive: err.contains("couldn't find remote ref"),
        message: format!("`{shown}` failed: {}", one_line(&err)),
    })
}

/// What git said, on one line and at most a few hundred characters (it
/// may print hints and progress over many lines).
fn one_line(said: &str) -> String {
    let lines: Vec<&str> = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
        .collect();
    if lines.is_empty() {
        return "no message".into();
    }
    let text = lines.join(" / ");
    match text.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn drain<R: std::io::Read + Send + 'static>(mut pipe: R) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}
