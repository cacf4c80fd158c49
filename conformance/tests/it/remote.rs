//! Remote bases fetched with `--fetch-remote`: served from a local HTTP
//! server and a local git repository (no network), built into the tier,
//! cached by content, and honest about what could not be fetched.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use conformance::discover::{Declared, discover_with};
use conformance::model::{Model, Tier, TierState};
use conformance::remote::{Cache, Fetcher};
use conformance::render::native::Native;
use conformance::repo::RepoIndex;

use crate::support::{ks, sync, write};

/// A tiny HTTP/1.1 server on 127.0.0.1: path → (status, body), counting
/// requests; 404 for anything else.
struct Server {
    port: u16,
    routes: Arc<Mutex<BTreeMap<String, (u16, String)>>>,
    hits: Arc<AtomicUsize>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let routes: Arc<Mutex<BTreeMap<String, (u16, String)>>> = Arc::default();
        let hits = Arc::new(AtomicUsize::new(0));
        let (r, h) = (routes.clone(), hits.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                h.fetch_add(1, Ordering::SeqCst);
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut request = String::new();
                let _ = reader.read_line(&mut request);
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                        break;
                    }
                }
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, body) = r
                    .lock()
                    .expect("routes")
                    .get(&path)
                    .cloned()
                    .unwrap_or((404, "not found".into()));
                let _ = write!(
                    stream,
                    "\
HTTP/1.1 {status} X\r
Content-Length: {}\r
Connection: close\r
\r
{body}",
                    body.len()
                );
            }
        });
        Server { port, routes, hits }
    }

    fn serve(&self, path: &str, status: u16, body: &str) {
        self.routes
            .lock()
            .expect("routes")
            .insert(path.to_string(), (status, body.to_string()));
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A git repository with a base kustomization at `deploy/`, tagged `v1`,
/// then changed on `main` (so the ref matters). Returns its commit at v1.
fn base_repo(dir: &Path) -> String {
    std::fs::create_dir_all(dir).expect("mkdir");
    git(dir, &["init", "-q"]);
    write(
        dir,
        "deploy/kustomization.yaml",
        "\
resources:
  - deployment.yaml
  - ../common
",
    );
    write(dir, "deploy/deployment.yaml", &deployment("web-v1"));
    write(
        dir,
        "common/kustomization.yaml",
        "\
resources:
  - sa.yaml
",
    );
    write(
        dir,
        "common/sa.yaml",
        "\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: shared
  namespace: default
",
    );
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "v1"]);
    git(dir, &["tag", "v1"]);
    let commit = git(dir, &["rev-parse", "HEAD"]);
    write(dir, "deploy/deployment.yaml", &deployment("web-v2"));
    git(dir, &["commit", "-qam", "v2"]);
    commit
}

/// Where a test serves its git repositories: `file://` addresses are only
/// fetched inside the cache directory (a repository cannot choose it).
fn served(cache: &tempfile::TempDir) -> tempfile::TempDir {
    tempfile::tempdir_in(cache.path()).unwrap()
}

fn deployment(name: &str) -> String {
    format!(
        "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: default
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: nginx:1.27
"
    )
}

/// A cluster whose tier `apps` builds `apps/` with these resources.
fn repo_with(root: &Path, resources: &[&str]) {
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/apps.yaml",
        &ks("apps", "flux-system", "./apps", ""),
    );
    let list: String = resources.iter().map(|r| format!("  - {r}\n")).collect();
    write(
        root,
        "apps/kustomization.yaml",
        &format!("resources:\n{list}"),
    );
    write(root, "apps/local.yaml", &crate::support::configmap("local"));
}

fn discover(root: &Path, cache: &Path, fetch: bool) -> Model {
    let index = RepoIndex::load(root).expect("index");
    let declared = Declared {
        remote: fetch.then(|| Arc::new(Fetcher::new(Cache::new(cache.to_path_buf())))),
        ..Declared::default()
    };
    discover_with(&index, &Native, &declared)
}

fn apps(model: &Model) -> &Tier {
    model.clusters[0]
        .tiers
        .values()
        .find(|t| t.id.name == "apps")
        .expect("tier apps")
}

fn names(tier: &Tier) -> Vec<String> {
    tier.objects().iter().map(|o| o.id.name.clone()).collect()
}

const CRD_FILE: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
";

#[test]
fn an_http_file_is_fetched_built_and_placed_where_it_is_named() {
    let server = Server::start();
    server.serve("/crds/widgets.yaml", 200, CRD_FILE);
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let url = server.url("/crds/widgets.yaml");
    repo_with(repo.path(), &[&url, "local.yaml"]);

    let offline = discover(repo.path(), cache.path(), false);
    let tier = apps(&offline);
    assert!(
        !tier.fully_known(),
        "without fetching, the remote part is unknown"
    );
    assert_eq!(names(tier), ["local"]);
    assert_eq!(
        server.hits.load(Ordering::SeqCst),
        0,
        "nothing fetched offline"
    );

    let model = discover(repo.path(), cache.path(), true);
    let tier = apps(&model);
    assert!(tier.fully_known(), "{:?}", tier.partial_reason());
    assert_eq!(names(tier), ["widgets.example.com", "local"]);
    let crd = &tier.objects()[0];
    let at = crd.source.as_ref().expect("a place");
    assert_eq!(
        (at.file.as_str(), at.line),
        ("apps/kustomization.yaml", 2),
        "where the URL is written"
    );
    assert_eq!(tier.fetched.len(), 1);
    assert!(
        tier.fetched[0].content.starts_with("sha256 "),
        "{:?}",
        tier.fetched[0]
    );
    assert!(
        std::fs::read_dir(cache.path().join("blobs"))
            .unwrap()
            .count()
            == 1,
        "stored by content"
    );
}

#[test]
fn a_git_base_is_cloned_at_its_ref_and_reads_inside_its_repository() {
    let cache = tempfile::tempdir().unwrap();
    let remote = served(&cache);
    let commit = base_repo(&remote.path().join("base"));
    let repo = tempfile::tempdir().unwrap();
    let reference = format!("file://{}/base//deploy?ref=v1", remote.path().display());
    repo_with(repo.path(), &[&reference, "local.yaml"]);

    let model = discover(repo.path(), cache.path(), true);
    let tier = apps(&model);
    assert!(
        tier.fully_known(),
        "{:?} {:?}",
        tier.partial_reason(),
        tier.state
    );
    assert_eq!(
        names(tier),
        ["web-v1", "shared", "local"],
        "the tag, not main"
    );
    assert_eq!(
        tier.fetched[0].content,
        format!(
            "commit {} of file://{}/base",
            &commit[..12],
            remote.path().display()
        )
    );
    assert!(
        cache.path().join("trees").join(&commit).is_dir(),
        "stored by commit"
    );
    assert!(
        !cache
            .path()
            .join("trees")
            .join(&commit)
            .join(".git")
            .exists()
    );

    // A full commit id is content: a second run needs no git at all, even
    // with the repository gone.
    let pinned = format!(
        "file://{}/base//deploy?ref={commit}",
        remote.path().display()
    );
    repo_with(repo.path(), &[&pinned, "local.yaml"]);
    let _ = discover(repo.path(), cache.path(), true); // fetches by commit once
    std::fs::remove_dir_all(remote.path().join("base")).unwrap();
    let model = discover(repo.path(), cache.path(), true);
    let tier = apps(&model);
    assert_eq!(names(tier), ["web-v1", "shared", "local"]);
    assert_eq!(tier.fetched[0].stale, None, "a commit is never stale");
}

#[test]
fn a_ref_the_remote_does_not_have_fails_the_tier_as_flux_would() {
    let cache = tempfile::tempdir().unwrap();
    let remote = served(&cache);
    base_repo(&remote.path().join("base"));
    let repo = tempfile::tempdir().unwrap();
    let reference = format!("file://{}/base//deploy?ref=v9", remote.path().display());
    repo_with(repo.path(), &[&reference]);
    let model = discover(repo.path(), cache.path(), true);
    let TierState::RenderFailed(failure) = &apps(&model).state else {
        panic!("expected render-failed: {:?}", apps(&model).state);
    };
    assert!(
        failure.message.contains("couldn't find remote ref"),
        "{}",
        failure.message
    );
    let at = failure.at.as_ref().expect("a place");
    assert_eq!((at.file.as_str(), at.line), ("apps/kustomization.yaml", 2));
}

#[test]
fn an_http_404_fails_the_tier_and_no_answer_only_leaves_it_unknown() {
    let server = Server::start();
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let gone = server.url("/gone.yaml");
    repo_with(repo.path(), &[&gone, "local.yaml"]);
    let model = discover(repo.path(), cache.path(), true);
    let TierState::RenderFailed(failure) = &apps(&model).state else {
        panic!("expected render-failed: {:?}", apps(&model).state);
    };
    assert!(
        failure.message.contains("status code 404"),
        "{}",
        failure.message
    );

    // Nothing listens on the port: this machine's network, not Flux's.
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let unreachable = format!("http://127.0.0.1:{closed}/crds.yaml");
    repo_with(repo.path(), &[&unreachable, "local.yaml"]);
    let model = discover(repo.path(), cache.path(), true);
    let tier = apps(&model);
    assert!(
        matches!(tier.state, TierState::Rendered(_)),
        "{:?}",
        tier.state
    );
    assert_eq!(names(tier), ["local"], "the local part is still checked");
    let reason = tier.partial_reason().expect("partial");
    assert!(reason.contains("could not be fetched here"), "{reason}");
}

#[test]
fn the_cached_copy_is_used_when_the_remote_stops_answering() {
    let server = Server::start();
    server.serve("/crds.yaml", 200, CRD_FILE);
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let url = server.url("/crds.yaml");
    repo_with(repo.path(), &[&url]);
    let _ = discover(repo.path(), cache.path(), true);
    server.serve("/crds.yaml", 503, "down");
    let model = discover(repo.path(), cache.path(), true);
    let tier = apps(&model);
    assert_eq!(names(tier), ["widgets.example.com"]);
    let stale = tier.fetched[0].stale.as_deref().expect("said so");
    assert!(
        stale.contains("503") && stale.contains("the copy fetched"),
        "{stale}"
    );
}

#[test]
fn each_address_is_fetched_once_per_run() {
    let server = Server::start();
    server.serve("/crds.yaml", 200, CRD_FILE);
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let url = server.url("/crds.yaml");
    sync(repo.path(), "clusters/prod");
    for name in ["a", "b", "c"] {
        write(
            repo.path(),
            &format!("clusters/prod/{name}.yaml"),
            &ks(name, "flux-system", &format!("./{name}"), ""),
        );
        write(
            repo.path(),
            &format!("{name}/kustomization.yaml"),
            &format!(
                "\
namePrefix: {name}-
resources:
  - {url}
"
            ),
        );
    }
    let model = discover(repo.path(), cache.path(), true);
    let fetched: usize = model.clusters[0]
        .tiers
        .values()
        .map(|t| t.fetched.len())
        .sum();
    assert_eq!(fetched, 3);
    assert_eq!(
        server.hits.load(Ordering::SeqCst),
        1,
        "one GET for three tiers"
    );
}

#[test]
fn a_remote_base_cannot_read_outside_its_repository() {
    let cache = tempfile::tempdir().unwrap();
    let remote = served(&cache);
    let dir = remote.path().join("base");
    base_repo(&dir);
    write(
        &dir,
        "deploy/kustomization.yaml",
        "\
resources:
  - ../../../../../../etc
",
    );
    git(&dir, &["commit", "-qam", "escape"]);
    git(&dir, &["tag", "escape"]);
    let repo = tempfile::tempdir().unwrap();
    let reference = format!("file://{}/base//deploy?ref=escape", remote.path().display());
    repo_with(repo.path(), &[&reference]);
    let model = discover(repo.path(), cache.path(), true);
    let TierState::RenderFailed(failure) = &apps(&model).state else {
        panic!("expected render-failed: {:?}", apps(&model).state);
    };
    assert!(
        failure.message.contains("points outside"),
        "{}",
        failure.message
    );
    assert!(
        !failure.message.contains(".remote-"),
        "mount paths are not shown: {}",
        failure.message
    );
    assert_eq!(
        failure.at.as_ref().map(|a| a.file.as_str()),
        Some("apps/kustomization.yaml")
    );
}

#[test]
fn the_command_line_fetches_with_the_flag_or_the_configuration() {
    let server = Server::start();
    server.serve("/crds.yaml", 200, CRD_FILE);
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let url = server.url("/crds.yaml");
    repo_with(repo.path(), &[&url, "local.yaml"]);
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
            .args(["check", "--format", "json", "--repo"])
            .arg(repo.path())
            .args(args)
            .env("CONFORMANCE_CACHE_DIR", cache.path())
            .output()
            .expect("run");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        json["clusters"][0]["kustomizations"]
            .as_array()
            .expect("kustomizations")
            .iter()
            .find(|k| k["name"] == "apps")
            .cloned()
            .expect("apps")
    };
    let offline = run(&[]);
    assert!(
        offline["reason"]
            .as_str()
            .is_some_and(|r| r.contains("--fetch-remote")),
        "{offline}"
    );
    let fetched = run(&["--fetch-remote"]);
    assert_eq!(fetched["reason"], serde_json::Value::Null, "{fetched}");
    assert_eq!(fetched["objects"], 2);
    assert_eq!(fetched["fetched"][0]["reference"], url.as_str());
    write(repo.path(), "conformance.yaml", "remote: fetch\n");
    assert_eq!(run(&[])["objects"], 2, "remote: fetch in conformance.yaml");
}

#[test]
fn remote_bases_naming_remotes_and_remote_generator_inputs_are_fetched_too() {
    let server = Server::start();
    server.serve("/crds.yaml", 200, CRD_FILE);
    server.serve("/settings.env", 200, "LOG_LEVEL=debug\n");
    let cache = tempfile::tempdir().unwrap();
    let remote = served(&cache);
    let dir = remote.path().join("base");
    base_repo(&dir);
    write(
        &dir,
        "deploy/kustomization.yaml",
        &format!(
            "\
resources:
  - deployment.yaml
  - {}
",
            server.url("/crds.yaml")
        ),
    );
    git(&dir, &["commit", "-qam", "nested"]);
    git(&dir, &["tag", "nested"]);
    let repo = tempfile::tempdir().unwrap();
    let reference = format!("file://{}/base//deploy?ref=nested", remote.path().display());
    repo_with(repo.path(), &[&reference]);
    write(
        repo.path(),
        "apps/kustomization.yaml",
        &format!(
            "\
resources:
  - {reference}
configMapGenerator:
  - name: settings
    namespace: default
    envs:
      - {}
",
            server.url("/settings.env")
        ),
    );
    let model = discover(repo.path(), cache.path(), true);
    let tier = apps(&model);
    assert!(
        tier.fully_known(),
        "{:?} {:?}",
        tier.partial_reason(),
        tier.state
    );
    let mut got = names(tier);
    got.sort();
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got.contains(&"web-v2".to_string()), "{got:?}");
    assert!(got.contains(&"widgets.example.com".to_string()));
    let settings = tier
        .objects()
        .iter()
        .find(|o| o.id.kind == "ConfigMap")
        .expect("the generated ConfigMap");
    assert_eq!(
        settings.body.str_at(&["data", "LOG_LEVEL"]).as_deref(),
        Some("debug")
    );
    assert!(
        tier.remote_inputs.is_empty(),
        "fetched, so not rendered empty"
    );
    assert_eq!(tier.fetched.iter().filter(|f| f.input).count(), 1);
    // The nested remote is placed where the repository names the outer one.
    let crd = tier
        .objects()
        .iter()
        .find(|o| o.id.kind == "CustomResourceDefinition")
        .unwrap();
    assert_eq!(
        crd.source.as_ref().map(|s| s.file.as_str()),
        Some("apps/kustomization.yaml")
    );
}

#[test]
fn the_remote_setting_is_parsed_strictly() {
    let ok = |_: &str| true;
    let config = conformance::config::Config::parse("remote: fetch\n", &ok).unwrap();
    assert_eq!(config.remote, conformance::remote::Setting::Fetch);
    let err = conformance::config::Config::parse(
        "\
renderer: native
remote: yes
",
        &ok,
    )
    .unwrap_err();
    assert_eq!(err.line, 2, "{err}");
}

fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Found on a real repository: one base fetched, one not, and a patch aimed
/// at the unfetched one. The tier is not checked, says why, and keeps what
/// it fetched (so remote-base still reports every base).
#[test]
fn a_tier_that_cannot_build_without_an_unfetched_base_says_why_and_keeps_the_rest() {
    let cache = tempfile::tempdir().unwrap();
    let remote = served(&cache);
    base_repo(&remote.path().join("base"));
    let repo = tempfile::tempdir().unwrap();
    let git_base = format!("file://{}/base//deploy?ref=v1", remote.path().display());
    let unreachable = format!("http://127.0.0.1:{}/crds.yaml", closed_port());
    repo_with(repo.path(), &[&git_base, &unreachable]);
    write(
        repo.path(),
        "apps/kustomization.yaml",
        &format!(
            "\
resources:
  - {git_base}
  - {unreachable}
patchesStrategicMerge:
  - |-
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: widgets.example.com
    spec:
      scope: Cluster
"
        ),
    );
    let model = discover(repo.path(), cache.path(), true);
    let tier = apps(&model);
    let TierState::NotChecked(reason) = &tier.state else {
        // The patch's target is not in the local part: kustomize fails.
        panic!("expected not checked: {:?}", tier.state);
    };
    assert!(reason.contains("could not be fetched here"), "{reason}");
    assert!(reason.contains(&unreachable), "{reason}");
    assert_eq!(tier.fetched.len(), 1, "the git base was fetched");
    assert_eq!(tier.remote_bases.len(), 1, "the URL was left out");
}

#[test]
fn an_unfetchable_generator_input_is_said_to_be_unknown() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let input = format!("http://127.0.0.1:{}/settings.env", closed_port());
    repo_with(repo.path(), &["local.yaml"]);
    write(
        repo.path(),
        "apps/kustomization.yaml",
        &format!(
            "\
resources:
  - local.yaml
configMapGenerator:
  - name: settings
    namespace: default
    envs:
      - {input}
"
        ),
    );
    let model = discover(repo.path(), cache.path(), true);
    let tier = apps(&model);
    let reason = tier.partial_reason().expect("said");
    assert!(
        reason.contains("could not be fetched here") && reason.contains(&input),
        "{reason}"
    );
}
