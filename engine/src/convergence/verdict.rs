//! Verdicts: whether something a tier needs (a kind, a namespace, a
//! referenced object) is there when the tier is reconciled on a cold
//! cluster, and if not, whether Flux's retries get it there.
//!
//! Two questions, answered by two models:
//!
//! * *Eventually* ([`super::simulate`]): does the supplier ever apply on a
//!   cold start? If not, the need is a **deadlock**, and the chain of
//!   reasons says why (the supplier depends on the consumer, is rendered by
//!   it, needs something from it, is suspended, …).
//! * *At the first attempt* ([`super::order`]): is the supplier applied (and,
//!   for a kind an operator creates, Ready with a health check that sees
//!   the operator) before the consumer starts? If so it is **available**.
//!   If it is ordered but not gated, the consumer races the operator
//!   (**ungated**); if it is not ordered at all, the consumer's dry-run fails
//!   and kustomize-controller retries it after `GetRetryInterval` until the
//!   supplier has applied: a **race**, which converges.

use super::health::{self, Check, Gate};
use super::order::{Order, TierSet};
use super::simulate::{Simulation, Step};
pub use super::supplier::{Level, Runtime, Supplier};
use crate::model::{Cluster, TierId};

/// Why a supplier ordered before the consumer does not prove the kind
/// exists when the consumer starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ungated {
    /// The consumer is rendered by the supplier (or below it) and starts as
    /// soon as it is applied, whatever the supplier's health.
    RenderedBy,
    /// The consumer depends on the supplier (or a tier whose Ready includes
    /// it), but the supplier's Ready does not wait for the trigger.
    NoCheck,
    /// The supplier's Ready waits for the trigger, but kstatus reads the
    /// trigger as Current as soon as it exists.
    Unreadable(CheckKind),
    /// The supplier is applied before the consumer starts, but nothing
    /// orders the consumer after the supplier's Ready.
    NotReady,
}

/// [`Check`], ordered (for [`Verdict`]'s derive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CheckKind {
    /// `spec.wait: true`.
    Wait,
    /// A `spec.healthChecks` entry.
    HealthCheck,
}

impl From<Check> for CheckKind {
    fn from(c: Check) -> Self {
        match c {
            Check::Wait => CheckKind::Wait,
            Check::HealthCheck => CheckKind::HealthCheck,
        }
    }
}

/// Why a need is never met.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Deadlock {
    /// The only supplier is a runtime trigger in the consumer's own tier:
    /// the stage's dry-run fails before the trigger is applied.
    SameTier,
    /// The consumer reads it (sourceRef, substituteFrom) before it builds,
    /// and only its own output has it.
    OwnOutput,
    /// The supplier never applies on a cold start: the chain says why,
    /// starting at the supplier. `loops` when the chain leads back to the
    /// consumer (the supplier can only apply after the consumer).
    Never {
        /// The supplier that never applies.
        supplier: TierId,
        /// Why the supplier never applies, one step per reason, starting at it.
        chain: Vec<Step>,
        /// Whether the chain leads back to the consumer.
        loops: bool,
    },
    /// The supplier never applies, but because of a deadlock further up
    /// that is reported where it is (a tier whose needs loop back to it):
    /// fixing that one fixes this.
    Downstream {
        /// The supplier that never applies.
        supplier: TierId,
        /// Why the supplier never applies, one step per reason, starting at it.
        chain: Vec<Step>,
    },
}

/// Whether a need is met on a cold cluster, best first (a need with several
/// suppliers takes the best verdict).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Met at the first attempt: the supplier is applied (and, for a kind an operator
    /// creates, Ready with a check that sees it) before the consumer starts.
    Available,
    /// Ordered after the supplier, but the supplier's Ready does not prove
    /// the kind exists: the first attempt races the operator, a retry wins.
    Ungated {
        /// The tier the consumer is ordered after.
        supplier: TierId,
        /// Why its Ready does not prove the kind exists.
        why: Ungated,
    },
    /// Not ordered after the supplier: fails until the supplier has
    /// applied, then converges on a retry. `possible`: the supplier is a
    /// tier that was not checked, which may or may not provide it.
    Race {
        /// The tier that supplies the need once it has applied.
        supplier: TierId,
        /// Whether the supplier is an unchecked tier that may not provide it at all.
        possible: bool,
    },
    /// Never converges.
    Deadlock(Deadlock),
    /// Nothing supplies it.
    Unknown,
}

impl Verdict {
    /// How good the verdict is, best first, whatever it is about.
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Verdict::Available => 0,
            Verdict::Ungated { .. } => 1,
            Verdict::Race {
                possible: false, ..
            } => 2,
            Verdict::Race { possible: true, .. } => 3,
            Verdict::Deadlock(
                Deadlock::SameTier
                | Deadlock::OwnOutput
                | Deadlock::Never { .. }
                | Deadlock::Downstream { .. },
            ) => 4,
            Verdict::Unknown => 5,
        }
    }
}

/// What judging a need reads.
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    /// The cluster the needs are in.
    pub cluster: &'a Cluster,
    /// The cold-start order of the cluster's tiers.
    pub order: &'a Order,
    /// The cold start as it stands.
    pub live: &'a Simulation,
    /// The cold start with every suspended tier resumed: a tier that only
    /// suspension keeps from starting is judged as its owner will run it.
    pub resumed: &'a Simulation,
    /// Tiers that were not checked (another source) or did not build: they
    /// may supply anything.
    pub unchecked: &'a [TierId],
}

/// The consumer of a need, as its suppliers are judged for it.
struct Consumer<'a> {
    /// The consumer's tier.
    id: &'a TierId,
    /// The simulation it is judged by ([`Judge::simulation`]).
    sim: &'a Simulation,
    /// Tiers applied before it starts.
    applied: TierSet<'a>,
    /// Tiers Ready before it starts.
    ready: TierSet<'a>,
    /// Whether its own [`Level::Applied`] objects serve the need.
    self_ok: bool,
}

/// A supplier that never supplies in the simulation: why, as the chain of
/// what blocks it; a deadlock that never resolves when the chain loops
/// back to the consumer or ends at a suspension.
fn never(c: &Consumer, s: &Supplier) -> Verdict {
    let sim = c.sim;
    let mut chain = sim.chain(&s.tier);
    // Applied, but its HelmRelease waits for one that
    // never installs.
    if let Level::Made(m) = &s.level
        && sim.applied(&s.tier)
        && let Some(blocked) = m.after.iter().find(|t| !sim.applied(t))
    {
        chain = vec![Step::MadeAfter {
            tier: s.tier.clone(),
            from: m.from.to_string(),
            on: blocked.clone(),
        }];
        chain.extend(sim.chain(blocked));
    }
    if let Level::Runtime(r) = &s.level
        && sim.applied(&s.tier)
        && let Some(blocked) = r.after.iter().find(|t| !sim.applied(t))
    {
        chain = vec![Step::ReleaseAfter {
            tier: s.tier.clone(),
            release: r.trigger.name.clone(),
            on: blocked.clone(),
        }];
        chain.extend(sim.chain(blocked));
    }
    // A chain that leads back to the consumer ends there.
    let back = chain.iter().position(|step| step.mentions(c.id));
    let loops = back.is_some();
    if let Some(at) = back {
        chain.truncate(at + 1);
    }
    let suspended = matches!(chain.last(), Some(Step::Suspended { .. }));
    if loops || suspended {
        Verdict::Deadlock(Deadlock::Never {
            supplier: s.tier.clone(),
            chain,
            loops,
        })
    } else {
        Verdict::Deadlock(Deadlock::Downstream {
            supplier: s.tier.clone(),
            chain,
        })
    }
}

impl Judge<'_> {
    /// The simulation a consumer is judged by.
    pub fn simulation(&self, consumer: &TierId) -> &Simulation {
        if !self.live.started(consumer) && self.resumed.started(consumer) {
            self.resumed
        } else {
            self.live
        }
    }

    /// The verdict on a need of `consumer` that `suppliers` can serve.
    /// `self_ok`: whether the consumer's own [`Level::Applied`] objects serve
    /// it (an object reference does; what is read before the build does
    /// not).
    pub fn judge(&self, consumer: &TierId, suppliers: &[Supplier], self_ok: bool) -> Verdict {
        self.judge_best(consumer, suppliers, self_ok).0
    }

    /// [`Self::judge`], with the index of the supplier the verdict is about
    /// (`None` when none is).
    pub(crate) fn judge_best(
        &self,
        consumer: &TierId,
        suppliers: &[Supplier],
        self_ok: bool,
    ) -> (Verdict, Option<usize>) {
        let c = Consumer {
            id: consumer,
            sim: self.simulation(consumer),
            applied: self.order.applied_before(consumer),
            ready: self.order.ready_before(consumer),
            self_ok,
        };
        let mut best: Option<(Verdict, usize)> = None;
        for (k, s) in suppliers.iter().enumerate() {
            let verdict = self.supplier_verdict(&c, s);
            // The best kind of verdict; among equals, the first supplier
            // (suppliers come best-ranked first).
            if best.as_ref().is_none_or(|(b, _)| verdict.rank() < b.rank()) {
                best = Some((verdict, k));
            }
        }
        let applied = c.applied;
        // Only charts merely matched by name, and not available through
        // them: a tier that was not checked and is ordered before may
        // provide it as well.
        let probable_only = suppliers.iter().all(|s| s.probable);
        if let Some((verdict, k)) = best {
            if verdict != Verdict::Available
                && probable_only
                && self.unchecked.iter().any(|t| applied.contains(t))
            {
                return (Verdict::Available, None);
            }
            return (verdict, Some(k));
        }
        // Nothing checked supplies it; a tier that was not checked may.
        if self.unchecked.iter().any(|t| applied.contains(t)) {
            return (Verdict::Available, None);
        }
        // Not a Kustomization the consumer applies itself: it could not
        // provide anything in time.
        let verdict = match self
            .unchecked
            .iter()
            .find(|t| *t != consumer && !self.renders(consumer, t))
        {
            Some(t) => Verdict::Race {
                supplier: t.clone(),
                possible: true,
            },
            None => Verdict::Unknown,
        };
        (verdict, None)
    }

    /// The verdict on one supplier of a consumer's need.
    fn supplier_verdict(&self, c: &Consumer, s: &Supplier) -> Verdict {
        let (sim, own) = (c.sim, s.tier == *c.id);
        match &s.level {
            Level::Stage1 if own => Verdict::Available,
            Level::Applied if own && c.self_ok => Verdict::Available,
            Level::Applied | Level::Made(_) if own && !c.self_ok => {
                Verdict::Deadlock(Deadlock::OwnOutput)
            }
            Level::Runtime(_) if own => Verdict::Deadlock(Deadlock::SameTier),
            level => {
                let eventually = match level {
                    Level::Stage1 => sim.started(&s.tier),
                    Level::Applied => sim.applied(&s.tier),
                    Level::Made(m) => {
                        sim.applied(&s.tier) && m.after.iter().all(|t| sim.applied(t))
                    }
                    Level::Runtime(r) => {
                        sim.applied(&s.tier) && r.after.iter().all(|t| sim.applied(t))
                    }
                };
                if !eventually {
                    never(c, s)
                } else if let Level::Made(m) = level
                    && let Some(late) = m
                        .after
                        .iter()
                        .find(|t| **t != *c.id && !c.applied.contains(t))
                {
                    // Made once its store or credentials exist, which
                    // nothing orders before the consumer.
                    Verdict::Race {
                        supplier: late.clone(),
                        possible: s.probable,
                    }
                } else if own {
                    Verdict::Available
                } else if !c.applied.contains(&s.tier) {
                    Verdict::Race {
                        supplier: s.tier.clone(),
                        possible: s.probable,
                    }
                } else if let Level::Runtime(runtime) = level {
                    self.gated(c, s, runtime)
                } else {
                    Verdict::Available
                }
            }
        }
    }

    /// A runtime supplier applied before the consumer: available when the
    /// consumer waits for its tier's Ready and that Ready covers what it
    /// creates, else why not.
    fn gated(&self, c: &Consumer, s: &Supplier, runtime: &Runtime) -> Verdict {
        let Runtime {
            how,
            trigger,
            created,
            ..
        } = runtime;
        let tier = &self.cluster.tiers[&s.tier];
        let gate = health::gate(tier, trigger, (&created.0, &created.1), how.kstatus_reads());
        let why = match gate {
            _ if !c.ready.contains(&s.tier) => {
                if self.renders(&s.tier, c.id) {
                    Some(Ungated::RenderedBy)
                } else {
                    Some(Ungated::NotReady)
                }
            }
            Gate::Proven => None,
            Gate::Unreadable(check) => Some(Ungated::Unreadable(check.into())),
            Gate::None => Some(Ungated::NoCheck),
        };
        match why {
            None => Verdict::Available,
            Some(why) => Verdict::Ungated {
                supplier: s.tier.clone(),
                why,
            },
        }
    }

    /// A reference the consumer's objects make at run time (a HelmRelease's
    /// dependsOn, an issuer), served by a Kustomization the consumer applies
    /// itself: no loop, the supplier applies once the consumer has. When
    /// the consumer never applies, for a root of its own, the need waits on
    /// that root, downstream of it. `None` when that is not the case.
    pub(crate) fn after_own_apply(&self, consumer: &TierId, verdict: &Verdict) -> Option<Verdict> {
        let Verdict::Deadlock(Deadlock::Never {
            supplier,
            chain,
            loops: true,
        }) = verdict
        else {
            return None;
        };
        if !self.renders(consumer, supplier) {
            return None;
        }
        let sim = self.simulation(consumer);
        let own = sim.chain(consumer);
        let ends_at_root = matches!(
            own.last(),
            Some(Step::Itself { .. } | Step::Suspended { .. } | Step::BuildFails { .. })
        );
        let through_supplier = own
            .iter()
            .any(|step| step.tier() == supplier || step.mentions(supplier));
        if !ends_at_root || through_supplier {
            return None;
        }
        let mut chain = chain.clone();
        chain.extend(own);
        Some(Verdict::Deadlock(Deadlock::Downstream {
            supplier: supplier.clone(),
            chain,
        }))
    }

    /// Whether `ancestor` applies `tier` (directly or through children).
    fn renders(&self, ancestor: &TierId, tier: &TierId) -> bool {
        self.cluster.applies(ancestor, tier)
    }
}
