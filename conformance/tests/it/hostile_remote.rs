//! A repository is hostile input: under `--fetch-remote` no address, ref
//! or path it writes, and no configuration or environment around git, may
//! make this tool run a program. Each attack points git at `pwn`, a
//! program on `PATH` that creates a marker file; the marker must stay
//! absent, and the run must say why it refused.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{ks, sync, write};

/// A sandbox: a `pwn` program on PATH, its marker, a cache holding the
/// served repositories, and the checked repository.
struct Attack {
    bin: tempfile::TempDir,
    marker: PathBuf,
    cache: tempfile::TempDir,
    served: PathBuf,
    repo: tempfile::TempDir,
}

impl Attack {
    fn new() -> Attack {
        let bin = tempfile::tempdir().unwrap();
        let marker = bin.path().join("PWNED");
        let pwn = bin.path().join("pwn");
        std::fs::write(
            &pwn,
            format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&pwn, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let cache = tempfile::tempdir().unwrap();
        let served = cache.path().join("served");
        std::fs::create_dir_all(&served).unwrap();
        Attack {
            bin,
            marker,
            cache,
            served,
            repo: tempfile::tempdir().unwrap(),
        }
    }

    /// A served repository `name` with `deploy/` (a ConfigMap) at tag v1.
    fn serve(&self, name: &str, extra: &[(&str, &str)]) -> PathBuf {
        let dir = self.served.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        git(&dir, &["init", "-q"]);
        write(
            &dir,
            "deploy/kustomization.yaml",
            "\
resources:
  - cm.yaml
",
        );
        write(&dir, "deploy/cm.yaml", &crate::support::configmap("remote"));
        for (file, text) in extra {
            write(&dir, file, text);
        }
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-qm", "v1"]);
        git(&dir, &["tag", "v1"]);
        dir
    }

    /// The checked repository: one tier whose kustomization names
    /// `resource`, and `conformance.yaml` when given.
    fn repository(&self, resource: &str, config: Option<&str>) {
        let root = self.repo.path();
        sync(root, "clusters/prod");
        write(
            root,
            "clusters/prod/apps.yaml",
            &ks("apps", "flux-system", "./apps", ""),
        );
        write(
            root,
            "apps/kustomization.yaml",
            &format!(
                "\
resources:
  - {}
",
                serde_json::to_string(resource).unwrap()
            ),
        );
        if let Some(config) = config {
            write(root, "conformance.yaml", config);
        }
    }

    /// `conformance check --fetch-remote --format json` with `pwn` on PATH
    /// and `env` added; the whole output.
    fn check(&self, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
        let path = format!(
            "{}:{}",
            self.bin.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_conformance"));
        cmd.args(["check", "--fetch-remote", "--format", "json", "--repo"])
            .arg(self.repo.path())
            .args(args)
            .env("PATH", path)
            .env("CONFORMANCE_CACHE_DIR", self.cache.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    }

    fn assert_nothing_ran(&self, what: &str, output: &str) {
        assert!(
            !self.marker.exists(),
            "{what}: a command ran on the machine\n{output}"
        );
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What the attacks below aim at the same place: kustomize's `?ref=`,
/// the address's host and path.
fn attacks(served: &Path) -> Vec<(&'static str, String, &'static str)> {
    let base = format!("file://{}/base//deploy", served.display());
    vec![
        (
            "an option-looking ref",
            format!("{base}?ref=--upload-pack=pwn"),
            "not a git ref",
        ),
        (
            "a ref that is -c with a config",
            format!("{base}?ref=-c+core.sshCommand=pwn"),
            "not a git ref",
        ),
        (
            "a ref that is --config",
            format!("{base}?ref=--config=core.sshCommand=pwn"),
            "not a git ref",
        ),
        (
            "an option-looking ssh host",
            "ssh://-oProxyCommand=pwn/org/repo//deploy".to_string(),
            "the host must start",
        ),
        (
            "an option-looking scp host",
            "git@-oProxyCommand=pwn:org/repo.git//deploy".to_string(),
            "the host must start",
        ),
        (
            "a file:// repository outside the cache",
            "file:///etc//deploy?ref=v1".to_string(),
            "inside the remote cache",
        ),
        (
            "the ext transport",
            "ext::pwn".to_string(),
            "is neither a file nor a directory",
        ),
        (
            "the ext transport behind git::",
            "git::ext::pwn//deploy".to_string(),
            "neither a URL nor a git address",
        ),
    ]
}

#[test]
fn no_address_or_ref_a_repository_writes_makes_git_run_a_program() {
    for i in 0..attacks(Path::new("/")).len() {
        let attack = Attack::new();
        attack.serve("base", &[]);
        let (what, resource, said) = attacks(&attack.served).swap_remove(i);
        attack.repository(&resource, None);
        let (_, output) = attack.check(&[], &[]);
        attack.assert_nothing_ran(what, &output);
        assert!(output.contains(said), "{what}: says `{said}`\n{output}");
    }
}

#[test]
fn an_option_looking_path_reaches_git_only_as_an_operand() {
    let attack = Attack::new();
    // A closed port: git tries the address as given and fails.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    attack.repository(
        &format!("http://127.0.0.1:{port}/--upload-pack=pwn/repo.git//deploy"),
        None,
    );
    let (_, output) = attack.check(&[], &[]);
    attack.assert_nothing_ran("an option-looking path", &output);
    assert!(
        output.contains("Connection refused") || output.contains("Failed to connect"),
        "git tried the address as given\n{output}"
    );
}

#[test]
fn a_served_repository_cannot_reach_ext_through_its_submodules() {
    let attack = Attack::new();
    attack.serve(
        "base",
        &[(
            ".gitmodules",
            "[submodule \"x\"]\n\tpath = x\n\turl = ext::pwn\n",
        )],
    );
    // A gitlink for `x`, so `submodule update --init` tries it.
    let dir = attack.served.join("base");
    git(
        &dir,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            "160000,0123456789abcdef0123456789abcdef01234567,x",
        ],
    );
    git(&dir, &["commit", "-qm", "submodule"]);
    git(&dir, &["tag", "v2"]);
    attack.repository(
        &format!("file://{}/base//deploy?ref=v2", attack.served.display()),
        None,
    );
    let (_, output) = attack.check(&[], &[]);
    attack.assert_nothing_ran("a submodule on ext::", &output);
}

#[test]
fn git_configuration_and_environment_cannot_choose_a_program() {
    let attack = Attack::new();
    attack.serve("base", &[]);
    // The caller's own git configuration and environment point every
    // configurable program at pwn: hooks, fsmonitor, ssh.
    let home = tempfile::tempdir().unwrap();
    let hooks = home.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in ["post-checkout", "post-merge", "reference-transaction"] {
        let file = hooks.join(hook);
        std::fs::write(&file, "#!/bin/sh\nexec pwn\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    write(
        home.path(),
        ".gitconfig",
        &format!(
            "[core]\n\thooksPath = {}\n\tfsmonitor = pwn\n\tsshCommand = pwn\n[init]\n\ttemplateDir = {}\n",
            hooks.display(),
            home.path().join("template").display()
        ),
    );
    write(
        home.path(),
        "template/hooks/post-checkout",
        "#!/bin/sh\nexec pwn\n",
    );
    let home_path = home.path().display().to_string();
    let env = [
        ("HOME", home_path.as_str()),
        ("GIT_SSH_COMMAND", "pwn"),
        ("GIT_SSH", "pwn"),
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "core.sshCommand"),
        ("GIT_CONFIG_VALUE_0", "pwn"),
        ("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='pwn'"),
        ("GIT_EXTERNAL_DIFF", "pwn"),
    ];
    // A good repository is still fetched, with no hook run.
    attack.repository(
        &format!("file://{}/base//deploy?ref=v1", attack.served.display()),
        None,
    );
    let (_, output) = attack.check(&[], &env);
    attack.assert_nothing_ran("hooks and fsmonitor from the configuration", &output);
    assert!(
        output.contains("its content was checked"),
        "fetched\n{output}"
    );
    // An ssh address runs ssh itself, never the configured command.
    attack.repository("ssh://git@127.0.0.1:1/org/repo.git//deploy?ref=v1", None);
    let (_, output) = attack.check(&[], &env);
    attack.assert_nothing_ran("core.sshCommand and GIT_SSH_COMMAND", &output);
}

#[test]
fn an_external_kustomize_gets_only_what_passes_and_the_same_limits() {
    let has = |p: &str| {
        Command::new(p)
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("kustomize") && !has("kubectl") {
        eprintln!("skipped: neither kustomize nor kubectl is installed");
        return;
    }
    for i in 0..attacks(Path::new("/")).len() {
        let attack = Attack::new();
        attack.serve("base", &[]);
        let (what, resource, said) = attacks(&attack.served).swap_remove(i);
        attack.repository(&resource, Some("renderer: kustomize\n"));
        let (_, output) = attack.check(&[], &[]);
        attack.assert_nothing_ran(what, &output);
        // The ext:: forms are not git references for us; kustomize gets
        // them with no transport that could run anything.
        if !what.contains("ext") {
            assert!(output.contains(said), "{what}: says `{said}`\n{output}");
        }
    }
}

#[test]
fn a_base_revision_is_never_an_option() {
    let attack = Attack::new();
    attack.repository("cm.yaml", None);
    write(
        attack.repo.path(),
        "apps/cm.yaml",
        &crate::support::configmap("x"),
    );
    git(attack.repo.path(), &["init", "-q"]);
    git(attack.repo.path(), &["add", "-A"]);
    git(attack.repo.path(), &["commit", "-qm", "x"]);
    let written = attack.bin.path().join("archive.tar");
    let output_option = format!("--output={}", written.display());
    for rev in [output_option.as_str(), "--remote=ext::pwn", "-h"] {
        let (code, output) = attack.check(&[&format!("--base={rev}")], &[]);
        attack.assert_nothing_ran(rev, &output);
        assert!(!written.exists(), "{rev}: git archive wrote a file");
        assert_eq!(code, Some(2), "{rev}\n{output}");
        assert!(
            output.contains("must not be empty or start with '-'"),
            "{output}"
        );
    }
}
