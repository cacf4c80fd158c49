//! L1: the L0 model's predictions proven against a real API server.
//!
//! The plan ([`conformance::l1`]) says which tiers to apply, in which order
//! and stages, and what to assert. This crate provides the cluster (k3s in a
//! container through testcontainers, or an existing cluster named by
//! `L1_KUBECONFIG`/`L1_CONTEXT`, e.g. one made by `k3d cluster create`),
//! applies each tier the way kustomize-controller does (server-side apply
//! with field manager `kustomize-controller`, stage by stage, every stage
//! dry-run first), waits for health, and checks each assertion. Results are
//! collected in model order by [`execute`]; `tests/l1.rs` reports them as
//! libtest-mimic trials named `<cluster>::l1::<assertion>`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use conformance::l1::{Assertion, Plan, PlannedTier};
use conformance::model::Object;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams, LogParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};
use kube::{Client, Config};
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, ImageExt};
use testcontainers_modules::k3s::{K3s, KUBE_SECURE_PORT};

/// The field manager Flux's kustomize-controller applies with.
pub const FIELD_MANAGER: &str = "kustomize-controller";

/// Where the cluster comes from, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runtime {
    /// `L1_KUBECONFIG` (and optional `L1_CONTEXT`): an existing cluster.
    Kubeconfig {
        path: PathBuf,
        context: Option<String>,
    },
    /// A Docker engine for testcontainers.
    Docker,
    /// Nothing to run a cluster with.
    None(String),
}

/// Decides the runtime from the environment (no cluster is started here).
pub fn detect_runtime() -> Runtime {
    if let Some(path) = std::env::var_os("L1_KUBECONFIG") {
        return Runtime::Kubeconfig {
            path: PathBuf::from(path),
            context: std::env::var("L1_CONTEXT").ok(),
        };
    }
    let socket = std::env::var("DOCKER_HOST")
        .ok()
        .and_then(|h| h.strip_prefix("unix://").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/var/run/docker.sock"));
    let remote = std::env::var("DOCKER_HOST").is_ok_and(|h| h.starts_with("tcp://"));
    if remote || socket.exists() {
        return Runtime::Docker;
    }
    Runtime::None(format!(
        "no container runtime (no Docker socket at {}, no DOCKER_HOST) and no L1_KUBECONFIG: \
         start Docker, or create a cluster (k3d cluster create l1) and set L1_KUBECONFIG",
        socket.display()
    ))
}

/// A running cluster; dropping it stops a container that was started.
pub struct Cluster {
    pub client: Client,
    /// Kept alive for the run; `None` for an existing cluster.
    container: Option<ContainerAsync<K3s>>,
    /// The private directory k3s writes its kubeconfig to.
    _conf_dir: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field(
                "container",
                &self.container.as_ref().map(|c| c.id().to_string()),
            )
            .finish()
    }
}

impl Cluster {
    /// Connects to an existing cluster or starts k3s (`image`, `tag`).
    pub async fn start(runtime: &Runtime, image: &(String, String)) -> anyhow::Result<Cluster> {
        install_crypto_provider();
        match runtime {
            Runtime::Kubeconfig { path, context } => {
                let kubeconfig = Kubeconfig::read_from(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let options = KubeConfigOptions {
                    context: context.clone(),
                    ..KubeConfigOptions::default()
                };
                let config = Config::from_custom_kubeconfig(kubeconfig, &options).await?;
                Ok(Cluster {
                    client: Client::try_from(config)?,
                    container: None,
                    _conf_dir: None,
                })
            }
            Runtime::Docker => {
                // A private directory per run: no shared /tmp/k3s.yaml races.
                let conf_dir = tempfile::Builder::new().prefix("l1-k3s-").tempdir()?;
                let k3s = K3s::default()
                    .with_conf_mount(conf_dir.path())
                    .with_tag(image.1.clone())
                    .with_privileged(true)
                    .with_userns_mode("host")
                    .with_cmd([
                        "server",
                        "--snapshotter=native",
                        "--disable=traefik",
                        "--disable=servicelb",
                        "--disable=metrics-server",
                    ]);
                let container = k3s.start().await.context("starting k3s")?;
                let yaml = container
                    .image()
                    .read_kube_config()
                    .context("reading the k3s kubeconfig")?;
                let mut kubeconfig = Kubeconfig::from_yaml(&yaml)?;
                let port = container.get_host_port_ipv4(KUBE_SECURE_PORT).await?;
                for cluster in &mut kubeconfig.clusters {
                    if let Some(server) = cluster.cluster.as_mut().and_then(|c| c.server.as_mut()) {
                        *server = format!("https://127.0.0.1:{port}");
                    }
                }
                let config =
                    Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                        .await?;
                Ok(Cluster {
                    client: Client::try_from(config)?,
                    container: Some(container),
                    _conf_dir: Some(conf_dir),
                })
            }
            Runtime::None(reason) => bail!("{reason}"),
        }
    }

    /// Stops the container (if any) before the process exits.
    pub async fn stop(mut self) {
        if let Some(container) = self.container.take() {
            let _ = container.rm().await;
        }
    }
}

fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// The outcome of each assertion, by trial name suffix.
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

/// The dynamic API for an object, or the API server's "no matches" error.
async fn api_for(client: &Client, object: &Object) -> anyhow::Result<Api<DynamicObject>> {
    let id = &object.id;
    let gvk = GroupVersionKind::gvk(&id.group, &id.version, &id.kind);
    let (resource, caps) = pinned_kind(client, &gvk).await.map_err(|e| {
        anyhow!(
            "no matches for kind \"{}\" in version \"{}\": {e}",
            id.kind,
            id.api_version()
        )
    })?;
    Ok(match (caps.scope, &id.namespace) {
        (Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
        (Scope::Namespaced, Some(ns)) => Api::namespaced_with(client.clone(), ns, &resource),
        (Scope::Namespaced, None) => Api::default_namespaced_with(client.clone(), &resource),
    })
}

async fn apply_one(client: &Client, object: &Object, dry_run: bool) -> anyhow::Result<()> {
    let api = api_for(client, object).await?;
    let mut params = PatchParams::apply(FIELD_MANAGER).force();
    if dry_run {
        params = params.dry_run();
    }
    let body = object.body.to_json();
    api.patch(&object.id.name, &params, &Patch::Apply(&body))
        .await?;
    Ok(())
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

/// Waits until every CRD is Established and served by discovery.
pub async fn wait_crds(client: &Client, names: &[String], timeout: Duration) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let deadline = Instant::now() + timeout;
    for name in names {
        loop {
            let established = match api.get_opt(name).await? {
                Some(crd) => crd
                    .status
                    .and_then(|s| s.conditions)
                    .unwrap_or_default()
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True"),
                None => false,
            };
            if established {
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
            api.get_opt(&object.id.name).await?.is_some_and(|d| {
                d.status
                    .and_then(|s| s.conditions)
                    .unwrap_or_default()
                    .iter()
                    .any(|c| {
                        c.type_.as_deref() == Some("Available")
                            && c.status.as_deref() == Some("True")
                    })
            })
        } else {
            let api = api_for(client, object).await?;
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
