//! `conformance config check`: conformance.yaml against the repository.

use std::process::ExitCode;

use conformance::config::FILE_NAME;
use conformance::session::{RunOptions, Session};

use super::print;

/// What `config` does.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Exit 0 when conformance.yaml is valid, 2 with file:line and the cause
    /// when not.
    Check {
        #[command(flatten)]
        run: RunOptions,
    },
}

pub fn run(action: Action) -> anyhow::Result<ExitCode> {
    let Action::Check { mut run } = action;
    super::settle_repo(&mut run);
    let session = Session::open(&run)?;
    session.check_config()?;
    let config = &session.declared.config;
    let exists = run.repo.join(FILE_NAME).is_file();
    for m in config.l1.manifests.iter().filter(|m| m.sha256.is_none()) {
        eprintln!(
            "{FILE_NAME}:{}: warning: l1.manifests entry for {} has no sha256: L1 refuses it until it is pinned (`curl -fsSL {} | sha256sum`)",
            m.file.referenced.line(),
            m.file.value,
            m.url.value
        );
    }
    print(&if exists {
        format!(
            "{FILE_NAME}: ok ({} placement and {} field policies, {} waivers, {} clusters discovered)\n",
            config.policies.placement.len(),
            config.policies.fields.len(),
            config.waivers.len(),
            session.model.clusters.len()
        )
    } else {
        format!(
            "no {FILE_NAME} in {}: every default applies\n",
            run.repo.display()
        )
    })?;
    Ok(ExitCode::SUCCESS)
}
