//! `clusterctl init`: Cluster API's installer. It installs the core
//! provider and, unless told otherwise, the kubeadm bootstrap and
//! control-plane providers (`clusterctl init` in cluster-api's
//! `cmd/clusterctl/cmd/init.go`: `--bootstrap` and `--control-plane`
//! default to kubeadm), plus the infrastructure providers `--infrastructure`
//! names. Their CRDs are the Cluster API groups in the catalog's
//! `clusterctl` and `clusterctl-infrastructure` entries.

use super::super::Target;

/// What a `clusterctl init` stage installs, if the stage is one.
pub(super) fn init(stage: &[String]) -> Vec<Target> {
    let Some(c) = stage
        .iter()
        .position(|w| w == "clusterctl" || w.ends_with("/clusterctl"))
    else {
        return Vec::new();
    };
    let args = &stage[c + 1..];
    if args
        .iter()
        .find(|w| !w.starts_with('-'))
        .map(String::as_str)
        != Some("init")
    {
        return Vec::new();
    }
    let chart = |name: &str, namespace: &str| Target::Chart {
        chart: name.to_string(),
        namespace: Some(namespace.to_string()),
        crds: true,
        create_namespace: true,
    };
    let mut out = vec![chart("clusterctl", "capi-system")];
    let infrastructure = args.iter().enumerate().any(|(i, w)| {
        w.starts_with("--infrastructure=")
            || ((w == "--infrastructure" || w == "-i") && args.get(i + 1).is_some())
    });
    if infrastructure {
        out.push(chart("clusterctl-infrastructure", "capi-system"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn init_installs_core_and_named_infrastructure() {
        assert_eq!(init(&words("clusterctl init")).len(), 1);
        assert_eq!(
            init(&words("clusterctl init --infrastructure docker")).len(),
            2
        );
        assert_eq!(
            init(&words("clusterctl init --infrastructure=aws")).len(),
            2
        );
        assert!(init(&words("clusterctl move --to-kubeconfig x")).is_empty());
        assert!(init(&words("kubectl apply -f x")).is_empty());
    }
}
