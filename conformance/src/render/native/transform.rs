//! The builtin transformers, in kustomize's order (kusttarget_configplugin.go
//! configureBuiltinTransformers).

use super::fields::{FieldSpec, set_pairs, visit};
use super::load::Kustomization;
use super::patch::{self, Patch, Selector};
use super::{Res, is_cluster_scoped, same_id};
use crate::yaml::{Node, Value};

pub fn run(
    k: &Kustomization,
    tree: &crate::render::Tree,
    dir: &str,
    file: &str,
    acc: &mut Vec<Res>,
) -> Result<(), String> {
    let at = |n: &Node| format!("{file}:{}", n.line);
    // 1. patchesStrategicMerge: paths or inline documents, matched by id.
    for entry in &k.patches_strategic_merge {
        let text = entry.as_scalar_string().unwrap_or_default();
        let is_file =
            !text.contains('\n') && tree.resolve(dir, &text).is_ok_and(|p| tree.is_file(&p));
        let text = if is_file {
            patch::read_patch_file(tree, dir, file, &text, entry.line)?
        } else {
            text
        };
        match patch::parse(&text, &at(entry))? {
            Patch::Strategic(docs) => {
                for doc in docs {
                    apply_by_id(acc, &doc, &at(entry), false, false)?;
                }
            }
            Patch::Json(_) => {
                return Err(format!(
                    "{}: patchesStrategicMerge entry is a JSON patch",
                    at(entry)
                ));
            }
        }
        acc.retain(|r| !matches!(r.node.value, Value::Null));
    }
    // 2. patches.
    for entry in &k.patches {
        let text = match (entry.str_at(&["patch"]), entry.str_at(&["path"])) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{}: patch and path can't be set at the same time",
                    at(entry)
                ));
            }
            (Some(p), None) => p.trim().to_string(),
            (None, Some(path)) => patch::read_patch_file(tree, dir, file, &path, entry.line)?,
            (None, None) => {
                return Err(format!("{}: must specify one of patch and path", at(entry)));
            }
        };
        let what = entry
            .str_at(&["path"])
            .map_or_else(|| at(entry), |p| format!("{p} (from {})", at(entry)));
        let allow_name = entry
            .path(&["options", "allowNameChange"])
            .and_then(Node::as_bool)
            .unwrap_or(false);
        let allow_kind = entry
            .path(&["options", "allowKindChange"])
            .and_then(Node::as_bool)
            .unwrap_or(false);
        let target = entry
            .get("target")
            .map(Selector::parse)
            .transpose()
            .map_err(|e| format!("{}: {e}", at(entry)))?;
        if text.trim().is_empty()
            || text
                .lines()
                .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            continue; // an empty patch is a no-op (kustomize 5.8)
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
                    ));
                }
                for r in acc.iter_mut().filter(|r| sel.matches(r)) {
                    patch::apply_strategic(r, &docs[0], allow_name, allow_kind)
                        .map_err(|e| format!("{what}: {e}"))?;
                }
            }
            (Patch::Json(_), None) => {
                return Err(format!("{what}: must specify a target for JSON patch"));
            }
            (Patch::Json(ops), Some(sel)) => {
                for r in acc.iter_mut().filter(|r| sel.matches(r)) {
                    patch::apply_json(r, &ops).map_err(|e| format!("{what}: {e}"))?;
                }
            }
        }
        acc.retain(|r| !matches!(r.node.value, Value::Null));
    }
    // 3. namespace.
    if let Some(ns) = &k.namespace {
        namespace(acc, ns)?;
    }
    // 4, 5. namePrefix, nameSuffix.
    if let Some(prefix) = k.name_prefix.as_deref().filter(|p| !p.is_empty()) {
        affix(acc, prefix, true);
    }
    if let Some(suffix) = k.name_suffix.as_deref().filter(|p| !p.is_empty()) {
        affix(acc, suffix, false);
    }
    // 6. labels entries, then commonLabels.
    for entry in &k.labels {
        let pairs = pairs(entry.get("pairs"));
        let mut specs: Vec<FieldSpec> = vec![FieldSpec::any("metadata/labels", true)];
        if entry.get("includeSelectors").and_then(Node::as_bool) == Some(true) {
            specs.extend_from_slice(COMMON_LABELS);
        } else if entry.get("includeTemplates").and_then(Node::as_bool) == Some(true) {
            specs.extend_from_slice(TEMPLATE_LABELS);
        }
        if entry.get("fields").is_some() {
            return Err(format!("unsupported: labels[].fields in {}", at(entry)));
        }
        for r in acc.iter_mut() {
            let (group, kind) = (r.group(), r.kind());
            set_pairs(&mut r.node, &group, &kind, &specs, &pairs);
        }
    }
    if let Some(labels) = &k.common_labels {
        let pairs = pairs(Some(labels));
        for r in acc.iter_mut() {
            let (group, kind) = (r.group(), r.kind());
            set_pairs(
                &mut r.node,
                &group,
                &kind,
                &[FieldSpec::any("metadata/labels", true)],
                &pairs,
            );
            set_pairs(&mut r.node, &group, &kind, COMMON_LABELS, &pairs);
        }
    }
    // 7. commonAnnotations.
    if let Some(annotations) = &k.common_annotations {
        let pairs = pairs(Some(annotations));
        for r in acc.iter_mut() {
            let (group, kind) = (r.group(), r.kind());
            set_pairs(&mut r.node, &group, &kind, COMMON_ANNOTATIONS, &pairs);
        }
    }
    // 8. patchesJson6902.
    for entry in &k.patches_json6902 {
        let sel = entry
            .get("target")
            .map(Selector::parse)
            .transpose()
            .map_err(|e| format!("{}: {e}", at(entry)))?
            .ok_or_else(|| format!("{}: must specify a target for JSON patch", at(entry)))?;
        let text = match (entry.str_at(&["patch"]), entry.str_at(&["path"])) {
            (Some(p), _) => p,
            (None, Some(path)) => patch::read_patch_file(tree, dir, file, &path, entry.line)?,
            (None, None) => {
                return Err(format!("{}: must specify one of patch and path", at(entry)));
            }
        };
        let Patch::Json(ops) = patch::parse(&text, &at(entry))? else {
            return Err(format!(
                "{}: patchesJson6902 entry is not a JSON patch",
                at(entry)
            ));
        };
        for r in acc.iter_mut().filter(|r| sel.matches(r)) {
            patch::apply_json(r, &ops).map_err(|e| format!("{}: {e}", at(entry)))?;
        }
    }
    // 9. replicas.
    for entry in &k.replicas {
        let name = entry.str_at(&["name"]).unwrap_or_default();
        let count = match entry.get("count").map(|n| &n.value) {
            Some(Value::Int(i)) => *i,
            _ => return Err(format!("{}: replicas count must be an integer", at(entry))),
        };
        let mut matched = false;
        for r in acc.iter_mut() {
            let kinds = [
                "Deployment",
                "ReplicationController",
                "ReplicaSet",
                "StatefulSet",
            ];
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
                "{}: resource with name {name} does not match a config with the following GVK [apps/v1, Kind=Deployment …]",
                at(entry)
            ));
        }
    }
    // 10. images.
    for entry in &k.images {
        images(acc, entry).map_err(|e| format!("{}: {e}", at(entry)))?;
    }
    // 11. replacements.
    if !k.replacements.is_empty() {
        super::generate::replacements(acc, &k.replacements, tree, dir, file)?;
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
) -> Result<(), String> {
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
            .map_err(|e| format!("{what}: {e}")),
        [] => Err(format!(
            "{what}: no resource matches strategic merge patch \"{}\"",
            want.text()
        )),
        _ => Err(format!(
            "{what}: multiple matches for strategic merge patch \"{}\"",
            want.text()
        )),
    }
}

fn pairs(node: Option<&Node>) -> Vec<(String, String)> {
    node.map(Node::as_map)
        .unwrap_or_default()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_scalar_string().unwrap_or_default()))
        .collect()
}

fn namespace(acc: &mut [Res], ns: &str) -> Result<(), String> {
    for r in acc.iter_mut() {
        let (api, kind) = (r.api_version(), r.kind());
        if matches!(r.node.value, Value::Map(ref m) if m.is_empty()) {
            continue;
        }
        let before = r.id();
        if kind == "Namespace" && api == "v1" {
            if r.name() != ns {
                r.store_previous();
                r.set_name(ns);
            }
            continue;
        }
        if !is_cluster_scoped(&api, &kind) {
            if before.namespace != ns {
                r.store_previous();
            }
            r.node
                .map_entry("metadata")
                .set("namespace", Node::new(Value::String(ns.to_string())));
        }
        if kind == "APIService" {
            visit(&mut r.node, "spec/service", false, &mut |svc| {
                svc.set("namespace", Node::new(Value::String(ns.to_string())));
            });
        }
        if (kind == "RoleBinding" || kind == "ClusterRoleBinding")
            && let Some(Value::Seq(subjects)) = r.node.get("subjects").map(|s| s.value.clone())
        {
            let updated: Vec<Node> = subjects
                .into_iter()
                .map(|mut s| {
                    if s.str_at(&["name"]).as_deref() == Some("default") {
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
            ));
        }
        seen.push(id);
    }
    Ok(())
}

fn affix(acc: &mut [Res], text: &str, prefix: bool) {
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
fn images(acc: &mut [Res], entry: &Node) -> Result<(), String> {
    let name = entry.str_at(&["name"]).unwrap_or_default();
    let new_name = entry.str_at(&["newName"]);
    let new_tag = entry.str_at(&["newTag"]);
    let digest = entry.str_at(&["digest"]);
    let tag_suffix = entry.str_at(&["tagSuffix"]);
    let re = regex::Regex::new(&format!(
        r"^{name}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$"
    ))
    .map_err(|e| format!("image name `{name}` is not a valid pattern: {e}"))?;
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
pub const COMMON_LABELS: &[FieldSpec] = &[
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
pub const TEMPLATE_LABELS: &[FieldSpec] = &[
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
pub const COMMON_ANNOTATIONS: &[FieldSpec] = &[
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
