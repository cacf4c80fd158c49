//! Input a hostile or careless repository (or command line) gives: the
//! configuration is read only from inside the repository and every path
//! in it stays there; a report never replaces what is not a regular file.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{ks, sync, write};

/// A repository with one cluster and one tier.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    sync(dir.path(), "clusters/prod");
    write(
        dir.path(),
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    write(dir.path(), "apps/cm.yaml", &crate::support::configmap("cm"));
    dir
}

fn check(repo: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("check")
        .arg("--repo")
        .arg(repo)
        .args(args)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[cfg(unix)]
#[test]
fn a_conformance_yaml_that_leads_outside_is_refused_and_nothing_of_it_is_quoted() {
    let repo = repository();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("credentials.yaml");
    std::fs::write(&secret, "aws_secret_access_key: hunter2-SECRET\n").unwrap();
    std::os::unix::fs::symlink(&secret, repo.path().join("conformance.yaml")).unwrap();
    let out = check(repo.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("symlink that leads outside the repository"),
        "{}",
        text(&out)
    );
    assert!(
        !text(&out).contains("hunter2"),
        "a value from outside leaked: {}",
        text(&out)
    );
    assert!(
        !text(&out).contains("aws_secret"),
        "a key from outside leaked: {}",
        text(&out)
    );
    // --config reads it on purpose.
    let out = check(repo.path(), &["--config", secret.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("aws_secret_access_key"),
        "{}",
        text(&out)
    );
    // A symlink to a file inside the repository is read.
    std::fs::remove_file(repo.path().join("conformance.yaml")).unwrap();
    write(repo.path(), "config/conformance.yaml", "renderer: natve\n");
    std::os::unix::fs::symlink(
        "config/conformance.yaml",
        repo.path().join("conformance.yaml"),
    )
    .unwrap();
    let out = check(repo.path(), &[]);
    assert!(text(&out).contains("natve"), "{}", text(&out));
}

#[cfg(unix)]
#[test]
fn a_conformance_yaml_that_is_not_a_regular_file_is_refused() {
    let repo = repository();
    let path = repo.path().join("conformance.yaml");
    std::fs::create_dir(&path).unwrap();
    let out = check(repo.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("is a directory, not a regular file"),
        "{}",
        text(&out)
    );
    std::fs::remove_dir(&path).unwrap();
    let made = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(made.success());
    // Never opened: a FIFO with no writer would block the run.
    let out = check(repo.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("is a FIFO, not a regular file"),
        "{}",
        text(&out)
    );
}

#[cfg(unix)]
#[test]
fn paths_in_conformance_yaml_stay_inside_and_exist() {
    let repo = repository();
    write(repo.path(), "versions.env", "K3S_VERSION=v1.33.1+k3s1\n");
    std::os::unix::fs::symlink("versions.env", repo.path().join("linked.env")).unwrap();
    let cases = [
        (
            "\
kubernetes:
  file: ../outside.env
  variable: K
",
            "climbs out of the repository",
        ),
        (
            "\
kubernetes:
  file: /etc/os-release
  variable: K
",
            "is absolute",
        ),
        (
            "\
kubernetes:
  file: missing.env
  variable: K
",
            "does not exist in the repository",
        ),
        (
            "\
kubernetes:
  file: linked.env
  variable: K
",
            "is a symlink",
        ),
        (
            "\
kubernetes:
  file: apps
  variable: K
",
            "is not a regular file",
        ),
        (
            "\
sources:
  - kind: OCIRepository
    name: x
    path: ../x
",
            "sources: path `../x` climbs out",
        ),
        (
            "\
sources:
  - kind: OCIRepository
    name: x
    path: nowhere
",
            "sources: path `nowhere` does not exist",
        ),
        (
            "\
waivers:
  - rule: graph-parity
    reason: x
    expires: 99999999-01-01
",
            "is not a YYYY-MM-DD date",
        ),
    ];
    for (config, said) in cases {
        write(repo.path(), "conformance.yaml", config);
        let out = check(repo.path(), &[]);
        assert_eq!(out.status.code(), Some(2), "{config}\n{}", text(&out));
        assert!(
            text(&out).contains(said),
            "{config}: says `{said}`\n{}",
            text(&out)
        );
        assert!(
            text(&out).contains("conformance.yaml:"),
            "with its line: {}",
            text(&out)
        );
    }
    write(
        repo.path(),
        "conformance.yaml",
        "\
kubernetes:
  file: versions.env
  variable: K3S_VERSION
",
    );
    let out = check(repo.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn an_entry_is_reported_as_written() {
    let repo = repository();
    let out = check(repo.path(), &["--entry", "../../x"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--entry ../../x:"), "{}", text(&out));
}

#[cfg(unix)]
#[test]
fn a_report_keeps_a_file_s_mode_and_never_replaces_what_is_not_a_regular_file() {
    use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
    let repo = repository();
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;

    // An existing file keeps its mode; a new one is not private.
    let kept = dir.path().join("kept.json");
    std::fs::write(&kept, "old").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
    let made = dir.path().join("made.json");
    let out = check(
        repo.path(),
        &[
            "--output",
            &format!("json={}", kept.display()),
            "--output",
            &format!("json={}", made.display()),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(mode(&kept), 0o640);
    assert!(
        std::fs::read_to_string(&kept)
            .unwrap()
            .contains("\"version\"")
    );
    assert_ne!(mode(&made), 0o600, "a new report is not made private");

    // A symlink is followed and stays a link.
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&kept, &link).unwrap();
    let out = check(
        repo.path(),
        &["--output", &format!("sarif={}", link.display())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&kept).unwrap().contains("sarif"));
    assert_eq!(mode(&kept), 0o640);

    // A FIFO is written to, not replaced.
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = check(
        repo.path(),
        &["--output", &format!("json={}", fifo.display())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(reader.join().unwrap().contains("\"version\""));
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // A character device stays one.
    let out = check(repo.path(), &["--output", "json=/dev/null"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        std::fs::symlink_metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );

    // A directory or a link to nothing: exit 2 before anything is printed.
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    for (target, said) in [
        (dir.path().to_path_buf(), "it is a directory"),
        (dangling.clone(), "a symlink to nothing"),
    ] {
        let out = check(
            repo.path(),
            &["--output", &format!("json={}", target.display())],
        );
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(out.stdout.is_empty(), "nothing printed before the failure");
        assert!(text(&out).contains(said), "{}", text(&out));
    }
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// Text a repository controls (a `dependsOn` name, a file name) holding an
/// escape sequence, a carriage return, a NUL-adjacent control and a
/// bidirectional override.
const HOSTILE: &str = "evil\u{1b}[31mred\u{7}\r\u{202e}txt";

#[test]
fn every_format_stays_valid_and_safe_with_hostile_text() {
    let repo = repository();
    write(
        repo.path(),
        "clusters/prod/apps.yaml",
        &ks(
            "apps",
            "flux-system",
            "./apps",
            &format!(
                "  dependsOn:
    - name: {}
",
                serde_json::to_string(HOSTILE).unwrap()
            ),
        ),
    );
    let raw = |s: &str| {
        s.chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}')
    };
    for format in ["human", "json", "junit", "sarif", "github", "markdown"] {
        let out = check(repo.path(), &["--format", format]);
        assert_eq!(out.status.code(), Some(1), "{format}: {}", text(&out));
        let stdout = String::from_utf8(out.stdout.clone()).unwrap();
        match format {
            "json" | "sarif" => {
                let doc: serde_json::Value = serde_json::from_str(&stdout)
                    .unwrap_or_else(|e| panic!("{format} is not JSON: {e}"));
                assert!(
                    doc.to_string().contains("evil"),
                    "{format}: the name is reported"
                );
            }
            "junit" => {
                roxmltree::Document::parse(&stdout)
                    .unwrap_or_else(|e| panic!("JUnit is not well-formed XML: {e}\n{stdout}"));
            }
            _ => {}
        }
        if format != "json" && format != "sarif" {
            assert!(
                !raw(&stdout),
                "{format} passes raw control characters:\n{stdout:?}"
            );
            assert!(
                stdout.contains("evil\\x1b[31mred"),
                "{format} shows them escaped:\n{stdout}"
            );
        }
        assert!(
            !raw(&String::from_utf8_lossy(&out.stderr)),
            "{format}: stderr"
        );
    }
}
