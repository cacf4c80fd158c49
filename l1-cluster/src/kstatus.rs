//! The kstatus trial: the fact the `health-gate` rule rests on, shown by
//! Flux itself.
//!
//! An operator's trigger (a CDI or KubeVirt custom resource) has no Ready
//! condition and no `status.observedGeneration` when it is created, so
//! kstatus (`fluxcd/pkg/ssa` health checks use `kstatus.Compute`) reads it
//! as Current at once: a Kustomization with `wait: true` is Ready while the
//! kinds the operator creates do not exist yet. A `healthCheckExprs` entry
//! for the trigger's kind (`status.phase == 'Deployed'`) holds Ready until
//! the operator has done its work. On a cluster with Flux installed the
//! trial serves a small repository of two directories, the operator's
//! manifest (its Deployment at zero replicas) and the trigger, and:
//!
//! 1. reconciles the trigger with `wait: true`: Ready, while every CRD the
//!    operator creates is absent;
//! 2. adds the repository's own `healthCheckExprs` for the trigger's kind
//!    and reconciles again: not Ready, for `L1_HOLD` seconds, while the CRDs
//!    are still absent;
//! 3. scales the operator up: Ready only once the CRDs exist.

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use conformance::model::{Cluster, Object, ObjectId};
use conformance::provenance::crd_name;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};

use crate::api::{HARNESS_MANAGER, api_for, apply_json, crd_established};
use crate::error::SubjectError;
use crate::git::GitServer;

/// How the trial ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Result {
    /// Every part that ran held; the text says what each showed.
    Pass(String),
    /// A part did not hold, or the trial could not run; the text says why.
    Fail(String),
    /// Parts 1 and 2 held, but the operator never finished on this cluster.
    Inconclusive(String),
}

/// What the trial needs from the repository.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The trigger object, as the repository renders it.
    pub trigger: Object,
    /// The objects of the file that defines the trigger's CRD (the
    /// operator's manifest).
    pub operator: Vec<Object>,
    /// The operator's manifest: the file the `operator` objects come from.
    pub operator_file: String,
    /// The CRDs the operator creates (the catalog's list).
    pub crds: Vec<String>,
    /// The repository's `healthCheckExprs` entries for the trigger's kind.
    pub exprs: Vec<serde_json::Value>,
}

/// The subject for `trigger` (whose `operator` creates `crds`), from the
/// served model: the operator's objects are those of the file that defines
/// the trigger's CRD, when it deploys the operator, else those of the file
/// that deploys a Deployment named for the operator.
pub fn subject(
    cluster: &Cluster,
    trigger: &ObjectId,
    operator: &str,
    crds: &[String],
) -> std::result::Result<Subject, SubjectError> {
    let mut found = None;
    for tier in cluster.tiers.values() {
        if let Some(o) = tier.objects().iter().find(|o| o.id == *trigger) {
            found = Some((tier, o.clone()));
        }
    }
    let (tier, object) = found.ok_or_else(|| SubjectError::NotRendered {
        trigger: trigger.to_string(),
    })?;
    let crd = crd_name(&trigger.group, &trigger.kind);
    let all = || cluster.tiers.values().flat_map(|t| t.objects());
    let of_file = |file: &str| -> Vec<Object> {
        all()
            .filter(|o| o.source.as_ref().is_some_and(|s| s.file == file))
            .cloned()
            .collect()
    };
    let deploys = |objects: &[Object]| objects.iter().any(|o| o.id.kind == "Deployment");
    let crd_file = all()
        .find(|o| o.id.kind == "CustomResourceDefinition" && o.id.name == crd)
        .and_then(|o| o.source.as_ref().map(|s| s.file.clone()));
    let named = all()
        .find(|o| o.id.kind == "Deployment" && o.id.name == operator)
        .and_then(|o| o.source.as_ref().map(|s| s.file.clone()));
    let (file, operator_objects) = match (crd_file, named) {
        (Some(f), _) if deploys(&of_file(&f)) => {
            let objects = of_file(&f);
            (f, objects)
        }
        (_, Some(f)) => {
            let objects = of_file(&f);
            (f, objects)
        }
        _ => {
            return Err(SubjectError::NotDeployed {
                operator: operator.to_string(),
                crd,
            });
        }
    };
    let exprs: Vec<serde_json::Value> = tier
        .spec
        .path(&["spec", "healthCheckExprs"])
        .map(|n| n.as_seq().iter().map(|e| e.to_json()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|e| {
            e["kind"] == trigger.kind.as_str()
                && e["apiVersion"]
                    .as_str()
                    .is_some_and(|v| v.split('/').next() == Some(trigger.group.as_str()))
        })
        .collect();
    Ok(Subject {
        trigger: object,
        operator: operator_objects,
        operator_file: file,
        crds: crds.to_vec(),
        exprs,
    })
}

const OPERATOR: &str = "l1-kstatus-operator";
const TRIGGER: &str = "l1-kstatus-trigger";

fn kustomization(
    name: &str,
    path: &str,
    depends: Option<&str>,
    exprs: &[serde_json::Value],
    requested: Option<&str>,
) -> serde_json::Value {
    let mut spec = serde_json::json!({
        "interval": "10m",
        "retryInterval": "20s",
        "timeout": "2m",
        "path": path,
        "prune": false,
        "wait": true,
        "sourceRef": {"kind": "GitRepository", "name": "l1-kstatus"},
    });
    if let Some(d) = depends {
        spec["dependsOn"] = serde_json::json!([{"name": d}]);
    }
    if !exprs.is_empty() {
        spec["healthCheckExprs"] = serde_json::Value::Array(exprs.to_vec());
    }
    let mut metadata = serde_json::json!({"name": name, "namespace": "flux-system"});
    if let Some(at) = requested {
        metadata["annotations"] = serde_json::json!({"reconcile.fluxcd.io/requestedAt": at});
    }
    serde_json::json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": metadata,
        "spec": spec,
    })
}

/// The operator's objects with its Deployments at zero replicas, as YAML.
fn operator_yaml(s: &Subject) -> String {
    let mut out = String::new();
    for o in &s.operator {
        let mut body = o.body.clone();
        if o.id.kind == "Deployment" {
            body.map_entry("spec").set(
                "replicas",
                conformance::yaml::Node::new(conformance::yaml::Value::Int(0)),
            );
        }
        out.push_str("---\n");
        out.push_str(&conformance::yaml::to_yaml(&body));
    }
    out
}

/// Runs the trial on a cluster with Flux installed.
pub async fn run(
    client: &Client,
    git: &GitServer,
    s: &Subject,
    timeout: Duration,
    hold: Duration,
) -> Result {
    match run_inner(client, git, s, timeout, hold).await {
        Ok(r) => r,
        Err(e) => Result::Fail(format!("{e:#}")),
    }
}

async fn run_inner(
    client: &Client,
    git: &GitServer,
    s: &Subject,
    timeout: Duration,
    hold: Duration,
) -> anyhow::Result<Result> {
    let trigger = &s.trigger.id;
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("operator"))?;
    std::fs::create_dir_all(dir.path().join("trigger"))?;
    std::fs::write(dir.path().join("operator/operator.yaml"), operator_yaml(s))?;
    std::fs::write(
        dir.path().join("trigger/trigger.yaml"),
        conformance::yaml::to_yaml(&s.trigger.body),
    )?;
    git.push(dir.path(), "kstatus", "main", None)?;
    let source = crate::flux::git_repository(
        &conformance::model::TierId::new("flux-system", "l1-kstatus"),
        &git.clone_url("kstatus"),
        "main",
    );
    apply_json(client, &source, HARNESS_MANAGER, false).await?;
    apply_json(
        client,
        &kustomization(OPERATOR, "./operator", None, &[], None),
        HARNESS_MANAGER,
        false,
    )
    .await?;
    apply_json(
        client,
        &kustomization(TRIGGER, "./trigger", Some(OPERATOR), &[], None),
        HARNESS_MANAGER,
        false,
    )
    .await?;
    let ks = api_for(
        client,
        "kustomize.toolkit.fluxcd.io/v1",
        "Kustomization",
        Some("flux-system"),
    )
    .await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let absent = |list: Vec<(String, bool)>| -> Vec<String> {
        list.into_iter()
            .filter(|(_, e)| !e)
            .map(|(n, _)| n)
            .collect()
    };
    let crd_states = async || -> anyhow::Result<Vec<(String, bool)>> {
        let mut out = Vec::new();
        for name in &s.crds {
            out.push((name.clone(), crd_established(&crds, name).await?));
        }
        Ok(out)
    };
    // 1. wait: true alone.
    let start = Instant::now();
    let ready_at = loop {
        let k = ks.get(TRIGGER).await?;
        if ready(&k.data) == Some(true) {
            break start.elapsed().as_secs();
        }
        if start.elapsed() > timeout {
            return Ok(Result::Fail(format!(
                "Kustomization {TRIGGER} (wait: true, applying {trigger} only, its operator at zero replicas) was not Ready in {}s: kstatus did not read {} as Current, so `wait: true` may be a gate after all (last: {})",
                timeout.as_secs(),
                trigger.kind,
                condition_text(&k.data)
            )));
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    };
    let missing = absent(crd_states().await?);
    if missing.len() != s.crds.len() {
        bail!(
            "part 1 proves nothing: some of {} already exist with the operator at zero replicas",
            s.crds.join(", ")
        );
    }
    let mut report = format!(
        "1. wait: true: {TRIGGER} was Ready after {ready_at}s while {} did not exist (kstatus read {}/{} as Current)",
        missing.join(", "),
        trigger.kind,
        trigger.name
    );
    // 2. The repository's healthCheckExprs.
    if s.exprs.is_empty() {
        report.push_str(&format!(
            "; 2-3 not run: the repository has no healthCheckExprs for {}",
            trigger.kind
        ));
        return Ok(Result::Pass(report));
    }
    let requested = format!(
        "l1-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs()
    );
    apply_json(
        client,
        &kustomization(
            TRIGGER,
            "./trigger",
            Some(OPERATOR),
            &s.exprs,
            Some(&requested),
        ),
        HARNESS_MANAGER,
        false,
    )
    .await?;
    let start = Instant::now();
    let mut handled = false;
    while start.elapsed() < hold + Duration::from_secs(60) {
        let k = ks.get(TRIGGER).await?;
        let now_handled = k.data["status"]["lastHandledReconcileAt"] == requested.as_str()
            || ready(&k.data) != Some(true);
        if now_handled {
            handled = true;
        }
        if handled && ready(&k.data) == Some(true) {
            return Ok(Result::Fail(format!(
                "{report}; 2. with healthCheckExprs {}: {TRIGGER} became Ready again while {} did not exist: the gate did not hold",
                serde_json::Value::Array(s.exprs.clone()),
                missing.join(", ")
            )));
        }
        if handled && start.elapsed() >= hold {
            break;
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    if !handled {
        bail!("{report}; 2. kustomize-controller never handled the reconcile request {requested}");
    }
    report.push_str(&format!(
        "; 2. with the repository's healthCheckExprs: not Ready for {}s while they did not exist",
        hold.as_secs()
    ));
    // 3. The operator, scaled up (its tier suspended so Flux keeps it so).
    let suspend = serde_json::json!({"spec": {"suspend": true}});
    ks.patch(OPERATOR, &PatchParams::default(), &Patch::Merge(&suspend))
        .await?;
    for o in s.operator.iter().filter(|o| o.id.kind == "Deployment") {
        let ns = o.id.namespace.as_deref().unwrap_or("default");
        let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
        let scale = serde_json::json!({"spec": {"replicas": 1}});
        api.patch(&o.id.name, &PatchParams::default(), &Patch::Merge(&scale))
            .await
            .with_context(|| format!("scaling {}", o.id))?;
    }
    let start = Instant::now();
    loop {
        let k = ks.get(TRIGGER).await?;
        if ready(&k.data) == Some(true) {
            let still = absent(crd_states().await?);
            if still.is_empty() {
                report.push_str(&format!(
                    "; 3. operator scaled up: Ready after {}s, once {} existed",
                    start.elapsed().as_secs(),
                    s.crds.join(", ")
                ));
                return Ok(Result::Pass(report));
            }
            return Ok(Result::Fail(format!(
                "{report}; 3. Ready with the operator up, but {} still did not exist: the gate opened too early",
                still.join(", ")
            )));
        }
        if start.elapsed() > timeout {
            return Ok(Result::Inconclusive(format!(
                "{report}; 3. the operator did not finish in {}s on this cluster (last: {})",
                timeout.as_secs(),
                condition_text(&k.data)
            )));
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

fn ready(object: &serde_json::Value) -> Option<bool> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .map(|c| c["status"] == "True")
}

fn condition_text(object: &serde_json::Value) -> String {
    object["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .map(|c| {
            format!(
                "{}/{}: {}",
                c["status"].as_str().unwrap_or("?"),
                c["reason"].as_str().unwrap_or("?"),
                c["message"].as_str().unwrap_or("")
            )
        })
        .unwrap_or_else(|| "no Ready condition".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_platform_offers_cdi_with_its_gate() {
        let repo =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/reference-platform");
        let session =
            conformance::session::Session::open(&conformance::session::RunOptions::at(&repo))
                .expect("session");
        let cluster = session.cluster("prod").expect("prod");
        let trigger = cluster
            .tiers
            .values()
            .flat_map(|t| t.objects())
            .find(|o| o.id.kind == "CDI")
            .expect("a CDI CR")
            .id
            .clone();
        let s = subject(
            cluster,
            &trigger,
            "cdi-operator",
            &["storageprofiles.cdi.kubevirt.io".into()],
        )
        .expect("subject");
        assert_eq!(s.operator_file, "platform/cdi/cdi-operator.yaml");
        assert!(s.operator.iter().any(|o| o.id.kind == "Deployment"));
        assert_eq!(
            s.exprs.len(),
            1,
            "the CDI entry of platform-config's healthCheckExprs"
        );
        assert_eq!(s.exprs[0]["current"], "status.phase == 'Deployed'");
        let yaml = operator_yaml(&s);
        assert!(yaml.contains("replicas: 0"), "{yaml}");
        let k = kustomization(TRIGGER, "./trigger", Some(OPERATOR), &s.exprs, Some("l1-1"));
        assert_eq!(k["spec"]["wait"], true);
        assert_eq!(
            k["metadata"]["annotations"]["reconcile.fluxcd.io/requestedAt"],
            "l1-1"
        );
        assert_eq!(k["spec"]["dependsOn"][0]["name"], OPERATOR);
    }
}
