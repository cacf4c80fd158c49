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
    let o = super::Overview::of(outcome, selected);
    heading(&mut out, outcome, selected, &o);
    sections(&mut out, &lines(outcome));
    for (cluster, items, evidence) in &o.boundary {
        let _ = writeln!(
            out,
            "\n<details><summary>Boundary of {} ({} from outside what this run reads)</summary>\n\nBecause {}; declare each under `external:` in conformance.yaml.\n",
            escape(cluster),
            items.len(),
            escape(&evidence.join("; "))
        );
        for line in items {
            let _ = writeln!(out, "- {}", escape(line));
        }
        out.push_str("\n</details>\n");
    }
    if !o.unchecked.is_empty() {
        let _ = writeln!(
            out,
            "\n<details><summary>Not checked ({})</summary>\n",
            o.unchecked.len()
        );
        for line in &super::fold_unchecked(&o.unchecked, 3) {
            let _ = writeln!(out, "- {}", escape(line));
        }
        out.push_str("\n</details>\n");
    }
    out
}

/// The verdict and counts, what was checked, and the Kustomizations that
/// do not build.
fn heading(out: &mut String, outcome: &Outcome, selected: &[String], o: &super::Overview) {
    let verdict = if o.errors > 0 {
        "❌"
    } else if o.warnings > 0 {
        "⚠️"
    } else {
        "✅"
    };
    let _ = writeln!(
        out,
        "### {verdict} conformance: {} error{}, {} warning{}",
        o.errors,
        plural(o.errors),
        o.warnings,
        plural(o.warnings)
    );
    out.push('\n');
    if let Some(b) = &outcome.baseline {
        let _ = writeln!(
            out,
            "{} finding{} in the baseline (`{}`) not shown or counted{}.\n",
            b.accepted,
            plural(b.accepted),
            escape(&b.path.display().to_string()),
            match b.gone.len() {
                0 => String::new(),
                n => format!("; {n} of its entries no longer occur"),
            }
        );
    }
    let _ = writeln!(
        out,
        "Checked {}{}.",
        super::Coverage::of(outcome, selected).describe(),
        if o.blocked > 0 {
            format!(
                "; the findings below block {} Kustomization{} on a cold start, fixed with them",
                o.blocked,
                plural(o.blocked)
            )
        } else {
            String::new()
        }
    );
    if !o.unbuilt.is_empty() {
        out.push_str("\n**Kustomizations that do not build** (their objects are not checked; on a cold start nothing that depends on them starts):\n\n");
        for line in &o.unbuilt {
            let _ = writeln!(out, "- `{line}`");
        }
    }
}

/// One line per block of the first screen ([`super::screen`]: each cause
/// once, the roots that block most first), with how many Kustomizations
/// it blocks and on how many clusters it is.
fn lines(outcome: &Outcome) -> Vec<(Severity, String)> {
    super::screen(outcome)
        .into_iter()
        .filter_map(|shown| {
            let first: &Finding = shown.item.first();
            if first.waived().is_some() {
                return None;
            }
            let text = match &shown.item {
                super::Item::One(f) => f.message().to_string(),
                super::Item::Group { cause, members } => {
                    format!("{}: {}", super::group_size(members), cause.text)
                }
            };
            let at = first.at().map(|a| format!(" — `{a}`")).unwrap_or_default();
            let mut also = match shown.blocked {
                0 => String::new(),
                n => format!(" (blocks {n} Kustomization{})", plural(n)),
            };
            if !shown.also_on.is_empty() {
                also.push_str(&format!(
                    " (and on {} more cluster{})",
                    shown.also_on.len(),
                    plural(shown.also_on.len())
                ));
            }
            Some((
                first.severity(),
                format!(
                    "- **{}** `{}/{}`: {}{at}{also}",
                    first.rule(),
                    first.cluster(),
                    first.kustomization(),
                    escape(&text)
                ),
            ))
        })
        .collect()
}

/// The errors, then the warnings folded away, at most [`LINES`] lines in
/// all; the rest counted.
fn sections(out: &mut String, lines: &[(Severity, String)]) {
    let mut listed = 0;
    let mut left = 0;
    for (title, wanted) in [("Errors", Severity::Error), ("Warnings", Severity::Warning)] {
        let section: Vec<&String> = lines
            .iter()
            .filter(|(s, _)| *s == wanted)
            .map(|(_, line)| line)
            .collect();
        if section.is_empty() {
            continue;
        }
        let folded = wanted == Severity::Warning;
        if folded {
            let _ = writeln!(
                out,
                "\n<details><summary>{title} ({})</summary>\n",
                section.len()
            );
        } else {
            let _ = writeln!(out, "\n**{title}**\n");
        }
        for line in section {
            if listed < LINES {
                out.push_str(line);
                out.push('\n');
                listed += 1;
            } else {
                left += 1;
            }
        }
        if folded {
            out.push_str("\n</details>\n");
        }
    }
    if left > 0 {
        let _ = writeln!(
            out,
            "\n… and {left} more, in the full report (`--format human`, JSON, SARIF)."
        );
    }
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
