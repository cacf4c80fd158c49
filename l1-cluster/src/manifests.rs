//! `l1.manifests`: repository files L1 replaces with their published copy
//! (an operator manifest the repository trims, a trimmed
//! `gotk-components.yaml`). Each is downloaded (with `curl`, which every CI
//! runner has; nothing else here speaks HTTP to the internet), checked
//! against the `sha256` in conformance.yaml, and kept in a cache directory
//! (`L1_CACHE`, default: the system temp directory) under its digest. A
//! file without a pinned digest is refused, with the digest of what was
//! downloaded, so that pinning is one copy and paste.

use std::path::{Path, PathBuf};
use std::process::Command;

use conformance::config::L1Manifest;

pub use crate::error::ManifestError;
use sha2::{Digest, Sha256};

/// A published file, verified.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The repository file it replaces.
    pub file: String,
    /// The address it was downloaded from.
    pub url: String,
    /// The SHA-256 of its bytes, as 64 lowercase hex digits.
    pub sha256: String,
    /// Its content.
    pub bytes: Vec<u8>,
}

/// The SHA-256 of `bytes`, as 64 lowercase hex digits.
pub fn digest(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Checks downloaded bytes against the pinned digest.
pub fn verify(entry: &L1Manifest, bytes: &[u8]) -> Result<String, ManifestError> {
    let got = digest(bytes);
    match &entry.sha256 {
        None => Err(ManifestError::Unpinned {
            file: entry.file.value.clone(),
            line: entry.file.referenced.line(),
            url: entry.url.value.clone(),
            got,
        }),
        Some(want) if !want.value.eq_ignore_ascii_case(&got) => Err(ManifestError::Mismatch {
            url: entry.url.value.clone(),
            got,
            line: want.referenced.line(),
            want: want.value.clone(),
        }),
        Some(_) => Ok(got),
    }
}

/// The cache directory.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("L1_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("conformance-l1-cache"))
}

/// Fetches and verifies every entry; every problem is reported, not only
/// the first.
pub fn fetch_all(entries: &[L1Manifest], cache: &Path) -> Result<Vec<Fetched>, ManifestError> {
    let mut fetched = Vec::new();
    let mut problems = Vec::new();
    for entry in entries {
        match fetch(entry, cache) {
            Ok(f) => fetched.push(f),
            Err(e) => problems.push(e),
        }
    }
    if problems.is_empty() {
        Ok(fetched)
    } else {
        Err(ManifestError::Several(problems))
    }
}

fn fetch(entry: &L1Manifest, cache: &Path) -> Result<Fetched, ManifestError> {
    let cached = entry
        .sha256
        .as_ref()
        .map(|s| cache.join(s.value.to_ascii_lowercase()));
    if let Some(path) = &cached
        && let Ok(bytes) = std::fs::read(path)
        && verify(entry, &bytes).is_ok()
    {
        return Ok(found(entry, bytes));
    }
    let bytes = download(&entry.url.value)?;
    verify(entry, &bytes)?;
    if let Some(path) = &cached {
        // A cache that cannot be written only costs a download next time.
        let _ = std::fs::create_dir_all(cache).and_then(|()| std::fs::write(path, &bytes));
    }
    Ok(found(entry, bytes))
}

fn found(entry: &L1Manifest, bytes: Vec<u8>) -> Fetched {
    Fetched {
        file: conformance::repo::normalize("", &entry.file.value).0,
        url: entry.url.value.clone(),
        sha256: digest(&bytes),
        bytes,
    }
}

fn download(url: &str) -> Result<Vec<u8>, ManifestError> {
    let out = Command::new("curl")
        .args(["--fail", "--silent", "--show-error", "--location"])
        .args(["--retry", "3", "--max-time", "300", "--proto", "=https"])
        // `--url` takes the next word as the address even when it starts
        // with `-`: conformance.yaml cannot hand curl an option.
        .arg("--url")
        .arg(url)
        .output()
        .map_err(|source| ManifestError::Curl {
            url: url.to_string(),
            source,
        })?;
    if !out.status.success() {
        return Err(ManifestError::Download {
            url: url.to_string(),
            said: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use conformance::config::Config;

    fn entry(sha: Option<&str>) -> L1Manifest {
        let sha = sha.map_or(String::new(), |s| format!("\n      sha256: {s}"));
        let text = format!(
            "l1:\n  manifests:\n    - file: platform/cdi/cdi-operator.yaml\n      url: https://example.com/cdi-operator.yaml{sha}\n"
        );
        Config::parse(&text, &conformance::rules::is_rule_id)
            .expect("valid")
            .l1
            .manifests
            .remove(0)
    }

    #[test]
    fn a_pinned_digest_is_checked() {
        let bytes = b"apiVersion: v1\nkind: Namespace\nmetadata: {name: cdi}\n";
        let good = digest(bytes);
        assert_eq!(verify(&entry(Some(&good)), bytes).ok(), Some(good.clone()));
        let upper = good.to_ascii_uppercase();
        assert!(verify(&entry(Some(&upper)), bytes).is_ok());
        let wrong = "0".repeat(64);
        let e = verify(&entry(Some(&wrong)), bytes)
            .expect_err("mismatch")
            .to_string();
        assert!(e.contains(&good) && e.contains("line 5"), "{e}");
    }

    #[test]
    fn an_unpinned_file_is_refused_with_its_digest() {
        let bytes = b"kind: Namespace\n";
        let e = verify(&entry(None), bytes)
            .expect_err("unpinned")
            .to_string();
        assert!(e.contains(&format!("sha256: {}", digest(bytes))), "{e}");
        assert!(e.contains("platform/cdi/cdi-operator.yaml"), "{e}");
    }

    #[test]
    fn a_cached_copy_is_used_without_downloading() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = b"kind: Namespace\n".to_vec();
        let sum = digest(&bytes);
        std::fs::write(dir.path().join(&sum), &bytes).expect("write");
        // example.com is never contacted: the cache answers.
        let got = fetch_all(&[entry(Some(&sum))], dir.path()).expect("cached");
        assert_eq!(got[0].bytes, bytes);
        assert_eq!(got[0].file, "platform/cdi/cdi-operator.yaml");
    }
}
