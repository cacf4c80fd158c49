//! What the repository installs before Flux, read from its own files, so
//! the cold cluster the convergence model starts from is the one its owners
//! actually bring up:
//!
//! * [`helmfile`]: releases of `helmfile.yaml`, `helmfile.d/`, any
//!   `helmfile*.yaml[.gotmpl]` (a release's chart, or the chart of the Flux
//!   HelmRelease of the same namespace and name); files that a script only
//!   renders for their CRDs (`--include-crds`, piped through a
//!   `CustomResourceDefinition` filter) count for the CRDs alone;
//! * [`scripts`]: what shell scripts, Taskfiles, justfiles and Makefiles
//!   apply (`kubectl apply -k DIR`, `-f DIR|FILE|URL`, `kubectl kustomize
//!   DIR | kubectl apply`, `kustomize build DIR | kubectl apply`, `kubectl
//!   create namespace`), read by [`manifests`] (CRDs, Namespaces,
//!   `helmCharts`, k3s HelmCharts);
//! * [`k3s`]: k3s's auto-deploy manifests and its own `helm.cattle.io` kinds;
//! * [`talos`]: Talos machine configuration (`inlineManifests`,
//!   `extraManifests`, Talos API access, which makes `talos.dev` kinds
//!   exist);
//! * [`terraform`]: Kubernetes namespaces, ConfigMaps, Secrets, Helm
//!   releases and inline manifests that Terraform creates;
//! * [`azure`]: the namespace (and source) of an Azure GitOps
//!   `fluxConfigurations` resource, which the `microsoft.flux` extension
//!   creates (Bicep, ARM, Terraform, `az k8s-configuration flux create`);
//! * [`openshift`]: what an OpenShift/OKD cluster serves from installation
//!   (its API groups, OLM, monitoring, OVN-Kubernetes, `openshift-*`
//!   namespaces), once the repository shows it runs OpenShift.
//!
//! What none of these can show is declared in conformance.yaml
//! (`catalog.preinstalled`, `catalog.preinstalled_namespaces`). Every item
//! keeps the file and line it was read from: `bootstrap (file:line)` in
//! `conformance crds`, in messages and in the JSON report. A bootstrap never
//! excuses what it does not install.

pub mod ansible;
pub mod azure;
pub mod by_hand;
pub mod helmfile;
pub mod k3s;
pub mod manifests;
pub mod merge;
pub mod openshift;
pub mod owners;
pub mod scripts;
pub mod talos;
pub mod terraform;
pub mod unread;
pub mod values;

use crate::model::{Model, Span};
use crate::provenance::{Catalog, Provenance, ProviderSource, SourceCx};
use crate::repo::RepoIndex;

/// Kinds the bootstrap installs, as a source of kinds.
#[derive(Debug)]
pub(crate) struct BootstrapKinds;

impl ProviderSource for BootstrapKinds {
    fn initial(&self, cx: &SourceCx, group: &str, kind: &str) -> Option<Provenance> {
        cx.bootstrap
            .kind(cx.catalog, &cx.cluster.name, group, kind)
            .map(|item| Provenance::Bootstrap {
                at: item.at.clone(),
                via: item.via.clone(),
            })
    }
}

/// Everything the repository installs before Flux.
#[derive(Debug, Clone, Default)]
pub struct Bootstrap {
    /// Every item, sorted by where the repository says so.
    pub items: Vec<Item>,
    /// What the readers could not read or know, by place.
    pub notes: Vec<Note>,
    /// The installing steps the readers saw but could not read, with what
    /// each could create.
    pub unread: Vec<unread::Unread>,
    /// The Flux versions bootstrap steps state, in the order read.
    pub flux: Vec<FluxPin>,
    /// Variables a webhook the bootstrap installs adds to Kustomizations
    /// at admission.
    pub injections: Vec<crate::postbuild::injected::Injection>,
    /// Which cluster each bootstrap file is for.
    clusters: owners::Owners,
}

/// One thing installed before Flux.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Where the repository says so.
    pub at: Span,
    /// How, in words: "helmfile release cert-manager", "kubectl apply -k
    /// bootstrap/crds", "Talos extraManifests".
    pub via: String,
    /// What it installs.
    pub provides: Provides,
}

/// What an item installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provides {
    /// A chart: its CRDs (the catalog's groups for it) and, unless only its
    /// CRDs are applied, its release namespace.
    Chart {
        /// The chart's name, as looked up in the catalog.
        chart: String,
        /// The release namespace, when known.
        namespace: Option<String>,
        /// Only the chart's CRDs are applied (rendered with `--include-crds`, filtered).
        crds_only: bool,
    },
    /// Every kind of a group, or one kind (`group/Kind`).
    Group(String),
    /// One CRD, by name (`servicemonitors.monitoring.coreos.com`).
    Crd(String),
    /// A Namespace.
    Namespace(String),
    /// A ConfigMap or Secret (`Kind/namespace/name`): what a tier's
    /// `substituteFrom` may read.
    Object(String),
    /// A file written into the repository (a setup step's output,
    /// Terraform's `github_repository_file`): a build may read it though
    /// git does not hold it yet.
    File(String),
}

impl Provides {
    /// In words, for reports.
    pub fn describe(&self) -> String {
        match self {
            Provides::Chart {
                chart,
                crds_only: true,
                ..
            } => format!("the CRDs of chart {chart}"),
            Provides::Chart { chart, .. } => format!("chart {chart}"),
            Provides::Group(g) => format!("the {g} CRDs"),
            Provides::Crd(name) => format!("CRD {name}"),
            Provides::Namespace(ns) => format!("namespace {ns}"),
            Provides::Object(o) => o.clone(),
            Provides::File(f) => format!("the file {f}"),
        }
    }
}

/// What a bootstrap reader reads: the repository index, the Flux objects,
/// the catalog, and the scripts (read first: a helmfile is live when a
/// script runs it).
#[derive(Debug)]
pub struct ReadCx<'a> {
    /// The repository index.
    pub index: &'a RepoIndex,
    /// The Flux objects (clusters and their tiers).
    pub model: &'a Model,
    /// The effective chart and runtime catalogs.
    pub catalog: &'a Catalog,
    /// What the repository's scripts apply.
    pub scripts: &'a scripts::Scripts,
    /// Which cluster each bootstrap file is for.
    pub clusters: owners::Owners,
    /// What the readers found besides items: notes and Flux versions.
    found: std::cell::RefCell<Found>,
}

/// What the readers say besides what they install.
#[derive(Debug, Default)]
struct Found {
    notes: Vec<Note>,
    unread: Vec<unread::Unread>,
    flux: Vec<FluxPin>,
    injections: Vec<crate::postbuild::injected::Injection>,
}

impl ReadCx<'_> {
    /// Notes something a reader could not read or could not know.
    pub fn note(&self, at: Span, text: String) {
        self.found.borrow_mut().notes.push(Note { at, text });
    }
    /// Records an installing step that was not read.
    pub fn unread(&self, step: unread::Unread) {
        self.found.borrow_mut().unread.push(step);
    }
    /// Records variables a webhook the bootstrap installs injects.
    pub fn injection(&self, injection: crate::postbuild::injected::Injection) {
        self.found.borrow_mut().injections.push(injection);
    }
    /// Records the Flux version a bootstrap step states.
    pub fn flux(&self, at: Span, written: &str, via: &str) {
        self.found.borrow_mut().flux.push(FluxPin {
            at,
            written: written.to_string(),
            via: via.to_string(),
        });
    }
}

/// Something a bootstrap reader could not read or could not know: "not
/// read: FILE:LINE: why".
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Note {
    /// Where.
    pub at: Span,
    /// Why, in words.
    pub text: String,
}

/// A Flux version a bootstrap step states (`flux install --version`, a
/// helmfile `flux-instance` release, Flux's install manifests at a ref).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FluxPin {
    /// Where.
    pub at: Span,
    /// The version as written (`v2.7.2`, `2.x`).
    pub written: String,
    /// How, in words.
    pub via: String,
}

/// One bootstrap source: a kind of file the repository installs things
/// from before Flux. A new source is a module with a reader listed in
/// [`READERS`].
pub(crate) trait Reader: Sync {
    /// What the source installs, each item located.
    fn read(&self, cx: &ReadCx) -> Vec<Item>;
}

/// Every bootstrap reader, in the order their items are collected.
pub(crate) const READERS: &[&dyn Reader] = &[
    &helmfile::Helmfiles,
    &scripts::ScriptCommands,
    &k3s::K3s,
    &ansible::Ansible,
    &talos::Talos,
    &terraform::Terraform,
    &azure::Azure,
    &openshift::OpenShift,
];

impl Bootstrap {
    /// Reads every bootstrap source of the repository. `model`: the Flux
    /// objects (a helmfile release without a chart takes the chart of the
    /// Flux HelmRelease of the same namespace and name).
    pub fn read(index: &RepoIndex, model: &Model, catalog: &Catalog) -> Bootstrap {
        let scripts = scripts::read(index, catalog.documented_steps.unwrap_or(true));
        Bootstrap::read_with(index, model, catalog, &scripts)
    }

    /// As [`Bootstrap::read`], with the scripts read already
    /// ([`scripts::read`]).
    pub(crate) fn read_with(
        index: &RepoIndex,
        model: &Model,
        catalog: &Catalog,
        scripts: &scripts::Scripts,
    ) -> Bootstrap {
        let cx = ReadCx {
            index,
            model,
            catalog,
            scripts,
            clusters: owners::Owners::of(model, scripts),
            found: Default::default(),
        };
        let mut items: Vec<Item> = READERS.iter().flat_map(|r| r.read(&cx)).collect();
        let Found {
            mut notes,
            mut unread,
            flux,
            injections,
        } = cx.found.into_inner();
        // What archived files install is not the live bootstrap (the
        // helmfiles and scripts an entrypoint runs by name excepted): one
        // note per file instead.
        let named = |file: &str| {
            scripts
                .synced
                .iter()
                .chain(&scripts.crds_only)
                .chain(&scripts.helmfile_named)
                .any(|n| n == file || file.starts_with(&format!("{n}/")))
                || scripts.commands.iter().any(|c| c.at.file == file)
        };
        let mut archived: Vec<String> = items
            .iter()
            .map(|i| i.at.file.clone())
            .filter(|f| is_archived(f) && !named(f))
            .collect();
        archived.sort();
        archived.dedup();
        items.retain(|i| !archived.contains(&i.at.file));
        notes.retain(|n| {
            !(is_archived(&n.at.file) && n.text != ARCHIVED_NOTE && !named(&n.at.file))
        });
        unread.retain(|u| {
            (!is_archived(&u.at.file) || named(&u.at.file))
                && (scripts::on_bootstrap_path(&u.at.file)
                    || scripts.bootstrap_steps.contains(&u.at))
        });
        unread.sort();
        unread.dedup();
        notes.extend(archived.into_iter().map(|file| Note {
            at: Span::new(file, 0),
            text: ARCHIVED_NOTE.into(),
        }));
        notes.sort();
        notes.dedup();
        // A chart known only by its release (rendered manifests carrying
        // Helm's ownership annotations): the chart of the Flux HelmRelease
        // of that namespace and name, which will adopt it.
        for item in &mut items {
            if let Provides::Chart {
                chart, namespace, ..
            } = &mut item.provides
                && catalog.chart(chart).is_none()
                && let Some(flux) = helmfile::flux_chart(model, namespace.as_deref(), chart)
            {
                *chart = flux;
            }
        }
        items.sort_by(|a, b| (&a.at, &a.via).cmp(&(&b.at, &b.via)));
        items.dedup();
        Bootstrap {
            items,
            notes,
            unread,
            flux,
            injections,
            clusters: cx.clusters,
        }
    }

    /// The unread steps of a cluster's bootstrap.
    pub(crate) fn unread_of<'b>(
        &'b self,
        cluster: &'b str,
    ) -> impl Iterator<Item = &'b unread::Unread> + 'b {
        self.unread
            .iter()
            .filter(move |u| self.file_applies(&u.at.file, cluster))
    }

    /// The injections that apply to a cluster.
    pub(crate) fn injections_of(
        &self,
        cluster: &str,
    ) -> Vec<crate::postbuild::injected::Injection> {
        self.injections
            .iter()
            .filter(|i| self.file_applies(&i.at.file, cluster))
            .cloned()
            .collect()
    }

    /// Whether an item applies to a cluster: a bootstrap file whose path
    /// names some clusters (`kubernetes/main/bootstrap/`) is for those;
    /// otherwise for every cluster.
    fn applies(&self, item: &Item, cluster: &str) -> bool {
        self.file_applies(&item.at.file, cluster)
    }

    /// Whether a bootstrap file (by its path) is for a cluster
    /// ([`owners::Owners::applies`]).
    pub(crate) fn file_applies(&self, file: &str, cluster: &str) -> bool {
        self.clusters.applies(file, cluster)
    }

    /// What installs the kind `group/kind` in `cluster` before Flux.
    pub fn kind(&self, catalog: &Catalog, cluster: &str, group: &str, kind: &str) -> Option<&Item> {
        let crd = crate::provenance::crd_name(group, kind);
        let qualified = format!("{group}/{kind}");
        self.items
            .iter()
            .filter(|i| self.applies(i, cluster))
            .find(|i| match &i.provides {
                Provides::Chart { chart, .. } => catalog
                    .chart(chart)
                    .is_some_and(|e| e.groups.iter().any(|g| g == group)),
                Provides::Group(g) => *g == group || *g == qualified,
                Provides::Crd(name) => *name == crd,
                Provides::Namespace(_) | Provides::Object(_) | Provides::File(_) => false,
            })
    }

    /// The step that writes `file` into the repository (a setup step's
    /// output), when one does: the same path, or one the step names
    /// relative to a directory it leaves to the reader (`base/x.enc.yaml`
    /// for `helmRepo/base/x.enc.yaml`).
    pub fn writes(&self, file: &str) -> Option<&Item> {
        self.items.iter().find(|i| {
            matches!(&i.provides, Provides::File(f)
                if f == file || file.ends_with(&format!("/{f}")))
        })
    }

    /// What creates namespace `ns` in `cluster` before Flux.
    pub fn namespace(&self, cluster: &str, ns: &str) -> Option<&Item> {
        self.items
            .iter()
            .filter(|i| self.applies(i, cluster))
            .find(|i| match &i.provides {
                Provides::Namespace(n) => n == ns,
                Provides::Chart {
                    namespace: Some(n),
                    crds_only: false,
                    ..
                } => n == ns,
                _ => false,
            })
    }

    /// What applies the object `Kind/namespace/name` in `cluster` before
    /// Flux.
    pub fn object(&self, cluster: &str, object: &str) -> Option<&Item> {
        self.items
            .iter()
            .filter(|i| self.applies(i, cluster))
            .find(|i| matches!(&i.provides, Provides::Object(o) if o == object))
    }

    /// The Flux version a bootstrap step of `cluster` states, if any.
    pub(crate) fn flux_of(&self, cluster: &str) -> Option<&FluxPin> {
        self.flux
            .iter()
            .find(|p| self.file_applies(&p.at.file, cluster))
    }

    /// The items that apply to a cluster.
    pub(crate) fn of_cluster<'b>(
        &'b self,
        cluster: &'b str,
    ) -> impl Iterator<Item = &'b Item> + 'b {
        self.items.iter().filter(move |i| self.applies(i, cluster))
    }
}

/// Each cluster's entry-path segments that no other cluster's entry path
/// has.
/// Folder names that keep what no longer runs.
const ARCHIVES: &[&str] = &[
    "archive",
    "archived",
    ".archive",
    ".archived",
    "_archive",
    "attic",
    "deprecated",
];

/// Whether a file is kept under an archive folder (`archive/`,
/// `.archived/`, `attic/`, `deprecated/`): no longer the live bootstrap,
/// unless an entrypoint runs it by name.
pub(crate) fn is_archived(rel: &str) -> bool {
    rel.split('/')
        .any(|segment| ARCHIVES.contains(&segment.to_ascii_lowercase().as_str()))
}

/// The note for a bootstrap file left out as archived.
pub(crate) const ARCHIVED_NOTE: &str =
    "not read as bootstrap: it is under an archive folder and no entrypoint runs it";

/// What the manifest at `url` installs: when the URL names a file of this
/// repository on GitHub (`raw.githubusercontent.com/OWNER/REPO/REF/PATH`,
/// `github.com/OWNER/REPO/raw|blob/REF/PATH`, REF possibly
/// `refs/heads/NAME`) and the repository holds PATH, that file as read
/// from the repository; otherwise what [`url_provides`] knows of the URL.
pub fn fetched(index: &RepoIndex, catalog: &Catalog, url: &str) -> Vec<Provides> {
    match local_file(index, url) {
        Some(path) => manifests::read(index, &path),
        None => url_provides(catalog, url),
    }
}

/// The note for a manifest URL applied before Flux whose contents the
/// tool does not know (neither a file of this repository nor in the
/// catalog), with the line of config that settles it.
pub(crate) fn unknown_url(url: &str) -> Option<String> {
    // Flux's own install manifests: the Flux version, read elsewhere.
    if crate::provenance::releases::flux_manifests_version(url).is_some() {
        return None;
    }
    Some(format!(
        "{url} provides kinds this tool does not know; if it installs CRDs the tiers use, declare them: `catalog.manifests: [{{url: \"{url}\", groups: [GROUP]}}]`"
    ))
}

/// The repository file a GitHub URL names, when the repository has it.
fn local_file(index: &RepoIndex, url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://raw.githubusercontent.com/")
        .map(|r| r.splitn(3, '/').nth(2).map(str::to_string))
        .or_else(|| {
            url.strip_prefix("https://github.com/").map(|r| {
                let parts: Vec<&str> = r.splitn(4, '/').collect();
                match parts.as_slice() {
                    [_, _, "raw" | "blob", rest] => Some(rest.to_string()),
                    _ => None,
                }
            })
        })
        .flatten()?;
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    // REF is one segment, or `refs/heads/NAME` / `refs/tags/NAME`.
    let path = match rest.strip_prefix("refs/") {
        Some(r) => r.splitn(3, '/').nth(2)?,
        None => rest.split_once('/')?.1,
    };
    let (normal, escapes) = crate::repo::normalize("", path);
    (!escapes && !normal.is_empty() && index.kind(&normal) == Some(&crate::repo::Kind::File))
        .then_some(normal)
}

/// What a manifest URL installs: a URL naming one CRD file
/// (`…/monitoring.coreos.com_servicemonitors.yaml`,
/// `…/dnsendpoints.externaldns.k8s.io.yaml`), else the catalog's
/// `manifests` entry it matches.
pub(crate) fn url_provides(catalog: &Catalog, url: &str) -> Vec<Provides> {
    if let Some(crd) = url_crd(url) {
        return vec![crd];
    }
    catalog
        .manifest_groups(url)
        .map(|groups| groups.iter().map(|g| Provides::Group(g.clone())).collect())
        .unwrap_or_default()
}

/// The CRD a manifest URL's file name names, by the conventions CRD files
/// are named with: controller-gen's `GROUP_PLURAL.yaml`
/// (`external-secrets.io_clustersecretstores.yaml`) and
/// `PLURAL.GROUP.yaml`.
pub(crate) fn url_crd(url: &str) -> Option<Provides> {
    let url = url.split(['?', '#']).next().unwrap_or_default();
    let file = url.rsplit('/').next().unwrap_or_default();
    let stem = file
        .strip_suffix(".yaml")
        .or_else(|| file.strip_suffix(".yml"))
        .unwrap_or(file);
    if let Some((group, plural)) = stem.split_once('_')
        && group.contains('.')
        && !plural.is_empty()
        && !plural.contains('.')
    {
        return Some(Provides::Crd(format!("{plural}.{group}")));
    }
    if let Some((plural, group)) = stem.split_once('.')
        && group.matches('.').count() >= 1
        && plural.chars().all(|c| c.is_ascii_lowercase())
        && plural.ends_with('s')
        && ![
            "install",
            "experimental-install",
            "standard-install",
            "crds",
            "bundle",
        ]
        .contains(&plural)
    {
        return Some(Provides::Crd(format!("{plural}.{group}")));
    }
    None
}

/// Template markup removed so a templated manifest (`.j2`, `.gotmpl`,
/// `.tpl`) can be read as YAML: directive-only lines are dropped, inline
/// expressions become a placeholder.
pub(crate) fn untemplate(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim();
        let jinja = t.starts_with("{%") && t.ends_with("%}") || t.starts_with("{#");
        let go_control =
            t.starts_with("{{") && t.ends_with("}}") && t.matches("{{").count() == 1 && {
                let inner = t
                    .trim_start_matches("{{")
                    .trim_start_matches('-')
                    .trim_start();
                [
                    "if ",
                    "else",
                    "end",
                    "range ",
                    "with ",
                    "define ",
                    "template ",
                    "block ",
                    "/*",
                    "$",
                ]
                .iter()
                .any(|k| inner.starts_with(k))
            };
        if jinja || go_control {
            out.push('\n');
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find("{{").or_else(|| rest.find("{%")) {
            out.push_str(&rest[..start]);
            let close = if rest[start..].starts_with("{{") {
                "}}"
            } else {
                "%}"
            };
            match rest[start..].find(close) {
                Some(end) => {
                    out.push('x');
                    rest = &rest[start + end + 2..];
                }
                None => {
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_file_urls_name_their_crd() {
        let catalog = Catalog::embedded();
        assert_eq!(
            url_provides(
                catalog,
                "https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.65.1/example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml"
            ),
            [Provides::Crd("podmonitors.monitoring.coreos.com".into())]
        );
        assert_eq!(
            url_provides(
                catalog,
                "https://raw.githubusercontent.com/kubernetes-sigs/external-dns/refs/tags/v0.21.0/config/crd/standard/dnsendpoints.externaldns.k8s.io.yaml"
            ),
            [Provides::Crd("dnsendpoints.externaldns.k8s.io".into())]
        );
        assert!(
            url_provides(
                catalog,
                "https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.3.0/experimental-install.yaml"
            )
            .contains(&Provides::Group("gateway.networking.k8s.io".into()))
        );
        assert!(url_provides(catalog, "https://example.com/app.yaml").is_empty());
    }

    #[test]
    fn templates_are_stripped_to_yaml() {
        let text = "{% if x %}\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ ns }}\n{% endif %}\n";
        let docs = crate::yaml::parse_documents(&untemplate(text)).unwrap();
        assert_eq!(docs[0].str_at(&["kind"]).as_deref(), Some("Namespace"));
    }
}
