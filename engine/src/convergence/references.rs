//! References from one object to another that matter the moment the
//! object is acted on (not checked by the API server at apply time): a
//! claim's storage class, a Certificate's issuer, a HelmRelease's chart
//! source; and what a Flux Kustomization reads before it builds (its
//! source, its `substituteFrom`, its decryption key). [`produced`] names
//! the objects controllers create from others (the Secret of an
//! ExternalSecret, a Certificate, a SealedSecret), which references may
//! resolve to.

use crate::model::{Object, Tier};
use crate::yaml::Node;

/// A reference from one object (or a Kustomization itself) to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// Kind of the target (`StorageClass`, `Secret`, `GitRepository`).
    pub kind: &'static str,
    /// API group of the target (empty for the core group).
    pub group: &'static str,
    /// Namespace of the target; `None` for a cluster-scoped one.
    pub namespace: Option<String>,
    /// Name of the target.
    pub name: String,
    /// What the reference is for, in words ("storageClassName").
    pub via: &'static str,
    /// Line of the referring field in the object (or the Kustomization).
    pub line: u32,
    /// Why losing the race to the target harms the object for good, when
    /// it does.
    pub permanent: Option<&'static str>,
    /// A target nobody provides fails the referrer (a non-optional
    /// `substituteFrom`: "not found"), rather than being left alone.
    pub required: bool,
    /// The referrer's controller waits for the target without failing
    /// (helm-controller's dependsOn): a target in an unordered tier only
    /// delays it, and is no race.
    pub waits: bool,
    /// A required target the repository defines nowhere certainly fails
    /// the referrer (what a Kustomization itself reads). `false` where the
    /// platform often creates the target outside the repository (values
    /// Secrets from Terraform or an operator it does not model): then the
    /// finding is a warning that says how to declare it.
    pub certain: bool,
}

impl Reference {
    /// `Kind/namespace/name`.
    pub fn target(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{ns}/{}", self.kind, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }
}

/// CDI stamps a DataVolume's claim when it creates it.
const STAMPED: &str = "CDI creates the DataVolume's claim once, with the access and volume modes of the StorageProfile of its class as they are at that moment (spec.storage leaves them to the profile), and never changes them";

fn text(node: Option<&Node>) -> Option<(String, u32)> {
    let node = node?;
    Some((node.as_scalar_string()?, node.line))
}

/// References an object makes.
pub fn references(o: &Object) -> Vec<Reference> {
    let body = &o.body;
    let ns = &o.id.namespace;
    let mut out = Vec::new();
    match (o.id.group.as_str(), o.id.kind.as_str()) {
        // A claim bound statically (spec.volumeName) needs no StorageClass
        // object: the class name only has to match the volume's.
        ("", "PersistentVolumeClaim") if body.path(&["spec", "volumeName"]).is_none() => {
            storage_class(
                body.path(&["spec", "storageClassName"]),
                false,
                false,
                &mut out,
            )
        }
        ("cdi.kubevirt.io", "DataVolume") => data_volume_classes(body, &mut out),
        ("apps", "StatefulSet") => {
            for t in body
                .path(&["spec", "volumeClaimTemplates"])
                .map(Node::as_seq)
                .unwrap_or_default()
            {
                storage_class(
                    t.path(&["spec", "storageClassName"]),
                    false,
                    false,
                    &mut out,
                );
            }
        }
        ("kubevirt.io", "VirtualMachine") => {
            for t in body
                .path(&["spec", "dataVolumeTemplates"])
                .map(Node::as_seq)
                .unwrap_or_default()
            {
                data_volume_classes(t, &mut out);
            }
        }
        ("cert-manager.io", "Certificate") => certificate_issuer(body, ns, &mut out),
        ("networking.k8s.io", "Ingress") => ingress_issuers(body, ns, &mut out),
        // A source's credentials: source-controller cannot fetch without
        // them.
        (
            "source.toolkit.fluxcd.io",
            "GitRepository" | "OCIRepository" | "HelmRepository" | "Bucket",
        ) => {
            if let Some((name, line)) = text(body.path(&["spec", "secretRef", "name"])) {
                out.push(Reference {
                    kind: "Secret",
                    group: "",
                    namespace: ns.clone(),
                    name,
                    via: "spec.secretRef",
                    line,
                    permanent: None,
                    required: false,
                    waits: false,
                    certain: true,
                });
            }
        }
        ("helm.toolkit.fluxcd.io", "HelmRelease") => {
            chart_sources(body, ns, &mut out);
            values_from(body, ns, &mut out);
            depends_on(body, ns, &mut out);
        }
        _ => {}
    }
    // One reference per target and field: several valuesFrom entries (each
    // a key or a targetPath) of one Secret are one need, at the first.
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|r| seen.insert((r.target(), r.via)));
    out
}

/// The storage class `node` names. `profile`: a CDI DataVolume (or
/// template), whose class also names the StorageProfile CDI applies;
/// `stamped`: through `spec.storage`, which leaves the access and volume
/// modes to that profile.
fn storage_class(node: Option<&Node>, profile: bool, stamped: bool, out: &mut Vec<Reference>) {
    if let Some((name, line)) = text(node) {
        let permanent = stamped.then_some(STAMPED);
        out.push(Reference {
            kind: "StorageClass",
            group: "storage.k8s.io",
            namespace: None,
            name: name.clone(),
            via: "storageClassName",
            line,
            permanent,
            required: false,
            waits: false,
            certain: true,
        });
        if profile {
            out.push(Reference {
                kind: "StorageProfile",
                group: "cdi.kubevirt.io",
                namespace: None,
                name,
                via: "the StorageProfile CDI applies to its storage class",
                line,
                permanent,
                required: false,
                waits: false,
                certain: true,
            });
        }
    }
}

/// The storage classes of a DataVolume (or a VirtualMachine's
/// `dataVolumeTemplates` entry): through `spec.storage`, then `spec.pvc`.
fn data_volume_classes(volume: &Node, out: &mut Vec<Reference>) {
    storage_class(
        volume.path(&["spec", "storage", "storageClassName"]),
        true,
        true,
        out,
    );
    storage_class(
        volume.path(&["spec", "pvc", "storageClassName"]),
        true,
        false,
        out,
    );
}

/// A Certificate's cert-manager issuer (`spec.issuerRef`).
fn certificate_issuer(body: &Node, ns: &Option<String>, out: &mut Vec<Reference>) {
    if let Some((name, line)) = text(body.path(&["spec", "issuerRef", "name"])) {
        let group = body
            .str_at(&["spec", "issuerRef", "group"])
            .unwrap_or_else(|| "cert-manager.io".into());
        if group == "cert-manager.io" {
            let cluster =
                body.str_at(&["spec", "issuerRef", "kind"]).as_deref() == Some("ClusterIssuer");
            out.push(Reference {
                kind: if cluster { "ClusterIssuer" } else { "Issuer" },
                group: "cert-manager.io",
                namespace: if cluster { None } else { ns.clone() },
                name,
                via: "issuerRef",
                line,
                permanent: None,
                required: false,
                waits: false,
                certain: true,
            });
        }
    }
}

/// The issuers an Ingress's cert-manager annotations name.
fn ingress_issuers(body: &Node, ns: &Option<String>, out: &mut Vec<Reference>) {
    let annotations = body.path(&["metadata", "annotations"]);
    if let Some((name, line)) =
        text(annotations.and_then(|a| a.get("cert-manager.io/cluster-issuer")))
    {
        out.push(Reference {
            kind: "ClusterIssuer",
            group: "cert-manager.io",
            namespace: None,
            name,
            via: "cert-manager.io/cluster-issuer",
            line,
            permanent: None,
            required: false,
            waits: false,
            certain: true,
        });
    }
    if let Some((name, line)) = text(annotations.and_then(|a| a.get("cert-manager.io/issuer"))) {
        out.push(Reference {
            kind: "Issuer",
            group: "cert-manager.io",
            namespace: ns.clone(),
            name,
            via: "cert-manager.io/issuer",
            line,
            permanent: None,
            required: false,
            waits: false,
            certain: true,
        });
    }
}

/// A HelmRelease's chart source (`chart.spec.sourceRef`, `chartRef`).
fn chart_sources(body: &Node, ns: &Option<String>, out: &mut Vec<Reference>) {
    for (path, via) in [
        (
            &["spec", "chart", "spec", "sourceRef"][..],
            "chart.spec.sourceRef",
        ),
        (&["spec", "chartRef"][..], "chartRef"),
    ] {
        let Some(r) = body.path(path) else { continue };
        // A kind the field does not take is helmrelease-invalid's.
        let takes: &[&str] = if via == "chartRef" {
            &["OCIRepository", "HelmChart"]
        } else {
            &["HelmRepository", "GitRepository", "Bucket"]
        };
        if let (Some(kind), Some((name, line))) = (r.str_at(&["kind"]), text(r.get("name")))
            && let Some(kind) = source_kind(&kind).filter(|k| takes.contains(k))
        {
            let namespace = r.str_at(&["namespace"]).or_else(|| ns.clone());
            out.push(Reference {
                kind,
                group: "source.toolkit.fluxcd.io",
                namespace,
                name,
                via,
                line,
                permanent: None,
                // helm-controller cannot build the chart without it
                // (reconcileChartTemplate / getSource: "not found").
                required: true,
                waits: false,
                certain: false,
            });
        }
    }
}

/// valuesFrom: ConfigMaps and Secrets in the release's namespace,
/// read before every install or upgrade (fluxcd/pkg chartutil
/// ChartValuesFromReferences: "not found" unless optional).
fn values_from(body: &Node, ns: &Option<String>, out: &mut Vec<Reference>) {
    for entry in body
        .path(&["spec", "valuesFrom"])
        .map(Node::as_seq)
        .unwrap_or_default()
    {
        if entry.get("optional").and_then(Node::as_bool) == Some(true) {
            continue;
        }
        let kind = match entry.str_at(&["kind"]).as_deref() {
            Some("ConfigMap") => "ConfigMap",
            Some("Secret") => "Secret",
            _ => continue,
        };
        if let Some((name, line)) = text(entry.get("name")) {
            out.push(Reference {
                kind,
                group: "",
                namespace: ns.clone(),
                name,
                via: "spec.valuesFrom",
                line,
                permanent: None,
                required: true,
                waits: false,
                certain: false,
            });
        }
    }
}

/// dependsOn: helm-controller installs the release only once each
/// dependency exists and is Ready (HelmReleaseReconciler
/// checkDependencies; namespace defaults to the release's).
fn depends_on(body: &Node, ns: &Option<String>, out: &mut Vec<Reference>) {
    for entry in body
        .path(&["spec", "dependsOn"])
        .map(Node::as_seq)
        .unwrap_or_default()
    {
        if let Some((name, line)) = text(entry.get("name")) {
            let namespace = entry
                .str_at(&["namespace"])
                .filter(|n| !n.is_empty())
                .or_else(|| ns.clone());
            out.push(Reference {
                kind: "HelmRelease",
                group: "helm.toolkit.fluxcd.io",
                namespace,
                name,
                via: "spec.dependsOn",
                line,
                permanent: None,
                required: true,
                waits: true,
                certain: false,
            });
        }
    }
}

/// References a Flux Kustomization makes before it builds: its source and
/// its substituteFrom ConfigMaps and Secrets (which must come from earlier
/// tiers).
pub(crate) fn tier_references(tier: &Tier) -> Vec<Reference> {
    let mut out = Vec::new();
    if tier.parent.is_none() || tier.with_entry {
        // The entry, and what the bootstrap applied with it: their sources
        // and variables come from the bootstrap.
        return out;
    }
    let ns = Some(tier.id.namespace.clone());
    // The SOPS key: kustomize-controller reads it before it decrypts.
    if let Some((name, line)) = text(tier.spec.path(&["spec", "decryption", "secretRef", "name"])) {
        out.push(Reference {
            kind: "Secret",
            group: "",
            namespace: ns.clone(),
            name,
            via: "spec.decryption.secretRef",
            line,
            permanent: None,
            required: false,
            waits: false,
            certain: true,
        });
    }
    if let (Some(kind), Some((name, line))) = (
        tier.spec.str_at(&["spec", "sourceRef", "kind"]),
        text(tier.spec.path(&["spec", "sourceRef", "name"])),
    ) && let Some(kind) = source_kind(&kind)
    {
        out.push(Reference {
            kind,
            group: "source.toolkit.fluxcd.io",
            namespace: Some(tier.source_ref.namespace.clone()),
            name,
            via: "spec.sourceRef",
            line,
            permanent: None,
            // kustomize-controller gets the source before anything else
            // (`getSource` in `reconcile`): a source nothing creates fails
            // the Kustomization with 'not found' on every retry.
            required: true,
            waits: false,
            certain: true,
        });
    }
    for entry in tier
        .post_build
        .as_ref()
        .and_then(|p| p.get("substituteFrom"))
        .map(Node::as_seq)
        .unwrap_or_default()
    {
        if entry.get("optional").and_then(Node::as_bool) == Some(true) {
            continue;
        }
        let kind = match entry.str_at(&["kind"]).as_deref() {
            Some("ConfigMap") => "ConfigMap",
            Some("Secret") => "Secret",
            _ => continue,
        };
        if let Some((name, line)) = text(entry.get("name")) {
            out.push(Reference {
                kind,
                group: "",
                namespace: ns.clone(),
                name,
                via: "postBuild.substituteFrom",
                line,
                permanent: None,
                required: true,
                waits: false,
                certain: true,
            });
        }
    }
    out
}

fn source_kind(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "GitRepository" => "GitRepository",
        "OCIRepository" => "OCIRepository",
        "HelmRepository" => "HelmRepository",
        "HelmChart" => "HelmChart",
        "Bucket" => "Bucket",
        _ => return None,
    })
}

/// What the Azure App Configuration provider and the Vault Secrets
/// Operator write from a CR ([`produced`]).
fn configuration_providers(o: &Object) -> Vec<(String, String, Option<String>, String)> {
    let ns = o.id.namespace.clone();
    let secret = |name: String| (String::new(), "Secret".to_string(), ns.clone(), name);
    match (o.id.group.as_str(), o.id.kind.as_str()) {
        // The Azure App Configuration provider: the ConfigMap of
        // `spec.target.configMapName`, and the Secret of Key Vault
        // references (`spec.secret.target.secretName`).
        ("azconfig.io", "AzureAppConfigurationProvider") => {
            let mut out: Vec<_> = o
                .body
                .str_at(&["spec", "target", "configMapName"])
                .map(|name| (String::new(), "ConfigMap".to_string(), ns.clone(), name))
                .into_iter()
                .collect();
            out.extend(
                o.body
                    .str_at(&["spec", "secret", "target", "secretName"])
                    .map(secret),
            );
            out
        }
        // The Vault Secrets Operator: the Secret of `spec.destination.name`.
        (
            "secrets.hashicorp.com",
            "VaultStaticSecret" | "VaultDynamicSecret" | "VaultPKISecret" | "HCPVaultSecretsApp",
        ) => o
            .body
            .str_at(&["spec", "destination", "name"])
            .map(secret)
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// The objects a controller creates from `o` once it reconciles it, as
/// (group, kind, namespace, name): the Secret an ExternalSecret writes
/// (`spec.target.name`, default its own name), the Secret cert-manager
/// issues a Certificate into (`spec.secretName`), the Secret a SealedSecret
/// unseals to (its template's name, default its own), and the Secret a
/// ClusterExternalSecret writes into every namespace it selects (namespace
/// `*`: any), the credentials database operators write (CloudNativePG,
/// Crunchy PGO, ext-postgres-operator), the ConfigMap and Secret of an
/// ObjectBucketClaim, a 1Password item's Secret, the ConfigMap and Secret
/// the Azure App Configuration provider writes, a Vault Secrets Operator
/// destination Secret, and a `spec.writeConnectionSecretToRef` Secret
/// (Crossplane).
pub fn produced(o: &Object) -> Vec<(String, String, Option<String>, String)> {
    let ns = o.id.namespace.clone();
    let secret = |name: String| (String::new(), "Secret".to_string(), ns.clone(), name);
    match (o.id.group.as_str(), o.id.kind.as_str()) {
        ("external-secrets.io", "ExternalSecret") => vec![secret(
            o.body
                .str_at(&["spec", "target", "name"])
                .unwrap_or_else(|| o.id.name.clone()),
        )],
        ("cert-manager.io", "Certificate") => o
            .body
            .str_at(&["spec", "secretName"])
            .map(secret)
            .into_iter()
            .collect(),
        ("external-secrets.io", "ClusterExternalSecret") => {
            let name = o
                .body
                .str_at(&["spec", "externalSecretSpec", "target", "name"])
                .or_else(|| o.body.str_at(&["spec", "externalSecretName"]))
                .unwrap_or_else(|| o.id.name.clone());
            vec![(String::new(), "Secret".to_string(), Some("*".into()), name)]
        }
        ("bitnami.com", "SealedSecret") => vec![secret(
            o.body
                .str_at(&["spec", "template", "metadata", "name"])
                .unwrap_or_else(|| o.id.name.clone()),
        )],
        // CloudNativePG writes the application user's credentials into
        // `<cluster>-app`, and the superuser's into `<cluster>-superuser`
        // when enableSuperuserAccess is set.
        ("postgresql.cnpg.io", "Cluster") => {
            let mut out = vec![secret(format!("{}-app", o.id.name))];
            if o.body
                .path(&["spec", "enableSuperuserAccess"])
                .and_then(Node::as_bool)
                == Some(true)
            {
                out.push(secret(format!("{}-superuser", o.id.name)));
            }
            out
        }
        // Crunchy PGO: `<cluster>-pguser-<user>` for each user (the
        // cluster's own name when none is listed).
        ("postgres-operator.crunchydata.com", "PostgresCluster") => {
            let users: Vec<String> = o
                .body
                .path(&["spec", "users"])
                .map(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(|u| u.str_at(&["name"]))
                .collect();
            let users = if users.is_empty() {
                vec![o.id.name.clone()]
            } else {
                users
            };
            users
                .into_iter()
                .map(|u| secret(format!("{}-pguser-{u}", o.id.name)))
                .collect()
        }
        // ext-postgres-operator: `<secretName>-<name>` of a PostgresUser.
        ("db.movetokube.com", "PostgresUser") => o
            .body
            .str_at(&["spec", "secretName"])
            .map(|s| secret(format!("{s}-{}", o.id.name)))
            .into_iter()
            .collect(),
        // An object bucket claim (Rook, NooBaa): a ConfigMap and a Secret
        // named as the claim, with the bucket's address and keys.
        ("objectbucket.io", "ObjectBucketClaim") => vec![
            (
                String::new(),
                "ConfigMap".to_string(),
                ns.clone(),
                o.id.name.clone(),
            ),
            secret(o.id.name.clone()),
        ],
        // 1Password Connect: a Secret named as the item.
        ("onepassword.com", "OnePasswordItem") => vec![secret(o.id.name.clone())],
        ("azconfig.io", _) | ("secrets.hashicorp.com", _) => configuration_providers(o),
        // Crossplane managed resources and claims, and anything else that
        // writes a connection Secret where writeConnectionSecretToRef says.
        _ => o
            .body
            .path(&["spec", "writeConnectionSecretToRef"])
            .and_then(|r| {
                let name = r.str_at(&["name"])?;
                let namespace = r.str_at(&["namespace"]).or_else(|| ns.clone());
                Some((String::new(), "Secret".to_string(), namespace, name))
            })
            .into_iter()
            .collect(),
    }
}
