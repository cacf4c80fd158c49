//! OpenShift and OKD: the distribution installs, before Flux, the API groups
//! of its own operators (cluster configuration, security context
//! constraints, routes, the machine config operator), Operator Lifecycle
//! Manager, the cluster monitoring operator's Prometheus Operator kinds,
//! OVN-Kubernetes and Multus, the CSI snapshot controller, and the
//! `openshift-*` namespaces its cluster version operator creates.
//!
//! The repository shows it runs OpenShift when a cluster renders objects of
//! the cluster-configuration APIs (`config.openshift.io`,
//! `operator.openshift.io`, `machineconfiguration.openshift.io`, which
//! nothing but OpenShift serves, and which no CRD in git provides), or when
//! it holds an installer configuration (an `install-config.yaml`, an
//! `AgentConfig`).
//! Facts from the OpenShift/OKD 4 documentation ("Understanding the
//! Cluster Version Operator", the API reference index of 4.x).

use super::{Item, Provides};
use crate::model::{Model, Span};
use crate::repo::{Kind, RepoIndex};

/// Groups only OpenShift serves: an object of one is a sign of OpenShift.
const SIGNS: &[&str] = &[
    "config.openshift.io",
    "operator.openshift.io",
    "machineconfiguration.openshift.io",
];

/// API groups an OpenShift 4 cluster serves from installation.
const GROUPS: &[&str] = &[
    "apps.openshift.io",
    "authorization.openshift.io",
    "autoscaling.openshift.io",
    "build.openshift.io",
    "cloudcredential.openshift.io",
    "config.openshift.io",
    "console.openshift.io",
    "controlplane.operator.openshift.io",
    "helm.openshift.io",
    "image.openshift.io",
    "imageregistry.operator.openshift.io",
    "ingress.operator.openshift.io",
    "machine.openshift.io",
    "machineconfiguration.openshift.io",
    "monitoring.openshift.io",
    "network.openshift.io",
    "oauth.openshift.io",
    "operator.openshift.io",
    "project.openshift.io",
    "quota.openshift.io",
    "route.openshift.io",
    "samples.operator.openshift.io",
    "security.openshift.io",
    "template.openshift.io",
    "tuned.openshift.io",
    "user.openshift.io",
    // Operator Lifecycle Manager.
    "operators.coreos.com",
    "packages.operators.coreos.com",
    // The cluster monitoring operator's Prometheus Operator.
    "monitoring.coreos.com",
    // OVN-Kubernetes (the default network plugin) and Multus.
    "k8s.ovn.org",
    "k8s.cni.cncf.io",
    "whereabouts.cni.cncf.io",
    // The CSI snapshot controller.
    "snapshot.storage.k8s.io",
];

/// Namespaces the cluster version operator creates.
const NAMESPACES: &[&str] = &[
    "openshift",
    "openshift-apiserver",
    "openshift-authentication",
    "openshift-cloud-credential-operator",
    "openshift-cluster-machine-approver",
    "openshift-cluster-node-tuning-operator",
    "openshift-cluster-samples-operator",
    "openshift-cluster-storage-operator",
    "openshift-cluster-version",
    "openshift-config",
    "openshift-config-managed",
    "openshift-config-operator",
    "openshift-console",
    "openshift-console-operator",
    "openshift-controller-manager",
    "openshift-dns",
    "openshift-dns-operator",
    "openshift-etcd",
    "openshift-image-registry",
    "openshift-infra",
    "openshift-ingress",
    "openshift-ingress-canary",
    "openshift-ingress-operator",
    "openshift-kube-apiserver",
    "openshift-kube-controller-manager",
    "openshift-kube-scheduler",
    "openshift-machine-api",
    "openshift-machine-config-operator",
    "openshift-marketplace",
    "openshift-monitoring",
    "openshift-multus",
    "openshift-network-diagnostics",
    "openshift-network-operator",
    "openshift-node",
    "openshift-oauth-apiserver",
    "openshift-operator-lifecycle-manager",
    "openshift-operators",
    "openshift-ovn-kubernetes",
    "openshift-user-workload-monitoring",
];

/// What OpenShift installs (its API groups and `openshift-*` namespaces), located where
/// the repository shows it runs OpenShift; nothing when it does not.
pub fn read(index: &RepoIndex, model: &Model) -> Vec<Item> {
    let Some((at, why)) = evidence(index, model) else {
        return Vec::new();
    };
    let via = format!("OpenShift ({why})");
    let item = |provides| Item {
        at: at.clone(),
        via: via.clone(),
        provides,
    };
    GROUPS
        .iter()
        .map(|g| item(Provides::Group((*g).to_string())))
        .chain(
            NAMESPACES
                .iter()
                .map(|n| item(Provides::Namespace((*n).to_string()))),
        )
        .collect()
}

/// Where the repository shows it runs OpenShift, and how.
fn evidence(index: &RepoIndex, model: &Model) -> Option<(Span, String)> {
    // An installer configuration.
    for (rel, kind) in index.below("") {
        if *kind != Kind::File || !(rel.ends_with(".yaml") || rel.ends_with(".yml")) {
            continue;
        }
        let Some(Ok(docs)) = index.file(rel).map(|f| f.docs()) else {
            continue;
        };
        for d in docs {
            let k = d.str_at(&["kind"]).unwrap_or_default();
            if k == "AgentConfig" && d.str_at(&["apiVersion"]).is_some() {
                return Some((Span::new(rel, d.line), "an installer AgentConfig".into()));
            }
            // install-config.yaml has no kind: its installer keys say it.
            if k.is_empty()
                && ["baseDomain", "controlPlane", "platform", "metadata"]
                    .iter()
                    .all(|key| d.get(key).is_some())
            {
                return Some((Span::new(rel, d.line), "an installer install-config".into()));
            }
        }
    }
    // Objects of its cluster-configuration APIs that no CRD in git defines.
    let defined = |group: &str| {
        model
            .clusters
            .iter()
            .flat_map(|c| c.tiers.values())
            .any(|t| {
                t.objects().iter().any(|o| {
                    o.id.kind == "CustomResourceDefinition"
                        && o.body.str_at(&["spec", "group"]).as_deref() == Some(group)
                })
            })
    };
    let mut signs: Vec<(&crate::model::Object, &str)> = model
        .clusters
        .iter()
        .flat_map(|c| c.tiers.values())
        .flat_map(|t| t.objects())
        .filter_map(|o| SIGNS.iter().find(|g| o.id.group == **g).map(|g| (o, *g)))
        .filter(|(_, g)| !defined(g))
        .collect();
    signs.sort_by(|a, b| a.0.source.cmp(&b.0.source));
    let (o, g) = signs.first()?;
    let at = o.source.clone().unwrap_or_else(|| Span::new("", 0));
    Some((at, format!("the repository configures {g}/{}", o.id.kind)))
}

/// The bootstrap reader of OpenShift/OKD and OLM subscriptions.
#[derive(Debug)]
pub struct OpenShift;

impl super::Reader for OpenShift {
    fn read(&self, cx: &super::ReadCx) -> Vec<super::Item> {
        read(cx.index, cx.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_installer_configuration_shows_openshift() {
        let index = RepoIndex::from_memory(&[(
            "install/agent-config.yaml",
            "apiVersion: v1beta1\nkind: AgentConfig\nmetadata:\n  name: okd\n",
        )]);
        let model = Model {
            repo: "/".into(),
            clusters: Vec::new(),
            notes: Vec::new(),
            unreferenced: Vec::new(),
            checkouts: Vec::new(),
        };
        let items = read(&index, &model);
        assert!(
            items
                .iter()
                .any(|i| i.provides == Provides::Group("route.openshift.io".into()))
        );
        assert!(
            items
                .iter()
                .any(|i| i.provides == Provides::Namespace("openshift-marketplace".into()))
        );
        assert!(items[0].via.contains("AgentConfig"), "{}", items[0].via);
        let index = RepoIndex::from_memory(&[(
            "install/install-config.yaml",
            "apiVersion: v1\nbaseDomain: example.com\ncontrolPlane:\n  name: master\nmetadata:\n  name: okd\nplatform:\n  none: {}\n",
        )]);
        assert!(!read(&index, &model).is_empty());
        let index = RepoIndex::from_memory(&[(
            "install/other.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
        )]);
        assert!(read(&index, &model).is_empty());
    }
}
