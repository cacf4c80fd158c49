//! Sources mapped by URL (`--source https://github.com/org/infra=../infra`,
//! `sources: [{url: …, dir: …}]`): every GitRepository, OCIRepository or
//! Bucket that the repository (or a checkout read beside it) defines with
//! that URL is the mapped directory. A URL that no source names maps
//! nothing, and the report says so, naming the line that would.

use std::collections::BTreeSet;

use super::{LocalSource, LocalSources, normalize_url};
use crate::model::Span;
use crate::repo::RepoIndex;
use crate::yaml::Node;

/// A source mapped by its URL.
#[derive(Debug, Clone)]
pub struct UrlSource {
    /// The URL as given.
    pub url: String,
    /// Only sources of this kind, when given.
    pub kind: Option<String>,
    /// The directory the artifact is (a directory of the repository, or a
    /// checkout read under its own name, `@infra`).
    pub dir: String,
}

/// The kinds a URL can name, with the field that holds it.
const URL_FIELDS: &[(&str, &[&str])] = &[
    ("GitRepository", &["spec", "url"]),
    ("OCIRepository", &["spec", "url"]),
    ("Bucket", &["spec", "endpoint"]),
];

/// Each URL mapping resolved to the sources the repository's files define
/// with that URL and an explicit namespace (added to `local` unless already
/// mapped), with a note per source mapped, and the URLs that matched. A
/// source whose namespace a kustomization sets is matched by the walk, once
/// rendered ([`super::walk::Walk::map_by_url`]).
pub(super) fn resolve(
    index: &RepoIndex,
    by_url: &[UrlSource],
    local: &mut LocalSources,
) -> (Vec<String>, BTreeSet<String>) {
    let mut notes = Vec::new();
    let mut used = BTreeSet::new();
    if by_url.is_empty() {
        return (notes, used);
    }
    for (file, f) in index.files_with_sources() {
        let Ok(docs) = f.docs() else { continue };
        for doc in docs {
            let Some((kind, url)) = source_url(doc) else {
                continue;
            };
            let (Some(name), Some(namespace)) = (
                doc.str_at(&["metadata", "name"]),
                doc.str_at(&["metadata", "namespace"]),
            ) else {
                continue;
            };
            let Some(mapping) = matching(by_url, &kind, &url) else {
                continue;
            };
            used.insert(mapping.url.clone());
            if local.dir_for(&kind, &name, Some(&namespace)).is_some() {
                continue;
            }
            let source = format!("{kind}/{namespace}/{name} ({})", Span::new(file, doc.line));
            notes.push(mapping.note(&source));
            local.0.push(LocalSource {
                kind,
                name,
                namespace: Some(namespace),
                dir: mapping.dir.clone(),
            });
        }
    }
    (notes, used)
}

impl UrlSource {
    /// The discovery note for a source this mapping maps.
    pub(super) fn note(&self, source: &str) -> String {
        format!(
            "source {source} is read from {} (mapped by its URL {})",
            self.dir, self.url
        )
    }
}

/// The mapping for a source of this kind and URL, if any.
pub(super) fn matching<'m>(
    by_url: &'m [UrlSource],
    kind: &str,
    url: &str,
) -> Option<&'m UrlSource> {
    let want = normalize_url(url);
    by_url
        .iter()
        .find(|m| normalize_url(&m.url) == want && m.kind.as_deref().is_none_or(|k| k == kind))
}

/// The note for a URL mapping no source of any cluster matched.
pub(super) fn unused_note(mapping: &UrlSource) -> String {
    format!(
        "source url {} is mapped to {}, but no GitRepository, OCIRepository or Bucket of any cluster has that URL: nothing is read from it (map the source by `kind`, `namespace` and `name` if something outside the repository defines it)",
        mapping.url, mapping.dir
    )
}

/// A Flux source document's kind and URL.
fn source_url(doc: &Node) -> Option<(String, String)> {
    if !doc
        .str_at(&["apiVersion"])
        .is_some_and(|v| v.starts_with("source.toolkit.fluxcd.io/"))
    {
        return None;
    }
    let kind = doc.str_at(&["kind"])?;
    let (_, field) = URL_FIELDS.iter().find(|(k, _)| *k == kind)?;
    let url = doc.str_at(field)?;
    Some((kind, url))
}

/// The source kinds a mapping (or `--source Kind/…`) can name.
pub(crate) const KINDS: &[&str] = &[
    "GitRepository",
    "OCIRepository",
    "Bucket",
    "ExternalArtifact",
];

impl super::SourceMapping {
    /// The line the entry is at (its `kind`, `url`, `path` or `dir`).
    fn line(&self) -> u32 {
        [
            self.kind.as_ref().map(|k| k.referenced.line()),
            self.url.as_ref().map(|u| u.referenced.line()),
            self.path.as_ref().map(|p| p.referenced.line()),
            self.dir.as_ref().map(|d| d.referenced.line()),
        ]
        .into_iter()
        .flatten()
        .find(|l| *l > 0)
        .unwrap_or(0) as u32
    }

    /// What is wrong with the entry, at its line: it names its source by
    /// `kind` and `name` or by `url`, and maps it to `path` or `dir`.
    pub fn problem(&self) -> Option<crate::config::ConfigError> {
        let why = if let Some(kind) = self
            .kind
            .as_ref()
            .filter(|k| !KINDS.contains(&k.value.as_str()))
        {
            format!(
                "sources: kind `{}` is not a Flux source kind ({})",
                kind.value,
                KINDS.join(", ")
            )
        } else if self.url.is_some() && self.name.is_some() {
            "sources: an entry names its source by `url` or by `kind` and `name`, not both".into()
        } else if self.url.is_none() && (self.kind.is_none() || self.name.is_none()) {
            "sources: an entry names its source by `kind` and `name` (and `namespace`), or by `url`"
                .into()
        } else if self.path.is_some() == self.dir.is_some() {
            "sources: an entry maps its source to `path` (a directory of this repository) or to `dir` (another checkout), one of the two".into()
        } else {
            return None;
        };
        Some(crate::config::ConfigError::new(self.line(), why))
    }
}
