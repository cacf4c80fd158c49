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

use std::sync::OnceLock;

use crate::model::{Cluster, Span};
use crate::repo::RepoIndex;

/// `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    /// `v1.8.5`, `1.8`, `2.9.0-rc.1` (pre-release and build parts ignored).
    pub fn parse(text: &str) -> Option<Version> {
        let t = text.trim().trim_start_matches('v');
        let core = t.split(['-', '+']).next()?;
        let mut parts = core.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next().map_or(Some(0), |p| p.parse().ok())?;
        let patch = parts.next().map_or(Some(0), |p| p.parse().ok())?;
        Some(Version(major, minor, patch))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "v{}.{}.{}", self.0, self.1, self.2)
    }
}

/// One Flux release and its controllers (`flux-releases.txt`).
#[derive(Debug, Clone)]
pub struct Release {
    /// The Flux release (`flux` CLI and distribution).
    pub flux: Version,
    /// source-controller's version in the release.
    pub source_controller: Version,
    /// kustomize-controller's version in the release.
    pub kustomize_controller: Version,
    /// helm-controller's version in the release.
    pub helm_controller: Version,
}

/// Every Flux release the table knows, oldest first.
pub fn releases() -> &'static [Release] {
    static TABLE: OnceLock<Vec<Release>> = OnceLock::new();
    TABLE.get_or_init(|| {
        include_str!("flux-releases.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let f: Vec<&str> = l.split('|').collect();
                Some(Release {
                    flux: Version::parse(f.first()?)?,
                    source_controller: Version::parse(f.get(1)?)?,
                    kustomize_controller: Version::parse(f.get(2)?)?,
                    helm_controller: Version::parse(f.get(3)?)?,
                })
            })
            .collect()
    })
}

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
    pub fn strict_substitution(&self) -> Option<bool> {
        self.kustomize_controller.map(|v| v >= Version(1, 9, 0))
    }
}

/// The Flux the cluster installs, if its repository shows it.
pub fn installed(
    cluster: &Cluster,
    index: &RepoIndex,
    bootstrap: &crate::provenance::bootstrap::Bootstrap,
) -> Option<Installed> {
    let objects = || cluster.local_tiers().flat_map(|t| t.objects());
    // gotk-components.yaml: the kustomize-controller Deployment.
    for o in objects() {
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
    // The gotk-components.yaml `flux bootstrap` wrote beside the sync file:
    // bootstrap applied it, even when the sync path leaves it out of its
    // build (then git does not manage Flux, but it runs that version).
    if let crate::model::Entry::SyncKustomization { tier, .. } = &cluster.entry
        && let Some(t) = cluster.tiers.get(tier)
    {
        let dir = t.defined_at.file.rsplit_once('/').map_or("", |(d, _)| d);
        let file = crate::repo::join(dir, "gotk-components.yaml");
        if let Ok(text) = index.read_text(&file)
            && let Some((line, header)) = version_header(&text)
            && let Some(flux) = Version::parse(&header)
        {
            return Some(Installed {
                flux: Some(flux),
                kustomize_controller: kustomize_controller_of(flux),
                written: header,
                at: Span::new(&file, line),
                pinned: true,
            });
        }
    }
    // The Flux Operator: a FluxInstance's distribution version, in the
    // cluster or (for the instance that syncs it) in the repository.
    let instance = objects()
        .find(|o| o.id.kind == "FluxInstance")
        .and_then(|o| {
            Some((
                o.body.str_at(&["spec", "distribution", "version"])?,
                o.source.clone()?,
            ))
        })
        // What the bootstrap states: a helmfile `flux-instance` release's
        // values, `flux install|bootstrap --version`, Flux's install
        // manifests at a ref.
        .or_else(|| {
            bootstrap
                .flux_of(&cluster.name)
                .map(|p| (p.written.clone(), p.at.clone()))
        })
        // A kustomization whose resources are Flux's install manifests at a ref.
        .or_else(|| {
            index.all_files().find_map(|(file, f)| {
                // Only files that name Flux's repository can.
                if !crate::repo::KUSTOMIZATION_FILE_NAMES
                    .contains(&file.rsplit('/').next().unwrap_or(file))
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
        })
        .or_else(|| {
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
                        _ => None,
                    }?;
                    Some((version, Span::new(file, d.line)))
                })
            })
        });
    // Flux's own manifests as a source of the cluster (an OCIRepository of
    // ghcr.io/fluxcd/flux-manifests, a GitRepository of fluxcd/flux2), a
    // FluxInstance Terraform creates.
    let instance = instance
        .or_else(|| {
            objects().find_map(|o| {
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
        })
        .or_else(|| terraform_instance(index));
    let (written, at) = instance?;
    let (flux, pinned) = resolve_range(&written);
    Some(Installed {
        flux,
        kustomize_controller: flux.and_then(kustomize_controller_of),
        at,
        written,
        pinned,
    })
}

/// The Flux version of a URL of Flux's own install manifests:
/// `github.com/fluxcd/flux2/manifests/install?ref=v2.3.0` (a kustomize
/// remote base) and `github.com/fluxcd/flux2/releases/download/v2.3.0/install.yaml`
/// (`latest/download` names no version).
pub fn flux_manifests_version(url: &str) -> Option<String> {
    let url = url.trim_matches(|c| c == '"' || c == '\'' || c == '(' || c == ')');
    let at = url.find("fluxcd/flux2/")?;
    let rest = &url[at + "fluxcd/flux2/".len()..];
    let version = if let Some(q) = rest.strip_prefix("manifests/install") {
        q.split_once("ref=")?
            .1
            .split(['&', '#'])
            .next()?
            .to_string()
    } else {
        let r = rest.strip_prefix("releases/download/")?;
        let (v, file) = r.split_once('/')?;
        if !file.starts_with("install") {
            return None;
        }
        v.to_string()
    };
    (Version::parse(&version).is_some()).then_some(version)
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

/// The newest release a FluxInstance's `distribution.version` admits (the
/// operator picks the highest match), and whether it names one release.
fn resolve_range(text: &str) -> (Option<Version>, bool) {
    let t = text.trim();
    if let Some(v) =
        Version::parse(t).filter(|_| t.trim_start_matches('v').matches('.').count() == 2)
    {
        return (Some(v), true);
    }
    let newest = releases().last().map(|r| r.flux);
    let prefix: Vec<u32> = t
        .trim_start_matches(['v', '^', '~', '>', '=', ' '])
        .split('.')
        .map_while(|p| p.parse().ok())
        .collect();
    let matching = releases()
        .iter()
        .rev()
        .map(|r| r.flux)
        .find(|v| match prefix.as_slice() {
            [major] => v.0 == *major,
            [major, minor, ..] => v.0 == *major && v.1 == *minor,
            _ => true,
        });
    (matching.or(newest), false)
}

fn flux_of_kustomize_controller(kc: Version) -> Option<Version> {
    releases()
        .iter()
        .filter(|r| r.kustomize_controller <= kc)
        .max_by_key(|r| r.kustomize_controller)
        .map(|r| r.flux)
}

fn kustomize_controller_of(flux: Version) -> Option<Version> {
    releases()
        .iter()
        .filter(|r| r.flux <= flux)
        .max_by_key(|r| r.flux)
        .map(|r| r.kustomize_controller)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flux_manifest_urls() {
        assert_eq!(
            flux_manifests_version("https://github.com/fluxcd/flux2/manifests/install?ref=v2.3.0")
                .as_deref(),
            Some("v2.3.0")
        );
        assert_eq!(
            flux_manifests_version(
                "https://github.com/fluxcd/flux2/releases/download/v2.6.4/install.yaml"
            )
            .as_deref(),
            Some("v2.6.4")
        );
        assert_eq!(
            flux_manifests_version(
                "https://github.com/fluxcd/flux2/releases/latest/download/install.yaml"
            ),
            None
        );
    }

    #[test]
    fn versions_and_ranges() {
        assert_eq!(Version::parse("v1.8.5"), Some(Version(1, 8, 5)));
        assert_eq!(Version::parse("2.9"), Some(Version(2, 9, 0)));
        assert_eq!(Version::parse("v2.9.0-rc.1"), Some(Version(2, 9, 0)));
        assert_eq!(resolve_range("2.8.x"), (Some(Version(2, 8, 8)), false));
        assert_eq!(resolve_range("v2.4.0"), (Some(Version(2, 4, 0)), true));
        let (newest, pinned) = resolve_range("2.x");
        assert!(!pinned);
        assert!(newest >= Some(Version(2, 9, 0)));
        assert_eq!(
            kustomize_controller_of(Version(2, 8, 8)),
            Some(Version(1, 8, 5))
        );
        assert_eq!(
            flux_of_kustomize_controller(Version(1, 9, 1)),
            Some(Version(2, 9, 0))
        );
    }
}
