//! The error type of `conformance.yaml`: a problem at a line of the file.
//! A leaf, so that each section's parser (beside the rule, the discovery or
//! the provenance that reads it) reports with it without depending on the
//! configuration that aggregates them.

use serde_saphyr::Spanned;

/// The file name looked up at the repository root.
pub const FILE_NAME: &str = "conformance.yaml";

/// `conformance.yaml` is unreadable or invalid: the first problem, and any
/// more found in the same run.
#[derive(Debug)]
pub struct ConfigError {
    /// The file the problem is in (`conformance.yaml`).
    pub file: String,
    /// The line of the problem (0: the whole file).
    pub line: u32,
    /// What is wrong, in words.
    pub message: String,
    /// Further problems, in line order.
    pub more: Vec<ConfigError>,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)?;
        for more in &self.more {
            write!(f, "\n{more}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// A problem at a line of conformance.yaml (0: the whole file).
    pub fn new(line: u32, message: String) -> ConfigError {
        ConfigError {
            file: FILE_NAME.into(),
            line,
            message,
            more: Vec::new(),
        }
    }
}

/// A problem at the line of a value of conformance.yaml.
pub fn error_at<T>(spanned: &Spanned<T>, message: String) -> ConfigError {
    ConfigError::new(spanned.referenced.line() as u32, message)
}

/// A glob of conformance.yaml that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("bad glob `{pattern}`: {source}")]
pub struct GlobError {
    /// The glob as written.
    pub pattern: String,
    /// What globset said.
    #[source]
    pub source: globset::Error,
}

/// A compiled glob for names (`*` and `?`): every glob of conformance.yaml
/// (placement policies, `substitution.injected`) has this syntax.
pub fn glob(pattern: &str) -> Result<globset::GlobMatcher, GlobError> {
    globset::Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|source| GlobError {
            pattern: pattern.to_string(),
            source,
        })
}
