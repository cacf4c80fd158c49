//! `schema-violation`: a rendered object, after postBuild, breaks the schema
//! the API server validates it against on server-side apply (see
//! [`crate::schema`]).

use std::collections::BTreeMap;

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::{Object, Span};
use crate::provenance::distribution;
use crate::schema::{self, Schema, Validator, kubernetes};

#[derive(Debug)]
pub struct SchemaViolation;

/// Violations reported per object, at most.
const PER_OBJECT: usize = 20;

impl Rule for SchemaViolation {
    fn id(&self) -> RuleId {
        RuleId::SchemaViolation
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn other_severities(&self) -> Option<&'static str> {
        Some(
            "a warning for a field a CRD does not declare (pruned) and for a label value that is not a string (SetOwnerLabels drops the object's labels)",
        )
    }
    fn summary(&self) -> &'static str {
        "a rendered object breaks its schema: a built-in kind's Kubernetes OpenAPI for the cluster's minor, or a custom resource's CRD in the repository"
    }
    fn example(&self) -> &'static str {
        "Deployment/apps/web in apps: spec.template.spec.containers[0].env[0].value: expected string, got integer 8080"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for a in &cx.analyses {
            let table = kubernetes::table(
                a.kubernetes
                    .as_ref()
                    .map_or(distribution::NEWEST, |k| k.minor),
            );
            let crds = &a.crds;
            let mut crd_schemas: BTreeMap<(String, String, String), Option<Schema>> =
                BTreeMap::new();
            let meta = table.kind("v1", "ConfigMap").and_then(|s| {
                let s = resolve(table, s);
                s.properties.get("metadata").cloned()
            });
            for tier in a.cluster.local_tiers() {
                // An object encrypted whole has no schema to check until
                // Flux decrypts it.
                for o in tier
                    .objects()
                    .iter()
                    .filter(|o| !crate::model::is_opaque(&o.body))
                {
                    let id = &o.id;
                    let mut v = Validator {
                        defs: table,
                        limit: PER_OBJECT,
                        out: Vec::new(),
                        skip_top: &["status", "sops"],
                    };
                    let builtin = table.kind(&id.api_version(), &id.kind);
                    // Names and label values, for every kind.
                    let cluster_scoped = a.providers.scope(&id.group, &id.kind)
                        == Some(crate::provenance::Scope::Cluster);
                    v.out.extend(schema::meta::check(o, cluster_scoped));
                    let (schema_file, custom) = match builtin {
                        Some(s) => {
                            check_object(&mut v, s, o);
                            (None, false)
                        }
                        None => {
                            // The CRD in the repository, else Flux's own,
                            // bundled.
                            let (body, file) = match crds.get(&(id.group.clone(), id.kind.clone()))
                            {
                                Some(crd) => {
                                    (&crd.body, crd.source.as_ref().map(|s| s.file.clone()))
                                }
                                None => match schema::flux::crd(&id.group, &id.kind) {
                                    Some(body) => (body, None),
                                    None => {
                                        report(self, a, tier, o, v.out, None, true, &mut out);
                                        continue;
                                    }
                                },
                            };
                            let key = (id.group.clone(), id.kind.clone(), id.version.clone());
                            let s = crd_schemas
                                .entry(key)
                                .or_insert_with(|| schema::crd::version_schema(body, &id.version));
                            let Some(s) = s.as_ref() else {
                                // A version the CRD does not serve (api-removed
                                // says so); for a Flux Kustomization, what the
                                // model reads.
                                v.out.extend(schema::meta::flux_kustomization(o));
                                report(self, a, tier, o, v.out, None, true, &mut out);
                                continue;
                            };
                            check_object(&mut v, s, o);
                            // The fields the model reads, in its own words
                            // (`- name: apps`), where the schema says less.
                            let read = schema::meta::flux_kustomization(o);
                            v.out.retain(|x| !read.iter().any(|r| r.path == x.path));
                            v.out.extend(read);
                            if file.is_none() {
                                // Bundled: the kinds an Alert or Receiver
                                // may name are the enum Flux documents
                                // patching for third-party controllers
                                // (and the Flux Operator's distribution
                                // extends with its own kinds), so they are
                                // not known here.
                                v.out.retain(|x| !patched_enum(&x.path));
                            }
                            // metadata as the API server validates it for
                            // every kind.
                            if let (Some(m), Some(node)) = (&meta, o.body.get("metadata")) {
                                v.check(m, node, "metadata");
                            }
                            (file, true)
                        }
                    };
                    report(self, a, tier, o, v.out, schema_file, custom, &mut out);
                }
            }
        }
        out
    }
}

/// `spec.eventSources[0].kind` or `spec.resources[2].kind`: the object
/// kinds an Alert or Receiver may name.
fn patched_enum(path: &str) -> bool {
    ["spec.eventSources[", "spec.resources["]
        .iter()
        .any(|p| path.starts_with(p) && path.ends_with("].kind"))
}

/// The schema a reference names, or itself.
fn resolve<'t>(table: &'t kubernetes::Table, s: &'t Schema) -> &'t Schema {
    use crate::schema::Definitions;
    match s.reference.as_deref().and_then(|r| table.get(r)) {
        Some(t) => t,
        None => s,
    }
}

/// Validates an object against its kind's schema. `status` is written by
/// controllers (the API server drops it on apply), and `sops` is SOPS's
/// envelope, which kustomize-controller strips when it decrypts (without
/// decryption, sops-decryption reports the object): neither is checked.
/// Validates the object without `status` and SOPS metadata (the
/// validator's `skip_top`).
fn check_object<'a>(v: &mut Validator<'a>, schema: &'a Schema, o: &Object) {
    v.check(schema, &o.body, "");
}

/// The findings of one object's violations. `schema_file`: the CRD's file;
/// `custom`: a custom resource (its unknown fields are pruned, a warning).
#[allow(clippy::too_many_arguments)]
fn report(
    rule: &SchemaViolation,
    a: &crate::convergence::ClusterAnalysis,
    tier: &crate::model::Tier,
    o: &Object,
    violations: Vec<schema::Violation>,
    schema_file: Option<String>,
    custom: bool,
    out: &mut Vec<Finding>,
) {
    let id = &o.id;
    let label = a.cluster.tier_label(&tier.id);
    for violation in violations {
        let unknown_in_cr = custom && violation.unknown_field;
        // A label value that is not a string never reaches the API server:
        // kustomize-controller stamps its owner labels on every object
        // (`SetOwnerLabels`, through unstructured `GetLabels`, which
        // returns no map when a value is not a string, then `SetLabels`),
        // so the object is applied with Flux's labels only.
        let lost_labels = violation.path.starts_with("metadata.labels")
            && violation.message.starts_with("expected string");
        let what = if lost_labels {
            "kustomize-controller's SetOwnerLabels reads the labels with unstructured GetLabels, which returns nothing when a value is not a string, and sets its owner labels in their place: the object is applied, but without this label and every other label it declares (selectors and policies that match them miss it)".to_string()
        } else if unknown_in_cr {
            "the API server prunes it: the setting is silently lost".to_string()
        } else if violation.unknown_field {
            format!(
                "server-side apply rejects a field the {} schema does not declare, the stage aborts, and {label} never becomes Ready",
                id.kind
            )
        } else {
            format!(
                "the API server rejects the object, the stage aborts, and {label} never becomes Ready"
            )
        };
        let file = o
            .source
            .as_ref()
            .map(|s| s.file.clone())
            .unwrap_or_else(|| tier.defined_at.file.clone());
        let mut f = Finding::new(
            rule,
            a.cluster.name.clone(),
            label.clone(),
            format!("{id} in {label}: {}: {}", violation.path, violation.message),
        )
        .object(id.to_string())
        .at(Span::new(file, violation.line))
        .related(tier.defined_at.clone(), format!("Kustomization {label}"))
        .why(what)
        .fix(if lost_labels {
            format!(
                "quote the value of {} (label values are strings)",
                violation.path
            )
        } else if violation.unknown_field {
            format!("remove {} or spell it as the schema does", violation.path)
        } else {
            format!("give {} a value the schema accepts", violation.path)
        });
        if let Some(file) = &schema_file
            && violation.schema_line > 0
        {
            f = f.related(
                Span::new(file.clone(), violation.schema_line),
                format!("the schema of {}/{}", id.api_version(), id.kind),
            );
        }
        if unknown_in_cr || lost_labels {
            f = f.severity(Severity::Warning);
        }
        out.push(f.build());
    }
}
