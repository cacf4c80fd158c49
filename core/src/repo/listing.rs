//! A checkout's paths, as source-controller would archive them: listed
//! through git in a git work tree (what git would commit), else by walking
//! the tree; symlinks recorded, never followed.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Kind, join, normalize};

/// Every path below `root`: through git in a checkout, else walked
/// (stopping once over `max_paths`); with a note when the checkout is a
/// git repository git could not list.
pub(super) fn paths(root: &Path, max_paths: usize) -> (BTreeMap<String, Kind>, Option<String>) {
    let mut paths = BTreeMap::new();
    let note = match git_listing(root) {
        Listing::Git(files) => {
            from_listing(root, &files, &mut paths);
            None
        }
        Listing::NotGit => {
            walk(root, "", &mut paths, max_paths);
            None
        }
        Listing::Unusable(why) => {
            walk(root, "", &mut paths, max_paths);
            Some(format!(
                "the checkout is a git repository, but `git ls-files` could not list it ({why}): the whole working tree is read, including files .gitignore excludes, which source-controller never sees"
            ))
        }
    };
    (paths, note)
}

/// How the paths of a checkout are listed.
enum Listing {
    /// Not inside a git work tree: every path is part of the artifact.
    NotGit,
    /// What git would commit, relative to the root.
    Git(Vec<String>),
    /// A git work tree that `git` could not list (why).
    Unusable(String),
}

/// In a git checkout, the files git would commit: tracked files and
/// untracked files `.gitignore` does not exclude (`git ls-files --cached
/// --others --exclude-standard`). source-controller archives the commit it
/// fetched, so ignored files (`target/`, `node_modules/`, local secrets) are
/// never part of it, and listing them through git also keeps a run out of
/// ignored trees of any size.
fn git_listing(root: &Path) -> Listing {
    // Only a root that is itself a work tree (or inside one) is listed by
    // git; anything else, like a directory extracted by `git archive`, is
    // the tree as it stands.
    let inside = root.ancestors().any(|dir| dir.join(".git").exists());
    if !inside {
        return Listing::NotGit;
    }
    let output = crate::exec::git(root, crate::exec::Transports::Network)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .stderr(std::process::Stdio::piped())
        .output();
    match output {
        Err(err) => Listing::Unusable(format!("cannot run git: {err}")),
        Ok(out) if !out.status.success() => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("not a git repository") {
                return Listing::NotGit;
            }
            Listing::Unusable(stderr.trim().lines().next().unwrap_or("").to_string())
        }
        Ok(out) => {
            let mut files: Vec<String> = out
                .stdout
                .split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .filter_map(|p| std::str::from_utf8(p).ok())
                .map(str::to_string)
                .collect();
            files.sort();
            files.dedup();
            Listing::Git(files)
        }
    }
}

/// Records the paths git listed, with every directory above them. A listed
/// path that is a symlink stays one; a deleted tracked file is gone; a
/// submodule (a directory git lists as one entry) is a directory without
/// its contents, as source-controller archives it without
/// `recurseSubmodules`.
fn from_listing(root: &Path, files: &[String], out: &mut BTreeMap<String, Kind>) {
    for rel in files {
        let (rel, escapes) = normalize("", rel);
        if escapes || rel.is_empty() || rel.split('/').any(|s| s == ".git") {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(root.join(&rel)) else {
            continue; // deleted in the working tree
        };
        let kind = if meta.file_type().is_symlink() {
            Kind::Symlink
        } else if meta.is_dir() {
            Kind::Dir
        } else if meta.is_file() {
            Kind::File
        } else {
            Kind::Unreadable(special(&meta.file_type()))
        };
        let mut dir = rel.as_str();
        while let Some((parent, _)) = dir.rsplit_once('/') {
            out.entry(parent.to_string()).or_insert(Kind::Dir);
            dir = parent;
        }
        out.insert(rel, kind);
    }
}

/// Records every path below `rel` (the `.git` directory excepted). A
/// symlink is recorded, never followed; a directory that cannot be listed
/// is recorded as unreadable. Stops once more than `max` paths are
/// recorded (the caller reports the budget), showing progress meanwhile.
fn walk(root: &Path, rel: &str, out: &mut BTreeMap<String, Kind>, max: usize) {
    if out.len() > max {
        return;
    }
    crate::progress::show(&format!("listing the repository: {} paths", out.len()));
    let entries = match std::fs::read_dir(root.join(rel)) {
        Ok(entries) => entries,
        Err(err) => {
            if !rel.is_empty() {
                out.insert(rel.to_string(), Kind::Unreadable(err.to_string()));
            }
            return;
        }
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = join(rel, &name);
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_symlink() {
            out.insert(child, Kind::Symlink);
        } else if file_type.is_dir() {
            if name == ".git" {
                continue;
            }
            out.insert(child.clone(), Kind::Dir);
            walk(root, &child, out, max);
        } else if file_type.is_file() {
            out.insert(child, Kind::File);
        } else {
            // Never opened (a FIFO would block the run), but named when a
            // build reads it.
            out.insert(child, Kind::Unreadable(special(&file_type)));
        }
    }
}

/// What a path that is neither a file, a directory nor a symlink is.
fn special(kind: &std::fs::FileType) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "it is a FIFO, not a regular file".into();
        }
        if kind.is_socket() {
            return "it is a socket, not a regular file".into();
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "it is a device, not a regular file".into();
        }
    }
    let _ = kind;
    "it is not a regular file".into()
}
