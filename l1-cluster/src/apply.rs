//! The apply mode (`L1_MODE=apply`): the harness applies the plan's tiers
//! itself, the way kustomize-controller does (server-side apply with field
//! manager `kustomize-controller`, stage by stage, every stage dry-run
//! first), waits for health, and checks each assertion of
//! [`conformance::l1::Plan`]. For clusters where Flux cannot be installed;
//! it confirms our reading of Flux, it cannot correct it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use conformance::l1::{Assertion, Plan, PlannedTier};
use conformance::model::Object;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, DynamicObject, ListParams, LogParams};

use crate::api::{FIELD_MANAGER, api_for, apply_json, deployment_available, wait_crds};
use crate::cluster::Cluster;

/// The outcome of each assertion, by trial name suffix. A failure is the
/// text the trial fails with (the API server's message and the operators'
/// last log lines, joined): a verdict for a person, not an error a caller
/// matches on, so it stays a `String` (libtest-mimic's `Failed` is made
/// from one).
pub type Outcomes = BTreeMap<String, Result<(), String>>;

/// Runs the plan against the cluster, in model order. Every assertion gets
/// an outcome; a failure says the tier, the stage, the object, the API
/// server's message and the operators' last log lines.
pub async fn execute(cluster: &Cluster, plan: &Plan, timeout: Duration) -> Outcomes {
    let mut outcomes = Outcomes::new();
    let client = &cluster.client;
    for tier in &plan.tiers {
        // Negative checks first: before the trigger's tier is applied, its
        // second-order kinds must not exist.
        for a in &plan.assertions {
            if let Assertion::SecondOrderRejected {
                tier: t,
                object,
                crd,
            } = a
                && *t == tier.label
            {
                let result = expect_no_matches(client, plan, object).await.map_err(|e| {
                        format!("before {t} was applied, {object} was expected to be rejected (no matches for kind: {crd} should not exist yet): {e}")
                    });
                outcomes.insert(a.name(), result);
            }
        }
        let applied = apply_tier(client, tier, timeout).await;
        let applied = match applied {
            Ok(()) => Ok(()),
            Err(e) => Err(format!("{e}{}", operator_logs(client).await)),
        };
        outcomes.insert(
            Assertion::TierApplies {
                tier: tier.label.clone(),
            }
            .name(),
            applied,
        );
        for a in &plan.assertions {
            if let Assertion::RuntimeCrds {
                tier: t,
                trigger,
                operator,
                crds,
            } = a
                && *t == tier.label
            {
                let result = match wait_crds(client, crds, timeout).await {
                    Ok(()) => Ok(()),
                    Err(e) => Err(format!(
                        "{operator} did not create its CRDs after {}/{} in {t} became healthy: {e}{}",
                        trigger.kind,
                        trigger.name,
                        operator_logs(client).await
                    )),
                };
                outcomes.insert(a.name(), result);
            }
        }
    }
    for a in &plan.assertions {
        outcomes
            .entry(a.name())
            .or_insert_with(|| Err("not reached: its tier is not in the plan".to_string()));
    }
    outcomes
}

async fn api_of(client: &Client, object: &Object) -> anyhow::Result<Api<DynamicObject>> {
    let id = &object.id;
    api_for(client, &id.api_version(), &id.kind, id.namespace.as_deref()).await
}

async fn apply_one(client: &Client, object: &Object, dry_run: bool) -> anyhow::Result<()> {
    apply_json(client, &object.body.to_json(), FIELD_MANAGER, dry_run).await
}

/// Flux's staged apply of one tier, then health.
pub async fn apply_tier(
    client: &Client,
    tier: &PlannedTier,
    timeout: Duration,
) -> anyhow::Result<()> {
    for stage in &tier.stages {
        // One dry-run error aborts the stage before anything in it is applied.
        for object in &stage.objects {
            apply_one(client, object, true).await.map_err(|e| {
                anyhow!(
                    "tier {}, stage {}, dry-run of {}: {e}",
                    tier.label,
                    stage.name,
                    object.id
                )
            })?;
        }
        for object in &stage.objects {
            apply_one(client, object, false).await.map_err(|e| {
                anyhow!(
                    "tier {}, stage {}, apply of {}: {e}",
                    tier.label,
                    stage.name,
                    object.id
                )
            })?;
        }
        // CRDs must be Established before the next stage.
        let crds: Vec<String> = stage
            .objects
            .iter()
            .filter(|o| o.id.kind == "CustomResourceDefinition")
            .map(|o| o.id.name.clone())
            .collect();
        wait_crds(client, &crds, timeout)
            .await
            .map_err(|e| anyhow!("tier {}, stage {}: {e}", tier.label, stage.name))?;
    }
    if tier.wait {
        for object in tier.stages.iter().flat_map(|s| &s.objects) {
            wait_healthy(client, object, timeout).await.map_err(|e| {
                anyhow!(
                    "tier {} (wait: true): {} not healthy: {e}",
                    tier.label,
                    object.id
                )
            })?;
        }
    }
    Ok(())
}

async fn expect_no_matches(
    client: &Client,
    plan: &Plan,
    object: &conformance::model::ObjectId,
) -> anyhow::Result<()> {
    let found = plan
        .tiers
        .iter()
        .flat_map(|t| t.stages.iter().flat_map(|s| &s.objects))
        .find(|o| o.id == *object)
        .ok_or_else(|| anyhow!("{object} is not in any planned tier"))?;
    match apply_one(client, found, true).await {
        Err(e) if e.to_string().contains("no matches for kind") => Ok(()),
        Err(e) => bail!("it failed, but not with \"no matches for kind\": {e}"),
        Ok(()) => bail!(
            "the dry-run succeeded: the kind already exists, so the model's prediction is wrong"
        ),
    }
}

/// Deployments: Available; custom resources with conditions: Ready or
/// Available; everything else: present.
async fn wait_healthy(client: &Client, object: &Object, timeout: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let healthy = if object.id.kind == "Deployment" && object.id.group == "apps" {
            let api: Api<Deployment> = Api::namespaced(
                client.clone(),
                object.id.namespace.as_deref().unwrap_or("default"),
            );
            api.get_opt(&object.id.name)
                .await?
                .is_some_and(|d| deployment_available(&d))
        } else {
            let api = api_of(client, object).await?;
            match api.get_opt(&object.id.name).await? {
                None => false,
                Some(found) => {
                    let conditions = found
                        .data
                        .pointer("/status/conditions")
                        .and_then(|c| c.as_array())
                        .cloned();
                    match conditions {
                        None => true,
                        Some(list) => list.iter().any(|c| {
                            matches!(c["type"].as_str(), Some("Ready" | "Available"))
                                && c["status"] == "True"
                        }),
                    }
                }
            }
        };
        if healthy {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("not healthy after {}s", timeout.as_secs());
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
}

/// The last log lines of every pod whose name says operator.
async fn operator_logs(client: &Client) -> String {
    let pods: Api<Pod> = Api::all(client.clone());
    let Ok(list) = pods.list(&ListParams::default()).await else {
        return String::new();
    };
    let mut out = String::new();
    for pod in list.items {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        if !name.contains("operator") {
            continue;
        }
        let api: Api<Pod> = Api::namespaced(client.clone(), &ns);
        let params = LogParams {
            tail_lines: Some(20),
            ..LogParams::default()
        };
        if let Ok(logs) = api.logs(&name, &params).await {
            out.push_str(&format!("\n--- last log lines of {ns}/{name}:\n{logs}"));
        }
    }
    out
}
