//! Clusters whose Flux objects Terraform creates: the AKS Flux extension's
//! `azurerm_kubernetes_flux_configuration` (and the same resource through
//! `azapi_resource` of type `Microsoft.KubernetesConfiguration/
//! fluxConfigurations`), the fluxcd/flux provider's `flux_bootstrap_git`
//! (the `flux-system` sync of its `path`, when git does not hold it yet),
//! and `kubernetes_manifest` resources whose manifest is a Flux
//! Kustomization or source.
//!
//! A flux configuration makes, in its `namespace`, a GitRepository (or
//! OCIRepository, Bucket) named after the configuration, and one Flux
//! Kustomization per `kustomizations` block named
//! `<configuration>-<kustomization>`, whose `depends_on` names other
//! kustomizations of the same configuration (the extension's
//! fluxconfig-agent, as Microsoft documents it: "Flux v2 in AKS and Arc",
//! `kustomizations.depends_on`). Each cluster (the configurations that share
//! a `cluster_id`) becomes a cluster whose entry is the Terraform resource:
//! its objects are those the configurations make, with their places in the
//! `.tf` files, and the walk takes each Kustomization from there as it
//! would from a sync path's build. A URL Terraform computes
//! (`local.repo_url`) is unknown: such a source is mapped with `--source
//! GitRepository/NAMESPACE/NAME=DIR`.
//!
//! HCL is read with `hcl-rs` (a maintained HCL2 parser): comments, heredocs
//! and `/* */` blocks are the parser's, never a scanner's guess.

use serde_json::{Map, Value, json};

use crate::model::{Object, ObjectId, Span};
use crate::repo::{Kind, RepoIndex};
use crate::yaml::Node;

/// One cluster Terraform defines: its name, the resource it is entered
/// by, and the Flux objects its resources make.
#[derive(Debug)]
pub(super) struct Installed {
    /// The cluster's name (the Terraform resource its `cluster_id` names).
    pub name: String,
    /// The first resource that makes its objects.
    pub at: Span,
    /// The objects, each with its place.
    pub objects: Vec<Object>,
}

/// Every cluster the repository's Terraform files define, and notes for
/// files that could not be read.
pub(super) fn clusters(index: &RepoIndex) -> (Vec<Installed>, Vec<String>) {
    let mut notes = Vec::new();
    let mut by_cluster: Vec<Installed> = Vec::new();
    let files: Vec<&str> = index
        .below("")
        .filter(|(p, k)| **k == Kind::File && p.ends_with(".tf") && index.mount_of(p).is_none())
        .map(|(p, _)| p)
        .collect();
    for file in files {
        let Ok(text) = index.read_text(file) else {
            continue;
        };
        if !text.contains("flux") {
            continue;
        }
        let body = match hcl::parse(&text) {
            Ok(body) => body,
            Err(e) => {
                notes.push(format!(
                    "{file}: not read as Terraform ({}); Flux objects it may create are not known",
                    first_line(&e.to_string())
                ));
                continue;
            }
        };
        for block in body.blocks().filter(|b| b.identifier() == "resource") {
            let labels: Vec<&str> = block.labels().iter().map(|l| l.as_str()).collect();
            let [kind, name] = labels.as_slice() else {
                continue;
            };
            let at = Span::new(file, line_of(&text, kind, name));
            let (cluster, objects) = match *kind {
                "azurerm_kubernetes_flux_configuration" => {
                    let cluster =
                        cluster_of(block.body().attributes().find(|a| a.key() == "cluster_id"));
                    (cluster, flux_configuration(block.body(), &at))
                }
                "azapi_resource" if is_flux_configuration(block.body()) => {
                    let cluster =
                        cluster_of(block.body().attributes().find(|a| a.key() == "parent_id"));
                    (cluster, azapi_configuration(block.body(), &at))
                }
                "flux_bootstrap_git" => (
                    format!("terraform-{name}"),
                    bootstrap_git(block.body(), &at),
                ),
                "kubernetes_manifest" => (
                    format!("terraform-{}", file.rsplit('/').nth(1).unwrap_or("root")),
                    manifest(block.body(), &at),
                ),
                _ => continue,
            };
            if objects.is_empty() {
                continue;
            }
            match by_cluster.iter_mut().find(|c| c.name == cluster) {
                Some(c) => c.objects.extend(objects),
                None => by_cluster.push(Installed {
                    name: cluster,
                    at,
                    objects,
                }),
            }
        }
    }
    (by_cluster, notes)
}

/// The first line of a parser's message.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// The line of `resource "KIND" "NAME"` in the file (1 when not found).
fn line_of(text: &str, kind: &str, name: &str) -> u32 {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.starts_with("resource")
                && l.contains(&format!("\"{kind}\""))
                && l.contains(&format!("\"{name}\""))
        })
        .map_or(1, |i| i as u32 + 1)
}

/// A cluster's name from the expression that names it
/// (`azurerm_kubernetes_cluster.main.id` → `main`).
fn cluster_of(attr: Option<&hcl::Attribute>) -> String {
    let Some(attr) = attr else {
        return "terraform".into();
    };
    let text = expression_text(attr.expr());
    let parts: Vec<&str> = text.split('.').collect();
    match parts.as_slice() {
        [_, name, ..] if !name.is_empty() => name.to_string(),
        _ => text.trim_matches('"').to_string(),
    }
}

/// An expression as written (for names and notes).
fn expression_text(expr: &hcl::Expression) -> String {
    match expr {
        hcl::Expression::String(s) => s.clone(),
        other => hcl::format::to_string(other).unwrap_or_default(),
    }
}

/// An expression's value, when it is a literal (strings, numbers, bools,
/// lists and objects of them); `None` for what Terraform computes.
fn literal(expr: &hcl::Expression) -> Option<Value> {
    Some(match expr {
        hcl::Expression::Null => Value::Null,
        hcl::Expression::Bool(b) => Value::Bool(*b),
        hcl::Expression::Number(n) => serde_json::to_value(n).ok()?,
        hcl::Expression::String(s) => Value::String(s.clone()),
        hcl::Expression::Array(items) => Value::Array(items.iter().filter_map(literal).collect()),
        hcl::Expression::Object(object) => {
            let mut map = Map::new();
            for (key, value) in object {
                let key = match key {
                    hcl::ObjectKey::Identifier(id) => id.to_string(),
                    hcl::ObjectKey::Expression(e) => match literal(e)? {
                        Value::String(s) => s,
                        _ => return None,
                    },
                    _ => return None,
                };
                if let Some(value) = literal(value) {
                    map.insert(key, value);
                }
            }
            Value::Object(map)
        }
        hcl::Expression::Parenthesis(inner) => literal(inner)?,
        hcl::Expression::FuncCall(call) if call.name.to_string() == "jsonencode" => {
            literal(call.args.first()?)?
        }
        _ => return None,
    })
}

/// An attribute of a body, as a literal string; a template Terraform
/// fills in (`"clusters/${var.environment}"`) as written, its `${…}` an
/// unknown value the walk does not guess.
fn string(body: &hcl::Body, key: &str) -> Option<String> {
    let expr = body.attributes().find(|a| a.key() == key)?.expr();
    match expr {
        hcl::Expression::TemplateExpr(template) => Some(template.to_string()),
        _ => literal_string(body, key),
    }
}

/// An attribute of a body, only when it is a literal string.
fn literal_string(body: &hcl::Body, key: &str) -> Option<String> {
    body.attributes()
        .find(|a| a.key() == key)
        .and_then(|a| literal(a.expr()))
        .and_then(|v| v.as_str().map(str::to_string))
}

/// The Flux objects an `azurerm_kubernetes_flux_configuration` makes.
fn flux_configuration(body: &hcl::Body, at: &Span) -> Vec<Object> {
    let name = string(body, "name").unwrap_or_else(|| "flux".into());
    let namespace = string(body, "namespace").unwrap_or_else(|| "flux-system".into());
    let (kind, url) = [
        ("git_repository", "GitRepository"),
        ("bucket", "Bucket"),
        ("blob_storage", "Bucket"),
    ]
    .iter()
    .find_map(|(block, kind)| {
        let b = body.blocks().find(|b| b.identifier() == *block)?;
        Some((*kind, string(b.body(), "url")))
    })
    .unwrap_or(("GitRepository", None));
    let kustomizations = body
        .blocks()
        .filter(|b| b.identifier() == "kustomizations")
        .map(|b| {
            let depends: Vec<String> = b
                .body()
                .attributes()
                .find(|a| a.key() == "depends_on")
                .and_then(|a| literal(a.expr()))
                .and_then(|v| v.as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            (
                string(b.body(), "name").unwrap_or_default(),
                string(b.body(), "path").unwrap_or_default(),
                depends,
            )
        })
        .collect();
    objects(&name, &namespace, kind, url, kustomizations, at)
}

/// Whether an `azapi_resource` is a flux configuration.
fn is_flux_configuration(body: &hcl::Body) -> bool {
    string(body, "type")
        .is_some_and(|t| t.starts_with("Microsoft.KubernetesConfiguration/fluxConfigurations"))
}

/// The Flux objects an `azapi_resource` flux configuration makes (its
/// `body.properties`: `namespace`, `sourceKind`, `gitRepository`,
/// `ociRepository`, `bucket`, `kustomizations` keyed by name).
fn azapi_configuration(body: &hcl::Body, at: &Span) -> Vec<Object> {
    let name = string(body, "name").unwrap_or_else(|| "flux".into());
    let Some(properties) = body
        .attributes()
        .find(|a| a.key() == "body")
        .and_then(|a| literal(a.expr()))
        .and_then(|v| v.get("properties").cloned())
    else {
        return Vec::new();
    };
    let namespace = properties["namespace"]
        .as_str()
        .unwrap_or("flux-system")
        .to_string();
    let (kind, field) = match properties["sourceKind"].as_str() {
        Some("OCIRepository") => ("OCIRepository", "ociRepository"),
        Some("Bucket") => ("Bucket", "bucket"),
        _ => ("GitRepository", "gitRepository"),
    };
    let url = properties[field]["url"].as_str().map(str::to_string);
    let kustomizations = properties["kustomizations"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v["path"].as_str().unwrap_or_default().to_string(),
                        v["dependsOn"]
                            .as_array()
                            .map(|a| {
                                a.iter()
                                    .filter_map(|d| d.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    objects(&name, &namespace, kind, url, kustomizations, at)
}

/// The source and Kustomizations of one flux configuration.
fn objects(
    name: &str,
    namespace: &str,
    kind: &str,
    url: Option<String>,
    kustomizations: Vec<(String, String, Vec<String>)>,
    at: &Span,
) -> Vec<Object> {
    let mut out = Vec::new();
    // A URL Terraform computes is unknown: the source is left undefined,
    // and the walk says how to map it.
    if let Some(url) = url.filter(|u| !u.contains("${")) {
        out.extend(object(
            json!({
                "apiVersion": "source.toolkit.fluxcd.io/v1",
                "kind": kind,
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"url": url, "interval": "10m"},
            }),
            at,
        ));
    }
    for (k, path, depends) in kustomizations {
        let depends: Vec<Value> = depends
            .iter()
            .map(|d| json!({"name": format!("{name}-{d}")}))
            .collect();
        out.extend(object(
            json!({
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
                "kind": "Kustomization",
                "metadata": {"name": format!("{name}-{k}"), "namespace": namespace},
                "spec": {
                    "interval": "10m",
                    "path": if path.is_empty() { "./".to_string() } else { path },
                    "prune": true,
                    "sourceRef": {"kind": kind, "name": name},
                    "dependsOn": depends,
                },
            }),
            at,
        ));
    }
    out
}

/// The sync `flux_bootstrap_git` (the fluxcd/flux provider) makes: the
/// `flux-system` Kustomization of its literal `path` over the GitRepository
/// `flux-system` of the provider's repository, which is this one (the
/// provider commits its manifests here).
fn bootstrap_git(body: &hcl::Body, at: &Span) -> Vec<Object> {
    let namespace = string(body, "namespace").unwrap_or_else(|| "flux-system".into());
    // Only a path written literally names a directory here: one Terraform
    // computes (`var.cluster_path`) is not guessed, nor is an absent one.
    let Some(path) = literal_string(body, "path").filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    object(
        json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "flux-system", "namespace": namespace},
            "spec": {
                "interval": "10m",
                "path": path,
                "prune": true,
                "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
            },
        }),
        at,
    )
    .into_iter()
    .collect()
}

/// The Flux object a `kubernetes_manifest` applies, when its manifest is
/// a literal Flux Kustomization or source.
fn manifest(body: &hcl::Body, at: &Span) -> Vec<Object> {
    let Some(value) = body
        .attributes()
        .find(|a| a.key() == "manifest")
        .and_then(|a| literal(a.expr()))
    else {
        return Vec::new();
    };
    let flux = value["apiVersion"].as_str().is_some_and(|v| {
        v.starts_with("kustomize.toolkit.fluxcd.io/") || v.starts_with("source.toolkit.fluxcd.io/")
    });
    if !flux {
        return Vec::new();
    }
    object(value, at).into_iter().collect()
}

/// An object from its JSON form, placed at `at`.
fn object(value: Value, at: &Span) -> Option<Object> {
    let text = serde_json::to_string(&value).ok()?;
    let body: Node = crate::yaml::parse_text(&text).ok()?.into_iter().next()?;
    let id = ObjectId::of(&body)?;
    Some(Object {
        id,
        source: Some(at.clone()),
        body,
    })
}
