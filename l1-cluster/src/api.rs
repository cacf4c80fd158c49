//! Server-side apply of arbitrary objects, and the waits both modes share.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};

/// The field manager Flux's kustomize-controller applies with (the apply
/// mode imitates it).
pub const FIELD_MANAGER: &str = "kustomize-controller";

/// The field manager of what the harness itself applies (Flux's
/// components, the sync objects), as `flux install` would.
pub const HARNESS_MANAGER: &str = "conformance-l1";

/// The dynamic API for `apiVersion`/`kind`, or the API server's "no
/// matches" error.
pub async fn api_for(
    client: &Client,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
) -> anyhow::Result<Api<DynamicObject>> {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (resource, caps) = pinned_kind(client, &gvk)
        .await
        .map_err(|e| anyhow!("no matches for kind \"{kind}\" in version \"{api_version}\": {e}"))?;
    Ok(match (caps.scope, namespace) {
        (Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
        (Scope::Namespaced, Some(ns)) => Api::namespaced_with(client.clone(), ns, &resource),
        (Scope::Namespaced, None) => Api::default_namespaced_with(client.clone(), &resource),
    })
}

/// Server-side applies one object given as JSON (forcing conflicts, as
/// Flux does).
pub async fn apply_json(
    client: &Client,
    object: &serde_json::Value,
    manager: &str,
    dry_run: bool,
) -> anyhow::Result<()> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"]
        .as_str()
        .ok_or_else(|| anyhow!("{kind} without metadata.name"))?;
    let namespace = object["metadata"]["namespace"].as_str();
    let api = api_for(client, api_version, kind, namespace).await?;
    let mut params = PatchParams::apply(manager).force();
    if dry_run {
        params = params.dry_run();
    }
    api.patch(name, &params, &Patch::Apply(object)).await?;
    Ok(())
}

/// Waits until every CRD is Established.
pub async fn wait_crds(client: &Client, names: &[String], timeout: Duration) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let deadline = Instant::now() + timeout;
    for name in names {
        loop {
            if crd_established(&api, name).await? {
                break;
            }
            if Instant::now() > deadline {
                bail!(
                    "CustomResourceDefinition {name} is not Established after {}s",
                    timeout.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }
    Ok(())
}

/// Whether a CRD exists and is Established.
pub async fn crd_established(
    api: &Api<CustomResourceDefinition>,
    name: &str,
) -> anyhow::Result<bool> {
    Ok(match api.get_opt(name).await? {
        Some(crd) => crd
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True"),
        None => false,
    })
}

/// Whether a Deployment reports Available.
pub fn deployment_available(d: &Deployment) -> bool {
    d.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.type_.as_deref() == Some("Available") && c.status.as_deref() == Some("True")
            })
        })
}

/// Waits until every Deployment of `namespace` is Available.
pub async fn wait_deployments(
    client: &Client,
    namespace: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let deadline = Instant::now() + timeout;
    loop {
        let list = api.list(&ListParams::default()).await?;
        let waiting: Vec<String> = list
            .items
            .iter()
            .filter(|d| !deployment_available(d))
            .filter_map(|d| d.metadata.name.clone())
            .collect();
        if !list.items.is_empty() && waiting.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "Deployments in {namespace} not Available after {}s: {}",
                timeout.as_secs(),
                waiting.join(", ")
            );
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
}
