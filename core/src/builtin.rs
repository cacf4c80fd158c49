//! Kubernetes' built-in kinds: a complete table of the built-in
//! group/version/kinds of Kubernetes 1.30 to 1.37 (`builtin-kinds.txt`,
//! generated from the OpenAPI definitions packaged in k8s-openapi). A leaf:
//! the model (object ids), the renderer (strategic-merge semantics) and
//! provenance (the built-in source of kinds) all read it.

use std::sync::OnceLock;

/// Whether a kind is cluster-scoped or namespaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Cluster-scoped.
    Cluster,
    /// Namespaced.
    Namespaced,
}

/// One built-in kind.
#[derive(Debug, Clone)]
pub struct BuiltinKind {
    /// The API group (empty for the core group).
    pub group: String,
    /// The API version (`v1`, `v1beta1`).
    pub version: String,
    /// The kind (`Deployment`).
    pub kind: String,
    /// The resource's plural name, as in its API path (`deployments`).
    pub plural: String,
    /// Whether it is cluster-scoped or namespaced.
    pub scope: Scope,
    /// First and last Kubernetes minor version serving it.
    pub minors: (u32, u32),
}

/// The built-in kinds of Kubernetes (data in `builtin-kinds.txt`).
pub fn builtin() -> &'static [BuiltinKind] {
    static TABLE: OnceLock<Vec<BuiltinKind>> = OnceLock::new();
    TABLE.get_or_init(|| {
        include_str!("builtin-kinds.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|line| {
                let f: Vec<&str> = line.split('|').collect();
                let [group, version, kind, plural, scope, first, last] = f[..] else {
                    return None;
                };
                Some(BuiltinKind {
                    group: group.into(),
                    version: version.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    scope: if scope == "Cluster" {
                        Scope::Cluster
                    } else {
                        Scope::Namespaced
                    },
                    minors: (first.parse().ok()?, last.parse().ok()?),
                })
            })
            .collect()
    })
}

/// The built-in kind with this group and kind (any version), if any.
pub fn builtin_kind(group: &str, kind: &str) -> Option<&'static BuiltinKind> {
    // Asked for every object several times: indexed by kind, then the
    // first of the table's order with the group (as a scan would find).
    static BY_KIND: OnceLock<std::collections::HashMap<&'static str, Vec<usize>>> = OnceLock::new();
    let by_kind = BY_KIND.get_or_init(|| {
        let mut map: std::collections::HashMap<&'static str, Vec<usize>> = Default::default();
        for (i, b) in builtin().iter().enumerate() {
            map.entry(b.kind.as_str()).or_default().push(i);
        }
        map
    });
    by_kind
        .get(kind)?
        .iter()
        .map(|&i| &builtin()[i])
        .find(|b| b.group == group)
}
