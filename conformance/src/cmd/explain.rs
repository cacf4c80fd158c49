//! `conformance explain`: a rule's documentation.

use std::process::ExitCode;

use conformance::rules;

use super::print;

/// Describe a rule: what it catches, the Flux behaviour behind it, the fix.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A rule id, e.g. dependency-missing.
    rule: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let rule = args.rule;
    let Some(found) = rules::by_id(&rule) else {
        let known: Vec<&str> = rules::all().iter().map(|r| r.id().as_str()).collect();
        anyhow::bail!("unknown rule `{rule}`; rules: {}", known.join(", "));
    };
    let severity = match found.other_severities() {
        Some(other) => format!("{}; {other}", found.severity().as_str()),
        None => found.severity().as_str().to_string(),
    };
    print(&format!(
        "{} ({severity})\n\n{}\n\nExample: {}\n\n{}\n",
        found.id(),
        found.summary(),
        found.example(),
        wrap(found.explain(), 80)
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    for word in text.split_whitespace() {
        if line_len > 0 && line_len + 1 + word.len() > width {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += word.len();
    }
    out
}
