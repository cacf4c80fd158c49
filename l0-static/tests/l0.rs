//! `cargo test -p l0-static`: the static trials of one repository (see the
//! crate documentation for names and the `CONFORMANCE_REPO` switch).

use std::process::ExitCode;

use conformance::check::{CheckOptions, check};
use l0_static::{Verdict, plan, target_base, target_repo};
use libtest_mimic::{Arguments, Completion, Failed, Trial};

fn main() -> ExitCode {
    l0_static::quiet_on_closed_pipe();
    let args = Arguments::from_args();
    let repo = target_repo();
    let options = CheckOptions {
        run: conformance::session::RunOptions::at(repo.clone()),
        clusters: Vec::new(),
        base: target_base(),
        baseline: None,
    };
    let trials = match check(&options) {
        Ok(outcome) => plan(&outcome)
            .into_iter()
            .map(|trial| {
                let verdict = trial.verdict;
                Trial::ignorable_test(trial.name, move || match verdict {
                    Verdict::Pass => Ok(Completion::Completed),
                    Verdict::Ignored(reason) => Ok(Completion::ignored_with(reason)),
                    Verdict::Fail(message) => Err(Failed::from(message)),
                })
            })
            .collect(),
        // The run itself failed: one failing trial that says why, so the
        // suite can never pass by finding nothing to check.
        Err(err) => {
            let message = format!("{}: {err}", repo.display());
            vec![Trial::test("conformance::check", move || {
                Err(Failed::from(message))
            })]
        }
    };
    libtest_mimic::run(&args, trials).exit_code()
}
