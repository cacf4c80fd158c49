//! `substitution-hazard` and `substitution-unaudited`: what postBuild
//! substitution does to every tier (see [`crate::postbuild`]).

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
    fn summary(&self) -> &'static str {
        "in a Kustomization with postBuild, a ${VAR} without definition or default, an expression Flux cannot parse, or a variable source Flux rejects"
    }
    fn example(&self) -> &'static str {
        "apps-vms: ${VM_STORAGE_CLAS} in DataVolume/vms/unifi-root is defined nowhere; strict substitution fails the whole tier"
    }
    fn explain(&self) -> &'static str {
        "kustomize-controller substitutes ${VAR} expressions in every object of a Kustomization with \
spec.postBuild (SubstituteVariables in fluxcd/pkg kustomize_varsub.go, with fluxcd/pkg envsubst), from \
postBuild.substitute and the substituteFrom ConfigMaps and Secrets (later entries win, inline substitute wins over \
all). A variable with neither a definition nor a default (${VAR:=default}, ${VAR:-default}) fails the build in \
strict mode (the StrictPostBuildSubstitutions feature gate, on by default from kustomize-controller 1.9 / Flux 2.9: \
the tier is not applied, everything after it waits), and becomes the empty string with older controllers (a \
warning: the object ships with an empty value, which may be meant). Which applies is read from the Flux the \
cluster installs (its gotk-components.yaml, or a FluxInstance's distribution version; unpinned ranges are judged \
against the newest release); substitution.strict in conformance.yaml overrides it. Flux's envsubst rejects some \
bash forms outright (${VAR-x}, ${VAR+x}: 'missing closing brace', the build fails), treats ${VAR:+x} and ${VAR:?x} \
as plain defaults (not bash's alternate value or error), and fails the whole tier when a variable key is not a valid \
name (^[_[:alpha:]][_[:alpha:][:digit:]]*$, so a ConfigMap key like my-key breaks it). When no variable is defined \
(and substituteStrategy is not Always) the pass does not run at all: tokens then ship literally, which is reported \
by substitution-unaudited, not here. The substituted YAML is read back (yaml.YAMLToJSON in SubstituteVariables): \
a value that is not YAML where it lands (`[unclosed`, `a: b`, `@x` into a plain scalar) fails the build too. A \
SOPS-encrypted Secret defines its keys without revealing values. Escape a literal as $${VAR}."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for a in &cx.analyses {
            let cluster = a.cluster;
            let strict = strictness(cx, a);
            for tier in cluster.tiers.values() {
                let label = cluster.tier_label(&tier.id);
                for hazard in &tier.substitution.hazards {
                    let (message, why, fix) = describe(hazard, &label, &strict);
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
    /// Where the deciding version is written, and what it is.
    from: Option<(crate::model::Span, String)>,
    /// In words, for messages.
    because: String,
}

fn strictness(cx: &Context, a: &crate::convergence::ClusterAnalysis) -> Strictness {
    if let Some(strict) = cx.settings.substitution.strict {
        return Strictness {
            strict,
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
                from: Some((installed.at.clone(), what.clone())),
                because: format!("the cluster installs {what}"),
            }
        }
        None => Strictness {
            strict: true,
            from: None,
            because:
                "the repository shows no Flux version: judged as current Flux, strict since 2.9"
                    .into(),
        },
    }
}

fn describe(h: &Hazard, label: &str, strict: &Strictness) -> (String, String, String) {
    let what = h
        .object
        .as_ref()
        .map_or_else(|| label.to_string(), |o| format!("{o} in {label}"));
    match &h.kind {
        HazardKind::Undefined { name } => (
            format!("${{{name}}} in {what} is defined nowhere (not in postBuild.substitute, not in any substituteFrom source) and has no default"),
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
    fn explain(&self) -> &'static str {
        "Flux substitutes only in Kustomizations with spec.postBuild, and only when some variable is defined or \
substituteStrategy is Always (kustomize-controller skips the pass otherwise). A ${VAR} token in any other tier is shipped \
literally (which may or may not be intended), and the day someone adds postBuild to that tier (often only to use one \
variable somewhere else) every such token is substituted: an undefined one then fails the tier (strict) or becomes \
empty. An audit that only looks at tiers that declare substituteFrom has exactly this blind spot, so this check \
covers every path. Escape tokens meant literally as $${VAR} (which Flux turns into ${VAR}), or give the tier a \
postBuild and define the variables."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for cluster in &cx.model.clusters {
            for tier in cluster.tiers.values() {
                let label = cluster.tier_label(&tier.id);
                let mut by_object: Vec<(String, Option<crate::model::Span>, Vec<String>)> =
                    Vec::new();
                for (object, at, name) in &tier.substitution.unaudited {
                    let key = object.to_string();
                    match by_object.iter_mut().find(|(o, _, _)| *o == key) {
                        Some((_, first, names)) => {
                            if !names.contains(name) {
                                names.push(name.clone());
                            }
                            // The earliest line, whatever order the renderer
                            // emitted the fields in.
                            let earlier = match (&*first, at) {
                                (Some(f), Some(a)) => (&a.file, a.line) < (&f.file, f.line),
                                (None, Some(_)) => true,
                                _ => false,
                            };
                            if earlier {
                                *first = at.clone();
                            }
                        }
                        None => by_object.push((key, at.clone(), vec![name.clone()])),
                    }
                }
                for (object, at, mut names) in by_object {
                    names.sort();
                    let tokens: Vec<String> = names.iter().map(|n| format!("${{{n}}}")).collect();
                    let skipped = tier.substitution.post_build;
                    let (message, related, why) = if skipped {
                        (
                            format!(
                                "{object} in {label} contains {}, but {label}'s postBuild defines no variable, so Flux skips substitution: shipped literally",
                                tokens.join(", ")
                            ),
                            format!("Kustomization {label} (spec.postBuild, nothing defined)"),
                            format!(
                                "with no variable defined (an empty substitute, or missing optional substituteFrom sources) the pass does not run; the day one variable is defined for {label}, these tokens are substituted, and an undefined one then fails the tier or ships empty"
                            ),
                        )
                    } else {
                        (
                            format!(
                                "{object} in {label} contains {} but {label} has no postBuild: shipped literally, and outside any substitution audit",
                                tokens.join(", ")
                            ),
                            format!("Kustomization {label} (no spec.postBuild)"),
                            format!(
                                "adding postBuild to {label} later would substitute these tokens, and an undefined one then fails the tier or ships empty"
                            ),
                        )
                    };
                    out.push(
                        Finding::new(self, cluster.name.clone(), label.clone(), message)
                            .object(object.clone())
                            .at(at.unwrap_or_else(|| tier.defined_at.clone()))
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
                            }).build(),
                    );
                }
            }
        }
        out
    }
}
