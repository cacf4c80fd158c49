//! `unresolved-reference`: an object names another object that the
//! repository defines, but only in a tier that is not applied before it.

use std::collections::{BTreeMap, BTreeSet};

use super::{Context, Finding, Rule, Severity};
use crate::convergence::ClusterAnalysis;
use crate::model::{Object, Span, Tier, TierId};
use crate::yaml::Node;

#[derive(Debug)]
pub struct UnresolvedReference;

impl Rule for UnresolvedReference {
    fn id(&self) -> &'static str {
        "unresolved-reference"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "an object refers to another object the repository defines, but in a tier that is not applied before it"
    }
    fn example(&self) -> &'static str {
        "DataVolume/vms/unifi-root in apps-vms provisions on longhorn-vm, whose StorageProfile is in platform-config-cdi, which apps-vms does not depend on"
    }
    fn explain(&self) -> &'static str {
        "Some references are not checked by the API server at apply time but matter the moment the object is \
acted on: a PVC or DataVolume binds with its storageClassName right away (and CDI stamps a DataVolume's access \
modes from the StorageProfile of that class at creation, permanently), a Certificate is issued by its issuerRef, a \
HelmRelease fetches its chart from its sourceRef, a Kustomization reads spec.sourceRef and its postBuild.substituteFrom \
ConfigMaps and Secrets before it builds. When the repository defines the referenced object in a tier that is neither \
the same tier nor one applied before it (a dependsOn ancestor, or the parent that renders the Kustomization), the \
reference resolves only by luck of timing: on a cold start, or after a prune, the object is acted on without its \
target. substituteFrom must come from an earlier tier, never the tier itself. Add dependsOn on the tier that defines \
the target (the seed's apps-vms → platform-config-cdi edge is exactly this). References to objects the repository \
does not define at all are left alone."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for a in &cx.analyses {
            let index = Index::of(a);
            for tier in a.cluster.tiers.values() {
                let objects = if tier.remote_target().is_some() {
                    &[][..]
                } else {
                    tier.objects()
                };
                for object in objects {
                    for r in references(object) {
                        check_reference(self, a, &index, tier, Some(object), &r, false, &mut out);
                    }
                }
                for r in tier_references(tier) {
                    check_reference(self, a, &index, tier, None, &r, true, &mut out);
                }
            }
        }
        out
    }
}

/// A reference from one object to another.
struct Reference {
    kind: &'static str,
    group: &'static str,
    namespace: Option<String>,
    name: String,
    /// What the reference is for, in words ("storageClassName").
    via: &'static str,
    line: u32,
}

/// Objects by (group, kind, namespace, name) → the tiers that render them.
struct Index(BTreeMap<ObjectKey, Vec<(TierId, Option<Span>)>>);

/// (group, kind, namespace, name).
type ObjectKey = (String, String, Option<String>, String);

impl Index {
    fn of(a: &ClusterAnalysis) -> Index {
        let mut map: BTreeMap<_, Vec<_>> = BTreeMap::new();
        for tier in a
            .cluster
            .tiers
            .values()
            .filter(|t| t.remote_target().is_none())
        {
            for o in tier.objects() {
                let id = &o.id;
                map.entry((
                    id.group.clone(),
                    id.kind.clone(),
                    id.namespace.clone(),
                    id.name.clone(),
                ))
                .or_default()
                .push((tier.id.clone(), o.source.clone()));
            }
        }
        Index(map)
    }

    fn get(&self, r: &Reference) -> &[(TierId, Option<Span>)] {
        self.0
            .get(&(
                r.group.to_string(),
                r.kind.to_string(),
                r.namespace.clone(),
                r.name.clone(),
            ))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

#[allow(clippy::too_many_arguments)]
fn check_reference(
    rule: &UnresolvedReference,
    a: &ClusterAnalysis,
    index: &Index,
    tier: &Tier,
    object: Option<&Object>,
    r: &Reference,
    strictly_before: bool,
    out: &mut Vec<Finding>,
) {
    let targets = index.get(r);
    if targets.is_empty() || r.name.contains("${") {
        return;
    }
    let applied = a.order.applied_before(&tier.id);
    let ok = targets
        .iter()
        .any(|(t, _)| applied.contains(t) || (!strictly_before && *t == tier.id));
    if ok {
        return;
    }
    let label = a.cluster.tier_label(&tier.id);
    let providers: BTreeSet<String> = targets
        .iter()
        .map(|(t, _)| a.cluster.tier_label(t))
        .collect();
    let providers: Vec<String> = providers.into_iter().collect();
    let target = match &r.namespace {
        Some(ns) => format!("{}/{ns}/{}", r.kind, r.name),
        None => format!("{}/{}", r.kind, r.name),
    };
    let subject = object.map_or_else(
        || format!("Kustomization {label}"),
        |o| format!("{} in {label}", o.id),
    );
    let only_self = providers == [label.clone()];
    let message = if only_self {
        format!(
            "{subject} reads {target} ({}) from its own output; it must exist before the tier builds",
            r.via
        )
    } else {
        format!(
            "{subject} refers to {target} ({}), which is defined in {}, a tier {label} does not depend on",
            r.via,
            providers.join(", ")
        )
    };
    let mut related = vec![(tier.defined_at.clone(), format!("Kustomization {label}"))];
    if let Some((t, Some(span))) = targets.first() {
        related.push((
            span.clone(),
            format!("{target} in {}", a.cluster.tier_label(t)),
        ));
    }
    let file = object
        .and_then(|o| o.source.as_ref().map(|s| s.file.clone()))
        .unwrap_or_else(|| tier.defined_at.file.clone());
    out.push(Finding::new(rule, a.cluster.name.clone(), label.clone(), message).object_opt(object.map(|o| o.id.to_string())).at(Span::new(file, r.line)).related_all(related).why(format!(
            "on a cold start or after a prune, {subject} is acted on before {target} exists; the reference resolves only by luck of timing"
        )).fix(if only_self {
            format!("define {target} in a tier that {label} depends on")
        } else {
            format!("add `dependsOn: {}` to {label}", providers[0])
        }));
}

fn text(node: Option<&Node>) -> Option<(String, u32)> {
    let node = node?;
    Some((node.as_scalar_string()?, node.line))
}

/// References an object makes.
fn references(o: &Object) -> Vec<Reference> {
    let body = &o.body;
    let ns = o.id.namespace.clone();
    let mut out = Vec::new();
    let storage_class = |node: Option<&Node>, profile: bool, out: &mut Vec<Reference>| {
        if let Some((name, line)) = text(node) {
            out.push(Reference {
                kind: "StorageClass",
                group: "storage.k8s.io",
                namespace: None,
                name: name.clone(),
                via: "storageClassName",
                line,
            });
            if profile {
                out.push(Reference {
                    kind: "StorageProfile",
                    group: "cdi.kubevirt.io",
                    namespace: None,
                    name,
                    via: "the StorageProfile CDI applies to its storage class",
                    line,
                });
            }
        }
    };
    match (o.id.group.as_str(), o.id.kind.as_str()) {
        // A claim bound statically (spec.volumeName) needs no StorageClass
        // object: the class name only has to match the volume's.
        ("", "PersistentVolumeClaim") if body.path(&["spec", "volumeName"]).is_none() => {
            storage_class(body.path(&["spec", "storageClassName"]), false, &mut out)
        }
        ("cdi.kubevirt.io", "DataVolume") => {
            storage_class(
                body.path(&["spec", "storage", "storageClassName"]),
                true,
                &mut out,
            );
            storage_class(
                body.path(&["spec", "pvc", "storageClassName"]),
                true,
                &mut out,
            );
        }
        ("apps", "StatefulSet") => {
            for t in body
                .path(&["spec", "volumeClaimTemplates"])
                .map(Node::as_seq)
                .unwrap_or_default()
            {
                storage_class(t.path(&["spec", "storageClassName"]), false, &mut out);
            }
        }
        ("kubevirt.io", "VirtualMachine") => {
            for t in body
                .path(&["spec", "dataVolumeTemplates"])
                .map(Node::as_seq)
                .unwrap_or_default()
            {
                storage_class(
                    t.path(&["spec", "storage", "storageClassName"]),
                    true,
                    &mut out,
                );
                storage_class(t.path(&["spec", "pvc", "storageClassName"]), true, &mut out);
            }
        }
        ("cert-manager.io", "Certificate") => {
            if let Some((name, line)) = text(body.path(&["spec", "issuerRef", "name"])) {
                let group = body
                    .str_at(&["spec", "issuerRef", "group"])
                    .unwrap_or_else(|| "cert-manager.io".into());
                if group == "cert-manager.io" {
                    let cluster = body.str_at(&["spec", "issuerRef", "kind"]).as_deref()
                        == Some("ClusterIssuer");
                    out.push(Reference {
                        kind: if cluster { "ClusterIssuer" } else { "Issuer" },
                        group: "cert-manager.io",
                        namespace: if cluster { None } else { ns.clone() },
                        name,
                        via: "issuerRef",
                        line,
                    });
                }
            }
        }
        ("networking.k8s.io", "Ingress") => {
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
                });
            }
            if let Some((name, line)) =
                text(annotations.and_then(|a| a.get("cert-manager.io/issuer")))
            {
                out.push(Reference {
                    kind: "Issuer",
                    group: "cert-manager.io",
                    namespace: ns.clone(),
                    name,
                    via: "cert-manager.io/issuer",
                    line,
                });
            }
        }
        ("helm.toolkit.fluxcd.io", "HelmRelease") => {
            for (path, via) in [
                (
                    &["spec", "chart", "spec", "sourceRef"][..],
                    "chart.spec.sourceRef",
                ),
                (&["spec", "chartRef"][..], "chartRef"),
            ] {
                let Some(r) = body.path(path) else { continue };
                if let (Some(kind), Some((name, line))) = (r.str_at(&["kind"]), text(r.get("name")))
                    && let Some(kind) = source_kind(&kind)
                {
                    let namespace = r.str_at(&["namespace"]).or_else(|| ns.clone());
                    out.push(Reference {
                        kind,
                        group: "source.toolkit.fluxcd.io",
                        namespace,
                        name,
                        via,
                        line,
                    });
                }
            }
        }
        _ => {}
    }
    out
}

/// References a Flux Kustomization makes before it builds: its source and
/// its substituteFrom ConfigMaps and Secrets (which must come from earlier
/// tiers).
fn tier_references(tier: &Tier) -> Vec<Reference> {
    let mut out = Vec::new();
    if tier.parent.is_none() {
        return out; // the entry: its source and variables come from bootstrap
    }
    let ns = Some(tier.id.namespace.clone());
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
