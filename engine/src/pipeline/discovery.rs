//! What discovery is given from conformance.yaml: the sources mapped to
//! directories or checkouts (by identity and by URL), the declared
//! entries, their variables, the remote fetcher and this repository's URLs.

use crate::config::Config;

/// What discovery needs from this file: the configured sources and the
/// declared entries.
pub(super) fn discovery_input(config: &Config) -> crate::discover::Declared {
    let dir_of = |s: &crate::discover::SourceMapping| {
        s.path
            .as_ref()
            .map(|p| crate::repo::normalize("", &p.value).0)
    };
    let sources = crate::discover::LocalSources(
        config
            .sources
            .iter()
            .filter(|s| s.url.is_none())
            .filter_map(|s| {
                Some(crate::discover::LocalSource {
                    kind: s.kind.as_ref()?.value.clone(),
                    name: s.name.clone()?,
                    namespace: s.namespace.clone(),
                    dir: dir_of(s)?,
                })
            })
            .collect(),
    );
    let by_url = config
        .sources
        .iter()
        .filter_map(|s| {
            Some(crate::discover::UrlSource {
                url: s.url.as_ref()?.value.clone(),
                kind: s.kind.as_ref().map(|k| k.value.clone()),
                dir: dir_of(s)?,
            })
        })
        .collect();
    let entries = config
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
    let remote = (config.remote == crate::remote::Setting::Fetch).then(|| {
        std::sync::Arc::new(crate::remote::Fetcher::new(crate::remote::Cache::new(
            crate::remote::Cache::default_root(),
        )))
    });
    let vars = config
        .clusters
        .iter()
        .filter(|(_, facts)| !facts.vars.is_empty())
        .map(|(name, facts)| (name.clone(), facts.vars.clone()))
        .collect();
    crate::discover::Declared {
        sources,
        by_url,
        entries,
        vars,
        remote,
        urls: config
            .repository
            .iter()
            .flat_map(|r| r.url.iter().cloned())
            .collect(),
    }
}
