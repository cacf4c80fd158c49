//! Issue 49: charts read for real. A chart repository (`index.yaml` and
//! archives) and an OCI registry (tags, manifest, chart layer, behind an
//! anonymous token) served on 127.0.0.1; a chart in the repository itself.
//! What the chart ships, not the hand-kept catalog, says which kinds its
//! HelmRelease provides.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use sha2::Digest;

use crate::support::{ks, sync, write};

/// A route: status, content type, body; `token`: answered only with
/// `Authorization: Bearer <token>`, else 401 pointing at `/token`.
type Routes = Arc<Mutex<BTreeMap<String, (u16, Vec<u8>, Option<String>)>>>;

/// A tiny HTTP/1.1 server on 127.0.0.1 serving bytes.
struct Server {
    port: u16,
    routes: Routes,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let routes: Routes = Arc::default();
        let r = routes.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                let _ = reader.read_line(&mut request);
                let mut auth = None;
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = header.split_once(':')
                        && k.eq_ignore_ascii_case("authorization")
                    {
                        auth = Some(v.trim().to_string());
                    }
                }
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                let route = r.lock().unwrap().get(&path).cloned();
                let (status, body, extra) = match route {
                    Some((_, _, Some(token)))
                        if auth.as_deref() != Some(&format!("Bearer {token}")) =>
                    {
                        (
                            401,
                            b"unauthorized".to_vec(),
                            format!(
                                "WWW-Authenticate: Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"test\",scope=\"repository:charts/gizmo:pull\"\r\n"
                            ),
                        )
                    }
                    Some((status, body, _)) => (status, body, String::new()),
                    None => (404, b"not found".to_vec(), String::new()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            }
        });
        Server { port, routes }
    }

    fn serve(&self, path: &str, body: Vec<u8>, token: Option<&str>) {
        self.routes
            .lock()
            .unwrap()
            .insert(path.to_string(), (200, body, token.map(str::to_string)));
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

const CRD: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.toys.example.org
spec:
  group: toys.example.org
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
";

/// A chart archive as `helm package` writes one: `gizmo/Chart.yaml`, …
fn archive(version: &str, files: &[(&str, &str)]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    let chart = format!("apiVersion: v2\nname: gizmo\nversion: {version}\n");
    let mut all = vec![("Chart.yaml", chart.as_str())];
    all.extend_from_slice(files);
    for (path, text) in all {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, format!("gizmo/{path}"), text.as_bytes())
            .unwrap();
    }
    let tar = tar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// Tier `platform` installs HelmRelease gizmo (`release`: its chart
/// source lines) and uses a Widget in the same tier.
fn repo(root: &Path, sources: &str, release_chart: &str) {
    sync(root, "clusters/prod");
    write(
        root,
        "clusters/prod/tiers.yaml",
        &ks("platform", "flux-system", "./platform", "  wait: true\n"),
    );
    write(
        root,
        "platform/gizmo.yaml",
        &format!(
            "\
{sources}---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: gizmo
  namespace: flux-system
spec:
  interval: 1h
{release_chart}---
apiVersion: toys.example.org/v1
kind: Widget
metadata:
  name: w
  namespace: default
"
        ),
    );
}

/// `conformance check --format json` (with `--fetch-remote` when `fetch`),
/// in a cache of its own: the findings as (rule, severity, message).
fn check(root: &Path, cache: &Path, fetch: bool) -> Vec<(String, String, String)> {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"));
    cmd.args(["check", "--format", "json", "--repo"])
        .arg(root)
        .env("CONFORMANCE_CACHE_DIR", cache);
    if fetch {
        cmd.arg("--fetch-remote");
    }
    let out = cmd.output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn second_order(findings: &[(String, String, String)]) -> bool {
    findings.iter().any(|(rule, sev, msg)| {
        rule == "second-order-crd" && sev == "error" && msg.contains("gizmo")
    })
}

#[test]
fn a_chart_repository_chart_is_read_at_the_version_the_constraint_chooses() {
    let server = Server::start();
    server.serve(
        "/gizmo-1.2.0.tgz",
        archive("1.2.0", &[("crds/widgets.yaml", CRD)]),
        None,
    );
    // 2.0.0 no longer ships the CRD: `1.x` must not choose it.
    server.serve("/gizmo-2.0.0.tgz", archive("2.0.0", &[]), None);
    server.serve(
        "/index.yaml",
        b"apiVersion: v1\nentries:\n  gizmo:\n    - version: 2.0.0\n      urls: [gizmo-2.0.0.tgz]\n    - version: 1.2.0\n      urls: [gizmo-1.2.0.tgz]\n"
            .to_vec(),
        None,
    );
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(
        root,
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: toys\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: {}\n",
            server.url("")
        ),
        "  chart:\n    spec:\n      chart: gizmo\n      version: 1.x\n      sourceRef:\n        kind: HelmRepository\n        name: toys\n",
    );
    // Offline: the chart is unknown, so the Widget's kind comes from
    // nothing the run reads.
    let offline = check(root, cache.path(), false);
    assert!(!second_order(&offline), "{offline:?}");
    // Read for real: the Widget is beside the release that installs its
    // CRD, a deadlock.
    let fetched = check(root, cache.path(), true);
    assert!(second_order(&fetched), "{fetched:?}");
    // `install.crds: Skip` installs none of `crds/`.
    let text = std::fs::read_to_string(root.join("platform/gizmo.yaml")).unwrap();
    write(
        root,
        "platform/gizmo.yaml",
        &text.replace("  chart:\n", "  install:\n    crds: Skip\n  chart:\n"),
    );
    assert!(!second_order(&check(root, cache.path(), true)));
}

#[test]
fn an_oci_chart_is_read_behind_an_anonymous_token() {
    let server = Server::start();
    let chart = archive("1.4.0", &[("crds/widgets.yaml", CRD)]);
    let digest = format!("sha256:{:x}", sha2::Sha256::digest(&chart));
    let manifest = format!(
        "{{\"schemaVersion\":2,\"config\":{{\"mediaType\":\"application/vnd.cncf.helm.config.v1+json\",\"digest\":\"sha256:00\",\"size\":2}},\"layers\":[{{\"mediaType\":\"application/vnd.cncf.helm.chart.content.v1.tar+gzip\",\"digest\":\"{digest}\",\"size\":{}}}]}}",
        chart.len()
    );
    let token = Some("s3cret");
    server.serve(
        "/token?service=test&scope=repository%3Acharts/gizmo%3Apull",
        b"{\"token\":\"s3cret\"}".to_vec(),
        None,
    );
    server.serve(
        "/v2/charts/gizmo/tags/list",
        b"{\"name\":\"charts/gizmo\",\"tags\":[\"1.4.0\",\"0.9.0\",\"2.0.0-rc.1\"]}".to_vec(),
        token,
    );
    server.serve(
        "/v2/charts/gizmo/manifests/1.4.0",
        manifest.into_bytes(),
        token,
    );
    server.serve(&format!("/v2/charts/gizmo/blobs/{digest}"), chart, token);
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(
        root,
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: gizmo\n  namespace: flux-system\nspec:\n  interval: 1h\n  insecure: true\n  url: oci://127.0.0.1:{}/charts/gizmo\n  ref:\n    semver: \">=1.0.0\"\n",
            server.port
        ),
        "  chartRef:\n    kind: OCIRepository\n    name: gizmo\n",
    );
    let fetched = check(root, cache.path(), true);
    assert!(second_order(&fetched), "{fetched:?}");
}

#[test]
fn a_template_crd_follows_the_value_that_gates_it() {
    let server = Server::start();
    let template = format!("{{{{- if .Values.crds.install }}}}\n{CRD}{{{{- end }}}}\n");
    server.serve(
        "/gizmo-1.0.0.tgz",
        archive(
            "1.0.0",
            &[
                ("values.yaml", "crds:\n  install: false\n"),
                ("templates/crds.yaml", &template),
            ],
        ),
        None,
    );
    server.serve(
        "/index.yaml",
        b"apiVersion: v1\nentries:\n  gizmo:\n    - version: 1.0.0\n      urls: [gizmo-1.0.0.tgz]\n".to_vec(),
        None,
    );
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = dir.path();
    let source = format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: toys\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: {}\n",
        server.url("")
    );
    let chart = "  chart:\n    spec:\n      chart: gizmo\n      sourceRef:\n        kind: HelmRepository\n        name: toys\n";
    repo(root, &source, chart);
    // The chart's default leaves the CRD out.
    assert!(!second_order(&check(root, cache.path(), true)));
    repo(
        root,
        &source,
        &format!("{chart}  values:\n    crds:\n      install: true\n"),
    );
    assert!(second_order(&check(root, cache.path(), true)));
}

#[test]
fn a_chart_in_the_repository_is_read_without_fetching() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "charts/gizmo/Chart.yaml",
        "apiVersion: v2\nname: gizmo\nversion: 0.1.0\n",
    );
    write(root, "charts/gizmo/crds/widgets.yaml", CRD);
    repo(
        root,
        "",
        "  chart:\n    spec:\n      chart: ./charts/gizmo\n      sourceRef:\n        kind: GitRepository\n        name: flux-system\n",
    );
    // The first document is empty: drop the leading separator.
    let text = std::fs::read_to_string(root.join("platform/gizmo.yaml")).unwrap();
    write(
        root,
        "platform/gizmo.yaml",
        text.trim_start_matches("---\n"),
    );
    assert!(second_order(&check(root, cache.path(), false)));
}

#[test]
fn a_chart_that_cannot_be_fetched_is_noted_and_the_catalog_answers() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = dir.path();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    repo(
        root,
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: toys\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: http://127.0.0.1:{port}\n"
        ),
        "  chart:\n    spec:\n      chart: gizmo\n      sourceRef:\n        kind: HelmRepository\n        name: toys\n",
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["check", "--fetch-remote", "--repo"])
        .arg(root)
        .env("CONFORMANCE_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("chart of HelmRelease") && text.contains("taken from the catalog"),
        "{text}"
    );
}
