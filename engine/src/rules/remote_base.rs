//! `remote-base`: a kustomization reachable from a tier pulls a remote base.

use super::{Context, Finding, Rule, RuleId, Severity};

#[derive(Debug)]
pub struct RemoteBase;

impl Rule for RemoteBase {
    fn id(&self) -> RuleId {
        RuleId::RemoteBase
    }
    /// A reliability risk, not a certain failure: the build fails only
    /// while the remote is slow or gone. A team that has been bitten sets
    /// `severity: {remote-base: error}`.
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn summary(&self) -> &'static str {
        "a kustomization reachable from a tier pulls a remote base (URL or git reference) that Flux fetches on every reconcile"
    }
    fn example(&self) -> &'static str {
        "platform/external-snapshotter/kustomization.yaml:6: remote base github.com/kubernetes-csi/external-snapshotter/client/config/crd?ref=v8.2.0"
    }
    fn check(&self, cx: &Context) -> Vec<Finding> {
        let mut out = Vec::new();
        for cluster in &cx.model.clusters {
            for tier in cluster.tiers.values() {
                let label = cluster.tier_label(&tier.id);
                let fetched_bases = tier.fetched.iter().filter(|f| !f.input);
                let count = tier.remote_bases.len() + fetched_bases.clone().count();
                let bases = tier
                    .remote_bases
                    .iter()
                    .map(|(at, url)| (at, url, None))
                    .chain(fetched_bases.map(|f| (&f.at, &f.reference, Some(f))));
                for (at, url, fetched) in bases {
                    let f = Finding::new(
                        self,
                        cluster.name.clone(),
                        label.clone(),
                        format!(
                            "{label} pulls the remote base `{url}`, fetched over the network on every reconcile{}",
                            fetched.map(fetched_here).unwrap_or_default()
                        ),
                    )
                    .at(at.clone())
                    .related_all(vec![(
                        tier.defined_at.clone(),
                        format!("Kustomization {label} builds {}", tier.display_path()),
                    )])
                    .why(format!(
                        "kustomize-controller {} on every reconcile; when the remote is slow the fetch exceeds the build timeout, the build of {label} fails, and {label} and everything that depends on it stall until it answers (a risk, not a certain failure: `severity: {{remote-base: error}}` in conformance.yaml makes it fail CI)",
                        if is_single_file(url) {
                            "downloads the file"
                        } else {
                            "clones the repository"
                        }
                    ))
                    .fix("vendor the remote content into the repository (kubectl kustomize it once and commit the output) or make it a Flux source with its own Kustomization")
                    .cause(super::Cause {
                        key: format!("remote:{}", tier.id),
                        text: format!("{label} pulls {count} remote bases on every reconcile"),
                        fix: format!(
                            "vendor them into {} (kubectl kustomize once and commit the output), or make them a Flux source",
                            tier.display_path()
                        ),
                    });
                    out.push(f.build());
                }
                for f in tier.fetched.iter().filter(|f| f.input) {
                    out.push(
                        Finding::new(
                            self,
                            cluster.name.clone(),
                            label.clone(),
                            format!(
                                "{label} reads the generator input `{}`, fetched over the network on every reconcile{}",
                                f.reference,
                                fetched_here(f)
                            ),
                        )
                        .at(f.at.clone())
                        .why(format!(
                            "kustomize's file loader fetches the URL during the build; when it is slow or gone the build of {label} fails, and {label} and everything that depends on it stall"
                        ))
                        .fix("commit the file into the repository next to the kustomization and name it by its path")
                        .build(),
                    );
                }
                for (at, url) in &tier.remote_inputs {
                    let f = Finding::new(
                        self,
                        cluster.name.clone(),
                        label.clone(),
                        format!(
                            "{label} reads the generator input `{url}`, fetched over the network on every reconcile (its content is not checked here: it is rendered empty)"
                        ),
                    )
                    .at(at.clone())
                    .related_all(vec![(
                        tier.defined_at.clone(),
                        format!("Kustomization {label} builds {}", tier.display_path()),
                    )])
                    .why(format!(
                        "kustomize's file loader fetches the URL during the build; when it is slow or gone the build of {label} fails, and {label} and everything that depends on it stall"
                    ))
                    .fix("commit the file into the repository next to the kustomization and name it by its path");
                    out.push(f.build());
                }
            }
        }
        out
    }
}

/// What `--fetch-remote` got for a reference, for the message.
fn fetched_here(f: &crate::model::Fetched) -> String {
    match &f.stale {
        None => format!(
            " (fetched for this check: {}; its content was checked)",
            f.content
        ),
        Some(why) => format!(
            " (not reachable now: {why}; the cached {} was checked)",
            f.content
        ),
    }
}

/// A plain HTTP(S) URL of one manifest file (`…/crds/foo.yaml`), as
/// opposed to a git reference to a remote kustomization (`github.com/org/
/// repo//path?ref=v1`, `git@…`, `https://…/repo.git`, a directory).
fn is_single_file(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return false;
    };
    let path = rest.split(['?', '#']).next().unwrap_or(rest);
    !path.contains("//")
        && !path.split('/').any(|segment| segment.ends_with(".git"))
        && !url.contains("ref=")
        && (path.ends_with(".yaml") || path.ends_with(".yml") || path.ends_with(".json"))
}

#[cfg(test)]
mod tests {
    use super::is_single_file;

    #[test]
    fn single_files_and_git_references() {
        assert!(is_single_file(
            "https://raw.githubusercontent.com/traefik/traefik-helm-chart/v40.2.0/traefik/crds/traefik.io_tlsstores.yaml"
        ));
        assert!(!is_single_file(
            "https://github.com/kubernetes-csi/external-snapshotter//client/config/crd?ref=v8.2.0"
        ));
        assert!(!is_single_file(
            "github.com/kubernetes-csi/external-snapshotter/client/config/crd?ref=v8.2.0"
        ));
        assert!(!is_single_file("https://github.com/org/repo.git//deploy"));
    }
}
