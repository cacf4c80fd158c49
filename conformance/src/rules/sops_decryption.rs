//! `sops-decryption`: SOPS-encrypted content in a tier that does not decrypt.

use super::{Context, Finding, Rule, Severity};
use crate::model::Span;
use crate::yaml::{self, Node};

#[derive(Debug)]
pub struct SopsDecryption;

impl Rule for SopsDecryption {
    fn id(&self) -> &'static str {
        "sops-decryption"
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
    fn explain(&self) -> &'static str {
        "kustomize-controller decrypts SOPS-encrypted objects (those with sops.mac) and the SOPS-encrypted files a \
secretGenerator or configMapGenerator reads, but only in a Kustomization with spec.decryption (provider: sops and a \
secretRef holding the keys). Without it an encrypted Secret still carries its sops field and Flux rejects the whole \
Kustomization, so nothing in the tier is applied; an encrypted generator input is turned into a Secret or ConfigMap \
full of ciphertext, which the workload then reads as its configuration. Add spec.decryption to the tier (the seed's \
per-wave decryption), or move the file to a tier that has it. Values are never printed."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for cluster in &cx.model.clusters {
            for tier in cluster.tiers.values() {
                if tier.decryption.is_some() {
                    continue;
                }
                let label = cluster.tier_label(&tier.id);
                let related = vec![(
                    tier.defined_at.clone(),
                    format!("Kustomization {label} (no spec.decryption)"),
                )];
                for object in tier.objects().iter().filter(|o| is_sops_encrypted(&o.body)) {
                    out.push(Finding::new(self, cluster.name.clone(), label.clone(), format!("{} in {label} is SOPS-encrypted, but {label} has no spec.decryption", object.id)).object(object.id.to_string()).at(object.source.clone().or_else(|| Some(tier.defined_at.clone()))).related_all(related.clone()).why(format!("Flux rejects an object that still carries SOPS metadata, so {label} fails and nothing in it is applied")).fix(format!("add `decryption: {{provider: sops, secretRef: {{name: <keys secret>}}}}` to {label}, or move the file to a tier that decrypts")));
                }
                for (at, file) in &tier.generator_inputs {
                    if !file_is_sops_encrypted(cx.index, file) {
                        continue;
                    }
                    out.push(Finding::new(self, cluster.name.clone(), label.clone(), format!("{file} is SOPS-encrypted and fed to a generator in {label}, which has no spec.decryption")).at(at.clone()).related_all({
                            let mut r = related.clone();
                            r.push((Span::new(file.clone(), 0), "SOPS-encrypted generator input".into()));
                            r
                        }).why("without decryption the generated Secret or ConfigMap holds the ciphertext, and the workload reads it as its configuration").fix(format!("add spec.decryption to {label}, or generate this Secret in a tier that decrypts")));
                }
            }
        }
        out
    }
}

/// An object Flux would decrypt: a top-level `sops` mapping with a `mac`.
pub fn is_sops_encrypted(body: &Node) -> bool {
    body.get("sops").is_some_and(|s| s.get("mac").is_some())
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
