//! `cargo test -p l1-cluster`: the live-cluster trials, named
//! `<cluster>::l1::<assertion>`, plus the `plan::…` trials that check the
//! plan itself (they need no cluster).
//!
//! The repository is `CONFORMANCE_REPO` (default: the reference platform).
//! With `L1_KUBECONFIG` (and optional `L1_CONTEXT`) the trials run against
//! that cluster; otherwise against k3s in a container, when Docker is
//! available. Without either, every cluster trial is reported as ignored
//! with the reason, and with `L1_REQUIRE=1` (the nightly job) that is a
//! failure instead, so a run can never pass by skipping. `--list` prints the
//! plan's trials without starting anything. The cluster is started once,
//! shared by all trials, and stopped before the process exits.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use conformance::l1::{self, Plan};
use conformance::render::Choice;
use conformance::session::Session;
use l1_cluster::{Cluster, Runtime, detect_runtime, execute};
use libtest_mimic::{Arguments, Completion, Failed, Trial};

fn repo() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    match std::env::var_os("CONFORMANCE_REPO").map(PathBuf::from) {
        Some(p) if p.is_absolute() => p,
        Some(p) => std::env::var_os("PWD")
            .map(PathBuf::from)
            .map(|d| d.join(&p))
            .filter(|d| d.exists())
            .unwrap_or_else(|| workspace.join(p)),
        None => workspace.join("fixtures/reference-platform"),
    }
}

fn plan_for(repo: &Path) -> anyhow::Result<(Plan, (String, String))> {
    let session = Session::open(repo, Some(Choice::Native))?;
    let name = session
        .config
        .l1
        .cluster
        .clone()
        .or_else(|| session.model.clusters.first().map(|c| c.name.clone()))
        .ok_or_else(|| anyhow::anyhow!("no cluster"))?;
    let cluster = session
        .cluster(&name)
        .map_err(|e| anyhow::anyhow!("l1.cluster `{name}`: {e}"))?;
    let analysis = session.analysis(cluster);
    Ok((
        l1::plan(&analysis, &session.config, &session.catalog),
        l1::k3s_image(&session.config, &name),
    ))
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let repo = repo();
    let (plan, image) = match plan_for(&repo) {
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
    let listing = args.list;
    let timeout = Duration::from_secs(
        std::env::var("L1_TIMEOUT")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(600),
    );

    // Run the whole plan once, in model order, before reporting.
    let mut outcomes = None;
    let mut start_error = None;
    if !listing {
        if let Runtime::None(reason) = &runtime {
            start_error = Some(reason.clone());
        } else {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            rt.block_on(async {
                match Cluster::start(&runtime, &image).await {
                    Ok(cluster) => {
                        outcomes = Some(execute(&cluster, &plan, timeout).await);
                        cluster.stop().await;
                    }
                    Err(e) => {
                        start_error = Some(format!("cannot start or reach the cluster: {e:#}"))
                    }
                }
            });
        }
    }

    let mut trials = Vec::new();
    // The plan's own checks: it is never empty for a repository with runtime triggers.
    let assertions = plan.assertions.len();
    trials.push(Trial::test(
        format!("{}::plan::non-empty", plan.cluster),
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
    for assertion in &plan.assertions {
        let name = format!("{}::l1::{}", plan.cluster, assertion.name());
        let outcome = outcomes.as_ref().map(|o| {
            o.get(&assertion.name())
                .cloned()
                .unwrap_or(Err("no outcome".into()))
        });
        let why_not = start_error.clone();
        trials.push(Trial::ignorable_test(name, move || {
            match (outcome, why_not) {
                (Some(Ok(())), _) => Ok(Completion::Completed),
                (Some(Err(message)), _) => Err(Failed::from(message)),
                (None, Some(reason)) if required => {
                    Err(Failed::from(format!("L1_REQUIRE=1 but {reason}")))
                }
                (None, Some(reason)) => Ok(Completion::ignored_with(reason)),
                (None, None) => Ok(Completion::ignored_with("not run")),
            }
        }));
    }
    libtest_mimic::run(&args, trials).exit_code()
}
