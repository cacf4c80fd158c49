//! The report for a pull-request comment or a job summary (`--format
//! markdown`): the summary first ([`super::Overview`]),
//! then one line per root cause or group with its place, warnings folded
//! away. Every finding is still in the other formats; past [`LINES`] lines
//! the rest is counted, not listed.

use std::fmt::Write as _;

use super::plural;
use crate::check::Outcome;
use crate::rules::{Finding, Severity};

/// Most finding lines listed (a comment has room for about 60 KiB).
pub const LINES: usize = 150;

/// The report.
pub fn render(outcome: &Outcome, selected: &[String]) -> String {
    let mut out = String::new();
    let c = super::Coverage::of(outcome, selected);
    let errors = outcome.errors();
    let warnings = outcome.warnings();
    let consequences = outcome.consequences();
    let verdict = if errors > 0 {
        "❌"
    } else if warnings > 0 {
        "⚠️"
    } else {
        "✅"
    };
    let _ = writeln!(
        out,
        "### {verdict} conformance: {errors} error{}, {warnings} warning{}",
        plural(errors),
        plural(warnings)
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "Checked {}{}.",
        c.describe(),
        if consequences > 0 {
            format!(
                "; {} of the errors are consequences of the {} root cause{} below, fixed with them",
                consequences,
                errors - consequences,
                plural(errors - consequences)
            )
        } else {
            String::new()
        }
    );
    let overview = super::Overview::of(outcome, selected);
    if !overview.unbuilt.is_empty() {
        out.push_str("\n**Kustomizations that do not build** (their objects are not checked; on a cold start nothing that depends on them starts):\n\n");
        for line in &overview.unbuilt {
            let _ = writeln!(out, "- `{line}`");
        }
    }
    let following = super::Following::of(&outcome.findings);
    let mut listed = 0;
    let mut left = 0;
    let mut section = |title: &str, wanted: Severity, out: &mut String| {
        let mut lines = Vec::new();
        for item in super::items(&outcome.findings) {
            let (first, count, text) = match &item {
                super::Item::One(f) => (*f, 1, f.message().to_string()),
                super::Item::Group { cause, members } => (
                    members[0],
                    members.len(),
                    format!("{}: {}", super::group_size(members), cause.text),
                ),
            };
            if first.severity() != wanted || first.waived().is_some() {
                continue;
            }
            let roots: Vec<&Finding> = match &item {
                super::Item::One(f) => vec![*f],
                super::Item::Group { members, .. } => members.clone(),
            };
            let also = following.of_roots(&roots).len();
            let at = first.at().map(|a| format!(" — `{a}`")).unwrap_or_default();
            let also = if also > 0 {
                format!(" (+{also} consequence{})", plural(also))
            } else {
                String::new()
            };
            let _ = count;
            lines.push(format!(
                "- **{}** `{}/{}`: {}{at}{also}",
                first.rule(),
                first.cluster(),
                first.kustomization(),
                escape(&text)
            ));
        }
        if lines.is_empty() {
            return;
        }
        let folded = wanted == Severity::Warning;
        if folded {
            let _ = writeln!(
                out,
                "\n<details><summary>{title} ({})</summary>\n",
                lines.len()
            );
        } else {
            let _ = writeln!(out, "\n**{title}**\n");
        }
        for line in lines {
            if listed < LINES {
                out.push_str(&line);
                out.push('\n');
                listed += 1;
            } else {
                left += 1;
            }
        }
        if folded {
            out.push_str("\n</details>\n");
        }
    };
    section("Errors", Severity::Error, &mut out);
    section("Warnings", Severity::Warning, &mut out);
    if left > 0 {
        let _ = writeln!(
            out,
            "\n… and {left} more, in the full report (`--format human`, JSON, SARIF)."
        );
    }
    let unchecked = &overview.unchecked;
    if !unchecked.is_empty() {
        let _ = writeln!(
            out,
            "\n<details><summary>Not checked ({})</summary>\n",
            unchecked.len()
        );
        for line in unchecked {
            let _ = writeln!(out, "- {}", escape(line));
        }
        out.push_str("\n</details>\n");
    }
    out
}

/// Text safe in a Markdown list item: no HTML, no table or emphasis
/// surprises.
fn escape(text: &str) -> String {
    text.replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_text_cannot_open_html_or_break_a_line() {
        assert_eq!(escape("a <b>|c\nd"), "a &lt;b&gt;\\|c d");
    }
}
