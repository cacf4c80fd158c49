//! The human report: one block per finding (rule, place with a snippet, why,
//! fix), the Kustomizations that were not checked, and a summary line.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::{Coverage, plural};
use crate::check::Outcome;
use crate::model::Span;
use crate::rules::{Finding, Severity};

/// Renders the whole report.
pub fn render(outcome: &Outcome, selected: &[String], elapsed: Duration) -> String {
    // What a reader needs first: how bad and where; then each cause once,
    // the errors that block most first; then what was not looked at.
    let o = super::Overview::of(outcome, selected);
    let screen = super::screen(outcome);
    let mut out = overview(outcome, &o, &screen);
    let mut snippets = Snippets::new(&outcome.model.repo, &outcome.model.checkouts);
    for shown in &screen {
        let roots = shown.item.members();
        match &shown.item {
            super::Item::One(finding) => {
                out.push_str(&finding_block_with(finding, &mut snippets));
            }
            super::Item::Group { cause, members } => {
                out.push_str(&group_block(cause, members));
            }
        }
        if let Some(line) = super::also_on(&shown.also_on, 8) {
            let _ = writeln!(out, "  = {line}");
        }
        out.push_str(&blocks_block(&roots, &shown.following));
        out.push('\n');
    }
    out.push_str(&context(&o));
    let mut fetched = std::collections::BTreeSet::new();
    for cluster in &outcome.model.clusters {
        if !selected.is_empty() && !selected.contains(&cluster.name) {
            continue;
        }
        for tier in cluster.tiers.values() {
            for f in &tier.fetched {
                let stale = f
                    .stale
                    .as_ref()
                    .map(|why| format!(" (not reachable now: {why})"))
                    .unwrap_or_default();
                fetched.insert(format!("fetched: {} → {}{stale}", f.reference, f.content));
            }
        }
    }
    for line in &fetched {
        let _ = writeln!(out, "{line}");
    }
    if !fetched.is_empty() {
        out.push('\n');
    }
    for line in &outcome.fallbacks {
        let _ = writeln!(out, "renderer: {line}");
    }
    for note in &outcome.model.notes {
        let _ = writeln!(out, "discovery: {note}");
    }
    for note in &outcome.bootstrap.notes {
        let _ = writeln!(out, "bootstrap: {}: {}", note.at, note.text);
    }
    if let Some(line) = parity_line(outcome) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str(&summary(outcome, selected, elapsed));
    out.push('\n');
    out
}

/// The report's first lines ([`super::Overview`]): the clusters checked,
/// errors split into root causes and their consequences, the root causes
/// and warnings by rule, and what the baseline accepted. Empty when there
/// is nothing to say (the last line says the run was clean).
fn overview(outcome: &Outcome, o: &super::Overview, screen: &[super::Shown]) -> String {
    let mut out = String::new();
    if let Some(line) = baseline_line(outcome) {
        let _ = writeln!(out, "{line}");
    }
    if o.is_clean() {
        if !out.is_empty() {
            out.push('\n');
        }
        return out;
    }
    // How many blocks follow: one per shared cause, so the counts and
    // what a reader scrolls through agree.
    let blocks_of = |severity: Severity| {
        screen
            .iter()
            .filter(|s| s.item.first().severity() == severity && s.item.first().waived().is_none())
            .count()
    };
    let causes = |n: usize, blocks: usize| {
        if n > blocks {
            format!(" ({blocks} cause{} below)", plural(blocks))
        } else {
            String::new()
        }
    };
    let _ = writeln!(
        out,
        "summary: {} error{}{}, {} warning{}{}{}",
        o.errors,
        plural(o.errors),
        causes(o.errors, blocks_of(Severity::Error)),
        o.warnings,
        plural(o.warnings),
        causes(o.warnings, blocks_of(Severity::Warning)),
        blocked_words(o.blocked, o.consequences)
    );
    let counts = |c: &[(String, usize)]| {
        c.iter()
            .map(|(rule, n)| format!("{rule} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if o.errors > 0 {
        let _ = writeln!(
            out,
            "  errors to fix first, by rule: {}",
            counts(&o.roots_by_rule)
        );
    }
    if o.warnings > 0 {
        let _ = writeln!(out, "  warnings, by rule: {}", counts(&o.warnings_by_rule));
    }
    let later = [
        (!o.unbuilt.is_empty()).then(|| format!("{} that do not build", o.unbuilt.len())),
        (!o.boundary.is_empty()).then(|| "the boundary of what this run reads".to_string()),
        (!o.unchecked.is_empty()).then(|| format!("{} not checked", o.unchecked.len())),
    ];
    let later: Vec<String> = later.into_iter().flatten().collect();
    if !later.is_empty() {
        let _ = writeln!(out, "  after the findings: {}", later.join("; "));
    }
    out.push('\n');
    out
}

/// "baseline: 277 findings accepted by conformance-baseline.yaml are not
/// shown; 2 of its entries no longer occur", or nothing without one.
fn baseline_line(outcome: &Outcome) -> Option<String> {
    let applied = outcome.baseline.as_ref()?;
    let mut line = format!(
        "baseline: {} finding{} accepted by {} {} not shown or counted",
        applied.accepted,
        plural(applied.accepted),
        applied.path.display(),
        if applied.accepted == 1 { "is" } else { "are" }
    );
    // An accepted render failure hides more than itself: what the
    // Kustomization would apply is not built, so a new error in it cannot
    // show until it builds.
    let unbuilt: Vec<&str> = outcome
        .findings
        .iter()
        .filter(|f| f.baselined() && f.rule() == crate::rules::RuleId::RenderFailed)
        .map(|f| f.kustomization())
        .collect();
    if let Some(first) = unbuilt.first() {
        let one = unbuilt.len() == 1;
        let (they, more) = if one {
            ("it", String::new())
        } else {
            ("they", format!(" and {} more", unbuilt.len() - 1))
        };
        line.push_str(&format!(
            "; {} of them {} Kustomization{} that do{} not build ({first}{more}): what {they} would apply is not built, so a new error in it cannot show until {they} build{}",
            unbuilt.len(),
            if one { "is a" } else { "are" },
            plural(unbuilt.len()),
            if one { "es" } else { "" },
            if one { "s" } else { "" },
        ));
    }
    if !applied.gone.is_empty() {
        let n = applied.gone.len();
        line.push_str(&format!(
            "; {n} of its entries no longer occur{} (fixed: `conformance baseline` writes the file again without {})",
            if n == 1 { "s" } else { "" },
            if n == 1 { "it" } else { "them" }
        ));
    }
    Some(line)
}

/// What was not looked at, after the findings: the Kustomizations that do
/// not build, the boundary of what the run reads, and those not checked.
fn context(o: &super::Overview) -> String {
    let mut out = String::new();
    if !o.unbuilt.is_empty() {
        let one = o.unbuilt.len() == 1;
        let _ = writeln!(
            out,
            "{} Kustomization{} that do{} not build (render-failed: {} objects are not checked, and on a cold start nothing that depends on {} starts):",
            o.unbuilt.len(),
            plural(o.unbuilt.len()),
            if one { "es" } else { "" },
            if one { "its" } else { "their" },
            if one { "it" } else { "them" }
        );
        for line in &o.unbuilt {
            let _ = writeln!(out, "  {line}");
        }
    }
    for (cluster, items, evidence) in &o.boundary {
        let _ = writeln!(
            out,
            "boundary of {cluster}: {} item{} from outside what this run reads (warnings; declare each under `external:` in conformance.yaml, or read its repository with `--source`), because {}:",
            items.len(),
            plural(items.len()),
            evidence.join("; ")
        );
        for line in items {
            let _ = writeln!(out, "  {line}");
        }
    }
    if !o.unchecked.is_empty() {
        let _ = writeln!(out, "not checked:");
        for line in &super::fold_unchecked(&o.unchecked, 3) {
            let _ = writeln!(out, "  {line}");
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// One finding as a block: header, location with snippet, the second
/// locations (each with its snippet), why, fix, and any detail (a diff).
pub fn finding_block(f: &Finding, repo: &Path) -> String {
    finding_block_with(f, &mut Snippets::new(repo, &[]))
}

/// [`finding_block`], reading each file's lines once for all the blocks of
/// a report (a file named by many findings is not read once per finding).
fn finding_block_with(f: &Finding, snippets: &mut Snippets) -> String {
    let mut out = String::new();
    let severity = match (f.severity(), f.waived()) {
        (_, Some(_)) => "waived",
        (Severity::Error, None) => "error",
        (Severity::Warning, None) => "warning",
    };
    let _ = writeln!(
        out,
        "{severity}[{}]: {}/{}: {}",
        f.rule(),
        f.cluster(),
        f.kustomization(),
        f.message()
    );
    if let Some(at) = f.at() {
        let _ = writeln!(out, "  --> {at}");
        out.push_str(&snippets.of(at));
    }
    if let Some(object) = f.object() {
        let _ = writeln!(out, "  = object: {object}");
    }
    for (span, label) in f.related() {
        let _ = writeln!(out, "  ::: {label}: {span}");
        out.push_str(&snippets.of(span));
    }
    if let Some(w) = f.waived() {
        let _ = writeln!(
            out,
            "  = waived until {} (conformance.yaml): {}",
            w.expires, w.reason
        );
    }
    let _ = writeln!(out, "  = why: {}", f.why());
    let _ = writeln!(out, "  = fix: {}", f.fix());
    if let Some(detail) = f.detail() {
        for line in detail.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

/// What a root blocks, folded under it: the Kustomizations that never
/// become Ready on a cold start because of it (by name, the first ten),
/// then the first ten findings in them that follow from it, one line each
/// (fixing the root fixes them; they are not counted).
pub fn blocks_block(roots: &[&Finding], following: &[&Finding]) -> String {
    let blocks = super::Blocks::of(roots, following);
    if blocks.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    if blocks.kustomizations.is_empty() {
        if let Some(line) = blocks.following() {
            let _ = writeln!(out, "  = {line} (fixing this fixes them):");
        }
    } else {
        let _ = writeln!(out, "  = {} (fixing this fixes them)", blocks.headline(10));
        if let Some(line) = blocks.following() {
            let _ = writeln!(out, "    {line}:");
        }
    }
    for f in following.iter().take(FOLLOWING_SHOWN) {
        let at = f.at().map(|s| format!(" ({s})")).unwrap_or_default();
        let object = f.object().map(|o| format!(" {o}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "    {}[{}]: {}/{}{object}{at}",
            f.severity().as_str(),
            f.rule(),
            f.cluster(),
            f.kustomization()
        );
    }
    if following.len() > FOLLOWING_SHOWN {
        let _ = writeln!(
            out,
            "    … and {} more (every one in --format json, under this finding's id)",
            following.len() - FOLLOWING_SHOWN
        );
    }
    out
}

/// How many of the findings that follow from a root are shown under it.
const FOLLOWING_SHOWN: usize = 10;

/// Findings that share one cause: the cause once, the one fix, and each
/// finding on a line (every one is still in the JSON, JUnit and SARIF).
pub fn group_block(cause: &crate::rules::Cause, members: &[&Finding]) -> String {
    let mut out = String::new();
    let first = members[0];
    let severity = first.severity().as_str();
    let _ = writeln!(
        out,
        "{severity}[{}]: {}: {}: {}",
        first.rule(),
        first.cluster(),
        super::group_size(members),
        cause.text
    );
    let _ = writeln!(out, "  = fix (one cause, one fix): {}", cause.fix);
    let _ = writeln!(
        out,
        "  = why: see each finding in the JSON report, or `conformance explain {}`",
        first.rule()
    );
    for f in members.iter().take(MEMBERS_SHOWN) {
        let at = f.at().map(|a| format!(" ({a})")).unwrap_or_default();
        let what = f.object().unwrap_or(f.message());
        let _ = writeln!(out, "  - {}: {what}{at}", f.kustomization());
    }
    if members.len() > MEMBERS_SHOWN {
        let _ = writeln!(
            out,
            "  - … and {} more (every one in --format json)",
            members.len() - MEMBERS_SHOWN
        );
    }
    out
}

/// How many findings of a group are listed under its cause.
const MEMBERS_SHOWN: usize = 10;

/// The line at `span` with its number, or nothing when it cannot be read.
/// The lines of the files findings point at, each file read once.
struct Snippets<'r> {
    repo: &'r Path,
    /// Other checkouts read beside it: the name their paths start with,
    /// and where they are.
    checkouts: &'r [(String, std::path::PathBuf)],
    /// File → its text and where each line starts (`None`: unreadable).
    files: std::collections::HashMap<String, Option<(String, Vec<usize>)>>,
}

impl<'r> Snippets<'r> {
    fn new(repo: &'r Path, checkouts: &'r [(String, std::path::PathBuf)]) -> Snippets<'r> {
        Snippets {
            repo,
            checkouts,
            files: std::collections::HashMap::new(),
        }
    }

    /// The line a span points at, framed; empty when there is none.
    fn of(&mut self, span: &Span) -> String {
        if span.line == 0 {
            return String::new();
        }
        let path = self
            .checkouts
            .iter()
            .find_map(|(name, dir)| {
                let rest = span.file.strip_prefix(name.as_str())?.strip_prefix('/')?;
                Some(dir.join(rest))
            })
            .unwrap_or_else(|| self.repo.join(&span.file));
        let file = self.files.entry(span.file.clone()).or_insert_with(|| {
            let text = std::fs::read_to_string(&path).ok()?;
            let starts = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            Some((text, starts))
        });
        let Some((text, starts)) = file else {
            return String::new();
        };
        let index = span.line as usize - 1;
        let Some(&start) = starts.get(index) else {
            return String::new();
        };
        if start >= text.len() && index > 0 {
            return String::new();
        }
        let end = starts.get(index + 1).map_or(text.len(), |e| e - 1);
        let line = text[start..end].trim_end_matches('\r');
        let number = span.line.to_string();
        let pad = " ".repeat(number.len());
        format!("{pad} |\n{number} | {line}\n{pad} |\n")
    }
}

/// Which clusters graph-parity compared, when there is more than one
/// cluster: `parity: {dev, prod} (they share most Kustomizations); not
/// compared: nas`.
fn parity_line(outcome: &Outcome) -> Option<String> {
    if outcome.model.clusters.len() < 2 {
        return None;
    }
    let formed = crate::rules::parity_groups(&outcome.config.parity, &outcome.model);
    let groups: Vec<String> = formed
        .groups
        .iter()
        .map(|g| format!("{{{}}}", g.join(", ")))
        .collect();
    let mut line = if groups.is_empty() {
        "parity: no clusters compared".to_string()
    } else {
        format!("parity: compared {}", groups.join(", "))
    };
    line.push_str(if formed.automatic {
        " (formed automatically: clusters sharing at least half of their Kustomizations; parity.groups in conformance.yaml overrides)"
    } else {
        " (parity.groups in conformance.yaml)"
    });
    if !formed.alone.is_empty() {
        line.push_str(&format!("; not compared: {}", formed.alone.join(", ")));
    }
    Some(line)
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
    let baselined = match outcome.baselined() {
        0 => String::new(),
        n => format!(", {n} in the baseline"),
    };
    let waived = format!("{waived}{baselined}");
    let roots = blocked_words(outcome.blocked(), outcome.consequences());
    format!(
        "checked {} with {}: {} error{}, {} warning{}{waived}{roots} in {:.2}s",
        c.describe(),
        outcome.renderer,
        errors,
        plural(errors),
        warnings,
        plural(warnings),
        elapsed.as_secs_f64()
    )
}

/// "; they block 12 Kustomizations on a cold start (30 findings in them
/// listed under their root)", or nothing.
fn blocked_words(blocked: usize, consequences: usize) -> String {
    match (blocked, consequences) {
        (0, 0) => String::new(),
        (0, c) => format!(
            "; {c} finding{} that follow{} from them listed under their root",
            plural(c),
            if c == 1 { "s" } else { "" }
        ),
        (b, 0) => format!(
            "; they block {b} Kustomization{} on a cold start",
            plural(b)
        ),
        (b, c) => format!(
            "; they block {b} Kustomization{} on a cold start ({c} finding{} in them listed under their root)",
            plural(b),
            plural(c)
        ),
    }
}
