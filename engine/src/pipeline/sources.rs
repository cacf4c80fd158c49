//! Other checkouts in one run: `--source REF=DIR` on the command line and
//! `sources: [{…, dir: DIR}]` in conformance.yaml map a Flux source (by
//! `kind/namespace/name` or by URL) to a checkout on this machine. Each
//! checkout is read beside the repository under a name of its own (`@infra`,
//! [`RepoIndex::mount`]) and the source's Kustomizations are built from it,
//! so a fleet repository with its infrastructure and apps repositories is
//! checked as one cluster: one graph, one cold start, every finding's path
//! saying which checkout it is in.
//!
//! A checkout inside the repository is mapped as a directory of it (as
//! `path:` would). Nothing is read from a checkout unless the command line
//! or conformance.yaml names it.

use std::path::{Path, PathBuf};

use serde_saphyr::{Location, Spanned};

use super::SessionError;
use crate::config::{Config, error_at};
use crate::discover::SourceMapping;
use crate::discover::mapped::KINDS;
use crate::repo::RepoIndex;

/// `--source REF=DIR`, read: REF is `Kind/namespace/name`, `Kind/name`
/// (any namespace) or a URL; DIR is taken relative to the working
/// directory.
pub(super) fn from_command_line(args: &[String]) -> Result<Vec<SourceMapping>, SessionError> {
    args.iter().map(|arg| one(arg)).collect()
}

fn one(arg: &str) -> Result<SourceMapping, SessionError> {
    let refuse = |why: &str| SessionError::Source {
        arg: arg.to_string(),
        why: why.to_string(),
    };
    // The last `=` splits: a URL may hold one (`?ref=main`), a directory
    // rarely does.
    let Some((reference, dir)) = arg.rsplit_once('=') else {
        return Err(refuse(
            "expected REF=DIR (REF: Kind/namespace/name, Kind/name or the source's URL)",
        ));
    };
    if reference.is_empty() || dir.is_empty() {
        return Err(refuse("expected REF=DIR, both non-empty"));
    }
    let dir = std::env::current_dir()
        .map(|cwd| cwd.join(dir))
        .unwrap_or_else(|_| PathBuf::from(dir));
    let spanned = |v: &str| Spanned::new(v.to_string(), Location::UNKNOWN, Location::UNKNOWN);
    let mut mapping = SourceMapping {
        kind: None,
        name: None,
        namespace: None,
        url: None,
        path: None,
        dir: Some(spanned(&dir.display().to_string())),
    };
    let parts: Vec<&str> = reference.split('/').collect();
    match parts.as_slice() {
        [kind, rest @ ..] if KINDS.contains(kind) && (1..=2).contains(&rest.len()) => {
            mapping.kind = Some(spanned(kind));
            let (namespace, name) = match rest {
                [namespace, name] => (Some(namespace.to_string()), name),
                [name] => (None, name),
                _ => unreachable!("one or two parts"),
            };
            if name.is_empty() || namespace.as_deref() == Some("") {
                return Err(refuse("Kind/namespace/name with an empty part"));
            }
            mapping.namespace = namespace;
            mapping.name = Some(name.to_string());
        }
        [kind, ..] if KINDS.iter().any(|k| k.eq_ignore_ascii_case(kind)) => {
            return Err(refuse(
                "a source is named Kind/namespace/name or Kind/name, with the kind spelt as Flux spells it (GitRepository, OCIRepository, Bucket, ExternalArtifact)",
            ));
        }
        _ => mapping.url = Some(spanned(reference)),
    }
    Ok(mapping)
}

/// Reads every checkout a mapping names (`dir`) beside the repository,
/// and points the mapping at the directory it is read under. The command
/// line's mappings come first (they win over conformance.yaml's).
pub(super) fn mount_all(
    repo: &Path,
    index: &mut RepoIndex,
    config: &mut Config,
    command_line: Vec<SourceMapping>,
) -> Result<(), SessionError> {
    let mut all = command_line;
    all.append(&mut config.sources);
    for mapping in &mut all {
        let Some(dir) = mapping.dir.clone() else {
            continue;
        };
        let from_flag = dir.referenced.line() == 0;
        let fail = |why: String| -> SessionError {
            if from_flag {
                SessionError::Source {
                    arg: dir.value.clone(),
                    why,
                }
            } else {
                SessionError::Config(error_at(
                    &dir,
                    format!("sources: dir `{}` {why}", dir.value),
                ))
            }
        };
        let path = repo.join(&dir.value);
        let real = path
            .canonicalize()
            .map_err(|e| fail(format!("cannot be read: {e}")))?;
        if !real.is_dir() {
            return Err(fail("is not a directory".into()));
        }
        // A checkout inside the repository is a directory of it.
        if let Some(inside) = real
            .strip_prefix(index.root())
            .ok()
            .map(|p| p.to_string_lossy().replace('\\', "/"))
        {
            mapping.path = Some(Spanned::new(inside, dir.referenced, dir.defined));
            continue;
        }
        // A checkout several sources map is read once.
        let prefix = match index.mounts().iter().find(|m| m.root == real) {
            Some(mounted) => mounted.prefix.clone(),
            None => {
                let prefix = mount_name(index, &real);
                index
                    .mount(&prefix, &real)
                    .map_err(|e| fail(format!("cannot be read as a checkout: {e}")))?;
                prefix
            }
        };
        mapping.path = Some(Spanned::new(prefix, dir.referenced, dir.defined));
    }
    config.sources = all;
    Ok(())
}

/// The name a checkout is read under: `@` and its directory's name, made
/// unique among the repository's top-level paths and the other checkouts.
fn mount_name(index: &RepoIndex, root: &Path) -> String {
    let base = root
        .file_name()
        .map(|n| n.to_string_lossy().replace(['/', '\\'], "_"))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "source".into());
    let taken = |name: &str| index.kind(name).is_some();
    let mut name = format!("@{base}");
    let mut n = 2;
    while taken(&name) {
        name = format!("@{base}-{n}");
        n += 1;
    }
    name
}
