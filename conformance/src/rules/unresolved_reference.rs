//! `unresolved-reference`: an object names another object that the
//! repository defines, but only in a tier that never applies on a cold
//! start, or that it races and loses for good (the references themselves
//! are read in [`crate::convergence::references`]).

use super::{Context, Finding, Rule, RuleId, Severity, cold_start};

#[derive(Debug)]
pub struct UnresolvedReference;

impl Rule for UnresolvedReference {
    fn id(&self) -> RuleId {
        RuleId::UnresolvedReference
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "an object refers to another object the repository defines, but in a tier that never applies on a cold start, or that it races and loses for good"
    }
    fn example(&self) -> &'static str {
        "DataVolume/vms/unifi-root in apps-vms refers to StorageProfile/longhorn-vm, which platform-config-cdi applies, but apps-vms is not ordered after platform-config-cdi: CDI stamps the claim with the profile's modes once"
    }
    fn explain(&self) -> &'static str {
        "Some references are not checked by the API server at apply time but matter the moment the object is \
acted on: a PVC or DataVolume binds with its storageClassName, a Certificate is issued by its issuerRef, a \
HelmRelease fetches its chart from its sourceRef, and a Kustomization reads spec.sourceRef and its \
postBuild.substituteFrom ConfigMaps and Secrets before it builds (kustomize-controller Reconcile, then build). When \
the repository defines the target only in a tier that never applies on a cold start (it depends on this one, is \
suspended, ...; the message names the chain), or, for what a Kustomization reads before it builds, only in its own \
output, the reference never resolves: an error. When the target's tier is merely unordered, most references \
resolve on a retry (cold-start-race, a warning), but not all: CDI creates a DataVolume's claim once, with the access \
and volume modes of the StorageProfile of its class as they are then (spec.storage leaves them to the profile), and \
never changes them, so a DataVolume that races its StorageProfile or StorageClass is harmed for good and stays an \
error (the seed's apps-vms → platform-config-cdi edge). Add dependsOn on the tier that defines the target. \
References to objects the repository does not define at all are left alone, except a non-optional \
postBuild.substituteFrom ConfigMap or Secret: kustomize-controller fails the build with 'not found' when it is \
missing, so one that no tier renders, no bootstrap applies (a script, Terraform) and catalog.preinstalled_objects \
does not declare is an error; `optional: true` tolerates it. A HelmRelease's chart source, its non-optional \
valuesFrom ConfigMaps and Secrets (fluxcd/pkg chartutil ChartValuesFromReferences: 'not found') and the \
HelmReleases it dependsOn (HelmReleaseReconciler.checkDependencies: 'unable to get dependency') are required the \
same way; a dependsOn release in an unordered tier is no race, since helm-controller waits for it without failing. Secrets that controllers write (an ExternalSecret's \
target, a Certificate's secretName, a SealedSecret's, a ClusterExternalSecret's in every namespace, CloudNativePG's \
<cluster>-app, Crunchy PGO's <cluster>-pguser-<user>, ext-postgres-operator's, an ObjectBucketClaim's ConfigMap and \
Secret, a 1Password item's, a writeConnectionSecretToRef) count, ordered by \
the tier of the object that produces them."
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        cold_start::findings(cx, self)
    }
}
