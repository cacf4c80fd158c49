//! The builtin transformers kustomize runs for a kustomization's own fields
//! and for `transformers:` entries alike: patches, namespace, name affixes,
//! labels and annotations, replicas, images. `steps.rs` runs them in
//! kustomize's order.

use super::fields::{FieldSpec, set_pairs, visit};
use super::patch::{self, Patch, Selector};
use super::{Res, is_cluster_scoped, same_id};
use crate::render::Error;
use crate::yaml::{Node, Value};

/// Where the steps read files from, and which kustomization file they
/// belong to (for messages).
pub struct Cx<'t> {
    pub tree: &'t crate::render::Tree<'t>,
    pub dir: &'t str,
    pub file: &'t str,
}

impl Cx<'_> {
    pub(super) fn at(&self, n: &Node) -> String {
        format!("{}:{}", self.file, n.line)
    }
}

/// Sets `pairs` at `specs` in every resource (labels, annotations).
pub(crate) fn set_all(acc: &mut [Res], specs: &[FieldSpec], pairs: &[(String, String)]) {
    for r in acc.iter_mut() {
        let (group, kind) = (r.group(), r.kind());
        set_pairs(&mut r.node, &group, &kind, specs, pairs);
    }
}

/// One `patchesStrategicMerge` entry: a path or an inline document,
/// matched by id.
pub(crate) fn strategic_merge_entry(
    cx: &Cx,
    acc: &mut Vec<Res>,
    entry: &Node,
) -> Result<(), Error> {
    let text = entry.as_scalar_string().unwrap_or_default();
    let is_file = !text.contains('\n')
        && cx
            .tree
            .resolve(cx.dir, &text)
            .is_ok_and(|p| cx.tree.is_file(&p));
    let text = if is_file {
        patch::read_patch_file(cx.tree, cx.dir, cx.file, &text, entry.line)?
    } else {
        text
    };
    match patch::parse(&text, &cx.at(entry))? {
        Patch::Strategic(docs) => {
            for doc in docs {
                apply_by_id(acc, &doc, &cx.at(entry), false, false)?;
            }
        }
        Patch::Json(_) => {
            return Err(format!(
                "{}: patchesStrategicMerge entry is a JSON patch",
                cx.at(entry)
            )
            .into());
        }
    }
    acc.retain(|r| !matches!(r.node.value, Value::Null));
    Ok(())
}

/// One `patches` entry (`patch` or `path`, optional `target`, `options`).
pub(crate) fn patch_entry(cx: &Cx, acc: &mut Vec<Res>, entry: &Node) -> Result<(), Error> {
    // PatchTransformer.Config trims `patch` first: an empty or blank one
    // is no patch at all ("must specify one of patch and path", with a
    // target or without). An empty *file* is another matter: it parses
    // as no strategic-merge patch and the entry does nothing (kustomize
    // 5.8, which kustomize-controller 1.9 pins; 5.5 wanted a target).
    let inline = entry.str_at(&["patch"]).filter(|p| !p.trim().is_empty());
    let text = match (inline, entry.str_at(&["path"])) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "{}: patch and path can't be set at the same time",
                cx.at(entry)
            )
            .into());
        }
        (Some(p), None) => p.trim().to_string(),
        (None, Some(path)) => patch::read_patch_file(cx.tree, cx.dir, cx.file, &path, entry.line)?,
        (None, None) => {
            return Err(format!("{}: must specify one of patch and path", cx.at(entry)).into());
        }
    };
    let what = entry
        .str_at(&["path"])
        .map_or_else(|| cx.at(entry), |p| format!("{p} (from {})", cx.at(entry)));
    let option = |key: &str| {
        entry
            .path(&["options", key])
            .and_then(Node::as_bool)
            .unwrap_or(false)
    };
    let (allow_name, allow_kind) = (option("allowNameChange"), option("allowKindChange"));
    let target = entry
        .get("target")
        .map(Selector::parse)
        .transpose()
        .map_err(|e| Error::from(format!("{}: {e}", cx.at(entry))))?;
    if text.trim().is_empty()
        || text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Ok(()); // an empty patch is a no-op (kustomize 5.8)
    }
    match (patch::parse(&text, &what)?, target) {
        (Patch::Strategic(docs), None) => {
            for doc in docs {
                apply_by_id(acc, &doc, &what, allow_name, allow_kind)?;
            }
        }
        (Patch::Strategic(docs), Some(sel)) => {
            if docs.len() > 1 {
                return Err(format!(
                    "{what}: Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field"
                ).into());
            }
            for r in acc.iter_mut().filter(|r| sel.matches(r)) {
                patch::apply_strategic(r, &docs[0], allow_name, allow_kind)
                    .map_err(|e| Error::from(format!("{what}: {e}")))?;
            }
        }
        (Patch::Json(_), None) => {
            return Err(format!("{what}: must specify a target for JSON patch").into());
        }
        (Patch::Json(ops), Some(sel)) => {
            for r in acc.iter_mut().filter(|r| sel.matches(r)) {
                patch::apply_json(r, &ops).map_err(|e| Error::from(format!("{what}: {e}")))?;
            }
        }
    }
    acc.retain(|r| !matches!(r.node.value, Value::Null));
    Ok(())
}

/// One `patchesJson6902` entry: `target` and `path`, or the operations
/// inline (`inline`).
pub(crate) fn json6902_entry(
    cx: &Cx,
    acc: &mut [Res],
    entry: &Node,
    inline: Option<&Node>,
) -> Result<(), Error> {
    let sel = entry
        .get("target")
        .map(Selector::parse)
        .transpose()
        .map_err(|e| Error::from(format!("{}: {e}", cx.at(entry))))?
        .ok_or_else(|| {
            Error::from(format!(
                "{}: must specify a target for JSON patch",
                cx.at(entry)
            ))
        })?;
    let text = match (inline, entry.str_at(&["path"])) {
        (Some(ops), _) => match ops.as_scalar_string() {
            Some(text) => text,
            None => serde_json::to_string(&ops.to_json()).unwrap_or_default(),
        },
        (None, Some(path)) => patch::read_patch_file(cx.tree, cx.dir, cx.file, &path, entry.line)?,
        (None, None) => {
            return Err(format!("{}: must specify one of patch and path", cx.at(entry)).into());
        }
    };
    let Patch::Json(ops) = patch::parse(&text, &cx.at(entry))? else {
        return Err(format!(
            "{}: patchesJson6902 entry is not a JSON patch",
            cx.at(entry)
        )
        .into());
    };
    for r in acc.iter_mut().filter(|r| sel.matches(r)) {
        patch::apply_json(r, &ops).map_err(|e| Error::from(format!("{}: {e}", cx.at(entry))))?;
    }
    Ok(())
}

/// The kinds `replicas:` reaches (kustomize's replica field specs).
pub(crate) const REPLICA_KINDS: &[&str] = &[
    "Deployment",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
];

/// One `replicas` entry (`name`, `count`) on the given kinds.
pub fn replicas(acc: &mut [Res], entry: &Node, kinds: &[&str]) -> Result<(), Error> {
    let name = entry.str_at(&["name"]).unwrap_or_default();
    let count = match entry.get("count").map(|n| &n.value) {
        Some(Value::Int(i)) => *i,
        _ => return Err("replicas count must be an integer".into()),
    };
    let mut matched = false;
    for r in acc.iter_mut() {
        if !kinds.contains(&r.kind().as_str()) {
            continue;
        }
        let names_match = r.name() == name || r.previous.iter().any(|p| p.name == name);
        if names_match {
            matched = true;
            r.node
                .map_entry("spec")
                .set("replicas", Node::new(Value::Int(count)));
        }
    }
    if !matched {
        return Err(format!(
            "resource with name {name} does not match a config with the following GVK [apps/v1, Kind=Deployment …]"
        ).into());
    }
    Ok(())
}

/// A strategic merge patch without target: the resource whose current or
/// previous id equals the patch's.
fn apply_by_id(
    acc: &mut [Res],
    doc: &Node,
    what: &str,
    allow_name: bool,
    allow_kind: bool,
) -> Result<(), Error> {
    let probe = Res::new(doc.clone(), super::Origin::File(Default::default()));
    let want = probe.id();
    let hits: Vec<usize> = acc
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            let ids = std::iter::once(r.id()).chain(r.previous.iter().cloned());
            ids.into_iter().any(|id| {
                let mut id = id;
                if want.version.is_empty() || id.version.is_empty() {
                    id.version = want.version.clone();
                }
                same_id(&id, &want)
            })
        })
        .map(|(i, _)| i)
        .collect();
    match hits.as_slice() {
        [i] => patch::apply_strategic(&mut acc[*i], doc, allow_name, allow_kind)
            .map_err(|e| Error::from(format!("{what}: {e}"))),
        [] => Err(format!(
            "{what}: no resource matches strategic merge patch \"{}\"",
            want.text()
        )
        .into()),
        _ => Err(format!(
            "{what}: multiple matches for strategic merge patch \"{}\"",
            want.text()
        )
        .into()),
    }
}

pub fn pairs(node: Option<&Node>) -> Vec<(String, String)> {
    node.map(Node::as_map)
        .unwrap_or_default()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_scalar_string().unwrap_or_default()))
        .collect()
}

pub fn namespace(acc: &mut [Res], ns: &str) -> Result<(), Error> {
    namespace_with(acc, ns, Subjects::DefaultOnly)
}

/// Which RoleBinding/ClusterRoleBinding subjects the namespace transformer
/// sets (its `setRoleBindingSubjects`; kustomize's `namespace.Filter`
/// roleBindingHack). Subjects of accounts in the build follow them anyway,
/// through the name-reference filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subjects {
    /// `defaultOnly` (the default): subjects named `default`.
    DefaultOnly,
    /// `allServiceAccounts`: every subject of kind ServiceAccount.
    AllServiceAccounts,
    /// `none`.
    None,
}

/// The namespace transformer with a subjects mode.
pub(crate) fn namespace_with(
    acc: &mut [Res],
    ns: &str,
    subjects_mode: Subjects,
) -> Result<(), Error> {
    for r in acc.iter_mut() {
        let (api, kind) = (r.api_version(), r.kind());
        if matches!(r.node.value, Value::Map(ref m) if m.is_empty()) {
            continue;
        }
        if kind == "Namespace" && api == "v1" {
            if r.name() != ns {
                r.store_previous();
                r.set_name(ns);
            }
            continue;
        }
        if !is_cluster_scoped(&api, &kind) {
            // kustomize's NamespaceTransformer stores the previous id of
            // every object it sets, changed or not, so the name-reference
            // filter then points references at it (a ServiceAccount
            // subject without a namespace gets the account's).
            r.store_previous();
            r.node
                .map_entry("metadata")
                .set("namespace", Node::new(Value::String(ns.to_string())));
        }
        if kind == "APIService" {
            visit(&mut r.node, "spec/service", false, &mut |svc| {
                svc.set("namespace", Node::new(Value::String(ns.to_string())));
            });
        }
        // kustomize's default namespace field specs
        // (builtinpluginconsts/namespace.go): a CRD's conversion webhook
        // service, when it names a namespace (create: false).
        if kind == "CustomResourceDefinition" && api.starts_with("apiextensions.k8s.io/") {
            visit(
                &mut r.node,
                "spec/conversion/webhook/clientConfig/service/namespace",
                false,
                &mut |target| {
                    if matches!(target.value, Value::String(_) | Value::Null) {
                        target.value = Value::String(ns.to_string());
                    }
                },
            );
        }
        if (kind == "RoleBinding" || kind == "ClusterRoleBinding")
            && let Some(Value::Seq(subjects)) = r.node.get("subjects").map(|s| s.value.clone())
        {
            let updated: Vec<Node> = subjects
                .into_iter()
                .map(|mut s| {
                    let set = match subjects_mode {
                        Subjects::DefaultOnly => s.str_at(&["name"]).as_deref() == Some("default"),
                        Subjects::AllServiceAccounts => {
                            s.str_at(&["kind"]).as_deref() == Some("ServiceAccount")
                        }
                        Subjects::None => false,
                    };
                    if set {
                        s.set("namespace", Node::new(Value::String(ns.to_string())));
                    }
                    s
                })
                .collect();
            r.node.set("subjects", Node::new(Value::Seq(updated)));
        }
    }
    let mut seen: Vec<super::Id> = Vec::new();
    for r in acc.iter() {
        let id = r.id();
        if seen.iter().any(|s| same_id(s, &id)) {
            return Err(format!(
                "namespace transformation produces ID conflict: {}",
                id.text()
            )
            .into());
        }
        seen.push(id);
    }
    Ok(())
}

pub(crate) fn affix(acc: &mut [Res], text: &str, prefix: bool) {
    for r in acc.iter_mut() {
        let original = r.original();
        let skip = original.kind == "CustomResourceDefinition"
            || original.kind == "Namespace"
            || (original.kind == "APIService" && original.group == "apiregistration.k8s.io");
        if skip {
            continue;
        }
        r.store_previous();
        let name = r.name();
        if prefix {
            r.set_name(&format!("{text}{name}"));
            r.prefixes.push(text.to_string());
        } else {
            r.set_name(&format!("{name}{text}"));
            r.suffixes.push(text.to_string());
        }
    }
}

/// The images transformer: every `image` of every `containers` /
/// `initContainers` list, at any depth (CRDs excepted).
pub fn images(acc: &mut [Res], entry: &Node) -> Result<(), Error> {
    let name = entry.str_at(&["name"]).unwrap_or_default();
    let new_name = entry.str_at(&["newName"]);
    let new_tag = entry.str_at(&["newTag"]);
    let digest = entry.str_at(&["digest"]);
    let tag_suffix = entry.str_at(&["tagSuffix"]);
    let re = regex::Regex::new(&format!(
        r"^{name}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$"
    ))
    .map_err(|e| Error::from(format!("image name `{name}` is not a valid pattern: {e}")))?;
    for r in acc.iter_mut() {
        if r.kind() == "CustomResourceDefinition" {
            continue;
        }
        rewrite_images(&mut r.node, false, &mut |image: &str| -> Option<String> {
            if !re.is_match(image) {
                return None;
            }
            let (rest, old_digest) = match image.split_once('@') {
                Some((r, d)) => (r, Some(d.to_string())),
                None => (image, None),
            };
            let (base, old_tag) = match rest.rsplit_once(':') {
                Some((b, t)) if !t.contains('/') => (b, Some(t.to_string())),
                _ => (rest, None),
            };
            let base = new_name.clone().unwrap_or_else(|| base.to_string());
            let (tag, dig) = match (&new_tag, &digest) {
                (Some(t), Some(d)) => (Some(t.clone()), Some(d.clone())),
                (Some(t), None) => (Some(t.clone()), None),
                (None, Some(d)) => (None, Some(d.clone())),
                (None, None) => match &tag_suffix {
                    Some(s) => (
                        Some(format!("{}{s}", old_tag.clone().unwrap_or_default())),
                        None,
                    ),
                    None => (old_tag.clone(), old_digest.clone()),
                },
            };
            let mut out = base;
            if let Some(t) = tag {
                out.push(':');
                out.push_str(&t);
            }
            if let Some(d) = dig {
                out.push('@');
                out.push_str(&d);
            }
            Some(out)
        });
    }
    Ok(())
}

fn rewrite_images(node: &mut Node, in_containers: bool, f: &mut dyn FnMut(&str) -> Option<String>) {
    match &mut node.value {
        Value::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                if in_containers && k == "image" {
                    if let Some(new) = v.as_scalar_string().and_then(|s| f(&s)) {
                        v.value = Value::String(new);
                    }
                    continue;
                }
                let containers = k == "containers" || k == "initContainers";
                if containers && let Value::Seq(items) = &mut v.value {
                    for item in items {
                        rewrite_images(item, true, f);
                    }
                    continue;
                }
                rewrite_images(v, false, f);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|i| rewrite_images(i, false, f)),
        _ => {}
    }
}

/// commonLabels field specs (builtinpluginconsts/commonlabels.go), beyond
/// metadata/labels.
pub(crate) const COMMON_LABELS: &[FieldSpec] = &[
    FieldSpec::kind("Service", "spec/selector", true),
    FieldSpec::kind("ReplicationController", "spec/selector", true),
    FieldSpec::kind(
        "ReplicationController",
        "spec/template/metadata/labels",
        true,
    ),
    FieldSpec::kind("Deployment", "spec/selector/matchLabels", true),
    FieldSpec::kind("Deployment", "spec/template/metadata/labels", true),
    FieldSpec::kind(
        "Deployment",
        "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "Deployment",
        "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "Deployment",
        "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "Deployment",
        "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "Deployment",
        "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind("ReplicaSet", "spec/selector/matchLabels", true),
    FieldSpec::kind("ReplicaSet", "spec/template/metadata/labels", true),
    FieldSpec::kind("DaemonSet", "spec/selector/matchLabels", true),
    FieldSpec::kind("DaemonSet", "spec/template/metadata/labels", true),
    FieldSpec::group_kind("apps", "StatefulSet", "spec/selector/matchLabels", true),
    FieldSpec::kind("StatefulSet", "spec/template/metadata/labels", true),
    FieldSpec::kind(
        "StatefulSet",
        "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "StatefulSet",
        "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "StatefulSet",
        "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "StatefulSet",
        "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "StatefulSet",
        "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "StatefulSet",
        "spec/volumeClaimTemplates/metadata/labels",
        true,
    ),
    FieldSpec::kind("Job", "spec/selector/matchLabels", false),
    FieldSpec::kind("Job", "spec/template/metadata/labels", true),
    FieldSpec::kind(
        "CronJob",
        "spec/jobTemplate/spec/selector/matchLabels",
        false,
    ),
    FieldSpec::kind("CronJob", "spec/jobTemplate/metadata/labels", true),
    FieldSpec::kind(
        "CronJob",
        "spec/jobTemplate/spec/template/metadata/labels",
        true,
    ),
    FieldSpec::kind("PodDisruptionBudget", "spec/selector/matchLabels", false),
    FieldSpec::kind("NetworkPolicy", "spec/podSelector/matchLabels", false),
    FieldSpec::kind(
        "NetworkPolicy",
        "spec/ingress/from/podSelector/matchLabels",
        false,
    ),
    FieldSpec::kind(
        "NetworkPolicy",
        "spec/egress/to/podSelector/matchLabels",
        false,
    ),
];

/// `labels[].includeTemplates`: the template paths (and, in kustomize
/// 5.5-5.8, volumeClaimTemplates).
pub(crate) const TEMPLATE_LABELS: &[FieldSpec] = &[
    FieldSpec::kind(
        "ReplicationController",
        "spec/template/metadata/labels",
        true,
    ),
    FieldSpec::kind("Deployment", "spec/template/metadata/labels", true),
    FieldSpec::kind("ReplicaSet", "spec/template/metadata/labels", true),
    FieldSpec::kind("DaemonSet", "spec/template/metadata/labels", true),
    FieldSpec::kind("StatefulSet", "spec/template/metadata/labels", true),
    FieldSpec::kind(
        "StatefulSet",
        "spec/volumeClaimTemplates/metadata/labels",
        true,
    ),
    FieldSpec::kind("Job", "spec/template/metadata/labels", true),
    FieldSpec::kind("CronJob", "spec/jobTemplate/metadata/labels", true),
    FieldSpec::kind(
        "CronJob",
        "spec/jobTemplate/spec/template/metadata/labels",
        true,
    ),
];

/// commonAnnotations field specs.
pub(crate) const COMMON_ANNOTATIONS: &[FieldSpec] = &[
    FieldSpec::any("metadata/annotations", true),
    FieldSpec::kind(
        "ReplicationController",
        "spec/template/metadata/annotations",
        true,
    ),
    FieldSpec::kind("Deployment", "spec/template/metadata/annotations", true),
    FieldSpec::kind("ReplicaSet", "spec/template/metadata/annotations", true),
    FieldSpec::kind("DaemonSet", "spec/template/metadata/annotations", true),
    FieldSpec::kind("StatefulSet", "spec/template/metadata/annotations", true),
    FieldSpec::kind("Job", "spec/template/metadata/annotations", true),
    FieldSpec::kind("CronJob", "spec/jobTemplate/metadata/annotations", true),
    FieldSpec::kind(
        "CronJob",
        "spec/jobTemplate/spec/template/metadata/annotations",
        true,
    ),
];
