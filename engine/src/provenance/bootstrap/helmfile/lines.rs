//! The fallback for a helmfile that does not read as YAML even once
//! rendered (a template that builds its structure): releases taken line by
//! line, their literal `name`, `namespace` and `chart` only.

use super::state::Release;

/// The releases of a helmfile's text, line by line.
pub fn releases(rel: &str, text: &str) -> Vec<Release> {
    let mut out: Vec<Release> = Vec::new();
    let mut inside = false;
    let mut item_indent: Option<usize> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 0 {
            inside = line.starts_with("releases:");
            item_indent = None;
            continue;
        }
        if !inside {
            continue;
        }
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("- ")
            && item_indent.is_none_or(|i| i == indent)
        {
            item_indent = Some(indent);
            out.push(Release {
                file: rel.to_string(),
                line: n as u32 + 1,
                name: String::new(),
                namespace: None,
                chart: None,
                crds: true,
                create_namespace: true,
                hooks: Vec::new(),
                flux: None,
                values: Vec::new(),
            });
            field(rest, out.last_mut().expect("just pushed"));
            continue;
        }
        if let (Some(i), Some(r)) = (item_indent, out.last_mut())
            && indent == i + 2
        {
            field(t, r);
        }
    }
    out.retain(|r| !r.name.is_empty());
    out
}

fn field(text: &str, r: &mut Release) {
    let Some((key, value)) = text.split_once(':') else {
        return;
    };
    let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
    let literal = !value.is_empty() && !value.contains("{{");
    match key.trim() {
        "name" if literal => r.name = value.to_string(),
        "namespace" if literal => r.namespace = Some(value.to_string()),
        "chart" if literal => r.chart = Some(crate::provenance::chart::short_name(value)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_read_line_by_line() {
        let text = "---\nhelmDefaults:\n  wait: true\nreleases:\n  - name: cilium\n    namespace: kube-system\n    chart: oci://ghcr.io/home-operations/charts-mirror/cilium\n    hooks:\n      - events: [postsync]\n        command: kubectl\n  - name: coredns\n    namespace: kube-system\n    chart: '{{ .Values.x }}'\n    needs:\n      - kube-system/cilium\n";
        let r = releases("h.yaml", text);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].chart.as_deref(), Some("cilium"));
        assert_eq!(r[0].line, 5);
        assert_eq!(r[1].name, "coredns");
        assert_eq!(r[1].chart, None);
    }
}
