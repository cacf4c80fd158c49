//! The git server source-controller pulls from: Gitea in a container on the
//! cluster's Docker network, pinned by digest, serving smart HTTP without
//! authentication for reads (go-git, Flux's git client, cannot clone the
//! dumb protocol, and an anonymous public repository needs no Secret). The
//! served tree is committed with the host's `git` and pushed through the
//! container's mapped port; pods clone it by the container's IP on the
//! network (k3s's CoreDNS cannot resolve Docker's container names).

use std::path::Path;

use anyhow::{Context as _, anyhow, bail};
use testcontainers::core::{CmdWaitFor, ContainerPort, ExecCommand, WaitFor};
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, GenericImage, ImageExt};

/// The Gitea image: `gitea/gitea:1.24.6`, pinned by digest. `L1_GIT_IMAGE`
/// (`name:tag@sha256:…`) overrides it.
pub const IMAGE: (&str, &str) = (
    "gitea/gitea",
    "1.24.6@sha256:2edc102cbb636ae1ddac5fa0c715aa5b03079dee13ac6800b2cef6d4e912e718",
);

const HTTP: u16 = 3000;
const USER: &str = "conformance";
const PASSWORD: &str = "conformance-l1-only";

/// A running git server.
pub struct GitServer {
    container: ContainerAsync<GenericImage>,
    /// The address pods use (`http://<ip>:3000`).
    pub internal: String,
    /// The address the host pushes to (`http://127.0.0.1:<port>`).
    external: String,
    /// The Gitea image run (`name:tag`).
    pub image: String,
}

impl std::fmt::Debug for GitServer {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("GitServer")
            .field("internal", &self.internal)
            .field("image", &self.image)
            .finish()
    }
}

fn image() -> (String, String) {
    match std::env::var("L1_GIT_IMAGE") {
        Ok(s) => match s.split_once(':') {
            Some((n, t)) => (n.to_string(), t.to_string()),
            None => (s, "latest".to_string()),
        },
        Err(_) => (IMAGE.0.to_string(), IMAGE.1.to_string()),
    }
}

impl GitServer {
    /// Starts Gitea on `network` and creates the user that pushes.
    pub async fn start(network: &str) -> anyhow::Result<GitServer> {
        let (name, tag) = image();
        let settings = [
            ("GITEA__security__INSTALL_LOCK", "true"),
            ("GITEA__database__DB_TYPE", "sqlite3"),
            ("GITEA__server__OFFLINE_MODE", "true"),
            ("GITEA__server__DISABLE_SSH", "true"),
            ("GITEA__server__START_SSH_SERVER", "false"),
            ("GITEA__service__DISABLE_REGISTRATION", "true"),
            ("GITEA__repository__ENABLE_PUSH_CREATE_USER", "true"),
            ("GITEA__repository__DEFAULT_PUSH_CREATE_PRIVATE", "false"),
            ("GITEA__repository__DEFAULT_BRANCH", "main"),
            ("USER_UID", "1000"),
            ("USER_GID", "1000"),
        ];
        let mut request = GenericImage::new(name.clone(), tag.clone())
            .with_exposed_port(ContainerPort::Tcp(HTTP))
            .with_wait_for(WaitFor::message_on_stdout("Starting new Web server"))
            .with_network(network.to_string());
        for (k, v) in settings {
            request = request.with_env_var(k, v);
        }
        let container = request
            .with_startup_timeout(std::time::Duration::from_secs(180))
            .start()
            .await
            .with_context(|| format!("starting the git server {name}:{tag}"))?;
        // `gitea admin` refuses to run as root: as the image's git user.
        let create = format!(
            "gitea admin user create --config /data/gitea/conf/app.ini --username {USER} --password {PASSWORD} --email l1@example.invalid --must-change-password=false"
        );
        let mut result = container
            .exec(
                ExecCommand::new(["su", "git", "-c", create.as_str()])
                    .with_cmd_ready_condition(CmdWaitFor::exit()),
            )
            .await
            .context("creating the git server's user")?;
        let code = result.exit_code().await?;
        if code != Some(0) {
            let err = String::from_utf8_lossy(&result.stderr_to_vec().await?).to_string();
            let out = String::from_utf8_lossy(&result.stdout_to_vec().await?).to_string();
            bail!("creating the git server's user failed ({code:?}): {err}{out}");
        }
        let ip = container.get_bridge_ip_address().await?;
        let port = container
            .get_host_port_ipv4(ContainerPort::Tcp(HTTP))
            .await?;
        Ok(GitServer {
            container,
            internal: format!("http://{ip}:{HTTP}"),
            external: format!("http://127.0.0.1:{port}"),
            image: format!("{name}:{tag}"),
        })
    }

    /// The URL Flux clones `repo` from.
    pub fn clone_url(&self, repo: &str) -> String {
        format!("{}/{USER}/{repo}.git", self.internal)
    }

    /// Commits `dir` as one commit on `branch` (and `tag`) and pushes it as
    /// repository `repo`.
    pub fn push(
        &self,
        dir: &Path,
        repo: &str,
        branch: &str,
        tag: Option<&str>,
    ) -> anyhow::Result<()> {
        // The branch and tag are the checked repository's: never options.
        conformance::exec::check_ref(branch)?;
        if let Some(t) = tag {
            conformance::exec::check_ref(t)?;
        }
        let git = |args: &[&str]| -> anyhow::Result<()> {
            let out = conformance::exec::git(dir, conformance::exec::Transports::Network)
                .args([
                    "-c",
                    "user.name=conformance-l1",
                    "-c",
                    "user.email=l1@example.invalid",
                ])
                .args(["-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"])
                .args(args)
                .output()
                .map_err(|e| {
                    anyhow!("cannot run git (the L1 Flux mode needs it on the host): {e}")
                })?;
            if !out.status.success() {
                bail!(
                    "git {} failed: {}",
                    args.first().copied().unwrap_or_default(),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            Ok(())
        };
        git(&["init", "--quiet", "--initial-branch", branch])?;
        git(&["add", "--all", "--force"])?;
        git(&[
            "commit",
            "--quiet",
            "--allow-empty",
            "-m",
            "conformance L1: the served tree",
        ])?;
        if let Some(t) = tag {
            git(&["tag", "--end-of-options", t])?;
        }
        let remote = format!(
            "{}/{USER}/{repo}.git",
            self.external
                .replacen("http://", &format!("http://{USER}:{PASSWORD}@"), 1)
        );
        git(&[
            "push",
            "--quiet",
            "--force",
            "--",
            &remote,
            &format!("HEAD:refs/heads/{branch}"),
        ])?;
        if let Some(t) = tag {
            git(&[
                "push",
                "--quiet",
                "--force",
                "--",
                &remote,
                &format!("refs/tags/{t}"),
            ])?;
        }
        Ok(())
    }

    /// Stops the container.
    pub async fn stop(self) {
        let _ = self.container.rm().await;
    }
}
