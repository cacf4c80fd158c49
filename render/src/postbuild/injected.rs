//! Variables a Kustomization gets at admission, not from its own file.
//!
//! A mutating webhook can add variables to every Flux Kustomization the API
//! server admits, so a `${VAR}` the repository defines nowhere next to the
//! Kustomization is defined all the same. Two ways to know it:
//!
//! * `substitution.injected` in conformance.yaml: which ConfigMaps and
//!   Secrets (`Kind/namespace/name`) reach which Kustomizations (globs over
//!   `name` or `namespace/name`; every Kustomization when absent). Their
//!   keys count as `substituteFrom` entries appended to the Kustomization's
//!   own (a Kyverno or admission policy that adds `substituteFrom`).
//! * A webhook chart the bootstrap or a Flux HelmRelease of the cluster
//!   installs, from its values (one admitted before the webhook runs is
//!   mutated on its next apply: Flux re-applies its children). The one
//!   recognised is xunholy's `kustomize-mutating-webhook`
//!   (`handleMutate` in its `main.go`): on CREATE and UPDATE of a
//!   `kustomize.toolkit.fluxcd.io` Kustomization it adds `spec.postBuild`
//!   when absent and every key of its ConfigMaps and Secrets
//!   (`configMaps[].name`, `secrets[].name`, or the single `configMap.name`,
//!   `cluster-config` by default, in the release namespace) to
//!   `spec.postBuild.substitute`, replacing a key the Kustomization sets
//!   (JSON-patch `add`). Its `webhook.namespaceSelector` on
//!   `kubernetes.io/metadata.name` decides which namespaces it reaches.
//!
//! A source the repository does not render leaves the variable set unknown:
//! then nothing is claimed about undefined variables, as for a
//! `substituteFrom` source created outside Flux.

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::model::Span;
use crate::yaml::Node;

/// `substitution.injected[]` in conformance.yaml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InjectedConfig {
    /// The ConfigMaps and Secrets whose keys are added, as
    /// `Kind/namespace/name`.
    pub from: Vec<Spanned<String>>,
    /// Which Kustomizations they reach: globs over `name` (no `/`) or
    /// `namespace/name`. Absent or empty: every Kustomization.
    #[serde(default)]
    pub kustomizations: Vec<Spanned<String>>,
}

/// A ConfigMap or Secret whose keys become variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRef {
    /// `ConfigMap` or `Secret`.
    pub kind: String,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl std::fmt::Display for SourceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
    }
}

/// Which Kustomizations an injection reaches.
#[derive(Debug, Clone)]
pub enum Reach {
    /// Those matching one of the globs (over `name`, or `namespace/name`
    /// for a pattern with a `/`); every one when empty.
    Kustomizations(Vec<(String, globset::GlobMatcher)>),
    /// Those in a namespace the webhook's namespaceSelector selects.
    Namespaces {
        /// `In`: only these (absent: any).
        only: Option<Vec<String>>,
        /// `NotIn`: never these.
        except: Vec<String>,
    },
}

/// Variables added at admission to the Kustomizations an injection reaches.
#[derive(Debug, Clone)]
pub struct Injection {
    /// Where the repository says so.
    pub at: Span,
    /// What injects them, in words.
    pub via: String,
    /// The ConfigMaps and Secrets whose keys are added.
    pub sources: Vec<SourceRef>,
    /// Which Kustomizations it reaches.
    pub reach: Reach,
    /// Whether the keys are added to `postBuild.substitute` (winning over
    /// everything the Kustomization writes) rather than appended to its
    /// `substituteFrom`.
    pub wins: bool,
}

impl Injection {
    /// Whether it reaches the Kustomization `namespace/name`.
    pub fn reaches(&self, namespace: &str, name: &str) -> bool {
        match &self.reach {
            Reach::Kustomizations(globs) => {
                globs.is_empty()
                    || globs.iter().any(|(pattern, glob)| {
                        if pattern.contains('/') {
                            glob.is_match(format!("{namespace}/{name}"))
                        } else {
                            glob.is_match(name)
                        }
                    })
            }
            Reach::Namespaces { only, except } => {
                !except.iter().any(|n| n == namespace)
                    && only
                        .as_ref()
                        .is_none_or(|o| o.iter().any(|n| n == namespace))
            }
        }
    }

    /// In words, for messages: "ConfigMap/flux-system/cluster-config, which
    /// … adds".
    pub fn describe(&self) -> String {
        let sources: Vec<String> = self.sources.iter().map(ToString::to_string).collect();
        format!("{} (added by {})", sources.join(", "), self.via)
    }
}

use crate::config_error::glob;

/// A `substitution.injected` source that is not `Kind/namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "substitution.injected source `{0}` is not `ConfigMap/namespace/name` or `Secret/namespace/name`"
)]
pub(crate) struct BadSource(String);

/// Parses `Kind/namespace/name`.
fn source_ref(text: &str) -> Result<SourceRef, BadSource> {
    let parts: Vec<&str> = text.split('/').collect();
    match parts.as_slice() {
        [kind @ ("ConfigMap" | "Secret"), namespace, name]
            if !namespace.is_empty() && !name.is_empty() =>
        {
            Ok(SourceRef {
                kind: kind.to_string(),
                namespace: namespace.to_string(),
                name: name.to_string(),
            })
        }
        _ => Err(BadSource(text.to_string())),
    }
}

/// Checks `substitution.injected`: sources and globs that parse, at least
/// one source per entry.
pub fn validate(
    entries: &[Spanned<InjectedConfig>],
    problems: &mut Vec<crate::config_error::ConfigError>,
) {
    for entry in entries {
        if entry.value.from.is_empty() {
            problems.push(crate::config_error::error_at(
                entry,
                "substitution.injected entry names no source (`from:`)".into(),
            ));
        }
        for from in &entry.value.from {
            if let Err(err) = source_ref(&from.value) {
                problems.push(crate::config_error::error_at(from, err.to_string()));
            }
        }
        for pattern in &entry.value.kustomizations {
            if let Err(err) = glob(&pattern.value) {
                problems.push(crate::config_error::error_at(pattern, err.to_string()));
            }
        }
    }
}

/// The injections conformance.yaml declares (validated already: entries
/// that do not parse are skipped).
pub fn declared(entries: &[Spanned<InjectedConfig>]) -> Vec<Injection> {
    entries
        .iter()
        .map(|entry| Injection {
            at: Span::new(
                crate::config_error::FILE_NAME,
                entry.referenced.line() as u32,
            ),
            via: "substitution.injected in conformance.yaml".into(),
            sources: entry
                .value
                .from
                .iter()
                .filter_map(|f| source_ref(&f.value).ok())
                .collect(),
            reach: Reach::Kustomizations(
                entry
                    .value
                    .kustomizations
                    .iter()
                    .filter_map(|p| {
                        let glob = glob(&p.value).ok()?;
                        Some((p.value.clone(), glob))
                    })
                    .collect(),
            ),
            wins: false,
        })
        .collect()
}

/// The chart that injects variables, by short name.
pub const WEBHOOK_CHART: &str = "kustomize-mutating-webhook";

/// What a `kustomize-mutating-webhook` release injects, from its values
/// (later mappings winning) in the release namespace. `None` for any other
/// chart.
pub fn from_chart(
    chart: &str,
    namespace: &str,
    values: &[Node],
    at: Span,
    release: &str,
) -> Option<Injection> {
    if chart != WEBHOOK_CHART {
        return None;
    }
    let names = |key: &str| -> Option<Vec<String>> {
        values.iter().rev().find_map(|v| {
            let list = v.get(key)?.as_seq();
            Some(
                list.iter()
                    .filter_map(|item| item.str_at(&["name"]))
                    .filter(|n| !n.is_empty())
                    .collect(),
            )
        })
    };
    let single = values
        .iter()
        .rev()
        .find_map(|v| v.str_at(&["configMap", "name"]));
    let mut sources = Vec::new();
    let config_maps = names("configMaps");
    let secrets = names("secrets");
    if config_maps.is_none() && secrets.is_none() {
        sources.push(single.unwrap_or_else(|| "cluster-config".into()));
    }
    let mut refs: Vec<SourceRef> = sources
        .into_iter()
        .chain(config_maps.unwrap_or_default())
        .map(|name| SourceRef {
            kind: "ConfigMap".into(),
            namespace: namespace.to_string(),
            name,
        })
        .collect();
    refs.extend(
        secrets
            .unwrap_or_default()
            .into_iter()
            .map(|name| SourceRef {
                kind: "Secret".into(),
                namespace: namespace.to_string(),
                name,
            }),
    );
    let selector = values
        .iter()
        .rev()
        .find_map(|v| v.path(&["webhook", "namespaceSelector"]));
    Some(Injection {
        at,
        via: format!("the {WEBHOOK_CHART} webhook, release {namespace}/{release}"),
        sources: refs,
        reach: selector.map_or(
            Reach::Namespaces {
                only: None,
                except: Vec::new(),
            },
            namespace_reach,
        ),
        wins: true,
    })
}

/// A namespaceSelector's `matchExpressions` on `kubernetes.io/metadata.name`
/// (the only label every namespace has); other terms cannot be read from
/// the repository and are taken as selecting everything.
fn namespace_reach(selector: &Node) -> Reach {
    let mut only: Option<Vec<String>> = None;
    let mut except = Vec::new();
    for expr in selector
        .get("matchExpressions")
        .map(Node::as_seq)
        .unwrap_or_default()
    {
        if expr.str_at(&["key"]).as_deref() != Some("kubernetes.io/metadata.name") {
            continue;
        }
        let values: Vec<String> = expr
            .get("values")
            .map(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(Node::as_scalar_string)
            .collect();
        match expr.str_at(&["operator"]).as_deref() {
            Some("In") => only.get_or_insert_with(Vec::new).extend(values),
            Some("NotIn") => except.extend(values),
            _ => {}
        }
    }
    Reach::Namespaces { only, except }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        crate::yaml::parse_text(text).expect("yaml").remove(0)
    }

    #[test]
    fn the_webhook_chart_injects_its_config_maps_and_secrets() {
        let values = node(
            "configMaps:\n  - create: false\n    name: cluster-config\nsecrets:\n  - name: cluster-secrets\nwebhook:\n  namespaceSelector:\n    matchExpressions:\n      - key: kubernetes.io/metadata.name\n        operator: NotIn\n        values: [kube-system]\n",
        );
        let i = from_chart(
            WEBHOOK_CHART,
            "flux-system",
            &[values],
            Span::new("h.yaml", 3),
            "w",
        )
        .expect("recognised");
        let sources: Vec<String> = i.sources.iter().map(ToString::to_string).collect();
        assert_eq!(
            sources,
            [
                "ConfigMap/flux-system/cluster-config",
                "Secret/flux-system/cluster-secrets"
            ]
        );
        assert!(i.reaches("flux-system", "apps"));
        assert!(!i.reaches("kube-system", "apps"));
        assert!(i.wins);
        // Defaults: the single ConfigMap `cluster-config`, every namespace.
        let d = from_chart(WEBHOOK_CHART, "infra", &[], Span::new("h.yaml", 3), "w").unwrap();
        assert_eq!(d.sources[0].to_string(), "ConfigMap/infra/cluster-config");
        assert!(d.reaches("anything", "x"));
        assert!(from_chart("cert-manager", "infra", &[], Span::new("h", 1), "w").is_none());
    }

    #[test]
    fn declared_injections_reach_by_name_or_namespace_and_name() {
        let glob = |p: &str| (p.to_string(), glob(p).unwrap());
        let i = Injection {
            at: Span::new("conformance.yaml", 2),
            via: "x".into(),
            sources: vec![source_ref("Secret/flux-system/s").unwrap()],
            reach: Reach::Kustomizations(vec![glob("apps-*"), glob("tenants/*")]),
            wins: false,
        };
        assert!(i.reaches("flux-system", "apps-web"));
        assert!(i.reaches("tenants", "team-a"));
        assert!(!i.reaches("flux-system", "infra"));
        assert!(source_ref("ConfigMap/only-two").is_err());
        assert!(source_ref("Deployment/a/b").is_err());
    }
}
