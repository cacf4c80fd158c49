//! `conformance.yaml`: what cannot be discovered, strictly parsed.
//!
//! Every section is optional. An unknown key is an error naming the key, the
//! file and the line; so is a value of the wrong type, a field path that does
//! not parse, a regex that does not compile, a date that is not a date. A typo
//! never silently disables a check.
//!
//! This module only aggregates: each section's type, defaults and checks
//! live with the code that reads it (parity with `graph-parity`,
//! `substitution` with the substitution rules, `l1` with [`crate::l1`],
//! `sources` with discovery, `clusters` and `kubernetes` with
//! [`crate::provenance::distribution`]), and rule ids are checked against
//! the registry the caller passes ([`RuleIds`]).

use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

pub use crate::config_error::{ConfigError, FILE_NAME, error_at};
pub use crate::discover::SourceMapping;
pub use crate::l1::{L1, L1Manifest};
use crate::provenance::Catalog;
pub use crate::provenance::bootstrap::unread::ProvidedStep;
use crate::provenance::bootstrap::unread::{Created, created};
pub use crate::provenance::distribution::{ClusterFacts, EntrySource, VersionSource};
pub use crate::rules::placement::cfg::{FieldPath, Policies, Segment, glob, matches_glob};
pub use crate::rules::tier_order_script::TierScript;
pub use crate::rules::toolchain_skew::Toolchain;
pub use crate::rules::waivers::cfg::{Date, Waiver};
pub use crate::rules::{Parity, Substitution};

/// Whether a name is a rule id. The session passes the rule registry's
/// answer, so this file's parser does not depend on the rules it configures.
pub(crate) type RuleIds<'a> = &'a dyn Fn(&str) -> bool;

/// The repository's configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Which clusters must have identical tier graphs.
    #[serde(default)]
    pub parity: Parity,
    /// Facts per cluster (by discovered name).
    #[serde(default)]
    pub clusters: std::collections::BTreeMap<String, ClusterFacts>,
    /// Where to read the clusters' Kubernetes version when `clusters` does not
    /// say (e.g. a k3s version string in the repository).
    #[serde(default)]
    pub kubernetes: Option<VersionSource>,
    /// Additions to the chart and runtime catalogs, and CRDs installed
    /// outside Flux.
    #[serde(default)]
    pub catalog: Catalog,
    /// How the cluster's kustomize-controller substitutes.
    #[serde(default)]
    pub substitution: Substitution,
    /// Placement and field policies: which kinds a tier must or must not render, and
    /// what fields of objects must hold.
    #[serde(default)]
    pub policies: Policies,
    /// The bootstrap script whose tier list must match the graph.
    #[serde(default)]
    pub bootstrap: Option<TierScript>,
    /// Toolchain version files that must agree with each other and with the
    /// clusters.
    #[serde(default)]
    pub toolchain: Option<Toolchain>,
    /// Findings accepted until a date.
    #[serde(default)]
    pub waivers: Vec<Waiver>,
    /// Severity per rule id, overriding the rule's default
    /// (`cold-start-race: error` for a team whose policy is that a cold
    /// cluster orders itself).
    #[serde(default)]
    pub severity: std::collections::BTreeMap<String, Spanned<crate::rules::Configured>>,
    /// `native` (default), `kustomize` (the external program) or `auto`.
    #[serde(default)]
    pub renderer: Option<crate::render::Choice>,
    /// `offline` (default) or `fetch`: whether remote bases are fetched
    /// (into the cache, once per run) so their tiers are checked whole.
    #[serde(default)]
    pub remote: crate::remote::Setting,
    /// The live-cluster (l1-cluster) run.
    #[serde(default)]
    pub l1: L1,
    /// Sources that are this repository although they are not its
    /// GitRepository (an OCI artifact built from one of its directories).
    #[serde(default)]
    pub sources: Vec<SourceMapping>,
    /// This repository as Flux knows it (`repository.url`): the URL its
    /// GitRepositories name, when the checkout's remote is a mirror, a fork
    /// or a CI cache.
    #[serde(default)]
    pub repository: Option<crate::discover::RepositoryConfig>,
    /// What bootstrap steps this tool could not read create: each settles
    /// the warnings that assumed the step might create what a tier needs.
    #[serde(default)]
    pub provides: Vec<ProvidedStep>,
    /// What exists on the cluster though nothing the run reads creates it:
    /// objects another repository, the installer or an in-cluster provider
    /// creates (`Secret/flux-system/cluster-secrets`, `Namespace/kommander`,
    /// `cert-manager.io/Certificate`). Each is the boundary declared.
    #[serde(default)]
    pub external: Vec<Spanned<String>>,
}

/// A deserialisation error as a problem at its line, without the parser's
/// own position suffix.
fn type_error(err: &serde_saphyr::Error) -> ConfigError {
    let line = err.location().map_or(0, |l| l.line() as u32);
    let rendered = err.without_snippet().to_string();
    let first = rendered
        .lines()
        .next()
        .unwrap_or("invalid configuration")
        .trim();
    let message = match first.rfind(" at line ") {
        Some(cut) => &first[..cut],
        None => first,
    };
    // Advice about options of the parser, which users cannot set (as the
    // YAML loader drops it too).
    let message = message.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    ConfigError::new(line, message)
}

/// The file once per top-level section, and once per item of a top-level
/// list, with every other section's lines blanked (so lines stay where they
/// are): each can be deserialised alone. The sections are where the YAML
/// parser puts the top-level keys and the list items; empty for a file
/// that is not a block mapping, or does not parse.
fn sections(text: &str) -> Vec<String> {
    use serde_saphyr::granit_parser::{Event, Parser};
    /// A collection being read: a mapping (whether its next node is a
    /// key), or a sequence.
    enum Frame {
        Map { key_next: bool },
        Seq,
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut stack: Vec<Frame> = Vec::new();
    // The 0-based lines of the top-level keys, and of the items of
    // top-level lists (with their key's index).
    let mut keys: Vec<usize> = Vec::new();
    let mut items: Vec<(usize, usize)> = Vec::new();
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else {
            return Vec::new();
        };
        let line = span.start.line().saturating_sub(1);
        if matches!(
            event,
            Event::Scalar(..)
                | Event::MappingStart(..)
                | Event::SequenceStart(..)
                | Event::Alias(_)
        ) {
            match stack.as_slice() {
                [Frame::Map { key_next: true }] => keys.push(line),
                [Frame::Map { .. }, Frame::Seq] => {
                    if let Some(k) = keys.len().checked_sub(1) {
                        items.push((k, line));
                    }
                }
                _ => {}
            }
            // The node fills its parent's slot: a key, then a value.
            if let Some(Frame::Map { key_next }) = stack.last_mut() {
                *key_next = !*key_next;
            }
        }
        match event {
            Event::MappingStart(..) => stack.push(Frame::Map { key_next: true }),
            Event::SequenceStart(..) => stack.push(Frame::Seq),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
            }
            _ => {}
        }
    }
    if keys.is_empty() {
        return Vec::new();
    }
    let end = lines.len();
    let range = |k: usize| (keys[k], keys.get(k + 1).copied().unwrap_or(end));
    // The text with only lines `from..to` (and `also`) kept.
    let keep = |from: usize, to: usize, also: Option<usize>| -> String {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if (from..to).contains(&i) || also == Some(i) {
                    *l
                } else if l.ends_with('\n') {
                    "\n"
                } else {
                    ""
                }
            })
            .collect()
    };
    let mut out: Vec<String> = (0..keys.len())
        .map(|k| {
            let (from, to) = range(k);
            keep(from, to, None)
        })
        .collect();
    for (n, &(k, line)) in items.iter().enumerate() {
        let (_, to) = range(k);
        let next = items
            .get(n + 1)
            .filter(|(k2, _)| *k2 == k)
            .map_or(to, |(_, l)| *l);
        // The item, under its key's line.
        out.push(keep(line, next, Some(keys[k])));
    }
    out
}

/// Why a path of conformance.yaml does not stay inside the repository:
/// absolute, or climbing out with `..`.
pub(crate) fn outside_problem(path: &str) -> Option<&'static str> {
    if path.starts_with('/') {
        return Some("is absolute; paths in conformance.yaml are relative to the repository root");
    }
    crate::repo::normalize("", path)
        .1
        .then_some("climbs out of the repository")
}

/// What a file that is not a regular file is, in words.
fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

/// Why a configuration file's text could not be read.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    /// The file system refused.
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// Over the loader's budget for one file.
    #[error("it is larger than {0} bytes, the loader's budget for one file")]
    TooLarge(u64),
    /// Not UTF-8.
    #[error("it is not UTF-8 text (invalid byte at offset {0})")]
    NotUtf8(usize),
}

/// A configuration file's text, within the loader's budget for one file,
/// as UTF-8.
fn read_bounded(path: &Path) -> Result<String, ReadError> {
    use std::io::Read as _;
    let limit = crate::yaml::MAX_FILE_BYTES;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    String::from_utf8(bytes).map_err(|err| ReadError::NotUtf8(err.utf8_error().valid_up_to()))
}

impl Config {
    /// Reads `conformance.yaml` from the repository root; the default when
    /// there is none.
    ///
    /// Only a regular file inside the repository is read: a symlink whose
    /// target is outside it (or is not a regular file), a directory, a
    /// FIFO or a device is refused with the reason, and nothing of what
    /// it points to is read or quoted (`--config FILE` reads one kept
    /// elsewhere, on purpose).
    pub fn load(repo: &Path, rule_ids: RuleIds) -> Result<Config, ConfigError> {
        let path = repo.join(FILE_NAME);
        if !repo.is_dir() {
            // The session says what is wrong with the repository itself.
            return Ok(Config::default());
        }
        let refuse = |why: String| Err(ConfigError::new(0, why));
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Config::default());
            }
            Err(err) => return refuse(format!("cannot read it: {err}")),
        };
        if meta.file_type().is_symlink() {
            let inside = std::fs::canonicalize(repo).ok().and_then(|root| {
                let target = std::fs::canonicalize(&path).ok()?;
                target.starts_with(&root).then_some(target)
            });
            let Some(target) = inside else {
                return refuse(format!(
                    "{FILE_NAME} is a symlink that leads outside the repository (or nowhere); it is not read. Keep the file in the repository, or name it with --config FILE"
                ));
            };
            let meta = std::fs::metadata(&target)
                .map_err(|err| ConfigError::new(0, format!("cannot read it: {err}")))?;
            if !meta.is_file() {
                return refuse(format!(
                    "{FILE_NAME} is a symlink to {}, not a regular file",
                    file_kind(&meta.file_type())
                ));
            }
        } else if !meta.is_file() {
            return refuse(format!(
                "{FILE_NAME} is {}, not a regular file",
                file_kind(&meta.file_type())
            ));
        }
        let text = read_bounded(&path).map_err(|why| ConfigError::new(0, why.to_string()))?;
        Config::parse(&text, rule_ids)
    }

    /// Reads a conformance.yaml given by path (`--config FILE`); every
    /// problem is reported at that file.
    pub(crate) fn load_file(path: &Path, rule_ids: RuleIds) -> Result<Config, ConfigError> {
        let name = path.display().to_string();
        let fail = |message: String| ConfigError {
            file: name.clone(),
            line: 0,
            message,
            more: Vec::new(),
        };
        // Followed on purpose: the caller named it. Still never a FIFO
        // (which would block) or a directory.
        let meta = std::fs::metadata(path).map_err(|err| fail(format!("cannot read it: {err}")))?;
        if !meta.is_file() {
            return Err(fail(format!(
                "it is {}, not a regular file",
                file_kind(&meta.file_type())
            )));
        }
        let text = read_bounded(path).map_err(|why| fail(why.to_string()))?;
        Config::parse(&text, rule_ids).map_err(|mut err| {
            err.file = name.clone();
            for more in &mut err.more {
                more.file = name.clone();
            }
            err
        })
    }

    /// Parses and validates.
    pub fn parse(text: &str, rule_ids: RuleIds) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        // Strict types, as documented: `no`, `"no"` and `yes` are not
        // booleans here (YAML 1.2, as go-yaml v3 reads it).
        let options = serde_saphyr::options! {
            strict_booleans: true,
            legacy_octal_numbers: true,
        };
        let config: Config =
            serde_saphyr::from_str_with_options(text, options.clone()).map_err(|err| {
                // The deserialiser stops at the first problem: each
                // top-level section (and each item of a top-level list)
                // is read again on its own, so every problem is reported
                // at once.
                let first = type_error(&err);
                let mut problems: Vec<ConfigError> = sections(text)
                    .into_iter()
                    .flat_map(|part| {
                        match serde_saphyr::from_str_with_options::<Config>(&part, options.clone())
                        {
                            Err(e) => vec![type_error(&e)],
                            // A section that reads is validated too.
                            Ok(config) => match config.validate(rule_ids) {
                                Ok(()) => Vec::new(),
                                Err(mut e) => {
                                    let more = std::mem::take(&mut e.more);
                                    std::iter::once(e).chain(more).collect()
                                }
                            },
                        }
                    })
                    .collect();
                problems.push(first);
                problems.sort_by(|a, b| (a.line, &a.message).cmp(&(b.line, &b.message)));
                problems.dedup_by(|a, b| a.line == b.line && a.message == b.message);
                let mut problems = problems.into_iter();
                let mut head = problems.next().unwrap_or_else(|| type_error(&err));
                head.more = problems.collect();
                head
            })?;
        config.validate(rule_ids)?;
        Ok(config)
    }

    /// Checks what the types cannot (paths, regexes, dates, rule ids,
    /// versions), every section with its own rules, and reports every
    /// problem at once.
    fn validate(&self, rule_ids: RuleIds) -> Result<(), ConfigError> {
        let mut problems = Vec::new();
        self.policies.validate(&mut problems);
        crate::rules::waivers::cfg::validate(&self.waivers, rule_ids, &mut problems);
        for (rule, severity) in &self.severity {
            if !rule_ids(rule) {
                problems.push(error_at(
                    severity,
                    format!(
                        "severity for unknown rule `{rule}` (see `conformance explain` for the rule ids)"
                    ),
                ));
            }
        }
        crate::provenance::distribution::validate(&self.clusters, &mut problems);
        crate::postbuild::injected::validate(&self.substitution.injected, &mut problems);
        crate::l1::validate(&self.l1, &mut problems);
        for source in &self.sources {
            if let Some(problem) = source.problem() {
                problems.push(problem);
            }
        }
        let paths = self
            .sources
            .iter()
            .filter_map(|s| s.path.as_ref().map(|p| ("sources: path", p)))
            .chain(self.kubernetes.iter().map(|k| ("kubernetes.file", &k.file)));
        for (field, path) in paths {
            if let Some(why) = outside_problem(&path.value) {
                problems.push(error_at(path, format!("{field} `{}` {why}", path.value)));
            }
        }
        problems.sort_by_key(|p| p.line);
        let mut problems = problems.into_iter();
        match problems.next() {
            None => Ok(()),
            Some(mut first) => {
                first.more = problems.collect();
                Err(first)
            }
        }
    }

    /// Adds the command line's `--entry DIR`s as declared clusters, named
    /// by their last path segment (the whole path when conformance.yaml
    /// already uses that name); a directory already declared is kept as
    /// it is.
    pub(crate) fn declare_entries(&mut self, dirs: &[String]) {
        for dir in dirs {
            let path = crate::repo::normalize("", dir).0;
            let declared = self.clusters.values().any(|facts| {
                facts
                    .entry
                    .as_ref()
                    .is_some_and(|e| crate::repo::normalize("", &e.value).0 == path)
            });
            if declared {
                continue;
            }
            let tail = path.rsplit('/').next().filter(|t| !t.is_empty());
            let name = match tail {
                Some(tail) if !self.clusters.contains_key(tail) => tail.to_string(),
                _ if path.is_empty() => "root".to_string(),
                _ => path.clone(),
            };
            let here = serde_saphyr::Location::UNKNOWN;
            // As written: an error names it the way the user typed it.
            self.clusters.entry(name).or_default().entry =
                Some(serde_saphyr::Spanned::new(dir.clone(), here, here));
        }
    }

    /// The sections the rules read.
    pub(crate) fn rule_settings(&self) -> crate::rules::Settings<'_> {
        crate::rules::Settings {
            parity: &self.parity,
            policies: &self.policies,
            tier_script: self.bootstrap.as_ref(),
            toolchain: self.toolchain.as_ref(),
            substitution: &self.substitution,
            waivers: &self.waivers,
            severity: &self.severity,
            kubernetes: self.kubernetes_declared(),
        }
    }

    /// What conformance.yaml declares about Kubernetes versions.
    pub(crate) fn kubernetes_declared(&self) -> crate::provenance::distribution::Declared<'_> {
        crate::provenance::distribution::Declared {
            clusters: &self.clusters,
            file: self.kubernetes.as_ref(),
        }
    }

    /// The Kubernetes version `clusters.<name>.kubernetes` declares.
    pub fn kubernetes_of(&self, cluster: &str) -> Option<&str> {
        self.clusters
            .get(cluster)
            .and_then(|c| c.kubernetes.as_ref().map(|v| v.value.as_str()))
    }

    /// The embedded catalog extended with this repository's additions.
    pub fn catalog(&self) -> Catalog {
        let mut extra = self.catalog.clone();
        // What `provides:` declares a step creates exists before Flux, as
        // if the catalog said so.
        // (An entry of no known shape is refused with its line before a
        // run starts: `pipeline::declare`.)
        // So does what `external:` declares.
        let declared = self.provides.iter().flat_map(|p| &p.creates);
        for entry in declared.chain(&self.external) {
            match created(&entry.value) {
                Ok(Created::Namespace(ns)) => extra.preinstalled_namespaces.push(ns.to_string()),
                Ok(Created::Kind) => extra.preinstalled.push(entry.value.clone()),
                Ok(Created::Object) => extra.preinstalled_objects.push(entry.value.clone()),
                Err(_) => {}
            }
        }
        Catalog::embedded().extended(&extra)
    }

    /// Names this file uses for clusters that discovery did not find, with
    /// their lines (reported by `config check` and `check`).
    pub(crate) fn unknown_clusters(&self, discovered: &[String]) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        for group in self.parity.groups.iter().flatten() {
            for name in group {
                if !discovered.contains(&name.value) {
                    out.push((name.value.clone(), name.referenced.line() as u32));
                }
            }
        }
        for name in self.clusters.keys() {
            if !discovered.contains(name) {
                out.push((name.clone(), 0));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_key_and_line() {
        let err = Config::parse(
            "catalog:\n  charts: []\n  preinstaled: [x.io]\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.message.contains("preinstaled"), "{}", err.message);
    }

    #[test]
    fn wrong_type_says_what_was_expected() {
        let err = Config::parse(
            "substitution:\n  strict: maybe\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert_eq!(err.line, 2);
    }

    #[test]
    fn catalog_extends_the_embedded_one() {
        let cfg = Config::parse(
            "catalog:\n  preinstalled: [talos.dev]\n  charts:\n    - chart: my-operator\n      groups: [my.example.com]\n", &crate::rules::is_rule_id)
        .unwrap();
        let catalog = cfg.catalog();
        assert!(catalog.is_preinstalled("talos.dev", "ServiceAccount"));
        assert!(catalog.chart_groups().contains_key("my-operator"));
        assert!(catalog.chart_groups().contains_key("cert-manager"));
    }

    #[test]
    fn bad_field_path_regex_and_date_are_errors_with_lines() {
        let err = Config::parse(
            "policies:\n  fields:\n    - kind: KubeVirt\n      path: spec..x\n      absent: true\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert_eq!(err.line, 4, "{err}");
        let err = Config::parse(
            "policies:\n  fields:\n    - kind: Pod\n      path: spec.x\n      matches: \"([\"\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert_eq!(err.line, 5, "{err}");
        let err = Config::parse(
            "policies:\n  fields:\n    - kind: Pod\n      path: spec.x\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert!(err.message.contains("exactly one"), "{err}");
        let err = Config::parse(
            "waivers:\n  - rule: graph-parity\n    reason: x\n    expires: 2026-13-01\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert_eq!(err.line, 4, "{err}");
        for day in ["2024-02-30", "2023-02-29"] {
            let err = Config::parse(
                &format!("waivers:\n  - rule: graph-parity\n    reason: x\n    expires: {day}\n"),
                &crate::rules::is_rule_id,
            )
            .unwrap_err();
            assert_eq!(err.line, 4, "{err}");
            assert!(err.message.contains(day), "{err}");
        }
        let err = Config::parse(
            "waivers:\n  - rule: no-such-rule\n    reason: x\n    expires: 2026-12-01\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert!(err.message.contains("unknown rule"), "{err}");
    }

    #[test]
    fn a_duplicate_key_is_named_without_the_parsers_advice() {
        let err = Config::parse(
            "renderer: native\nrenderer: kustomize\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert_eq!(err.line, 2, "{err}");
        assert_eq!(err.message, "duplicate mapping key: renderer", "{err}");
    }

    #[test]
    fn every_type_error_is_reported_at_once() {
        let err = Config::parse(
            "substitution:\n  strict: maybe\nwaivers:\n  - rule: graph-parity\n    reason: x\n    expires: 2026-13-01\n  - rule: graph-parity\n    reasn: x\n    expires: 2026-12-01\nrenderer: natve\nseverity:\n  health-gate: error\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        let lines: Vec<u32> = std::iter::once(err.line)
            .chain(err.more.iter().map(|m| m.line))
            .collect();
        assert_eq!(lines, [2, 6, 8, 10], "{err}");
        assert!(err.more[1].message.contains("reasn"), "{err}");
    }

    #[test]
    fn severity_overrides_are_strict() {
        let cfg = Config::parse(
            "severity:\n  cold-start-race: error\n",
            &crate::rules::is_rule_id,
        )
        .unwrap();
        assert_eq!(
            cfg.severity["cold-start-race"].value,
            crate::rules::Configured::Error
        );
        let cfg =
            Config::parse("severity:\n  remote-base: off\n", &crate::rules::is_rule_id).unwrap();
        assert_eq!(
            cfg.severity["remote-base"].value,
            crate::rules::Configured::Off
        );
        let err = Config::parse(
            "severity:\n  cold-start-rcae: error\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert_eq!(err.line, 2, "{err}");
        assert!(
            err.message.contains("unknown rule `cold-start-rcae`"),
            "{err}"
        );
        let err = Config::parse(
            "severity:\n  health-gate: fatal\n",
            &crate::rules::is_rule_id,
        )
        .unwrap_err();
        assert_eq!(err.line, 2, "{err}");
    }

    #[test]
    fn booleans_are_strict() {
        for text in [
            "substitution:\n  strict: \"no\"\n",
            "substitution:\n  strict: no\n",
            "substitution:\n  strict: yes\n",
            "substitution:\n  strict: 0\n",
        ] {
            let err = Config::parse(text, &crate::rules::is_rule_id).unwrap_err();
            assert_eq!(err.line, 2, "{text}: {err}");
        }
        assert_eq!(
            Config::parse(
                "substitution:\n  strict: false\n",
                &crate::rules::is_rule_id
            )
            .unwrap()
            .substitution
            .strict,
            Some(false)
        );
    }

    #[test]
    fn every_problem_is_reported_in_one_run() {
        let err = Config::parse(
            "policies:\n  fields:\n    - kind: Pod\n      path: spec..x\n      absent: true\nwaivers:\n  - rule: no-such-rule\n    reason: x\n    expires: 2026-13-01\n", &crate::rules::is_rule_id)
        .unwrap_err();
        let lines: Vec<u32> = std::iter::once(err.line)
            .chain(err.more.iter().map(|e| e.line))
            .collect();
        assert_eq!(lines, [4, 7, 9], "{err}");
        let text = err.to_string();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(
            text.contains("unknown rule") && text.contains("YYYY-MM-DD"),
            "{text}"
        );
    }
}
