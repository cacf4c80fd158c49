//! `cargo bench -p flux-conformance --bench render`: whole-process timings of
//! `conformance check` (release build), printed as the tables in
//! BENCHMARKS.md.
//!
//! 1. The real-world repository onedr0p-home-ops (from the corpus beside the
//!    checkout), native renderer vs the external kustomize program, in the
//!    same run, as a ratio, with peak memory.
//! 2. Synthetic repositories (generated here, deterministically): one
//!    cluster, N Kustomizations of 20 objects each, for N = 100, 1,000 and
//!    5,000, with the native renderer.
//!
//! 3. Growth cases (issue 13): one object of 2, 4 and 8 MiB (a ConfigMap
//!    with many keys); one tier of 10,000, 20,000 and 40,000 objects; a
//!    dependsOn chain 1,000, 2,000 and 4,000 deep. Each must grow linearly
//!    (or n·log n), in time and memory.
//!
//! 4. Hostile sizes (issue 45): one tier of 75,000 to 300,000 objects that
//!    each have a finding; 1,000 to 10,000 Kustomizations rendering one
//!    object; a bootstrap script of up to 40 MiB.
//!
//! Each case runs `BENCH_RUNS` times (default 3); the median is reported.

#![allow(clippy::unwrap_used)] // a benchmark that cannot write its fixture should stop

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn runs() -> usize {
    std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// Median wall time (seconds) and peak RSS (MiB) of `conformance check`.
fn measure(repo: &Path, renderer: &str) -> (f64, f64, String) {
    measure_n(repo, renderer, runs())
}

/// [`measure`] over `n` runs. A run of 50 ms is at the mercy of this
/// machine's occasional stalls (seen: 0.14 s and 0.22 s among medians of
/// 0.045 s), so the short native run of the ratio takes at least 11.
fn measure_n(repo: &Path, renderer: &str, n: usize) -> (f64, f64, String) {
    let mut times = Vec::new();
    let mut peak = 0u64;
    let mut summary = String::new();
    for _ in 0..n {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
            .args(["check", "--renderer", renderer, "--repo"])
            .arg(repo)
            .env("CONFORMANCE_STATS", "1")
            .output()
            .expect("run conformance");
        times.push(start.elapsed().as_secs_f64());
        let stderr = String::from_utf8_lossy(&out.stderr);
        if let Some(kb) = stderr.lines().find_map(|l| l.strip_prefix("peak_rss_kb=")) {
            peak = peak.max(kb.trim().parse().unwrap_or(0));
        }
        summary = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or_default()
            .to_string();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{renderer} on {}: {stderr}",
            repo.display()
        );
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], peak as f64 / 1024.0, summary)
}

/// A deterministic repository: one cluster, `tiers` Kustomizations in chains
/// of ten (each depends on the previous one), each path holding a
/// kustomization with a namespace, a ConfigMap generator and 20 objects.
fn synthesize(root: &Path, tiers: usize) {
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "clusters/prod/flux-system/kustomization.yaml",
        "resources:\n  - gotk-sync.yaml\n",
    );
    write(
        "clusters/prod/flux-system/gotk-sync.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  url: https://example.com/fleet\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./clusters/prod\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
    );
    let mut tiers_yaml = String::new();
    for i in 0..tiers {
        let depends = if i % 10 == 0 {
            String::new()
        } else {
            format!("  dependsOn:\n    - name: app-{:05}\n", i - 1)
        };
        tiers_yaml.push_str(&format!(
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app-{i:05}\n  namespace: flux-system\nspec:\n  interval: 10m\n{depends}  path: ./apps/app-{i:05}\n  prune: true\n  wait: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  postBuild:\n    substitute:\n      APP: app-{i:05}\n"
        ));
        let mut objects =
            format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns-{i:05}\n");
        for j in 0..18 {
            objects.push_str(&format!(
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{j:02}\n  namespace: ns-{i:05}\ndata:\n  app: ${{APP}}\n  index: \"{j}\"\n"
            ));
        }
        objects.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ns-{i:05}\nspec:\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n          envFrom:\n            - configMapRef:\n                name: settings\n"
        ));
        write(&format!("apps/app-{i:05}/objects.yaml"), &objects);
        write(
            &format!("apps/app-{i:05}/kustomization.yaml"),
            &format!(
                "resources:\n  - objects.yaml\nconfigMapGenerator:\n  - name: settings\n    namespace: ns-{i:05}\n    literals:\n      - MODE=prod\nlabels:\n  - pairs:\n      team: platform\n"
            ),
        );
    }
    write("clusters/prod/tiers.yaml", &tiers_yaml);
}

/// The issue-26 performance goal's input: a synthetic platform of 10,000
/// Kustomizations and about 220,000 objects, shaped like a company
/// platform rather than uniform tiers.
///
/// * 100 infrastructure groups of three tiers each, chained as Flux
///   repositories chain them: `crds-G` (five CustomResourceDefinitions with
///   schemas), `controllers-G` (a HelmRepository and a HelmRelease of an
///   operator, `dependsOn` the CRDs, `wait: true`), `configs-G` (custom
///   resources of those kinds, `dependsOn` the controllers);
/// * 20 platform tiers, each with a fan-in of ten `configs-G`;
/// * 880 teams of ten application tiers in a `dependsOn` chain (the first
///   creates the team's Namespace and depends on three infrastructure
///   groups) and one `team-T-ready` tier depending on all ten (fan-in);
/// * application tiers of mixed size (8 to 40 objects: ServiceAccount,
///   Service, Deployment, a custom resource, a HelmRelease in every fifth,
///   ConfigMaps), with a ConfigMap generator, labels, and `postBuild`
///   substitution from `substitute` and a `cluster-settings` ConfigMap.
///
/// The result is a clean platform (no error findings), so the time is
/// the time of a passing CI run.
fn platform(root: &Path) {
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let ks = |name: &str, path: &str, depends: &[String], wait: bool, subst: Option<&str>| {
        let mut text = format!(
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n"
        );
        if !depends.is_empty() {
            text.push_str("  dependsOn:\n");
            for d in depends {
                text.push_str(&format!("    - name: {d}\n"));
            }
        }
        text.push_str(&format!(
            "  path: {path}\n  prune: true\n  wait: {wait}\n  timeout: 5m\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
        ));
        if let Some(app) = subst {
            text.push_str(&format!(
                "  postBuild:\n    substitute:\n      APP: {app}\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-settings\n"
            ));
        }
        text
    };
    write(
        "clusters/prod/flux-system/kustomization.yaml",
        "resources:\n  - gotk-sync.yaml\n",
    );
    write(
        "clusters/prod/flux-system/gotk-sync.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  url: https://example.com/fleet\n  ref:\n    branch: main\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./clusters/prod\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
    );
    write(
        "clusters/prod/cluster-settings.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  CLUSTER_DOMAIN: prod.example.com\n  REGION: eu-west-1\n",
    );
    const GROUPS: usize = 100;
    let mut infra = String::new();
    for g in 0..GROUPS {
        let group = format!("g{g:03}.example.com");
        infra.push_str(&ks(
            &format!("crds-{g:03}"),
            &format!("./infrastructure/crds/{g:03}"),
            &[],
            true,
            None,
        ));
        let mut crds = String::new();
        for k in 0..5 {
            crds.push_str(&format!(
                "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widget{k}s.{group}\nspec:\n  group: {group}\n  names:\n    kind: Widget{k}\n    listKind: Widget{k}List\n    plural: widget{k}s\n    singular: widget{k}\n  scope: Namespaced\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n                size:\n                  type: integer\n                owner:\n                  type: string\n              required: [size]\n"
            ));
        }
        write(&format!("infrastructure/crds/{g:03}/crds.yaml"), &crds);
        infra.push_str(&ks(
            &format!("controllers-{g:03}"),
            &format!("./infrastructure/controllers/{g:03}"),
            &[format!("crds-{g:03}")],
            true,
            None,
        ));
        write(
            &format!("infrastructure/controllers/{g:03}/operator.yaml"),
            &format!(
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: operator-{g:03}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: operator\n  namespace: operator-{g:03}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts-{g:03}\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: https://charts.example.com/{g:03}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: operator\n  namespace: operator-{g:03}\nspec:\n  interval: 30m\n  chart:\n    spec:\n      chart: widget-operator\n      version: 1.2.3\n      sourceRef:\n        kind: HelmRepository\n        name: charts-{g:03}\n        namespace: flux-system\n  install:\n    crds: Skip\n  values:\n    replicas: 2\n    serviceAccount:\n      create: false\n      name: operator\n"
            ),
        );
        infra.push_str(&ks(
            &format!("configs-{g:03}"),
            &format!("./infrastructure/configs/{g:03}"),
            &[format!("controllers-{g:03}")],
            false,
            None,
        ));
        let mut configs = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: defaults\n  namespace: operator-{g:03}\ndata:\n  size: \"3\"\n"
        );
        for k in 0..5 {
            configs.push_str(&format!(
                "---\napiVersion: {group}/v1\nkind: Widget{k}\nmetadata:\n  name: default\n  namespace: operator-{g:03}\nspec:\n  size: {k}\n"
            ));
        }
        write(
            &format!("infrastructure/configs/{g:03}/configs.yaml"),
            &configs,
        );
    }
    for p in 0..20 {
        let fan_in: Vec<String> = (0..10)
            .map(|k| format!("configs-{:03}", (p * 5 + k) % GROUPS))
            .collect();
        infra.push_str(&ks(
            &format!("platform-{p:02}"),
            &format!("./platform/{p:02}"),
            &fan_in,
            true,
            None,
        ));
        let mut objects =
            format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: platform-{p:02}\n");
        for j in 0..9 {
            objects.push_str(&format!(
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-{j}\n  namespace: platform-{p:02}\ndata:\n  level: \"{j}\"\n"
            ));
        }
        write(&format!("platform/{p:02}/objects.yaml"), &objects);
    }
    write("clusters/prod/infrastructure.yaml", &infra);
    const SIZES: [usize; 10] = [8, 12, 16, 20, 24, 28, 32, 36, 40, 31];
    for t in 0..880 {
        let team = format!("team-{t:03}");
        let mut tiers = String::new();
        let mut apps = Vec::new();
        for a in 0..10 {
            let name = format!("{team}-app-{a}");
            let depends = if a == 0 {
                (0..3)
                    .map(|k| format!("configs-{:03}", (t + k * 7) % GROUPS))
                    .collect()
            } else {
                vec![format!("{team}-app-{}", a - 1)]
            };
            tiers.push_str(&ks(
                &name,
                &format!("./apps/{team}/app-{a}"),
                &depends,
                a % 3 == 0,
                Some(&name),
            ));
            let group = format!("g{:03}.example.com", t % GROUPS);
            let mut objects = String::new();
            if a == 0 {
                objects.push_str(&format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {team}\n  labels:\n    team: \"{t}\"\n---\n"));
            }
            objects.push_str(&format!(
                "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app-{a}\n  namespace: {team}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: app-{a}\n  namespace: {team}\nspec:\n  selector:\n    app: app-{a}\n  ports:\n    - name: http\n      port: 80\n      targetPort: 8080\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{a}\n  namespace: {team}\nspec:\n  replicas: ${{REPLICAS:=2}}\n  selector:\n    matchLabels:\n      app: app-{a}\n  template:\n    metadata:\n      labels:\n        app: app-{a}\n    spec:\n      serviceAccountName: app-{a}\n      containers:\n        - name: app\n          image: ghcr.io/example/app:1.{a}.0\n          ports:\n            - containerPort: 8080\n          env:\n            - name: DOMAIN\n              value: ${{APP}}.${{CLUSTER_DOMAIN}}\n          envFrom:\n            - configMapRef:\n                name: app-{a}-settings\n          resources:\n            requests:\n              cpu: 10m\n              memory: 64Mi\n---\napiVersion: {group}/v1\nkind: Widget{k}\nmetadata:\n  name: app-{a}\n  namespace: {team}\nspec:\n  size: {a}\n  owner: ${{APP}}\n",
                k = a % 5
            ));
            let mut count = 4 + usize::from(a == 0);
            if a % 5 == 4 {
                objects.push_str(&format!(
                    "---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: cache-{a}\n  namespace: {team}\nspec:\n  interval: 30m\n  chart:\n    spec:\n      chart: redis\n      version: 19.x\n      sourceRef:\n        kind: HelmRepository\n        name: charts-{:03}\n        namespace: flux-system\n  values:\n    fullnameOverride: cache-{a}\n    region: ${{REGION}}\n",
                    t % GROUPS
                ));
                count += 1;
            }
            let mut j = 0;
            while count < SIZES[(t + a) % 10] - 1 {
                objects.push_str(&format!(
                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-{a}-config-{j:02}\n  namespace: {team}\ndata:\n  app: ${{APP}}\n  region: ${{REGION}}\n  index: \"{j}\"\n"
                ));
                count += 1;
                j += 1;
            }
            write(&format!("apps/{team}/app-{a}/objects.yaml"), &objects);
            write(
                &format!("apps/{team}/app-{a}/kustomization.yaml"),
                &format!(
                    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - objects.yaml\nconfigMapGenerator:\n  - name: app-{a}-settings\n    namespace: {team}\n    literals:\n      - MODE=prod\nlabels:\n  - pairs:\n      team: \"{t}\"\n    includeSelectors: false\n"
                ),
            );
            apps.push(name);
        }
        tiers.push_str(&ks(
            &format!("{team}-ready"),
            &format!("./apps/{team}/ready"),
            &apps,
            false,
            None,
        ));
        write(
            &format!("apps/{team}/ready/marker.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ready\n  namespace: {team}\ndata:\n  ready: \"true\"\n"
            ),
        );
        write(&format!("clusters/prod/{team}.yaml"), &tiers);
    }
}

/// The sync objects of a one-cluster repository (`clusters/prod`), with
/// `tiers` as its Kustomizations.
fn cluster(root: &Path, tiers: &str) {
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "clusters/prod/flux-system/kustomization.yaml",
        "resources:\n  - gotk-sync.yaml\n",
    );
    write(
        "clusters/prod/flux-system/gotk-sync.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  url: https://example.com/fleet\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./clusters/prod\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
    );
    write("clusters/prod/tiers.yaml", tiers);
}

fn tier(name: &str, path: &str, depends: Option<&str>) -> String {
    let depends = depends
        .map(|d| format!("  dependsOn:\n    - name: {d}\n"))
        .unwrap_or_default();
    format!(
        "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n{depends}  path: {path}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )
}

/// One ConfigMap of about `mib` MiB (32-byte keys and values).
fn big_object(root: &Path, mib: usize) {
    cluster(root, &tier("apps", "./apps", None));
    let mut text = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: default\ndata:\n",
    );
    for i in 0..mib * 1024 * 1024 / 32 {
        text.push_str(&format!("  key-{i:08}: value-{i:08}\n"));
    }
    std::fs::create_dir_all(root.join("apps")).unwrap();
    std::fs::write(root.join("apps/cm.yaml"), text).unwrap();
}

/// One tier of `n` ConfigMaps in one file.
fn many_objects(root: &Path, n: usize) {
    cluster(root, &tier("apps", "./apps", None));
    let docs: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:06}\n  namespace: default\ndata:\n  a: \"{i}\"\n"
            )
        })
        .collect();
    std::fs::create_dir_all(root.join("apps")).unwrap();
    std::fs::write(root.join("apps/cms.yaml"), docs.join("---\n")).unwrap();
}

/// `n` Kustomizations, each depending on the previous one.
fn chain(root: &Path, n: usize) {
    let mut tiers = String::new();
    for i in 0..n {
        let prev = (i > 0).then(|| format!("t{:05}", i - 1));
        tiers.push_str(&tier(
            &format!("t{i:05}"),
            &format!("./apps/t{i:05}"),
            prev.as_deref(),
        ));
        let dir = root.join(format!("apps/t{i:05}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("cm.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n  namespace: default\n"
            ),
        )
        .unwrap();
    }
    cluster(root, &tiers);
}

/// One ConfigMap of `n` block-style keys.
fn many_keys(root: &Path, n: usize) {
    cluster(root, &tier("apps", "./apps", None));
    let mut text = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: default\ndata:\n",
    );
    for i in 0..n {
        text.push_str(&format!("  k{i:08}: v{i:08}\n"));
    }
    std::fs::create_dir_all(root.join("apps")).unwrap();
    std::fs::write(root.join("apps/cm.yaml"), text).unwrap();
}

/// One tier of `n` ConfigMaps, 20,000 per file (under the documents
/// budget).
fn many_files(root: &Path, n: usize) {
    cluster(root, &tier("apps", "./apps", None));
    std::fs::create_dir_all(root.join("apps")).unwrap();
    for start in (0..n).step_by(20_000) {
        let docs: Vec<String> = (start..n.min(start + 20_000))
            .map(|i| {
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:07}\n  namespace: default\ndata:\n  a: \"{i}\"\n"
                )
            })
            .collect();
        std::fs::write(
            root.join(format!("apps/cms-{start:07}.yaml")),
            docs.join("---\n"),
        )
        .unwrap();
    }
}

/// One tier of `n` ConfigMaps without a namespace, 20,000 per file: every
/// object has a finding (issue 45: the findings stay bounded).
fn many_findings(root: &Path, n: usize) {
    many_files(root, n);
    for start in (0..n).step_by(20_000) {
        let file = root.join(format!("apps/cms-{start:07}.yaml"));
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("  namespace: default\n", "")).unwrap();
    }
}

/// `n` Kustomizations that all build the same path: one object rendered by
/// every one of them (issue 45: one finding, not one per owner per owner).
fn shared_object(root: &Path, n: usize) {
    let tiers: String = (0..n)
        .map(|i| tier(&format!("t{i:05}"), "./shared", None))
        .collect();
    cluster(root, &tiers);
    std::fs::create_dir_all(root.join("shared")).unwrap();
    std::fs::write(
        root.join("shared/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: default\ndata:\n  a: b\n",
    )
    .unwrap();
}

/// A bootstrap script whose here-document is about `kib` KiB (issue 45: the
/// shell reader has a budget, as the YAML reader does).
fn heredoc_script(root: &Path, kib: usize) {
    cluster(root, &tier("apps", "./apps", None));
    std::fs::create_dir_all(root.join("apps")).unwrap();
    std::fs::write(
        root.join("apps/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\n",
    )
    .unwrap();
    let mut text = String::from(
        "#!/bin/bash\nset -e\ncat <<EOF | kubectl apply -f -\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: default\ndata:\n",
    );
    for i in 0..kib * 1024 / 64 {
        text.push_str(&format!(
            "  key{i:08}: value {i:08} with some text to fill the line\n"
        ));
    }
    text.push_str("EOF\n");
    std::fs::write(root.join("bootstrap.sh"), text).unwrap();
}

/// `n` Kustomizations in one dependsOn loop.
fn cycle(root: &Path, n: usize) {
    let mut tiers = String::new();
    for i in 0..n {
        let prev = format!("t{:05}", (i + n - 1) % n);
        tiers.push_str(&tier(
            &format!("t{i:05}"),
            &format!("./apps/t{i:05}"),
            Some(&prev),
        ));
        config_map_dir(root, i);
    }
    cluster(root, &tiers);
}

/// Each Kustomization applies the next (defined in its own path) and the
/// next depends on it: a nesting `n` deep.
fn nested(root: &Path, n: usize) {
    cluster(root, &tier("t00000", "./apps/t00000", None));
    for i in 0..n {
        let dir = root.join(format!("apps/t{i:05}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n  namespace: default\n"
        );
        if i + 1 < n {
            text.push_str(&tier(
                &format!("t{:05}", i + 1),
                &format!("./apps/t{:05}", i + 1),
                Some(&format!("t{i:05}")),
            ));
        }
        std::fs::write(dir.join("res.yaml"), text).unwrap();
    }
}

/// `n` Kustomizations with no dependsOn.
fn independent(root: &Path, n: usize) {
    let mut tiers = String::new();
    for i in 0..n {
        tiers.push_str(&tier(&format!("t{i:05}"), &format!("./apps/t{i:05}"), None));
        config_map_dir(root, i);
    }
    cluster(root, &tiers);
}

fn config_map_dir(root: &Path, i: usize) {
    let dir = root.join(format!("apps/t{i:05}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("cm.yaml"),
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n  namespace: default\n"),
    )
    .unwrap();
}

fn corpus() -> PathBuf {
    std::env::var_os("CONFORMANCE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"))
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` must not run this.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    println!("| case | renderer | median wall time | peak memory | result |");
    println!("|---|---|---|---|---|");
    let home_ops = corpus().join("onedr0p-home-ops");
    if home_ops.is_dir() {
        let (native, native_mem, summary) = measure_n(&home_ops, "native", runs().max(11));
        println!("| onedr0p-home-ops | native | {native:.3} s | {native_mem:.1} MiB | {summary} |");
        if Command::new("kubectl")
            .arg("version")
            .arg("--client")
            .output()
            .is_ok()
        {
            let (external, external_mem, summary) = measure(&home_ops, "kustomize");
            println!(
                "| onedr0p-home-ops | kustomize | {external:.3} s | {external_mem:.1} MiB | {summary} |"
            );
            println!(
                "| onedr0p-home-ops | ratio | **{:.1}× faster** native | | |",
                external / native
            );
        }
    } else {
        println!(
            "| onedr0p-home-ops | (corpus not found at {}) | | | |",
            home_ops.display()
        );
    }
    if let Some(dir) = std::env::var_os("BENCH_KEEP") {
        platform(Path::new(&dir));
        return;
    }
    {
        let dir = tempfile::tempdir().unwrap();
        platform(dir.path());
        let (time, mem, summary) = measure(dir.path(), "native");
        println!(
            "| synthetic platform (10,000 Kustomizations) | native | {time:.3} s | {mem:.1} MiB | {summary} |"
        );
    }
    for tiers in [100, 1_000, 5_000] {
        let dir = tempfile::tempdir().unwrap();
        synthesize(dir.path(), tiers);
        let (time, mem, summary) = measure(dir.path(), "native");
        println!(
            "| synthetic {tiers} Kustomizations | native | {time:.3} s | {mem:.1} MiB | {summary} |"
        );
    }
    type Make = fn(&Path, usize);
    let cases: [(&str, Make, [usize; 3]); 11] = [
        ("one object of {} MiB", big_object, [2, 4, 8]),
        (
            "one ConfigMap of {} keys",
            many_keys,
            [500_000, 1_000_000, 2_000_000],
        ),
        (
            "one tier of {} objects",
            many_objects,
            [10_000, 20_000, 40_000],
        ),
        (
            "one tier of {} objects in files of 20,000",
            many_files,
            [50_000, 100_000, 200_000],
        ),
        ("a dependsOn chain {} deep", chain, [2_000, 4_000, 8_000]),
        ("a dependsOn cycle of {}", cycle, [2_000, 4_000, 8_000]),
        (
            "Kustomizations nested {} deep",
            nested,
            [2_000, 4_000, 8_000],
        ),
        (
            "{} independent Kustomizations",
            independent,
            [1_000, 3_000, 10_000],
        ),
        (
            "one tier of {} objects, each with a finding",
            many_findings,
            [75_000, 150_000, 300_000],
        ),
        (
            "{} Kustomizations rendering one object",
            shared_object,
            [1_000, 4_000, 10_000],
        ),
        (
            "a bootstrap script of {} KiB (a here-document)",
            heredoc_script,
            [256, 1_024, 40_000],
        ),
    ];
    for (label, make, sizes) in cases {
        for size in sizes {
            let dir = tempfile::tempdir().unwrap();
            make(dir.path(), size);
            let (time, mem, summary) = measure(dir.path(), "native");
            let label = label.replace("{}", &size.to_string());
            println!("| {label} | native | {time:.3} s | {mem:.1} MiB | {summary} |");
        }
    }
}
