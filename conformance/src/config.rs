//! `conformance.yaml`: what cannot be discovered, strictly parsed.
//!
//! Every section is optional. An unknown key is an error naming the key, the
//! file and the line; so is a value of the wrong type, a field path that does
//! not parse, a regex that does not compile, a date that is not a date. A typo
//! never silently disables a check.

use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::provenance::Catalog;
pub use crate::rules::bootstrap::cfg::{Bootstrap, Toolchain};
pub use crate::rules::placement::cfg::{FieldPath, Policies, Segment, glob, matches_glob};
pub use crate::rules::waivers::cfg::{Date, Waiver};

/// The file name looked up at the repository root.
pub const FILE_NAME: &str = "conformance.yaml";

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
    #[serde(default)]
    pub policies: Policies,
    /// The bootstrap script whose tier list must match the graph.
    #[serde(default)]
    pub bootstrap: Option<Bootstrap>,
    /// Toolchain version files that must agree with each other and with the
    /// clusters.
    #[serde(default)]
    pub toolchain: Option<Toolchain>,
    #[serde(default)]
    pub waivers: Vec<Waiver>,
    /// Severity per rule id, overriding the rule's default
    /// (`cold-start-race: error` for a team whose policy is that a cold
    /// cluster orders itself).
    #[serde(default)]
    pub severity: std::collections::BTreeMap<String, Spanned<crate::rules::Severity>>,
    /// `native` (default), `kustomize` (the external program) or `auto`.
    #[serde(default)]
    pub renderer: Option<crate::render::Choice>,
    /// The live-cluster (l1-cluster) run.
    #[serde(default)]
    pub l1: L1,
    /// Sources that are this repository although they are not its
    /// GitRepository (an OCI artifact built from one of its directories).
    #[serde(default)]
    pub sources: Vec<SourceMapping>,
}

/// `sources[]`: a Flux source whose artifact is a directory of this
/// repository.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceMapping {
    /// `OCIRepository`, `Bucket`, `GitRepository`, `ExternalArtifact`.
    pub kind: String,
    pub name: String,
    /// Default: any namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The repository directory the artifact is built from (`kubernetes`).
    pub path: String,
}

/// `l1:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1 {
    /// Tiers (by name) a bare k3s can run; default: the runtime triggers'
    /// tiers, their ancestors and their consumers.
    #[serde(default)]
    pub tiers: Vec<String>,
    /// The k3s image (`rancher/k3s:v1.36.4-k3s1`); default: from the
    /// cluster's Kubernetes version, else a pinned release.
    #[serde(default)]
    pub image: Option<String>,
    /// The cluster L1 runs (default: the first discovered).
    #[serde(default)]
    pub cluster: Option<String>,
    /// Repository files L1 replaces with a published copy (operator
    /// manifests a repository trims or vendors, a trimmed
    /// `gotk-components.yaml`): downloaded, checked against `sha256`, and
    /// used in place of the file in the tree Flux is served.
    #[serde(default)]
    pub manifests: Vec<L1Manifest>,
}

/// `l1.manifests[]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1Manifest {
    /// The repository file it replaces (relative to the repository root).
    pub file: Spanned<String>,
    /// Where the published file is (`https://…/releases/download/v1.61.0/cdi-operator.yaml`).
    pub url: Spanned<String>,
    /// The published file's SHA-256, 64 hex digits. Without it L1 refuses
    /// the file and prints the digest of what it downloaded, to pin.
    #[serde(default)]
    pub sha256: Option<Spanned<String>>,
}

/// `parity:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parity {
    /// Groups of cluster names whose graphs must be identical. Absent: every
    /// discovered cluster is one group. An empty list turns parity off.
    #[serde(default)]
    pub groups: Option<Vec<Vec<Spanned<String>>>>,
}

/// `clusters.<name>:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterFacts {
    /// The Kubernetes version the cluster runs (`1.36`, `v1.36.4+k3s1`).
    #[serde(default)]
    pub kubernetes: Option<Spanned<String>>,
    /// The directory the cluster syncs, when its sync is not in git (a
    /// managed Flux extension, Terraform, `flux create`): declares the
    /// cluster.
    #[serde(default)]
    pub entry: Option<Spanned<String>>,
    /// The sync source of a declared entry (default: GitRepository
    /// flux-system in flux-system).
    #[serde(default)]
    pub source: Option<EntrySource>,
}

/// `clusters.<name>.source`: the Flux source a declared entry syncs from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntrySource {
    #[serde(default = "git_repository")]
    pub kind: String,
    pub name: String,
    #[serde(default = "flux_system")]
    pub namespace: String,
}

fn git_repository() -> String {
    "GitRepository".into()
}

fn flux_system() -> String {
    "flux-system".into()
}

/// `kubernetes:` — a version read from a file of the repository.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionSource {
    /// A `KEY=value` file (versions.env style).
    pub file: Spanned<String>,
    /// The key holding the version (`K3S_VERSION`).
    pub variable: String,
}

/// `substitution:` settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Substitution {
    /// Strict substitution (an undefined variable fails the build), as the
    /// cluster's kustomize-controller does it. Absent: read from the Flux
    /// the repository installs (strict from kustomize-controller 1.9 /
    /// Flux 2.9; strict when it cannot be told).
    #[serde(default)]
    pub strict: Option<bool>,
}

/// `conformance.yaml` is unreadable or invalid: the first problem, and any
/// more found in the same run.
#[derive(Debug)]
pub struct ConfigError {
    pub file: String,
    pub line: u32,
    pub message: String,
    /// Further problems, in line order.
    pub more: Vec<ConfigError>,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)?;
        for more in &self.more {
            write!(f, "\n{more}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// A problem at a line of conformance.yaml (0: the whole file).
    pub fn new(line: u32, message: String) -> ConfigError {
        ConfigError {
            file: FILE_NAME.into(),
            line,
            message,
            more: Vec::new(),
        }
    }
}

/// A problem at the line of a value of conformance.yaml.
pub(crate) fn error_at<T>(spanned: &Spanned<T>, message: String) -> ConfigError {
    ConfigError::new(spanned.referenced.line() as u32, message)
}

impl Config {
    /// Reads `conformance.yaml` from the repository root; the default when
    /// there is none.
    pub fn load(repo: &Path) -> Result<Config, ConfigError> {
        let path = repo.join(FILE_NAME);
        if !path.is_file() {
            return Ok(Config::default());
        }
        let text =
            std::fs::read_to_string(&path).map_err(|err| ConfigError::new(0, err.to_string()))?;
        Config::parse(&text)
    }

    /// Parses and validates.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        // Strict types, as documented: `no`, `"no"` and `yes` are not
        // booleans here (YAML 1.2, as go-yaml v3 reads it).
        let options = serde_saphyr::options! {
            strict_booleans: true,
            legacy_octal_numbers: true,
        };
        let config: Config = serde_saphyr::from_str_with_options(text, options).map_err(|err| {
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
            ConfigError::new(line, message.to_string())
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Checks what the types cannot (paths, regexes, dates, rule ids,
    /// versions), every section with its own rules, and reports every
    /// problem at once.
    fn validate(&self) -> Result<(), ConfigError> {
        let mut problems = Vec::new();
        self.policies.validate(&mut problems);
        crate::rules::waivers::cfg::validate(&self.waivers, &mut problems);
        for (rule, severity) in &self.severity {
            if crate::rules::by_id(rule).is_none() {
                problems.push(error_at(
                    severity,
                    format!(
                        "severity for unknown rule `{rule}` (see `conformance explain` for the rule ids)"
                    ),
                ));
            }
        }
        for facts in self.clusters.values() {
            if let Some(v) = &facts.kubernetes
                && minor_version(&v.value).is_none()
            {
                problems.push(error_at(
                    v,
                    format!(
                        "`{}` is not a Kubernetes version like 1.36 or v1.36.4+k3s1",
                        v.value
                    ),
                ));
            }
        }
        for m in &self.l1.manifests {
            let (path, escapes) = crate::repo::normalize("", &m.file.value);
            if escapes || path.is_empty() || m.file.value.starts_with('/') {
                problems.push(error_at(
                    &m.file,
                    format!(
                        "l1.manifests file `{}` must be a path inside the repository",
                        m.file.value
                    ),
                ));
            }
            if !m.url.value.starts_with("https://") {
                problems.push(error_at(
                    &m.url,
                    format!(
                        "l1.manifests url `{}` must be an https:// address",
                        m.url.value
                    ),
                ));
            }
            if let Some(sum) = &m.sha256
                && !(sum.value.len() == 64 && sum.value.bytes().all(|b| b.is_ascii_hexdigit()))
            {
                problems.push(error_at(
                    sum,
                    format!(
                        "l1.manifests sha256 `{}` is not 64 hex digits (compute it with `curl -fsSL <url> | sha256sum`)",
                        sum.value
                    ),
                ));
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

    /// What discovery needs from this file: the configured sources and the
    /// declared entries.
    pub fn declared(&self) -> crate::discover::Declared {
        let sources = crate::discover::LocalSources(
            self.sources
                .iter()
                .map(|s| crate::discover::LocalSource {
                    kind: s.kind.clone(),
                    name: s.name.clone(),
                    namespace: s.namespace.clone(),
                    dir: crate::repo::normalize("", &s.path).0,
                })
                .collect(),
        );
        let entries = self
            .clusters
            .iter()
            .filter_map(|(name, facts)| {
                let path = facts.entry.as_ref()?;
                Some(crate::discover::DeclaredEntry {
                    name: name.clone(),
                    path: crate::repo::normalize("", &path.value).0,
                    source: facts.source.as_ref().map(|s| crate::model::SourceRef {
                        kind: s.kind.clone(),
                        namespace: s.namespace.clone(),
                        name: s.name.clone(),
                    }),
                })
            })
            .collect();
        crate::discover::Declared { sources, entries }
    }

    /// The embedded catalog extended with this repository's additions.
    pub fn catalog(&self) -> Catalog {
        Catalog::embedded().extended(&self.catalog)
    }

    /// The parity groups over the discovered clusters.
    pub fn parity_groups(&self, discovered: &[String]) -> Vec<Vec<String>> {
        match &self.parity.groups {
            None => vec![discovered.to_vec()],
            Some(groups) => groups
                .iter()
                .map(|g| g.iter().map(|s| s.value.clone()).collect())
                .collect(),
        }
    }

    /// Names this file uses for clusters that discovery did not find, with
    /// their lines (reported by `config check` and `check`).
    pub fn unknown_clusters(&self, discovered: &[String]) -> Vec<(String, u32)> {
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

/// `1.36`, `v1.36.4+k3s1`, `1.36.4` → (1, 36).
pub fn minor_version(text: &str) -> Option<(u32, u32)> {
    let t = text.trim().trim_start_matches('v');
    let mut parts = t.split(['.', '+', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_key_and_line() {
        let err = Config::parse("catalog:\n  charts: []\n  preinstaled: [x.io]\n").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.message.contains("preinstaled"), "{}", err.message);
    }

    #[test]
    fn wrong_type_says_what_was_expected() {
        let err = Config::parse("substitution:\n  strict: maybe\n").unwrap_err();
        assert_eq!(err.line, 2);
    }

    #[test]
    fn catalog_extends_the_embedded_one() {
        let cfg = Config::parse(
            "catalog:\n  preinstalled: [talos.dev]\n  charts:\n    - chart: my-operator\n      groups: [my.example.com]\n",
        )
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
        )
        .unwrap_err();
        assert_eq!(err.line, 4, "{err}");
        let err = Config::parse(
            "policies:\n  fields:\n    - kind: Pod\n      path: spec.x\n      matches: \"([\"\n",
        )
        .unwrap_err();
        assert_eq!(err.line, 5, "{err}");
        let err = Config::parse("policies:\n  fields:\n    - kind: Pod\n      path: spec.x\n")
            .unwrap_err();
        assert!(err.message.contains("exactly one"), "{err}");
        let err = Config::parse(
            "waivers:\n  - rule: graph-parity\n    reason: x\n    expires: 2026-13-01\n",
        )
        .unwrap_err();
        assert_eq!(err.line, 4, "{err}");
        let err = Config::parse(
            "waivers:\n  - rule: no-such-rule\n    reason: x\n    expires: 2026-12-01\n",
        )
        .unwrap_err();
        assert!(err.message.contains("unknown rule"), "{err}");
    }

    #[test]
    fn severity_overrides_are_strict() {
        let cfg = Config::parse("severity:\n  cold-start-race: error\n").unwrap();
        assert_eq!(
            cfg.severity["cold-start-race"].value,
            crate::rules::Severity::Error
        );
        let err = Config::parse("severity:\n  cold-start-rcae: error\n").unwrap_err();
        assert_eq!(err.line, 2, "{err}");
        assert!(
            err.message.contains("unknown rule `cold-start-rcae`"),
            "{err}"
        );
        let err = Config::parse("severity:\n  health-gate: fatal\n").unwrap_err();
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
            let err = Config::parse(text).unwrap_err();
            assert_eq!(err.line, 2, "{text}: {err}");
        }
        assert_eq!(
            Config::parse("substitution:\n  strict: false\n")
                .unwrap()
                .substitution
                .strict,
            Some(false)
        );
    }

    #[test]
    fn every_problem_is_reported_in_one_run() {
        let err = Config::parse(
            "policies:\n  fields:\n    - kind: Pod\n      path: spec..x\n      absent: true\nwaivers:\n  - rule: no-such-rule\n    reason: x\n    expires: 2026-13-01\n",
        )
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

    #[test]
    fn versions_and_dates() {
        assert_eq!(minor_version("v1.36.4+k3s1"), Some((1, 36)));
        assert_eq!(minor_version("1.31"), Some((1, 31)));
        assert_eq!(minor_version("latest"), None);
    }
}
