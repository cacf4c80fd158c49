//! `conformance explain`: a rule's documentation.

use std::process::ExitCode;

use conformance::rules;

use super::print;

/// Describe a rule: what it catches, the Flux behaviour behind it, the fix.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A rule id, e.g. dependency-missing; none: every rule, one line each.
    rule: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(rule) = args.rule else {
        let mut out = String::new();
        for r in rules::all() {
            out.push_str(&format!(
                "{:<24} {:<8} {}\n",
                r.id().as_str(),
                r.severity().as_str(),
                r.summary()
            ));
        }
        out.push_str("\n`conformance explain RULE` describes one.\n");
        print(&out)?;
        return Ok(ExitCode::SUCCESS);
    };
    let Some(found) = rules::by_id(&rule) else {
        let known: Vec<&str> = rules::all().iter().map(|r| r.id().as_str()).collect();
        anyhow::bail!("unknown rule `{rule}`; rules: {}", known.join(", "));
    };
    let severity = match found.other_severities() {
        Some(other) => format!("{}; {other}", found.severity().as_str()),
        None => found.severity().as_str().to_string(),
    };
    print(&format!(
        "{} ({severity})\n\n{}\n\nExample: {}\n\n{}",
        found.id(),
        found.summary(),
        found.example(),
        found.explain()
    ))?;
    Ok(ExitCode::SUCCESS)
}
