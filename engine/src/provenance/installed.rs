//! The Flux a cluster installs, as its repository shows it: the
//! kustomize-controller Deployment of the cluster's rendered
//! `gotk-components.yaml` (its image tag, and the file's `# Flux Version:`
//! header), a FluxInstance's `spec.distribution.version` (a semver range
//! such as `2.x` is judged against the newest release it admits), or what
//! a bootstrap step states (a helmfile `flux-instance` release, `flux
//! install --version`, Flux's install manifests at a ref). Behaviours
//! that changed between releases (strict postBuild substitution from
//! kustomize-controller 1.9 / Flux 2.9; the API versions Flux serves) are
//! judged against it.

use crate::model::{Cluster, Span};
use crate::repo::RepoIndex;

pub use super::releases::{Release, Version, flux_manifests_version, releases};
use super::releases::{flux_of_kustomize_controller, kustomize_controller_of, resolve_range};

/// What the repository says the cluster runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The Flux release, when it can be told.
    pub flux: Option<Version>,
    /// kustomize-controller's version.
    pub kustomize_controller: Option<Version>,
    /// Where it is written.
    pub at: Span,
    /// What the repository pins, in its own words (`v2.8.8`, `2.x`).
    pub written: String,
    /// `false` for a range (`2.x`, `>=2.4`, `latest`): judged against the
    /// newest release the range admits.
    pub pinned: bool,
}

impl Installed {
    /// The Flux conformance.yaml declares (`clusters.<name>.flux`), written
    /// at `at`.
    pub fn declared(written: &str, at: Span) -> Option<Installed> {
        let flux = Version::parse(written)?;
        Some(Installed {
            flux: Some(flux),
            kustomize_controller: kustomize_controller_of(flux),
            at,
            written: written.to_string(),
            pinned: true,
        })
    }

    /// Whether kustomize-controller substitutes strictly by default (an
    /// undefined variable fails the build): from kustomize-controller 1.9
    /// (Flux 2.9), the StrictPostBuildSubstitutions feature gate on by
    /// default.
    pub(crate) fn strict_substitution(&self) -> Option<bool> {
        self.kustomize_controller
            .map(|v| v >= Version(1, 9, 0))
            // A Flux older than the release table (before 2.0): long before
            // strict substitution.
            .or_else(|| {
                let oldest = releases().first().map(|r| r.flux)?;
                self.flux.filter(|f| *f < oldest).map(|_| false)
            })
    }
}

/// The Flux the cluster installs, if its repository shows it.
pub fn installed(
    cluster: &Cluster,
    index: &RepoIndex,
    bootstrap: &crate::provenance::bootstrap::Bootstrap,
) -> Option<Installed> {
    if let Some(installed) = rendered_components(cluster, index) {
        return Some(installed);
    }
    if let Some(installed) = bootstrapped_components(cluster, index) {
        return Some(installed);
    }
    // The Flux Operator: a FluxInstance's distribution version, in the
    // cluster or (for the instance that syncs it) in the repository.
    let (written, at) = cluster_instance(cluster)
        // What the bootstrap states: a helmfile `flux-instance` release's
        // values, `flux install|bootstrap --version`, Flux's install
        // manifests at a ref.
        .or_else(|| {
            bootstrap
                .flux_of(&cluster.name)
                .map(|p| (p.written.clone(), p.at.clone()))
        })
        .or_else(|| manifests_resource(index))
        .or_else(|| repository_distribution(index))
        // Flux's own manifests as a source of the cluster (an OCIRepository of
        // ghcr.io/fluxcd/flux-manifests, a GitRepository of fluxcd/flux2), a
        // FluxInstance Terraform creates.
        .or_else(|| flux_source(cluster))
        .or_else(|| terraform_instance(index))?;
    let (mut flux, pinned) = resolve_range(&written);
    // A range resolved from a FluxInstance whose `distribution.artifact`
    // pins the operator's manifests to a tag: the operator resolves the
    // range among the Flux versions that artifact ships, which this tool
    // does not know, so the version cannot be told.
    let mut written = written;
    if !pinned && let Some(artifact) = pinned_artifact(cluster, index) {
        flux = None;
        written = format!("{written} within {artifact}");
    }
    Some(Installed {
        flux,
        kustomize_controller: flux.and_then(kustomize_controller_of),
        at,
        written,
        pinned,
    })
}

/// gotk-components.yaml: the kustomize-controller Deployment.
fn rendered_components(cluster: &Cluster, index: &RepoIndex) -> Option<Installed> {
    for o in cluster.local_tiers().flat_map(|t| t.objects()) {
        if o.id.kind != "Deployment" || o.id.name != "kustomize-controller" {
            continue;
        }
        let image = o
            .body
            .path(&["spec", "template", "spec", "containers"])
            .map(crate::yaml::Node::as_seq)
            .unwrap_or_default()
            .iter()
            .find_map(|c| c.str_at(&["image"]))
            .filter(|i| i.contains("kustomize-controller"));
        let Some(image) = image else { continue };
        let tag = image.rsplit_once(':').map(|(_, t)| t).unwrap_or_default();
        let kc = Version::parse(tag.split('@').next().unwrap_or(tag));
        let at = o.source.clone().unwrap_or_else(|| Span::new("", 0));
        let header = index
            .read_text(&at.file)
            .ok()
            .and_then(|text| version_header(&text))
            .map(|(_, v)| v)
            .or_else(|| {
                o.body
                    .str_at(&["metadata", "labels", "app.kubernetes.io/version"])
            });
        let flux = header
            .as_deref()
            .and_then(Version::parse)
            .or_else(|| kc.and_then(flux_of_kustomize_controller));
        return Some(Installed {
            flux,
            kustomize_controller: kc.or_else(|| flux.and_then(kustomize_controller_of)),
            written: header.unwrap_or_else(|| tag.to_string()),
            at,
            pinned: true,
        });
    }
    None
}

/// The gotk-components.yaml `flux bootstrap` wrote beside the sync file:
/// bootstrap applied it, even when the sync path leaves it out of its
/// build (then git does not manage Flux, but it runs that version).
fn bootstrapped_components(cluster: &Cluster, index: &RepoIndex) -> Option<Installed> {
    let crate::model::Entry::SyncKustomization { tier, .. } = &cluster.entry else {
        return None;
    };
    let t = cluster.tiers.get(tier)?;
    let dir = t.defined_at.file.rsplit_once('/').map_or("", |(d, _)| d);
    let file = crate::repo::join(dir, "gotk-components.yaml");
    let text = index.read_text(&file).ok()?;
    let (line, header) = version_header(&text)?;
    let flux = Version::parse(&header)?;
    Some(Installed {
        flux: Some(flux),
        kustomize_controller: kustomize_controller_of(flux),
        written: header,
        at: Span::new(&file, line),
        pinned: true,
    })
}

/// A FluxInstance of the cluster: its distribution version, and where.
fn cluster_instance(cluster: &Cluster) -> Option<(String, Span)> {
    cluster
        .local_tiers()
        .flat_map(|t| t.objects())
        .find(|o| o.id.kind == "FluxInstance")
        .and_then(|o| {
            Some((
                o.body.str_at(&["spec", "distribution", "version"])?,
                o.source.clone()?,
            ))
        })
}

/// A FluxInstance's `spec.distribution.artifact` (or a HelmRelease's
/// `instance.distribution.artifact`) pinned to a tag other than `latest`:
/// the flux-operator manifests that bound which Flux a range resolves to.
fn pinned_artifact(cluster: &Cluster, index: &RepoIndex) -> Option<String> {
    let pinned = |a: String| {
        let tag = a.rsplit_once(':').map(|(_, t)| t).unwrap_or("");
        (!tag.is_empty() && tag != "latest" && !a.ends_with("://")).then_some(a)
    };
    let rendered = cluster
        .local_tiers()
        .flat_map(|t| t.objects())
        .filter(|o| o.id.kind == "FluxInstance")
        .find_map(|o| o.body.str_at(&["spec", "distribution", "artifact"]));
    rendered
        .or_else(|| {
            index.all_files().find_map(|(_, f)| {
                if !f.may_contain("artifact") {
                    return None;
                }
                f.docs()
                    .as_ref()
                    .ok()?
                    .iter()
                    .find_map(|d| match d.str_at(&["kind"]).as_deref() {
                        Some("FluxInstance") => d.str_at(&["spec", "distribution", "artifact"]),
                        Some("HelmRelease") => {
                            d.str_at(&["spec", "values", "instance", "distribution", "artifact"])
                        }
                        _ => None,
                    })
            })
        })
        .and_then(pinned)
}

/// A kustomization whose resources are Flux's install manifests at a ref.
fn manifests_resource(index: &RepoIndex) -> Option<(String, Span)> {
    index.all_files().find_map(|(file, f)| {
        // Only files that name Flux's repository can.
        if !crate::repo::KUSTOMIZATION_FILE_NAMES.contains(&file.rsplit('/').next().unwrap_or(file))
            || !f.may_contain("fluxcd/flux2/")
        {
            return None;
        }
        let doc = f.docs().as_ref().ok()?.first()?;
        doc.get("resources")?.as_seq().iter().find_map(|r| {
            let version = flux_manifests_version(r.as_str()?)?;
            Some((version, Span::new(file, r.line)))
        })
    })
}

/// A FluxInstance anywhere in the repository, or the instance a
/// HelmRelease's values describe: its distribution version.
fn repository_distribution(index: &RepoIndex) -> Option<(String, Span)> {
    index.all_files().find_map(|(file, f)| {
        // Only files that can hold one (`spec.distribution`, or
        // `instance.distribution` in a HelmRelease's values).
        if !f.may_contain("distribution") {
            return None;
        }
        f.docs().as_ref().ok()?.iter().find_map(|d| {
            let version = match d.str_at(&["kind"]).as_deref() {
                Some("FluxInstance") => d.str_at(&["spec", "distribution", "version"]),
                Some("HelmRelease") => {
                    d.str_at(&["spec", "values", "instance", "distribution", "version"])
                }
                // A flux-instance chart's values file (what a HelmRelease's
                // valuesFrom ConfigMap is generated from).
                None if d.get("apiVersion").is_none() => {
                    d.str_at(&["instance", "distribution", "version"])
                }
                _ => None,
            }?;
            Some((version, Span::new(file, d.line)))
        })
    })
}

/// A source of Flux's own manifests (an OCIRepository of
/// ghcr.io/fluxcd/flux-manifests, a GitRepository of fluxcd/flux2): the
/// tag or semver range it follows.
fn flux_source(cluster: &Cluster) -> Option<(String, Span)> {
    cluster
        .local_tiers()
        .flat_map(|t| t.objects())
        .find_map(|o| {
            let url = o.body.str_at(&["spec", "url"])?;
            let flux_source = (o.id.kind == "OCIRepository"
                && url.trim_end_matches('/').ends_with("fluxcd/flux-manifests"))
                || (o.id.kind == "GitRepository" && url.contains("github.com/fluxcd/flux2"));
            if !flux_source {
                return None;
            }
            let version = o
                .body
                .str_at(&["spec", "ref", "tag"])
                .or_else(|| o.body.str_at(&["spec", "ref", "semver"]))?;
            Some((version, o.source.clone()?))
        })
}

/// The `# Flux Version: v2.6.4` header `flux install --export` writes at
/// the top of gotk-components.yaml, with its 1-based line.
fn version_header(text: &str) -> Option<(u32, String)> {
    text.lines().take(10).enumerate().find_map(|(n, l)| {
        l.trim()
            .strip_prefix("# Flux Version:")
            .map(|v| (n as u32 + 1, v.trim().to_string()))
    })
}

/// A FluxInstance's `distribution.version` in Terraform (a
/// `kubernetes_manifest` or a flux-instance `helm_release` value).
fn terraform_instance(index: &RepoIndex) -> Option<(String, Span)> {
    let files: Vec<String> = index
        .below("")
        .filter(|(p, k)| **k == crate::repo::Kind::File && p.ends_with(".tf"))
        .map(|(p, _)| p.to_string())
        .collect();
    for file in files {
        let Ok(text) = index.read_text(&file) else {
            continue;
        };
        if !text.contains("FluxInstance") && !text.contains("flux-instance") {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            if !line.contains("distribution") {
                continue;
            }
            for (m, next) in lines[n..].iter().enumerate().take(8) {
                let t = next.trim();
                if let Some(v) = t.strip_prefix("version") {
                    let v = v
                        .trim_start()
                        .trim_start_matches(['=', ':'])
                        .trim()
                        .trim_matches(|c| c == '"' || c == '\'' || c == ',');
                    if !v.is_empty() && !v.contains("${") && !v.starts_with("var.") {
                        return Some((v.to_string(), Span::new(&file, (n + m) as u32 + 1)));
                    }
                }
            }
        }
    }
    None
}
