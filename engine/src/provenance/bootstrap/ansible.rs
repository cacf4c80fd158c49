//! Ansible: a playbook or role task that installs a chart before Flux
//! (`kubernetes.core.helm`, `community.kubernetes.helm`, or `helm` with a
//! `chart_ref`), or renders its CRDs for a later apply
//! (`kubernetes.core.helm_template` with `include_crds: true`). The task's
//! arguments name the chart (`chart_ref`, its last segment), the release
//! (`release_name`/`name`) and its namespace
//! (`release_namespace`/`namespace`); `state: absent` installs nothing,
//! `skip_crds: true` leaves the chart's `crds/` out.
//!
//! Playbooks are read as YAML (the Jinja2 in them is quoted strings); a
//! chart named by a template expression is not guessed.

use super::{Item, Provides};
use crate::model::Span;
use crate::repo::{Kind, RepoIndex};
use crate::yaml::Node;

/// The modules that install a chart.
const INSTALL: &[&str] = &["kubernetes.core.helm", "community.kubernetes.helm", "helm"];

/// The modules that render a chart (with its CRDs, for a later apply).
const TEMPLATE: &[&str] = &[
    "kubernetes.core.helm_template",
    "community.kubernetes.helm_template",
];

/// What the repository's Ansible tasks install with Helm.
pub fn read(index: &RepoIndex) -> Vec<Item> {
    let mut out = Vec::new();
    let files: Vec<String> = index
        .below("")
        .filter(|(p, k)| **k == Kind::File && (p.ends_with(".yml") || p.ends_with(".yaml")))
        .map(|(p, _)| p.to_string())
        .collect();
    for rel in files {
        let Some(file) = index.file(&rel) else {
            continue;
        };
        if !file.may_contain("chart_ref") {
            continue;
        }
        let Ok(docs) = file.docs() else { continue };
        for doc in docs {
            tasks(doc, &rel, &mut out);
        }
    }
    out
}

/// Every task map under `node` (plays, task lists, `block:`s, roles'
/// task files) that installs a chart.
fn tasks(node: &Node, rel: &str, out: &mut Vec<Item>) {
    if node.is_map() {
        for (key, args) in node.as_map() {
            let install = INSTALL.contains(&key.as_str());
            let template = TEMPLATE.contains(&key.as_str());
            if (install || template) && args.is_map() {
                if let Some(item) = task(node, key, args, template, rel) {
                    out.push(item);
                }
                continue;
            }
            tasks(args, rel, out);
        }
    } else {
        for item in node.as_seq() {
            tasks(item, rel, out);
        }
    }
}

fn task(task: &Node, module: &str, args: &Node, template: bool, rel: &str) -> Option<Item> {
    let chart_ref = args.str_at(&["chart_ref"])?;
    if chart_ref.contains("{{") || args.str_at(&["state"]).as_deref() == Some("absent") {
        return None;
    }
    if template && args.path(&["include_crds"]).and_then(Node::as_bool) != Some(true) {
        return None;
    }
    let chart = crate::provenance::chart::short_name(&chart_ref);
    let release = args
        .str_at(&["release_name"])
        .or_else(|| args.str_at(&["name"]))
        .unwrap_or_else(|| chart.clone());
    let namespace = args
        .str_at(&["release_namespace"])
        .or_else(|| args.str_at(&["namespace"]))
        .filter(|n| !n.contains("{{"));
    let skip_crds = args.path(&["skip_crds"]).and_then(Node::as_bool) == Some(true);
    if skip_crds && template {
        return None;
    }
    let line = if task.line > 0 { task.line } else { args.line };
    Some(Item {
        at: Span::new(rel, line),
        via: format!("Ansible task {module} (release {release}, chart {chart_ref})"),
        provides: Provides::Chart {
            chart,
            namespace,
            crds_only: template,
        },
    })
}

/// The bootstrap reader of Ansible Helm tasks.
#[derive(Debug)]
pub struct Ansible;

impl super::Reader for Ansible {
    fn read(&self, cx: &super::ReadCx) -> Vec<super::Item> {
        read(cx.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_tasks_in_plays_blocks_and_roles() {
        let index = RepoIndex::from_memory(&[(
            "ansible/k3s.yaml",
            "\
- hosts: all
  tasks:
    - name: Install Cilium
      kubernetes.core.helm:
        release_name: cilium
        chart_ref: cilium/cilium
        namespace: kube-system
    - block:
        - name: operator CRDs
          kubernetes.core.helm_template:
            chart_ref: oci://ghcr.io/grafana/helm-charts/grafana-operator
            include_crds: true
            output_dir: /tmp/out
        - name: gone
          kubernetes.core.helm:
            name: old
            chart_ref: repo/old
            state: absent
        - name: templated
          kubernetes.core.helm:
            name: x
            chart_ref: \"{{ chart }}\"
",
        )]);
        let items = read(&index);
        assert_eq!(items.len(), 2, "{items:?}");
        assert_eq!(
            items[0].provides,
            Provides::Chart {
                chart: "cilium".into(),
                namespace: Some("kube-system".into()),
                crds_only: false
            }
        );
        assert_eq!(
            items[1].provides,
            Provides::Chart {
                chart: "grafana-operator".into(),
                namespace: None,
                crds_only: true
            }
        );
        assert_eq!(items[0].at.line, 3);
    }
}
