//! Cloning a remote base with the `git` program, the way kustomize's
//! `ClonerUsingGitExec` does (`api/internal/git/cloner.go`): `git init`,
//! `git remote add origin`, `git fetch --depth=1 <address> <ref or HEAD>`,
//! `git checkout FETCH_HEAD`, then `git submodule update --init
//! --recursive` unless `?submodules=false`; each command within the
//! reference's timeout. kustomize shells out to git too, so credentials,
//! proxies and `insteadOf` rules apply as they would to it; git is never
//! allowed to prompt.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::spec::GitSpec;

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
/// checked out.
pub fn clone(spec: &GitSpec, dir: &Path) -> Result<String, GitError> {
    std::fs::create_dir_all(dir).map_err(|e| GitError {
        message: format!("cannot create {}: {e}", dir.display()),
        definitive: false,
    })?;
    let reference = spec.reference.as_deref().unwrap_or("HEAD");
    run(dir, &["init", "--quiet"], spec.timeout)?;
    run(dir, &["remote", "add", "origin", &spec.clone], spec.timeout)?;
    run(
        dir,
        &["fetch", "--quiet", "--depth=1", &spec.clone, reference],
        spec.timeout,
    )?;
    run(
        dir,
        &[
            "-c",
            "advice.detachedHead=false",
            "checkout",
            "--quiet",
            "FETCH_HEAD",
        ],
        spec.timeout,
    )?;
    if spec.submodules {
        run(
            dir,
            &["submodule", "update", "--quiet", "--init", "--recursive"],
            spec.timeout,
        )?;
    }
    let head = run(dir, &["rev-parse", "HEAD"], spec.timeout)?;
    Ok(head.trim().to_string())
}

/// Runs one git command in `dir`, killed at the deadline; its stdout.
fn run(dir: &Path, args: &[&str], timeout: Duration) -> Result<String, GitError> {
    let shown = format!("git {}", args.join(" "));
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "")
        .env("SSH_ASKPASS", "")
        .env("GIT_SSH_COMMAND", ssh_command())
        .stdin(Stdio::null())
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

/// ssh never asks: a host key or passphrase prompt would hang until the
/// timeout.
fn ssh_command() -> String {
    std::env::var("GIT_SSH_COMMAND")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "ssh -o BatchMode=yes".to_string())
}

fn drain<R: std::io::Read + Send + 'static>(mut pipe: R) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}
