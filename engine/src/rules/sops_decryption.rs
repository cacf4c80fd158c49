//! `sops-decryption`: SOPS-encrypted content in a tier that does not decrypt.

use super::{Context, Finding, Rule, RuleId, Severity};
use crate::model::Span;
use crate::model::is_sops_encrypted;
use crate::yaml::{self, Node};

#[derive(Debug)]
pub(crate) struct SopsDecryption;

impl Rule for SopsDecryption {
    fn id(&self) -> RuleId {
        RuleId::SopsDecryption
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a SOPS-encrypted object (or generator input) in a tier without spec.decryption"
    }
    fn example(&self) -> &'static str {
        "Secret/apps/paperless in apps-wave-2 is SOPS-encrypted, but apps-wave-2 has no spec.decryption"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for cluster in &cx.model.clusters {
            for tier in cluster.tiers.values() {
                let label = cluster.tier_label(&tier.id);
                let decrypts = tier.decryption.is_some();
                let related = vec![(
                    tier.defined_at.clone(),
                    if decrypts {
                        format!("Kustomization {label} (spec.decryption)")
                    } else {
                        format!("Kustomization {label} (no spec.decryption)")
                    },
                )];
                let encrypted = tier
                    .objects()
                    .iter()
                    .filter(|o| is_sops_encrypted(&o.body) && !decryption_disabled(&o.body));
                for object in encrypted.filter(|_| !decrypts) {
                    out.push(
                        Finding::new(
                            self,
                            cluster.name.clone(),
                            label.clone(),
                            format!(
                                "{} in {label} is SOPS-encrypted, but {label} has no spec.decryption",
                                object.id
                            ),
                        )
                        .object(&object.id)
                        .at(object.source.clone().unwrap_or_else(|| tier.defined_at.clone()))
                        .related_all(related.clone())
                        .why(format!(
                            "Flux rejects an object that still carries SOPS metadata, so {label} fails and nothing in it is applied"
                        ))
                        .fix(format!(
                            "add `decryption: {{provider: sops, secretRef: {{name: <keys secret>}}}}` to {label}, or move the file to a tier that decrypts"
                        )).build(),
                    );
                }
                for input in &tier.generator_inputs {
                    // secretGenerator inputs are decrypted with
                    // spec.decryption; configMapGenerator inputs never are.
                    if (input.secret && decrypts) || !file_is_sops_encrypted(cx.index, &input.file)
                    {
                        continue;
                    }
                    let file = &input.file;
                    let (message, why, fix) = if input.secret {
                        (
                            format!(
                                "{file} is SOPS-encrypted and fed to a secretGenerator in {label}, which has no spec.decryption"
                            ),
                            "without decryption the generated Secret holds the ciphertext, and the workload reads it as its configuration".to_string(),
                            format!("add spec.decryption to {label}, or generate this Secret in a tier that decrypts"),
                        )
                    } else {
                        (
                            format!(
                                "{file} is SOPS-encrypted and fed to a configMapGenerator in {label}: Flux never decrypts configMapGenerator inputs"
                            ),
                            "kustomize-controller's DecryptSources decrypts secretGenerator files and env files, not configMapGenerator ones, so the ConfigMap holds the ciphertext whatever spec.decryption says".to_string(),
                            format!("generate it with a secretGenerator (and spec.decryption on {label}), or keep the file unencrypted"),
                        )
                    };
                    out.push(
                        Finding::new(self, cluster.name.clone(), label.clone(), message)
                            .at(input.at.clone())
                            .related_all(related.clone())
                            .related(Span::new(file.clone(), 0), "SOPS-encrypted generator input")
                            .why(why)
                            .fix(fix)
                            .build(),
                    );
                }
            }
        }
        out
    }
}

/// `kustomize.toolkit.fluxcd.io/decrypt: disabled` (the value compared
/// case-insensitively): the decryptor leaves the object as it is.
fn decryption_disabled(body: &Node) -> bool {
    body.path(&[
        "metadata",
        "annotations",
        "kustomize.toolkit.fluxcd.io/decrypt",
    ])
    .and_then(Node::as_scalar_string)
    .is_some_and(|v| v.eq_ignore_ascii_case("disabled"))
}

/// A file SOPS encrypted, in any of its formats: YAML/JSON with `sops.mac`,
/// dotenv with `sops_mac=`, INI with a `[sops]` section.
fn file_is_sops_encrypted(index: &crate::repo::RepoIndex, file: &str) -> bool {
    let Ok(text) = index.read_text(file) else {
        return false;
    };
    if text
        .lines()
        .any(|l| l.trim_start().starts_with("sops_mac="))
    {
        return true;
    }
    if text.lines().any(|l| l.trim() == "[sops]")
        && text.lines().any(|l| l.trim_start().starts_with("mac"))
    {
        return true;
    }
    yaml::parse_documents(&text).is_ok_and(|docs| docs.iter().any(is_sops_encrypted))
}
