//! Crossplane: each CompositeResourceDefinition makes Crossplane create a
//! CRD for its composite (and claim) kind.

use super::{Provenance, Provider, ProviderSource, RuntimeHow, SourceCx};
use crate::model::{Object, Tier};

/// CompositeResourceDefinitions.
#[derive(Debug)]
pub struct Crossplane;

impl ProviderSource for Crossplane {
    fn scan(&self, _: &SourceCx, tier: &Tier, o: &Object, out: &mut Vec<Provider>) {
        let id = &o.id;
        if id.group != "apiextensions.crossplane.io" || id.kind != "CompositeResourceDefinition" {
            return;
        }
        let group = o.body.str_at(&["spec", "group"]).unwrap_or_default();
        for path in [["spec", "names", "kind"], ["spec", "claimNames", "kind"]] {
            if let Some(kind) = o.body.str_at(&path) {
                out.push(Provider {
                    group: group.clone(),
                    kind: Some(kind),
                    scope: None,
                    provenance: Provenance::Runtime {
                        how: RuntimeHow::Crossplane,
                        trigger: id.clone(),
                        tier: tier.id.clone(),
                        at: o.source.clone(),
                    },
                });
            }
        }
    }
}

/// Crossplane packages (`pkg.crossplane.io` Provider, Configuration): the
/// package manager installs a Provider's CRDs once Crossplane reconciles the
/// package. The groups follow from the package name
/// ([`package_groups`]); a Function installs none, and a Configuration's
/// XRDs are objects of their own.
#[derive(Debug)]
pub(crate) struct Packages;

impl ProviderSource for Packages {
    fn scan(&self, _: &SourceCx, tier: &Tier, o: &Object, out: &mut Vec<Provider>) {
        let id = &o.id;
        if id.group != "pkg.crossplane.io" || id.kind != "Provider" {
            return;
        }
        let Some(package) = o.body.str_at(&["spec", "package"]) else {
            return;
        };
        for group in package_groups(&package) {
            out.push(Provider {
                group,
                kind: None,
                scope: None,
                provenance: Provenance::Runtime {
                    how: RuntimeHow::Package {
                        package: package.clone(),
                    },
                    trigger: id.clone(),
                    tier: tier.id.clone(),
                    at: o.source.clone(),
                },
            });
        }
    }
}

/// Upbound's provider families (upjet): `provider-<family>-<service>`
/// installs `<service>.<family>.upbound.io` (and the namespaced
/// `<service>.<family>.m.upbound.io`), and depends on
/// `provider-family-<family>`, which installs `<family>.upbound.io`.
const FAMILIES: &[&str] = &[
    "aws",
    "azure",
    "gcp",
    "azuread",
    "alibaba",
    "opentelekomcloud",
    "oci",
];

/// The API groups a Crossplane provider package installs, from its name
/// (the reference without registry, organisation and tag). Unknown names
/// give none: nothing is guessed.
pub(crate) fn package_groups(package: &str) -> Vec<String> {
    let name = package.rsplit('/').next().unwrap_or(package);
    let name = name.split([':', '@']).next().unwrap_or(name);
    let org = package.rsplit('/').nth(1).unwrap_or_default();
    let pair = |a: &str| vec![format!("{a}.upbound.io"), format!("{a}.m.upbound.io")];
    if let Some(family) = name.strip_prefix("provider-family-") {
        return pair(family);
    }
    if let Some(rest) = name.strip_prefix("provider-") {
        // The classic, monolithic crossplane-contrib provider-aws.
        if rest == "aws" && org.contains("crossplane-contrib") {
            return vec!["*.aws.crossplane.io".into(), "aws.crossplane.io".into()];
        }
        for family in FAMILIES {
            if rest == *family {
                // The deprecated monolith: every service of the family.
                return vec![
                    format!("*.{family}.upbound.io"),
                    format!("{family}.upbound.io"),
                ];
            }
            if let Some(service) = rest.strip_prefix(&format!("{family}-")) {
                let mut out = vec![
                    format!("{service}.{family}.upbound.io"),
                    format!("{service}.{family}.m.upbound.io"),
                ];
                out.extend(pair(family));
                return out;
            }
        }
        return match rest {
            "kubernetes" => vec![
                "kubernetes.crossplane.io".into(),
                "kubernetes.m.crossplane.io".into(),
            ],
            "helm" => vec!["helm.crossplane.io".into(), "helm.m.crossplane.io".into()],
            "terraform" => vec!["tf.upbound.io".into(), "tf.m.upbound.io".into()],
            "sql" => ["postgresql", "mysql", "mssql"]
                .iter()
                .flat_map(|db| {
                    [
                        format!("{db}.sql.crossplane.io"),
                        format!("{db}.sql.m.crossplane.io"),
                    ]
                })
                .collect(),
            _ => Vec::new(),
        };
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_give_their_groups() {
        assert_eq!(
            package_groups("xpkg.upbound.io/upbound/provider-aws-s3:v1.21.0"),
            [
                "s3.aws.upbound.io",
                "s3.aws.m.upbound.io",
                "aws.upbound.io",
                "aws.m.upbound.io"
            ]
        );
        assert_eq!(
            package_groups("xpkg.upbound.io/upbound/provider-family-aws:v1"),
            ["aws.upbound.io", "aws.m.upbound.io"]
        );
        assert!(
            package_groups("xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v0.15")
                .contains(&"kubernetes.crossplane.io".to_string())
        );
        assert!(package_groups("xpkg.upbound.io/acme/provider-unknown:v1").is_empty());
        assert!(
            package_groups("xpkg.upbound.io/crossplane-contrib/function-patch-and-transform:v0.8")
                .is_empty()
        );
    }
}
