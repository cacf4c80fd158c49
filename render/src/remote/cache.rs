//! The cache of fetched remote content, content-addressed: a file is
//! stored under the SHA-256 of its bytes (`blobs/<sha256>`), a git
//! checkout under the commit it is (`trees/<commit>`, or
//! `trees/<commit>-nosub` without submodules). A small record per request
//! (`requests/<sha256 of the address>`) says which content the address gave
//! last and when, for the runs that cannot reach it again. Writes go to a
//! temporary name in the cache and are renamed into place, so two runs
//! sharing a cache never see half a file or half a checkout.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// The cache could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the remote cache {}: {source}", path.display())]
pub struct CacheError {
    /// What could not be written.
    pub path: PathBuf,
    /// What the file system said.
    #[source]
    pub source: std::io::Error,
}

/// A cache directory.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

/// What an address gave the last time it was fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// `blob <sha256>` or `tree <name>`.
    pub content: String,
    /// Seconds since the Unix epoch.
    pub fetched: u64,
}

/// The hex SHA-256 of some bytes.
pub fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Cache {
    /// The cache at `root` (created on first write).
    pub fn new(root: PathBuf) -> Cache {
        Cache { root }
    }

    /// Where the cache lives.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The default cache: `$CONFORMANCE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/conformance`, else `~/.cache/conformance`, else a
    /// directory under the system's temporary directory.
    pub fn default_root() -> PathBuf {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        env("CONFORMANCE_CACHE_DIR")
            .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("conformance")))
            .or_else(|| env("HOME").map(|d| d.join(".cache").join("conformance")))
            .unwrap_or_else(|| std::env::temp_dir().join("conformance-cache"))
    }

    /// A fresh temporary path inside the cache (on the same file system as
    /// the final place, so the rename is atomic).
    pub fn scratch(&self) -> Result<PathBuf, CacheError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = self.root.join("tmp");
        std::fs::create_dir_all(&dir).map_err(|e| self.cannot(&dir, e))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        Ok(dir.join(format!("{}-{nanos}-{n}", std::process::id())))
    }

    fn cannot(&self, path: &Path, source: std::io::Error) -> CacheError {
        CacheError {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Stores bytes under their hash; returns the hash.
    pub(crate) fn put_blob(&self, bytes: &[u8]) -> Result<String, CacheError> {
        let hash = sha256(bytes);
        let path = self.blob_path(&hash);
        if path.is_file() {
            return Ok(hash);
        }
        let tmp = self.scratch()?;
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            std::fs::create_dir_all(path.parent().unwrap_or(&self.root))?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            self.cannot(&path, e)
        })?;
        Ok(hash)
    }

    /// The path of a stored blob.
    pub(crate) fn blob_path(&self, hash: &str) -> PathBuf {
        self.root.join("blobs").join(hash)
    }

    /// The bytes of a stored blob, checked against their hash (a file
    /// changed on disk is not content any more).
    pub fn blob(&self, hash: &str) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.blob_path(hash)).ok()?;
        (sha256(&bytes) == hash).then_some(bytes)
    }

    /// The directory of a stored checkout.
    pub(crate) fn tree_path(&self, name: &str) -> PathBuf {
        self.root.join("trees").join(name)
    }

    /// Moves a finished checkout into place under `name` (another run may
    /// have put the same commit there first: that copy is kept).
    pub(crate) fn put_tree(&self, scratch: &Path, name: &str) -> Result<PathBuf, CacheError> {
        let path = self.tree_path(name);
        if path.is_dir() {
            let _ = std::fs::remove_dir_all(scratch);
            return Ok(path);
        }
        let parent = path.parent().unwrap_or(&self.root).to_path_buf();
        std::fs::create_dir_all(&parent).map_err(|e| self.cannot(&parent, e))?;
        match std::fs::rename(scratch, &path) {
            Ok(()) => Ok(path),
            Err(_) if path.is_dir() => {
                let _ = std::fs::remove_dir_all(scratch);
                Ok(path)
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(scratch);
                Err(self.cannot(&path, e))
            }
        }
    }

    fn record_path(&self, address: &str) -> PathBuf {
        self.root.join("requests").join(sha256(address.as_bytes()))
    }

    /// Remembers what `address` gave now.
    pub(crate) fn put_record(&self, address: &str, content: &str) -> Result<(), CacheError> {
        let path = self.record_path(address);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let tmp = self.scratch()?;
        let write = || -> std::io::Result<()> {
            std::fs::write(&tmp, format!("{content}\n{now}\n{address}\n"))?;
            std::fs::create_dir_all(path.parent().unwrap_or(&self.root))?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            self.cannot(&path, e)
        })
    }

    /// What `address` gave the last time, if this cache remembers.
    pub fn record(&self, address: &str) -> Option<Record> {
        let text = std::fs::read_to_string(self.record_path(address)).ok()?;
        let mut lines = text.lines();
        let content = lines.next()?.to_string();
        let fetched = lines.next()?.parse().ok()?;
        // The address is stored too: a hash collision is not a hit.
        (lines.next()? == address).then_some(Record { content, fetched })
    }
}

/// How long ago a time was, in words (`3 days ago`).
pub(crate) fn ago(fetched: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let secs = now.saturating_sub(fetched);
    match secs {
        0..120 => format!("{secs} s ago"),
        120..7200 => format!("{} min ago", secs / 60),
        7200..172_800 => format!("{} h ago", secs / 3600),
        _ => format!("{} days ago", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_stored_by_content_and_checked_on_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(dir.path().to_path_buf());
        let a = cache.put_blob(b"kind: A\n").expect("put");
        assert_eq!(
            cache.put_blob(b"kind: A\n").expect("again"),
            a,
            "same bytes, same name"
        );
        assert_eq!(cache.blob(&a).as_deref(), Some(&b"kind: A\n"[..]));
        std::fs::write(cache.blob_path(&a), "tampered").expect("write");
        assert_eq!(cache.blob(&a), None, "changed bytes are not that content");
    }

    #[test]
    fn records_remember_the_last_content_per_address() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(dir.path().to_path_buf());
        assert_eq!(cache.record("https://x/a.yaml"), None);
        cache
            .put_record("https://x/a.yaml", "blob abc")
            .expect("put");
        let r = cache.record("https://x/a.yaml").expect("record");
        assert_eq!(r.content, "blob abc");
        assert_eq!(cache.record("https://x/b.yaml"), None);
    }
}
