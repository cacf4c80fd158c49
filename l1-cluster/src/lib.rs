//! L1: the L0 model's predictions proven against a real API server.
//!
//! Two modes, each a set of libtest-mimic trials run by `tests/l1.rs`:
//!
//! * **Flux mode** (the default, [`flux_mode`]): Flux's own controllers
//!   reconcile the repository from an empty k3s. The repository is served
//!   by a git server beside the cluster ([`git`]) with only what L1 must
//!   change ([`serve`]: the sync URL and credentials, files `l1.manifests`
//!   maps to their published copy ([`manifests`]), optionally shorter
//!   retry intervals); every Kustomization is watched until Ready or
//!   `L1_TIMEOUT` ([`flux`]) and compared with the model's prediction
//!   ([`conformance::l1::predict`], [`crate::observe`]): one
//!   trial `<cluster>::l1::flux::<tier>` each. The [`kstatus`] trial shows
//!   on the same kind of cluster that an operator's trigger reads as
//!   Current before its CRDs exist, and that a `healthCheckExprs` gate
//!   holds.
//! * **Apply mode** (`L1_MODE=apply`, [`apply`]): the harness applies the
//!   plan's tiers itself, imitating kustomize-controller, for clusters where
//!   Flux cannot be installed.
//!
//! The cluster ([`cluster`]) is k3s in a container through testcontainers,
//! or an existing one named by `L1_KUBECONFIG`; it is always torn down.

pub mod api;
pub mod apply;
pub mod cluster;
pub mod error;
pub mod flux;
pub mod git;
pub mod kstatus;
pub mod manifests;
pub mod observe;
pub mod serve;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::observe::{Comparison, Observed, TrialOutcome, compare_all};
use anyhow::{Context as _, anyhow, bail};
use conformance::l1::predict::{Prediction, TierPrediction, predict};
use conformance::model::Cluster as ModelCluster;
use conformance::render::Choice;
use conformance::session::Session;

pub use apply::{Outcomes, execute};
pub use cluster::{Cluster, Runtime, detect_runtime};

/// How long things may take, from the environment.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// `L1_TIMEOUT` (600 s): the whole watch, and each wait.
    pub timeout: Duration,
    /// `L1_HOLD` (180 s): how long a tier predicted never to be Ready must
    /// stay so, and how long the kstatus gate must hold.
    pub hold: Duration,
}

impl Timing {
    /// Reads `L1_TIMEOUT` and `L1_HOLD` (seconds), with their defaults.
    pub fn from_env() -> Timing {
        let secs = |name: &str, default: u64| {
            Duration::from_secs(
                std::env::var(name)
                    .ok()
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(default),
            )
        };
        Timing {
            timeout: secs("L1_TIMEOUT", 600),
            hold: secs("L1_HOLD", 180),
        }
    }
}

/// The cluster L1 runs: `l1.cluster`, else the first discovered.
pub fn cluster_name(session: &Session) -> anyhow::Result<String> {
    session
        .declared
        .config
        .l1
        .cluster
        .clone()
        .or_else(|| session.model.clusters.first().map(|c| c.name.clone()))
        .ok_or_else(|| anyhow!("no cluster was discovered"))
}

/// The trial name of a tier.
pub fn flux_trial(cluster: &str, tier: &str) -> String {
    format!("{cluster}::l1::flux::{tier}")
}

/// The trial name of a kstatus trigger.
pub fn kstatus_trial(cluster: &str, trigger: &conformance::model::ObjectId) -> String {
    format!("{cluster}::l1::kstatus::{}/{}", trigger.kind, trigger.name)
}

/// Everything a Flux-mode run produced.
#[derive(Debug, Clone, Default)]
pub struct FluxReport {
    /// The cluster's name.
    pub cluster: String,
    /// What L1 did that the repository does not say: the Flux manifests
    /// used, every change to the served tree, the images.
    pub notes: Vec<String>,
    /// What the served repository installs outside Flux, which the L1 cluster does not have.
    pub prediction_outside: Vec<String>,
    /// Per tier: the prediction, what Flux did, and the verdict.
    pub comparisons: Vec<(TierPrediction, Observed, Comparison)>,
    /// Every HelmRelease's last Ready condition, in words, by `namespace/name`.
    pub helm_releases: BTreeMap<String, String>,
    /// Why the watch ended.
    pub ended: String,
    /// The kstatus trials, by trial name.
    pub kstatus: Vec<(String, kstatus::Result)>,
}

/// Where Flux's install manifest comes from, and its text.
fn flux_manifest(
    repo: &Path,
    cluster: &ModelCluster,
    fetched: &[manifests::Fetched],
) -> anyhow::Result<(String, Vec<u8>, Option<String>)> {
    let file = serve::components_file(cluster);
    if let Some(path) = std::env::var_os("L1_FLUX_MANIFEST") {
        let bytes = std::fs::read(&path)
            .with_context(|| format!("reading L1_FLUX_MANIFEST {}", Path::new(&path).display()))?;
        return Ok((
            format!(
                "L1_FLUX_MANIFEST ({}, sha256 {})",
                Path::new(&path).display(),
                manifests::digest(&bytes)
            ),
            bytes,
            file,
        ));
    }
    if let Some(f) = &file {
        if let Some(published) = fetched.iter().find(|m| m.file == *f) {
            return Ok((
                format!(
                    "{} (sha256 {}), in place of {f}",
                    published.url, published.sha256
                ),
                published.bytes.clone(),
                None,
            ));
        }
        let bytes = std::fs::read(repo.join(f)).with_context(|| format!("reading {f}"))?;
        return Ok((format!("the repository's {f}"), bytes, None));
    }
    bail!(
        "cluster {} has no gotk-components.yaml in git: set L1_FLUX_MANIFEST to Flux's install manifest (`flux install --export > flux.yaml` with the Flux version the cluster runs)",
        cluster.name
    )
}

/// The branch the sync GitRepository follows (`main` when it names none a
/// test server can serve).
fn sync_branch(cluster: &ModelCluster, source: &serve::SyncSource) -> String {
    cluster
        .tiers
        .values()
        .flat_map(|t| t.objects())
        .find(|o| {
            o.id.kind == "GitRepository"
                && o.id.name == source.id.name
                && o.id.namespace.as_deref() == Some(source.id.namespace.as_str())
        })
        .and_then(|o| o.body.str_at(&["spec", "ref", "branch"]))
        .unwrap_or_else(|| "main".to_string())
}

/// Runs the Flux mode on `repo`.
pub async fn flux_mode(
    repo: &Path,
    runtime: &Runtime,
    timing: Timing,
) -> anyhow::Result<FluxReport> {
    let original =
        Session::open(&conformance::session::RunOptions::at(repo).renderer(Choice::Native))
            .map_err(|e| anyhow!("{e}"))?;
    let name = cluster_name(&original)?;
    let cluster0 = original
        .cluster(&name)
        .map_err(|e| anyhow!("l1.cluster `{name}`: {e}"))?;
    let source = serve::sync_source(cluster0).map_err(|e| anyhow!("{e}"))?;
    let fetched = manifests::fetch_all(
        &original.declared.config.l1.manifests,
        &manifests::cache_dir(),
    )
    .map_err(|e| anyhow!("{e}"))?;
    let (flux_from, flux_bytes, replace_components) = flux_manifest(repo, cluster0, &fetched)?;
    let flux_text =
        String::from_utf8(flux_bytes.clone()).context("Flux's manifest is not UTF-8")?;
    let flux_objects = flux::objects(&flux_text, &flux_from)?;
    let mut report = FluxReport {
        cluster: name.clone(),
        ..FluxReport::default()
    };
    report
        .notes
        .push(format!("Flux installed from {flux_from}"));
    let image = conformance::l1::k3s_image(
        &original.declared.config.l1,
        original.declared.config.kubernetes_of(&name),
    );
    report
        .notes
        .push(format!("k3s image {}:{}", image.0, image.1));

    let cluster = Cluster::start(runtime, &image, std::env::var("L1_NETWORK").ok()).await?;
    let result = async {
        let network = cluster.network.clone().ok_or_else(|| {
            anyhow!("the Flux mode needs the Docker network the cluster's nodes are on, for its git server: set L1_NETWORK (k3d: k3d-<cluster>)")
        })?;
        let git = git::GitServer::start(&network).await?;
        report.notes.push(format!("git server {} at {}", git.image, git.internal));
        let outcome = async {
            let branch = sync_branch(cluster0, &source);
            let mut replace: Vec<(String, Vec<u8>, String)> = fetched
                .iter()
                .map(|f| (f.file.clone(), f.bytes.clone(), format!("{} (sha256 {})", f.url, f.sha256)))
                .collect();
            if let Some(file) = &replace_components {
                replace.push((file.clone(), flux_bytes.clone(), flux_from.clone()));
            }
            let retry = match std::env::var("L1_RETRY_INTERVAL").as_deref() {
                Ok("off") => None,
                Ok(v) => Some(v.to_string()),
                Err(_) => Some("20s".to_string()),
            };
            let dir = tempfile::Builder::new().prefix("l1-served-").tempdir()?;
            let changes = serve::Changes {
                replace,
                url: git.clone_url("repo"),
                branch: branch.clone(),
                retry,
            };
            let served = serve::serve(repo, dir.path(), cluster0, &changes).map_err(|e| anyhow!("{e}"))?;
            report.notes.extend(served.notes.iter().cloned());
            git.push(dir.path(), "repo", &branch, served.tag.as_deref())?;
            let session = Session::open(&conformance::session::RunOptions::at(dir.path()).renderer(Choice::Native)).map_err(|e| anyhow!("the served tree: {e}"))?;
            let served_cluster = session.cluster(&name).map_err(|e| anyhow!("the served tree: {e}"))?;
            let prediction: Prediction = predict(served_cluster, &session.declared.catalog, &session.declared.index, &session.bootstrap);
            report.prediction_outside = prediction.outside.clone();
            flux::install(&cluster.client, &flux_objects, timing.timeout).await?;
            // The repository's own sync objects, as served.
            let git_repository = served_cluster
                .tiers
                .values()
                .flat_map(|t| t.objects())
                .find(|o| {
                    o.id.kind == "GitRepository"
                        && o.id.name == source.id.name
                        && o.id.namespace.as_deref() == Some(source.id.namespace.as_str())
                })
                .map(|o| o.body.to_json())
                .unwrap_or_else(|| flux::git_repository(&source.id, &git.clone_url("repo"), &branch));
            api::apply_json(&cluster.client, &git_repository, api::HARNESS_MANAGER, false)
                .await
                .context("applying the sync GitRepository")?;
            let conformance::model::Entry::SyncKustomization { tier, .. } = &served_cluster.entry else {
                bail!("the served tree has no sync Kustomization");
            };
            api::apply_json(&cluster.client, &served_cluster.tiers[tier].spec.to_json(), api::HARNESS_MANAGER, false)
                .await
                .context("applying the sync Kustomization")?;
            let watched = flux::watch(&cluster.client, &prediction.tiers, timing.timeout, timing.hold).await?;
            report.ended = watched.ended.clone();
            report.helm_releases = watched.helm_releases.clone();
            let seen = |id: &conformance::model::TierId| watched.kustomizations.get(id).cloned().unwrap_or_default();
            report.comparisons = compare_all(&prediction.tiers, &seen, timing.timeout.as_secs());
            // The kstatus trials, on a cluster of their own beside the same
            // git server.
            if std::env::var("L1_KSTATUS").as_deref() != Ok("0") {
                let analysis = session.analysis(served_cluster);
                let plan = conformance::l1::plan(&analysis, &session.declared.config.l1, &session.declared.catalog);
                let subjects: Vec<(String, Result<kstatus::Subject, error::SubjectError>)> = plan
                    .assertions
                    .iter()
                    .filter_map(|a| match a {
                        conformance::l1::Assertion::RuntimeCrds {
                            trigger,
                            crds,
                            operator,
                            ..
                        } => Some((
                            kstatus_trial(&name, trigger),
                            kstatus::subject(served_cluster, trigger, operator, crds),
                        )),
                        _ => None,
                    })
                    // A trigger the repository deploys no operator for
                    // has no kstatus trial (tests/l1.rs lists none).
                    .filter(|(_, s)| s.is_ok())
                    .collect();
                if !subjects.is_empty() {
                    let second = Cluster::start(runtime, &image, Some(network.clone())).await?;
                    let run = async {
                        flux::install(&second.client, &flux_objects, timing.timeout).await?;
                        for (trial, subject) in subjects {
                            let result = match subject {
                                Ok(s) => kstatus::run(&second.client, &git, &s, timing.timeout, timing.hold).await,
                                Err(e) => kstatus::Result::Fail(e.to_string()),
                            };
                            report.kstatus.push((trial, result));
                        }
                        anyhow::Ok(())
                    }
                    .await;
                    second.stop().await;
                    run?;
                }
            }
            anyhow::Ok(())
        }
        .await;
        git.stop().await;
        outcome
    }
    .await;
    cluster.stop().await;
    result?;
    Ok(report)
}

/// The per-tier report, for the log and the nightly artifact.
pub fn render_report(r: &FluxReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "L1 Flux mode, cluster {}", r.cluster);
    for n in &r.notes {
        let _ = writeln!(out, "  {n}");
    }
    if !r.prediction_outside.is_empty() {
        let _ = writeln!(
            out,
            "not on the L1 cluster (the repository installs them outside Flux):"
        );
        for o in &r.prediction_outside {
            let _ = writeln!(out, "  {o}");
        }
    }
    let _ = writeln!(out, "watch: {}", r.ended);
    let _ = writeln!(out, "| tier | predicted | outcome | Flux |");
    let _ = writeln!(out, "|---|---|---|---|");
    for (p, o, c) in &r.comparisons {
        let flux = match o.first_ready() {
            Some(t) => format!(
                "Ready after {t}s, {} failure(s) before",
                o.failures_before_ready().len()
            ),
            None => o
                .last()
                .map(|l| format!("not Ready: {}", l.reason))
                .unwrap_or_else(|| {
                    if o.exists {
                        "no Ready condition".into()
                    } else {
                        "never created".into()
                    }
                }),
        };
        let outcome = match c.outcome {
            TrialOutcome::Pass => "pass",
            TrialOutcome::Fail => "FAIL",
            TrialOutcome::Inconclusive => "inconclusive",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {outcome} | {flux} |",
            p.label,
            p.expect.word()
        );
    }
    for (p, _, c) in &r.comparisons {
        let _ = writeln!(out, "{}: {}", p.label, c.summary);
        for n in &c.notes {
            let _ = writeln!(out, "    {n}");
        }
    }
    if !r.helm_releases.is_empty() {
        let _ = writeln!(out, "HelmReleases at the end:");
        for (name, state) in &r.helm_releases {
            let _ = writeln!(out, "  {name}: {state}");
        }
    }
    for (trial, result) in &r.kstatus {
        let _ = writeln!(out, "{trial}: {result:?}");
    }
    out
}
