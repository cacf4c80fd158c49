//! The GitHub Action's scripts (`action/*.sh`), run as the action runs
//! them, with stand-ins for the programs they call (curl, git, cargo, gh)
//! on PATH: every step of the action that is not GitHub's own is tested
//! here, without a runner.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../action")
        .join(name)
}

/// A directory of stand-in programs, put first on PATH.
struct Stubs {
    dir: tempfile::TempDir,
}

impl Stubs {
    fn new() -> Stubs {
        Stubs {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A program `name` running the shell `body` (it may log to
    /// `$STUB_LOG`).
    fn add(&self, name: &str, body: &str) {
        let path = self.dir.path().join(name);
        std::fs::write(&path, format!("#!/usr/bin/env bash\nset -eu\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    fn run(&self, script_name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let path = format!(
            "{}:{}",
            self.dir.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        self.command(Path::new("bash"), &path, script_name, args, env)
            .output()
            .unwrap()
    }

    /// Runs the script with only the stubs, bash and `tools` (linked from
    /// this machine's PATH) on PATH: a runner that has no other program.
    fn run_with_only(
        &self,
        tools: &[&str],
        script_name: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Output {
        for tool in ["bash"].iter().chain(tools) {
            let link = self.dir.path().join(tool);
            if !link.exists() {
                std::os::unix::fs::symlink(program(tool), link).unwrap();
            }
        }
        let bash = self.dir.path().join("bash");
        let path = self.dir.path().display().to_string();
        self.command(&bash, &path, script_name, args, env)
            .output()
            .unwrap()
    }

    fn command(
        &self,
        bash: &Path,
        path: &str,
        script_name: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Command {
        let mut cmd = Command::new(bash);
        cmd.arg(script(script_name))
            .args(args)
            .env("PATH", path)
            .env("STUB_LOG", self.dir.path().join("log"));
        // What a runner (or a test run inside a workflow) would bring in.
        for var in [
            "GITHUB_SERVER_URL",
            "GITHUB_OUTPUT",
            "GITHUB_ACTION_PATH",
            "GITHUB_REPOSITORY",
            "GITHUB_API_URL",
            "GH_TOKEN",
            "GITHUB_TOKEN",
            "GH",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }
}

/// Where `name` is on this machine's PATH; for python3 the interpreter
/// itself, not a version manager's shim (which needs the PATH a test takes
/// away).
fn program(name: &str) -> PathBuf {
    if name == "python3" {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap();
        return PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn sha256(path: &Path) -> String {
    use sha2::Digest;
    let bytes = std::fs::read(path).unwrap();
    format!("{:x}", sha2::Sha256::digest(&bytes))
}

/// A release like the release workflow makes for `target`: the archive
/// (`conformance-<target>/conformance`, a stand-in printing a version)
/// and SHA256SUMS. Returns the directory holding both.
fn release(target: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let stage = dir.path().join(format!("conformance-{target}"));
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(
        stage.join("conformance"),
        "#!/bin/sh\necho 'conformance 9.9.9'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        stage.join("conformance"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let archive = format!("conformance-{target}.tar.gz");
    let status = Command::new("tar")
        .args(["-czf", &archive, &format!("conformance-{target}")])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let sum = sha256(&dir.path().join(&archive));
    std::fs::write(
        dir.path().join("SHA256SUMS"),
        format!("{sum}  {archive}\n0000  conformance-other.tar.gz\n"),
    )
    .unwrap();
    dir
}

/// curl that serves `$RELEASE_DIR` for .../releases/download/<tag>/<file>
/// and fails (as a 404 does) for anything else.
const CURL: &str = r#"echo "curl $*" >> "$STUB_LOG"
out=""; url=""
while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift 2;; -*) shift;; *) url="$1"; shift;; esac; done
file="${url##*/}"
[ -n "${RELEASE_DIR:-}" ] && [ -f "$RELEASE_DIR/$file" ] || exit 22
cp "$RELEASE_DIR/$file" "$out""#;

/// cargo that logs its arguments and "builds" (a stand-in printing
/// `built`) into its `--root`.
const CARGO_BUILDS: &str = r#"echo "cargo $*" >> "$STUB_LOG"
root=""; while [ $# -gt 0 ]; do case "$1" in --root) root="$2"; shift 2;; *) shift;; esac; done
mkdir -p "$root/bin"; printf '#!/bin/sh\necho built\n' > "$root/bin/conformance"; chmod +x "$root/bin/conformance""#;

/// git as install.sh calls it: a checkout at `$GIT_HEAD` (with uncommitted
/// changes when `$GIT_DIRTY` is set), and a remote whose tags are
/// `$GIT_TAGS` (`SHA<TAB>refs/tags/NAME` lines, as `git ls-remote` prints
/// them).
const GIT: &str = r#"echo "git $*" >> "$STUB_LOG"
case "$*" in
  *"rev-parse --is-inside-work-tree"*) echo true ;;
  *"status --porcelain"*) printf '%s' "${GIT_DIRTY:-}" ;;
  *"rev-parse HEAD"*) echo "${GIT_HEAD:-}" ;;
  *"ls-remote --tags"*) printf '%s' "${GIT_TAGS:-}" ;;
  *) exit 1 ;;
esac"#;

#[test]
fn a_release_binary_is_installed_when_its_checksum_matches() {
    let stubs = Stubs::new();
    stubs.add("curl", CURL);
    stubs.add("cargo", "echo \"cargo $*\" >> \"$STUB_LOG\"; exit 1");
    let rel = release("x86_64-unknown-linux-musl");
    let install = tempfile::tempdir().unwrap();
    let dir = install.path().join("bin");
    let env = [
        ("ACTION_REPOSITORY", "acme/conformance"),
        ("ACTION_REF", "v1.2.0"),
        ("ACTION_SHA", "0123456789abcdef0123456789abcdef01234567"),
        ("RUNNER_OS", "Linux"),
        ("RUNNER_ARCH", "X64"),
        ("INSTALL_DIR", dir.to_str().unwrap()),
        ("RELEASE_DIR", rel.path().to_str().unwrap()),
    ];
    let out = stubs.run("install.sh", &["install"], &env);
    assert!(out.status.success(), "{}", stderr(&out));
    let version = Command::new(dir.join("conformance")).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        "conformance 9.9.9\n"
    );
    let log = stubs.log();
    assert!(
        log.contains("https://github.com/acme/conformance/releases/download/v1.2.0/conformance-x86_64-unknown-linux-musl.tar.gz"),
        "{log}"
    );
    assert!(!log.contains("cargo"), "{log}");
    // A second run finds it (the cache restored it): nothing is fetched.
    std::fs::remove_file(stubs.dir.path().join("log")).unwrap();
    let out = stubs.run("install.sh", &["install"], &env);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("from the cache"), "{}", stderr(&out));
    assert_eq!(stubs.log(), "");
}

#[test]
fn a_release_binary_whose_checksum_differs_is_not_installed() {
    let stubs = Stubs::new();
    stubs.add("curl", CURL);
    stubs.add("cargo", "echo \"cargo $*\" >> \"$STUB_LOG\"; exit 1");
    let rel = release("aarch64-apple-darwin");
    // The archive changes after its checksum was written.
    let archive = rel.path().join("conformance-aarch64-apple-darwin.tar.gz");
    let mut bytes = std::fs::read(&archive).unwrap();
    bytes.push(0);
    std::fs::write(&archive, bytes).unwrap();
    let install = tempfile::tempdir().unwrap();
    let dir = install.path().join("bin");
    let out = stubs.run(
        "install.sh",
        &["install"],
        &[
            ("ACTION_REPOSITORY", "acme/conformance"),
            ("ACTION_REF", "v1.2.0"),
            ("ACTION_SHA", "0123456789abcdef0123456789abcdef01234567"),
            ("RUNNER_OS", "macOS"),
            ("RUNNER_ARCH", "ARM64"),
            ("INSTALL_DIR", dir.to_str().unwrap()),
            ("RELEASE_DIR", rel.path().to_str().unwrap()),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not installed"), "{}", stderr(&out));
    assert!(!dir.join("conformance").exists());
    // Not built from source either: a mismatch is an attack or a broken
    // release, not a missing binary.
    assert!(!stubs.log().contains("cargo"), "{}", stubs.log());
}

#[test]
fn a_ref_that_is_no_release_is_built_from_source_at_its_commit() {
    let stubs = Stubs::new();
    stubs.add("curl", CURL);
    stubs.add("cargo", CARGO_BUILDS);
    stubs.add("git", GIT);
    let install = tempfile::tempdir().unwrap();
    let dir = install.path().join("bin");
    let sha = "89abcdef0123456789abcdef0123456789abcdef";
    let out = stubs.run(
        "install.sh",
        &["install"],
        &[
            ("ACTION_REPOSITORY", "acme/conformance"),
            ("ACTION_REF", "main"),
            ("ACTION_SHA", sha),
            ("RUNNER_OS", "Linux"),
            ("RUNNER_ARCH", "ARM64"),
            ("INSTALL_DIR", dir.to_str().unwrap()),
            // A release tag, of another commit.
            (
                "GIT_TAGS",
                "0000000000000000000000000000000000000000\trefs/tags/v1.0.0\n",
            ),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let log = stubs.log();
    assert!(
        log.contains("git ls-remote --tags https://github.com/acme/conformance"),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "--git https://github.com/acme/conformance --rev {sha} flux-conformance"
        )),
        "{log}"
    );
    // No release tag points at the branch's commit: nothing is downloaded,
    // and the installer says why it builds.
    assert!(!log.contains("curl"), "{log}");
    assert!(dir.join("conformance").exists());
    assert!(
        stderr(&out).contains(&format!(
            "no release tag of acme/conformance points at {sha}"
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_commit_a_release_tag_points_at_gets_that_releases_binary() {
    let stubs = Stubs::new();
    stubs.add("curl", CURL);
    stubs.add("git", GIT);
    stubs.add("cargo", "echo \"cargo $*\" >> \"$STUB_LOG\"; exit 1");
    let rel = release("x86_64-unknown-linux-musl");
    let install = tempfile::tempdir().unwrap();
    let dir = install.path().join("bin");
    let sha = "89abcdef0123456789abcdef0123456789abcdef";
    // Annotated tags (their own object, then the commit as the `^{}` line),
    // a tag of another commit, and a tag that names no version.
    let tags = format!(
        "1111111111111111111111111111111111111111\trefs/tags/v1\n{sha}\trefs/tags/v1^{{}}\n\
         2222222222222222222222222222222222222222\trefs/tags/v1.2.0\n{sha}\trefs/tags/v1.2.0^{{}}\n\
         3333333333333333333333333333333333333333\trefs/tags/v1.1.0\n{sha}\trefs/tags/nightly\n"
    );
    let out = stubs.run(
        "install.sh",
        &["install"],
        &[
            ("ACTION_REPOSITORY", "acme/conformance"),
            ("ACTION_REF", sha),
            ("ACTION_SHA", sha),
            ("RUNNER_OS", "Linux"),
            ("RUNNER_ARCH", "X64"),
            ("INSTALL_DIR", dir.to_str().unwrap()),
            ("RELEASE_DIR", rel.path().to_str().unwrap()),
            ("GIT_TAGS", tags.as_str()),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let version = Command::new(dir.join("conformance")).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        "conformance 9.9.9\n"
    );
    let log = stubs.log();
    // The most precise version first.
    assert!(
        log.contains("https://github.com/acme/conformance/releases/download/v1.2.0/conformance-x86_64-unknown-linux-musl.tar.gz"),
        "{log}"
    );
    assert!(!log.contains("/download/v1/"), "{log}");
    assert!(!log.contains("cargo"), "{log}");
}

#[test]
fn a_local_action_is_keyed_on_its_checkout_and_built_from_it() {
    let stubs = Stubs::new();
    stubs.add("git", GIT);
    stubs.add("curl", CURL);
    stubs.add("cargo", CARGO_BUILDS);
    let checkout = tempfile::tempdir().unwrap();
    let path = checkout.path().to_str().unwrap();
    let head = "cccc000000000000000000000000000000000000";
    // `uses: ./`: GitHub leaves the action's repository and ref empty.
    let local = [
        ("ACTION_REPOSITORY", ""),
        ("ACTION_REF", ""),
        ("GITHUB_ACTION_PATH", path),
        ("GITHUB_REPOSITORY", "acme/fleet"),
        ("GIT_HEAD", head),
    ];
    let out = stubs.run("install.sh", &["resolve"], &local);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("sha={head}\n")
    );
    // Uncommitted changes: no commit to key a cache on.
    let dirty: Vec<(&str, &str)> = local
        .iter()
        .copied()
        .chain([("GIT_DIRTY", " M action.yml\n")])
        .collect();
    let out = stubs.run("install.sh", &["resolve"], &dirty);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sha=\n");
    assert!(
        stderr(&out).contains("uncommitted changes"),
        "{}",
        stderr(&out)
    );
    // No release tag of the repository at its commit: built from the
    // checkout itself.
    let install = tempfile::tempdir().unwrap();
    let dir = install.path().join("bin");
    let mut env = local.to_vec();
    env.extend([
        ("ACTION_SHA", head),
        ("RUNNER_OS", "Linux"),
        ("RUNNER_ARCH", "X64"),
        ("INSTALL_DIR", dir.to_str().unwrap()),
    ]);
    std::fs::remove_file(stubs.dir.path().join("log")).unwrap();
    let out = stubs.run("install.sh", &["install"], &env);
    assert!(out.status.success(), "{}", stderr(&out));
    let log = stubs.log();
    assert!(
        log.contains("git ls-remote --tags https://github.com/acme/fleet"),
        "{log}"
    );
    assert!(log.contains(&format!("--path {path}/conformance")), "{log}");
    assert!(!log.contains("--git"), "{log}");
    assert!(
        stderr(&out).contains("building conformance from source: the local checkout"),
        "{}",
        stderr(&out)
    );
    assert!(dir.join("conformance").exists());
    // A release tag at its commit: that release's binary.
    let rel = release("x86_64-unknown-linux-musl");
    let tags = format!("{head}\trefs/tags/v2.0.0\n");
    let dir = install.path().join("released");
    let mut env = local.to_vec();
    env.extend([
        ("ACTION_SHA", head),
        ("RUNNER_OS", "Linux"),
        ("RUNNER_ARCH", "X64"),
        ("INSTALL_DIR", dir.to_str().unwrap()),
        ("RELEASE_DIR", rel.path().to_str().unwrap()),
        ("GIT_TAGS", tags.as_str()),
    ]);
    std::fs::remove_file(stubs.dir.path().join("log")).unwrap();
    let out = stubs.run("install.sh", &["install"], &env);
    assert!(out.status.success(), "{}", stderr(&out));
    let log = stubs.log();
    assert!(
        log.contains("https://github.com/acme/fleet/releases/download/v2.0.0/conformance-x86_64-unknown-linux-musl.tar.gz"),
        "{log}"
    );
    assert!(!log.contains("cargo"), "{log}");
    let version = Command::new(dir.join("conformance")).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        "conformance 9.9.9\n"
    );
}

#[test]
fn the_cache_key_is_the_commit_the_ref_names() {
    let stubs = Stubs::new();
    // An annotated tag: its own object first, the commit as the `^{}` line.
    stubs.add(
        "git",
        r#"echo "git $*" >> "$STUB_LOG"
printf 'aaaa000000000000000000000000000000000000\trefs/tags/v1\nbbbb000000000000000000000000000000000000\trefs/tags/v1^{}\n'"#,
    );
    let out = stubs.run(
        "install.sh",
        &["resolve"],
        &[
            ("ACTION_REPOSITORY", "acme/conformance"),
            ("ACTION_REF", "v1"),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "sha=bbbb000000000000000000000000000000000000\n"
    );
    // A commit is its own key, with no lookup.
    let sha = "cccc000000000000000000000000000000000000";
    std::fs::remove_file(stubs.dir.path().join("log")).unwrap();
    let out = stubs.run(
        "install.sh",
        &["resolve"],
        &[
            ("ACTION_REPOSITORY", "acme/conformance"),
            ("ACTION_REF", sha),
        ],
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("sha={sha}\n"));
    assert_eq!(stubs.log(), "");
    // A ref the repository does not have is an error that says so.
    stubs.add("git", "exit 0");
    let out = stubs.run(
        "install.sh",
        &["resolve"],
        &[
            ("ACTION_REPOSITORY", "acme/conformance"),
            ("ACTION_REF", "v9"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no tag or branch v9"),
        "{}",
        stderr(&out)
    );
}

/// gh that lists `$COMMENTS` (a JSON array) for GET, and records POST and
/// PATCH with the body they send.
const GH: &str = r#"echo "gh $*" >> "$STUB_LOG"
method=GET; body=""; jq_filter=""; path=""
while [ $# -gt 0 ]; do case "$1" in
  api) shift;; --method) method="$2"; shift 2;; -F) body="${2#body=@}"; shift 2;;
  --jq) jq_filter="$2"; shift 2;; --paginate) shift;; *) path="$1"; shift;; esac; done
if [ "$method" = GET ]; then echo "${COMMENTS:-[]}" | jq -r "$jq_filter"; exit 0; fi
echo "$method $path" >> "$STUB_LOG"
cp "$body" "$STUB_BODY""#;

fn comment(stubs: &Stubs, body: &str, comments: &str) -> (Output, String) {
    let file = stubs.dir.path().join("report.md");
    std::fs::write(&file, body).unwrap();
    let posted = stubs.dir.path().join("posted.md");
    let out = stubs.run(
        "comment.sh",
        &[file.to_str().unwrap()],
        &[
            ("GITHUB_REPOSITORY", "acme/fleet"),
            ("PR", "42"),
            ("RUN_URL", "https://github.com/acme/fleet/actions/runs/7"),
            ("COMMENTS", comments),
            ("STUB_BODY", posted.to_str().unwrap()),
        ],
    );
    let posted = std::fs::read_to_string(&posted).unwrap_or_default();
    (out, posted)
}

#[test]
fn the_pull_request_comment_is_posted_once_then_updated_in_place() {
    let stubs = Stubs::new();
    stubs.add("gh", GH);
    let (out, posted) = comment(&stubs, "### ✅ conformance\n", "[]");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stubs
            .log()
            .contains("POST repos/acme/fleet/issues/42/comments"),
        "{}",
        stubs.log()
    );
    assert_eq!(posted, "<!-- conformance -->\n### ✅ conformance\n");
    // The next push finds the comment by its first line and edits it.
    let comments =
        r#"[{"id": 5, "body": "someone else"}, {"id": 9, "body": "<!-- conformance -->\nold"}]"#;
    std::fs::remove_file(stubs.dir.path().join("log")).unwrap();
    let (out, posted) = comment(&stubs, "### ❌ conformance\n", comments);
    assert!(out.status.success(), "{}", stderr(&out));
    let log = stubs.log();
    assert!(
        log.contains("PATCH repos/acme/fleet/issues/comments/9"),
        "{log}"
    );
    assert!(!log.contains("POST"), "{log}");
    assert!(posted.contains("❌"));
}

#[test]
fn a_comment_over_githubs_limit_is_cut_at_a_line_with_a_link_to_the_report() {
    let stubs = Stubs::new();
    stubs.add("gh", GH);
    // 3,000 lines of 40 characters, some of them wide.
    let line = "- **crd-unavailable** `prod/app`: é ✓ x";
    let body: String = (0..3000).map(|i| format!("{line} {i:05}\n")).collect();
    assert!(body.chars().count() > 65_536);
    let (out, posted) = comment(&stubs, &body, "[]");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        posted.chars().count() <= 65_536,
        "{}",
        posted.chars().count()
    );
    assert!(posted.starts_with("<!-- conformance -->\n"));
    assert!(
        posted
            .trim_end()
            .ends_with("https://github.com/acme/fleet/actions/runs/7."),
        "{}",
        &posted[posted.len() - 300..]
    );
    // Whole lines only, in order.
    let kept: Vec<&str> = posted
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("- "))
        .collect();
    assert!(kept.len() > 1000);
    for (i, l) in kept.iter().enumerate() {
        assert_eq!(*l, format!("{line} {i:05}"));
    }
}

#[test]
fn the_verdict_follows_fail_on() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    std::fs::write(
        &report,
        r#"{"version":1,"summary":{"errors":0,"warnings":3,"consequences":0,"waived":1}}"#,
    )
    .unwrap();
    let stubs = Stubs::new();
    let run = |fail_on: &str| stubs.run("verdict.sh", &[report.to_str().unwrap(), fail_on], &[]);
    for (fail_on, code) in [("error", 0), ("warning", 1), ("never", 0)] {
        let out = run(fail_on);
        assert_eq!(out.status.code(), Some(code), "{fail_on}: {}", stderr(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "errors=0\nwarnings=3\n"
        );
    }
    std::fs::write(&report, r#"{"summary":{"errors":2,"warnings":0}}"#).unwrap();
    assert_eq!(run("error").status.code(), Some(1));
    assert_eq!(run("never").status.code(), Some(0));
    // A value it does not know, and a report that is not one, are errors
    // of the run (2), not findings.
    assert_eq!(run("errors").status.code(), Some(2));
    std::fs::write(&report, "not json").unwrap();
    let out = run("error");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did the check run"),
        "{}",
        stderr(&out)
    );
}

/// The release workflow's packaging (`scripts/package.sh`,
/// `scripts/checksums.sh`) makes exactly what the installer takes.
#[test]
fn what_the_release_packages_the_action_installs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let work = tempfile::tempdir().unwrap();
    let binary = work.path().join("conformance");
    std::fs::write(&binary, "#!/bin/sh\necho 'conformance 1.0.0'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dist = work.path().join("dist");
    for target in ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"] {
        let out = Command::new("bash")
            .arg(root.join("scripts/package.sh"))
            .args([target, binary.to_str().unwrap(), dist.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = Command::new("bash")
        .arg(root.join("scripts/checksums.sh"))
        .arg(&dist)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 2, "{sums}");
    let stubs = Stubs::new();
    stubs.add("curl", CURL);
    let dir = work.path().join("bin");
    let out = stubs.run(
        "install.sh",
        &["install"],
        &[
            ("ACTION_REPOSITORY", "acme/conformance"),
            ("ACTION_REF", "v1"),
            ("ACTION_SHA", "0123456789abcdef0123456789abcdef01234567"),
            ("RUNNER_OS", "Linux"),
            ("RUNNER_ARCH", "ARM64"),
            ("INSTALL_DIR", dir.to_str().unwrap()),
            ("RELEASE_DIR", dist.to_str().unwrap()),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let version = Command::new(dir.join("conformance")).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        "conformance 1.0.0\n"
    );
}

#[test]
fn the_check_passes_each_sources_line_as_a_source_flag() {
    let stubs = Stubs::new();
    stubs.add(
        "conformance",
        r#"printf '%s\n' "$@" >> "$STUB_LOG"; exit 1"#,
    );
    let out_dir = tempfile::tempdir().unwrap();
    let outputs = out_dir.path().join("github-output");
    let out = stubs.run(
        "check.sh",
        &[out_dir.path().join("reports").to_str().unwrap()],
        &[
            ("REPO_PATH", "fleet"),
            ("FETCH_REMOTE", "true"),
            (
                "SOURCES",
                "  https://github.com/example/infra=infra  \n\n# apps next\nGitRepository/flux-system/apps=../apps dir\n",
            ),
            ("GITHUB_OUTPUT", outputs.to_str().unwrap()),
        ],
    );
    // The check's own status (1: findings) is the script's.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let log = stubs.log();
    assert!(
        log.contains("--source\nhttps://github.com/example/infra=infra\n--source\nGitRepository/flux-system/apps=../apps dir\n"),
        "{log}"
    );
    assert!(
        log.contains("--repo\nfleet\n") && log.contains("--fetch-remote\n"),
        "{log}"
    );
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert!(
        written.contains("json=") && written.contains("sarif="),
        "{written}"
    );
    // A line that is not REF=DIR stops before the check runs.
    let stubs = Stubs::new();
    stubs.add("conformance", r#"echo ran >> "$STUB_LOG""#);
    let out = stubs.run(
        "check.sh",
        &[out_dir.path().join("r2").to_str().unwrap()],
        &[("SOURCES", "just-a-path")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected REF=DIR"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stubs.log(), "");
}

#[test]
fn the_baseline_input_is_passed_to_the_check() {
    let stubs = Stubs::new();
    stubs.add("conformance", r#"printf '%s\n' "$@" >> "$STUB_LOG""#);
    let out_dir = tempfile::tempdir().unwrap();
    let reports = out_dir.path().join("reports");
    let out = stubs.run(
        "check.sh",
        &[reports.to_str().unwrap()],
        &[("BASELINE", "fleet/conformance-baseline.yaml")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stubs
            .log()
            .contains("--baseline\nfleet/conformance-baseline.yaml\n"),
        "{}",
        stubs.log()
    );
    // Empty, the input's default: every finding counts.
    std::fs::remove_file(stubs.dir.path().join("log")).unwrap();
    let out = stubs.run(
        "check.sh",
        &[reports.to_str().unwrap()],
        &[("BASELINE", "")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stubs.log().contains("--baseline"), "{}", stubs.log());
}

#[test]
fn the_verdict_reads_the_report_with_python_where_jq_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    std::fs::write(&report, r#"{"summary":{"errors":2,"warnings":1}}"#).unwrap();
    let report = report.to_str().unwrap();
    let stubs = Stubs::new();
    let out = stubs.run_with_only(&["python3"], "verdict.sh", &[report, "warning"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "errors=2\nwarnings=1\n"
    );
    let out = stubs.run_with_only(&["python3"], "verdict.sh", &[report, "never"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Neither: the run fails (2, not a verdict) naming what is missing.
    let bare = Stubs::new();
    let out = bare.run_with_only(&[], "verdict.sh", &[report, "error"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("neither jq nor python3 is on PATH"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("command not found"));
    assert!(out.stdout.is_empty());
}

/// curl as GitHub's REST API: a GET writes `$COMMENTS` to its `-o`; a POST
/// or PATCH is logged with its URL, and its `--data-binary` file copied to
/// `$STUB_BODY`; `auth ok` is logged when a header file holds the bearer
/// token `$EXPECT_TOKEN`.
const CURL_API: &str = r#"echo "curl $*" >> "$STUB_LOG"
method=GET; out=""; data=""; url=""
while [ $# -gt 0 ]; do case "$1" in
  -X) method="$2"; shift 2;; -o) out="$2"; shift 2;; --data-binary) data="${2#@}"; shift 2;;
  -H) case "$2" in @*) if grep -qx "Authorization: Bearer $EXPECT_TOKEN" "${2#@}"; then echo "auth ok" >> "$STUB_LOG"; fi;; esac; shift 2;;
  -*) shift;; *) url="$1"; shift;; esac; done
if [ "$method" = GET ]; then echo "${COMMENTS:-[]}" > "$out"; exit 0; fi
echo "$method $url" >> "$STUB_LOG"
cp "$data" "$STUB_BODY""#;

/// comment.sh where gh is missing (GH names no program), with `only` as
/// the programs on PATH when given. Returns its output and the request
/// body it sent.
fn comment_without_gh(
    stubs: &Stubs,
    comments: &str,
    only: Option<&[&str]>,
) -> (Output, Option<serde_json::Value>) {
    let file = stubs.dir.path().join("report.md");
    std::fs::write(&file, "### ✅ conformance\n").unwrap();
    let posted = stubs.dir.path().join("posted.json");
    let _ = std::fs::remove_file(&posted);
    let _ = std::fs::remove_file(stubs.dir.path().join("log"));
    let env = [
        ("GH", "no-such-gh"),
        ("GITHUB_REPOSITORY", "acme/fleet"),
        ("PR", "42"),
        ("GH_TOKEN", "s3cret"),
        ("EXPECT_TOKEN", "s3cret"),
        ("GITHUB_API_URL", "http://api.test"),
        ("COMMENTS", comments),
        ("STUB_BODY", posted.to_str().unwrap()),
    ];
    let args = [file.to_str().unwrap()];
    let out = match only {
        Some(tools) => stubs.run_with_only(tools, "comment.sh", &args, &env),
        None => stubs.run("comment.sh", &args, &env),
    };
    let body = std::fs::read_to_string(&posted)
        .ok()
        .map(|b| serde_json::from_str(&b).unwrap());
    (out, body)
}

#[test]
fn without_gh_the_comment_goes_through_the_rest_api_with_curl() {
    let stubs = Stubs::new();
    stubs.add("curl", CURL_API);
    let (out, body) = comment_without_gh(&stubs, "[]", None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no-such-gh is not on PATH"),
        "{}",
        stderr(&out)
    );
    let log = stubs.log();
    assert!(
        log.contains("POST http://api.test/repos/acme/fleet/issues/42/comments"),
        "{log}"
    );
    assert!(log.contains("auth ok"), "{log}");
    // The token is read from a header file, never put on a command line.
    assert!(!log.contains("s3cret"), "{log}");
    assert_eq!(
        body.unwrap()["body"],
        "<!-- conformance -->\n### ✅ conformance\n"
    );
    // The next push finds the comment by its first line and edits it.
    let comments = r#"[{"id": 5, "body": "someone else"}, {"id": 7, "body": null}, {"id": 9, "body": "<!-- conformance -->\nold"}]"#;
    let (out, body) = comment_without_gh(&stubs, comments, None);
    assert!(out.status.success(), "{}", stderr(&out));
    let log = stubs.log();
    assert!(
        log.contains("PATCH http://api.test/repos/acme/fleet/issues/comments/9"),
        "{log}"
    );
    assert!(!log.contains("POST"), "{log}");
    assert!(body.is_some());
    // Without jq, python3 reads and writes the JSON.
    let tools = ["mktemp", "cat", "wc", "awk", "cp", "rm", "grep", "python3"];
    let (out, body) = comment_without_gh(&stubs, comments, Some(tools.as_slice()));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("python3 reads the JSON"),
        "{}",
        stderr(&out)
    );
    let log = stubs.log();
    assert!(
        log.contains("PATCH http://api.test/repos/acme/fleet/issues/comments/9"),
        "{log}"
    );
    assert_eq!(
        body.unwrap()["body"],
        "<!-- conformance -->\n### ✅ conformance\n"
    );
}

#[test]
fn without_gh_curl_or_a_json_tool_the_comment_names_what_is_missing() {
    let stubs = Stubs::new();
    let file = stubs.dir.path().join("report.md");
    std::fs::write(&file, "report\n").unwrap();
    let out = stubs.run_with_only(
        &[],
        "comment.sh",
        &[file.to_str().unwrap()],
        &[
            ("GH", "no-such-gh"),
            ("GITHUB_REPOSITORY", "acme/fleet"),
            ("PR", "42"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    for missing in ["curl", "jq or python3", "a token (GH_TOKEN)"] {
        assert!(err.contains(missing), "{missing}: {err}");
    }
    assert!(!err.contains("command not found"), "{err}");
    // A warning on the run's page, not only in the log.
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("::warning "),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
