//! `conformance diff`: the rendered objects changed since a revision.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;
use conformance::report::{self, manifests};
use conformance::session::{RunOptions, Session};

use super::{ClusterFilter, print};

/// Per cluster and Kustomization, the rendered objects added, removed or
/// changed since a previous revision (Secret values redacted). Exit 0
/// whatever changed.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    /// The previous git revision (read with `git archive`; nothing is
    /// written to the repository).
    #[arg(
        long,
        value_name = "REV",
        conflicts_with = "base_dir",
        required_unless_present = "base_dir"
    )]
    base: Option<String>,
    /// A directory holding the previous tree, instead of a revision.
    #[arg(long, value_name = "DIR")]
    base_dir: Option<PathBuf>,
    #[command(flatten)]
    clusters: ClusterFilter,
    /// human (unified diffs), json, or markdown (a pull-request comment
    /// with a summary table and collapsible sections).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

/// How the diff is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
    Markdown,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    super::settle_repo(&mut args.run);
    let session = Session::open(&args.run)?;
    let clusters = args.clusters.clusters;
    for wanted in &clusters {
        session.cluster(wanted)?;
    }
    let base = super::base(args.base, args.base_dir)
        .ok_or_else(|| anyhow::anyhow!("--base REV or --base-dir DIR is required"))?;
    let base_model = session.base_model(&base)?;
    let changes = manifests::diff(&base_model, &session.model, &clusters);
    let text = match args.format {
        Format::Human => report::text_safe(&manifests::diff_human(&changes)).into_owned(),
        Format::Json => {
            let mut t = serde_json::to_string_pretty(&manifests::diff_json(&changes))?;
            t.push('\n');
            t
        }
        Format::Markdown => report::text_safe(&manifests::diff_markdown(&changes)).into_owned(),
    };
    print(&text)?;
    // A head tier that does not build fails the command: its objects are
    // unknown, so no diff can say nothing changed.
    Ok(if manifests::TierChanges::any_broken(&changes) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
