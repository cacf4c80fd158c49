//! Flux's build of one Kustomization, around a [`Kustomize`] backend.
//!
//! kustomize-controller extracts the source artifact, then edits the
//! kustomization file of `spec.path` in its checkout, or generates one
//! (`GenerateManifest` and `findOrGenerateKustomization`, fluxcd/pkg
//! `kustomize_generator.go`), and builds it:
//!
//! * an existing file is decoded loosely (field names case-insensitively,
//!   unknown fields dropped) and written back with its known fields;
//! * `spec.targetNamespace` overwrites `namespace`, `spec.namePrefix` and
//!   `spec.nameSuffix` overwrite theirs, `spec.patches` and `spec.components`
//!   are appended (a component must be local and relative, and a missing
//!   one is dropped with `spec.ignoreMissingComponents`), `spec.images` are
//!   merged by name, `spec.buildMetadata` replaces `buildMetadata`;
//! * without a file, Flux lists every `.yaml`/`.yml` file below the path (a
//!   subdirectory with its own kustomization file is one resource), and
//!   every one must decode as Kubernetes objects.
//!
//! So Flux's fields run in the same transformer pass as the user's. We
//! never write into the user's repository: the edited file is written over
//! the artifact in memory ([`Tree::written`]). Both backends build that tree.
//! The build asks for origin annotations, which map every object back to the
//! file it came from; they are removed afterwards, and `spec.commonMetadata`
//! and the owner labels are set on each object, as `apply` does.
//!
//! Before any backend runs, the files the build would read are checked: a YAML
//! error, a file Flux's generator cannot decode, a remote base (which Flux
//! would fetch from the network on every reconcile) or a path outside the
//! source becomes a [`RenderFailure`] that points at the file and line.

mod fetching;
mod origin;
mod precheck;
mod written;

pub use super::reach::reach;
use super::reach::{Reach, reach_tree};
use super::{Kustomize, Tree};
use crate::model::{Object, ObjectId, RenderFailure, Span, TierId};
use crate::repo::{self, Artifact, Kind};
use crate::yaml::{Node, Value};
use fetching::Fetching;
use origin::{SourceDocs, take_origin};
use precheck::{check_decodable, precheck};
use written::flux_kustomization;

/// The Flux Kustomization a build is for.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Its namespace and name (the owner labels it sets).
    pub id: &'a TierId,
    /// Its `spec.path`, normalised.
    pub path: &'a str,
    /// The object as Flux applies it.
    pub spec: &'a Node,
    /// Where it is defined: what an error or a remote base in its own spec
    /// (`spec.patches`, `spec.components`) points to.
    pub defined_at: &'a Span,
}

/// Builds `target` as Flux would, returning the objects it applies; every
/// place in the result names a file (one in the Kustomization's own spec
/// names the file that defines it).
pub fn build(
    artifact: &Artifact,
    target: &Target,
    kustomize: &dyn Kustomize,
    remote: Option<&crate::remote::Fetcher>,
) -> Result<Built, BuildError> {
    let at = target.defined_at;
    let own_file = |span: &mut Span| {
        if span.file.is_empty() {
            span.file = at.file.clone();
        }
    };
    match build_at(artifact, target, kustomize, remote) {
        Ok(mut built) => {
            built
                .remote_bases
                .iter_mut()
                .for_each(|(span, _)| own_file(span));
            built.fetched.iter_mut().for_each(|f| own_file(&mut f.at));
            Ok(built)
        }
        Err(BuildError::Failed(mut failure)) => {
            // A place in the Flux Kustomization itself (its spec.patches,
            // spec.components): the file it is in, and its line when the
            // backend named none.
            if let Some(place) = failure.at.as_mut().filter(|p| p.file.is_empty()) {
                place.file = at.file.clone();
                if place.line == 0 {
                    place.line = at.line;
                }
            }
            Err(BuildError::Failed(failure))
        }
        Err(BuildError::RemoteBases(mut part)) => {
            part.left_out
                .iter_mut()
                .for_each(|(span, _)| own_file(span));
            part.fetched.iter_mut().for_each(|f| own_file(&mut f.at));
            Err(BuildError::RemoteBases(part))
        }
        Err(budget @ BuildError::Budget(_)) => Err(budget),
    }
}

/// [`build`], with the places in the Kustomization's own spec left without
/// a file.
fn build_at(
    artifact: &Artifact,
    target: &Target,
    kustomize: &dyn Kustomize,
    remote: Option<&crate::remote::Fetcher>,
) -> Result<Built, BuildError> {
    let Target { path, spec, .. } = *target;
    check_path(artifact, path)?;
    let written = flux_kustomization(artifact, path, spec)?;
    let mut tree = Tree::new(artifact);
    tree.written.insert(written.file.clone(), written.doc);
    let mut reach = reach_tree(&tree, path);
    let fetch = fetch_remotes(&mut tree, &mut reach, path, kustomize, remote)?;
    // What is not fetched is left out. A backend that can leave it out
    // builds the local part, which is checked; what the remote part adds
    // stays unknown (the tier is then not fully known, and every
    // conclusion drawn from absence is hedged). If the local part does not
    // build on its own (a patch aimed at a remote object), the tier is not
    // checked, as before.
    let remote_bases = std::mem::take(&mut reach.remotes);
    if !remote_bases.is_empty() && !fetch.by_backend {
        if !kustomize.builds_local_part() {
            return Err(fetch.unbuilt(remote_bases));
        }
        tree.skip_remote = true;
    }
    precheck(&tree, &reach).map_err(|e| fetch.relocate_error(&tree, e))?;
    if written.generated {
        check_decodable(artifact, &reach.resources).map_err(BuildError::Failed)?;
    }
    let built = kustomize.build(&tree, path);
    if built.is_err() && !remote_bases.is_empty() {
        return Err(fetch.unbuilt(remote_bases));
    }
    let built = built
        .map_err(|err| backend_failure(&tree, &fetch, &written.file, written.generated, err))?;
    let objects = objects(built, &tree, &fetch, target)?;
    let mut fetched = fetch.fetched;
    if fetch.by_backend {
        fetched.extend(remote_bases.iter().map(|(at, url)| crate::model::Fetched {
            at: at.clone(),
            reference: url.clone(),
            content: format!("by {}", kustomize.name()),
            stale: None,
            input: false,
        }));
    }
    let remote_bases = if fetch.by_backend {
        Vec::new()
    } else {
        remote_bases
    };
    let mut generator_inputs = reach.generator_inputs;
    generator_inputs.retain(|g| tree.in_mount(&g.file).is_none());
    Ok(Built {
        objects,
        files_read: reach.reads.len(),
        reads: reach.reads,
        generator_inputs,
        remote_inputs: reach.remote_inputs,
        dropped: written.dropped,
        remote_bases,
        fetched,
        fetch_failures: fetch.failures,
    })
}

/// `spec.path` names a directory of the source, or the build fails as
/// Flux's would, saying where the path exists when it is below the root.
fn check_path(artifact: &Artifact, path: &str) -> Result<(), BuildError> {
    let failed =
        |message: String, at: Option<Span>| BuildError::Failed(RenderFailure { message, at });
    match artifact.stat(path) {
        Ok(Kind::Dir) => Ok(()),
        Ok(Kind::File) => Err(failed(
            format!(
                "kustomization path ./{path} is a file; spec.path must name a directory of the source"
            ),
            None,
        )),
        Ok(Kind::Unreadable(why)) => Err(failed(
            format!("kustomization path ./{path} cannot be read: {why}"),
            None,
        )),
        Ok(Kind::Symlink) | Err(_) => {
            let why = match artifact.stat(path) {
                Err(
                    m @ (repo::Missing::Symlink
                    | repo::Missing::Ignored(_)
                    | repo::Missing::Outside),
                ) => {
                    format!(": {}", m.describe(&format!("./{path}")))
                }
                _ => match root_below(artifact, path) {
                    Some(dir) => format!(
                        " (spec.path is relative to the source root; it exists below {dir}/: if the artifact Flux builds from is {dir}/, check with --repo pointing there, or map the source under `sources` in conformance.yaml)"
                    ),
                    None => " (spec.path is relative to the source root)".to_string(),
                },
            };
            Err(failed(
                format!("kustomization path not found: ./{path}{why}"),
                None,
            ))
        }
    }
}

/// With `--fetch-remote`, what the build would download, fetched first and
/// mounted into the tree (or, for an external kustomize, admitted for it
/// to fetch itself).
fn fetch_remotes(
    tree: &mut Tree,
    reach: &mut Reach,
    path: &str,
    kustomize: &dyn Kustomize,
    remote: Option<&crate::remote::Fetcher>,
) -> Result<Fetching, BuildError> {
    // With --fetch-remote, what the build would download is fetched first
    // and mounted into the tree, round by round (a remote base may name
    // others), so the whole tier is built from what Flux would fetch.
    let mut fetch = Fetching::default();
    if let Some(fetcher) = remote {
        if kustomize.reads_mounts() {
            fetch.run(fetcher, tree, reach, path)?;
        } else if !reach.remotes.is_empty() {
            // An external kustomize fetches them itself, with git under
            // the same limits as ours, and only what passes our checks.
            if let Some(transports) = fetch.admit(fetcher, &reach.remotes)? {
                fetch.by_backend = true;
                tree.git = Some(transports);
            }
        }
    }
    Ok(fetch)
}

/// A failed backend build as Flux reports it: at the place the backend
/// names when it is a file of the build, else the kustomization; an entry
/// appended from the Flux Kustomization's spec at its line there.
fn backend_failure(
    tree: &Tree,
    fetch: &Fetching,
    written: &str,
    generated: bool,
    err: crate::render::Error,
) -> BuildError {
    // The place the backend names (the native renderer says it, the
    // external program's message starts with it), when it is a file of
    // the build; else the kustomization.
    let message = err.to_string();
    let at = err
        .place()
        .filter(|(file, _)| blamable(tree, file))
        .map(|(file, line)| Span::new(file.clone(), *line))
        .or_else(|| blamed_place(tree, &message))
        .or_else(|| {
            let (file, _) = err.place()?;
            fetch.place_of(tree, &Span::new(file.clone(), 0))
        })
        .or_else(|| (!generated).then(|| Span::new(written, 0)));
    let (message, at) = match spec_place(written, &message) {
        // A `spec.patches` or `spec.components` entry of the Flux
        // Kustomization: its own file (filled in by [`build`]) and line.
        Some((line, message)) => (message, Some(Span::new("", line))),
        None => (message, at),
    };
    BuildError::Failed(RenderFailure {
        message: fetch.rewrite(tree, &message),
        at,
    })
}

/// The built objects, each with its source place (from its origin, or
/// where the repository names the remote it came from) and the metadata
/// kustomize-controller adds; an object without identity fails the build.
fn objects(
    built: Vec<Node>,
    tree: &Tree,
    fetch: &Fetching,
    target: &Target,
) -> Result<Vec<Object>, BuildError> {
    let failed =
        |message: String, at: Option<Span>| BuildError::Failed(RenderFailure { message, at });
    let mut lookup = SourceDocs::new(tree.artifact);
    let mut objects = Vec::with_capacity(built.len());
    for mut body in built {
        let mut source = take_origin(&mut body, target.path, &mut lookup);
        if let Some(span) = source.as_ref().and_then(|s| fetch.place_of(tree, s)) {
            source = Some(span); // from a fetched remote: where it is named
        }
        let Some(id) = ObjectId::of(&body).filter(|_| body.is_map()) else {
            let what = ["apiVersion", "kind"]
                .into_iter()
                .find(|key| body.str_at(&[key]).is_none())
                .unwrap_or("metadata.name");
            return Err(failed(
                format!(
                    "an object has no {what}; Flux rejects the whole Kustomization when any object lacks apiVersion, kind or metadata.name"
                ),
                source,
            ));
        };
        apply_common_metadata(&mut body, target.spec, target.id);
        objects.push(Object { id, source, body });
    }
    Ok(objects)
}

/// A successful build: the objects, and what the build fed to generators.
#[derive(Debug)]
pub struct Built {
    /// The built objects, with `spec.commonMetadata` and the owner labels merged in.
    pub objects: Vec<Object>,
    /// How many files the build reads.
    pub files_read: usize,
    /// The files the build reads (resources, kustomization files, patches).
    pub reads: std::collections::BTreeSet<String>,
    /// Files read by configMapGenerator/secretGenerator, with where the
    /// kustomization names them.
    pub generator_inputs: Vec<crate::model::GeneratorInput>,
    /// Generator inputs that are URLs (read as empty), with where they are
    /// written.
    pub remote_inputs: Vec<(Span, String)>,
    /// Fields of the path's kustomization file that Flux drops when it
    /// rewrites it (not kustomization fields), with where they are.
    pub dropped: Vec<(Span, String)>,
    /// Remote bases left out (the objects are the local part only), with
    /// where each is written; empty for a whole build.
    pub remote_bases: Vec<(Span, String)>,
    /// Remote bases and inputs fetched (`--fetch-remote`).
    pub fetched: Vec<crate::model::Fetched>,
    /// Remote references that could not be fetched here, and why.
    pub fetch_failures: Vec<(String, String)>,
}

/// Why a Kustomization was not built.
#[derive(Debug)]
pub enum BuildError {
    /// The build fails as Flux's would.
    Failed(RenderFailure),
    /// A file the build reads exceeds a loader budget: this tool does not
    /// read it, whatever Flux would do (the message names file, line and
    /// budget).
    Budget(RenderFailure),
    /// The build needs remote bases that were not fetched (or not all of
    /// them), and its local part does not build without them.
    RemoteBases(Box<RemotePart>),
}

/// What a build that needs remote bases it could not get had of them.
#[derive(Debug, Default)]
pub struct RemotePart {
    /// Remote references left out, with where each is written.
    pub left_out: Vec<(Span, String)>,
    /// What was fetched (`--fetch-remote`).
    pub fetched: Vec<crate::model::Fetched>,
    /// What `--fetch-remote` could not fetch here, and why.
    pub failures: Vec<(String, String)>,
}

/// The line offset that marks an entry Flux appended from the
/// Kustomization's `spec.patches` or `spec.components` to the kustomization
/// it writes: the backend reports `<written file>:<SPEC_LINE + line>`, which
/// is the line in the Flux Kustomization's own file.
pub(super) const SPEC_LINE: u32 = 1 << 30;

/// A backend message that names an entry appended from the spec: that
/// entry's line in the Flux Kustomization's file, and the message saying
/// so instead of naming the written file.
fn spec_place(written: &str, message: &str) -> Option<(u32, String)> {
    let marker = format!("{written}:");
    let mut from = 0;
    while let Some(i) = message[from..].find(&marker) {
        let start = from + i;
        let digits_at = start + marker.len();
        let digits: String = message[digits_at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse::<u32>()
            && n >= SPEC_LINE
        {
            let line = n - SPEC_LINE;
            let place = if line > 0 {
                format!("the Flux Kustomization's spec (line {line})")
            } else {
                "the Flux Kustomization's spec (as a patch of the tier that applies it sets it)"
                    .to_string()
            };
            let text = format!(
                "{}{place}{}",
                &message[..start],
                &message[digits_at + digits.len()..]
            );
            return Some((line, text));
        }
        from = digits_at;
    }
    None
}

/// Whether a finding may point at `file`: a file of the source, including
/// a kustomization file Flux edited (its lines are the user's), but not one
/// Flux generated where there was none.
fn blamable(tree: &Tree, file: &str) -> bool {
    tree.artifact.is_file(file)
}

/// The `file:line` a backend's message starts with, when it names a file of
/// the build.
fn blamed_place(tree: &Tree, message: &str) -> Option<Span> {
    let (file, rest) = message.split_once(':')?;
    if !blamable(tree, file) {
        return None;
    }
    let line = rest
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Some(Span::new(file, line))
}

/// `spec.commonMetadata` and the owner labels, merged into each object's
/// metadata as kustomize-controller does after the build.
fn apply_common_metadata(body: &mut Node, spec: &Node, tier: &TierId) {
    let metadata = body.map_entry("metadata");
    for (field, extra) in [
        ("labels", spec.path(&["spec", "commonMetadata", "labels"])),
        (
            "annotations",
            spec.path(&["spec", "commonMetadata", "annotations"]),
        ),
    ] {
        let Some(extra) = extra else { continue };
        let target = metadata.map_entry(field);
        for (key, value) in extra.as_map() {
            target.set(key, value.clone());
        }
    }
    let labels = metadata.map_entry("labels");
    labels.set(
        "kustomize.toolkit.fluxcd.io/name",
        Node::new(Value::String(tier.name.clone())),
    );
    labels.set(
        "kustomize.toolkit.fluxcd.io/namespace",
        Node::new(Value::String(tier.namespace.clone())),
    );
}

/// A directory (one or two levels deep) below which `path` exists, when it
/// does not at the root.
fn root_below(artifact: &Artifact, path: &str) -> Option<String> {
    artifact
        .index()
        .below("")
        .filter(|(p, k)| **k == Kind::Dir && p.matches('/').count() < 2)
        .map(|(p, _)| p)
        .find(|d| artifact.is_dir(&repo::join(d, path)))
        .map(str::to_string)
}
