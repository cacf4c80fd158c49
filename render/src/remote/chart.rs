//! Fetching a HelmRelease's chart, as source-controller does for a
//! HelmChart (`--fetch-remote`): from an HTTP(S) Helm repository, its
//! `index.yaml` and the archive the chosen version's entry names
//! (`repository.ChartRepository.LoadIndexFromBytes`, `Get`); from an OCI
//! registry, the manifest of the chosen tag and its Helm chart layer
//! (`application/vnd.cncf.helm.chart.content.v1.tar+gzip`), with the
//! anonymous token a registry's 401 points to (the distribution API's
//! `WWW-Authenticate: Bearer realm=…,service=…,scope=…`). The version is
//! chosen as Helm does: the highest that satisfies the constraint
//! (Masterminds semver: `1.2.3`, `~1.2`, `^1`, `>=1.0 <2.0`, `1.x`,
//! `a || b`), stable releases only unless the constraint names a
//! prerelease, and the newest when none is given.
//!
//! The archive is kept in the cache like any fetched file; when the
//! address cannot be reached, the copy it gave last is used and the caller
//! says so. The files are unpacked in memory only, within budgets, and
//! never written anywhere.

use std::io::Read;

use super::{Failure, Fetcher, cache, http};

/// Budget for a repository's `index.yaml` (large public repositories
/// publish tens of megabytes).
const INDEX_BYTES: u64 = 64 << 20;
/// Budget for one chart archive, and for everything unpacked from it.
const ARCHIVE_BYTES: u64 = 32 << 20;
/// Budget for the files of one archive.
const ARCHIVE_FILES: usize = 20_000;

/// Where a chart comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ChartRef {
    /// An HTTP(S) Helm repository (`HelmRepository` of type `default`).
    Repository {
        /// The repository's URL.
        url: String,
        /// The chart's name.
        chart: String,
        /// The version constraint (`spec.chart.spec.version`), if any.
        version: Option<String>,
    },
    /// An OCI registry: `oci://host/path/chart` (an `OCIRepository`, or a
    /// `HelmRepository` of type `oci` plus the chart's name).
    Oci {
        /// `oci://host/path/chart`.
        url: String,
        /// An exact tag or digest (`spec.ref.tag`, `spec.ref.digest`).
        tag: Option<String>,
        /// A version constraint (`spec.ref.semver`, a HelmRepository
        /// chart's `version`), chosen among the registry's tags.
        version: Option<String>,
        /// Plain HTTP (`spec.insecure: true`).
        insecure: bool,
    },
}

impl ChartRef {
    /// In words, for reports: `chart cert-manager (v1.16.x) from
    /// https://charts.jetstack.io`.
    pub fn describe(&self) -> String {
        match self {
            ChartRef::Repository {
                url,
                chart,
                version,
            } => format!(
                "chart {chart}{} from {url}",
                version
                    .as_ref()
                    .map(|v| format!(" ({v})"))
                    .unwrap_or_default()
            ),
            ChartRef::Oci {
                url, tag, version, ..
            } => format!(
                "chart {url}{}",
                match (tag, version) {
                    (Some(t), _) => format!(":{t}"),
                    (None, Some(v)) => format!(" ({v})"),
                    (None, None) => String::new(),
                }
            ),
        }
    }
}

/// A chart's archive, unpacked: its files relative to the chart's
/// directory, and what was fetched.
#[derive(Debug)]
pub struct ChartFiles {
    /// `Chart.yaml`, `crds/…`, `templates/…`, `charts/…`.
    pub files: Vec<(String, Vec<u8>)>,
    /// The version fetched.
    pub version: String,
    /// Set when the fetch failed now and an earlier copy is used: why.
    pub stale: Option<String>,
}

/// What fetching a chart gave.
pub(super) type ChartOutcome = Result<std::sync::Arc<ChartFiles>, Failure>;

impl Fetcher {
    /// The chart `r` names, fetched once per run.
    pub fn chart(&self, r: &ChartRef) -> ChartOutcome {
        let key = format!("chart {r:?}");
        let cell = {
            let mut memo = match self.charts.lock() {
                Ok(m) => m,
                Err(poisoned) => poisoned.into_inner(),
            };
            memo.entry(key).or_default().clone()
        };
        cell.get_or_init(|| self.fetch_chart(r).map(std::sync::Arc::new))
            .clone()
    }

    fn fetch_chart(&self, r: &ChartRef) -> Result<ChartFiles, Failure> {
        let address = format!("chart {}", r.describe());
        let fetched = match r {
            ChartRef::Repository {
                url,
                chart,
                version,
            } => self.fetch_from_repository(url, chart, version.as_deref()),
            ChartRef::Oci {
                url,
                tag,
                version,
                insecure,
            } => self.fetch_from_registry(url, tag.as_deref(), version.as_deref(), *insecure),
        };
        let (bytes, version, stale) = match fetched {
            Ok((bytes, version)) => {
                let hash = self
                    .cache
                    .put_blob(&bytes)
                    .map_err(|e| unknown(e.to_string()))?;
                self.cache
                    .put_record(&address, &format!("blob {hash} {version}"))
                    .map_err(|e| unknown(e.to_string()))?;
                (bytes, version, None)
            }
            Err(f) if f.definitive => return Err(f),
            Err(f) => {
                let cached = self.cache.record(&address).and_then(|rec| {
                    let rest = rec.content.strip_prefix("blob ")?;
                    let (hash, version) = rest.split_once(' ')?;
                    Some((
                        self.cache.blob(hash)?,
                        version.to_string(),
                        cache::ago(rec.fetched),
                    ))
                });
                match cached {
                    Some((bytes, version, ago)) => (
                        bytes,
                        version,
                        Some(format!("{}; the copy fetched {ago} is used", f.message)),
                    ),
                    None => return Err(f),
                }
            }
        };
        let files = unpack(&bytes).map_err(|why| Failure {
            message: format!("{}: {why}", r.describe()),
            definitive: true,
        })?;
        Ok(ChartFiles {
            files,
            version,
            stale,
        })
    }

    /// `index.yaml`, the version, the archive.
    fn fetch_from_repository(
        &self,
        url: &str,
        chart: &str,
        constraint: Option<&str>,
    ) -> Result<(Vec<u8>, String), Failure> {
        let base = url.trim_end_matches('/');
        let index_url = format!("{base}/index.yaml");
        let index = get(&index_url, self.timeout, INDEX_BYTES)?;
        let index: Index = serde_saphyr::from_slice(&index).map_err(|e| Failure {
            message: format!("{index_url}: not a Helm repository index ({e})"),
            definitive: true,
        })?;
        let entries = index.entries.get(chart).ok_or_else(|| Failure {
            message: format!("{index_url}: no chart named {chart}"),
            definitive: true,
        })?;
        let versions: Vec<&str> = entries.iter().map(|e| e.version.as_str()).collect();
        let chosen = choose(&versions, constraint).ok_or_else(|| Failure {
            message: format!(
                "{index_url}: no version of {chart} satisfies {}",
                constraint.unwrap_or("*")
            ),
            definitive: true,
        })?;
        let entry = entries
            .iter()
            .find(|e| e.version == chosen)
            .ok_or_else(|| unknown(format!("{index_url}: {chart} {chosen} vanished")))?;
        let archive = entry.urls.first().ok_or_else(|| Failure {
            message: format!("{index_url}: {chart} {chosen} names no archive"),
            definitive: true,
        })?;
        let archive_url = if archive.contains("://") {
            archive.clone()
        } else {
            format!("{base}/{}", archive.trim_start_matches('/'))
        };
        let bytes = get(&archive_url, self.timeout, ARCHIVE_BYTES)?;
        Ok((bytes, chosen))
    }

    /// The tag (chosen among the registry's tags for a constraint), its
    /// manifest, the chart layer.
    fn fetch_from_registry(
        &self,
        url: &str,
        tag: Option<&str>,
        constraint: Option<&str>,
        insecure: bool,
    ) -> Result<(Vec<u8>, String), Failure> {
        let rest = url.strip_prefix("oci://").ok_or_else(|| Failure {
            message: format!("{url}: not an oci:// address"),
            definitive: true,
        })?;
        let (host, name) = rest.split_once('/').ok_or_else(|| Failure {
            message: format!("{url}: no repository after the registry"),
            definitive: true,
        })?;
        let scheme = if insecure { "http" } else { "https" };
        let registry = Registry {
            fetcher: self,
            base: format!("{scheme}://{host}/v2/{name}"),
            token: std::sync::Mutex::new(None),
        };
        // An exact tag; a constraint that is one version is a tag too
        // (Helm pushes a chart's version as its tag).
        let exact = tag.map(str::to_string).or_else(|| {
            constraint
                .filter(|c| semver::Version::parse(c.trim_start_matches('v')).is_ok())
                .map(str::to_string)
        });
        let tag = match exact {
            Some(tag) => tag,
            None => {
                let list = registry.get("tags/list", "application/json")?;
                let tags: Tags = serde_json::from_slice(&list).map_err(|e| Failure {
                    message: format!("{url}: the tag list is not JSON ({e})"),
                    definitive: true,
                })?;
                let tags: Vec<&str> = tags.tags.iter().map(String::as_str).collect();
                choose(&tags, constraint).ok_or_else(|| Failure {
                    message: format!("{url}: no tag satisfies {}", constraint.unwrap_or("*")),
                    definitive: true,
                })?
            }
        };
        let manifest = registry.get(
            &format!("manifests/{tag}"),
            "application/vnd.oci.image.manifest.v1+json",
        )?;
        let manifest: Manifest = serde_json::from_slice(&manifest).map_err(|e| Failure {
            message: format!("{url}:{tag}: the manifest is not JSON ({e})"),
            definitive: true,
        })?;
        let layer = manifest
            .layers
            .iter()
            .find(|l| l.media_type == "application/vnd.cncf.helm.chart.content.v1.tar+gzip")
            .ok_or_else(|| Failure {
                message: format!("{url}:{tag}: not a Helm chart (no chart layer)"),
                definitive: true,
            })?;
        if !layer
            .digest
            .strip_prefix("sha256:")
            .is_some_and(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()))
        {
            return Err(Failure {
                message: format!("{url}:{tag}: the chart layer's digest is not a sha256"),
                definitive: true,
            });
        }
        let blob = registry.get(&format!("blobs/{}", layer.digest), "*/*")?;
        if format!("sha256:{}", cache::sha256(&blob)) != layer.digest {
            return Err(unknown(format!(
                "{url}:{tag}: the chart layer does not match its digest"
            )));
        }
        Ok((blob, tag.trim_start_matches('v').to_string()))
    }
}

/// One registry repository, with the anonymous token once it has one.
struct Registry<'f> {
    fetcher: &'f Fetcher,
    base: String,
    token: std::sync::Mutex<Option<String>>,
}

impl Registry<'_> {
    /// GET `base/path`, fetching an anonymous token when the registry asks
    /// for one.
    fn get(&self, path: &str, accept: &str) -> Result<Vec<u8>, Failure> {
        let url = format!("{}/{path}", self.base);
        for _ in 0..2 {
            let token = self.token.lock().ok().and_then(|t| t.clone());
            let auth = token.map(|t| format!("Bearer {t}"));
            let mut headers = vec![("Accept", accept)];
            if let Some(a) = &auth {
                headers.push(("Authorization", a.as_str()));
            }
            let response = http::request(&url, &headers, self.fetcher.timeout, ARCHIVE_BYTES)
                .map_err(|e| failure(&url, &e))?;
            match response.status {
                200..=299 => return Ok(response.body),
                401 if auth.is_none() => {
                    let challenge = response.authenticate.unwrap_or_default();
                    let token = anonymous_token(&challenge, self.fetcher.timeout)?;
                    if let Ok(mut t) = self.token.lock() {
                        *t = Some(token);
                    }
                }
                code => return Err(failure(&url, &http::HttpError::Status(code))),
            }
        }
        Err(Failure {
            message: format!("{url}: the registry refuses anonymous access"),
            definitive: false,
        })
    }
}

/// The token a `WWW-Authenticate: Bearer realm="…",service="…",scope="…"`
/// challenge points to, asked for anonymously.
fn anonymous_token(challenge: &str, timeout: std::time::Duration) -> Result<String, Failure> {
    let params = challenge
        .strip_prefix("Bearer ")
        .or_else(|| challenge.strip_prefix("bearer "))
        .ok_or_else(|| Failure {
            message: format!(
                "the registry asks for credentials this run does not have ({challenge})"
            ),
            definitive: false,
        })?;
    let mut realm = None;
    let mut query = Vec::new();
    for part in split_params(params) {
        let Some((k, v)) = part.split_once('=') else {
            continue;
        };
        let v = v.trim().trim_matches('"').to_string();
        match k.trim() {
            "realm" => realm = Some(v),
            key @ ("service" | "scope") => query.push(format!("{key}={}", encode(&v))),
            _ => {}
        }
    }
    let realm = realm.ok_or_else(|| unknown(format!("no realm in the challenge ({challenge})")))?;
    let url = if query.is_empty() {
        realm
    } else {
        format!("{realm}?{}", query.join("&"))
    };
    let body = get(&url, timeout, 1 << 20)?;
    let token: Token = serde_json::from_slice(&body).map_err(|e| Failure {
        message: format!("{url}: the token answer is not JSON ({e})"),
        definitive: false,
    })?;
    token.token.or(token.access_token).ok_or_else(|| Failure {
        message: format!("{url}: the answer holds no token"),
        definitive: false,
    })
}

/// A challenge's parameters, split at the commas outside quotes.
fn split_params(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Percent-encoding of a query value (what a scope's `:` and `,` need).
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn get(url: &str, timeout: std::time::Duration, limit: u64) -> Result<Vec<u8>, Failure> {
    http::get(url, timeout, limit).map_err(|e| failure(url, &e))
}

fn failure(url: &str, e: &http::HttpError) -> Failure {
    Failure {
        message: format!("{url}: {}", e.describe()),
        definitive: e.definitive(),
    }
}

fn unknown(message: String) -> Failure {
    Failure {
        message,
        definitive: false,
    }
}

/// The highest version that satisfies `constraint` (Helm's choice): only
/// stable releases unless the constraint names a prerelease; the newest
/// stable when there is no constraint. Versions that are not semver are
/// skipped.
pub fn choose(versions: &[&str], constraint: Option<&str>) -> Option<String> {
    let constraint = constraint
        .map(str::trim)
        .filter(|c| !c.is_empty() && *c != "*");
    let alternatives: Option<Vec<semver::VersionReq>> = match constraint {
        None => None,
        Some(c) => Some(
            c.split("||")
                .map(|alt| semver::VersionReq::parse(&masterminds(alt)))
                .collect::<Result<_, _>>()
                .ok()?,
        ),
    };
    let prerelease = constraint.is_some_and(|c| c.contains('-'));
    versions
        .iter()
        .filter_map(|raw| {
            let v = semver::Version::parse(raw.trim_start_matches('v')).ok()?;
            Some((v, *raw))
        })
        .filter(|(v, _)| prerelease || v.pre.is_empty())
        .filter(|(v, _)| {
            alternatives
                .as_ref()
                .is_none_or(|alts| alts.iter().any(|r| r.matches(v)))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, raw)| raw.to_string())
}

/// A Masterminds constraint (space- or comma-separated comparators, an
/// operator with a space before its version, `v` prefixes, `x` wildcards)
/// as the semver crate reads one.
fn masterminds(alt: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut pending_op = String::new();
    for token in alt.split([' ', ',']).filter(|t| !t.is_empty()) {
        let is_op = token.chars().all(|c| "<>=!~^".contains(c));
        if is_op {
            pending_op.push_str(token);
            continue;
        }
        let token = token.trim_start_matches('v');
        let (op, version) = split_op(token);
        let op = format!("{pending_op}{op}");
        pending_op.clear();
        let version = version
            .trim_start_matches('v')
            .replace(".x", ".*")
            .replace(".X", ".*");
        let version = if version == "x" || version == "X" {
            "*".to_string()
        } else {
            version
        };
        // Masterminds' bare version is exact; `=` in the semver crate.
        let op = if op.is_empty() && !version.contains('*') {
            "=".to_string()
        } else {
            op
        };
        parts.push(format!("{op}{version}"));
    }
    parts.join(", ")
}

fn split_op(token: &str) -> (&str, &str) {
    let at = token
        .find(|c: char| !"<>=!~^".contains(c))
        .unwrap_or(token.len());
    let (op, version) = token.split_at(at);
    (op, version.trim_start_matches('v'))
}

/// A chart archive (`.tgz`) unpacked in memory: its regular files, paths
/// relative to the chart's top directory, within the archive budgets. A
/// path that climbs out (`..`) or is absolute is refused.
pub fn unpack(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut archive = tar::Archive::new(gz.take(ARCHIVE_BYTES + 1));
    let mut out = Vec::new();
    let mut total: u64 = 0;
    let entries = archive
        .entries()
        .map_err(|e| format!("not a chart archive ({e})"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("a broken chart archive ({e})"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .map_err(|e| format!("a path in the archive cannot be read ({e})"))?
            .to_string_lossy()
            .replace('\\', "/");
        if path.starts_with('/') || path.split('/').any(|s| s == "..") {
            return Err(format!(
                "the archive holds a path outside the chart: {path}"
            ));
        }
        // Every file is under the chart's own directory: drop it.
        let Some((_, rel)) = path.split_once('/') else {
            continue;
        };
        let mut data = Vec::new();
        entry
            .by_ref()
            .take(ARCHIVE_BYTES + 1)
            .read_to_end(&mut data)
            .map_err(|e| format!("{path}: {e}"))?;
        total += data.len() as u64;
        if total > ARCHIVE_BYTES {
            return Err(format!(
                "the archive unpacks to more than {ARCHIVE_BYTES} bytes, the budget for a chart"
            ));
        }
        out.push((rel.to_string(), data));
        if out.len() > ARCHIVE_FILES {
            return Err(format!(
                "the archive holds more than {ARCHIVE_FILES} files, the budget for a chart"
            ));
        }
    }
    Ok(out)
}

#[derive(Debug, serde::Deserialize)]
struct Index {
    #[serde(default)]
    entries: std::collections::HashMap<String, Vec<IndexEntry>>,
}

#[derive(Debug, serde::Deserialize)]
struct IndexEntry {
    #[serde(default)]
    version: String,
    #[serde(default)]
    urls: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
struct Tags {
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
struct Manifest {
    #[serde(default)]
    layers: Vec<Layer>,
}

#[derive(Debug, serde::Deserialize)]
struct Layer {
    #[serde(rename = "mediaType")]
    media_type: String,
    digest: String,
}

#[derive(Debug, serde::Deserialize)]
struct Token {
    token: Option<String>,
    access_token: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_as_helm_chooses_them() {
        let v = [
            "1.2.0",
            "1.10.1",
            "2.0.0-rc.1",
            "1.9.3",
            "0.9.0",
            "not-a-version",
        ];
        assert_eq!(choose(&v, None).as_deref(), Some("1.10.1"));
        assert_eq!(choose(&v, Some("1.9.x")).as_deref(), Some("1.9.3"));
        assert_eq!(choose(&v, Some("~1.2")).as_deref(), Some("1.2.0"));
        assert_eq!(
            choose(&v, Some(">=1.0.0 <1.10.0")).as_deref(),
            Some("1.9.3")
        );
        assert_eq!(
            choose(&v, Some(">= 1.0.0, < 1.10.0")).as_deref(),
            Some("1.9.3")
        );
        assert_eq!(choose(&v, Some("0.9.0 || 1.2.0")).as_deref(), Some("1.2.0"));
        assert_eq!(choose(&v, Some("v1.9.3")).as_deref(), Some("1.9.3"));
        assert_eq!(choose(&v, Some(">=2.0.0-0")).as_deref(), Some("2.0.0-rc.1"));
        assert_eq!(choose(&v, Some("3.x")), None);
        assert_eq!(choose(&v, Some("*")).as_deref(), Some("1.10.1"));
    }

    #[test]
    fn a_challenge_is_split_outside_quotes() {
        assert_eq!(
            split_params(
                r#"realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull""#
            ),
            vec![
                r#"realm="https://ghcr.io/token""#,
                r#"service="ghcr.io""#,
                r#"scope="repository:a/b:pull""#
            ]
        );
    }
}
