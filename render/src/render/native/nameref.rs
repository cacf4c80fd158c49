//! Name references: after renames (prefix, suffix, hash, namespace),
//! references to the renamed objects are updated, as kustomize's
//! FixBackReferences does with its default name-reference table.

use super::fields::visit;
use super::{Res, is_cluster_scoped};
use crate::render::Error;
use crate::yaml::{Node, Value};

/// Where a Pod spec sits in each workload kind.
const POD_SPECS: &[(&str, &str)] = &[
    ("Pod", "spec"),
    ("PodTemplate", "template/spec"),
    ("Deployment", "spec/template/spec"),
    ("ReplicaSet", "spec/template/spec"),
    ("DaemonSet", "spec/template/spec"),
    ("StatefulSet", "spec/template/spec"),
    ("Job", "spec/template/spec"),
    ("CronJob", "spec/jobTemplate/spec/template/spec"),
];

/// (referenced kind, field inside a pod spec).
const POD_REFS: &[(&str, &str)] = &[
    ("ConfigMap", "volumes/configMap/name"),
    ("ConfigMap", "volumes/projected/sources/configMap/name"),
    ("ConfigMap", "containers/env/valueFrom/configMapKeyRef/name"),
    (
        "ConfigMap",
        "initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    ("ConfigMap", "containers/envFrom/configMapRef/name"),
    ("ConfigMap", "initContainers/envFrom/configMapRef/name"),
    ("Secret", "volumes/secret/secretName"),
    ("Secret", "volumes/projected/sources/secret/name"),
    ("Secret", "containers/env/valueFrom/secretKeyRef/name"),
    ("Secret", "initContainers/env/valueFrom/secretKeyRef/name"),
    ("Secret", "containers/envFrom/secretRef/name"),
    ("Secret", "initContainers/envFrom/secretRef/name"),
    ("Secret", "imagePullSecrets/name"),
    ("ServiceAccount", "serviceAccountName"),
    (
        "PersistentVolumeClaim",
        "volumes/persistentVolumeClaim/claimName",
    ),
    ("PriorityClass", "priorityClassName"),
];

/// (referenced kind, referrer kind, path, whether the field is a map with
/// name/namespace).
const OTHER_REFS: &[(&str, &str, &str, bool)] = &[
    ("Secret", "Ingress", "spec/tls/secretName", false),
    ("Secret", "ServiceAccount", "imagePullSecrets/name", false),
    ("Service", "StatefulSet", "spec/serviceName", false),
    (
        "Service",
        "Ingress",
        "spec/rules/http/paths/backend/service/name",
        false,
    ),
    (
        "Service",
        "Ingress",
        "spec/defaultBackend/service/name",
        false,
    ),
    ("Service", "APIService", "spec/service/name", false),
    (
        "Service",
        "MutatingWebhookConfiguration",
        "webhooks/clientConfig/service",
        true,
    ),
    (
        "Service",
        "ValidatingWebhookConfiguration",
        "webhooks/clientConfig/service",
        true,
    ),
    ("ServiceAccount", "RoleBinding", "subjects", true),
    ("ServiceAccount", "ClusterRoleBinding", "subjects", true),
    ("Role", "RoleBinding", "roleRef/name", false),
    ("ClusterRole", "RoleBinding", "roleRef/name", false),
    ("ClusterRole", "ClusterRoleBinding", "roleRef/name", false),
    (
        "StorageClass",
        "PersistentVolumeClaim",
        "spec/storageClassName",
        false,
    ),
    (
        "StorageClass",
        "PersistentVolume",
        "spec/storageClassName",
        false,
    ),
    (
        "StorageClass",
        "StatefulSet",
        "spec/volumeClaimTemplates/spec/storageClassName",
        false,
    ),
    (
        "PersistentVolume",
        "PersistentVolumeClaim",
        "spec/volumeName",
        false,
    ),
    (
        "Deployment",
        "HorizontalPodAutoscaler",
        "spec/scaleTargetRef/name",
        false,
    ),
    (
        "StatefulSet",
        "HorizontalPodAutoscaler",
        "spec/scaleTargetRef/name",
        false,
    ),
    (
        "ReplicaSet",
        "HorizontalPodAutoscaler",
        "spec/scaleTargetRef/name",
        false,
    ),
];

/// A renamed object: what it was called, and what it is called now.
struct Renamed {
    kind: String,
    namespace: String,
    cluster_scoped: bool,
    old_names: Vec<String>,
    /// The namespaces it had (`""` read as `default`).
    old_namespaces: Vec<String>,
    name: String,
    /// The name prefixes and suffixes applied to it, for the tie break.
    affixes: (Vec<String>, Vec<String>),
}

/// A namespace as an object id reads it: none is `default`.
fn ns_or_default(ns: &str) -> &str {
    if ns.is_empty() { "default" } else { ns }
}

pub(crate) fn fix_back_references(
    acc: &mut [Res],
    extra: &[super::load::NameRef],
) -> Result<(), Error> {
    let renamed = renamed(acc);
    if renamed.is_empty() {
        return Ok(());
    }
    for r in acc.iter_mut() {
        let referrer_kind = r.original().kind;
        let referrer = Referrer {
            ns: r.namespace(),
            cluster_scoped: is_cluster_scoped(&r.api_version(), &r.kind()),
            affixes: (r.prefixes.clone(), r.suffixes.clone()),
        };
        let role_ref_kind = r.node.str_at(&["roleRef", "kind"]);
        let hpa_kind = r.node.str_at(&["spec", "scaleTargetRef", "kind"]);
        let mut error = None;
        for (target, path, is_map, _) in edits(&referrer_kind, extra) {
            if path == "roleRef/name" && role_ref_kind.as_deref() != Some(target.as_str()) {
                continue;
            }
            if path == "spec/scaleTargetRef/name" && hpa_kind.as_deref() != Some(target.as_str()) {
                continue;
            }
            let lookup = Lookup {
                renamed: &renamed,
                referrer: &referrer,
                target: &target,
                is_map,
            };
            visit(&mut r.node, &path, false, &mut |field: &mut Node| {
                lookup.fix(field, &mut error);
            });
        }
        if let Some(e) = error {
            return Err(e);
        }
    }
    Ok(())
}

/// Every object some transformer renamed.
fn renamed(acc: &[Res]) -> Vec<Renamed> {
    acc.iter()
        .filter(|r| !r.previous.is_empty())
        .map(|r| Renamed {
            kind: r.kind(),
            namespace: r.namespace(),
            cluster_scoped: is_cluster_scoped(&r.api_version(), &r.kind()),
            old_names: r.previous.iter().map(|p| p.name.clone()).collect(),
            old_namespaces: r
                .previous
                .iter()
                .map(|p| ns_or_default(&p.namespace).to_string())
                .collect(),
            name: r.name(),
            affixes: (r.prefixes.clone(), r.suffixes.clone()),
        })
        .collect()
}

/// One reference field of a referrer kind: the kind it names, its path,
/// whether it is a `{name, namespace}` map, and where the entry comes from
/// (the workload kind of a pod spec, the referrer kind, `configurations`).
type Edit = (String, String, bool, &'static str);

/// The reference fields of a referrer kind: those of its pod spec, the
/// default table's others, and the kustomization's `configurations`.
fn edits(referrer_kind: &str, extra: &[super::load::NameRef]) -> Vec<Edit> {
    let mut edits: Vec<Edit> = Vec::new();
    for (spec_kind, prefix) in POD_SPECS.iter().filter(|(k, _)| *k == referrer_kind) {
        for (target, field) in POD_REFS {
            edits.push((
                target.to_string(),
                format!("{prefix}/{field}"),
                false,
                spec_kind,
            ));
        }
    }
    for (target, referrer, path, is_map) in
        OTHER_REFS.iter().filter(|(_, k, _, _)| *k == referrer_kind)
    {
        edits.push((target.to_string(), path.to_string(), *is_map, referrer));
    }
    for extra_ref in extra
        .iter()
        .filter(|e| e.referrer.as_deref().is_none_or(|k| k == referrer_kind))
    {
        edits.push((
            extra_ref.target.clone(),
            extra_ref.path.clone(),
            false,
            "configurations",
        ));
    }
    edits
}

/// The object whose references are fixed: its namespace, whether it is
/// cluster-scoped, and the name prefixes and suffixes applied to it.
struct Referrer {
    ns: String,
    cluster_scoped: bool,
    affixes: (Vec<String>, Vec<String>),
}

/// One reference field of a referrer, looked up among the renamed objects.
struct Lookup<'a> {
    renamed: &'a [Renamed],
    referrer: &'a Referrer,
    /// The kind the field names.
    target: &'a str,
    /// Whether the field is a `{name, namespace}` map.
    is_map: bool,
}

impl<'a> Lookup<'a> {
    /// Renames what the field names, when its object was renamed; an
    /// ambiguous reference is recorded in `error`.
    fn fix(&self, field: &mut Node, error: &mut Option<Error>) {
        let referrer_ns = &self.referrer.ns;
        if self.is_map {
            let old = field.str_at(&["name"]).unwrap_or_default();
            let own = field.str_at(&["namespace"]);
            let ns = own.clone().unwrap_or_else(|| referrer_ns.clone());
            let subject_ns =
                (self.target == "ServiceAccount").then(|| own.clone().unwrap_or_default());
            match self.find(&old, &ns, subject_ns.as_deref()) {
                Ok(Some(c)) => {
                    field.set("name", Node::new(Value::String(c.name.clone())));
                    if !c.namespace.is_empty() {
                        field.set("namespace", Node::new(Value::String(c.namespace.clone())));
                    }
                }
                Ok(None) => {}
                Err(e) => *error = Some(e),
            }
            return;
        }
        match &mut field.value {
            Value::String(old) => match self.find(old, referrer_ns, None) {
                Ok(Some(c)) => *old = c.name.clone(),
                Ok(None) => {}
                Err(e) => *error = Some(e),
            },
            Value::Seq(items) => {
                for item in items {
                    if let Value::String(old) = &mut item.value {
                        match self.find(old, referrer_ns, None) {
                            Ok(Some(c)) => *old = c.name.clone(),
                            Ok(None) => {}
                            Err(e) => *error = Some(e),
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// The renamed object a reference to `old` (in `ns_hint`) means, if
    /// any. `subject_ns`: a binding subject's own namespace (`Some("")`
    /// when it has none), which must be one the account had: a
    /// subject naming another namespace is another account.
    fn find(
        &self,
        old: &str,
        ns_hint: &str,
        subject_ns: Option<&str>,
    ) -> Result<Option<&'a Renamed>, Error> {
        let (referrer, target, is_map) = (self.referrer, self.target, self.is_map);
        let hits: Vec<&Renamed> = self
            .renamed
            .iter()
            .filter(|c| c.kind == target && c.old_names.iter().any(|n| n == old))
            .filter(|c| match subject_ns {
                None => true,
                // A binding's subject: the account must now be in
                // the binding's namespace (any, for a cluster
                // binding), as kubectl kustomize shows.
                Some(own) => {
                    (referrer.cluster_scoped
                        || ns_or_default(&c.namespace) == ns_or_default(&referrer.ns))
                        && (own.is_empty()
                            || c.old_namespaces.iter().any(|o| o == ns_or_default(own)))
                }
            })
            .filter(|c| {
                c.cluster_scoped
                    || c.kind == "ServiceAccount"
                    || c.namespace == ns_hint
                    || (c.namespace.is_empty() && ns_hint == "default")
                    || (ns_hint.is_empty() && c.namespace == "default")
                    // A `{name, namespace}` reference (a webhook's
                    // service) names the namespace the object had
                    // before the namespace transformer moved it;
                    // it follows the object, name and namespace.
                    || (is_map && c.old_namespaces.iter().any(|o| o == ns_or_default(ns_hint)))
            })
            .collect();
        self.pick(&hits, old)
    }

    /// One of the candidates: the only one, or kustomize's tie break
    /// (nameref `selectReferral`): of several candidates, the one renamed
    /// by the same prefixes and suffixes as the referrer (one base pulled
    /// in by two overlays, each with its own namePrefix).
    fn pick(&self, hits: &[&'a Renamed], old: &str) -> Result<Option<&'a Renamed>, Error> {
        let mut names: Vec<&str> = hits.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        if names.len() > 1 {
            let same: Vec<&Renamed> = hits
                .iter()
                .copied()
                .filter(|c| c.affixes == self.referrer.affixes)
                .collect();
            let mut same_names: Vec<&str> = same.iter().map(|c| c.name.as_str()).collect();
            same_names.sort_unstable();
            same_names.dedup();
            if same_names.len() == 1 {
                return Ok(same.first().copied());
            }
        }
        match names.len() {
            0 => Ok(None),
            1 => Ok(hits.first().copied()),
            _ => Err(format!(
                "found multiple possible referrals for {}/{old}: {}",
                self.target,
                names.join(", ")
            )
            .into()),
        }
    }
}
