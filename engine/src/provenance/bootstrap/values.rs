//! A chart's values as a bootstrap step gives them (`--set`, `-f FILE`, a
//! helmfile release's `values:` and `set:`), read for what decides what the
//! release installs before Flux: the chart's own CRD switch, and the Flux
//! version a `flux-instance` release pins.
//!
//! Helm installs a chart's `crds/` unless `--skip-crds`
//! (`action.Install.SkipCRDs`); charts that template their CRDs instead
//! gate them on a value, and these are the switches of the charts the
//! catalog knows (cert-manager's `crds.enabled` and `installCRDs`,
//! external-secrets' `installCRDs`, kube-prometheus-stack's
//! `crds.enabled`, …). A switch set to false means the release provides no
//! CRDs.

use crate::yaml::{Node, Value};

/// The values that switch a chart's CRDs off when false. (`crds.keep`
/// only decides whether they outlive an uninstall.)
pub(crate) const CRD_SWITCHES: &[&str] = &[
    "crds.enabled",
    "crds.install",
    "crds.create",
    "installCRDs",
    "installCrds",
];

/// Whether a `--set`-style assignment switches the CRDs off.
pub(crate) fn set_switches_off(name: &str, value: &str) -> bool {
    CRD_SWITCHES.contains(&name.trim())
        && value.trim().trim_matches(|c| c == '"' || c == '\'') == "false"
}

/// Whether a values mapping switches the chart's CRDs off.
pub(crate) fn values_switch_off(values: &Node) -> bool {
    CRD_SWITCHES.iter().any(|switch| {
        let keys: Vec<&str> = switch.split('.').collect();
        values.path(&keys).is_some_and(|n| match &n.value {
            Value::Bool(b) => !b,
            Value::String(s) => s == "false",
            _ => false,
        })
    })
}

/// The Flux version a flux-instance chart's values pin
/// (`instance.distribution.version`).
pub(crate) fn flux_instance_version(values: &Node) -> Option<String> {
    values
        .str_at(&["instance", "distribution", "version"])
        .filter(|v| !super::helmfile::template::is_unknown(v) && !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        crate::yaml::parse_text(text).expect("yaml").remove(0)
    }

    #[test]
    fn switches() {
        assert!(values_switch_off(&node("crds:\n  enabled: false\n")));
        assert!(values_switch_off(&node("installCRDs: 'false'\n")));
        assert!(!values_switch_off(&node(
            "crds:\n  enabled: true\n  keep: false\n"
        )));
        assert!(set_switches_off("crds.enabled", "false"));
        assert!(!set_switches_off("crds.keep", "false"));
        assert_eq!(
            flux_instance_version(&node("instance:\n  distribution:\n    version: 2.7.x\n"))
                .as_deref(),
            Some("2.7.x")
        );
    }
}
