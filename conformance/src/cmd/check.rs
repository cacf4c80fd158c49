//! `conformance check`: every rule, in every report format from one run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use conformance::check::{CheckOptions, check};
use conformance::report;
use conformance::session::RunOptions;

use super::{ClusterFilter, print};

/// Discover every cluster, render every Kustomization, run every rule.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunOptions,
    #[command(flatten)]
    clusters: ClusterFilter,
    /// The report: human (blocks with snippets), json (the documented
    /// document), junit (XML), sarif (2.1.0, for code scanning), github
    /// (Actions annotations).
    #[arg(long, value_enum, default_value_t = report::Format::Human)]
    format: report::Format,
    /// Also write the report in FORMAT to PATH, from the same run
    /// (repeatable: `--output sarif=out.sarif --output json=out.json`).
    #[arg(long, value_name = "FORMAT=PATH", value_parser = parse_output)]
    output: Vec<(report::Format, PathBuf)>,
    /// Where the rules are documented (the README this binary came
    /// with, e.g. https://github.com/OWNER/REPO/blob/REF/README.md):
    /// SARIF's informationUri and each rule's helpUri (its row of the
    /// rule table). Without it the SARIF report has neither.
    #[arg(long, value_name = "URL")]
    doc_url: Option<String>,
    /// A previous git revision to compare with (prune-transient); read
    /// with `git archive`, nothing is written to the repository.
    #[arg(long, value_name = "REV", conflicts_with = "base_dir")]
    base: Option<String>,
    /// A directory holding the previous tree, instead of a revision.
    #[arg(long, value_name = "DIR")]
    base_dir: Option<PathBuf>,
    /// Accept the findings listed in FILE (written by `conformance
    /// baseline`): they are counted apart and not shown, and only new
    /// findings fail the run.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Colour the human report: auto (on a terminal, unless NO_COLOR is
    /// set), always or never.
    #[arg(long, value_enum, default_value_t = report::colour::When::Auto)]
    color: report::colour::When,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    super::settle_repo(&mut args.run);
    let baseline = args
        .baseline
        .as_deref()
        .map(conformance::rules::baseline::Baseline::read)
        .transpose()?;
    let clusters = args.clusters.clusters;
    let repo = args.run.repo.display().to_string();
    let options = CheckOptions {
        run: args.run,
        clusters: clusters.clone(),
        base: super::base(args.base, args.base_dir),
        baseline,
    };
    let outcome = check(&options)?;
    let report_options = report::Options {
        repo: &repo,
        clusters: &clusters,
        elapsed: started.elapsed(),
        doc_url: args.doc_url.as_deref(),
    };
    // Every format from the one outcome: the files first, so a report that
    // cannot be written fails the command before anything is printed.
    for (format, path) in &args.output {
        let text = report::render(*format, &outcome, &report_options)?;
        report::output::write(path, &text)?;
    }
    let text = report::render(args.format, &outcome, &report_options)?;
    if args.format == report::Format::Human && args.color.wanted() {
        print(&report::colour::paint(&text))?;
    } else {
        print(&text)?;
    }
    Ok(if outcome.errors() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--output FORMAT=PATH`. A `String` error on purpose: clap's value
/// parsers print it as the argument's error, and it is nothing else.
fn parse_output(arg: &str) -> Result<(report::Format, PathBuf), String> {
    use clap::ValueEnum;
    let (format, path) = arg
        .split_once('=')
        .ok_or_else(|| format!("`{arg}`: expected FORMAT=PATH, e.g. sarif=conformance.sarif"))?;
    let format = report::Format::from_str(format, true).map_err(|_| {
        format!("`{format}`: not a report format (human, json, junit, sarif, github)")
    })?;
    if path.is_empty() {
        return Err(format!("`{arg}`: no path after `=`"));
    }
    Ok((format, PathBuf::from(path)))
}
