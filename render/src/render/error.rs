//! Why a kustomize build failed: the message kustomize would give and,
//! when the renderer knows it, the file and line at fault. The Flux layer
//! points the `render-failed` finding there ([`crate::render::flux`]);
//! every report prints it as `file:line: message`, as kustomize does.

use std::fmt;

/// A failed build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The build fails as kustomize's would.
    Failed {
        /// The file (repository path) and line at fault, when known.
        at: Option<(String, u32)>,
        /// What is wrong, without the place.
        message: String,
    },
    /// The native renderer does not implement what the kustomization uses
    /// (another backend may take over: `--renderer auto`).
    Unsupported {
        /// What, where, and what to do instead.
        what: String,
    },
    /// A file the build reads is over one of the loader's budgets.
    Budget {
        /// The file and line of the breach, when known.
        at: Option<(String, u32)>,
        /// Which budget.
        message: String,
    },
}

impl Error {
    /// A failure with no known place.
    pub fn new(message: impl Into<String>) -> Error {
        Error::Failed {
            at: None,
            message: message.into(),
        }
    }

    /// A failure at `file:line` (0: the whole file).
    pub fn at(file: impl Into<String>, line: u32, message: impl Into<String>) -> Error {
        Error::Failed {
            at: Some((file.into(), line)),
            message: message.into(),
        }
    }

    /// What the native renderer does not implement.
    pub fn unsupported(what: impl Into<String>) -> Error {
        Error::Unsupported { what: what.into() }
    }

    /// The file and line at fault, when known.
    pub fn place(&self) -> Option<&(String, u32)> {
        match self {
            Error::Failed { at, .. } | Error::Budget { at, .. } => at.as_ref(),
            Error::Unsupported { .. } => None,
        }
    }

    /// What is wrong, without the place.
    pub fn message(&self) -> String {
        match self {
            Error::Failed { message, .. } | Error::Budget { message, .. } => message.clone(),
            Error::Unsupported { what } => format!("unsupported: {what}"),
        }
    }

    /// Whether the native renderer declined (a feature it does not
    /// implement), so another backend may take over.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, Error::Unsupported { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.place() {
            Some((file, line)) => write!(f, "{file}:{line}: {}", self.message()),
            None => f.write_str(&self.message()),
        }
    }
}

impl std::error::Error for Error {}

/// A message that already says where (or needs no place).
impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::new(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Error {
        Error::new(message)
    }
}
