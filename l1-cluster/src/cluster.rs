//! The cluster: k3s in a container (testcontainers), on a Docker network of
//! its own so that a git server container beside it is reachable from its
//! pods, or an existing cluster named by `L1_KUBECONFIG`/`L1_CONTEXT`.

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, ImageExt};
use testcontainers_modules::k3s::{K3s, KUBE_SECURE_PORT};

/// Where the cluster comes from, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runtime {
    /// `L1_KUBECONFIG` (and optional `L1_CONTEXT`): an existing cluster.
    Kubeconfig {
        /// The kubeconfig file (`L1_KUBECONFIG`).
        path: PathBuf,
        /// The context to use (`L1_CONTEXT`); the kubeconfig's current one when unset.
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

/// A running cluster; [`Cluster::stop`] removes a container that was
/// started (dropping it does too).
pub struct Cluster {
    /// A Kubernetes API client for the cluster.
    pub client: Client,
    /// The Docker network the k3s container is on (`None` for an existing
    /// cluster): a git server started on it is reachable from pods by IP.
    pub network: Option<String>,
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
            .field("network", &self.network)
            .finish()
    }
}

impl Cluster {
    /// Connects to an existing cluster or starts k3s (`image`, `tag`) on
    /// `network` (default: a network of its own). For an existing cluster,
    /// `network` names the Docker network its nodes are on, if any.
    pub async fn start(
        runtime: &Runtime,
        image: &(String, String),
        network: Option<String>,
    ) -> anyhow::Result<Cluster> {
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
                    network,
                    container: None,
                    _conf_dir: None,
                })
            }
            Runtime::Docker => {
                // A private directory per run: no shared /tmp/k3s.yaml races.
                let conf_dir = tempfile::Builder::new().prefix("l1-k3s-").tempdir()?;
                let network = network.unwrap_or_else(network_name);
                let k3s = K3s::default()
                    .with_conf_mount(conf_dir.path())
                    .with_name(image.0.clone())
                    .with_tag(image.1.clone())
                    .with_privileged(true)
                    .with_userns_mode("host")
                    .with_network(network.clone())
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
                    network: Some(network),
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

/// A network name no other run uses at the same time.
fn network_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("conformance-l1-{}-{nanos:x}", std::process::id())
}

pub(crate) fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
