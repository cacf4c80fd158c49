//! The baseline: findings accepted as they are when a team adopts the
//! check, so that only new findings fail (`conformance baseline` writes
//! it, `conformance check --baseline FILE` reads it).
//!
//! A waiver (conformance.yaml) accepts one finding for a reason and until
//! a date; a baseline accepts every finding a repository has today, with
//! no reason and no date, so that a repository with hundreds of errors can
//! gate its pull requests on the ones they add. Each entry is a
//! [`fingerprint`]: what the finding is about without the line it is on,
//! so editing a file above a finding does not make it new. Entries are
//! matched as a multiset: two findings with one fingerprint need two
//! entries. An accepted finding is counted apart ([`Finding::baselined`])
//! and left out of the human, GitHub and Markdown reports; JSON, JUnit and
//! SARIF keep it, marked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Finding;

/// The format's version (`baseline: 1`).
const VERSION: u32 = 1;

/// The most a baseline file may hold: far more than any repository's
/// findings, far less than what would exhaust memory.
const MAX_BYTES: u64 = 64 << 20;

/// A baseline file, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    /// Where it was read from, as the user named it.
    pub path: PathBuf,
    /// The accepted findings.
    pub entries: Vec<Entry>,
}

/// One accepted finding. Only `fingerprint` is matched; the rest says to a
/// reviewer of the file what was accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// [`fingerprint`] of the finding.
    pub fingerprint: String,
    /// The rule id.
    pub rule: String,
    /// `error` or `warning` when the file was written.
    #[serde(default)]
    pub severity: String,
    /// The cluster.
    #[serde(default)]
    pub cluster: String,
    /// The Kustomization.
    #[serde(default)]
    pub kustomization: String,
    /// The object at fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The finding's message.
    #[serde(default)]
    pub message: String,
}

/// The file as written and read.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    baseline: u32,
    #[serde(default)]
    findings: Vec<Entry>,
}

/// A baseline file that cannot be used: the file, the line and the cause.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct BaselineError {
    /// The file.
    pub path: PathBuf,
    /// The line of the problem, when the parser knows it.
    pub line: Option<u64>,
    /// What is wrong, and what to do.
    pub message: String,
}

/// What matching a baseline did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// The file, as the user named it.
    pub path: PathBuf,
    /// Findings it accepted.
    pub accepted: usize,
    /// Entries that matched no finding: fixed since (or renamed), each a
    /// line for the report.
    pub gone: Vec<Entry>,
}

/// What the finding is about, without where in its file it is: a digest
/// of the rule, cluster, Kustomization, object, the file it points at and
/// the message with line numbers taken out. Stable across edits that only
/// move lines.
pub fn fingerprint(f: &Finding) -> String {
    let file = f.at().map(|s| s.file.as_str()).unwrap_or("");
    super::finding::digest(
        &[
            f.rule().as_str(),
            f.cluster(),
            f.kustomization(),
            f.object().unwrap_or(""),
            file,
            &without_lines(f.message()),
        ],
        8,
    )
}

/// `message` with the line (and column) numbers of its places removed:
/// `a.yaml:12:3` becomes `a.yaml`.
fn without_lines(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(':') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let ends_number = after[digits..]
            .chars()
            .next()
            .is_none_or(|c| matches!(c, ':' | ')' | ',' | ' ' | ';' | ']'));
        if digits > 0 && ends_number && ends_in_file_name(&out) {
            rest = &after[digits..];
        } else {
            out.push(':');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

impl Baseline {
    /// Reads and checks the file at `path`.
    pub fn read(path: &Path) -> Result<Baseline, BaselineError> {
        let fail = |line: Option<u64>, message: String| BaselineError {
            path: path.to_path_buf(),
            line,
            message,
        };
        let meta = std::fs::metadata(path).map_err(|e| {
            fail(
                None,
                format!("cannot read the baseline: {e} (`conformance baseline` writes one)"),
            )
        })?;
        if !meta.is_file() {
            return Err(fail(None, "the baseline is not a regular file".into()));
        }
        if meta.len() > MAX_BYTES {
            return Err(fail(
                None,
                format!(
                    "the baseline is {} bytes, more than the {MAX_BYTES} a baseline may be",
                    meta.len()
                ),
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| fail(None, format!("cannot read the baseline: {e}")))?;
        let mut baseline = Baseline::parse(&text).map_err(|(line, message)| fail(line, message))?;
        baseline.path = path.to_path_buf();
        Ok(baseline)
    }

    /// Parses a baseline's text; the error has the line when known.
    fn parse(text: &str) -> Result<Baseline, (Option<u64>, String)> {
        let file: File = serde_saphyr::from_str(text).map_err(|e| {
            (
                e.location().map(|l| l.line()),
                format!("not a conformance baseline: {}", first_line(&e.to_string())),
            )
        })?;
        if file.baseline != VERSION {
            return Err((
                None,
                format!(
                    "baseline format {} is not one this version reads ({VERSION}): write it again with `conformance baseline`",
                    file.baseline
                ),
            ));
        }
        for (i, e) in file.findings.iter().enumerate() {
            if e.fingerprint.len() != 16 || !e.fingerprint.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err((
                    None,
                    format!(
                        "finding {} has fingerprint `{}`: expected 16 hexadecimal digits, as `conformance baseline` writes",
                        i + 1,
                        e.fingerprint
                    ),
                ));
            }
        }
        Ok(Baseline {
            path: PathBuf::new(),
            entries: file.findings,
        })
    }

    /// The baseline of `findings`: every finding not accepted by a waiver
    /// (consequences included, so that a consequence that becomes a root
    /// of its own later is not new).
    pub fn of(findings: &[Finding]) -> Baseline {
        let mut entries: Vec<Entry> = findings
            .iter()
            .filter(|f| f.waived().is_none())
            .map(|f| Entry {
                fingerprint: fingerprint(f),
                rule: f.rule().as_str().to_string(),
                severity: f.severity().as_str().to_string(),
                cluster: f.cluster().to_string(),
                kustomization: f.kustomization().to_string(),
                object: f.object().map(str::to_string),
                message: f.message().to_string(),
            })
            .collect();
        entries.sort_by(|a, b| {
            (&a.cluster, &a.kustomization, &a.rule, &a.fingerprint).cmp(&(
                &b.cluster,
                &b.kustomization,
                &b.rule,
                &b.fingerprint,
            ))
        });
        Baseline {
            path: PathBuf::new(),
            entries,
        }
    }

    /// The file's text: a header that says what it is, then the entries.
    pub fn to_yaml(&self) -> String {
        let file = File {
            baseline: VERSION,
            findings: self.entries.clone(),
        };
        let body = serde_saphyr::to_string(&file).unwrap_or_else(|e| {
            // Plain strings and numbers always serialise; say so if not.
            format!("# could not write the findings: {e}\nbaseline: {VERSION}\nfindings: []\n")
        });
        format!(
            "# Findings accepted as they were when this file was written, by\n\
             # `conformance baseline`. `conformance check --baseline <this file>`\n\
             # reports and fails on findings not listed here only. Fix a finding\n\
             # and its entry is reported as gone; write the file again to drop it.\n\
             {body}"
        )
    }

    /// Marks the findings the baseline accepts; says how many, and which
    /// entries matched nothing.
    pub fn apply(&self, findings: &mut [Finding]) -> Applied {
        let mut left: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
        for e in &self.entries {
            left.entry(e.fingerprint.as_str()).or_default().push(e);
        }
        let mut accepted = 0;
        for f in findings.iter_mut().filter(|f| f.waived().is_none()) {
            let print = fingerprint(f);
            if let Some(entries) = left.get_mut(print.as_str())
                && entries.pop().is_some()
            {
                f.set_baselined();
                accepted += 1;
            }
        }
        Applied {
            path: self.path.clone(),
            accepted,
            gone: left.into_values().flatten().cloned().collect(),
        }
    }
}

/// Whether `text` ends in a file name with an extension (`dir/a.yaml`),
/// the places findings name, unlike `nginx:1.25` or `80:8080`.
fn ends_in_file_name(text: &str) -> bool {
    let token = text
        .rsplit(|c: char| c.is_whitespace() || matches!(c, '(' | '`' | '"' | '\''))
        .next()
        .unwrap_or("");
    let Some((stem, ext)) = token.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty() && (1..=5).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphabetic())
}

/// The first line of a parser's message (serde-saphyr appends a snippet).
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_leave_the_message() {
        assert_eq!(
            without_lines("the bootstrap (tests/dry-run.sh:65) installs a.yaml:3:7, not b"),
            "the bootstrap (tests/dry-run.sh) installs a.yaml, not b"
        );
        // Not a place: kept.
        assert_eq!(
            without_lines("ports 80:8080 and key: 12"),
            "ports 80:8080 and key: 12"
        );
        assert_eq!(without_lines("image nginx:1.25"), "image nginx:1.25");
        assert_eq!(
            without_lines("image ghcr.io/x/nginx:1.25 from (a.yml:4)"),
            "image ghcr.io/x/nginx:1.25 from (a.yml)"
        );
    }

    #[test]
    fn a_bad_file_says_where() {
        let (line, message) = Baseline::parse("baseline: 1\nfindings:\n  - rule: x\n").unwrap_err();
        assert!(message.contains("fingerprint"), "{message}");
        assert!(line.is_some());
        let (_, message) = Baseline::parse("baseline: 7\n").unwrap_err();
        assert!(message.contains("format 7"), "{message}");
        let (_, message) =
            Baseline::parse("baseline: 1\nfindings:\n  - fingerprint: zz\n    rule: x\n")
                .unwrap_err();
        assert!(message.contains("16 hexadecimal"), "{message}");
    }

    #[test]
    fn written_and_read_back() {
        let b = Baseline {
            path: PathBuf::new(),
            entries: vec![Entry {
                fingerprint: "0123456789abcdef".into(),
                rule: "crd-unavailable".into(),
                severity: "error".into(),
                cluster: "prod".into(),
                kustomization: "apps".into(),
                object: Some("ExternalSecret/a/b".into()),
                message: "needs: \"quotes\" and # hashes".into(),
            }],
        };
        let read = Baseline::parse(&b.to_yaml()).unwrap();
        assert_eq!(read.entries, b.entries);
    }
}
