//! Every program this tool starts, and what bounds its arguments.
//!
//! Everything that reaches another program comes from a repository anyone
//! can send a pull request to, so no repository content may choose a
//! program, an option or a protocol. The rules, one place to audit them
//! (CONTRIBUTING.md lists every call site):
//!
//! * a value from a repository is validated before it is used (a git ref
//!   never starts with `-`; only `https://`, `http://`, `ssh://`,
//!   `user@host:` and `file://` inside the cache are addresses, see
//!   [`crate::remote::spec::GitSpec::check`]) and is passed after
//!   `--end-of-options` or `--`, where git reads it as an operand;
//! * git runs in a clean environment ([`git`]): only the variables it needs
//!   to find its configuration, credentials, proxies and certificates are
//!   passed on, never `GIT_*` from the caller;
//! * transports are limited (`GIT_ALLOW_PROTOCOL`, and `protocol.*.allow`
//!   overrides): https, http and ssh; `file` only for a repository inside
//!   the cache directory, which only the caller chooses; `ext` never;
//! * `-c` overrides what a configuration could make git run: hooks
//!   (`core.hooksPath`), `core.fsmonitor`, `core.sshCommand`, and the
//!   upload-pack program;
//! * an external kustomize ([`harden_kustomize`]) clones with the same
//!   environment, through `GIT_CONFIG_*`.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// The ssh that git may start: never prompts (a host key or passphrase
/// question would hang until the timeout), whatever `core.sshCommand` or
/// `GIT_SSH_COMMAND` say.
pub(crate) const SSH_COMMAND: &str = "ssh -o BatchMode=yes";

/// The variables a git command inherits from the caller; everything else
/// (`GIT_DIR`, `GIT_CONFIG_PARAMETERS`, `GIT_SSH_COMMAND`, `GIT_EXEC_PATH`,
/// …) is dropped.
const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "SSH_AUTH_SOCK",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
];

/// Which transports a git command may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transports {
    /// https, http and ssh.
    Network,
    /// Those and `file`: only for a repository the caller placed inside the
    /// cache directory (the test harness does).
    NetworkAndLocal,
}

impl Transports {
    fn allowed(self) -> &'static str {
        match self {
            Transports::Network => "https:http:ssh",
            Transports::NetworkAndLocal => "https:http:ssh:file",
        }
    }

    /// The `-c NAME=VALUE` overrides of a git command, in order.
    fn overrides(self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("core.hooksPath", "/dev/null"),
            ("core.fsmonitor", "false"),
            ("core.sshCommand", SSH_COMMAND),
            ("remote.origin.uploadpack", "git-upload-pack"),
            ("fetch.recurseSubmodules", "false"),
            ("protocol.allow", "never"),
            ("protocol.https.allow", "always"),
            ("protocol.http.allow", "always"),
            ("protocol.ssh.allow", "always"),
            (
                "protocol.file.allow",
                match self {
                    Transports::Network => "never",
                    Transports::NetworkAndLocal => "always",
                },
            ),
            ("protocol.ext.allow", "never"),
            ("advice.detachedHead", "false"),
            ("core.quotePath", "off"),
        ]
    }
}

/// A `git` command in `dir` with a clean environment, the transports
/// limited and every configurable program overridden. The caller adds the
/// subcommand, its options, then `--end-of-options` (or `--`) before any
/// value that came from a repository.
pub fn git(dir: &Path, transports: Transports) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir).env_clear();
    for name in PASSED {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "true")
        .env("GIT_SSH_COMMAND", SSH_COMMAND)
        .env("GIT_ALLOW_PROTOCOL", transports.allowed())
        .env("GIT_PROTOCOL_FROM_USER", "0");
    for (name, value) in transports.overrides() {
        cmd.arg("-c").arg(format!("{name}={value}"));
    }
    cmd.stdin(std::process::Stdio::null());
    cmd
}

/// Gives an external kustomize (which clones remote bases with the git
/// program itself) the same limits as [`git`]: no inherited `GIT_*`
/// variable, the transports limited, and the overrides as `GIT_CONFIG_*`
/// (which git reads like `-c`). Offline, no transport at all.
pub fn harden_kustomize(cmd: &mut Command, transports: Option<Transports>) {
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| n.starts_with("GIT_")) {
            cmd.env_remove(&name);
        }
    }
    let (allowed, overrides) = match transports {
        Some(t) => (t.allowed(), t.overrides()),
        // A protocol name git does not have: nothing is allowed.
        None => ("none", Transports::Network.overrides()),
    };
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "true")
        .env("GIT_SSH_COMMAND", SSH_COMMAND)
        .env("GIT_ALLOW_PROTOCOL", allowed)
        .env("GIT_PROTOCOL_FROM_USER", "0")
        .env("GIT_CONFIG_COUNT", overrides.len().to_string());
    for (i, (name, value)) in overrides.iter().enumerate() {
        cmd.env(format!("GIT_CONFIG_KEY_{i}"), name)
            .env(format!("GIT_CONFIG_VALUE_{i}"), value);
    }
}

/// Why a value cannot be handed to git.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// A ref that could be read as an option or is not a ref name.
    #[error("`{0}` is not a git ref ({1}); nothing was run")]
    Ref(String, &'static str),
    /// An address git must not be given.
    #[error("`{0}` is not an address this tool fetches ({1}); nothing was run")]
    Address(String, String),
}

/// A ref (branch, tag, commit, or `HEAD`) as `git check-ref-format` would
/// accept one, and never one that starts with `-`.
pub fn check_ref(reference: &str) -> Result<(), Refused> {
    let refuse = |why| Err(Refused::Ref(printable(reference), why));
    if reference.is_empty() {
        return refuse("empty");
    }
    if reference.starts_with('-') {
        return refuse("it starts with '-', which git would read as an option");
    }
    if reference
        .chars()
        .any(|c| c.is_control() || c.is_whitespace())
    {
        return refuse("it holds a space or a control character");
    }
    if reference
        .chars()
        .any(|c| matches!(c, '~' | '^' | ':' | '?' | '*' | '[' | '\\'))
    {
        return refuse("it holds one of ~ ^ : ? * [ \\");
    }
    if reference.contains("..") || reference.contains("@{") || reference.contains("//") {
        return refuse("it holds '..', '@{' or '//'");
    }
    if reference.ends_with('/') || reference.ends_with('.') || reference.ends_with(".lock") {
        return refuse("it ends with '/', '.' or '.lock'");
    }
    if reference
        .split('/')
        .any(|part| part.starts_with('.') || part.starts_with('-'))
    {
        return refuse("a part of it starts with '.' or '-'");
    }
    Ok(())
}

/// A revision named on the command line (`--base REV`): anything git's
/// revision syntax allows (`HEAD~1`, `origin/main`, `v1^{commit}`), but
/// never a word git could read as an option, nor a control character.
pub fn check_revision(revision: &str) -> Result<(), Refused> {
    if revision.is_empty() || revision.starts_with('-') {
        return Err(Refused::Ref(
            printable(revision),
            "a revision must not be empty or start with '-'",
        ));
    }
    if revision.chars().any(char::is_control) {
        return Err(Refused::Ref(
            printable(revision),
            "it holds a control character",
        ));
    }
    Ok(())
}

/// Text from a repository as it may appear in a message: control
/// characters escaped, at most 200 characters.
pub fn printable(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == 200 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `path` (as a `file://` address names it) is inside `root`,
/// both resolved through symlinks; a path that does not exist is not.
pub fn inside(path: &OsStr, root: &Path) -> bool {
    let (Ok(path), Ok(root)) = (
        std::fs::canonicalize(Path::new(path)),
        std::fs::canonicalize(root),
    ) else {
        return false;
    };
    path.starts_with(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_that_could_be_options_or_are_not_refs_are_refused() {
        for ok in [
            "main",
            "v1.2.3",
            "release/2.x",
            "HEAD",
            "0123abcd",
            "feat_x-1",
        ] {
            assert_eq!(check_ref(ok), Ok(()), "{ok}");
        }
        for bad in [
            "--upload-pack=touch /tmp/x",
            "-c",
            "",
            "a b",
            "main:refs/heads/x",
            "x..y",
            "x@{1}",
            "a/.hidden",
            "a/-x",
            "x.lock",
            "tab\there",
            "x/",
        ] {
            assert!(check_ref(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn messages_escape_control_characters() {
        assert_eq!(printable("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert!(printable(&"x".repeat(500)).ends_with('…'));
    }
}
