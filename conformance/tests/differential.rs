//! Differential tests: the native renderer against `kubectl kustomize`
//! (or `kustomize build`) with load restrictions off, compared as sets of
//! objects keyed by identity (semantic equality per object; text and order do
//! not matter).
//!
//! * every kustomization directory under `fixtures/`;
//! * every Flux Kustomization path of every corpus repository (the corpus
//!   beside the checkout, `CONFORMANCE_CORPUS`), built through Flux's layer.
//!
//! Each trial prints its coverage: paths equal, unsupported (native says so
//! explicitly), different. Any difference fails. Without kubectl or
//! kustomize the trials are ignored with the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use conformance::model::TierState;
use conformance::render::external::External;
use conformance::render::native::Native;
use conformance::render::{Kustomize, build_directory, flux};
use conformance::repo::RepoIndex;
use conformance::yaml::Node;
use libtest_mimic::{Arguments, Completion, Failed, Trial};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus_dir() -> PathBuf {
    match std::env::var_os("CONFORMANCE_CORPUS").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        Some(dir) => workspace().join(dir),
        None => workspace().join("../shared/corpus"),
    }
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

/// Why two builds differ, briefly; `None` when they are equal.
fn difference(native: &Objects, external: &Objects) -> Option<String> {
    if native == external {
        return None;
    }
    let mut out = Vec::new();
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
            out.push(format!(
                "{k:?} differs:\n  native:    {}\n  kustomize: {}",
                serde_json::to_string(v).unwrap_or_default(),
                serde_json::to_string(e).unwrap_or_default()
            ));
        }
    }
    Some(out.join("\n"))
}

#[derive(Default)]
struct Coverage {
    equal: usize,
    unsupported: Vec<String>,
    different: Vec<String>,
}

impl Coverage {
    fn record(
        &mut self,
        what: &str,
        native: Result<Vec<Node>, conformance::render::Error>,
        external: Result<Vec<Node>, conformance::render::Error>,
    ) {
        match (native, external) {
            (Err(n), _) if n.is_unsupported() => self.unsupported.push(format!("{what}: {n}")),
            (Ok(n), Ok(e)) => match difference(&objects(n), &objects(e)) {
                None => self.equal += 1,
                Some(d) => self.different.push(format!("{what}:\n{d}")),
            },
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
            "differential {name}: {} equal, {} unsupported, {} different",
            self.equal,
            self.unsupported.len(),
            self.different.len()
        );
        for u in &self.unsupported {
            eprintln!("  unsupported: {u}");
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
        } else if e.file_name() == "kustomization.yaml" {
            out.push(root.to_path_buf());
        }
    }
}

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
                coverage.verdict(&name)
            },
        ));
    }
    let corpus = corpus_dir();
    let mut repos: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .map(|e| {
            e.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    repos.sort();
    for repo in repos {
        let name = repo
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let external = external.as_ref().ok().cloned();
        trials.push(Trial::ignorable_test(
            format!("corpus::{name}"),
            move || {
                let Some(external) = external else {
                    return Ok(Completion::ignored_with(
                        "neither kustomize nor kubectl is on PATH",
                    ));
                };
                let index = RepoIndex::load(&repo).map_err(|e| e.to_string())?;
                let model = conformance::discover::discover(&index, &external);
                let mut coverage = Coverage::default();
                for cluster in &model.clusters {
                    for tier in cluster.tiers.values() {
                        if !matches!(
                            tier.state,
                            TierState::Rendered(_) | TierState::RenderFailed(_)
                        ) {
                            continue;
                        }
                        let build = |k: &dyn Kustomize| {
                            flux::build(&index.artifact(), &tier.id, &tier.path, &tier.spec, k)
                                .map(|b| b.objects.into_iter().map(|o| o.body).collect::<Vec<_>>())
                                .map_err(|e| match e {
                                    flux::BuildError::Failed(f) | flux::BuildError::Budget(f) => {
                                        conformance::render::Error::new(f.message)
                                    }
                                    flux::BuildError::RemoteBases(r) => {
                                        conformance::render::Error::new(format!(
                                            "remote bases: {r:?}"
                                        ))
                                    }
                                })
                        };
                        let what =
                            format!("{}/{} ({})", cluster.name, tier.id, tier.display_path());
                        coverage.record(&what, build(&Native), build(&external));
                    }
                }
                coverage.verdict(&name)
            },
        ));
    }
    libtest_mimic::run(&args, trials).exit_code()
}
