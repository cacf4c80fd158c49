//! Writing a report to `--output FORMAT=PATH`, without ever replacing
//! something that is not a regular file.
//!
//! * A path that does not exist, or a regular file: the report is written
//!   to a temporary file beside it and renamed over it, so a failed run
//!   never leaves half a report; an existing file keeps its permissions,
//!   a new one gets the usual `0666` less the umask.
//! * A FIFO or a character device (`/dev/stdout`, `/dev/fd/3`, a named
//!   pipe): written to directly, as a shell redirection would; nothing is
//!   created or renamed.
//! * A symlink is followed, deliberately (the user named it, and
//!   `/dev/stdout` is one): the target is written through the link, as a
//!   shell's `>` would (a regular file truncated, a stream written), and
//!   the link itself stays. A link to nothing is refused.
//! * Anything else (a directory, a block device, a socket) is refused.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The path is something a report must not replace.
    #[error(
        "cannot write the report {path}: it is {what}; a report goes to a regular file, a FIFO or a character device"
    )]
    NotWritable {
        /// The path as given.
        path: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// A symlink whose target does not exist.
    #[error("cannot write the report {0}: it is a symlink to nothing")]
    Dangling(PathBuf),
    /// The file system refused.
    #[error("cannot write the report {path}: {source}")]
    Io {
        /// The path as given.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
}

/// Writes `text` to `path` as the module documentation says.
pub fn write(path: &Path, text: &str) -> Result<(), OutputError> {
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return replace(path, text, None).map_err(io);
        }
        Err(err) => return Err(io(err)),
    };
    let through_link = meta.file_type().is_symlink();
    let meta = if through_link {
        match std::fs::metadata(path) {
            Ok(followed) => followed,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(OutputError::Dangling(path.to_path_buf()));
            }
            Err(err) => return Err(io(err)),
        }
    } else {
        meta
    };
    let kind = meta.file_type();
    if kind.is_file() && !through_link {
        return replace(path, text, Some(meta.permissions())).map_err(io);
    }
    if kind.is_file() || is_stream(&kind) {
        // Through the link or into the stream, as `>` would: nothing is
        // created or renamed, and the link stays a link.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(kind.is_file())
            .open(path)
            .map_err(io)?;
        return file
            .write_all(text.as_bytes())
            .and_then(|()| file.flush())
            .map_err(io);
    }
    Err(OutputError::NotWritable {
        path: path.to_path_buf(),
        what: describe(&kind),
    })
}

/// A FIFO or a character device.
fn is_stream(kind: &std::fs::FileType) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        kind.is_fifo() || kind.is_char_device()
    }
    #[cfg(not(unix))]
    {
        let _ = kind;
        false
    }
}

fn describe(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Writes beside `path` and renames over it; `keep` is the replaced
/// file's permissions.
fn replace(path: &Path, text: &str, keep: Option<std::fs::Permissions>) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".conformance-report-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        // Created with 0666: the kernel takes the umask off, as for any
        // new file.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut file = builder.tempfile_in(dir)?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    if let Some(permissions) = keep {
        file.as_file().set_permissions(permissions)?;
    }
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
