//! `substitution-hazard` and `substitution-unaudited`: what postBuild
//! substitution does to every tier (see [`crate::postbuild`]).

use std::collections::BTreeMap;

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::postbuild::{Hazard, HazardKind};
use serde::Deserialize;

/// `substitution:` in conformance.yaml.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Substitution {
    /// Strict substitution (an undefined variable fails the build), as the
    /// cluster's kustomize-controller does it. Absent: read from the Flux
    /// the repository installs (strict from kustomize-controller 1.9 /
    /// Flux 2.9; strict when it cannot be told).
    #[serde(default)]
    pub strict: Option<bool>,
    /// ConfigMaps and Secrets whose keys a webhook or admission policy adds
    /// to the Kustomizations it reaches ([`crate::postbuild::injected`]).
    #[serde(default)]
    pub injected: Vec<serde_saphyr::Spanned<crate::postbuild::injected::InjectedConfig>>,
}

#[derive(Debug)]
pub struct SubstitutionHazard;
#[derive(Debug)]
pub struct SubstitutionUnaudited;

impl Rule for SubstitutionHazard {
    fn id(&self) -> RuleId {
        RuleId::SubstitutionHazard
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn other_severities(&self) -> Option<&'static str> {
        Some(
            "a warning for an undefined variable where substitution is not strict (it becomes empty)",
        )
    }
    fn summary(&self) -> &'static str {
        "in a Kustomization with postBuild, a ${VAR} without definition or default, an expression Flux cannot parse, or a variable source Flux rejects"
    }
    fn example(&self) -> &'static str {
        "apps-vms: ${VM_STORAGE_CLAS} in DataVolume/vms/unifi-root is defined nowhere; strict substitution fails the whole tier"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for a in &cx.analyses {
            let cluster = a.cluster;
            let strict = strictness(cx, a);
            for tier in cluster.tiers.values() {
                let label = cluster.tier_label(&tier.id);
                for hazard in &tier.substitution.hazards {
                    let (message, why, fix) =
                        describe(hazard, &label, &strict, &tier.substitution.injected);
                    let mut finding =
                        Finding::new(self, cluster.name.clone(), label.clone(), message)
                            .object_opt(hazard.object.as_ref().map(ToString::to_string))
                            .at(hazard.at.clone().or_else(|| Some(tier.defined_at.clone())))
                            .related(
                                tier.defined_at.clone(),
                                format!("Kustomization {label} (spec.postBuild)"),
                            )
                            .why(why)
                            .fix(fix);
                    if let Some((at, what)) = &strict.from {
                        finding = finding.related(at.clone(), what.clone());
                    }
                    // Without strict mode an undefined variable is an empty
                    // value, not a failure.
                    if matches!(hazard.kind, HazardKind::Undefined { .. }) && !strict.strict {
                        finding = finding.severity(Severity::Warning);
                    }
                    // Which Flux runs is not shown: a guess is a warning,
                    // with the line that settles it.
                    if matches!(hazard.kind, HazardKind::Undefined { .. }) && !strict.known {
                        finding = finding
                            .severity(Severity::Warning)
                            .fix(format!(
                                "{}; to settle whether this fails, declare the Flux the cluster runs: `clusters: {{{}: {{flux: \"2.7.5\"}}}}` in conformance.yaml (or `substitution: {{strict: true}}`)",
                                describe(hazard, &label, &strict, &tier.substitution.injected).2,
                                cluster.name
                            ));
                    }
                    out.push(finding.build());
                }
            }
        }
        out
    }
}

/// Whether a cluster's kustomize-controller substitutes strictly, and what
/// says so.
struct Strictness {
    strict: bool,
    /// Whether the repository (or conformance.yaml) says which Flux runs:
    /// when it does not, strictness is a guess and never an error.
    known: bool,
    /// Where the deciding version is written, and what it is.
    from: Option<(crate::model::Span, String)>,
    /// In words, for messages.
    because: String,
}

fn strictness(cx: &Context, a: &crate::convergence::ClusterAnalysis) -> Strictness {
    if let Some(strict) = cx.settings.substitution.strict {
        return Strictness {
            strict,
            known: true,
            from: None,
            because: format!("substitution.strict is {strict} in conformance.yaml"),
        };
    }
    match a
        .installed
        .as_ref()
        .and_then(|i| Some((i, i.strict_substitution()?)))
    {
        Some((installed, strict)) => {
            let kc = installed
                .kustomize_controller
                .map(|v| format!(" (kustomize-controller {v})"))
                .unwrap_or_default();
            let what = if installed.pinned {
                format!("Flux {}{kc}", installed.written)
            } else {
                format!(
                    "Flux {} (judged as its newest release{kc})",
                    installed.written
                )
            };
            Strictness {
                strict,
                known: true,
                from: Some((installed.at.clone(), what.clone())),
                because: format!("the cluster installs {what}"),
            }
        }
        None => Strictness {
            strict: true,
            known: false,
            from: None,
            because: match &a.installed {
                Some(i) => format!(
                    "the repository pins Flux {}, which does not say which release runs: judged as current Flux, strict since 2.9, if it runs an older one the variable is only empty",
                    i.written
                ),
                None => "the repository shows no Flux version: judged as current Flux, strict since 2.9, if it runs an older one the variable is only empty".into(),
            },
        },
    }
}

fn describe(
    h: &Hazard,
    label: &str,
    strict: &Strictness,
    injected: &[String],
) -> (String, String, String) {
    let what = h
        .object
        .as_ref()
        .map_or_else(|| label.to_string(), |o| format!("{o} in {label}"));
    match &h.kind {
        HazardKind::Undefined { name } => (
            if injected.is_empty() {
                format!("${{{name}}} in {what} is defined nowhere (not in postBuild.substitute, not in any substituteFrom source) and has no default")
            } else {
                format!("${{{name}}} in {what} is defined nowhere (not in postBuild.substitute, not in any substituteFrom source, not in {}) and has no default", injected.join("; "))
            },
            if strict.strict {
                format!("strict substitution fails the build with `variable not set (strict mode): \"{name}\"`: {label} is not applied and every tier that depends on it waits ({})", strict.because)
            } else {
                format!("without strict substitution the variable becomes the empty string: {what} ships with an empty value ({})", strict.because)
            },
            format!("define {name} in postBuild.substitute or a substituteFrom ConfigMap/Secret, give it a default (`${{{name}:=value}}`), or escape a literal as `$${{{name}}}`"),
        ),
        HazardKind::Unparsable { expression, message } => (
            format!("Flux cannot parse `{expression}` in {what}: {message}"),
            format!("the envsubst error fails the build of {label}: nothing in it is applied"),
            "use a form Flux supports (${VAR}, ${VAR:=default}, ${VAR:-default}, ${#VAR}, ${VAR^^}, ${VAR:offset:length}, ${VAR#glob}, ${VAR/from/to}); bash's ${VAR-x} and ${VAR+x} are not supported; escape a literal as $${...}".into(),
        ),
        HazardKind::Misleading { name, op } => (
            format!("`${{{name}{op}…}}` in {what} does not do what bash does: Flux treats `{op}` as a default (`:-`)"),
            format!("bash's `{op}` gives {} but Flux substitutes the value when it is set and the word only when it is empty", if *op == ":+" { "the word only when the value is set" } else { "an error when the value is unset" }),
            format!("write `${{{name}:-word}}` if a default is meant, or compute the value outside the manifest"),
        ),
        HazardKind::InvalidName { name, source } => (
            format!("variable `{name}` (from {source}) is not a valid name for Flux"),
            format!("Flux checks every key of the merged variables against ^[_[:alpha:]][_[:alpha:][:digit:]]*$ and fails every object of {label} when one does not match"),
            format!("rename the key `{name}` (letters, digits and _ only, not starting with a digit), or stop using that ConfigMap/Secret for substitution"),
        ),
        HazardKind::InvalidYaml { written, message } => (
            format!("after substitution, `{written}` in {what} is not valid YAML ({message})"),
            format!("kustomize-controller writes each object as YAML, substitutes, and reads it back (`yaml.YAMLToJSON` in SubstituteVariables): the read fails, so the build of {label} fails and nothing in it is applied"),
            "make the value valid YAML where it lands: close a `[` or `{`, or put quotes inside the variable's value (quoting the ${VAR} in the manifest does not help: Flux re-marshals the object, and a plain-looking string is written unquoted)".into(),
        ),
        HazardKind::BadSubstring { name } => (
            format!("a substring of ${{{name}}} in {what} has a negative length"),
            "Flux's envsubst cannot evaluate it and fails the build".into(),
            "use a non-negative length".into(),
        ),
    }
}

impl Rule for SubstitutionUnaudited {
    fn id(&self) -> RuleId {
        RuleId::SubstitutionUnaudited
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn summary(&self) -> &'static str {
        "${...} tokens in a Kustomization without postBuild: they ship literally today and become hazards the day a postBuild is added"
    }
    fn example(&self) -> &'static str {
        "platform-config has no postBuild, but ConfigMap/kube-system/cilium-vars contains ${LB_POOL_CIDR}"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        let mut files = TokenLines::default();
        for cluster in &cx.model.clusters {
            for tier in cluster.tiers.values() {
                if tier.substitution.unaudited.is_empty() {
                    continue;
                }
                let label = cluster.tier_label(&tier.id);
                // Every token once per object, at its own line (a token in a
                // block scalar is on a line after the scalar's first).
                let mut tokens: Vec<(String, Option<crate::model::Span>, String)> = Vec::new();
                for (object, at, name) in &tier.substitution.unaudited {
                    let at = at.as_ref().map(|a| files.line_of(cx.index, a, name));
                    let entry = (object.to_string(), at, name.clone());
                    if !tokens
                        .iter()
                        .any(|(o, _, n)| *o == entry.0 && *n == entry.2)
                    {
                        tokens.push(entry);
                    }
                }
                tokens.sort_by(|a, b| {
                    let place = |s: &Option<crate::model::Span>| {
                        s.as_ref().map(|s| (s.file.clone(), s.line))
                    };
                    (place(&a.1), &a.0, &a.2).cmp(&(place(&b.1), &b.0, &b.2))
                });
                let mut names: Vec<String> = tokens.iter().map(|(_, _, n)| n.clone()).collect();
                names.sort();
                names.dedup();
                let objects: std::collections::BTreeSet<&str> =
                    tokens.iter().map(|(o, _, _)| o.as_str()).collect();
                let shown: Vec<String> =
                    names.iter().take(12).map(|n| format!("${{{n}}}")).collect();
                let list = if names.len() > 12 {
                    format!("{}, and {} more", shown.join(", "), names.len() - 12)
                } else {
                    shown.join(", ")
                };
                let subject = if objects.len() == 1 {
                    format!("{} in {label}", tokens[0].0)
                } else {
                    format!("{} objects in {label}", objects.len())
                };
                let contain = if objects.len() == 1 {
                    "contains"
                } else {
                    "contain"
                };
                let skipped = tier.substitution.post_build;
                let (message, related, why) = if skipped {
                    (
                        format!(
                            "{subject} {contain} {list}, but {label}'s postBuild defines no variable, so Flux skips substitution: shipped literally"
                        ),
                        format!("Kustomization {label} (spec.postBuild, nothing defined)"),
                        format!(
                            "with no variable defined (an empty substitute, or missing optional substituteFrom sources) the pass does not run; the day one variable is defined for {label}, these tokens are substituted, and an undefined one then fails the tier or ships empty"
                        ),
                    )
                } else {
                    (
                        format!(
                            "{subject} {contain} {list} but {label} has no postBuild: shipped literally, and outside any substitution audit"
                        ),
                        format!("Kustomization {label} (no spec.postBuild)"),
                        format!(
                            "adding postBuild to {label} later would substitute these tokens, and an undefined one then fails the tier or ships empty"
                        ),
                    )
                };
                let first = tokens[0]
                    .1
                    .clone()
                    .unwrap_or_else(|| tier.defined_at.clone());
                let mut f = Finding::new(self, cluster.name.clone(), label.clone(), message)
                    .object_opt((objects.len() == 1).then(|| tokens[0].0.clone()))
                    .at(first)
                    .related(tier.defined_at.clone(), related)
                    .why(why)
                    .fix(if skipped {
                        format!(
                            "escape literal tokens as $${{…}}, or define {} for {label}",
                            names.join(", ")
                        )
                    } else {
                        format!(
                            "escape literal tokens as $${{…}}, or add postBuild to {label} and define {}",
                            names.join(", ")
                        )
                    });
                // Every other token's own place.
                for (object, at, name) in tokens.iter().skip(1).take(40) {
                    if let Some(at) = at {
                        f = f.related(at.clone(), format!("${{{name}}} in {object}"));
                    }
                }
                out.push(f.build());
            }
        }
        out
    }
}

/// The lines of the files tokens are found in, read once each.
#[derive(Default)]
struct TokenLines {
    files: BTreeMap<String, Option<Vec<String>>>,
}

impl TokenLines {
    /// Where `${name}` is written, looking from the line its scalar starts
    /// on (`at`) to the next lines a block scalar spans; `at` itself when
    /// the file does not show it there (a value a patch or generator made).
    fn line_of(
        &mut self,
        index: &crate::repo::RepoIndex,
        at: &crate::model::Span,
        name: &str,
    ) -> crate::model::Span {
        let lines = self
            .files
            .entry(at.file.clone())
            .or_insert_with(|| {
                index
                    .read_text(&at.file)
                    .ok()
                    .map(|t| t.lines().map(str::to_string).collect())
            })
            .as_deref()
            .unwrap_or_default();
        let token = format!("${{{name}");
        let start = at.line.saturating_sub(1) as usize;
        // A block scalar's node starts at its first content line, and the
        // scalar ends where the indentation falls below that line's.
        let indent = |l: &str| l.len() - l.trim_start().len();
        let content = lines.get(start).map_or(0, |l| indent(l));
        for (k, line) in lines.iter().enumerate().skip(start) {
            if k > start && !line.trim().is_empty() && indent(line) < content {
                break;
            }
            if line.contains(&token) {
                return crate::model::Span::new(at.file.clone(), k as u32 + 1);
            }
        }
        at.clone()
    }
}
