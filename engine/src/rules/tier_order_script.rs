//! `tier-order-script`: a bootstrap script's hand-kept tier list must agree
//! with the graph.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::config_error::FILE_NAME;
use crate::model::{Cluster, Span};

/// `bootstrap:` in conformance.yaml: the script whose tier list must match
/// the graph.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierScript {
    /// The script (default `bootstrap/standup.sh`).
    #[serde(default = "default_script")]
    pub script: String,
    /// The bash array listing the tiers (default `TIER_ORDER`).
    #[serde(default = "default_variable")]
    pub variable: String,
    /// Clusters the script serves (default: all).
    #[serde(default)]
    pub clusters: Vec<String>,
}

/// The script read when `bootstrap.script` is not set.
pub(crate) fn default_script() -> String {
    "bootstrap/standup.sh".into()
}

/// The bash array read when `bootstrap.variable` is not set.
pub(crate) fn default_variable() -> String {
    "TIER_ORDER".into()
}

/// The `tier-order-script` rule.
#[derive(Debug)]
pub(crate) struct TierOrderScript;

impl Rule for TierOrderScript {
    fn id(&self) -> RuleId {
        RuleId::TierOrderScript
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "the bootstrap script's tier list misses a tier, names an unknown one, repeats one, or lists a tier before what it depends on"
    }
    fn example(&self) -> &'static str {
        "bootstrap/standup.sh:8: TIER_ORDER does not include platform-config-cdi, so `resume` never waits on it"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let configured = cx.settings.tier_script.cloned();
        let (script, variable, clusters) = match &configured {
            Some(b) => (b.script.clone(), b.variable.clone(), b.clusters.clone()),
            None => (default_script(), default_variable(), Vec::new()),
        };
        let Ok(text) = cx.index.read_text(&script) else {
            if configured.is_none() {
                return Vec::new();
            }
            return cx
                .model
                .clusters
                .iter()
                .map(|c| {
                    self.finding(
                        c,
                        &script,
                        Span::new(FILE_NAME, 0),
                        format!("bootstrap script {script} does not exist"),
                        "fix bootstrap.script in conformance.yaml".into(),
                    )
                })
                .collect();
        };
        let mut out = Vec::new();
        let Some((start, entries)) = bash_array(&text, &variable) else {
            for c in &cx.model.clusters {
                out.push(self.finding(c, &script, Span::new(script.clone(), 0), format!("{script} defines no bash array {variable}"), format!("define {variable}=( … ) in {script}, or set bootstrap.variable in conformance.yaml")));
            }
            return out;
        };
        for cluster in cx
            .model
            .clusters
            .iter()
            .filter(|c| clusters.is_empty() || clusters.contains(&c.name))
        {
            let names: BTreeMap<&str, &crate::model::Tier> = cluster
                .tiers
                .values()
                .map(|t| (t.id.name.as_str(), t))
                .collect();
            let mut position: BTreeMap<&str, usize> = BTreeMap::new();
            for (i, (name, line)) in entries.iter().enumerate() {
                let at = Span::new(script.clone(), *line);
                if !names.contains_key(name.as_str()) {
                    out.push(self.finding(cluster, name, at, format!("{variable} in {script} lists `{name}`, which is not a Kustomization of cluster {}", cluster.name), "remove or rename the entry".into()));
                } else if position.contains_key(name.as_str()) {
                    out.push(self.finding(
                        cluster,
                        name,
                        at,
                        format!("{variable} in {script} lists `{name}` twice"),
                        "keep one entry".into(),
                    ));
                } else {
                    position.insert(name, i);
                }
            }
            for (name, tier) in &names {
                let Some(&pos) = position.get(name) else {
                    out.push(self.finding(
                        cluster,
                        name,
                        Span::new(script.clone(), start),
                        format!("{variable} in {script} does not include {name}, so the script neither reconciles it nor waits for it"),
                        format!("add {name} to {variable}, after {}", after_what(tier, &names)),
                    ));
                    continue;
                };
                let mut before: Vec<String> = tier
                    .depends_on
                    .iter()
                    .map(|d| d.target.name.clone())
                    .collect();
                before.extend(tier.parent.as_ref().map(|p| p.name.clone()));
                for dep in before {
                    if let Some(&dep_pos) = position.get(dep.as_str())
                        && dep_pos > pos
                    {
                        out.push(self.finding(
                                cluster,
                                name,
                                Span::new(script.clone(), entries[pos].1),
                                format!("{variable} in {script} lists {name} before {dep}, which it depends on"),
                                format!("move {name} after {dep}"),
                            ));
                    }
                }
            }
        }
        out
    }
}

impl TierOrderScript {
    fn finding(
        &self,
        cluster: &Cluster,
        subject: &str,
        at: Span,
        message: String,
        fix: String,
    ) -> Finding {
        Finding::new(self, cluster.name.clone(), subject.to_string(), message).at(at).why("the script walks the tiers from its own list; a tier missing or misplaced there is skipped, fails, or is waited on before it can be Ready").fix(fix).build()
    }
}

fn after_what(tier: &crate::model::Tier, names: &BTreeMap<&str, &crate::model::Tier>) -> String {
    let deps: Vec<&str> = tier
        .depends_on
        .iter()
        .map(|d| d.target.name.as_str())
        .filter(|d| names.contains_key(d))
        .collect();
    if deps.is_empty() {
        "its parent".into()
    } else {
        deps.join(" and ")
    }
}

/// The entries of `NAME=( … )` (possibly `declare -a`/`readonly`), each with
/// its line, and the line the array starts on. Comments and quotes are
/// handled as bash does for plain words.
pub(crate) fn bash_array(text: &str, name: &str) -> Option<(u32, Vec<(String, u32)>)> {
    let lines: Vec<&str> = text.lines().collect();
    let opener = format!("{name}=(");
    let start = lines.iter().position(|l| {
        let t = l.trim_start();
        let t = t
            .strip_prefix("declare -a ")
            .or_else(|| t.strip_prefix("readonly "))
            .or_else(|| t.strip_prefix("local "))
            .unwrap_or(t);
        t.trim_start().starts_with(&opener)
    })?;
    let mut entries = Vec::new();
    let first = lines[start];
    let mut rest = &first[first.find(&opener)? + opener.len()..];
    let mut line_no = start;
    loop {
        let without_comment = match rest
            .find(" #")
            .or_else(|| rest.trim_start().starts_with('#').then_some(0))
        {
            Some(i) => &rest[..i],
            None => rest,
        };
        let (body, closed) = match without_comment.find(')') {
            Some(i) => (&without_comment[..i], true),
            None => (without_comment, false),
        };
        for word in body.split_whitespace() {
            let word = word.trim_matches(|c| c == '"' || c == '\'');
            if !word.is_empty() {
                entries.push((word.to_string(), line_no as u32 + 1));
            }
        }
        if closed {
            return Some((start as u32 + 1, entries));
        }
        line_no += 1;
        rest = lines.get(line_no)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_arrays_with_comments_quotes_and_lines() {
        let script = "#!/bin/bash\nset -e\nTIER_ORDER=(\n  flux-system   # entry\n  \"platform\" 'platform-config'\n  # apps next\n  apps)\n";
        let (start, entries) = bash_array(script, "TIER_ORDER").unwrap();
        assert_eq!(start, 3);
        let got: Vec<(&str, u32)> = entries.iter().map(|(n, l)| (n.as_str(), *l)).collect();
        assert_eq!(
            got,
            [
                ("flux-system", 4),
                ("platform", 5),
                ("platform-config", 5),
                ("apps", 7)
            ]
        );
        let (_, one_line) = bash_array("declare -a X=(a b)\n", "X").unwrap();
        assert_eq!(one_line.len(), 2);
        assert!(bash_array("Y=(a)\n", "X").is_none());
    }
}
