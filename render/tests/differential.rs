//! Differential tests: the native renderer against `kubectl kustomize`
//! (or `kustomize build`) with load restrictions off, compared as sets of
//! objects keyed by identity (semantic equality per object; text and order do
//! not matter).
//!
//! * every kustomization directory under `fixtures/`;
//! * for every repository of both corpora beside the checkout
//!   (`CONFORMANCE_CORPUS`, `CONFORMANCE_CORPUS_WIDE`): every Flux
//!   Kustomization path, built through Flux's layer (`<corpus>::<repo>::flux`),
//!   and every kustomization directory it holds, built on its own
//!   (`<corpus>::<repo>::dirs`; a Component is built by what lists it).
//!
//! Each trial prints its coverage: equal, known (a difference listed in
//! [`KNOWN`] with its reason), remote (both fail, kustomize for want of the
//! network), unsupported (native says so explicitly), different. Any other
//! difference fails. Without kubectl or kustomize the trials are ignored
//! with the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use conformance_render::model::TierState;
use conformance_render::render::external::External;
use conformance_render::render::native::Native;
use conformance_render::render::{Kustomize, build_directory, flux};
use conformance_render::repo::RepoIndex;
use conformance_render::yaml::Node;
use libtest_mimic::{Arguments, Completion, Failed, Trial};

#[path = "../../conformance/tests/common/corpora.rs"]
mod corpora;
use corpora::workspace;

/// Differences between the two renderers that are known, each with why it
/// stays: a JSON pointer suffix, what native gives, what kustomize gives.
const KNOWN: &[(&str, KnownSide, KnownSide, &str)] = &[(
    "",
    KnownSide::Null,
    KnownSide::Absent,
    "kyaml's strategic merge drops a key whose value is empty (`a:`) but keeps `a: null`; \
     this loader reads both as null (serde gives no way to tell them apart), so after a \
     patch native keeps the key as null. Helm and the API server read null and absent alike \
     except in Helm values, where a null deletes a chart default",
)];

/// Builds kustomize fails and native does not, known, each with why: a
/// text of kustomize's error and the reason.
const KNOWN_FAILURES: &[(&str, &str)] = &[(
    "illegally qualifies as both an SM and JSON patch",
    "an empty patch (nothing but comments): the kubectl here (kustomize 5.5) refuses it; \
     kustomize 5.8 (`PatchTransformer.Config`, both parses empty) applies nothing, which \
     the native renderer follows",
)];

/// Why kustomize's failure is known, if it is.
fn known_failure(error: &conformance_render::render::Error) -> Option<&'static str> {
    let message = error.to_string();
    KNOWN_FAILURES
        .iter()
        .find(|(text, _)| message.contains(text))
        .map(|(_, why)| *why)
}

/// One side of a known difference.
#[derive(Clone, Copy, PartialEq)]
enum KnownSide {
    Null,
    Absent,
}

fn side(v: Option<&serde_json::Value>) -> Option<KnownSide> {
    match v {
        None => Some(KnownSide::Absent),
        Some(serde_json::Value::Null) => Some(KnownSide::Null),
        _ => None,
    }
}

/// Why this difference is known, if it is.
fn known(
    at: &str,
    native: Option<&serde_json::Value>,
    external: Option<&serde_json::Value>,
) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|(suffix, n, e, _)| {
            at.ends_with(suffix) && side(native) == Some(*n) && side(external) == Some(*e)
        })
        .map(|(_, _, _, why)| *why)
}

type Objects = BTreeMap<(String, String, String, String), serde_json::Value>;

fn objects(nodes: Vec<Node>) -> Objects {
    nodes
        .into_iter()
        .map(|n| {
            let mut json = n.to_json();
            if let Some(annotations) = json
                .pointer_mut("/metadata/annotations")
                .and_then(|a| a.as_object_mut())
            {
                annotations.remove("config.kubernetes.io/origin");
                if annotations.is_empty() {
                    json.as_object_mut()
                        .and_then(|o| o.get_mut("metadata"))
                        .and_then(|m| m.as_object_mut())
                        .map(|m| m.remove("annotations"));
                }
            }
            let key = (
                n.str_at(&["apiVersion"]).unwrap_or_default(),
                n.str_at(&["kind"]).unwrap_or_default(),
                n.str_at(&["metadata", "namespace"]).unwrap_or_default(),
                n.str_at(&["metadata", "name"]).unwrap_or_default(),
            );
            (key, json)
        })
        .collect()
}

/// How two builds compare.
enum Comparison {
    Equal,
    /// Equal but for differences listed in [`KNOWN`] (their reasons).
    Known(Vec<&'static str>),
    /// Why they differ, briefly.
    Different(String),
}

fn difference(native: &Objects, external: &Objects) -> Comparison {
    if native == external {
        return Comparison::Equal;
    }
    let mut out = Vec::new();
    let mut known_seen = Vec::new();
    for k in external.keys().filter(|k| !native.contains_key(*k)) {
        out.push(format!("only kustomize: {k:?}"));
    }
    for k in native.keys().filter(|k| !external.contains_key(*k)) {
        out.push(format!("only native: {k:?}"));
    }
    for (k, v) in native {
        if let Some(e) = external.get(k)
            && e != v
        {
            let mut at = Vec::new();
            json_differences(v, e, String::new(), &mut at, &mut known_seen);
            if !at.is_empty() {
                out.push(format!("{k:?} differs:\n{}", at.join("\n")));
            }
        }
    }
    if out.is_empty() {
        known_seen.sort();
        known_seen.dedup();
        Comparison::Known(known_seen)
    } else {
        Comparison::Different(out.join("\n"))
    }
}

/// Whether kustomize failed for want of the network (a remote base or an
/// http(s) generator input, fetched by kustomize and never by native).
fn needs_network(error: &conformance_render::render::Error) -> bool {
    let m = error.to_string();
    [
        "dial tcp",
        "no such host",
        "Could not resolve host",
        "network is unreachable",
        "i/o timeout",
        "remote bases:",
    ]
    .iter()
    .any(|needle| m.contains(needle))
}

/// Where two JSON values differ, as JSON pointers with both sides (at most
/// eight, so one divergence does not bury the rest of the report).
fn json_differences(
    native: &serde_json::Value,
    external: &serde_json::Value,
    at: String,
    out: &mut Vec<String>,
    known_seen: &mut Vec<&'static str>,
) {
    use serde_json::Value;
    if out.len() >= 8 || native == external {
        return;
    }
    match (native, external) {
        (Value::Object(n), Value::Object(e)) => {
            let keys: std::collections::BTreeSet<&String> = n.keys().chain(e.keys()).collect();
            for k in keys {
                let (a, b) = (n.get(k), e.get(k));
                let here = format!("{at}/{k}");
                match (a, b) {
                    (Some(a), Some(b)) => json_differences(a, b, here, out, known_seen),
                    _ if known(&here, a, b).is_some() => {
                        known_seen.extend(known(&here, a, b));
                    }
                    _ => out.push(format!(
                        "  {here}: native {} / kustomize {}",
                        short(a),
                        short(b)
                    )),
                }
            }
        }
        (Value::Array(n), Value::Array(e)) if n.len() == e.len() => {
            for (i, (a, b)) in n.iter().zip(e).enumerate() {
                json_differences(a, b, format!("{at}/{i}"), out, known_seen);
            }
        }
        _ => out.push(format!(
            "  {at}: native {} / kustomize {}",
            short(Some(native)),
            short(Some(external))
        )),
    }
}

fn short(v: Option<&serde_json::Value>) -> String {
    let Some(v) = v else {
        return "(absent)".into();
    };
    let text = serde_json::to_string(v).unwrap_or_default();
    if text.chars().count() > 300 {
        format!("{}…", text.chars().take(300).collect::<String>())
    } else {
        text
    }
}

#[derive(Default)]
struct Coverage {
    equal: usize,
    known: Vec<String>,
    remote: Vec<String>,
    unsupported: Vec<String>,
    different: Vec<String>,
}

impl Coverage {
    fn record(
        &mut self,
        what: &str,
        native: Result<Vec<Node>, conformance_render::render::Error>,
        external: Result<Vec<Node>, conformance_render::render::Error>,
    ) {
        match (native, external) {
            (Err(n), _) if n.is_unsupported() => self.unsupported.push(format!("{what}: {n}")),
            (Ok(n), Ok(e)) => match difference(&objects(n), &objects(e)) {
                Comparison::Equal => self.equal += 1,
                Comparison::Known(why) => self.known.push(format!("{what}: {}", why.join("; "))),
                Comparison::Different(d) => self.different.push(format!("{what}:\n{d}")),
            },
            // kustomize fetches what native never does: native builds the
            // local part (or says remote bases), kustomize fails offline.
            (_, Err(e)) if needs_network(&e) => self.remote.push(what.to_string()),
            (Ok(_), Err(e)) if known_failure(&e).is_some() => {
                let why = known_failure(&e).unwrap_or_default();
                self.known.push(format!("{what}: {why}"));
            }
            // Both fail: equal behaviour (messages differ by design).
            (Err(_), Err(_)) => self.equal += 1,
            (Ok(_), Err(e)) => self
                .different
                .push(format!("{what}: kustomize fails ({e}) but native builds")),
            (Err(n), Ok(_)) => self
                .different
                .push(format!("{what}: native fails ({n}) but kustomize builds")),
        }
    }

    fn verdict(self, name: &str) -> Result<Completion, Failed> {
        eprintln!(
            "differential {name}: {} equal, {} known, {} remote, {} unsupported, {} different",
            self.equal,
            self.known.len(),
            self.remote.len(),
            self.unsupported.len(),
            self.different.len()
        );
        for u in &self.unsupported {
            eprintln!("  unsupported: {u}");
        }
        for k in &self.known {
            eprintln!("  known: {k}");
        }
        if self.different.is_empty() {
            Ok(Completion::Completed)
        } else {
            Err(self.different.join("\n\n").into())
        }
    }
}

fn kustomization_dirs(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            kustomization_dirs(&path, out);
        } else if KUSTOMIZATION_FILES.iter().any(|f| e.file_name() == *f)
            && out.last().is_none_or(|d| d != root)
        {
            out.push(root.to_path_buf());
        }
    }
}

type Check = fn(&RepoIndex, &Path, &External, &mut Coverage);

/// Every Flux Kustomization path of the repository, built through Flux's
/// layer (the kustomization kustomize-controller writes).
fn flux_paths(index: &RepoIndex, _repo: &Path, external: &External, coverage: &mut Coverage) {
    let model = conformance_engine::discover::discover(index, external);
    for cluster in &model.clusters {
        for tier in cluster.tiers.values() {
            if !matches!(
                tier.state,
                TierState::Rendered(_) | TierState::RenderFailed(_)
            ) {
                continue;
            }
            let build = |k: &dyn Kustomize| {
                let target = flux::Target {
                    id: &tier.id,
                    path: &tier.path,
                    spec: &tier.spec,
                    defined_at: &tier.defined_at,
                };
                flux::build(&index.artifact(), &target, k, None)
                    .map(|b| b.objects.into_iter().map(|o| o.body).collect::<Vec<_>>())
                    .map_err(|e| match e {
                        flux::BuildError::Failed(f) | flux::BuildError::Budget(f) => {
                            conformance_render::render::Error::new(f.message)
                        }
                        flux::BuildError::RemoteBases(r) => conformance_render::render::Error::new(
                            format!("remote bases: {:?}", r.left_out),
                        ),
                    })
            };
            let what = format!("{}/{} ({})", cluster.name, tier.id, tier.display_path());
            coverage.record(&what, build(&Native), build(external));
        }
    }
}

/// Every kustomization directory the repository holds, built on its own
/// (one kubectl per directory); a Component is built by what lists it.
fn directories(index: &RepoIndex, repo: &Path, external: &External, coverage: &mut Coverage) {
    let mut dirs = Vec::new();
    kustomization_dirs(repo, &mut dirs);
    for dir in dirs {
        let rel = dir
            .strip_prefix(repo)
            .unwrap_or(&dir)
            .to_string_lossy()
            .replace('\\', "/");
        if is_component(&dir) {
            continue;
        }
        let rel = if rel.is_empty() { ".".to_string() } else { rel };
        coverage.record(
            &rel,
            build_directory(&Native, index, &rel),
            build_directory(external, index, &rel),
        );
    }
}

/// Whether the directory's kustomization file is a Component (or cannot be
/// read: then both renderers are asked and must agree).
fn is_component(dir: &Path) -> bool {
    KUSTOMIZATION_FILES.iter().any(|f| {
        std::fs::read_to_string(dir.join(f))
            .ok()
            .and_then(|t| conformance_render::yaml::parse_documents(&t).ok())
            .is_some_and(|docs| {
                docs.first().and_then(|d| d.str_at(&["kind"])).as_deref() == Some("Component")
            })
    })
}

const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let external = External::detect();
    let mut trials = Vec::new();
    let mut dirs = Vec::new();
    kustomization_dirs(&workspace().join("fixtures"), &mut dirs);
    let fixtures = match RepoIndex::load(&workspace().join("fixtures")) {
        Ok(index) => std::sync::Arc::new(index),
        Err(err) => {
            eprintln!("cannot index fixtures/: {err}");
            return ExitCode::FAILURE;
        }
    };
    for dir in dirs {
        let fixtures = fixtures.clone();
        let name = dir
            .strip_prefix(workspace().join("fixtures"))
            .unwrap_or(&dir)
            .display()
            .to_string();
        let external = external.as_ref().ok().cloned();
        trials.push(Trial::ignorable_test(
            format!("fixtures::{name}"),
            move || {
                let Some(external) = external else {
                    return Ok(Completion::ignored_with(
                        "neither kustomize nor kubectl is on PATH",
                    ));
                };
                let text =
                    std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap_or_default();
                if text.contains("kind: Component") {
                    return Ok(Completion::ignored_with(
                        "a Component is not built on its own",
                    ));
                }
                if text.contains("://") {
                    return Ok(Completion::ignored_with("remote bases are never fetched"));
                }
                let mut coverage = Coverage::default();
                let rel = name.replace('\\', "/");
                coverage.record(
                    &name,
                    build_directory(&Native, &fixtures, &rel),
                    build_directory(&external, &fixtures, &rel),
                );
                // A fixture exercises what the native renderer implements:
                // "unsupported" there is a failure, not a skip.
                if !coverage.unsupported.is_empty() {
                    return Err(coverage.unsupported.join("\n").into());
                }
                coverage.verdict(&name)
            },
        ));
    }
    for corpus in corpora::corpora() {
        let repos = corpus.repos();
        if repos.is_empty() {
            let reason = format!(
                "{} not found at {} (set {})",
                corpus.name,
                corpus.dir.display(),
                corpus.variable
            );
            let required = corpora::required();
            trials.push(Trial::ignorable_test(
                format!("{}::present", corpus.name),
                move || {
                    if required {
                        Err(format!("{reason}, and CONFORMANCE_CORPUS_REQUIRED=1").into())
                    } else {
                        Ok(Completion::ignored_with(reason))
                    }
                },
            ));
        }
        for repo in repos {
            let name = format!(
                "{}::{}",
                corpus.name,
                repo.file_name().unwrap_or_default().to_string_lossy()
            );
            for (suffix, trial) in [("flux", flux_paths as Check), ("dirs", directories)] {
                let external = external.as_ref().ok().cloned();
                let repo = repo.clone();
                let name = format!("{name}::{suffix}");
                trials.push(Trial::ignorable_test(name.clone(), move || {
                    let Some(external) = external else {
                        return Ok(Completion::ignored_with(
                            "neither kustomize nor kubectl is on PATH",
                        ));
                    };
                    let index = RepoIndex::load(&repo).map_err(|e| e.to_string())?;
                    let mut coverage = Coverage::default();
                    trial(&index, &repo, &external, &mut coverage);
                    coverage.verdict(&name)
                }));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}
