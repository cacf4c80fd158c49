//! `helmrelease-invalid`: a HelmRelease whose inputs helm-controller (or
//! the source-controller HelmChart it creates) refuses, so the release is
//! never installed. Whether its ConfigMaps, Secrets, chart source and
//! dependencies exist in time is the reference model's
//! ([`crate::convergence::references`]: `unresolved-reference`,
//! `cold-start-race`); this rule reads what they hold and how the release
//! names them.

mod semver;

use std::collections::{BTreeMap, BTreeSet};

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::{Cluster, Object, Span, Tier, is_sops_encrypted};
use crate::yaml::{Node, Value};

/// The rule.
#[derive(Debug)]
pub struct HelmReleaseInvalid;

impl Rule for HelmReleaseInvalid {
    fn id(&self) -> RuleId {
        RuleId::HelmReleaseInvalid
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a HelmRelease's inputs are ones helm-controller refuses: a valuesFrom key that is missing or is not YAML of a map, a post-renderer patch that does not parse, a chart source of the wrong kind, a version that is no semver constraint, a dependsOn cycle"
    }
    fn example(&self) -> &'static str {
        "HelmRelease/monitoring/grafana in apps: valuesFrom[0] key values.yaml of ConfigMap/monitoring/grafana-values is not valid YAML (line 3): helm-controller fails every install and upgrade"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for a in &cx.analyses {
            let cluster = a.cluster;
            let data = DataIndex::of(cluster);
            let releases: Vec<(&Tier, &Object)> = cluster
                .local_tiers()
                .flat_map(|t| t.objects().iter().map(move |o| (t, o)))
                .filter(|(_, o)| is_helm_release(o))
                .collect();
            for (tier, hr) in &releases {
                for problem in problems(hr, &data) {
                    out.push(self.finding(cluster, tier, hr, problem));
                }
            }
            for (tier, hr, cycle) in cycles(&releases) {
                let members = cycle.join(" → ");
                let problem = Problem {
                    line: hr
                        .body
                        .path(&["spec", "dependsOn"])
                        .map_or(0, |n| n.line),
                    what: format!(
                        "dependsOn cycle among HelmReleases: {members}; helm-controller installs none of them"
                    ),
                    why: "helm-controller installs a release only once every dependsOn release exists and is Ready (checkDependencies): each member of the loop waits for the next, forever".into(),
                    fix: "remove one dependsOn edge of the loop (usually the one that points back up)".into(),
                };
                out.push(self.finding(cluster, tier, hr, problem));
            }
        }
        out
    }
}

impl HelmReleaseInvalid {
    fn finding(&self, cluster: &Cluster, tier: &Tier, hr: &Object, problem: Problem) -> Finding {
        let label = cluster.tier_label(&tier.id);
        let at = match &hr.source {
            Some(s) if problem.line > 0 => Span::new(s.file.clone(), problem.line),
            Some(s) => s.clone(),
            None => tier.defined_at.clone(),
        };
        Finding::new(
            self,
            cluster.name.clone(),
            label.clone(),
            format!("{} in {label}: {}", hr.id, problem.what),
        )
        .object(&hr.id)
        .at(at)
        .related(tier.defined_at.clone(), format!("Kustomization {label}"))
        .why(problem.why)
        .fix(problem.fix)
        .build()
    }
}

/// One refused input of a release.
struct Problem {
    /// The line of the field at fault (0: the release).
    line: u32,
    what: String,
    why: String,
    fix: String,
}

fn is_helm_release(o: &Object) -> bool {
    o.id.group == "helm.toolkit.fluxcd.io" && o.id.kind == "HelmRelease"
}

/// Everything one release gets wrong, in field order.
fn problems(hr: &Object, data: &DataIndex) -> Vec<Problem> {
    let mut out = Vec::new();
    values_from(hr, data, &mut out);
    chart(hr, &mut out);
    post_renderers(hr, &mut out);
    out
}

/// `spec.valuesFrom`, as ChartValuesFromReferences reads it.
fn values_from(hr: &Object, data: &DataIndex, out: &mut Vec<Problem>) {
    let ns = hr.id.namespace.clone().unwrap_or_else(|| "default".into());
    let entries = hr
        .body
        .path(&["spec", "valuesFrom"])
        .map(Node::as_seq)
        .unwrap_or_default();
    for (i, entry) in entries.iter().enumerate() {
        let Some(kind) = entry.str_at(&["kind"]) else {
            continue;
        };
        if kind.contains("${") {
            continue;
        }
        if kind != "ConfigMap" && kind != "Secret" {
            out.push(Problem {
                line: entry.get("kind").map_or(entry.line, |n| n.line),
                what: format!("valuesFrom[{i}] has kind {kind}, which is neither ConfigMap nor Secret"),
                why: "helm-controller reads values only from ConfigMaps and Secrets ('unsupported values reference kind'): the release fails before any install".into(),
                fix: "use kind: ConfigMap or kind: Secret".into(),
            });
            continue;
        }
        let Some(name) = entry.str_at(&["name"]).filter(|n| !n.contains("${")) else {
            continue;
        };
        let key = entry
            .str_at(&["valuesKey"])
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| "values.yaml".into());
        let optional = entry.get("optional").and_then(Node::as_bool) == Some(true);
        let target_path = entry.str_at(&["targetPath"]).filter(|p| !p.is_empty());
        let source = format!("{kind}/{ns}/{name}");
        // Not rendered here: whether it exists is unresolved-reference's.
        let Some(object) = data.get(&kind, &ns, &name) else {
            continue;
        };
        let line = entry.line;
        let value = match read_key(object, &key) {
            Read::Opaque => continue,
            Read::Missing(keys) => {
                if !optional {
                    let has = if keys.is_empty() {
                        "it holds no key".to_string()
                    } else {
                        format!("its keys: {}", keys.join(", "))
                    };
                    out.push(Problem {
                        line: entry.get("valuesKey").map_or(line, |n| n.line),
                        what: format!("valuesFrom[{i}] names key {key} of {source}, which it does not hold ({has})"),
                        why: "helm-controller fails the release with 'key not found' before every install and upgrade (ChartValuesFromReferences)".into(),
                        fix: format!("set valuesKey to the key {source} holds, add {key} to it, or mark the entry optional: true"),
                    });
                }
                continue;
            }
            Read::Text(text) => text,
        };
        if target_path.is_some() {
            // One value, set at the path as `--set path=value` would.
            continue;
        }
        let secret = kind == "Secret";
        if let Some(problem) = not_a_values_map(&value, secret) {
            out.push(Problem {
                line,
                what: format!("valuesFrom[{i}]: key {key} of {source} {problem}"),
                why: "helm-controller reads the key as YAML whose top level is a map of values (chartutil.ReadValues); anything else fails the release with 'failed to read values data' before every install and upgrade".into(),
                fix: format!("make {key} of {source} a YAML map of chart values, or use targetPath to set it as one value"),
            });
        }
    }
}

/// Why a values text is not what ReadValues takes, if it is not.
fn not_a_values_map(text: &str, secret: bool) -> Option<String> {
    match crate::yaml::parse_documents(text) {
        Err(e) => Some(if secret {
            // A parser message may quote the value: never for a Secret.
            format!("is not valid YAML (line {})", e.line)
        } else {
            format!("is not valid YAML: {e}")
        }),
        Ok(docs) => match docs.first().map(|d| &d.value) {
            None | Some(Value::Null | Value::Map(_)) => None,
            Some(Value::Seq(_)) => Some("holds a YAML list, not a map of values".into()),
            Some(_) => Some("holds a single scalar, not a map of values".into()),
        },
    }
}

/// What a key of a ConfigMap or Secret holds, as far as the repository
/// shows it.
enum Read {
    Text(String),
    /// Not there; the keys that are.
    Missing(Vec<String>),
    /// Encrypted (SOPS) or not decodable: unknown here.
    Opaque,
}

fn read_key(object: &Object, key: &str) -> Read {
    if is_sops_encrypted(&object.body) {
        return Read::Opaque;
    }
    let secret = object.id.kind == "Secret";
    if secret && let Some(text) = object.body.str_at(&["stringData", key]) {
        return Read::Text(text);
    }
    if let Some(node) = object.body.path(&["data", key]) {
        let Some(text) = node.as_scalar_string() else {
            return Read::Opaque;
        };
        if !secret {
            return Read::Text(text);
        }
        return match decode_base64(&text).and_then(|b| String::from_utf8(b).ok()) {
            Some(t) => Read::Text(t),
            None => Read::Opaque,
        };
    }
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for field in ["data", "stringData", "binaryData"] {
        if let Some(Value::Map(entries)) = object.body.get(field).map(|n| &n.value) {
            keys.extend(entries.iter().map(|(k, _)| k.clone()));
        }
    }
    Read::Missing(keys.into_iter().collect())
}

/// Standard base64 (a Secret's `data`), padding optional; `None` when it
/// is not base64.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut buf = 0u32;
    let mut bits = 0u32;
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        buf = (buf << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
            buf &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The chart: `spec.chart` or `spec.chartRef` (one of them), its source's
/// kind and its version constraint.
fn chart(hr: &Object, out: &mut Vec<Problem>) {
    let spec = hr.body.get("spec");
    let template = spec.and_then(|s| s.path(&["chart", "spec"]));
    let chart_ref = spec.and_then(|s| s.get("chartRef"));
    match (template, chart_ref) {
        (Some(_), Some(r)) => out.push(Problem {
            line: r.line,
            what: "sets both spec.chart and spec.chartRef".into(),
            why: "the HelmRelease CRD admits exactly one of them ('either chart or chartRef must be set'): the API server rejects the release".into(),
            fix: "keep spec.chart (a chart template) or spec.chartRef (an OCIRepository, a HelmChart or an ExternalArtifact), not both".into(),
        }),
        (None, None) => {
            if spec.is_some_and(|s| s.get("chart").is_none()) {
                out.push(Problem {
                    line: spec.map_or(0, |s| s.line),
                    what: "sets neither spec.chart nor spec.chartRef".into(),
                    why: "the HelmRelease CRD needs exactly one of them ('either chart or chartRef must be set'): the API server rejects the release".into(),
                    fix: "add spec.chart.spec (chart, sourceRef, version) or spec.chartRef".into(),
                });
            }
        }
        (Some(t), None) => {
            let kind = t.str_at(&["sourceRef", "kind"]);
            if let Some(kind) = kind.as_deref()
                && !kind.contains("${")
                && !["HelmRepository", "GitRepository", "Bucket"].contains(&kind)
            {
                let instead = if ["OCIRepository", "HelmChart", "ExternalArtifact"].contains(&kind) {
                    format!("; {} is named by spec.chartRef instead", a_or_an(kind))
                } else {
                    String::new()
                };
                out.push(Problem {
                    line: t.path(&["sourceRef", "kind"]).map_or(t.line, |n| n.line),
                    what: format!(
                        "chart.spec.sourceRef names {}, which a chart template cannot use{instead}",
                        a_or_an(kind)
                    ),
                    why: "helm-controller builds a HelmChart from the template, whose source is a HelmRepository, a GitRepository or a Bucket (the CRD's enum): the release is refused".into(),
                    fix: "point chart.spec.sourceRef at a HelmRepository, GitRepository or Bucket, or use spec.chartRef for an OCIRepository, a HelmChart or an ExternalArtifact".into(),
                });
            }
            // The version selects from a HelmRepository's index (or OCI
            // tags); charts from GitRepository and Bucket ignore it.
            if kind.as_deref().is_none_or(|k| k == "HelmRepository")
                && let Some(v) = t.get("version")
                && let Some(text) = v.as_scalar_string()
                && !text.contains("${")
                && !semver::is_constraint(&text)
            {
                out.push(Problem {
                    line: v.line,
                    what: format!("chart.spec.version `{text}` is not a semver version or constraint"),
                    why: "source-controller parses it as a semver constraint (Masterminds semver.NewConstraint) to pick the chart version; it fails the HelmChart with 'invalid version/constraint format', so the release is never installed".into(),
                    fix: "write a version (1.2.3) or a constraint (>=1.2.0 <2.0.0, ~1.2, 1.x, *)".into(),
                });
            }
        }
        (None, Some(r)) => {
            if let Some(kind) = r.str_at(&["kind"])
                && !kind.contains("${")
                && !["OCIRepository", "HelmChart", "ExternalArtifact"].contains(&kind.as_str())
            {
                out.push(Problem {
                    line: r.get("kind").map_or(r.line, |n| n.line),
                    what: format!("spec.chartRef names {}, which chartRef cannot use", a_or_an(&kind)),
                    why: "spec.chartRef takes an OCIRepository, a HelmChart or an ExternalArtifact (the CRD's enum): the release is refused".into(),
                    fix: format!("use spec.chart.spec with sourceRef kind {kind}, or point chartRef at an OCIRepository, a HelmChart or an ExternalArtifact"),
                });
            }
        }
    }
}

/// The patch parser's message with its line said to be the patch's
/// (`patch: line 4: …` → `line 4 of the patch: …`).
fn patch_message(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("patch: line ")
        && let Some((line, what)) = rest.split_once(": ")
        && line.bytes().all(|b| b.is_ascii_digit())
    {
        return format!("line {line} of the patch: {what}");
    }
    message.to_string()
}

/// `a Bucket`, `an OCIRepository`.
fn a_or_an(kind: &str) -> String {
    let vowel = kind.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']);
    format!("{} {kind}", if vowel { "an" } else { "a" })
}

/// `spec.postRenderers[].kustomize`: patches that kustomize parses, with
/// valid targets; images with a name.
fn post_renderers(hr: &Object, out: &mut Vec<Problem>) {
    let renderers = hr
        .body
        .path(&["spec", "postRenderers"])
        .map(Node::as_seq)
        .unwrap_or_default();
    for (i, renderer) in renderers.iter().enumerate() {
        let Some(k) = renderer.get("kustomize") else {
            continue;
        };
        for (j, patch) in k
            .get("patches")
            .map(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let Some(text) = patch.get("patch").and_then(Node::as_scalar_string) else {
                out.push(Problem {
                    line: patch.line,
                    what: format!("postRenderers[{i}].kustomize.patches[{j}] has no patch text"),
                    why: "helm-controller's kustomize post-renderer needs each entry's patch (a strategic-merge or JSON 6902 patch); the install fails".into(),
                    fix: "write the patch under `patch: |`".into(),
                });
                continue;
            };
            if text.contains("${") {
                continue;
            }
            if let Err(e) = crate::render::native::check_patch(&text, patch.get("target")) {
                out.push(Problem {
                    line: patch.line,
                    what: format!(
                        "postRenderers[{i}].kustomize.patches[{j}]: {}",
                        patch_message(&e.message())
                    ),
                    why: "helm-controller runs kustomize over the rendered chart (postrender.BuildPostRenderers); a patch kustomize cannot parse, or a target it cannot read, fails every install and upgrade".into(),
                    fix: "make the patch a strategic-merge patch (apiVersion, kind, metadata.name) or a JSON 6902 list (op, path), and the target's fields plain names or regexes".into(),
                });
            }
        }
        for (j, image) in k
            .get("images")
            .map(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            if image.str_at(&["name"]).is_none_or(|n| n.is_empty()) {
                out.push(Problem {
                    line: image.line,
                    what: format!("postRenderers[{i}].kustomize.images[{j}] has no name"),
                    why: "kustomize's image transformer matches images by name, which the HelmRelease CRD requires: the API server rejects the release".into(),
                    fix: "name the image to replace (the chart's image, without tag)".into(),
                });
            }
        }
    }
}

/// ConfigMaps and Secrets the cluster's local tiers render, by (kind,
/// namespace, name): the first of each.
struct DataIndex<'m>(BTreeMap<(String, String, String), &'m Object>);

impl<'m> DataIndex<'m> {
    fn of(cluster: &'m Cluster) -> DataIndex<'m> {
        let mut map = BTreeMap::new();
        for tier in cluster.local_tiers() {
            for o in tier.objects() {
                if o.id.group.is_empty() && (o.id.kind == "ConfigMap" || o.id.kind == "Secret") {
                    let ns = o.id.namespace.clone().unwrap_or_else(|| "default".into());
                    map.entry((o.id.kind.clone(), ns, o.id.name.clone()))
                        .or_insert(o);
                }
            }
        }
        DataIndex(map)
    }

    fn get(&self, kind: &str, ns: &str, name: &str) -> Option<&'m Object> {
        self.0
            .get(&(kind.to_string(), ns.to_string(), name.to_string()))
            .copied()
    }
}

/// dependsOn loops among the releases: each member of each loop, with the
/// loop's names from it.
fn cycles<'m>(releases: &[(&'m Tier, &'m Object)]) -> Vec<(&'m Tier, &'m Object, Vec<String>)> {
    let key = |o: &Object| {
        (
            o.id.namespace.clone().unwrap_or_else(|| "default".into()),
            o.id.name.clone(),
        )
    };
    let index: BTreeMap<(String, String), usize> = releases
        .iter()
        .enumerate()
        .map(|(i, (_, o))| (key(o), i))
        .collect();
    let edges: Vec<Vec<usize>> = releases
        .iter()
        .map(|(_, o)| {
            let (ns, _) = key(o);
            o.body
                .path(&["spec", "dependsOn"])
                .map(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(|d| {
                    let name = d.str_at(&["name"])?;
                    let dns = d
                        .str_at(&["namespace"])
                        .filter(|n| !n.is_empty())
                        .unwrap_or_else(|| ns.clone());
                    index.get(&(dns, name)).copied()
                })
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    for component in strongly_connected(&edges) {
        let looped = component.len() > 1 || edges[component[0]].contains(&component[0]);
        if !looped {
            continue;
        }
        let names: Vec<String> = component
            .iter()
            .map(|&i| releases[i].1.id.to_string())
            .collect();
        for &i in &component {
            let (tier, o) = releases[i];
            let mut path = names.clone();
            path.push(names[0].clone());
            out.push((tier, o, path));
        }
    }
    out
}

/// Tarjan's strongly connected components, iteratively (no recursion
/// depth to exhaust), each sorted; in discovery order.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut out = Vec::new();
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut child)) = work.last_mut() {
            if *child == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = edges[v].get(*child) {
                *child += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                component.sort_unstable();
                out.push(component);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_secrets_hold_it() {
        assert_eq!(
            decode_base64("cmVwbGljYXM6IDIK").as_deref(),
            Some(&b"replicas: 2\n"[..])
        );
        assert_eq!(decode_base64("YQ==").as_deref(), Some(&b"a"[..]));
        assert_eq!(decode_base64("not base64!"), None);
    }

    #[test]
    fn values_texts_as_read_values_takes_them() {
        assert!(not_a_values_map("replicas: 2\n", false).is_none());
        assert!(not_a_values_map("", false).is_none());
        assert!(not_a_values_map("# only a comment\n", false).is_none());
        assert!(
            not_a_values_map("- a\n- b\n", false)
                .unwrap()
                .contains("list")
        );
        assert!(
            not_a_values_map("just text", false)
                .unwrap()
                .contains("scalar")
        );
        assert!(
            not_a_values_map("a: \"unclosed\n", false)
                .unwrap()
                .contains("not valid YAML")
        );
        let secret = not_a_values_map("password: \"hunter2\n", true).unwrap();
        assert!(!secret.contains("hunter2"), "{secret}");
    }

    #[test]
    fn loops_and_self_loops_are_components() {
        let comps = strongly_connected(&[vec![1], vec![0], vec![2], vec![]]);
        assert!(comps.contains(&vec![0, 1]), "{comps:?}");
        assert!(comps.contains(&vec![2]));
        assert!(comps.contains(&vec![3]));
    }
}
