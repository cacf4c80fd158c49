//! Why a kustomize build failed: the message kustomize would give and,
//! when the renderer knows it, the file and line at fault. The Flux layer
//! points the `render-failed` finding there ([`crate::render::flux`]);
//! every report prints it as `file:line: message`, as kustomize does.

use std::fmt;

/// A failed build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The file (repository path) and line at fault, when known.
    pub at: Option<(String, u32)>,
    /// What is wrong, without the place.
    pub message: String,
}

impl Error {
    /// A failure with no known place.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            at: None,
            message: message.into(),
        }
    }

    /// A failure at `file:line` (0: the whole file).
    pub fn at(file: impl Into<String>, line: u32, message: impl Into<String>) -> Error {
        Error {
            at: Some((file.into(), line)),
            message: message.into(),
        }
    }

    /// Whether the native renderer declined (a feature it does not
    /// implement), so another backend may take over.
    pub fn is_unsupported(&self) -> bool {
        self.at.is_none() && self.message.starts_with("unsupported:")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.at {
            Some((file, line)) => write!(f, "{file}:{line}: {}", self.message),
            None => f.write_str(&self.message),
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
