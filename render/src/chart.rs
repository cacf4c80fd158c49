//! Reading what a Helm chart installs from its files (an archive fetched
//! by [`crate::remote`], or a chart directory of the repository): the CRDs
//! of its `crds/` directory and of its templates, its subcharts' (under
//! their `condition`), and the Namespaces its templates create.
//!
//! Templates are not rendered: there is no Helm engine here. A template
//! that defines a CRD or a Namespace writes its kind, group and names
//! literally in every chart seen; the template actions (`{{ … }}`) are
//! removed and the rest is read as YAML, and the condition that wraps the
//! whole file (`{{- if .Values.crds.enabled }}`) is kept as a gate with the
//! chart's default. A condition this reader cannot evaluate (an `and`, a
//! function) leaves the gate unknown: such a CRD is probable, never the
//! ground for an error.

use conformance_core::chart::{ChartContents, ChartCrd, Gate, Gated};

use crate::yaml::Node;

/// A chart's files: paths relative to its directory, and their bytes.
type Files = Vec<(String, Vec<u8>)>;

/// How deep subcharts are read (a subchart's subchart's …).
const MAX_DEPTH: usize = 4;

/// What the chart whose files are `files` (paths relative to the chart's
/// directory, `Chart.yaml` at the top) installs; `from` says where it was
/// read. `None` when there is no `Chart.yaml`.
pub fn read(files: &[(String, Vec<u8>)], from: &str) -> Option<ChartContents> {
    read_at(files, from, 0, &[])
}

fn read_at(
    files: &[(String, Vec<u8>)],
    from: &str,
    depth: usize,
    outer: &[Gate],
) -> Option<ChartContents> {
    let text = |name: &str| {
        files
            .iter()
            .find(|(p, _)| p == name)
            .and_then(|(_, b)| std::str::from_utf8(b).ok())
    };
    let chart = yaml_doc(text("Chart.yaml")?)?;
    let values = text("values.yaml").and_then(yaml_doc);
    let mut out = ChartContents {
        name: chart.str_at(&["name"]).unwrap_or_default(),
        version: chart.str_at(&["version"]).unwrap_or_default(),
        from: from.to_string(),
        crds: Vec::new(),
        namespaces: Vec::new(),
    };
    for (path, bytes) in files {
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        if !(path.ends_with(".yaml") || path.ends_with(".yml") || path.ends_with(".tpl")) {
            continue;
        }
        if path.starts_with("crds/") {
            for doc in crate::yaml::parse_text(text).unwrap_or_default() {
                if let Some((group, kind)) = crd_of(&doc) {
                    out.crds.push(ChartCrd {
                        group,
                        kind,
                        file: path.clone(),
                        in_crds_dir: true,
                        gates: Some(outer.to_vec()),
                    });
                }
            }
        } else if path.starts_with("templates/") {
            if !text.contains("CustomResourceDefinition") && !text.contains("Namespace") {
                continue;
            }
            let gates = file_gate(text, values.as_ref()).map(|g| {
                let mut all = outer.to_vec();
                all.extend(g);
                all
            });
            for doc in template_docs(text) {
                if let Some((group, kind)) = crd_of(&doc) {
                    out.crds.push(ChartCrd {
                        group,
                        kind,
                        file: path.clone(),
                        in_crds_dir: false,
                        gates: gates.clone(),
                    });
                } else if doc.str_at(&["kind"]).as_deref() == Some("Namespace")
                    && doc.str_at(&["apiVersion"]).as_deref() == Some("v1")
                    && let Some(name) = doc.str_at(&["metadata", "name"])
                    && literal(&name)
                {
                    out.namespaces.push(Gated {
                        value: name,
                        gates: gates.clone(),
                    });
                }
            }
        }
    }
    if depth < MAX_DEPTH {
        subcharts(files, from, depth, outer, &chart, values.as_ref(), &mut out);
    }
    Some(out)
}

/// The subcharts under `charts/`: unpacked directories, and archives
/// (`charts/<name>-<version>.tgz`), each under its dependency's
/// `condition` in `Chart.yaml`.
fn subcharts(
    files: &[(String, Vec<u8>)],
    from: &str,
    depth: usize,
    outer: &[Gate],
    chart: &Node,
    values: Option<&Node>,
    out: &mut ChartContents,
) {
    let mut dirs: Vec<&str> = files
        .iter()
        .filter_map(|(p, _)| p.strip_prefix("charts/"))
        .filter_map(|rest| rest.split_once('/').map(|(d, _)| d))
        .collect();
    dirs.sort_unstable();
    dirs.dedup();
    let mut subs: Vec<(String, Files)> = dirs
        .into_iter()
        .map(|d| {
            let prefix = format!("charts/{d}/");
            let inner = files
                .iter()
                .filter_map(|(p, b)| Some((p.strip_prefix(&prefix)?.to_string(), b.clone())))
                .collect();
            (d.to_string(), inner)
        })
        .collect();
    for (path, bytes) in files {
        if let Some(name) = path.strip_prefix("charts/")
            && !name.contains('/')
            && (name.ends_with(".tgz") || name.ends_with(".tar.gz"))
            && let Ok(inner) = crate::remote::chart::unpack(bytes)
        {
            subs.push((name.to_string(), inner));
        }
    }
    for (_, inner) in subs {
        let Some(sub_chart) = inner
            .iter()
            .find(|(p, _)| p == "Chart.yaml")
            .and_then(|(_, b)| std::str::from_utf8(b).ok())
            .and_then(yaml_doc)
        else {
            continue;
        };
        let name = sub_chart.str_at(&["name"]).unwrap_or_default();
        let mut gates = outer.to_vec();
        if let Some(condition) = condition_of(chart, &name) {
            gates.push(Gate {
                default: value_at(values, &condition).unwrap_or(false),
                path: condition,
            });
        }
        if let Some(sub) = read_at(&inner, from, depth + 1, &gates) {
            for mut crd in sub.crds {
                crd.file = format!("charts/{name}/{}", crd.file);
                out.crds.push(crd);
            }
            out.namespaces.extend(sub.namespaces);
        }
    }
}

/// The `condition` of the dependency named `name` in `Chart.yaml` (the
/// first path of a comma-separated list, as Helm reads the first that
/// resolves).
fn condition_of(chart: &Node, name: &str) -> Option<String> {
    chart
        .get("dependencies")?
        .as_seq()
        .iter()
        .find(|d| {
            d.str_at(&["alias"]).as_deref() == Some(name)
                || d.str_at(&["name"]).as_deref() == Some(name)
        })?
        .str_at(&["condition"])
        .and_then(|c| c.split(',').next().map(|s| s.trim().to_string()))
        .filter(|c| !c.is_empty())
}

/// The gate of a template file whose every object is wrapped in one
/// `{{ if .Values.a.b }}` (with `-` trims): `Some(vec![])` for none,
/// `None` for a condition this reader cannot evaluate.
fn file_gate(text: &str, values: Option<&Node>) -> Option<Vec<Gate>> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("{{/*"))?;
    let Some(action) = first
        .strip_prefix("{{")
        .and_then(|a| a.strip_suffix("}}"))
        .map(|a| a.trim_matches('-').trim())
    else {
        return Some(Vec::new());
    };
    let Some(condition) = action.strip_prefix("if ") else {
        // Another action first (a `define`, a variable): no gate read.
        return Some(Vec::new());
    };
    let path = condition.trim().strip_prefix(".Values.")?;
    if !path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
    {
        return None;
    }
    Some(vec![Gate {
        path: path.to_string(),
        default: value_at(values, path).unwrap_or(false),
    }])
}

/// A boolean in the chart's values at a dotted path.
fn value_at(values: Option<&Node>, path: &str) -> Option<bool> {
    let keys: Vec<&str> = path.split('.').collect();
    values?.path(&keys)?.as_bool()
}

/// The documents of a template with its actions removed: a line that is
/// only actions goes, an action inside a line becomes a placeholder.
fn template_docs(text: &str) -> Vec<Node> {
    let mut cleaned = String::with_capacity(text.len());
    for line in text.lines() {
        let stripped = strip_actions(line);
        if stripped.trim().is_empty() && line.contains("{{") {
            continue;
        }
        cleaned.push_str(&stripped);
        cleaned.push('\n');
    }
    cleaned
        .split("\n---")
        .filter_map(|doc| crate::yaml::parse_text(doc).ok())
        .flatten()
        .collect()
}

/// A line with every `{{ … }}` replaced by `TEMPLATED` (removed when the
/// action is all the line holds).
fn strip_actions(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        match rest[start..].find("}}") {
            Some(end) => {
                out.push_str("TEMPLATED");
                rest = &rest[start + end + 2..];
            }
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    if out.trim() == "TEMPLATED" {
        String::new()
    } else {
        out
    }
}

/// A name with nothing templated in it.
fn literal(s: &str) -> bool {
    !s.contains("TEMPLATED") && !s.is_empty()
}

/// A CustomResourceDefinition's group and kind, when written literally.
fn crd_of(doc: &Node) -> Option<(String, String)> {
    if doc.str_at(&["kind"]).as_deref() != Some("CustomResourceDefinition") {
        return None;
    }
    let group = doc.str_at(&["spec", "group"])?;
    let kind = doc.str_at(&["spec", "names", "kind"])?;
    (literal(&group) && literal(&kind)).then_some((group, kind))
}

fn yaml_doc(text: &str) -> Option<Node> {
    crate::yaml::parse_text(text).ok()?.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
            .collect()
    }

    const CRD: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.acme.io
spec:
  group: acme.io
  names:
    kind: Widget
    plural: widgets
";

    #[test]
    fn crds_dir_and_gated_templates() {
        let template = format!(
            "{{{{- if .Values.crds.enabled }}}}\n{}  labels:\n    {{{{- include \"x.labels\" . | nindent 4 }}}}\n{{{{- end }}}}\n",
            CRD.replace("widgets", "gadgets")
                .replace("Widget", "Gadget")
        );
        let chart = read(
            &files(&[
                ("Chart.yaml", "name: acme\nversion: 1.2.3\n"),
                ("values.yaml", "crds:\n  enabled: true\n"),
                ("crds/widgets.yaml", CRD),
                ("templates/crds.yaml", &template),
                (
                    "templates/ns.yaml",
                    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: acme-secrets\n",
                ),
            ]),
            "test",
        )
        .unwrap();
        assert_eq!(chart.version, "1.2.3");
        assert_eq!(chart.crds.len(), 2, "{chart:?}");
        assert!(chart.crds[0].in_crds_dir);
        let gadget = chart.crds.iter().find(|c| c.kind == "Gadget").unwrap();
        assert_eq!(
            gadget.gates,
            Some(vec![Gate {
                path: "crds.enabled".into(),
                default: true
            }])
        );
        assert_eq!(chart.namespaces[0].value, "acme-secrets");
    }

    #[test]
    fn a_condition_that_cannot_be_read_leaves_the_gate_unknown() {
        let template = format!("{{{{- if and .Values.a .Values.b }}}}\n{CRD}{{{{- end }}}}\n");
        let chart = read(
            &files(&[
                ("Chart.yaml", "name: acme\nversion: 1.0.0\n"),
                ("templates/crd.yaml", &template),
            ]),
            "test",
        )
        .unwrap();
        assert_eq!(chart.crds[0].gates, None);
    }

    #[test]
    fn subcharts_carry_their_condition() {
        let chart = read(
            &files(&[
                (
                    "Chart.yaml",
                    "name: stack\nversion: 1.0.0\ndependencies:\n  - name: crds\n    condition: crds.enabled\n",
                ),
                ("values.yaml", "crds:\n  enabled: false\n"),
                ("charts/crds/Chart.yaml", "name: crds\nversion: 0.1.0\n"),
                ("charts/crds/crds/w.yaml", CRD),
            ]),
            "test",
        )
        .unwrap();
        assert_eq!(chart.crds.len(), 1);
        assert_eq!(chart.crds[0].file, "charts/crds/crds/w.yaml");
        assert_eq!(
            chart.crds[0].gates,
            Some(vec![Gate {
                path: "crds.enabled".into(),
                default: false
            }])
        );
    }
}
