//! The human report: one block per finding (rule, place with a snippet, why,
//! fix), the Kustomizations that were not checked, and a summary line.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::Coverage;
use crate::check::Outcome;
use crate::model::{Span, TierState};
use crate::rules::{Finding, Severity};

/// Renders the whole report.
pub fn render(outcome: &Outcome, selected: &[String], elapsed: Duration) -> String {
    let mut out = String::new();
    for finding in &outcome.findings {
        out.push_str(&finding_block(finding, &outcome.model.repo));
        out.push('\n');
    }
    let mut unchecked = String::new();
    for cluster in &outcome.model.clusters {
        if !selected.is_empty() && !selected.contains(&cluster.name) {
            continue;
        }
        for tier in cluster.tiers.values() {
            if let TierState::NotChecked(reason) = &tier.state {
                let _ = writeln!(
                    unchecked,
                    "  {}/{} ({}): {reason}",
                    cluster.name,
                    cluster.tier_label(&tier.id),
                    tier.defined_at
                );
            }
        }
    }
    if !unchecked.is_empty() {
        out.push_str("not checked:\n");
        out.push_str(&unchecked);
        out.push('\n');
    }
    for line in &outcome.fallbacks {
        let _ = writeln!(out, "renderer: {line}");
    }
    out.push_str(&summary(outcome, selected, elapsed));
    out.push('\n');
    out
}

/// One finding as a block: header, location with snippet, the second
/// locations (each with its snippet), why, fix, and any detail (a diff).
pub fn finding_block(f: &Finding, repo: &Path) -> String {
    let mut out = String::new();
    let severity = match (f.severity, &f.waived) {
        (_, Some(_)) => "waived",
        (Severity::Error, None) => "error",
        (Severity::Warning, None) => "warning",
    };
    let _ = writeln!(
        out,
        "{severity}[{}]: {}/{}: {}",
        f.rule, f.cluster, f.kustomization, f.message
    );
    if let Some(at) = &f.at {
        let _ = writeln!(out, "  --> {at}");
        out.push_str(&snippet(repo, at));
    }
    if let Some(object) = &f.object {
        let _ = writeln!(out, "  = object: {object}");
    }
    for (span, label) in &f.related {
        let _ = writeln!(out, "  ::: {label}: {span}");
        out.push_str(&snippet(repo, span));
    }
    if let Some(w) = &f.waived {
        let _ = writeln!(
            out,
            "  = waived until {} (conformance.yaml): {}",
            w.expires, w.reason
        );
    }
    let _ = writeln!(out, "  = why: {}", f.why);
    let _ = writeln!(out, "  = fix: {}", f.fix);
    if let Some(detail) = &f.detail {
        for line in detail.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

/// The line at `span` with its number, or nothing when it cannot be read.
fn snippet(repo: &Path, span: &Span) -> String {
    if span.line == 0 {
        return String::new();
    }
    let Ok(text) = std::fs::read_to_string(repo.join(&span.file)) else {
        return String::new();
    };
    let Some(line) = text.lines().nth(span.line as usize - 1) else {
        return String::new();
    };
    let number = span.line.to_string();
    let pad = " ".repeat(number.len());
    format!("{pad} |\n{number} | {line}\n{pad} |\n")
}

/// `checked 2 clusters, 14 Kustomizations (12 rendered, …): 1 error, 0 warnings in 0.84s`
pub fn summary(outcome: &Outcome, selected: &[String], elapsed: Duration) -> String {
    let c = Coverage::of(outcome, selected);
    let errors = outcome.errors();
    let warnings = outcome.warnings();
    let waived = outcome.waived();
    let waived = if waived > 0 {
        format!(", {waived} waived")
    } else {
        String::new()
    };
    format!(
        "checked {} cluster{}, {} Kustomization{} ({} rendered, {} failed, {} not checked; {} object{}) with {}: {} error{}, {} warning{}{waived} in {:.2}s",
        c.clusters,
        plural(c.clusters),
        c.kustomizations,
        plural(c.kustomizations),
        c.rendered,
        c.failed,
        c.not_checked,
        c.objects,
        plural(c.objects),
        outcome.renderer,
        errors,
        plural(errors),
        warnings,
        plural(warnings),
        elapsed.as_secs_f64()
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
