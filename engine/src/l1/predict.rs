//! The Flux mode's prediction: what Flux does with each tier when it
//! reconciles the repository from an empty cluster.
//!
//! The L1 cluster is k3s with Flux's controllers and nothing else: what the
//! repository installs before Flux (its bootstrap, `catalog.preinstalled`,
//! preinstalled namespaces and objects) is not there, and the prediction
//! says so rather than pretending. The cold start is run in strict mode
//! ([`Mode::Strict`](crate::convergence::Mode::Strict)): a need nothing
//! supplies is never met, a `dependsOn` on a Kustomization that does not
//! exist is never Ready, a dependency cycle never starts, a build that
//! fails never applies. Per tier:
//!
//! * **deadlock**: never Ready. What its failure names follows from why:
//!   a kind (`no matches for kind`, the stage's dry-run in `ssa`
//!   `ApplyAllStaged`), a namespace (`namespaces "x" not found`), an object
//!   read before the build (`substituteFrom`, the source: "not found"), a
//!   dependency (`DependencyNotReady`, `checkDependencies`), a health check
//!   (`HealthCheckFailed`, `checkHealth`), the build (`BuildFailed`).
//! * **race**: Ready in the end, but the first attempts may fail on a need
//!   ordered or gated too weakly (a `Race` or `Ungated` verdict):
//!   kustomize-controller retries after `GetRetryInterval` until the
//!   supplier has applied.
//! * **converges**: Ready with no dry-run failure.
//! * **suspended**: `spec.suspend: true`, never reconciled (`Reconcile`
//!   returns at once).
//! * **never applied**: its Kustomization is rendered by a tier that never
//!   applies, so the object never exists.
//! * **not predicted**: a tier whose content was not checked (another
//!   source, a remote base): Flux's result is reported, not judged.

use std::fmt;

use crate::convergence::{Blocked, ClusterAnalysis, Need, Verdict, kind_text};
use crate::model::{Cluster, TierId, TierState};
use crate::provenance::Catalog;
use crate::provenance::bootstrap::Bootstrap;
use crate::repo::RepoIndex;

/// The prediction for one cluster.
#[derive(Debug, Clone)]
pub struct Prediction {
    /// The cluster's name.
    pub cluster: String,
    /// Every tier, in the order Flux can first reconcile them.
    pub tiers: Vec<TierPrediction>,
    /// What the repository installs outside Flux, which the L1 cluster does
    /// not have.
    pub outside: Vec<String>,
}

/// The prediction for one tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierPrediction {
    /// The tier's Flux Kustomization.
    pub tier: TierId,
    /// The name reports use.
    pub label: String,
    /// What Flux is expected to do with the tier.
    pub expect: Expect,
    /// The model's reasoning, in words, shown beside Flux's events when the
    /// two disagree.
    pub why: String,
}

/// What Flux is expected to do with a tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Ready, with no dry-run failure before.
    Converges,
    /// Ready in the end; attempts before may fail on any of these.
    Race {
        /// What the early attempts may fail with.
        symptoms: Vec<Symptom>,
    },
    /// Never Ready; its failure names this.
    Deadlock {
        /// What the failure names.
        symptom: Symptom,
    },
    /// Never reconciled.
    Suspended,
    /// Its Kustomization is never created: `parent` never applies.
    NeverApplied {
        /// The tier whose build holds this Kustomization.
        parent: TierId,
    },
    /// Not judged: Flux's result is reported.
    NotPredicted {
        /// Why the tier is not judged, in words.
        why: String,
    },
}

impl Expect {
    /// One word, for the plan and the report.
    pub fn word(&self) -> &'static str {
        match self {
            Expect::Converges => "converges",
            Expect::Race { .. } => "race",
            Expect::Deadlock { .. } => "deadlock",
            Expect::Suspended => "suspended",
            Expect::NeverApplied { .. } => "never-applied",
            Expect::NotPredicted { .. } => "not-predicted",
        }
    }
}

/// What a failed reconciliation names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Symptom {
    /// The dry-run: `no matches for kind "Kind"` (or, for a group the API
    /// server does not serve at all, "could not find the requested
    /// resource" for it).
    MissingKind {
        /// The kind's API group (empty for the core group).
        group: String,
        /// The missing kind.
        kind: String,
    },
    /// The dry-run: `namespaces "name" not found`.
    MissingNamespace(String),
    /// Read before the build: `Kind/name` "not found".
    MissingObject {
        /// The missing object's kind.
        kind: String,
        /// The missing object's name.
        name: String,
    },
    /// `DependencyNotReady`: a dependency that is never Ready (or does not
    /// exist).
    Dependency(TierId),
    /// `HealthCheckFailed`: what its health check waits for is never
    /// Ready.
    Health {
        /// The tier the health check waits for.
        waits_for: TierId,
    },
    /// `BuildFailed`: the kustomize build fails.
    Build,
}

impl fmt::Display for Symptom {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Symptom::MissingKind { group, kind } => {
                write!(f, "no matches for kind {}", kind_text(group, kind))
            }
            Symptom::MissingNamespace(ns) => write!(f, "namespaces \"{ns}\" not found"),
            Symptom::MissingObject { kind, name } => write!(f, "{kind} {name} not found"),
            Symptom::Dependency(t) => write!(f, "DependencyNotReady on {t}"),
            Symptom::Health { waits_for } => {
                write!(f, "HealthCheckFailed (waits for {waits_for})")
            }
            Symptom::Build => write!(f, "BuildFailed"),
        }
    }
}

/// The catalog as the L1 cluster has it: nothing installed outside Flux.
pub fn environment(catalog: &Catalog) -> Catalog {
    let mut c = catalog.clone();
    c.preinstalled.clear();
    c.preinstalled_namespaces.clear();
    c.preinstalled_objects.clear();
    c
}

/// Predicts every tier of `cluster` on an L1 cluster. `catalog` and
/// `bootstrap` are the repository's: what they install outside Flux is
/// listed in [`Prediction::outside`] and left out of the cold start.
pub fn predict(
    cluster: &Cluster,
    catalog: &Catalog,
    index: &RepoIndex,
    bootstrap: &Bootstrap,
) -> Prediction {
    let mut outside: Vec<String> = bootstrap
        .of_cluster(&cluster.name)
        .map(|i| format!("{} ({}, {})", i.provides.describe(), i.via, i.at))
        .collect();
    outside.extend(
        catalog
            .preinstalled
            .iter()
            .map(|g| format!("{g} (catalog.preinstalled)")),
    );
    outside.extend(
        catalog
            .preinstalled_namespaces
            .iter()
            .map(|n| format!("namespace {n} (catalog.preinstalled_namespaces)")),
    );
    outside.extend(
        catalog
            .preinstalled_objects
            .iter()
            .map(|o| format!("{o} (catalog.preinstalled_objects)")),
    );
    // SOPS keys: kustomize-controller reads the decryption Secret before
    // it builds (`internal/decryptor` `ImportKeys`); the repository never
    // holds it, so on the L1 cluster such a tier cannot build.
    let mut keys: Vec<String> = cluster
        .tiers
        .values()
        .filter_map(|t| {
            let name = t
                .spec
                .str_at(&["spec", "decryption", "secretRef", "name"])?;
            Some(format!(
                "Secret {}/{name} (the SOPS key, created outside the repository)",
                t.id.namespace
            ))
        })
        .collect();
    keys.sort();
    keys.dedup();
    outside.extend(keys);
    let mut env = environment(catalog);
    // The harness creates the entry's source itself (`l1-cluster` serves the
    // repository to it).
    for t in cluster.tiers.values().filter(|t| t.parent.is_none()) {
        env.preinstalled_objects.push(t.source_ref.to_string());
    }
    let none = Bootstrap::default();
    let analysis = ClusterAnalysis::of(cluster, &env, index, &none, None);
    let tiers = predict_tiers(&analysis);
    Prediction {
        cluster: cluster.name.clone(),
        tiers,
        outside,
    }
}

/// The per-tier prediction from an analysis of the L1 environment.
pub fn predict_tiers(a: &ClusterAnalysis) -> Vec<TierPrediction> {
    let cluster = a.cluster;
    let strict = a.strict();
    let label = |t: &TierId| cluster.tier_label(t);
    let mut out = Vec::new();
    for id in &a.order.sequence {
        let Some(tier) = cluster.tiers.get(id) else {
            continue;
        };
        let chain = crate::convergence::simulate::chain_text(cluster, &strict.chain(id));
        let (expect, why) = if !strict.ready(id) {
            match strict.blocked_by(id) {
                Some(Blocked::Suspended) => (
                    Expect::Suspended,
                    "spec.suspend: true: kustomize-controller never reconciles it".to_string(),
                ),
                Some(Blocked::Parent(p)) => (
                    Expect::NeverApplied { parent: p.clone() },
                    format!(
                        "its Kustomization is applied by {}, which {chain}",
                        label(p)
                    ),
                ),
                Some(Blocked::DependsOn(d)) => (
                    Expect::Deadlock {
                        symptom: Symptom::Dependency(d.clone()),
                    },
                    format!("it {chain}"),
                ),
                Some(Blocked::Missing(d)) => (
                    Expect::Deadlock {
                        symptom: Symptom::Dependency(d.clone()),
                    },
                    format!("it depends on {d}, which is not a Kustomization of this cluster"),
                ),
                Some(Blocked::Needs(r)) => {
                    let symptom = symptom_of(&r.need);
                    let why = match r.suppliers.iter().find(|s| s.tier != *id) {
                        Some(_) => format!("it {chain}"),
                        None if r.suppliers.is_empty() => format!(
                            "it needs {}, which nothing on the L1 cluster supplies",
                            r.what
                        ),
                        None => format!(
                            "it needs {}, which only its own tier supplies, too late for its own dry-run",
                            r.what
                        ),
                    };
                    (Expect::Deadlock { symptom }, why)
                }
                Some(Blocked::WaitsFor(c)) => (
                    Expect::Deadlock {
                        symptom: Symptom::Health {
                            waits_for: c.clone(),
                        },
                    },
                    format!("it {chain}"),
                ),
                Some(Blocked::BuildFails) => (
                    Expect::Deadlock {
                        symptom: Symptom::Build,
                    },
                    match &tier.state {
                        TierState::RenderFailed(f) => {
                            format!("its build fails: {}", f.message)
                        }
                        _ => "its build fails".to_string(),
                    },
                ),
                None => (
                    Expect::NotPredicted {
                        why: "the model cannot tell why it would not become Ready".into(),
                    },
                    String::new(),
                ),
            }
        } else if !tier.remote_bases.is_empty() {
            (
                Expect::NotPredicted {
                    why:
                        "only its local part was checked (its remote bases are never fetched here)"
                            .into(),
                },
                String::new(),
            )
        } else if let TierState::NotChecked(why) = &tier.state {
            (
                Expect::NotPredicted {
                    why: format!("its content was not checked ({why})"),
                },
                String::new(),
            )
        } else {
            let symptoms = races(a, id);
            if symptoms.is_empty() {
                (
                    Expect::Converges,
                    "everything it needs is there before its first attempt".to_string(),
                )
            } else {
                let listed: Vec<String> = symptoms.iter().map(|s| s.to_string()).collect();
                (
                    Expect::Race { symptoms },
                    format!(
                        "nothing orders it after what supplies {}: early attempts may fail until that is applied",
                        listed.join(", ")
                    ),
                )
            }
        };
        out.push(TierPrediction {
            tier: id.clone(),
            label: label(id),
            expect,
            why,
        });
    }
    out
}

fn symptom_of(need: &Need) -> Symptom {
    match need {
        Need::Kind { group, kind } => Symptom::MissingKind {
            group: group.clone(),
            kind: kind.clone(),
        },
        Need::Namespace(ns) => Symptom::MissingNamespace(ns.clone()),
        Need::Reference { kind, name } => Symptom::MissingObject {
            kind: kind.clone(),
            name: name.clone(),
        },
    }
}

/// The needs of a tier that a first attempt may find missing.
fn races(a: &ClusterAnalysis, id: &TierId) -> Vec<Symptom> {
    let racy = |v: &Verdict| matches!(v, Verdict::Race { .. } | Verdict::Ungated { .. });
    let mut out = Vec::new();
    for u in a
        .uses
        .iter()
        .filter(|u| u.tier.id == *id && racy(&u.verdict))
    {
        out.push(Symptom::MissingKind {
            group: u.object.id.group.clone(),
            kind: u.object.id.kind.clone(),
        });
    }
    for n in a
        .namespaces
        .iter()
        .filter(|n| n.tier.id == *id && racy(&n.verdict))
    {
        out.push(Symptom::MissingNamespace(n.namespace.clone()));
    }
    for r in a
        .references
        .iter()
        .filter(|r| r.tier.id == *id && r.object.is_none() && racy(&r.verdict))
    {
        out.push(Symptom::MissingObject {
            kind: r.reference.kind.to_string(),
            name: r.reference.name.clone(),
        });
    }
    out.sort();
    out.dedup();
    out
}

/// The prediction as text (`conformance l1-plan`).
pub fn render(p: &Prediction) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Flux mode: cluster {} reconciled by Flux from an empty k3s (nothing installed outside Flux)",
        p.cluster
    );
    if !p.outside.is_empty() {
        let _ = writeln!(
            out,
            "not on the L1 cluster (the repository installs them outside Flux):"
        );
        for o in &p.outside {
            let _ = writeln!(out, "  {o}");
        }
    }
    let _ = writeln!(out, "tiers:");
    for t in &p.tiers {
        let detail = match &t.expect {
            Expect::Converges => String::new(),
            Expect::Race { symptoms } => {
                let s: Vec<String> = symptoms.iter().map(|s| s.to_string()).collect();
                format!(": may first fail with {}", s.join("; "))
            }
            Expect::Deadlock { symptom } => format!(": never Ready, fails with {symptom}"),
            Expect::Suspended => ": never reconciled".into(),
            Expect::NeverApplied { parent } => {
                format!(": never created ({} never applies)", p_label(p, parent))
            }
            Expect::NotPredicted { why } => format!(": {why}"),
        };
        let _ = writeln!(
            out,
            "  {}::l1::flux::{}: {}{detail}",
            p.cluster,
            t.label,
            t.expect.word()
        );
        if !t.why.is_empty() && !matches!(t.expect, Expect::Converges) {
            let _ = writeln!(out, "      because {}", t.why);
        }
    }
    out
}

fn p_label(p: &Prediction, id: &TierId) -> String {
    p.tiers
        .iter()
        .find(|t| t.tier == *id)
        .map_or_else(|| id.to_string(), |t| t.label.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::RepoIndex;

    fn prediction(files: &[(&str, &str)]) -> Prediction {
        let index = RepoIndex::from_memory(files);
        let model = crate::discover::discover_with(
            &index,
            &crate::render::native::Native,
            &crate::discover::Declared::default(),
        );
        let cluster = model.clusters.first().expect("a cluster");
        predict(cluster, Catalog::embedded(), &index, &Bootstrap::default())
    }

    fn expect_of<'p>(p: &'p Prediction, tier: &str) -> &'p Expect {
        &p.tiers
            .iter()
            .find(|t| t.label == tier)
            .unwrap_or_else(|| panic!("no tier {tier}: {p:?}"))
            .expect
    }

    const SYNC: &str = "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: 'https://example.com/repo', ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 10m, path: ./clusters/prod, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
";

    fn ks(name: &str, path: &str, extra: &str) -> String {
        format!(
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  interval: 10m\n  path: {path}\n  prune: true\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n{extra}"
        )
    }

    #[test]
    fn a_cycle_is_a_deadlock_on_its_dependency() {
        let tiers = format!(
            "{}{}",
            ks("a", "./a", "  dependsOn: [{name: b}]\n"),
            ks("b", "./b", "  dependsOn: [{name: a}]\n")
        );
        let p = prediction(&[
            ("clusters/prod/flux-system/gotk-sync.yaml", SYNC),
            ("clusters/prod/tiers.yaml", &tiers),
            (
                "a/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n",
            ),
            (
                "b/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: default}\n",
            ),
        ]);
        assert_eq!(expect_of(&p, "flux-system"), &Expect::Converges);
        assert!(
            matches!(expect_of(&p, "a"), Expect::Deadlock { symptom: Symptom::Dependency(t) } if t.name == "b"),
            "{p:?}"
        );
        assert!(matches!(
            expect_of(&p, "b"),
            Expect::Deadlock {
                symptom: Symptom::Dependency(_)
            }
        ));
    }

    #[test]
    fn a_kind_nothing_supplies_is_a_deadlock_and_its_dependents_wait() {
        let tiers = format!(
            "{}{}",
            ks("app", "./app", ""),
            ks("after", "./after", "  dependsOn: [{name: app}]\n")
        );
        let p = prediction(&[
            ("clusters/prod/flux-system/gotk-sync.yaml", SYNC),
            ("clusters/prod/tiers.yaml", &tiers),
            (
                "app/w.yaml",
                "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n",
            ),
            (
                "after/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n",
            ),
        ]);
        assert_eq!(
            expect_of(&p, "app"),
            &Expect::Deadlock {
                symptom: Symptom::MissingKind {
                    group: "example.com".into(),
                    kind: "Widget".into()
                }
            }
        );
        assert!(matches!(
            expect_of(&p, "after"),
            Expect::Deadlock { symptom: Symptom::Dependency(t) } if t.name == "app"
        ));
    }

    #[test]
    fn an_unordered_namespace_is_a_race_and_an_ordered_one_converges() {
        let tiers = format!(
            "{}{}{}",
            ks("ns", "./ns", ""),
            ks("racer", "./racer", ""),
            ks("ordered", "./ordered", "  dependsOn: [{name: ns}]\n")
        );
        let cm = |n: &str| {
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}, namespace: team}}\n")
        };
        let p = prediction(&[
            ("clusters/prod/flux-system/gotk-sync.yaml", SYNC),
            ("clusters/prod/tiers.yaml", &tiers),
            (
                "ns/ns.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n",
            ),
            ("racer/cm.yaml", &cm("r")),
            ("ordered/cm.yaml", &cm("o")),
        ]);
        assert_eq!(
            expect_of(&p, "racer"),
            &Expect::Race {
                symptoms: vec![Symptom::MissingNamespace("team".into())]
            }
        );
        assert_eq!(expect_of(&p, "ordered"), &Expect::Converges);
        assert_eq!(expect_of(&p, "ns"), &Expect::Converges);
    }

    #[test]
    fn suspended_tiers_and_what_they_apply() {
        let tiers = ks("parent", "./parent", "  suspend: true\n");
        let child = ks("child", "./child", "");
        let p = prediction(&[
            ("clusters/prod/flux-system/gotk-sync.yaml", SYNC),
            ("clusters/prod/tiers.yaml", &tiers),
            ("parent/child.yaml", &child),
            (
                "child/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n",
            ),
        ]);
        assert_eq!(expect_of(&p, "parent"), &Expect::Suspended);
        assert!(matches!(
            expect_of(&p, "child"),
            Expect::NeverApplied { parent } if parent.name == "parent"
        ));
        let text = render(&p);
        assert!(text.contains("prod::l1::flux::parent: suspended"), "{text}");
        assert!(
            text.contains("prod::l1::flux::child: never-applied"),
            "{text}"
        );
    }

    #[test]
    fn what_the_bootstrap_installs_is_missing_on_the_l1_cluster() {
        let tiers = ks("app", "./app", "");
        let files = [
            ("clusters/prod/flux-system/gotk-sync.yaml", SYNC),
            ("clusters/prod/tiers.yaml", tiers.as_str()),
            (
                "app/w.yaml",
                "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n",
            ),
        ];
        let index = RepoIndex::from_memory(&files);
        let model = crate::discover::discover_with(
            &index,
            &crate::render::native::Native,
            &crate::discover::Declared::default(),
        );
        let cluster = &model.clusters[0];
        let mut catalog = Catalog::embedded().clone();
        catalog.preinstalled.push("example.com".into());
        let p = predict(cluster, &catalog, &index, &Bootstrap::default());
        assert!(matches!(
            expect_of(&p, "app"),
            Expect::Deadlock {
                symptom: Symptom::MissingKind { .. }
            }
        ));
        assert_eq!(
            p.outside,
            vec!["example.com (catalog.preinstalled)".to_string()]
        );
    }

    #[test]
    fn a_tier_without_its_sops_key_or_its_source_never_builds() {
        let tiers = format!(
            "{}{}{}",
            ks(
                "secrets",
                "./secrets",
                "  decryption: {provider: sops, secretRef: {name: sops-age}}\n"
            ),
            ks("after", "./after", "  dependsOn: [{name: secrets}]\n"),
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: other, namespace: flux-system}\nspec: {interval: 10m, path: ./, prune: true, sourceRef: {kind: OCIRepository, name: made-by-terraform}}\n"
        );
        let cm = |n: &str| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}, namespace: default}}\n"
            )
        };
        let p = prediction(&[
            ("clusters/prod/flux-system/gotk-sync.yaml", SYNC),
            ("clusters/prod/tiers.yaml", &tiers),
            ("secrets/cm.yaml", &cm("s")),
            ("after/cm.yaml", &cm("a")),
        ]);
        // The entry's own source is the harness's: it converges.
        assert_eq!(expect_of(&p, "flux-system"), &Expect::Converges);
        assert!(
            matches!(expect_of(&p, "secrets"), Expect::Deadlock { symptom: Symptom::MissingObject { name, .. } } if name == "sops-age"),
            "{p:?}"
        );
        assert!(matches!(
            expect_of(&p, "after"),
            Expect::Deadlock { symptom: Symptom::Dependency(t) } if t.name == "secrets"
        ));
        assert!(
            matches!(expect_of(&p, "other"), Expect::Deadlock { symptom: Symptom::MissingObject { name, .. } } if name == "made-by-terraform"),
            "{p:?}"
        );
        assert!(
            p.outside
                .iter()
                .any(|o| o.starts_with("Secret flux-system/sops-age (the SOPS key")),
            "{:?}",
            p.outside
        );
    }
}
