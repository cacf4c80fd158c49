//! The helm and helmfile stages: `helm install|upgrade --install RELEASE
//! CHART` (its namespace and whether its CRDs are installed), and
//! `helmfile -f FILE SUBCOMMAND` (the helmfile it names, and whether it
//! syncs it).

use super::super::expand::resolve;
use super::super::words::flag;
use super::{Scan, Scripts, Target};

/// helmfile's subcommands that read a helmfile (`helmfile --help`): a
/// stage with one of them after the word `helmfile` runs helmfile.
pub(super) const HELMFILE_SUBCOMMANDS: &[&str] = &[
    "apply",
    "build",
    "deps",
    "destroy",
    "diff",
    "fetch",
    "lint",
    "list",
    "repos",
    "status",
    "sync",
    "template",
    "test",
    "write-values",
];

/// Helm's flags that take a value (the next word, or `=VALUE`).
const HELM_VALUE_FLAGS: &[&str] = &[
    "-n",
    "--namespace",
    "-f",
    "--values",
    "--set",
    "--set-string",
    "--set-file",
    "--set-json",
    "--set-literal",
    "--version",
    "--repo",
    "--kube-context",
    "--kubeconfig",
    "--timeout",
    "--post-renderer",
    "--post-renderer-args",
    "--username",
    "--password",
    "--description",
    "--ca-file",
    "--cert-file",
    "--key-file",
    "--history-max",
    "--labels",
    "-l",
];

/// `helm install RELEASE CHART` or `helm upgrade --install RELEASE CHART`
/// (`-i`), with its namespace and whether its CRDs are installed
/// (`--skip-crds`, or the chart's CRD switch set to false by `--set` or a
/// `-f`/`--values` file). An
/// `upgrade` without `--install` changes a release that already exists and
/// installs nothing on a cold cluster; `helm repo add`, `template`, `pull`
/// install nothing either.
pub(super) fn helm_release(
    stage: &[String],
    values_file: impl Fn(&str) -> Option<crate::yaml::Node>,
) -> Option<Target> {
    let h = stage
        .iter()
        .position(|w| w == "helm" || w.ends_with("/helm"))?;
    let args = &stage[h + 1..];
    let verb = args.iter().position(|w| !w.starts_with('-'))?;
    let install = match args[verb].as_str() {
        "install" => true,
        "upgrade" => args.iter().any(|w| w == "--install" || w == "-i"),
        _ => false,
    };
    if !install {
        return None;
    }
    let mut positional = Vec::new();
    let mut i = 0;
    let rest = &args[verb + 1..];
    while i < rest.len() {
        let w = &rest[i];
        if w.starts_with('-') {
            if HELM_VALUE_FLAGS.contains(&w.as_str()) {
                i += 1;
            }
        } else {
            positional.push(w.clone());
        }
        i += 1;
    }
    let chart = positional.get(1)?;
    let name = chart.trim_end_matches('/').rsplit('/').next()?.to_string();
    if name.is_empty() || name.contains('$') || name.contains("{{") || name.ends_with(".tgz") {
        return None;
    }
    let namespace =
        flag(rest, &["-n"], "--namespace").filter(|n| !n.contains('$') && !n.contains("{{"));
    let sets: Vec<String> = flag_values(rest, &["--set", "--set-string"])
        .iter()
        .flat_map(|v| v.split(',').map(str::to_string))
        .collect();
    let files = flag_values(rest, &["-f", "--values"]);
    let crds_off = sets.iter().any(|s| {
        s.split_once('=')
            .is_some_and(|(k, v)| crate::provenance::bootstrap::values::set_switches_off(k, v))
    }) || files.iter().any(|f| {
        values_file(f).is_some_and(|v| crate::provenance::bootstrap::values::values_switch_off(&v))
    });
    let crds = !crds_off && !rest.iter().any(|w| w == "--skip-crds");
    Some(Target::Chart {
        chart: name,
        namespace,
        crds,
        create_namespace: rest.iter().any(|w| w == "--create-namespace"),
    })
}

/// Every value of the flags `names`, written `--flag VALUE` or `--flag=VALUE`.
fn flag_values(words: &[String], names: &[&str]) -> Vec<String> {
    let spaced = words
        .windows(2)
        .filter(|p| names.contains(&p[0].as_str()))
        .map(|p| p[1].clone());
    let joined = words.iter().filter_map(|w| {
        names
            .iter()
            .find_map(|n| w.strip_prefix(n)?.strip_prefix('='))
            .map(str::to_string)
    });
    spaced.chain(joined).collect()
}

impl Scan<'_> {
    /// helmfile [-f FILE|DIR] SUBCOMMAND: the helmfile it names
    /// is one the entrypoints run; `sync` and `apply` install
    /// it. A word `helmfile` with no subcommand after it
    /// (`which helmfile`, `check_cli helm helmfile`) runs none.
    pub(super) fn helmfile(&self, stage: &[String], out: &mut Scripts) {
        if let Some(h) = stage.iter().position(|w| w.ends_with("helmfile"))
            && let Some(verb) = stage[h + 1..]
                .iter()
                .find(|w| HELMFILE_SUBCOMMANDS.contains(&w.as_str()))
        {
            match flag(&stage[h..], &["-f"], "--file")
                .and_then(|f| resolve(self.index, self.rel, &f, self.vars))
            {
                Some(p) => {
                    if !out.helmfile_named.contains(&p) {
                        out.helmfile_named.push(p.clone());
                    }
                    if verb == "sync" || verb == "apply" {
                        out.understood += 1;
                        if !out.synced.contains(&p) {
                            out.synced.push(p);
                        }
                    }
                }
                None => out.helmfile_unresolved = true,
            }
        }
    }
}
