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
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Substitution {
    /// Strict substitution (an undefined variable fails the build): the
    /// default since Flux 2.9 / kustomize-controller 1.9. Set `false` for
    /// older controllers, where it becomes the empty string.
    #[serde(default = "yes")]
    pub strict: bool,
}

impl Default for Substitution {
    fn default() -> Self {
        Substitution { strict: true }
    }
}

fn yes() -> bool {
    true
}

/// `policies:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policies {
    #[serde(default)]
    pub placement: Vec<Placement>,
    #[serde(default)]
    pub fields: Vec<FieldPolicy>,
}

/// One `kind-placement` policy.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// Kustomization name or glob (`platform-config`, `apps-*`).
    pub kustomization: Spanned<String>,
    /// Cluster name or glob (default: every cluster).
    #[serde(default)]
    pub cluster: Option<String>,
    /// Kinds (`Kind` or `group/Kind`) that must not appear.
    #[serde(default)]
    pub forbid: Vec<String>,
    /// Kinds that must appear at least once.
    #[serde(default)]
    pub require: Vec<String>,
    /// Kinds that must appear exactly this many times.
    #[serde(default)]
    pub count: std::collections::BTreeMap<String, usize>,
    /// Why (shown in findings).
    #[serde(default)]
    pub reason: Option<String>,
}

/// One `field-policy`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldPolicy {
    /// `Kind` or `group/Kind`.
    pub kind: String,
    #[serde(default)]
    pub kustomization: Option<String>,
    #[serde(default)]
    pub cluster: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    /// The field: `spec.configuration.evictionStrategy`,
    /// `spec.template.spec.containers[*].image`, `metadata.labels["app.kubernetes.io/name"]`.
    pub path: Spanned<String>,
    #[serde(default)]
    pub absent: Option<bool>,
    #[serde(default)]
    pub present: Option<bool>,
    #[serde(default)]
    pub equals: Option<Spanned<String>>,
    #[serde(default)]
    pub matches: Option<Spanned<String>>,
    #[serde(default)]
    pub reason: Option<String>,
}

/// `bootstrap:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bootstrap {
    /// The script (default `bootstrap/standup.sh`).
    #[serde(default = "default_script")]
    pub script: String,
    /// The bash array listing the tiers (default `TIER_ORDER`).
    #[serde(default = "default_variable")]
    pub variable: String,
    /// Clusters the script serves (default: all).
    #[serde(default)]
    pub clusters: Vec<String>,
}

pub fn default_script() -> String {
    "bootstrap/standup.sh".into()
}

pub fn default_variable() -> String {
    "TIER_ORDER".into()
}

/// `toolchain:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolchain {
    /// `KEY=value` files (default: every `versions.env` in the repository).
    #[serde(default)]
    pub files: Vec<String>,
    /// The key holding the kubectl version (default `KUBECTL_VERSION`).
    #[serde(default = "default_kubectl_variable")]
    pub variable: String,
}

pub fn default_kubectl_variable() -> String {
    "KUBECTL_VERSION".into()
}

/// A waiver: a finding that is accepted until a date.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waiver {
    pub rule: Spanned<String>,
    #[serde(default)]
    pub cluster: Option<String>,
    #[serde(default)]
    pub kustomization: Option<String>,
    /// `Kind/namespace/name` or `Kind/name`.
    #[serde(default)]
    pub object: Option<String>,
    pub reason: String,
    /// `YYYY-MM-DD`: the last day the waiver applies.
    pub expires: Spanned<String>,
}

/// `conformance.yaml` is unreadable or invalid.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub line: u32,
    pub message: String,
}

impl ConfigError {
    /// A problem at a line of conformance.yaml (0: the whole file).
    pub fn new(line: u32, message: String) -> ConfigError {
        ConfigError {
            file: FILE_NAME.into(),
            line,
            message,
        }
    }
}

fn error_at<T>(spanned: &Spanned<T>, message: String) -> ConfigError {
    ConfigError {
        file: FILE_NAME.into(),
        line: spanned.referenced.line() as u32,
        message,
    }
}

impl Config {
    /// Reads `conformance.yaml` from the repository root; the default when
    /// there is none.
    pub fn load(repo: &Path) -> Result<Config, ConfigError> {
        let path = repo.join(FILE_NAME);
        if !path.is_file() {
            return Ok(Config::default());
        }
        let text = std::fs::read_to_string(&path).map_err(|err| ConfigError {
            file: FILE_NAME.into(),
            line: 0,
            message: err.to_string(),
        })?;
        Config::parse(&text)
    }

    /// Parses and validates.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let config: Config = serde_saphyr::from_str(text).map_err(|err| {
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
            ConfigError {
                file: FILE_NAME.into(),
                line,
                message: message.to_string(),
            }
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Checks what the types cannot: paths, regexes, dates, exclusive options.
    fn validate(&self) -> Result<(), ConfigError> {
        for policy in &self.policies.fields {
            FieldPath::parse(&policy.path.value).map_err(|message| {
                error_at(
                    &policy.path,
                    format!("field path `{}`: {message}", policy.path.value),
                )
            })?;
            let checks = [
                policy.absent.is_some(),
                policy.present.is_some(),
                policy.equals.is_some(),
                policy.matches.is_some(),
            ]
            .into_iter()
            .filter(|set| *set)
            .count();
            if checks != 1 {
                return Err(error_at(
                    &policy.path,
                    format!(
                        "field policy on `{}` needs exactly one of absent, present, equals, matches (found {checks})",
                        policy.path.value
                    ),
                ));
            }
            if let Some(pattern) = &policy.matches {
                regex::Regex::new(&pattern.value).map_err(|err| {
                    error_at(
                        pattern,
                        format!("regex `{}` does not compile: {err}", pattern.value),
                    )
                })?;
            }
        }
        for placement in &self.policies.placement {
            if placement.forbid.is_empty()
                && placement.require.is_empty()
                && placement.count.is_empty()
            {
                return Err(error_at(
                    &placement.kustomization,
                    "placement policy needs at least one of forbid, require, count".into(),
                ));
            }
            glob(&placement.kustomization.value)
                .map_err(|message| error_at(&placement.kustomization, message))?;
        }
        for waiver in &self.waivers {
            if crate::rules::by_id(&waiver.rule.value).is_none() {
                return Err(error_at(
                    &waiver.rule,
                    format!("waiver for unknown rule `{}`", waiver.rule.value),
                ));
            }
            Date::parse(&waiver.expires.value).ok_or_else(|| {
                error_at(
                    &waiver.expires,
                    format!(
                        "expires `{}` is not a YYYY-MM-DD date",
                        waiver.expires.value
                    ),
                )
            })?;
        }
        for facts in self.clusters.values() {
            if let Some(v) = &facts.kubernetes {
                minor_version(&v.value).ok_or_else(|| {
                    error_at(
                        v,
                        format!(
                            "`{}` is not a Kubernetes version like 1.36 or v1.36.4+k3s1",
                            v.value
                        ),
                    )
                })?;
            }
        }
        Ok(())
    }

    /// The configured sources, for discovery.
    pub fn local_sources(&self) -> crate::discover::LocalSources {
        crate::discover::LocalSources(
            self.sources
                .iter()
                .map(|s| crate::discover::LocalSource {
                    kind: s.kind.clone(),
                    name: s.name.clone(),
                    namespace: s.namespace.clone(),
                    dir: crate::repo::normalize("", &s.path).0,
                })
                .collect(),
        )
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

/// A compiled glob for names (`*` and `?`).
pub fn glob(pattern: &str) -> Result<globset::GlobMatcher, String> {
    globset::Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|err| format!("bad glob `{pattern}`: {err}"))
}

/// Whether `name` matches the optional glob (absent matches everything).
pub fn matches_glob(pattern: Option<&str>, name: &str) -> bool {
    match pattern {
        None => true,
        Some(p) => glob(p).is_ok_and(|g| g.is_match(name)),
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

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

impl Date {
    pub fn parse(text: &str) -> Option<Date> {
        let mut parts = text.trim().split('-');
        let year = parts.next()?.parse().ok()?;
        let month = parts.next()?.parse().ok()?;
        let day = parts.next()?.parse().ok()?;
        if parts.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
            return None;
        }
        Some(Date { year, month, day })
    }

    /// Today (UTC), or `CONFORMANCE_TODAY` (YYYY-MM-DD) when set, so runs and
    /// tests can be pinned to a date.
    pub fn today() -> Date {
        if let Some(d) = std::env::var("CONFORMANCE_TODAY")
            .ok()
            .and_then(|t| Date::parse(&t))
        {
            return d;
        }
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Date::from_days((secs / 86_400) as i64)
    }

    /// The civil date of a day count since 1970-01-01 (Hinnant's algorithm).
    fn from_days(z: i64) -> Date {
        let z = z + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Date { year, month, day }
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// A field path: keys separated by `.`, `["quoted.key"]` for keys with dots,
/// `[N]` for a list index and `[*]` for every item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Segment>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
    Every,
}

impl FieldPath {
    pub fn parse(text: &str) -> Result<FieldPath, String> {
        let mut segments = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        let mut key = String::new();
        let flush = |key: &mut String, segments: &mut Vec<Segment>| -> Result<(), String> {
            if key.is_empty() {
                return Err("empty key".into());
            }
            segments.push(Segment::Key(std::mem::take(key)));
            Ok(())
        };
        if chars.is_empty() {
            return Err("empty path".into());
        }
        while i < chars.len() {
            match chars[i] {
                '.' => {
                    if !key.is_empty() {
                        flush(&mut key, &mut segments)?;
                    } else if i == 0 || chars[i - 1] != ']' {
                        return Err(format!("empty key at character {}", i + 1));
                    }
                    i += 1;
                }
                '[' => {
                    if !key.is_empty() {
                        flush(&mut key, &mut segments)?;
                    }
                    let close = chars[i..]
                        .iter()
                        .position(|c| *c == ']')
                        .ok_or_else(|| format!("unclosed `[` at character {}", i + 1))?;
                    let inner: String = chars[i + 1..i + close].iter().collect();
                    let segment = if inner == "*" {
                        Segment::Every
                    } else if let Ok(n) = inner.parse::<usize>() {
                        Segment::Index(n)
                    } else if inner.len() >= 2
                        && (inner.starts_with('"') && inner.ends_with('"')
                            || inner.starts_with('\'') && inner.ends_with('\''))
                    {
                        Segment::Key(inner[1..inner.len() - 1].to_string())
                    } else {
                        return Err(format!("`[{inner}]` is not an index, [*] or a quoted key"));
                    };
                    segments.push(segment);
                    i += close + 1;
                    if i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                        return Err(format!(
                            "expected `.` or `[` after `]` at character {}",
                            i + 1
                        ));
                    }
                }
                c => {
                    key.push(c);
                    i += 1;
                }
            }
        }
        if !key.is_empty() {
            flush(&mut key, &mut segments)?;
        } else if text.ends_with('.') {
            return Err("path ends with `.`".into());
        }
        Ok(FieldPath(segments))
    }

    /// Every node the path reaches in `node`.
    pub fn select<'n>(&self, node: &'n crate::yaml::Node) -> Vec<&'n crate::yaml::Node> {
        let mut current = vec![node];
        for segment in &self.0 {
            let mut next = Vec::new();
            for n in current {
                match segment {
                    Segment::Key(k) => next.extend(n.get(k)),
                    Segment::Index(i) => next.extend(n.as_seq().get(*i)),
                    Segment::Every => next.extend(n.as_seq()),
                }
            }
            current = next;
        }
        current
    }
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
    fn field_paths_parse() {
        assert_eq!(
            FieldPath::parse("spec.template.spec.containers[*].image")
                .unwrap()
                .0,
            vec![
                Segment::Key("spec".into()),
                Segment::Key("template".into()),
                Segment::Key("spec".into()),
                Segment::Key("containers".into()),
                Segment::Every,
                Segment::Key("image".into()),
            ]
        );
        assert_eq!(
            FieldPath::parse("metadata.annotations[\"a.b/c\"]")
                .unwrap()
                .0
                .last(),
            Some(&Segment::Key("a.b/c".into()))
        );
        for bad in ["", ".", "a.", "a..b", "a[", "a[x]", "a[0]b"] {
            assert!(FieldPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn versions_and_dates() {
        assert_eq!(minor_version("v1.36.4+k3s1"), Some((1, 36)));
        assert_eq!(minor_version("1.31"), Some((1, 31)));
        assert_eq!(minor_version("latest"), None);
        assert_eq!(Date::from_days(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_days(20_787).to_string(), "2026-11-30");
        assert!(Date::parse("2026-12-31").unwrap() > Date::parse("2026-11-30").unwrap());
    }
}
