//! Azure GitOps: AKS and Azure Arc run Flux as the `microsoft.flux` cluster
//! extension, and a `Microsoft.KubernetesConfiguration/fluxConfigurations`
//! resource is the repository's sync entry. Its agent (fluxconfig-agent)
//! creates the configuration's namespace (`namespace`, default `default`)
//! and, in it, the source named after the configuration, before any of the
//! configuration's Kustomizations reconcile (Microsoft Learn, "Tutorial:
//! Deploy applications using GitOps with Flux v2"; `az k8s-configuration
//! flux create --namespace`). So objects in that namespace need no tier to
//! create it.
//!
//! Read from the forms the repository writes it in, literals only:
//! * Bicep: `resource … 'Microsoft.KubernetesConfiguration/fluxConfigurations@…'`
//!   with `name: '…'` and `properties: { namespace: '…' }`;
//! * ARM templates (`*.json`): resources of that `type`;
//! * Terraform: `azurerm_kubernetes_flux_configuration` (`name`,
//!   `namespace`), and `azapi_resource` of that type;
//! * scripts: `az k8s-configuration flux create … -n NAME --namespace NS`.

use super::{Item, Provides, scripts, terraform};
use crate::model::Span;
use crate::repo::{Kind, RepoIndex};

const TYPE: &str = "Microsoft.KubernetesConfiguration/fluxConfigurations";

/// One fluxConfiguration: where, its name when literal, its namespace.
struct Configuration {
    at: Span,
    name: Option<String>,
    namespace: String,
}

/// The namespace, and the GitRepository when its name is literal, of every
/// fluxConfiguration the repository declares.
pub fn read(index: &RepoIndex) -> Vec<Item> {
    let files: Vec<String> = index
        .below("")
        .filter(|(_, k)| **k == Kind::File)
        .map(|(p, _)| p.to_string())
        .collect();
    let mut found = Vec::new();
    for rel in files {
        let lower = rel.to_ascii_lowercase();
        let form: fn(&str, &str) -> Vec<Configuration> = if lower.ends_with(".bicep") {
            bicep
        } else if lower.ends_with(".json") {
            arm
        } else if lower.ends_with(".tf") || lower.ends_with(".tofu") {
            hcl
        } else if scripts::is_script(&rel) {
            cli
        } else {
            continue;
        };
        let Ok(text) = index.read_text(&rel) else {
            continue;
        };
        if !text.contains("fluxConfigurations")
            && !text.contains("azurerm_kubernetes_flux_configuration")
            && !text.contains("k8s-configuration")
        {
            continue;
        }
        found.extend(form(&rel, &text));
    }
    let mut out = Vec::new();
    for c in found {
        let via = match &c.name {
            Some(name) => format!("Azure fluxConfiguration {name} (microsoft.flux)"),
            None => "Azure fluxConfiguration (microsoft.flux)".to_string(),
        };
        out.push(Item {
            at: c.at.clone(),
            via: via.clone(),
            provides: Provides::Namespace(c.namespace.clone()),
        });
        if let Some(name) = c.name {
            out.push(Item {
                at: c.at,
                via,
                provides: Provides::Object(format!("GitRepository/{}/{name}", c.namespace)),
            });
        }
    }
    out
}

/// A quoted literal (`'x'` or `"x"`), not an interpolation.
fn literal(value: &str) -> Option<String> {
    let v = value.trim().trim_end_matches(',');
    let inner = v
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .or_else(|| v.strip_prefix('"').and_then(|v| v.strip_suffix('"')))?;
    let computed = inner.is_empty()
        || inner.contains("${")
        || inner.starts_with('[')
        || inner.contains('{')
        || inner.contains('$');
    (!computed).then(|| inner.to_string())
}

/// The value of the first `key: value` line (Bicep) of a block.
fn bicep_value(block: &[&str], key: &str) -> Option<String> {
    block.iter().find_map(|l| {
        let rest = l.trim().strip_prefix(key)?.trim_start().strip_prefix(':')?;
        literal(rest)
    })
}

fn bicep(rel: &str, text: &str) -> Vec<Configuration> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if !(t.starts_with("resource ") && t.contains(&format!("'{TYPE}@"))) {
            continue;
        }
        // The resource's body, to the brace that closes it.
        let mut depth = 0i32;
        let mut end = i;
        for (j, l) in lines.iter().enumerate().skip(i) {
            depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
            end = j;
            if depth <= 0 && j > i {
                break;
            }
        }
        let block = &lines[i..=end];
        // The namespace defaults to `default` only when the property is
        // absent; a computed one is left out.
        let written = block.iter().any(|l| l.trim().starts_with("namespace:"));
        let namespace = match bicep_value(block, "namespace") {
            Some(ns) => ns,
            None if !written => "default".to_string(),
            None => continue,
        };
        out.push(Configuration {
            at: Span::new(rel, i as u32 + 1),
            name: bicep_value(block, "name"),
            namespace,
        });
    }
    out
}

fn arm(rel: &str, text: &str) -> Vec<Configuration> {
    if !text.contains(TYPE) {
        return Vec::new();
    }
    let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let mut resources = Vec::new();
    collect(&json, &mut resources);
    // Lines of the `type` strings, in document order.
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(TYPE) && l.contains("\"type\""))
        .map(|(n, _)| n as u32 + 1);
    let mut out = Vec::new();
    for r in resources {
        let line = lines.next().unwrap_or(1);
        let text_of = |v: Option<&serde_json::Value>| {
            v.and_then(|v| v.as_str())
                .and_then(|s| literal(&format!("\"{s}\"")))
        };
        let properties = r.get("properties");
        let namespace = match properties.and_then(|p| p.get("namespace")) {
            None => "default".to_string(),
            Some(v) => match text_of(Some(v)) {
                Some(ns) => ns,
                None => continue,
            },
        };
        // An ARM child resource's name is `cluster/…/name`; the last part
        // is the configuration's.
        let name = text_of(r.get("name")).map(|n| n.rsplit('/').next().unwrap_or(&n).to_string());
        out.push(Configuration {
            at: Span::new(rel, line),
            name,
            namespace,
        });
    }
    out
}

fn collect<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a serde_json::Value>) {
    match v {
        serde_json::Value::Object(map) => {
            if map
                .get("type")
                .and_then(|t| t.as_str())
                .is_some_and(|t| t.starts_with(TYPE))
            {
                out.push(v);
            }
            for child in map.values() {
                collect(child, out);
            }
        }
        serde_json::Value::Array(items) => {
            for child in items {
                collect(child, out);
            }
        }
        _ => {}
    }
}

fn hcl(rel: &str, text: &str) -> Vec<Configuration> {
    let mut out = Vec::new();
    for block in terraform::blocks(text) {
        let at = Span::new(rel, block.line);
        match block.kind.as_str() {
            "azurerm_kubernetes_flux_configuration" => {
                let Some(namespace) = terraform::attribute(&block.body, "namespace") else {
                    continue; // required by the provider; computed here
                };
                out.push(Configuration {
                    at,
                    name: terraform::attribute(&block.body, "name"),
                    namespace,
                });
            }
            "azapi_resource" if block.body.contains(&format!("\"{TYPE}@")) => {
                // `body = { properties = { namespace = "…" } }`.
                let namespace = match terraform::attribute(&block.body, "namespace") {
                    Some(ns) => ns,
                    None if !block.body.contains("namespace") => "default".to_string(),
                    None => continue,
                };
                out.push(Configuration {
                    at,
                    name: terraform::attribute(&block.body, "name"),
                    namespace,
                });
            }
            _ => {}
        }
    }
    out
}

fn cli(rel: &str, text: &str) -> Vec<Configuration> {
    let mut out = Vec::new();
    let mut start = 0u32;
    let mut acc = String::new();
    for (n, raw) in text.lines().enumerate() {
        if acc.is_empty() {
            start = n as u32 + 1;
        }
        let line = raw.trim_end();
        acc.push(' ');
        acc.push_str(line.trim_end_matches('\\'));
        if line.ends_with('\\') {
            continue;
        }
        let logical = std::mem::take(&mut acc);
        let t = logical.trim();
        if t.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        let Some(i) = words
            .windows(4)
            .position(|w| w == ["az", "k8s-configuration", "flux", "create"])
        else {
            continue;
        };
        let words = &words[i + 4..];
        let flag = |names: &[&str]| -> Option<Option<String>> {
            words.iter().enumerate().find_map(|(k, w)| {
                names.iter().find_map(|name| {
                    if let Some(v) = w.strip_prefix(&format!("{name}=")) {
                        return Some(literal(&format!("'{}'", v.trim_matches(['"', '\'']))));
                    }
                    (w == name).then(|| {
                        words
                            .get(k + 1)
                            .and_then(|v| literal(&format!("'{}'", v.trim_matches(['"', '\'']))))
                    })
                })
            })
        };
        let namespace = match flag(&["--namespace", "--ns"]) {
            None => "default".to_string(),
            Some(Some(ns)) => ns,
            Some(None) => continue,
        };
        out.push(Configuration {
            at: Span::new(rel, start),
            name: flag(&["-n", "--name"]).flatten(),
            namespace,
        });
    }
    out
}

/// The bootstrap reader of the AKS microsoft.flux extension and its configurations.
#[derive(Debug)]
pub struct Azure;

impl super::Reader for Azure {
    fn read(&self, cx: &super::ReadCx) -> Vec<super::Item> {
        read(cx.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provides(files: &[(&str, &str)]) -> Vec<(String, Provides)> {
        let index = RepoIndex::from_memory(files);
        read(&index)
            .into_iter()
            .map(|i| (i.at.to_string(), i.provides))
            .collect()
    }

    #[test]
    fn bicep_arm_terraform_and_cli_configurations_create_their_namespace() {
        let found = provides(&[
            (
                "infra/flux.bicep",
                "param n int\nresource fluxConfig 'Microsoft.KubernetesConfiguration/fluxConfigurations@2022-03-01' = {\n  name: 'platform'\n  properties: {\n    scope: 'cluster'\n    namespace: 'platform-config'\n    kustomizations: {\n      'infra': {\n        path: './infrastructure'\n      }\n    }\n  }\n}\n",
            ),
            (
                "infra/arm.json",
                "{\"resources\": [\n  {\n    \"type\": \"Microsoft.KubernetesConfiguration/fluxConfigurations\",\n    \"name\": \"aks/flux\",\n    \"properties\": {\"namespace\": \"[parameters('ns')]\"}\n  },\n  {\n    \"type\": \"Microsoft.KubernetesConfiguration/fluxConfigurations\",\n    \"name\": \"edge\",\n    \"properties\": {\"scope\": \"cluster\"}\n  }\n]}\n",
            ),
            (
                "terraform/flux.tf",
                "resource \"azurerm_kubernetes_flux_configuration\" \"apps\" {\n  name       = \"apps\"\n  cluster_id = azurerm_kubernetes_cluster.aks.id\n  namespace  = \"apps-config\"\n}\n",
            ),
            (
                "scripts/setup.sh",
                "#!/bin/sh\naz k8s-configuration flux create -g rg -c aks \\\n  -n tenants --namespace tenants-config -t managedClusters \\\n  -u https://example.com/repo\n# az k8s-configuration flux create -n commented --namespace nope\n",
            ),
        ]);
        let namespaces: Vec<(&str, &str)> = found
            .iter()
            .filter_map(|(at, p)| match p {
                Provides::Namespace(ns) => Some((at.as_str(), ns.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            namespaces,
            vec![
                ("infra/arm.json:8", "default"),
                ("infra/flux.bicep:2", "platform-config"),
                ("scripts/setup.sh:2", "tenants-config"),
                ("terraform/flux.tf:1", "apps-config"),
            ],
            "{found:?}"
        );
        assert!(found.contains(&(
            "infra/flux.bicep:2".to_string(),
            Provides::Object("GitRepository/platform-config/platform".into())
        )));
        assert!(found.contains(&(
            "scripts/setup.sh:2".to_string(),
            Provides::Object("GitRepository/tenants-config/tenants".into())
        )));
    }
}
