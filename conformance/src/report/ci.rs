//! Reports for CI systems: GitHub Actions annotations, JUnit XML and SARIF
//! 2.1.0 (code scanning). Paths are relative to the repository root.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::check::Outcome;
use crate::rules::{self, Finding, Severity};

/// How many annotations of one level GitHub shows for a step (errors,
/// warnings and notices each): the rest are dropped without a word.
pub const ANNOTATIONS_PER_LEVEL: usize = 10;

/// The longest annotation message, in characters: GitHub cuts long ones,
/// and a reader does not scroll through a list of hundreds.
const MESSAGE_MAX: usize = 3000;

/// GitHub Actions workflow commands: one `::error`/`::warning`/`::notice`
/// line per block of the first screen ([`super::screen`]: each shared
/// cause once, the roots that block most first; waived findings as
/// notices), at most [`ANNOTATIONS_PER_LEVEL`] of each level, the last of
/// which names the rest when there are more; then the summary.
pub fn github(outcome: &Outcome) -> String {
    let mut out = String::new();
    let screen = super::screen(outcome);
    for level in ["error", "warning", "notice"] {
        let of_level: Vec<&super::Shown> = screen
            .iter()
            .filter(|s| level_of(s.item.first()) == level)
            .collect();
        let annotated = if of_level.len() > ANNOTATIONS_PER_LEVEL {
            ANNOTATIONS_PER_LEVEL - 1
        } else {
            of_level.len()
        };
        for shown in &of_level[..annotated] {
            out.push_str(&annotation(level, shown));
        }
        if annotated < of_level.len() {
            out.push_str(&rest_annotation(level, &of_level[annotated..]));
        }
    }
    let _ = writeln!(
        out,
        "conformance: {} errors, {} warnings, {} waived{}{}",
        outcome.errors(),
        outcome.warnings(),
        outcome.waived(),
        match outcome.baselined() {
            0 => String::new(),
            n => format!(", {n} in the baseline"),
        },
        match outcome.blocked() {
            0 => String::new(),
            n => format!(", {n} Kustomization{} blocked", super::plural(n)),
        }
    );
    out
}

/// `error`, `warning` or `notice` (waived).
fn level_of(f: &Finding) -> &'static str {
    match (f.severity(), f.waived()) {
        (_, Some(_)) => "notice",
        (Severity::Error, None) => "error",
        (Severity::Warning, None) => "warning",
    }
}

/// One block of the first screen as an annotation at its first place.
fn annotation(level: &str, shown: &super::Shown) -> String {
    let members = shown.item.members();
    let mut text = match &shown.item {
        super::Item::One(f) => {
            let mut message = format!("{}\nWhy: {}\nFix: {}", f.message(), f.why(), f.fix());
            if let Some(w) = f.waived() {
                message.push_str(&format!("\nWaived until {}: {}", w.expires, w.reason));
            }
            message
        }
        super::Item::Group { cause, members } => group_text(cause, members),
    };
    if let Some(line) = super::also_on(&shown.also_on, 8) {
        text.push_str(&format!("\nThe same on other clusters: {line}"));
    }
    text.push_str(&blocks_text(&members, &shown.following));
    let first = shown.item.first();
    let title = match &shown.item {
        super::Item::One(f) => format!("{} ({}/{})", f.rule(), f.cluster(), f.kustomization()),
        super::Item::Group { members, .. } => format!(
            "{} ({}: {})",
            first.rule(),
            first.cluster(),
            super::group_size(members)
        ),
    };
    let mut props = Vec::new();
    if let Some(at) = first.at() {
        props.push(format!("file={}", escape_property(&at.file)));
        if at.line > 0 {
            props.push(format!("line={}", at.line));
        }
    }
    props.push(format!("title={}", escape_property(&bounded(&title, 200))));
    format!(
        "::{level} {}::{}\n",
        props.join(","),
        escape_data(&bounded(&text, MESSAGE_MAX))
    )
}

/// The last annotation of a level when there are more blocks than GitHub
/// shows: how many, the first of them one line each, and where every one
/// is.
fn rest_annotation(level: &str, rest: &[&super::Shown]) -> String {
    let findings: usize = rest
        .iter()
        .map(|s| s.item.members().len() * (1 + s.also_on.len()))
        .sum();
    let mut text = format!(
        "{} more {level} block{} ({findings} finding{}) are not annotated: GitHub shows {ANNOTATIONS_PER_LEVEL} {level}s per step. The job summary and the JSON report have every one; the next ones:",
        rest.len(),
        super::plural(rest.len()),
        super::plural(findings)
    );
    for s in rest.iter().take(20) {
        let f = s.item.first();
        let line = format!(
            "\n- {} {}/{}: {}",
            f.rule(),
            f.cluster(),
            f.kustomization(),
            f.message()
        );
        text.push_str(&bounded(&line, 200));
    }
    if rest.len() > 20 {
        text.push_str(&format!("\n- … and {} more", rest.len() - 20));
    }
    let title = format!("conformance: {} more {level} blocks", rest.len());
    format!(
        "::{level} title={}::{}\n",
        escape_property(&title),
        escape_data(&bounded(&text, MESSAGE_MAX))
    )
}

/// `text` cut to at most `max` characters, saying so.
fn bounded(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The text of an annotation for findings that share a cause: the cause,
/// the one fix, and the first of them one line each.
fn group_text(cause: &crate::rules::Cause, members: &[&Finding]) -> String {
    let mut message = format!(
        "{}: {}\nFix (one cause, one fix): {}",
        super::group_size(members),
        cause.text,
        cause.fix
    );
    for f in members.iter().take(10) {
        let at = f.at().map(|a| format!(" ({a})")).unwrap_or_default();
        let what = f.object().unwrap_or(f.message());
        message.push_str(&format!("\n- {}: {what}{at}", f.kustomization()));
    }
    if members.len() > 10 {
        message.push_str(&format!(
            "\n- … and {} more (every one in the JSON report)",
            members.len() - 10
        ));
    }
    message
}

/// "Blocks 3 Kustomizations on a cold start: …, fixed with it; 5 findings
/// in them follow from it (…)" on lines of their own, or nothing: what a
/// root blocks, in one annotation (the names bounded, so a root that blocks
/// hundreds keeps a short message).
fn blocks_text(roots: &[&Finding], following: &[&Finding]) -> String {
    let blocks = super::Blocks::of(roots, following);
    if blocks.is_empty() {
        return String::new();
    }
    let mut text = format!("\nIt {} (fixed with it)", blocks.headline(20));
    if let Some(line) = blocks.following() {
        text.push_str(&format!("; {line}"));
    }
    text
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// JUnit XML: a test suite per cluster, a test case per (rule,
/// Kustomization) as in l0-static; failures carry the findings.
pub fn junit(outcome: &Outcome, selected: &[String]) -> String {
    // The suites first: the root's counts are their sums (test cases, as
    // the cargo trials count them, not findings).
    let mut out = String::new();
    let index = super::Following::of(&outcome.findings);
    let roots: std::collections::BTreeMap<String, &Finding> = outcome
        .findings
        .iter()
        .filter(|f| !f.is_blocked())
        .map(|f| (f.id(), f))
        .collect();
    let (mut all_tests, mut all_failures, mut all_skipped) = (0, 0, 0);
    for cluster in outcome
        .model
        .clusters
        .iter()
        .filter(|c| selected.is_empty() || selected.contains(&c.name))
    {
        let mut cases: std::collections::BTreeMap<(String, String), Vec<&Finding>> =
            Default::default();
        for tier in cluster.tiers.values() {
            for rule in rules::all() {
                cases
                    .entry((rule.id().to_string(), cluster.tier_label(&tier.id)))
                    .or_default();
            }
        }
        for f in outcome
            .findings
            .iter()
            .filter(|f| f.cluster() == cluster.name)
        {
            cases
                .entry((f.rule().to_string(), f.kustomization().to_string()))
                .or_default()
                .push(f);
        }
        // A case whose errors all follow from a root is skipped, naming
        // the root: the root's case fails (as the l0 trials do).
        let failing = |fs: &Vec<&Finding>| fs.iter().any(|f| f.is_error());
        let blocked_by = |fs: &Vec<&Finding>| {
            fs.iter()
                .filter(|f| f.severity() == Severity::Error && f.counts())
                .find_map(|f| f.caused_by())
                .and_then(|id| roots.get(id).copied())
        };
        let failures = cases.values().filter(|fs| failing(fs)).count();
        let skipped = cases
            .values()
            .filter(|fs| {
                !failing(fs)
                    && (fs.iter().any(|f| f.waived().is_some()) || blocked_by(fs).is_some())
            })
            .count();
        all_tests += cases.len();
        all_failures += failures;
        all_skipped += skipped;
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">",
            xml(&cluster.name),
            cases.len()
        );
        for ((rule, tier), findings) in &cases {
            let name = format!("{}::{rule}::{tier}", cluster.name);
            let _ = write!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\"",
                xml(rule),
                xml(&name)
            );
            let blocked = blocked_by(findings);
            out.push_str(&testcase_body(rule, findings, blocked, &index));
        }
        out.push_str("  </testsuite>\n");
    }
    let mut doc = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        doc,
        "<testsuites name=\"conformance\" tests=\"{all_tests}\" failures=\"{all_failures}\" errors=\"0\" skipped=\"{all_skipped}\">"
    );
    doc.push_str(&out);
    doc.push_str("</testsuites>\n");
    doc
}

/// A JUnit test case's body after its name: a failure with the root
/// findings (and what each blocks), skipped when blocked by a root
/// elsewhere or waived, the warnings as output, or nothing.
fn testcase_body(
    rule: &str,
    findings: &[&Finding],
    blocked: Option<&Finding>,
    index: &super::Following,
) -> String {
    let mut out = String::new();
    let errors: Vec<&&Finding> = findings.iter().filter(|f| f.is_error()).collect();
    let waived = findings.iter().find_map(|f| f.waived());
    if !errors.is_empty() {
        out.push_str(">\n");
        let body: Vec<String> = findings
            .iter()
            .filter(|f| !f.is_blocked())
            .map(|f| {
                let following = index.of_roots(&[*f]);
                format!("{}{}", finding_text(f), blocks_text(&[*f], &following))
            })
            .collect();
        let _ = writeln!(
            out,
            "      <failure message=\"{}\" type=\"{}\">{}</failure>",
            xml(errors[0].message()),
            xml(rule),
            xml(&body.join("\n\n"))
        );
        out.push_str("    </testcase>\n");
    } else if let Some(root) = blocked {
        out.push_str(">\n");
        let _ = writeln!(
            out,
            "      <skipped message=\"blocked by {}::{}::{}: fixing it fixes this\"/>",
            xml(root.cluster()),
            xml(root.rule().as_str()),
            xml(root.kustomization())
        );
        out.push_str("    </testcase>\n");
    } else if let Some(w) = waived {
        out.push_str(">\n");
        let _ = writeln!(
            out,
            "      <skipped message=\"waived until {}: {}\"/>",
            xml(&w.expires),
            xml(&w.reason)
        );
        out.push_str("    </testcase>\n");
    } else if !findings.is_empty() {
        out.push_str(">\n");
        let body: Vec<String> = findings.iter().map(|f| finding_text(f)).collect();
        let _ = writeln!(
            out,
            "      <system-out>{}</system-out>",
            xml(&body.join("\n\n"))
        );
        out.push_str("    </testcase>\n");
    } else {
        out.push_str("/>\n");
    }
    out
}

fn finding_text(f: &Finding) -> String {
    let at = f.at().map(|a| format!(" at {a}")).unwrap_or_default();
    format!(
        "{}{at}: {}\nwhy: {}\nfix: {}",
        f.rule(),
        f.message(),
        f.why(),
        f.fix()
    )
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The "What it catches" paragraph of a rule's documentation, on one line.
fn catches(doc: &str) -> String {
    let body = doc
        .strip_prefix("## What it catches")
        .unwrap_or(doc)
        .split("\n## ")
        .next()
        .unwrap_or_default();
    body.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The SARIF tool descriptor, with `informationUri` when the
/// documentation's address is known.
fn driver(rules: Vec<Value>, doc: Option<&str>) -> Value {
    let mut driver = json!({
        "name": "conformance",
        "version": env!("CARGO_PKG_VERSION"),
        "rules": rules,
    });
    if let Some(doc) = doc {
        driver["informationUri"] = json!(doc);
    }
    driver
}

/// SARIF 2.1.0, one run, every rule described, one result per finding
/// (waived findings carry an accepted suppression).
pub fn sarif(outcome: &Outcome, doc_url: Option<&str>) -> Value {
    let all = rules::all();
    let rule_index = |id: rules::RuleId| all.iter().position(|r| r.id() == id);
    // The documentation's URL without a fragment: each rule's row of the
    // README's rule table has the anchor `rule-<id>`.
    let doc = doc_url.map(|u| u.split('#').next().unwrap_or(u));
    let descriptors: Vec<Value> = all
        .iter()
        .map(|r| {
            let mut d = json!({
                "id": r.id(),
                "shortDescription": {"text": r.summary()},
                "fullDescription": {"text": catches(r.explain())},
                // The whole documentation, as markdown for viewers that
                // render it (GitHub code scanning does) and as text.
                "help": {
                    "text": format!("{}\n\nExample: {}", r.explain(), r.example()),
                    "markdown": r.explain(),
                },
                "defaultConfiguration": {"level": r.severity().as_str()},
            });
            if let Some(doc) = doc {
                d["helpUri"] = json!(format!("{doc}#rule-{}", r.id().as_str()));
            }
            d
        })
        .collect();
    let by_id: std::collections::BTreeMap<String, &Finding> =
        outcome.findings.iter().map(|f| (f.id(), f)).collect();
    let following = super::Following::of(&outcome.findings);
    // A finding that follows from a reported root is not a result of its
    // own: the root's result lists what it blocks.
    let results: Vec<Value> = outcome
        .findings
        .iter()
        .filter(|f| !f.caused_by().is_some_and(|id| by_id.contains_key(id)))
        .map(|f| {
            let blocked = following.of_roots(&[f]);
            let mut result = json!({
                "ruleId": f.rule(),
                "level": f.severity().as_str(),
                "message": {"text": format!("{}\nWhy: {}\nFix: {}{}", f.message(), f.why(), f.fix(), blocks_text(&[f], &blocked))},
                "properties": {"id": f.id(), "caused_by": f.caused_by(), "cluster": f.cluster(), "kustomization": f.kustomization(), "object": f.object(), "blocks": super::json::blocks(f), "blocked_findings": blocked.iter().map(|b| b.id()).collect::<Vec<_>>()},
            });
            if let Some(i) = rule_index(f.rule()) {
                result["ruleIndex"] = json!(i);
            }
            if let Some(at) = f.at() {
                let mut location = json!({"physicalLocation": {"artifactLocation": {"uri": at.file}}});
                if at.line > 0 {
                    location["physicalLocation"]["region"] = json!({"startLine": at.line});
                }
                result["locations"] = json!([location]);
            }
            // A consequence's root comes first among its related places.
            let root = f
                .caused_by()
                .and_then(|id| by_id.get(id))
                .and_then(|r| r.at().map(|at| (at.clone(), format!("root cause: {}", r.message()))));
            // Then the places it blocks (the first twenty).
            let blocks = f.blocks().iter().take(20).filter_map(|b| {
                b.at.clone()
                    .map(|at| (at, format!("blocked: {}/{}", f.cluster(), b.kustomization)))
            });
            let places: Vec<(crate::model::Span, String)> = root
                .into_iter()
                .chain(f.related().iter().cloned())
                .chain(blocks)
                .collect();
            if !places.is_empty() {
                let related: Vec<Value> = places
                    .iter()
                    .enumerate()
                    .map(|(i, (span, label))| {
                        let mut loc = json!({"id": i, "message": {"text": label}, "physicalLocation": {"artifactLocation": {"uri": span.file}}});
                        if span.line > 0 {
                            loc["physicalLocation"]["region"] = json!({"startLine": span.line});
                        }
                        loc
                    })
                    .collect();
                result["relatedLocations"] = json!(related);
            }
            // With a baseline, each result says whether it is in it.
            if outcome.baseline.is_some() {
                result["baselineState"] = json!(if f.baselined() { "unchanged" } else { "new" });
            }
            if let Some(w) = f.waived() {
                result["suppressions"] = json!([{"kind": "external", "status": "accepted", "justification": format!("waived until {}: {}", w.expires, w.reason)}]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver(descriptors, doc)},
            "results": results,
        }],
    })
}
