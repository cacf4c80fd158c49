//! Where the real-world corpora are: `CONFORMANCE_CORPUS` (default
//! `../shared/corpus`) and `CONFORMANCE_CORPUS_WIDE` (default
//! `../shared/corpus-wide`), relative paths from the workspace root. Each is
//! a folder of repository roots, data only.

use std::path::{Path, PathBuf};

/// One corpus: its trial-name prefix and where it is.
pub struct Corpus {
    /// `corpus` or `corpus-wide`: the trial-name prefix.
    pub name: &'static str,
    /// The folder holding the repositories.
    pub dir: PathBuf,
    /// The variable that moves it.
    pub variable: &'static str,
}

impl Corpus {
    /// The repository roots it holds, sorted (none when it is absent).
    pub fn repos(&self) -> Vec<PathBuf> {
        let mut repos: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        repos.sort();
        repos
    }
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Both corpora, present or not.
pub fn corpora() -> Vec<Corpus> {
    [
        ("corpus", "CONFORMANCE_CORPUS", "../shared/corpus"),
        (
            "corpus-wide",
            "CONFORMANCE_CORPUS_WIDE",
            "../shared/corpus-wide",
        ),
    ]
    .into_iter()
    .map(|(name, variable, default)| {
        let dir = match std::env::var_os(variable).map(PathBuf::from) {
            Some(dir) if dir.is_absolute() => dir,
            // Relative to the workspace root (cargo runs tests in the crate dir).
            Some(dir) => workspace().join(dir),
            None => workspace().join(default),
        };
        Corpus {
            name,
            dir,
            variable,
        }
    })
    .collect()
}

/// Whether a missing corpus fails the run (`CONFORMANCE_CORPUS_REQUIRED=1`,
/// as in CI) rather than being ignored with the reason.
pub fn required() -> bool {
    std::env::var("CONFORMANCE_CORPUS_REQUIRED").is_ok_and(|v| v == "1")
}
