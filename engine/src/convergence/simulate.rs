//! The cold start, run to its end: which tiers ever start, apply and become
//! Ready, however many retries it takes, and for those that never do, why.
//!
//! Every tier is retried for ever (kustomize-controller requeues a failed
//! reconcile after `GetRetryInterval`, a tier whose dependencies are not
//! Ready every `--requeue-dependency`), so order does not matter here, only
//! whether each condition can ever hold. A tier
//!
//! * **starts** (builds, and applies its stage 1: CRDs, Namespaces,
//!   ClusterRoles) once it is not suspended (`Reconcile` returns at once for
//!   a suspended Kustomization), its parent has applied it, every
//!   dependency is Ready (`checkDependencies`), and what it reads before the
//!   build (its source, its `substituteFrom`) exists;
//! * **applies** (its later stages) once every kind and namespace those
//!   stages use exists (`ssa` `ApplyAllStaged` dry-runs a stage as a whole);
//! * is **Ready** once it applied and the Kustomizations its health check
//!   covers are Ready (`checkHealth`).
//!
//! The least fixpoint of those rules is what a cold start reaches. The
//! model is optimistic about what it cannot see: a tier that was not checked
//! or did not build is taken to apply, and a need nothing supplies (reported
//! on its own by `crd-unavailable`, and often a gap in what the tool knows)
//! and a dependency that does not exist (`dependency-missing`) are taken as
//! met, so one problem reported on its own does not cascade into claims
//! about every tier after it. What is certain is not: a tier in a
//! dependency cycle, a suspended tier, and a tier that waits for itself (a
//! kind its own trigger creates, an object only its own output defines)
//! never get there, and neither does anything that needs them; those
//! findings are reported as consequences of their root
//! ([`crate::convergence::Root`]).

use std::collections::BTreeMap;

use super::supplier::{Level, Supplier};
use crate::model::{Cluster, TierId, TierState};

/// When in a tier's reconcile a need must be met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the build (its source, `substituteFrom`): the tier does not
    /// start without it.
    Build,
    /// At the dry-run of the stage that uses it: the tier does not apply.
    Apply,
    /// Before the tier is Ready: what an object its Ready waits for waits
    /// for in turn (a HelmRelease's dependsOn release, which helm-controller
    /// installs it after). The tier applies, but is not Ready without it.
    Ready,
}

/// One need of a tier, for the simulation.
#[derive(Debug, Clone)]
pub struct Requirement {
    /// When in the tier's reconcile it must be met.
    pub phase: Phase,
    /// What is needed, in words ("external-secrets.io/ExternalSecret").
    pub what: String,
    /// The same, as data (what an API server's error names).
    pub need: Need,
    /// Whether a target nobody provides fails the tier (`false`: an
    /// optional `substituteFrom`, skipped when absent).
    pub required: bool,
    /// The tiers that can serve it.
    pub suppliers: Vec<Supplier>,
}

/// What a requirement is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Need {
    /// A kind: its CRD must be served.
    Kind {
        /// The kind's API group (empty for the core group).
        group: String,
        /// The kind's name (`ExternalSecret`).
        kind: String,
    },
    /// A namespace must exist.
    Namespace(String),
    /// An object the Kustomization reads before it builds (its source, a
    /// `substituteFrom`): `Kind/namespace/name`.
    Reference {
        /// The object's kind (`Secret`, `GitRepository`).
        kind: String,
        /// The object's name.
        name: String,
    },
}

/// How a cold start treats what it cannot see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Optimistic (the rules): a need nothing supplies, a missing
    /// dependency and the edges of a cycle are taken as met, so one problem
    /// reported on its own does not cascade.
    Rules,
    /// As the API server will have it (L1's prediction): a need nothing
    /// supplies is never met, a dependency that does not exist is never
    /// Ready, a cycle never starts. Only what cannot be seen (a tier not
    /// checked, a probable supplier) stays optimistic.
    Strict,
}

/// One reason in a chain: why a tier never gets further.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// `spec.suspend: true`.
    Suspended {
        /// The suspended tier.
        tier: TierId,
    },
    /// Its build fails (strict mode only: the rules report it on its own).
    BuildFails {
        /// The tier that fails to build.
        tier: TierId,
    },
    /// Its Kustomization is applied by `parent`, which never applies.
    RenderedBy {
        /// The tier whose Kustomization `parent` renders.
        tier: TierId,
        /// The tier that renders its Kustomization.
        parent: TierId,
    },
    /// It depends on `on`, which never becomes Ready.
    DependsOn {
        /// The dependent tier.
        tier: TierId,
        /// The tier it depends on.
        on: TierId,
    },
    /// It needs `what`, which only `from` supplies.
    Needs {
        /// The tier with the need.
        tier: TierId,
        /// The need, in words ("external-secrets.io/ExternalSecret").
        what: String,
        /// The only tier that supplies it.
        from: TierId,
    },
    /// Its Ready waits for `child`, which never becomes Ready.
    WaitsFor {
        /// The tier whose Ready waits.
        tier: TierId,
        /// The Kustomization its health check waits for.
        child: TierId,
    },
    /// It needs `what`, which only its own tier supplies, too late: a kind
    /// its own runtime trigger creates after the stage's dry-run
    /// ([`crate::convergence::Deadlock::SameTier`]), or, `before_build`, an
    /// object it reads before it builds and only its own output defines
    /// ([`crate::convergence::Deadlock::OwnOutput`]). The root of a chain.
    Itself {
        /// The tier that waits for itself.
        tier: TierId,
        /// The need, in words.
        what: String,
        /// Whether it is read before the build (a source, substituteFrom).
        before_build: bool,
    },
    /// Its `from` makes the object a consumer needs (an ExternalSecret its
    /// Secret) only once what `on` applies (the store, its credentials)
    /// exists.
    MadeAfter {
        /// The tier that applies `from`.
        tier: TierId,
        /// The object the need is made from, `Kind/namespace/name`.
        from: String,
        /// The tier its prerequisite comes from.
        on: TierId,
    },
    /// Its HelmRelease `release` installs only once a HelmRelease it
    /// depends on, in `on`, is Ready (helm-controller's `dependsOn`).
    ReleaseAfter {
        /// The tier of the HelmRelease.
        tier: TierId,
        /// The HelmRelease's name.
        release: String,
        /// The tier of the HelmRelease it depends on.
        on: TierId,
    },
}

impl Step {
    /// The tier this step is about.
    pub fn tier(&self) -> &TierId {
        match self {
            Step::Suspended { tier }
            | Step::BuildFails { tier }
            | Step::RenderedBy { tier, .. }
            | Step::DependsOn { tier, .. }
            | Step::Needs { tier, .. }
            | Step::WaitsFor { tier, .. }
            | Step::Itself { tier, .. }
            | Step::MadeAfter { tier, .. }
            | Step::ReleaseAfter { tier, .. } => tier,
        }
    }

    /// The next tier in the chain, if the step leads to one.
    pub fn next(&self) -> Option<&TierId> {
        match self {
            Step::RenderedBy { parent: t, .. }
            | Step::DependsOn { on: t, .. }
            | Step::Needs { from: t, .. }
            | Step::WaitsFor { child: t, .. }
            | Step::MadeAfter { on: t, .. }
            | Step::ReleaseAfter { on: t, .. } => Some(t),
            Step::Suspended { .. } | Step::BuildFails { .. } | Step::Itself { .. } => None,
        }
    }

    /// Whether the step leads to `tier`.
    pub(crate) fn mentions(&self, tier: &TierId) -> bool {
        self.next() == Some(tier)
    }

    /// The step as a predicate of its tier: "depends on apps", "is
    /// suspended".
    pub(crate) fn predicate(&self, cluster: &Cluster) -> String {
        let l = |t: &TierId| cluster.tier_label(t);
        match self {
            Step::Suspended { .. } => "is suspended (spec.suspend: true)".into(),
            Step::BuildFails { .. } => "fails to build".into(),
            Step::RenderedBy { parent, .. } => format!("is applied by {}", l(parent)),
            Step::DependsOn { on, .. } => format!("depends on {}", l(on)),
            Step::Needs { what, from, .. } => format!("needs {what} from {}", l(from)),
            Step::WaitsFor { child, .. } => {
                format!("waits for {} to be Ready (wait: true)", l(child))
            }
            Step::Itself {
                what,
                before_build: false,
                ..
            } => format!(
                "needs {what}, which only its own tier creates, after the dry-run that needs it, so it never applies"
            ),
            Step::Itself {
                what,
                before_build: true,
                ..
            } => format!(
                "reads {what} before it builds, which only its own output defines, so it never builds"
            ),
            Step::MadeAfter { from, on, .. } => format!(
                "makes it from {from} only once what {} applies (its store or credentials) exists",
                l(on)
            ),
            Step::ReleaseAfter { release, on, .. } => format!(
                "installs HelmRelease/{release} only once the HelmRelease it depends on in {} is Ready",
                l(on)
            ),
        }
    }
}

/// A chain as text: "depends on apps, which needs X from infra, which is
/// suspended".
pub fn chain_text(cluster: &Cluster, chain: &[Step]) -> String {
    const SHOWN: usize = 6;
    let mut parts: Vec<String> = chain
        .iter()
        .take(SHOWN)
        .map(|s| s.predicate(cluster))
        .collect();
    if chain.len() > SHOWN {
        parts.push(format!("… ({} more steps)", chain.len() - SHOWN));
    }
    parts.join(", which ")
}

/// Why a tier got no further.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Blocker {
    Suspended,
    Parent(usize),
    DependsOn(usize),
    /// A requirement (its index) with no supplier that gets there.
    Needs(usize),
    WaitsFor(usize),
    /// A `dependsOn` that names no Kustomization of the cluster (strict).
    Missing(TierId),
    /// Its build fails (strict).
    Build,
}

/// Why a tier gets no further, as [`Simulation::blocked_by`] tells it.
#[derive(Debug, Clone, Copy)]
pub enum Blocked<'s> {
    /// `spec.suspend: true`.
    Suspended,
    /// The tier that applies its Kustomization never applies.
    Parent(&'s TierId),
    /// A dependency never becomes Ready.
    DependsOn(&'s TierId),
    /// A dependency names no Kustomization of the cluster (strict mode).
    Missing(&'s TierId),
    /// A need nothing meets: before the build ([`Phase::Build`]) or at the
    /// dry-run ([`Phase::Apply`]).
    Needs(&'s Requirement),
    /// Its health check waits for a tier that never becomes Ready.
    WaitsFor(&'s TierId),
    /// Its build fails (strict mode).
    BuildFails,
}

/// What each tier of one run is, by index, fixed for the whole run.
struct Facts {
    /// Strict: a dependsOn on a Kustomization that does not exist.
    missing: Vec<Option<TierId>>,
    /// The tier that applies it.
    parent: Vec<Option<usize>>,
    /// The tiers it depends on.
    deps: Vec<Vec<usize>>,
    /// The tiers its health checks wait for.
    waits: Vec<Vec<usize>>,
    /// Tiers whose content is unknown apply (optimistically) once they
    /// start, and are Ready once they apply.
    opaque: Vec<bool>,
    /// Strict: a build that fails as Flux's would never applies.
    fails: Vec<bool>,
    /// Suspended, and not taken as resumed.
    suspended: Vec<bool>,
}

impl Facts {
    /// The facts of `ids`' tiers (`index`: the position of each).
    fn of(
        cluster: &Cluster,
        ids: &[TierId],
        index: &BTreeMap<TierId, usize>,
        strict: bool,
        resume: bool,
    ) -> Facts {
        let tiers: Vec<&crate::model::Tier> = ids.iter().map(|id| &cluster.tiers[id]).collect();
        let edges = crate::graph::wait_edges(cluster);
        Facts {
            missing: tiers
                .iter()
                .map(|t| {
                    t.depends_on
                        .iter()
                        .find(|d| strict && !index.contains_key(&d.target))
                        .map(|d| d.target.clone())
                })
                .collect(),
            parent: tiers
                .iter()
                .map(|t| t.applied_by().and_then(|p| index.get(p).copied()))
                .collect(),
            deps: tiers
                .iter()
                .map(|t| {
                    t.depends_on
                        .iter()
                        .filter_map(|d| index.get(&d.target).copied())
                        .collect()
                })
                .collect(),
            waits: tiers
                .iter()
                .map(|t| {
                    edges[&t.id]
                        .iter()
                        .filter_map(|c| index.get(*c).copied())
                        .collect()
                })
                .collect(),
            opaque: tiers
                .iter()
                .map(|t| !matches!(t.state, TierState::Rendered(_)))
                .collect(),
            fails: tiers
                .iter()
                .map(|t| strict && matches!(t.state, TierState::RenderFailed(_)))
                .collect(),
            suspended: tiers.iter().map(|t| t.suspend && !resume).collect(),
        }
    }
}

/// The outcome of one cold start.
#[derive(Debug, Clone)]
pub struct Simulation {
    ids: Vec<TierId>,
    index: BTreeMap<TierId, usize>,
    started: Vec<bool>,
    applied: Vec<bool>,
    ready: Vec<bool>,
    blockers: Vec<Option<Blocker>>,
    requirements: Vec<Vec<Requirement>>,
    /// The tier that applies each tier's Kustomization.
    parent: Vec<Option<usize>>,
    strict: bool,
}

impl Simulation {
    /// Runs the cold start of `cluster`. `requirements`: each tier's needs;
    /// `resume`: treat suspended tiers as resumed.
    pub fn run(
        cluster: &Cluster,
        sequence: &[TierId],
        requirements: BTreeMap<TierId, Vec<Requirement>>,
        resume: bool,
    ) -> Simulation {
        Simulation::run_mode(cluster, sequence, requirements, resume, Mode::Rules)
    }

    /// [`Self::run`] in a chosen [`Mode`].
    pub(crate) fn run_mode(
        cluster: &Cluster,
        sequence: &[TierId],
        mut requirements: BTreeMap<TierId, Vec<Requirement>>,
        resume: bool,
        mode: Mode,
    ) -> Simulation {
        let strict = mode == Mode::Strict;
        let ids: Vec<TierId> = cluster.tiers.keys().cloned().collect();
        let index: BTreeMap<TierId, usize> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), i))
            .collect();
        let n = ids.len();
        let requirements: Vec<Vec<Requirement>> = ids
            .iter()
            .map(|id| requirements.remove(id).unwrap_or_default())
            .collect();
        let facts = Facts::of(cluster, &ids, &index, strict, resume);
        let order: Vec<usize> = sequence
            .iter()
            .filter_map(|id| index.get(id).copied())
            .collect();
        let mut sim = Simulation {
            ids,
            index,
            started: vec![false; n],
            applied: vec![false; n],
            ready: vec![false; n],
            blockers: vec![None; n],
            requirements,
            parent: facts.parent.clone(),
            strict,
        };
        loop {
            let mut changed = false;
            for &i in &order {
                changed |= sim.step(i, &facts);
            }
            if !changed {
                break;
            }
        }
        for i in 0..n {
            sim.blockers[i] = sim.blocker(i, &facts);
        }
        sim
    }

    /// Moves tier `i` on as far as it can go now (started, applied,
    /// Ready); whether it moved.
    fn step(&mut self, i: usize, facts: &Facts) -> bool {
        let mut changed = false;
        if !self.started[i]
            && !facts.suspended[i]
            && facts.missing[i].is_none()
            && facts.parent[i].is_none_or(|p| self.applied[p])
            && facts.deps[i].iter().all(|&d| self.ready[d])
            && self.unmet(i, Phase::Build).is_none()
        {
            self.started[i] = true;
            changed = true;
        }
        if self.started[i]
            && !self.applied[i]
            && !facts.fails[i]
            && (facts.opaque[i] || self.unmet(i, Phase::Apply).is_none())
        {
            self.applied[i] = true;
            changed = true;
        }
        if self.applied[i]
            && !self.ready[i]
            && facts.waits[i].iter().all(|&c| self.ready[c])
            && self.unmet(i, Phase::Ready).is_none()
        {
            self.ready[i] = true;
            changed = true;
        }
        changed
    }

    /// What keeps tier `i` from becoming Ready once the run has settled:
    /// the first thing that stops the step it stopped at.
    fn blocker(&self, i: usize, facts: &Facts) -> Option<Blocker> {
        if self.ready[i] {
            None
        } else if !self.started[i] {
            if facts.suspended[i] {
                Some(Blocker::Suspended)
            } else if let Some(t) = &facts.missing[i] {
                Some(Blocker::Missing(t.clone()))
            } else if let Some(p) = facts.parent[i].filter(|&p| !self.applied[p]) {
                Some(Blocker::Parent(p))
            } else if let Some(&d) = facts.deps[i].iter().find(|&&d| !self.ready[d]) {
                Some(Blocker::DependsOn(d))
            } else {
                self.unmet(i, Phase::Build).map(Blocker::Needs)
            }
        } else if !self.applied[i] {
            if facts.fails[i] {
                Some(Blocker::Build)
            } else {
                self.unmet(i, Phase::Apply).map(Blocker::Needs)
            }
        } else {
            facts.waits[i]
                .iter()
                .find(|&&c| !self.ready[c])
                .map(|&c| Blocker::WaitsFor(c))
                .or_else(|| self.unmet(i, Phase::Ready).map(Blocker::Needs))
        }
    }

    /// The first requirement of tier `i` in `phase` that no supplier meets.
    fn unmet(&self, i: usize, phase: Phase) -> Option<usize> {
        self.requirements[i]
            .iter()
            .position(|r| r.phase == phase && !self.met(i, r))
    }

    fn met(&self, i: usize, r: &Requirement) -> bool {
        // Nothing supplies it, or only probable suppliers (matched by
        // name): reported on its own (`crd-unavailable`), taken as met in
        // the rules' mode so it does not cascade. Only the tier itself, in
        // a way it never can (a runtime trigger in the same tier, its own
        // output read before the build): never met, in either mode.
        //
        // A probable supplier the tier applies itself (a Kustomization in
        // its own output, not checked or matched by name) is no such
        // guess: whatever it provides exists only after the tier applied,
        // so it is judged like a certain supplier and never serves the
        // tier's own build or dry-run.
        let probable = |s: &Supplier| {
            s.probable && self.index.get(&s.tier).is_none_or(|&j| !self.applies(i, j))
        };
        let own = |s: &Supplier| self.index.get(&s.tier) == Some(&i) || probable(s);
        if r.suppliers.iter().all(own) {
            // Not required: nothing fails for want of it, except, on the
            // strict cold start, what a Kustomization reads before it
            // builds (no source, no SOPS key: the build never starts).
            let fails_without = r.required || (self.strict && r.phase == Phase::Build);
            if !fails_without {
                return true;
            }
            // Only a probable supplier, or the tier's own objects applied
            // before the stage that needs them, can meet it.
            let served = r.suppliers.iter().any(|s| {
                probable(s)
                    || (self.index.get(&s.tier) == Some(&i)
                        && match s.level {
                            Level::Stage1 => true,
                            Level::Applied | Level::Made(_) => r.phase != Phase::Build,
                            Level::Runtime(_) => false,
                        })
            });
            // The tier is its own only (certain) supplier, too late: it
            // waits for itself, on either cold start, and so does every
            // tier that needs what it would apply. Nothing at all supplying
            // it stays optimistic in the rules' mode (reported on its own).
            let itself = r
                .suppliers
                .iter()
                .any(|s| !s.probable && self.index.get(&s.tier) == Some(&i));
            return served || (!self.strict && !itself);
        }
        r.suppliers.iter().any(|s| {
            let Some(&j) = self.index.get(&s.tier) else {
                return true;
            };
            match (&s.level, j == i) {
                (Level::Stage1, true) => true,
                (Level::Stage1, false) => self.started[j],
                (Level::Applied, true) => r.phase != Phase::Build,
                (Level::Applied, false) => self.applied[j],
                (Level::Made(m), own) => {
                    (own && r.phase != Phase::Build || !own && self.applied[j])
                        && m.after
                            .iter()
                            .all(|t| self.index.get(t).is_none_or(|&k| self.applied[k]))
                }
                (Level::Runtime(rt), false) => {
                    self.applied[j]
                        && rt
                            .after
                            .iter()
                            .all(|t| self.index.get(t).is_none_or(|&k| self.applied[k]))
                }
                (Level::Runtime(_), true) => false,
            }
        })
    }

    fn at(&self, id: &TierId) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// Whether tier `i` applies tier `j`'s Kustomization, directly or
    /// through Kustomizations it applies: [`Cluster::applies`] on the
    /// run's indices, for the fixpoint's inner loop.
    fn applies(&self, i: usize, j: usize) -> bool {
        let mut at = self.parent[j];
        for _ in 0..self.parent.len() {
            match at {
                Some(p) if p == i => return true,
                Some(p) => at = self.parent[p],
                None => return false,
            }
        }
        false
    }

    /// Whether the tier's reconcile ever starts (its stage 1 applies).
    pub fn started(&self, id: &TierId) -> bool {
        self.at(id).is_none_or(|i| self.started[i])
    }

    /// Whether the tier ever applies all its stages.
    pub fn applied(&self, id: &TierId) -> bool {
        self.at(id).is_none_or(|i| self.applied[i])
    }

    /// Whether the tier ever becomes Ready.
    pub fn ready(&self, id: &TierId) -> bool {
        self.at(id).is_none_or(|i| self.ready[i])
    }

    /// Why `id` never gets to Ready, step by step from `id`, until a root
    /// cause or a tier already in the chain (a loop).
    pub fn chain(&self, id: &TierId) -> Vec<Step> {
        let mut out = Vec::new();
        let Some(mut i) = self.at(id) else {
            return out;
        };
        let mut seen = vec![false; self.ids.len()];
        while !seen[i] {
            seen[i] = true;
            let tier = self.ids[i].clone();
            let step = match &self.blockers[i] {
                None => break,
                Some(Blocker::Suspended) => Step::Suspended { tier },
                Some(Blocker::Parent(p)) => Step::RenderedBy {
                    tier,
                    parent: self.ids[*p].clone(),
                },
                Some(Blocker::DependsOn(d)) => Step::DependsOn {
                    tier,
                    on: self.ids[*d].clone(),
                },
                Some(Blocker::WaitsFor(c)) => Step::WaitsFor {
                    tier,
                    child: self.ids[*c].clone(),
                },
                Some(Blocker::Missing(on)) => Step::DependsOn {
                    tier,
                    on: on.clone(),
                },
                Some(Blocker::Build) => Step::BuildFails { tier },
                Some(Blocker::Needs(r)) => {
                    let r = &self.requirements[i][*r];
                    // Another supplier that never gets there, or the tier
                    // itself, too late (the root of the chain).
                    match r.suppliers.iter().find(|s| s.tier != tier) {
                        Some(s) => Step::Needs {
                            tier,
                            what: r.what.clone(),
                            from: s.tier.clone(),
                        },
                        None if r.suppliers.iter().any(|s| s.tier == tier && !s.probable) => {
                            Step::Itself {
                                tier,
                                what: r.what.clone(),
                                before_build: r.phase == Phase::Build,
                            }
                        }
                        None => break,
                    }
                }
            };
            let next = step.next().and_then(|t| self.at(t));
            out.push(step);
            match next {
                Some(j) => i = j,
                None => break,
            }
        }
        out
    }

    /// The immediate reason `id` never gets to Ready (`None` when it does,
    /// or is not in the cluster).
    pub fn blocked_by(&self, id: &TierId) -> Option<Blocked<'_>> {
        let i = self.at(id)?;
        Some(match self.blockers[i].as_ref()? {
            Blocker::Suspended => Blocked::Suspended,
            Blocker::Parent(p) => Blocked::Parent(&self.ids[*p]),
            Blocker::DependsOn(d) => Blocked::DependsOn(&self.ids[*d]),
            Blocker::Missing(t) => Blocked::Missing(t),
            Blocker::Build => Blocked::BuildFails,
            Blocker::Needs(r) => Blocked::Needs(&self.requirements[i][*r]),
            Blocker::WaitsFor(c) => Blocked::WaitsFor(&self.ids[*c]),
        })
    }

    /// Tiers that never start, with the first step of their chain.
    pub(crate) fn never_started(&self) -> impl Iterator<Item = &TierId> {
        self.ids
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.started[*i])
            .map(|(_, id)| id)
    }
}
