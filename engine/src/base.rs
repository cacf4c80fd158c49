//! The previous revision of a repository, for rules that compare (moving an
//! object between tiers under `prune: true`).
//!
//! A git revision is read with `git archive` into a private temporary
//! directory (nothing in the user's repository or its `.git` is written); a
//! directory holding the previous tree can be given instead.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the previous revision comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// A git revision of the repository (`main`, `HEAD~1`, a commit).
    Rev(String),
    /// A directory with the previous tree.
    Dir(PathBuf),
}

/// The previous revision could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BaseError {
    /// `--base-dir` is not a directory.
    #[error("base revision: {}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// `--base` could be read as an option, or holds a control character.
    #[error("base revision: {0}")]
    Refused(#[from] crate::exec::Refused),
    /// A program could not be started.
    #[error("base revision: cannot run {program}: {source}")]
    Spawn {
        /// `git` or `tar`.
        program: &'static str,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// git refused (no such revision, not a repository).
    #[error("base revision: git {command}: {said}")]
    Git {
        /// The git subcommand.
        command: String,
        /// What git said.
        said: String,
    },
    /// The archive could not be unpacked into a temporary directory.
    #[error("base revision: unpacking the archive: {0}")]
    Unpack(String),
}

/// A materialised base tree; the temporary directory lives as long as it.
#[derive(Debug)]
pub(crate) struct BaseTree {
    /// The repository root in the previous tree.
    pub root: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

impl Base {
    /// Makes the previous tree of `repo` available on disk.
    pub(crate) fn materialise(&self, repo: &Path) -> Result<BaseTree, BaseError> {
        match self {
            Base::Dir(dir) => {
                if !dir.is_dir() {
                    return Err(BaseError::NotADirectory(dir.clone()));
                }
                Ok(BaseTree {
                    root: dir.clone(),
                    _dir: None,
                })
            }
            Base::Rev(rev) => {
                // The revision comes from the command line; it still never
                // reaches git where it could be read as an option.
                crate::exec::check_revision(rev)?;
                let git = |dir: &Path, args: &[&str]| -> Result<Vec<u8>, BaseError> {
                    let out = crate::exec::git(dir, crate::exec::Transports::Network)
                        .args(args)
                        .output()
                        .map_err(|source| BaseError::Spawn {
                            program: "git",
                            source,
                        })?;
                    if !out.status.success() {
                        return Err(BaseError::Git {
                            command: args.first().copied().unwrap_or_default().to_string(),
                            said: String::from_utf8_lossy(&out.stderr).trim().to_string(),
                        });
                    }
                    Ok(out.stdout)
                };
                let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).trim().to_string();
                let top = text(git(repo, &["rev-parse", "--show-toplevel"])?);
                let prefix = text(git(repo, &["rev-parse", "--show-prefix"])?);
                let commit = text(git(
                    repo,
                    &[
                        "rev-parse",
                        "--verify",
                        "--end-of-options",
                        &format!("{rev}^{{commit}}"),
                    ],
                )?);
                let dir = tempfile::Builder::new()
                    .prefix("conformance-base-")
                    .tempdir()
                    .map_err(|e| BaseError::Unpack(e.to_string()))?;
                let archive = git(
                    Path::new(&top),
                    &["archive", "--format=tar", "--end-of-options", &commit],
                )?;
                let mut tar = Command::new("tar")
                    .args(["-x", "--no-same-owner", "-f", "-", "-C"])
                    .arg(dir.path())
                    .stdin(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|source| BaseError::Spawn {
                        program: "tar",
                        source,
                    })?;
                {
                    use std::io::Write as _;
                    let stdin = tar
                        .stdin
                        .as_mut()
                        .ok_or_else(|| BaseError::Unpack("tar has no stdin".into()))?;
                    stdin
                        .write_all(&archive)
                        .map_err(|e| BaseError::Unpack(e.to_string()))?;
                }
                let status = tar.wait().map_err(|e| BaseError::Unpack(e.to_string()))?;
                if !status.success() {
                    return Err(BaseError::Unpack("tar could not unpack the archive".into()));
                }
                Ok(BaseTree {
                    root: dir.path().join(prefix),
                    _dir: Some(dir),
                })
            }
        }
    }
}
