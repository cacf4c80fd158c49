//! ArtifactGenerator (source-watcher, `source.extensions.fluxcd.io`): which
//! directory of this repository an ExternalArtifact stands for.
//!
//! A generator copies paths of its sources into named artifacts; a
//! Kustomization with `sourceRef.kind: ExternalArtifact` builds `spec.path`
//! inside that artifact. When every copy of an artifact is a whole
//! directory of this repository (`@repo/apps/base/**` to
//! `@artifact/base/`) and all copies keep the repository's layout (the same
//! directory is stripped from each), the artifact is that directory and the
//! Kustomization is built from it like any other. Anything else (single
//! files, `*.yaml` patterns, `exclude`, the Merge and Extract strategies,
//! copies from other sources) is reported as not modelled, naming the
//! generator and the copy.
//!
//! Copies follow source-watcher's `cp`-like rules: `@src/dir/**` copies the
//! contents of `dir` into the destination, `@src/dir/` (no glob) copies
//! `dir` itself as a subdirectory of it.

use crate::model::{SourceRef, Span};
use crate::yaml::Node;

/// The API group of ArtifactGenerator.
pub(crate) const GENERATOR_GROUP: &str = "source.extensions.fluxcd.io";

/// Whether a document is an ArtifactGenerator.
pub(crate) fn is_generator(doc: &Node) -> bool {
    doc.str_at(&["kind"]).as_deref() == Some("ArtifactGenerator")
        && doc
            .str_at(&["apiVersion"])
            .is_some_and(|v| v.starts_with(&format!("{GENERATOR_GROUP}/")))
}

/// Why an artifact's path is not a directory of this repository: the
/// generator named, then what it does that is not modelled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{who} {why}")]
pub(crate) struct ArtifactError {
    /// "its ArtifactGenerator ns/name (file:line)".
    pub who: String,
    /// What its copies do.
    #[source]
    pub why: Layout,
}

/// What a generator's copies do that makes an artifact something else than
/// a directory of the repository.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Layout {
    /// No copy at all.
    #[error("copies nothing into it")]
    Nothing,
    /// A strategy other than Overwrite.
    #[error(
        "copies {from} with strategy {strategy} (line {line}); only Overwrite copies are modelled"
    )]
    Strategy {
        /// The copy's `from`.
        from: String,
        /// Its strategy.
        strategy: String,
        /// Its line.
        line: u32,
    },
    /// Exclusions.
    #[error("copies {from} with exclude patterns (line {line}); exclusions are not modelled")]
    Exclude {
        /// The copy's `from`.
        from: String,
        /// Its line.
        line: u32,
    },
    /// `from` is not `@alias/path`.
    #[error("copies from `{from}` (line {line}), which is not @alias/path")]
    NotAlias {
        /// The copy's `from`.
        from: String,
        /// Its line.
        line: u32,
    },
    /// An alias the generator's sources do not define.
    #[error("copies from alias @{alias} (line {line}), which its spec.sources does not define")]
    UnknownAlias {
        /// The alias.
        alias: String,
        /// Its line.
        line: u32,
    },
    /// A source that is another repository.
    #[error("copies from {repository} (line {line}), which is not this repository")]
    OtherRepository {
        /// The source.
        repository: SourceRef,
        /// Its line.
        line: u32,
    },
    /// `to` is not `@artifact/path`.
    #[error("copies to `{to}` (line {line}), which is not @artifact/path")]
    NotArtifact {
        /// The copy's `to`.
        to: String,
        /// Its line.
        line: u32,
    },
    /// A file, or nothing, where a directory is copied.
    #[error(
        "copies `{from}` (line {line}), which is a file or missing; only whole directories are modelled"
    )]
    NotDirectory {
        /// The copy's `from`.
        from: String,
        /// Its line.
        line: u32,
    },
    /// A glob pattern.
    #[error(
        "copies `{from}` (line {line}); only whole directories (`@{alias}/dir/**` or `@{alias}/dir/`) are modelled, not glob patterns"
    )]
    Glob {
        /// The copy's `from`.
        from: String,
        /// Its line.
        line: u32,
        /// Its alias.
        alias: String,
    },
    /// Nothing lands at the path.
    #[error("does not put anything at {path}/ (it holds {held})")]
    NothingAt {
        /// The path in the artifact.
        path: String,
        /// What the artifact holds.
        held: String,
    },
    /// Several copies land at the path.
    #[error(
        "puts several copies at {path}/, in a layout that is not a directory of the repository"
    )]
    SeveralCopies {
        /// The path in the artifact.
        path: String,
    },
    /// The build reads outside the copied directory.
    #[error(
        "copies {from}/ to {to}/ (line {line}), a layout that is not the repository's, and the build of {dir} reads outside the copied directory"
    )]
    ReadsOutside {
        /// The repository directory copied.
        from: String,
        /// Where it lands.
        to: String,
        /// The copy's line.
        line: u32,
        /// The directory the build would read.
        dir: String,
    },
}

/// What a generated artifact's `path` is in this repository.
#[derive(Clone, Copy)]
#[allow(missing_debug_implementations)] // closures
pub(crate) struct Repo<'a> {
    /// Which sources are this repository, and which directory of it each
    /// stands for.
    pub dir_of: &'a dyn Fn(&SourceRef) -> Option<String>,
    /// Whether a repository path is a directory.
    pub is_dir: &'a dyn Fn(&str) -> bool,
    /// Whether building the first directory reads only inside the second.
    pub stays_within: &'a dyn Fn(&str, &str) -> bool,
}

/// Which directory of this repository `path` in an artifact of `generator`
/// is, if any.
///
/// `None`: the generator does not produce `artifact` (or is not in
/// `namespace`). `Some(Err(why))`: it does, but `path` in it is not a
/// directory of this repository that builds the same.
pub(crate) fn artifact_dir(
    generator: &Node,
    at: &Span,
    namespace: &str,
    artifact: &str,
    path: &str,
    repo: Repo<'_>,
) -> Option<Result<String, ArtifactError>> {
    let gen_ns = generator
        .str_at(&["metadata", "namespace"])
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "default".into());
    if gen_ns != namespace {
        return None;
    }
    let spec = generator.path(&["spec", "artifacts"])?;
    let out = spec
        .as_seq()
        .iter()
        .find(|a| a.str_at(&["name"]).as_deref() == Some(artifact))?;
    let gen_name = generator.str_at(&["metadata", "name"]).unwrap_or_default();
    let who = format!(
        "its ArtifactGenerator {gen_ns}/{gen_name} ({}:{})",
        at.file, out.line
    );
    let path = crate::repo::normalize("", path).0;
    Some(
        layout(generator, out, &gen_ns, repo)
            .and_then(|placed| resolve(&placed, &path, repo.stays_within))
            .map_err(|why| ArtifactError { who, why }),
    )
}

fn layout(
    generator: &Node,
    out: &Node,
    gen_ns: &str,
    repo: Repo<'_>,
) -> Result<Vec<Placed>, Layout> {
    let copies = out.path(&["copy"]).map(Node::as_seq).unwrap_or_default();
    if copies.is_empty() {
        return Err(Layout::Nothing);
    }
    let mut placed = Vec::new();
    for copy in copies {
        let from = copy.str_at(&["from"]).unwrap_or_default();
        let to = copy.str_at(&["to"]).unwrap_or_default();
        let line = copy.line;
        if let Some(strategy) = copy.str_at(&["strategy"]).filter(|s| s != "Overwrite") {
            return Err(Layout::Strategy {
                from,
                strategy,
                line,
            });
        }
        if copy
            .path(&["exclude"])
            .is_some_and(|e| !e.as_seq().is_empty())
        {
            return Err(Layout::Exclude { from, line });
        }
        let Some((alias, rest)) = from.strip_prefix('@').and_then(|f| f.split_once('/')) else {
            return Err(Layout::NotAlias { from, line });
        };
        let source = generator
            .path(&["spec", "sources"])
            .map(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .find(|s| s.str_at(&["alias"]).as_deref() == Some(alias))
            .map(|s| SourceRef {
                kind: s.str_at(&["kind"]).unwrap_or_default(),
                namespace: s
                    .str_at(&["namespace"])
                    .filter(|ns| !ns.is_empty())
                    .unwrap_or_else(|| gen_ns.to_string()),
                name: s.str_at(&["name"]).unwrap_or_default(),
            });
        let Some(source) = source else {
            return Err(Layout::UnknownAlias {
                alias: alias.to_string(),
                line,
            });
        };
        let Some(base) = (repo.dir_of)(&source) else {
            return Err(Layout::OtherRepository {
                repository: source,
                line,
            });
        };
        let globbed = |p: &str| p.contains(['*', '?', '[', ']']);
        let Some(to_dir) = to.strip_prefix("@artifact/").map(|t| t.trim_matches('/')) else {
            return Err(Layout::NotArtifact { to, line });
        };
        // `dir/**` (or `**`): the contents of dir land in the destination.
        // `dir/` or `dir`: dir itself lands in it, as a subdirectory.
        let contents = if rest == "**" {
            Some("")
        } else {
            rest.strip_suffix("/**")
        };
        let (from_dir, to_dir) = match contents {
            Some(dir) if !globbed(dir) => (dir.to_string(), to_dir.to_string()),
            None if !globbed(rest) => {
                let dir = rest.trim_end_matches('/');
                if !(repo.is_dir)(&crate::repo::normalize(&base, dir).0) {
                    return Err(Layout::NotDirectory {
                        from: from.clone(),
                        line,
                    });
                }
                let name = dir.rsplit('/').next().unwrap_or(dir);
                let to_dir = if to_dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{to_dir}/{name}")
                };
                (dir.to_string(), to_dir)
            }
            _ => {
                return Err(Layout::Glob {
                    from: from.clone(),
                    line,
                    alias: alias.to_string(),
                });
            }
        };
        placed.push(Placed {
            repo: crate::repo::normalize(&base, &from_dir).0,
            artifact: crate::repo::normalize("", &to_dir).0,
            line,
        });
    }
    Ok(placed)
}

/// One whole-directory copy: the repository directory whose contents land
/// at `artifact` in the artifact.
struct Placed {
    repo: String,
    artifact: String,
    line: u32,
}

fn under(path: &str, dir: &str) -> Option<String> {
    if dir.is_empty() {
        Some(path.to_string())
    } else if path == dir {
        Some(String::new())
    } else {
        path.strip_prefix(&format!("{dir}/")).map(str::to_string)
    }
}

fn join(dir: &str, rest: &str) -> String {
    crate::repo::normalize(dir, rest).0
}

/// The repository directory that building `path` in the artifact builds.
fn resolve(
    placed: &[Placed],
    path: &str,
    stays_within: &dyn Fn(&str, &str) -> bool,
) -> Result<String, Layout> {
    // The artifact keeps the repository's layout when every copy lands at
    // the tail of its source directory with the same root stripped: the
    // artifact is that root, and any path in it is root/path.
    let roots: Vec<Option<String>> = placed
        .iter()
        .map(|p| {
            let from: Vec<&str> = p.repo.split('/').filter(|s| !s.is_empty()).collect();
            let to: Vec<&str> = p.artifact.split('/').filter(|s| !s.is_empty()).collect();
            from.ends_with(&to)
                .then(|| from[..from.len() - to.len()].join("/"))
        })
        .collect();
    if let Some(Some(root)) = roots.first()
        && roots.iter().all(|r| r.as_ref() == Some(root))
    {
        return Ok(join(root, path));
    }
    // Otherwise the path must be inside one copy (or hold exactly one copy
    // and nothing else: Flux's generated kustomization for it then builds
    // just that directory), and the build must stay inside the copied
    // directory, where the artifact and the repository agree.
    let inside: Vec<(&Placed, String)> = placed
        .iter()
        .filter_map(|p| under(path, &p.artifact).map(|rest| (p, rest)))
        .collect();
    let below: Vec<&Placed> = placed
        .iter()
        .filter(|p| p.artifact != path && under(&p.artifact, path).is_some())
        .collect();
    let (copy, dir) = match (inside.as_slice(), below.as_slice()) {
        ([(p, rest)], []) => (*p, join(&p.repo, rest)),
        ([], [p]) => (*p, p.repo.clone()),
        ([], []) => {
            let held: Vec<String> = placed.iter().map(|p| format!("{}/", p.artifact)).collect();
            return Err(Layout::NothingAt {
                path: path.to_string(),
                held: held.join(", "),
            });
        }
        _ => {
            return Err(Layout::SeveralCopies {
                path: path.to_string(),
            });
        }
    };
    if stays_within(&dir, &copy.repo) {
        Ok(dir)
    } else {
        Err(Layout::ReadsOutside {
            from: copy.repo.clone(),
            to: copy.artifact.clone(),
            line: copy.line,
            dir,
        })
    }
}
