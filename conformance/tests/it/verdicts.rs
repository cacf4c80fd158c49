//! One cold-start model: `check` (the rules), `crds` and `l1-plan` read the
//! same verdicts, so on every incident fixture (broken and fixed) and the
//! reference platform they never disagree about whether a tier converges.

#![allow(clippy::unwrap_used)] // test scaffolding

use std::path::{Path, PathBuf};

use conformance::convergence::{Blocked, Deadlock, Verdict};
use conformance::l1::predict::{Expect, predict_tiers};
use conformance::render::Choice;
use conformance::session::Session;

use super::support::run;

fn repositories() -> Vec<PathBuf> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut out = vec![fixtures.join("reference-platform")];
    let mut incidents: Vec<PathBuf> = std::fs::read_dir(fixtures.join("incidents"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    incidents.sort();
    for dir in incidents {
        for variant in ["repo", "fixed"] {
            if dir.join(variant).is_dir() {
                out.push(dir.join(variant));
            }
        }
    }
    out
}

#[test]
fn check_crds_and_l1_plan_agree_on_every_fixture() {
    let mut problems = Vec::new();
    let mut tiers_seen = 0;
    for repo in repositories() {
        let Ok(session) =
            Session::open(&conformance::session::RunOptions::at(&repo).renderer(Choice::Native))
        else {
            continue; // fixtures that do not load (bad input) have no verdicts
        };
        let outcome = run(&repo);
        for cluster in &session.model.clusters {
            let a = session.analysis(cluster);
            let predicted = predict_tiers(&a);
            let judge = a.judge();
            for p in &predicted {
                tiers_seen += 1;
                let id = &p.tier;
                let label = &p.label;
                let sim = judge.simulation(id);
                let converges = sim.ready(id);
                let place = format!("{}: {}/{label}", repo.display(), cluster.name);
                // The rules' cold start says it never converges: so do L1's.
                if !converges
                    && !a.under_suspension(id)
                    && matches!(p.expect, Expect::Converges | Expect::Race { .. })
                {
                    problems.push(format!(
                        "{place}: check says it never converges, l1-plan says {}",
                        p.expect.word()
                    ));
                }
                // L1 predicts a deadlock: check reports an error on the tier
                // or on a tier its chain passes through.
                // (Unless the chain ends at a need nothing in the repository
                // supplies: the SOPS key, an object made outside it. L1's
                // cold start has none of them; the rules take them as met.)
                if matches!(
                    p.expect,
                    Expect::Deadlock { .. } | Expect::NeverApplied { .. }
                ) {
                    let strict = a.strict();
                    let chain = strict.chain(id);
                    let last = chain.last().map_or(id, |s| s.next().unwrap_or(s.tier()));
                    let unknowable = matches!(
                        strict.blocked_by(last),
                        Some(Blocked::Needs(r)) if r.suppliers.iter().all(|s| s.probable)
                    );
                    if unknowable {
                        continue;
                    }
                    let mut blamed: Vec<String> =
                        chain.iter().map(|s| cluster.tier_label(s.tier())).collect();
                    blamed.push(cluster.tier_label(last));
                    let reported = outcome.findings.iter().any(|f| {
                        f.is_error()
                            && f.cluster() == cluster.name
                            && blamed.iter().any(|b| b == f.kustomization())
                    });
                    // ... and never calls it a race that converges.
                    let converges = outcome.findings.iter().find(|f| {
                        f.cluster() == cluster.name
                            && f.kustomization() == label
                            && matches!(f.rule().as_str(), "cold-start-race" | "health-gate")
                    });
                    if let Some(f) = converges {
                        problems.push(format!(
                            "{place}: l1-plan predicts {} ({}), check says it converges: {}",
                            p.expect.word(),
                            p.why,
                            f.message()
                        ));
                    }
                    if !reported {
                        problems.push(format!(
                            "{place}: l1-plan predicts {} ({}), check reports no error on it or its chain {blamed:?}",
                            p.expect.word(),
                            p.why
                        ));
                    }
                }
            }
            // `crds` (every kind's verdict) agrees with the tier's fate.
            for u in &a.uses {
                let sim = judge.simulation(&u.tier.id);
                let place = format!(
                    "{}: {}/{} {}",
                    repo.display(),
                    cluster.name,
                    cluster.tier_label(&u.tier.id),
                    u.object.id
                );
                match &u.verdict {
                    Verdict::Deadlock(
                        Deadlock::SameTier
                        | Deadlock::OwnOutput
                        | Deadlock::Never { .. }
                        | Deadlock::Downstream { .. },
                    ) if sim.applied(&u.tier.id) => problems.push(format!(
                        "{place}: crds says deadlock, the cold start applies the tier"
                    )),
                    // A race converges only when the tier applies in the end:
                    // check reports none on a tier that never does.
                    Verdict::Race {
                        possible: false, ..
                    }
                    | Verdict::Ungated { .. }
                        if !sim.applied(&u.tier.id)
                            && !a.under_suspension(&u.tier.id)
                            && outcome.findings.iter().any(|f| {
                                f.cluster() == cluster.name
                                    && f.object() == Some(u.object.id.to_string().as_str())
                                    && matches!(
                                        f.rule().as_str(),
                                        "cold-start-race" | "health-gate"
                                    )
                            }) =>
                    {
                        problems.push(format!(
                            "{place}: check reports a race that converges, the cold start never applies the tier"
                        ))
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(tiers_seen > 100, "only {tiers_seen} tiers judged");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
