//! What a remote reference of a kustomization names, parsed as kustomize
//! parses it (`git.NewRepoSpecFromURL` in kustomize's
//! `api/internal/git/repospec.go`): the address `git` clones, the directory
//! of the repository that holds the kustomization, and the query's `ref`
//! (or `version`), `timeout` and `submodules`.

use std::time::Duration;

use crate::exec::{Refused, Transports};

/// kustomize's default for `?timeout=`: the limit on each git command.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(27);

/// A git repository and a directory in it, as a kustomization names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSpec {
    /// What `git fetch` is given: scheme, user and host, then the
    /// repository path (`https://github.com/org/repo`).
    pub clone: String,
    /// The kustomization's directory inside the repository (`""`: its root).
    pub dir: String,
    /// `?ref=` (or `?version=`): a branch, tag or full commit; `None` is
    /// the remote's `HEAD`.
    pub reference: Option<String>,
    /// `?timeout=` (seconds, or a Go duration), else 27 s.
    pub timeout: Duration,
    /// `?submodules=` (default true).
    pub submodules: bool,
}

impl GitSpec {
    /// Whether git may be given this address and ref, and with which
    /// transports: the ref is a ref name that cannot be read as an option
    /// ([`crate::exec::check_ref`]); the address is `https://`, `http://`,
    /// `ssh://` or `user@host:` with a host that starts with a letter, a
    /// digit or `[`, without spaces or control characters; a `file://`
    /// address only inside `cache` (where the test harness puts the
    /// repositories it serves: a repository cannot choose the cache).
    pub fn check(&self, cache: &std::path::Path) -> Result<Transports, Refused> {
        if let Some(reference) = &self.reference {
            crate::exec::check_ref(reference)?;
        }
        let refuse = |why: &str| {
            Err(Refused::Address(
                crate::exec::printable(&self.clone),
                why.to_string(),
            ))
        };
        if self
            .clone
            .chars()
            .any(|c| c.is_control() || c.is_whitespace())
        {
            return refuse("it holds a space or a control character");
        }
        if let Some(path) = self.clone.strip_prefix(FILE) {
            if !crate::exec::inside(std::ffi::OsStr::new(path), cache) {
                return refuse(
                    "a file:// repository is read only inside the remote cache directory; a repository must not make this tool read the machine's own repositories",
                );
            }
            return Ok(Transports::NetworkAndLocal);
        }
        let rest = ["https://", "http://", "ssh://"]
            .iter()
            .find_map(|s| self.clone.strip_prefix(s));
        let host = match rest {
            Some(rest) => {
                let authority = rest.split('/').next().unwrap_or("");
                authority.rsplit_once('@').map_or(authority, |(_, h)| h)
            }
            // `user@host:path`, as split_host builds it.
            None => match self.clone.split_once('@') {
                Some((user, rest)) if !user.is_empty() && rest.contains(':') => {
                    rest.split(':').next().unwrap_or("")
                }
                _ => {
                    return refuse(
                        "only https://, http://, ssh:// and user@host: addresses are fetched",
                    );
                }
            },
        };
        if !host
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '[')
        {
            return refuse("the host must start with a letter, a digit or '['");
        }
        let bare = host
            .trim_start_matches('[')
            .split([']', ':'])
            .next()
            .unwrap_or("");
        let ip = host
            .trim_start_matches('[')
            .split(']')
            .next()
            .and_then(|h| h.parse().ok())
            .or_else(|| bare.parse().ok());
        if let Some(why) = ip.and_then(super::http::forbidden) {
            return refuse(&format!("the host is {why}"));
        }
        Ok(Transports::Network)
    }
}

/// Why an address is not a git reference, in kustomize's words
/// (`git.NewRepoSpecFromURL`): for kustomize it is then a local path or a
/// plain URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotGit {
    /// An absolute path.
    #[error("uri looks like abs path: {0}")]
    AbsolutePath(String),
    /// No `https://`-like scheme and no `user@`.
    #[error("failed to parse scheme")]
    NoScheme,
    /// Nothing where the host should be.
    #[error("failed to parse host segment")]
    NoHost,
    /// No repository path after the host.
    #[error("failed to parse repo path segment")]
    NoRepoPath,
    /// The directory after `//` climbs out of the repository.
    #[error("url path exits repo: {0}")]
    ExitsRepo(String),
}

/// Parses a git-like address as kustomize does; `Err` (with kustomize's
/// reason) when it is not one, which for kustomize means "a local path or
/// a plain URL".
pub(crate) fn git_spec(raw: &str) -> Result<GitSpec, NotGit> {
    if raw.starts_with('/') {
        return Err(NotGit::AbsolutePath(raw.to_string()));
    }
    // The query first: `?` only ever starts it.
    let (rest, query) = raw.split_once('?').unwrap_or((raw, ""));
    let (reference, timeout, submodules) = parse_query(query);
    let (host, path) = split_host(rest)?;
    let all_segments = host.starts_with(FILE);
    let (repo, dir) = split_path(path, all_segments)?;
    Ok(GitSpec {
        clone: format!("{host}{repo}"),
        dir,
        reference,
        timeout,
        submodules,
    })
}

const FILE: &str = "file://";
const SCHEMES: [&str; 4] = ["ssh://", "https://", "http://", FILE];

/// `ref` (else `version`), `timeout`, `submodules`, each with kustomize's
/// default when absent or unreadable; a query Go's `url.ParseQuery`
/// rejects gives all three defaults.
fn parse_query(query: &str) -> (Option<String>, Duration, bool) {
    let defaults = (None, DEFAULT_TIMEOUT, true);
    let mut values: Vec<(String, String)> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        if pair.contains(';') {
            return defaults;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (Some(k), Some(v)) = (unescape(k), unescape(v)) else {
            return defaults;
        };
        values.push((k, v));
    }
    let get = |key: &str| {
        values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let reference = get("ref").or_else(|| get("version"));
    let timeout = get("timeout")
        .and_then(|t| {
            t.parse::<u64>()
                .ok()
                .filter(|s| *s > 0)
                .map(Duration::from_secs)
                .or_else(|| go_duration(&t))
        })
        .unwrap_or(DEFAULT_TIMEOUT);
    let submodules = get("submodules").and_then(|s| go_bool(&s)).unwrap_or(true);
    (reference, timeout, submodules)
}

/// `url.QueryUnescape`: `+` is a space, `%XX` a byte.
fn unescape(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// `strconv.ParseBool`.
fn go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// A positive `time.ParseDuration` of whole units (`90s`, `2m`, `1h30m`,
/// `1.5s`).
fn go_duration(text: &str) -> Option<Duration> {
    let mut total = 0f64;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_end..];
        total += number * scale;
    }
    (total > 0.0 && total.is_finite()).then(|| Duration::from_secs_f64(total))
}

/// `extractHost`: scheme, user and host (kustomize normalises GitHub to
/// `https://github.com/`, or `git@github.com:` for ssh), and the path.
fn split_host(raw: &str) -> Result<(String, &str), NotGit> {
    let rest = strip_prefix_ignore_case(raw, "git::").unwrap_or(raw);
    let (scheme, rest) = SCHEMES
        .iter()
        .find_map(|s| strip_prefix_ignore_case(rest, s).map(|r| (*s, r)))
        .unwrap_or(("", rest));
    let user_len = user_prefix_len(rest);
    let (user, rest) = rest.split_at(user_len);
    let lower = rest.to_ascii_lowercase();
    let github = lower.starts_with("github.com/") || lower.starts_with("github.com:");
    let scp = scheme.is_empty() && (!user.is_empty() || github);
    if scheme.is_empty() && !scp {
        return Err(NotGit::NoScheme);
    }
    if scheme == FILE {
        // Everything after the scheme is the local repository's path.
        let path = &raw[raw.len() - rest.len() - user.len()..];
        return Ok((FILE.to_string(), path));
    }
    let mut separator = rest.find('/');
    if scp
        && let Some(colon) = rest.find(':')
        && separator.is_none_or(|s| colon > 0 && colon < s)
    {
        separator = Some(colon);
    }
    let (mut host, path) = match separator {
        Some(i) => (rest[..=i].to_string(), &rest[i + 1..]),
        None => (rest.to_string(), ""),
    };
    let (mut scheme, mut user) = (scheme.to_string(), user.to_string());
    if github {
        if scheme.starts_with("ssh://") || !user.is_empty() {
            scheme = String::new();
            host = "github.com:".into();
        } else {
            scheme = "https://".into();
            user = String::new();
            host = "github.com/".into();
        }
    }
    if host.is_empty() {
        return Err(NotGit::NoHost);
    }
    Ok((format!("{scheme}{user}{host}"), path))
}

/// The length of a leading `user@` (a letter, then letters, digits, `-`).
fn user_prefix_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    if !bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        return 0;
    }
    let end = bytes
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-'))
        .unwrap_or(bytes.len());
    if bytes.get(end) == Some(&b'@') {
        end + 1
    } else {
        0
    }
}

fn strip_prefix_ignore_case<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `parsePathParts`: the repository path and the directory in it, split at
/// `_git/<repo>`, else `//`, else `.git`, else after two segments (all of
/// them for `file://`). A directory that climbs out is refused.
fn split_path(path: &str, all_segments: bool) -> Result<(String, String), NotGit> {
    let split = if let Some(i) = path.find("_git/") {
        let after = &path[i + 5..];
        let (repo, dir) = after.split_once('/').unwrap_or((after, ""));
        Some((format!("{}{repo}", &path[..i + 5]), dir.to_string()))
    } else if let Some(i) = path.find("//") {
        Some((path[..i].to_string(), path[i + 2..].to_string()))
    } else if let Some(i) = path.find(".git") {
        Some((path[..i + 4].to_string(), path[i + 4..].to_string()))
    } else if all_segments {
        Some((path.to_string(), String::new()))
    } else {
        let segments: Vec<&str> = path.split('/').collect();
        (segments.len() >= 2).then(|| (segments[..2].join("/"), segments[2..].join("/")))
    };
    let Some((repo, dir)) = split.filter(|(repo, _)| !repo.is_empty()) else {
        return Err(NotGit::NoRepoPath);
    };
    let (clean, escaped) = crate::repo::normalize("", dir.trim_start_matches('/'));
    if escaped {
        return Err(NotGit::ExitsRepo(path.to_string()));
    }
    Ok((repo, clean))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(raw: &str) -> GitSpec {
        git_spec(raw).unwrap_or_else(|e| panic!("{raw}: {e}"))
    }

    #[test]
    fn github_shorthand_takes_two_segments_for_the_repository() {
        let s = spec("github.com/kubernetes-csi/external-snapshotter/client/config/crd?ref=v8.2.0");
        assert_eq!(
            s.clone,
            "https://github.com/kubernetes-csi/external-snapshotter"
        );
        assert_eq!(s.dir, "client/config/crd");
        assert_eq!(s.reference.as_deref(), Some("v8.2.0"));
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert!(s.submodules);
    }

    #[test]
    fn double_slash_and_dot_git_mark_the_repository_root() {
        let s =
            spec("https://github.com/org/repo//deploy/base?ref=main&timeout=90s&submodules=false");
        assert_eq!(
            (s.clone.as_str(), s.dir.as_str()),
            ("https://github.com/org/repo", "deploy/base")
        );
        assert_eq!(s.timeout, Duration::from_secs(90));
        assert!(!s.submodules);
        let s = spec("https://gitlab.example.com/group/sub/repo.git/deploy?version=v2");
        assert_eq!(s.clone, "https://gitlab.example.com/group/sub/repo.git");
        assert_eq!(s.dir, "deploy");
        assert_eq!(s.reference.as_deref(), Some("v2"));
        let s = spec("https://dev.azure.com/org/project/_git/repo/path/to/base");
        assert_eq!(s.clone, "https://dev.azure.com/org/project/_git/repo");
        assert_eq!(s.dir, "path/to/base");
    }

    #[test]
    fn ssh_and_scp_addresses_keep_their_user() {
        let s = spec("git@github.com:org/repo.git//base?ref=v1");
        assert_eq!(s.clone, "git@github.com:org/repo.git");
        assert_eq!(s.dir, "base");
        let s = spec("ssh://git@example.com/org/repo//x");
        assert_eq!(s.clone, "ssh://git@example.com/org/repo");
        assert_eq!(s.dir, "x");
    }

    #[test]
    fn file_addresses_take_the_whole_path_unless_marked() {
        let s = spec("file:///srv/git/base-repo//overlays/prod?ref=v1");
        assert_eq!(s.clone, "file:///srv/git/base-repo");
        assert_eq!(s.dir, "overlays/prod");
        let s = spec("file:///srv/git/base-repo");
        assert_eq!(
            (s.clone.as_str(), s.dir.as_str()),
            ("file:///srv/git/base-repo", "")
        );
    }

    #[test]
    fn what_kustomize_refuses() {
        assert!(git_spec("/abs/path").is_err());
        assert!(git_spec("../base").is_err());
        assert!(
            git_spec("example.com/org/repo").is_err(),
            "no scheme, no user: a local path"
        );
        assert!(git_spec("https://github.com/org/repo//../../etc").is_err());
        assert!(
            git_spec("https://example.com").is_err(),
            "no repository path"
        );
    }

    #[test]
    fn timeouts_are_seconds_or_go_durations() {
        assert_eq!(
            spec("github.com/a/b?timeout=61").timeout,
            Duration::from_secs(61)
        );
        assert_eq!(
            spec("github.com/a/b?timeout=1m30s").timeout,
            Duration::from_secs(90)
        );
        assert_eq!(spec("github.com/a/b?timeout=-5").timeout, DEFAULT_TIMEOUT);
        assert_eq!(spec("github.com/a/b?timeout=soon").timeout, DEFAULT_TIMEOUT);
    }
}
