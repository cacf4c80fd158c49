//! `cargo test -p l1-cluster`: the live-cluster trials.
//!
//! The repository is `CONFORMANCE_REPO` (default: the reference platform).
//! `L1_MODE` picks the mode: `flux` (default) or `apply`.
//!
//! * Flux mode: one trial `<cluster>::l1::flux::<tier>` per tier, the
//!   model's prediction (`conformance l1-plan`) against what Flux did, and
//!   one `<cluster>::l1::kstatus::<Kind>/<name>` per operator trigger.
//! * Apply mode: `<cluster>::l1::<assertion>` per assertion of the plan,
//!   plus `<cluster>::plan::non-empty`.
//!
//! With `L1_KUBECONFIG` (and optional `L1_CONTEXT`, `L1_NETWORK` for the
//! Flux mode's git server) the trials run against that cluster; otherwise
//! against k3s in a container, when Docker is available. Without either,
//! every cluster trial is ignored with the reason, and with `L1_REQUIRE=1`
//! (the nightly job) that is a failure instead, so a run can never pass by
//! skipping. A tier the environment kept from showing either way (a
//! workload that never became healthy in k3s-in-a-container) is ignored as
//! inconclusive, with the reason. `--list` prints the trials without
//! starting anything. Every cluster is stopped before the process exits.
//! `L1_REPORT=<file>` also writes the per-tier report there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use conformance::l1::{self, Plan};
use conformance::render::Choice;
use conformance::session::Session;
use l1_cluster::observe::TrialOutcome;
use l1_cluster::{
    Cluster, Runtime, Timing, cluster_name, detect_runtime, execute, flux_mode, flux_trial,
    kstatus, kstatus_trial, manifests, render_report, serve,
};
use libtest_mimic::{Arguments, Completion, Failed, Trial};

fn repo() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    match std::env::var_os("CONFORMANCE_REPO").map(PathBuf::from) {
        Some(p) if p.as_os_str().is_empty() => workspace.join("fixtures/reference-platform"),
        Some(p) if p.is_absolute() => p,
        Some(p) => std::env::var_os("PWD")
            .map(PathBuf::from)
            .map(|d| d.join(&p))
            .filter(|d| d.exists())
            .unwrap_or_else(|| workspace.join(p)),
        None => workspace.join("fixtures/reference-platform"),
    }
}

/// How each trial ended, by name; `Err(Some)` a failure, `Err(None)` not
/// decided (inconclusive: the reason in the map's second part).
type Results = BTreeMap<String, Result<(), (bool, String)>>;

fn apply_plan(repo: &Path) -> anyhow::Result<(Plan, (String, String))> {
    let session =
        Session::open(&conformance::session::RunOptions::at(repo).renderer(Choice::Native))?;
    let name = cluster_name(&session)?;
    let cluster = session
        .cluster(&name)
        .map_err(|e| anyhow::anyhow!("l1.cluster `{name}`: {e}"))?;
    let analysis = session.analysis(cluster);
    Ok((
        l1::plan(
            &analysis,
            &session.declared.config.l1,
            &session.declared.catalog,
        ),
        l1::k3s_image(
            &session.declared.config.l1,
            session.declared.config.kubernetes_of(&name),
        ),
    ))
}

/// The Flux mode's trial names, from the repository as it is.
fn flux_trials(repo: &Path) -> anyhow::Result<(String, Vec<String>)> {
    let session =
        Session::open(&conformance::session::RunOptions::at(repo).renderer(Choice::Native))?;
    let name = cluster_name(&session)?;
    let cluster = session
        .cluster(&name)
        .map_err(|e| anyhow::anyhow!("l1.cluster `{name}`: {e}"))?;
    let prediction = l1::predict::predict(
        cluster,
        &session.declared.catalog,
        &session.declared.index,
        &session.bootstrap,
    );
    let mut names: Vec<String> = prediction
        .tiers
        .iter()
        .map(|t| flux_trial(&name, &t.label))
        .collect();
    let analysis = session.analysis(cluster);
    let plan = l1::plan(
        &analysis,
        &session.declared.config.l1,
        &session.declared.catalog,
    );
    for a in &plan.assertions {
        if let l1::Assertion::RuntimeCrds {
            trigger,
            operator,
            crds,
            ..
        } = a
        {
            match kstatus::subject(cluster, trigger, operator, crds) {
                Ok(_) => names.push(kstatus_trial(&name, trigger)),
                Err(why) => eprintln!("no {} trial: {why}", kstatus_trial(&name, trigger)),
            }
        }
    }
    Ok((name, names))
}

fn runtime_handle() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn write_report(text: &str) {
    println!("{text}");
    if let Some(path) = std::env::var_os("L1_REPORT")
        && let Err(e) = std::fs::write(&path, text)
    {
        eprintln!("cannot write L1_REPORT {}: {e}", Path::new(&path).display());
    }
}

fn run_flux(repo: &Path, runtime: &Runtime, timing: Timing) -> anyhow::Result<Results> {
    let report = runtime_handle()
        .block_on(flux_mode(repo, runtime, timing))
        .map_err(|e| anyhow::anyhow!("the Flux-mode run failed: {e:#}"))?;
    write_report(&render_report(&report));
    let mut results = Results::new();
    for (p, _, c) in &report.comparisons {
        let mut text = c.summary.clone();
        for n in &c.notes {
            text.push_str(&format!("\n    {n}"));
        }
        let r = match c.outcome {
            TrialOutcome::Pass => Ok(()),
            TrialOutcome::Fail => Err((true, text)),
            TrialOutcome::Inconclusive => Err((false, text)),
        };
        results.insert(flux_trial(&report.cluster, &p.label), r);
    }
    for (trial, r) in &report.kstatus {
        let r = match r {
            kstatus::Result::Pass(_) => Ok(()),
            kstatus::Result::Fail(m) => Err((true, m.clone())),
            kstatus::Result::Inconclusive(m) => Err((false, m.clone())),
        };
        results.insert(trial.clone(), r);
    }
    Ok(results)
}

fn run_apply(repo: &Path, runtime: &Runtime, timing: Timing) -> anyhow::Result<Results> {
    // The plan of the tree with l1.manifests' published files in place.
    let original =
        Session::open(&conformance::session::RunOptions::at(repo).renderer(Choice::Native))?;
    let fetched = manifests::fetch_all(
        &original.declared.config.l1.manifests,
        &manifests::cache_dir(),
    )?;
    let replace: Vec<(String, Vec<u8>, String)> = fetched
        .iter()
        .map(|f| {
            (
                f.file.clone(),
                f.bytes.clone(),
                format!("{} (sha256 {})", f.url, f.sha256),
            )
        })
        .collect();
    let dir = tempfile::tempdir()?;
    let notes = serve::copy_with(repo, dir.path(), &replace)?;
    for n in &notes {
        println!("L1 apply mode: {n}");
    }
    let (plan, image) = apply_plan(dir.path()).map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let outcomes = runtime_handle().block_on(async {
        let cluster = Cluster::start(runtime, &image, None)
            .await
            .map_err(|e| anyhow::anyhow!("cannot start or reach the cluster: {e:#}"))?;
        let outcomes = execute(&cluster, &plan, timing.timeout).await;
        cluster.stop().await;
        anyhow::Ok(outcomes)
    })?;
    Ok(outcomes
        .into_iter()
        .map(|(name, r)| {
            (
                format!("{}::l1::{name}", plan.cluster),
                r.map_err(|m| (true, m)),
            )
        })
        .collect())
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let repo = repo();
    let apply_mode = std::env::var("L1_MODE").is_ok_and(|m| m == "apply");
    let planned = if apply_mode {
        apply_plan(&repo).map(|(plan, _)| {
            let names: Vec<String> = plan
                .assertions
                .iter()
                .map(|a| format!("{}::l1::{}", plan.cluster, a.name()))
                .collect();
            (plan.cluster.clone(), names, plan.assertions.len())
        })
    } else {
        flux_trials(&repo).map(|(c, names)| {
            let n = names.len();
            (c, names, n)
        })
    };
    let (cluster, names, assertions) = match planned {
        Ok(p) => p,
        Err(e) => {
            let message = format!("{}: cannot plan the L1 run: {e:#}", repo.display());
            return libtest_mimic::run(
                &args,
                vec![Trial::test("l1::plan", move || Err(Failed::from(message)))],
            )
            .exit_code();
        }
    };
    let required = std::env::var("L1_REQUIRE").is_ok_and(|v| v == "1");
    let runtime = detect_runtime();
    let timing = Timing::from_env();

    let mut results: Option<Results> = None;
    let mut why_not: Option<String> = None;
    if !args.list {
        if let Runtime::None(reason) = &runtime {
            why_not = Some(reason.clone());
        } else {
            let run = if apply_mode {
                run_apply(&repo, &runtime, timing)
            } else {
                run_flux(&repo, &runtime, timing)
            };
            match run {
                Ok(r) => results = Some(r),
                Err(e) => why_not = Some(e.to_string()),
            }
        }
    }
    let infrastructure_failed = matches!((&results, &why_not, &runtime), (None, Some(_), r) if !matches!(r, Runtime::None(_)));

    let mut trials = Vec::new();
    if apply_mode {
        trials.push(Trial::test(
            format!("{cluster}::plan::non-empty"),
            move || {
                if assertions == 0 {
                    Err(
                        "the L1 plan has no assertion: no runtime-catalog trigger and no l1.tiers"
                            .into(),
                    )
                } else {
                    Ok(())
                }
            },
        ));
    }
    for name in names {
        let outcome = results.as_ref().map(|r| {
            r.get(&name).cloned().unwrap_or_else(|| {
                Err((
                    true,
                    "no outcome: the tier was not in the served tree's prediction".to_string(),
                ))
            })
        });
        let reason = why_not.clone();
        trials.push(Trial::ignorable_test(name, move || {
            match (outcome, reason) {
                (Some(Ok(())), _) => Ok(Completion::Completed),
                (Some(Err((true, message))), _) => Err(Failed::from(message)),
                (Some(Err((false, message))), _) => Ok(Completion::ignored_with(message)),
                (None, Some(reason)) if infrastructure_failed || required => {
                    Err(Failed::from(if required && !infrastructure_failed {
                        format!("L1_REQUIRE=1 but {reason}")
                    } else {
                        reason
                    }))
                }
                (None, Some(reason)) => Ok(Completion::ignored_with(reason)),
                (None, None) => Ok(Completion::ignored_with("not run")),
            }
        }));
    }
    libtest_mimic::run(&args, trials).exit_code()
}
