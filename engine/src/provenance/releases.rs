//! The Flux release table (`flux-releases.txt`: each release and its
//! controllers' versions), versions, and the version a URL of Flux's own
//! install manifests names. Below both [`super::installed`] (what a
//! cluster runs) and [`super::bootstrap`] (what a bootstrap step states),
//! which read it.

use std::sync::OnceLock;

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

/// The newest release a FluxInstance's `distribution.version` admits (the
/// operator picks the highest match), and whether it names one release.
pub(super) fn resolve_range(text: &str) -> (Option<Version>, bool) {
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

pub(super) fn flux_of_kustomize_controller(kc: Version) -> Option<Version> {
    releases()
        .iter()
        .filter(|r| r.kustomize_controller <= kc)
        .max_by_key(|r| r.kustomize_controller)
        .map(|r| r.flux)
}

pub(super) fn kustomize_controller_of(flux: Version) -> Option<Version> {
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
