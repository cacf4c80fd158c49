//! Objects made at run time and what their controller needs first: an
//! ExternalSecret's Secret exists only once external-secrets reads it
//! through its store (`SecretStore`/`ClusterSecretStore`, `spec.
//! secretStoreRef`), which authenticates with the Secrets its provider
//! names (`…SecretRef`); a Certificate's Secret only once cert-manager's
//! issuer exists. [`super::references::produced`] says what is made; this
//! says what the making waits for, so that a Secret whose store or
//! credentials come only from a tier that needs the Secret is a deadlock,
//! and one whose store is not ordered before its reader a race.

use crate::model::Object;
use crate::yaml::Node;

/// A prerequisite: (group, kind, namespace, name).
pub(crate) type Prerequisite = (String, String, Option<String>, String);

/// What `o`'s controller needs before it makes what `o` produces: the
/// store of an ExternalSecret (or ClusterExternalSecret), the issuer of a
/// Certificate; and what a store or an issuer needs in turn (the Secrets a
/// store's provider authenticates with, a CA issuer's Secret).
pub(crate) fn prerequisites(o: &Object) -> Vec<Prerequisite> {
    let ns = o.id.namespace.clone();
    let body = &o.body;
    match (o.id.group.as_str(), o.id.kind.as_str()) {
        ("external-secrets.io", "ExternalSecret") => {
            store(body.path(&["spec", "secretStoreRef"]), &ns)
                .into_iter()
                .collect()
        }
        ("external-secrets.io", "ClusterExternalSecret") => store(
            body.path(&["spec", "externalSecretSpec", "secretStoreRef"]),
            &None,
        )
        // A namespaced store of a ClusterExternalSecret is in each
        // selected namespace: not one object to wait for.
        .filter(|p| p.2.is_some() || p.1 == "ClusterSecretStore")
        .into_iter()
        .collect(),
        ("cert-manager.io", "Certificate") => {
            let Some(r) = body.path(&["spec", "issuerRef"]) else {
                return Vec::new();
            };
            let Some(name) = r.str_at(&["name"]) else {
                return Vec::new();
            };
            let group = r
                .str_at(&["group"])
                .unwrap_or_else(|| "cert-manager.io".into());
            if group != "cert-manager.io" {
                return Vec::new();
            }
            match r.str_at(&["kind"]).as_deref().unwrap_or("Issuer") {
                "ClusterIssuer" => vec![(group, "ClusterIssuer".into(), None, name)],
                _ => vec![(group, "Issuer".into(), ns, name)],
            }
        }
        ("external-secrets.io", "SecretStore" | "ClusterSecretStore") => {
            let mut out = Vec::new();
            if let Some(provider) = body.path(&["spec", "provider"]) {
                secret_refs(provider, &ns, &mut out);
            }
            out
        }
        ("cert-manager.io", "Issuer") => body
            .str_at(&["spec", "ca", "secretName"])
            .map(|s| vec![(String::new(), "Secret".into(), ns, s)])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// An ExternalSecret's store: a SecretStore in its namespace (the
/// default kind) or a ClusterSecretStore.
fn store(r: Option<&Node>, ns: &Option<String>) -> Option<Prerequisite> {
    let r = r?;
    let name = r.str_at(&["name"])?;
    let kind = r.str_at(&["kind"]).unwrap_or_else(|| "SecretStore".into());
    match kind.as_str() {
        "ClusterSecretStore" => Some(("external-secrets.io".into(), kind, None, name)),
        "SecretStore" => Some(("external-secrets.io".into(), kind, ns.clone()?.into(), name)),
        _ => None,
    }
}

/// Every `…SecretRef` (and `secretRef`) with a name under a store's
/// provider: the Secrets it authenticates with, in their namespace (the
/// store's when none is written; a cluster store's without one is
/// skipped).
fn secret_refs(node: &Node, ns: &Option<String>, out: &mut Vec<Prerequisite>) {
    for (key, value) in node.as_map() {
        let is_ref = key.ends_with("SecretRef") || key == "secretRef";
        if is_ref && let Some(name) = value.str_at(&["name"]) {
            let namespace = value.str_at(&["namespace"]).or_else(|| ns.clone());
            if namespace.is_some() {
                out.push((String::new(), "Secret".into(), namespace, name));
            }
            continue;
        }
        if value.is_map() {
            secret_refs(value, ns, out);
        }
    }
}
