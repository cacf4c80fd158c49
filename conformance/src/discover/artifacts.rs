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
pub const GENERATOR_GROUP: &str = "source.extensions.fluxcd.io";

/// Whether a document is an ArtifactGenerator.
pub fn is_generator(doc: &Node) -> bool {
    doc.str_at(&["kind"]).as_deref() == Some("ArtifactGenerator")
        && doc
            .str_at(&["apiVersion"])
            .is_some_and(|v| v.starts_with(&format!("{GENERATOR_GROUP}/")))
}

/// What a generated artifact's `path` is in this repository.
#[derive(Clone, Copy)]
#[allow(missing_debug_implementations)] // closures
pub struct Repo<'a> {
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
pub fn artifact_dir(
    generator: &Node,
    at: &Span,
    namespace: &str,
    artifact: &str,
    path: &str,
    repo: Repo<'_>,
) -> Option<Result<String, String>> {
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
            .map_err(|why| format!("{who} {why}")),
    )
}

fn layout(
    generator: &Node,
    out: &Node,
    gen_ns: &str,
    repo: Repo<'_>,
) -> Result<Vec<Placed>, String> {
    let copies = out.path(&["copy"]).map(Node::as_seq).unwrap_or_default();
    if copies.is_empty() {
        return Err("copies nothing into it".into());
    }
    let mut placed = Vec::new();
    for copy in copies {
        let from = copy.str_at(&["from"]).unwrap_or_default();
        let to = copy.str_at(&["to"]).unwrap_or_default();
        let line = copy.line;
        if let Some(strategy) = copy.str_at(&["strategy"]).filter(|s| s != "Overwrite") {
            return Err(format!(
                "copies {from} with strategy {strategy} (line {line}); only Overwrite copies are modelled"
            ));
        }
        if copy
            .path(&["exclude"])
            .is_some_and(|e| !e.as_seq().is_empty())
        {
            return Err(format!(
                "copies {from} with exclude patterns (line {line}); exclusions are not modelled"
            ));
        }
        let Some((alias, rest)) = from.strip_prefix('@').and_then(|f| f.split_once('/')) else {
            return Err(format!(
                "copies from `{from}` (line {line}), which is not @alias/path"
            ));
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
            return Err(format!(
                "copies from alias @{alias} (line {line}), which its spec.sources does not define"
            ));
        };
        let Some(base) = (repo.dir_of)(&source) else {
            return Err(format!(
                "copies from {source} (line {line}), which is not this repository"
            ));
        };
        let globbed = |p: &str| p.contains(['*', '?', '[', ']']);
        let Some(to_dir) = to.strip_prefix("@artifact/").map(|t| t.trim_matches('/')) else {
            return Err(format!(
                "copies to `{to}` (line {line}), which is not @artifact/path"
            ));
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
                    return Err(format!(
                        "copies `{from}` (line {line}), which is a file or missing; only whole directories are modelled"
                    ));
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
                return Err(format!(
                    "copies `{from}` (line {line}); only whole directories (`@{alias}/dir/**` or `@{alias}/dir/`) are modelled, not glob patterns"
                ));
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
) -> Result<String, String> {
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
            return Err(format!(
                "does not put anything at {path}/ (it holds {})",
                held.join(", ")
            ));
        }
        _ => {
            return Err(format!(
                "puts several copies at {path}/, in a layout that is not a directory of the repository"
            ));
        }
    };
    if stays_within(&dir, &copy.repo) {
        Ok(dir)
    } else {
        Err(format!(
            "copies {}/ to {}/ (line {}), a layout that is not the repository's, and the build of {dir} reads outside the copied directory",
            copy.repo, copy.artifact, copy.line
        ))
    }
}
