//! The Flux mode: Flux's own controllers reconcile the repository from an
//! empty cluster, and every Kustomization is watched until it is Ready or
//! `L1_TIMEOUT` passes.
//!
//! 1. Flux is installed the way `flux install` does it (`internal/utils`
//!    `Apply` in fluxcd/flux2): server-side apply of the CRDs, Namespaces
//!    and ClusterRoles first, wait until the CRDs are Established, then
//!    everything else; then wait until every controller Deployment is
//!    Available.
//! 2. The served tree ([`crate::serve`]) is pushed to the git server
//!    ([`crate::git`]) and the repository's own sync objects (the
//!    GitRepository with only its URL and credentials replaced, and the
//!    entry Kustomization) are applied. From then on it is Flux's cold
//!    start.
//! 3. Every few seconds every Kustomization's Ready condition is read and
//!    each change recorded ([`crate::observe::Observed`]), with
//!    `status.history` (Flux 2.7 and later) for the count of failed
//!    reconciliations; HelmReleases are read for the report.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::observe::{Condition, ConditionStatus, Observed, matches};
use anyhow::{Context as _, anyhow, bail};
use conformance::l1::predict::{Expect, TierPrediction};
use conformance::model::TierId;
use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};

use crate::api::{HARNESS_MANAGER, api_for, apply_json, wait_crds, wait_deployments};

/// Flux's components as JSON objects, from a multi-document manifest.
pub fn objects(text: &str, what: &str) -> anyhow::Result<Vec<serde_json::Value>> {
    let docs = conformance::yaml::parse_documents(text).map_err(|e| anyhow!("{what}: {e}"))?;
    let mut out = Vec::new();
    for doc in docs {
        let json = doc.to_json();
        if json.is_null() {
            continue;
        }
        if json["kind"] == "List" {
            if let Some(items) = json["items"].as_array() {
                out.extend(items.iter().cloned());
            }
            continue;
        }
        out.push(json);
    }
    if !out
        .iter()
        .any(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == "kustomize-controller")
    {
        bail!("{what} has no kustomize-controller Deployment: it is not Flux's install manifest");
    }
    Ok(out)
}

/// `flux install`'s two stages.
pub async fn install(
    client: &Client,
    objects: &[serde_json::Value],
    timeout: Duration,
) -> anyhow::Result<()> {
    let first = |o: &serde_json::Value| {
        matches!(
            o["kind"].as_str(),
            Some("CustomResourceDefinition" | "Namespace" | "ClusterRole")
        )
    };
    for o in objects.iter().filter(|o| first(o)) {
        apply_json(client, o, HARNESS_MANAGER, false)
            .await
            .with_context(|| describe(o))?;
    }
    let crds: Vec<String> = objects
        .iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    wait_crds(client, &crds, timeout).await?;
    for o in objects.iter().filter(|o| !first(o)) {
        apply_json(client, o, HARNESS_MANAGER, false)
            .await
            .with_context(|| describe(o))?;
    }
    let namespaces: std::collections::BTreeSet<&str> = objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .filter_map(|o| o["metadata"]["namespace"].as_str())
        .collect();
    for ns in namespaces {
        wait_deployments(client, ns, timeout).await?;
    }
    Ok(())
}

fn describe(o: &serde_json::Value) -> String {
    format!(
        "applying {}/{}",
        o["kind"].as_str().unwrap_or("?"),
        o["metadata"]["name"].as_str().unwrap_or("?")
    )
}

/// The API of a Flux kind at whichever version the installed CRD serves.
async fn flux_api(
    client: &Client,
    group: &str,
    kind: &str,
    versions: &[&str],
) -> Option<Api<DynamicObject>> {
    for v in versions {
        if let Ok(api) = api_for(client, &format!("{group}/{v}"), kind, None).await {
            return Some(api);
        }
    }
    None
}

/// What was seen of the run.
#[derive(Debug, Clone, Default)]
pub struct Watched {
    /// Everything observed of each Kustomization, by namespace and name.
    pub kustomizations: BTreeMap<TierId, Observed>,
    /// Every HelmRelease's last Ready condition, in words.
    pub helm_releases: BTreeMap<String, String>,
    /// Seconds from the sync objects' apply to the end of the watch.
    pub elapsed: u64,
    /// Why the watch ended.
    pub ended: String,
}

/// Whether a tier has shown what was predicted long enough to stop
/// watching it. `hold`: how long a tier predicted never to be Ready must
/// stay so.
fn settled(p: &TierPrediction, o: &Observed, elapsed: u64, hold: u64) -> bool {
    match &p.expect {
        Expect::Converges | Expect::Race { .. } | Expect::NotPredicted { .. } => {
            o.first_ready().is_some()
        }
        Expect::Deadlock { symptom } => {
            elapsed >= hold && o.ready.iter().any(|c| matches(symptom, c))
        }
        Expect::Suspended | Expect::NeverApplied { .. } => elapsed >= hold,
    }
}

/// Watches every Kustomization until each prediction has settled or
/// `timeout` passes.
pub async fn watch(
    client: &Client,
    predictions: &[TierPrediction],
    timeout: Duration,
    hold: Duration,
) -> anyhow::Result<Watched> {
    let start = Instant::now();
    let mut watched = Watched::default();
    let ks_api = flux_api(
        client,
        "kustomize.toolkit.fluxcd.io",
        "Kustomization",
        &["v1", "v1beta2", "v1beta1"],
    )
    .await
    .ok_or_else(|| anyhow!("the Kustomization CRD is not served: is Flux installed?"))?;
    loop {
        let elapsed = start.elapsed().as_secs();
        let list = ks_api
            .list(&ListParams::default())
            .await
            .context("listing Kustomizations")?;
        for item in list.items {
            let id = TierId::new(
                item.metadata.namespace.clone().unwrap_or_default(),
                item.metadata.name.clone().unwrap_or_default(),
            );
            let o = watched.kustomizations.entry(id.clone()).or_default();
            o.exists = true;
            o.suspended = item.data["spec"]["suspend"].as_bool().unwrap_or(false);
            if let Some(c) = ready_condition(&item.data, elapsed)
                && o.ready.last().is_none_or(|l| {
                    (l.status, &l.reason, &l.message) != (c.status, &c.reason, &c.message)
                })
            {
                eprintln!(
                    "[{elapsed:>4}s] Kustomization {id}: {:?}/{}: {}",
                    c.status, c.reason, c.message
                );
                o.ready.push(c);
            }
            if let Some(history) = item.data["status"]["history"].as_array() {
                let failed: u64 = history
                    .iter()
                    .filter(|h| h["lastReconciledStatus"] != "ReconciliationSucceeded")
                    .filter_map(|h| h["totalReconciliations"].as_u64())
                    .sum();
                o.failed_reconciliations = Some(failed);
            }
        }
        if let Some(hr_api) = flux_api(
            client,
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            &["v2", "v2beta2", "v2beta1"],
        )
        .await
            && let Ok(list) = hr_api.list(&ListParams::default()).await
        {
            for item in list.items {
                let name = format!(
                    "{}/{}",
                    item.metadata.namespace.clone().unwrap_or_default(),
                    item.metadata.name.clone().unwrap_or_default()
                );
                if let Some(c) = ready_condition(&item.data, elapsed) {
                    watched
                        .helm_releases
                        .insert(name, format!("{:?}/{}: {}", c.status, c.reason, c.message));
                }
            }
        }
        let all = predictions.iter().all(|p| {
            let o = watched
                .kustomizations
                .get(&p.tier)
                .cloned()
                .unwrap_or_default();
            settled(p, &o, elapsed, hold.as_secs())
        });
        if all {
            watched.ended = format!("every tier showed its prediction after {elapsed}s");
            watched.elapsed = elapsed;
            return Ok(watched);
        }
        if start.elapsed() >= timeout {
            watched.ended = format!("L1_TIMEOUT ({}s) passed", timeout.as_secs());
            watched.elapsed = elapsed;
            return Ok(watched);
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
}

fn ready_condition(object: &serde_json::Value, at: u64) -> Option<Condition> {
    let conditions = object["status"]["conditions"].as_array()?;
    let ready = conditions.iter().find(|c| c["type"] == "Ready")?;
    Some(Condition {
        at,
        status: ConditionStatus::parse(ready["status"].as_str().unwrap_or_default()),
        reason: ready["reason"].as_str().unwrap_or_default().to_string(),
        message: ready["message"].as_str().unwrap_or_default().to_string(),
    })
}

/// The sync GitRepository to create when the repository has none in git.
pub fn git_repository(id: &TierId, url: &str, branch: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": id.name, "namespace": id.namespace},
        "spec": {"interval": "1m", "url": url, "ref": {"branch": branch}},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flux_manifests_are_read_as_objects() {
        let text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}\n---\n---\napiVersion: v1\nkind: List\nitems:\n  - apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: kustomize-controller, namespace: flux-system}\n";
        let objects = objects(text, "flux.yaml").expect("objects");
        assert_eq!(objects.len(), 2);
        let e = super::objects(
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
            "x.yaml",
        )
        .expect_err("not Flux");
        assert!(e.to_string().contains("not Flux's install manifest"), "{e}");
    }

    #[test]
    fn ready_conditions_are_read_from_status() {
        let o = serde_json::json!({"status": {"conditions": [
            {"type": "Reconciling", "status": "True", "reason": "Progressing", "message": "x"},
            {"type": "Ready", "status": "False", "reason": "DependencyNotReady", "message": "dependency 'flux-system/a' is not ready"}
        ]}});
        let c = ready_condition(&o, 7).expect("ready");
        assert_eq!(c.at, 7);
        assert_eq!(c.status, ConditionStatus::False);
        assert_eq!(c.reason, "DependencyNotReady");
        assert!(ready_condition(&serde_json::json!({}), 0).is_none());
    }

    #[test]
    fn a_deadlock_is_held_before_the_watch_stops() {
        let p = TierPrediction {
            tier: TierId::new("flux-system", "a"),
            label: "a".into(),
            expect: Expect::Deadlock {
                symptom: conformance::l1::predict::Symptom::Dependency(TierId::new(
                    "flux-system",
                    "b",
                )),
            },
            why: String::new(),
        };
        let o = Observed {
            exists: true,
            ready: vec![Condition {
                at: 5,
                status: ConditionStatus::False,
                reason: "DependencyNotReady".into(),
                message: "dependency 'flux-system/b' is not ready".into(),
            }],
            ..Observed::default()
        };
        assert!(!settled(&p, &o, 30, 180));
        assert!(settled(&p, &o, 200, 180));
    }
}
