//! `cold-start-race`: a tier needs a kind, a namespace or an object that an
//! unordered tier provides. On a cold start it fails (a kind or namespace
//! the dry-run needs) or waits (a reference a controller resolves), and
//! converges after retries.

use super::{Context, Finding, Rule, RuleId, Severity, cold_start};

#[derive(Debug)]
pub struct ColdStartRace;

impl Rule for ColdStartRace {
    fn id(&self) -> RuleId {
        RuleId::ColdStartRace
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn summary(&self) -> &'static str {
        "a tier needs a kind, namespace or object that a tier it is not ordered after provides: on a cold start it fails (a kind, a namespace) or waits (a reference) and converges only after retries"
    }
    fn example(&self) -> &'static str {
        "ExternalSecret/grafana/admin in grafana needs externalsecrets.external-secrets.io, installed by chart external-secrets in external-secrets, but grafana is not ordered after external-secrets"
    }
    fn explain(&self) -> &'static str {
        "On a cold start kustomize-controller reconciles every Kustomization whose dependencies are Ready \
(checkDependencies), in no particular order. A tier whose objects use a kind (or namespace) another, unordered tier \
provides fails its dry-run ('no matches for kind', 'namespaces not found'; fluxcd/pkg ssa ApplyAllStaged aborts the \
stage) and is requeued after spec.retryInterval, else spec.interval (GetRetryInterval). Once the other tier has \
applied, the next attempt succeeds: the cluster converges, late by up to one retry interval per link, with failed \
reconciles and alerts on every cold start and after every prune. References resolved at runtime (a claim's storage \
class, a Certificate's issuer, a HelmRelease's chart source) do not fail the dry-run: the API server accepts the \
object, and its controller (the PV controller, cert-manager, helm-controller's getSource) retries until the target \
exists, so the object is late and a tier with wait: true is not Ready until then. The finding names the providing tier \
and the delay; the fix is a dependsOn that orders it, checked not to close a cycle (when it would, the finding says \
what to move instead). A tier that was not checked (another source) may provide a kind nothing checked provides: \
that is reported here too, as possible. Raise it to an error with `severity: {cold-start-race: error}` in \
conformance.yaml if your policy is that a cold cluster orders itself; races whose loser is harmed for good (a \
DataVolume stamped with the defaults of a StorageProfile that did not exist yet) are errors already \
(unresolved-reference)."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        cold_start::findings(cx, self)
    }
}
