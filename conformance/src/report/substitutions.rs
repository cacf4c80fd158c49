//! `conformance substitutions`: the postBuild substitution audit, one line
//! per tier in the seed's format (`path=./platform-config-cdi files=2
//! defined=0 hazards=0`), every tier included, then the hazards and the
//! unaudited tokens with file:line.

use std::fmt::Write as _;

use crate::model::Cluster;
use crate::postbuild::HazardKind;

/// The audit of the given clusters.
pub fn render(clusters: &[&Cluster]) -> String {
    let mut out = String::new();
    let mut details = String::new();
    for cluster in clusters {
        for tier in cluster.tiers.values() {
            let a = &tier.substitution;
            let label = cluster.tier_label(&tier.id);
            let _ = writeln!(
                out,
                "path={} files={} defined={} hazards={} cluster={} kustomization={} postBuild={}{}",
                tier.display_path(),
                tier.files_read,
                a.defined.len(),
                a.hazards.len(),
                cluster.name,
                label,
                a.post_build,
                if a.unaudited.is_empty() {
                    String::new()
                } else {
                    format!(" unaudited={}", a.unaudited.len())
                },
            );
            for h in &a.hazards {
                let place =
                    h.at.as_ref()
                        .map_or_else(|| tier.defined_at.to_string(), ToString::to_string);
                let what = match &h.kind {
                    HazardKind::Undefined { name } => format!("${{{name}}} undefined, no default"),
                    HazardKind::Unparsable {
                        expression,
                        message,
                    } => format!("`{expression}`: {message}"),
                    HazardKind::Misleading { name, op } => {
                        format!("${{{name}{op}…}} is a plain default in Flux")
                    }
                    HazardKind::InvalidName { name, source } => {
                        format!("invalid variable name `{name}` from {source}")
                    }
                    HazardKind::BadSubstring { name } => {
                        format!("negative substring length on ${{{name}}}")
                    }
                    HazardKind::InvalidYaml { written, message } => {
                        format!("`{written}` is not YAML once substituted: {message}")
                    }
                };
                let object = h
                    .object
                    .as_ref()
                    .map(|o| format!(" {o}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    details,
                    "  hazard {}/{label}{object} at {place}: {what}",
                    cluster.name
                );
            }
            for (object, at, name) in &a.unaudited {
                let place = at
                    .as_ref()
                    .map_or_else(|| tier.defined_at.to_string(), ToString::to_string);
                let _ = writeln!(
                    details,
                    "  unaudited {}/{label} {object} at {place}: ${{{name}}} (no postBuild)",
                    cluster.name
                );
            }
        }
    }
    if !details.is_empty() {
        out.push('\n');
        out.push_str(&details);
    }
    out
}
