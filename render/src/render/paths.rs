//! Path and reference helpers shared by Flux's build steps and every
//! kustomize backend: remote references, relative paths, and the keys of a
//! kustomization file as kustomize's loader matches them. A leaf of
//! [`crate::render`], so the Flux layer depends on no backend's internals.

/// kustomize's idea of a remote reference: a URL or a git address.
pub(crate) fn is_remote(reference: &str) -> bool {
    let r = reference.trim();
    r.contains("://")
        || r.starts_with("git@")
        || r.starts_with("git::")
        || r.starts_with("gh:")
        || r.starts_with("github.com/")
        || r.starts_with("github.com:")
        || r.starts_with("gitlab.com/")
        || r.starts_with("bitbucket.org/")
}

/// The repository path `to` relative to the repository directory `from`
/// (`/`-separated, `..` where it climbs).
pub fn relative_str(from: &str, to: &str) -> String {
    let from: Vec<&str> = from.split('/').filter(|s| !s.is_empty()).collect();
    let to: Vec<&str> = to.split('/').filter(|s| !s.is_empty()).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out: Vec<&str> = vec![".."; from.len() - common];
    out.extend(&to[common..]);
    out.join("/")
}

/// Every field of kustomize's `types.Kustomization`, as its JSON tags spell
/// them. kustomize (and Flux, when it rewrites the file) decodes with
/// `encoding/json`, which matches field names case-insensitively.
pub const FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "images",
    "imageTags",
    "replacements",
    "replicas",
    "vars",
    "sortOptions",
    "resources",
    "components",
    "crds",
    "bases",
    "configMapGenerator",
    "secretGenerator",
    "helmGlobals",
    "helmCharts",
    "helmChartInflationGenerator",
    "generatorOptions",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "buildMetadata",
];

/// The field a key of a kustomization file names, matched as
/// `encoding/json` does (an exact match first, else case-insensitively).
pub fn canonical_field(key: &str) -> Option<&'static str> {
    FIELDS
        .iter()
        .find(|f| **f == key)
        .or_else(|| FIELDS.iter().find(|f| f.eq_ignore_ascii_case(key)))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_then_descend() {
        assert_eq!(
            relative_str("clusters/prod", "apps/x.yaml"),
            "../../apps/x.yaml"
        );
        assert_eq!(relative_str("a/b", "a/b/c"), "c");
        assert_eq!(relative_str("", "a/b"), "a/b");
    }

    #[test]
    fn remote_references_are_recognised() {
        assert!(is_remote("https://github.com/x/y//config?ref=v1"));
        assert!(is_remote(
            "github.com/kubernetes-csi/external-snapshotter/client/config/crd?ref=v8.2.0"
        ));
        assert!(is_remote("git@github.com:x/y.git"));
        assert!(!is_remote("../base"));
        assert!(!is_remote("./crds.yaml"));
    }
}
