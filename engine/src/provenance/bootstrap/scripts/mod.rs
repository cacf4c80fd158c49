//! What the repository's scripts apply before Flux: shell scripts,
//! Taskfiles (`Taskfile*.y*ml`, `.taskfiles/**`, parsed as YAML by
//! [`taskfile`], read together by [`taskfiles`], each command then read as
//! a script), justfiles (`justfile`, `.justfile`, `*.just`), Makefiles and
//! the shell blocks of setup pages ([`markdown`]). The shell is parsed ([`shell`], with
//! brush-parser): a script, a Taskfile command and a documented step whole,
//! a recipe one line at a time, a text the parser refuses line by line
//! (continuations joined). Recognised:
//!
//! * `kubectl apply -k DIR` (`--kustomize`), `kubectl apply -f DIR|FILE|URL`
//!   (`--filename`, `=` forms);
//! * `kustomize build DIR | … kubectl apply -f -`, `kubectl kustomize
//!   [--enable-helm] DIR | … kubectl apply`;
//! * `cat|envsubst <|op inject --in-file|minijinja-cli|sops -d FILE | …
//!   kubectl apply`: the file;
//! * `helmfile … -f FILE sync|apply`, and `helmfile … -f FILE template | …
//!   CustomResourceDefinition … | kubectl apply` (that file's CRDs only);
//! * `kubectl create namespace NS`, `kubectl create configmap|secret NAME -n NS`;
//! * in a file that runs `kubectl apply`, any URL of a manifest the catalog
//!   knows (an array of CRD URLs looped over).
//!
//! Paths are resolved as the tools would: variables the file defines (`VAR=…`,
//! Taskfile `vars:`, just `name := …`), the file's own directory (`$(dirname
//! "$0")`) and the root (`$(git rev-parse --show-toplevel)`, `{{.ROOT_DIR}}`),
//! relative to the file's directory, else to the root; what cannot be is left out.

use std::collections::BTreeMap;

mod commands;
mod expand;
mod markdown;
mod paths;
mod shell;
mod taskfile;
mod taskfiles;
mod words;

pub use paths::on_bootstrap_path;
pub(crate) use paths::{bootstrap_name, is_script};

use super::{Item, Provides, manifests};
use crate::model::Span;
use crate::provenance::Catalog;
use crate::repo::{Kind, RepoIndex};

/// Everything the scripts apply.
#[derive(Debug, Clone, Default)]
pub struct Scripts {
    /// Every applying command, each once, in the order read.
    pub commands: Vec<Command>,
    /// Helmfiles a script renders only for their CRDs, by path.
    pub crds_only: Vec<String>,
    /// Helmfiles a script syncs or applies, by path.
    pub synced: Vec<String>,
    /// Helmfiles any command names (`helmfile -f FILE` with any
    /// subcommand, `crds=$(helmfile -f FILE template | yq …)` included),
    /// by path: they are live bootstrap files even when what they feed is
    /// not read.
    pub helmfile_named: Vec<String>,
    /// Whether some command runs a helmfile this reader could not locate
    /// (no `-f`, or a path it cannot resolve): then the conventional
    /// locations stay live.
    pub helmfile_unresolved: bool,
    /// Flux versions the scripts state (`flux install --version`, Flux's
    /// install manifests at a ref): where, the version, how.
    pub flux: Vec<(Span, String, String)>,
    /// Installing commands that were not understood, and why ("not read:
    /// …"), and what the tool cannot know of a command.
    pub notes: Vec<(Span, String)>,
    /// The installing commands that were not understood, with what each
    /// could create.
    pub unread: Vec<super::unread::Unread>,
    /// Unread steps on the bootstrap path by what runs them, not by their
    /// file's path: the commands of a Taskfile task named for the
    /// bootstrap (`bootstrap:` in `.taskfiles/Kubernetes/Tasks.yml`).
    pub bootstrap_steps: std::collections::BTreeSet<Span>,
    /// How many targets commands have named (repeats included).
    understood: usize,
}

impl Scripts {
    /// How much has been found so far (to tell whether a command added
    /// anything).
    fn found(&self) -> (usize, usize) {
        (self.understood, self.flux.len())
    }
    /// How far each list has grown, for [`Self::place_since`].
    fn mark(&self) -> Mark {
        Mark {
            commands: self.commands.len(),
            flux: self.flux.len(),
            notes: self.notes.len(),
            unread: self.unread.len(),
        }
    }
    /// Places what was found since `mark` (read from a text that starts on
    /// `line` of a file: its lines counted from 1) at its line of that
    /// file, and in `file` when given.
    fn place_since(&mut self, mark: Mark, line: u32, file: Option<&str>) {
        for at in self.commands[mark.commands..]
            .iter_mut()
            .map(|c| &mut c.at)
            .chain(self.flux[mark.flux..].iter_mut().map(|p| &mut p.0))
            .chain(self.notes[mark.notes..].iter_mut().map(|n| &mut n.0))
            .chain(self.unread[mark.unread..].iter_mut().map(|u| &mut u.at))
        {
            at.line = line + at.line.saturating_sub(1);
            if let Some(file) = file {
                at.file = file.to_string();
            }
        }
    }
    /// Records a command once.
    fn add(&mut self, at: &Span, target: Target) {
        self.understood += 1;
        let c = Command {
            at: at.clone(),
            target,
            documented: false,
        };
        if !self.commands.contains(&c) {
            self.commands.push(c);
        }
    }
}

/// How many commands, Flux versions and notes [`Scripts`] held at some
/// point.
#[derive(Debug, Clone, Copy)]
struct Mark {
    commands: usize,
    flux: usize,
    notes: usize,
    unread: usize,
}

/// One applying command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Where the command is.
    pub at: Span,
    /// What it applies.
    pub target: Target,
    /// Read from a fenced shell block of a Markdown file (a documented
    /// step), not from a script.
    pub documented: bool,
}

/// What a command applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A kustomization directory (`-k`, `kustomize build`).
    Kustomization(String),
    /// A directory or file (`-f`).
    Path(String),
    /// A directory or file applied with `--namespace NS`: objects that name
    /// no namespace go there.
    PathIn(String, String),
    /// A manifest URL (`-f https://…`, or a known manifest's URL in a file that applies).
    Url(String),
    /// Manifests written in the script (`kubectl apply -f - <<EOF`, `cat
    /// <<EOF | kubectl apply -f -`): the here-document's text.
    Inline(String),
    /// A namespace (`kubectl create namespace NS`).
    Namespace(String),
    /// `kubectl create configmap|secret [generic|tls|docker-registry] NAME
    /// -n NS`: `Kind/namespace/name`.
    Object(String),
    /// A file the command writes into the repository (`> FILE`, `tee FILE`).
    File(String),
    /// `helm install|upgrade --install RELEASE CHART`: the chart (its last
    /// path segment), the release namespace, whether its CRDs are
    /// installed, and whether `--create-namespace` creates the namespace.
    Chart {
        /// The chart's name.
        chart: String,
        /// `-n`/`--namespace`, when given.
        namespace: Option<String>,
        /// False with `--skip-crds` or the chart's CRD switch set to false.
        crds: bool,
        /// `--create-namespace`.
        create_namespace: bool,
    },
}

impl Command {
    /// What the command installs.
    pub fn items(&self, index: &RepoIndex, catalog: &Catalog) -> Vec<Item> {
        let item = |provides: Provides, via: String| Item {
            at: self.at.clone(),
            via: if self.documented {
                format!("documented step: {via}")
            } else {
                via
            },
            provides,
        };
        match &self.target {
            Target::Kustomization(dir) => manifests::read(index, dir)
                .into_iter()
                .map(|p| item(p, format!("kubectl apply -k {dir}")))
                .collect(),
            Target::Path(path) => manifests::read(index, path)
                .into_iter()
                .map(|p| item(p, format!("kubectl apply -f {path}")))
                .collect(),
            Target::PathIn(path, ns) => manifests::read_in(index, path, ns)
                .into_iter()
                .map(|p| item(p, format!("kubectl apply -n {ns} -f {path}")))
                .collect(),
            Target::Url(url) => super::fetched(index, catalog, url)
                .into_iter()
                .map(|p| item(p, format!("kubectl apply -f {url}")))
                .collect(),
            Target::Inline(text) => inline(text)
                .0
                .into_iter()
                .map(|p| item(p, "kubectl apply -f - (a here-document)".to_string()))
                .collect(),
            Target::File(file) => {
                vec![item(Provides::File(file.clone()), format!("writes {file}"))]
            }
            Target::Object(object) => vec![item(
                Provides::Object(object.clone()),
                format!("kubectl create {object}"),
            )],
            Target::Namespace(ns) => vec![item(
                Provides::Namespace(ns.clone()),
                format!("kubectl create namespace {ns}"),
            )],
            Target::Chart {
                chart,
                namespace,
                crds,
                create_namespace,
            } => {
                let via = format!("helm install {chart}");
                let mut out = Vec::new();
                if *crds {
                    out.push(item(
                        Provides::Chart {
                            chart: chart.clone(),
                            namespace: namespace.clone().filter(|_| *create_namespace),
                            crds_only: false,
                        },
                        via.clone(),
                    ));
                }
                if *create_namespace && let Some(ns) = namespace {
                    out.push(item(Provides::Namespace(ns.clone()), via));
                }
                out
            }
        }
    }
}

/// What a here-document's manifests install, and (in words) what they
/// would install but name with a value the script does not show
/// (`name: ${NAME}`), which is left out.
fn inline(text: &str) -> (Vec<Provides>, Vec<String>) {
    let docs = crate::yaml::parse_text(text).unwrap_or_default();
    manifests::objects_of(&docs).into_iter().fold(
        (Vec::new(), Vec::new()),
        |(mut kept, mut unknown), p| {
            let d = p.describe();
            if d.contains('$') || d.contains("{{") {
                unknown.push(d);
            } else {
                kept.push(p);
            }
            (kept, unknown)
        },
    )
}

/// The largest script (or Taskfile command, documented block) read: the
/// shell reader's budget, as the YAML reader has one. Real bootstrap
/// scripts are a few kilobytes; a larger text is not read, and a note says
/// so.
pub(super) const MAX_SCRIPT_BYTES: usize = 1024 * 1024;

/// Reads every script of the repository, and, when `documented`, the
/// shell blocks of its Markdown files.
pub fn read(index: &RepoIndex, documented: bool) -> Scripts {
    let mut out = Scripts::default();
    let mut texts: Vec<(String, String)> = live_scripts(index, &mut out)
        .into_iter()
        .filter_map(|rel| index.read_text(&rel).ok().map(|t| (rel, t)))
        .collect();
    let taskfiles = Taskfiles::read(index, &mut texts);
    for (rel, text) in &texts {
        taskfiles.scan(index, rel, text, &mut out);
    }
    if documented {
        read_documented(index, &mut out);
    }
    out
}

/// The scripts that still run, by path. Scripts under an archive folder
/// no longer run (a live Taskfile that includes one still reads it, in
/// [`Taskfiles::read`]); a note says so of one that would install
/// something.
fn live_scripts(index: &RepoIndex, out: &mut Scripts) -> Vec<String> {
    index
        .below("")
        .filter(|(rel, kind)| **kind == Kind::File && is_script(rel))
        .map(|(rel, _)| rel.to_string())
        .filter(|rel| {
            let archived = super::is_archived(rel);
            // Said only of one that would install something.
            if archived && let Ok(text) = index.read_text(rel) {
                let mut would = Scripts::default();
                scan(index, rel, &text, &variables(&text), &mut would);
                if !would.commands.is_empty() || !would.synced.is_empty() {
                    out.notes
                        .push((Span::new(rel.as_str(), 0), super::ARCHIVED_NOTE.into()));
                }
            }
            !archived
        })
        .collect()
}

/// The documented steps: each fenced shell block of each Markdown file,
/// read as a script placed at the block's lines.
fn read_documented(index: &RepoIndex, out: &mut Scripts) {
    let files: Vec<String> = index
        .below("")
        .filter(|(rel, kind)| {
            **kind == Kind::File
                && markdown::is_markdown(rel)
                && markdown::is_setup_page(rel)
                && !super::is_archived(rel)
        })
        .map(|(rel, _)| rel.to_string())
        .collect();
    for rel in files {
        let Ok(text) = index.read_text(&rel) else {
            continue;
        };
        for block in markdown::blocks(&text) {
            let mark = out.mark();
            scan(index, &rel, &block.text, &variables(&block.text), out);
            for c in &mut out.commands[mark.commands..] {
                c.documented = true;
            }
            out.place_since(mark, block.line, None);
        }
    }
}

/// What one command line of a file applies (a helmfile hook's command),
/// placed at `line` of `rel`.
pub(crate) fn command_line(index: &RepoIndex, rel: &str, line: u32, text: &str) -> Vec<Command> {
    let mut out = Scripts::default();
    scan(index, rel, text, &BTreeMap::new(), &mut out);
    for c in &mut out.commands {
        c.at.line = line + c.at.line.saturating_sub(1);
    }
    out.commands
}

/// The directory of a repository path (`""` for the root).
pub(super) fn dir_of(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(d, _)| d)
}

use commands::scan;
use expand::variables;
use taskfiles::Taskfiles;

/// The bootstrap reader of the commands of scripts, Taskfiles, justfiles and Makefiles.
#[derive(Debug)]
pub(crate) struct ScriptCommands;

impl super::Reader for ScriptCommands {
    fn read(&self, cx: &super::ReadCx) -> Vec<super::Item> {
        for (at, version, via) in &cx.scripts.flux {
            cx.flux(at.clone(), version, via);
        }
        for (at, text) in &cx.scripts.notes {
            cx.note(at.clone(), text.clone());
        }
        for step in &cx.scripts.unread {
            cx.unread(step.clone());
        }
        let mut items = Vec::new();
        for c in &cx.scripts.commands {
            let found = c.items(cx.index, cx.catalog);
            if let Target::Inline(text) = &c.target {
                for d in inline(text).1 {
                    cx.note(
                        c.at.clone(),
                        format!(
                            "not read: a here-document applies {d}, whose name needs a value this tool cannot know"
                        ),
                    );
                    // `Secret/flux-system/${NAME}`: the kind is known.
                    let mut parts = d.splitn(3, '/');
                    let kind = parts.next().unwrap_or_default().to_string();
                    let namespace = match (parts.next(), parts.next()) {
                        (Some(ns), Some(_)) if !ns.contains('$') && !ns.contains("{{") => {
                            Some(ns.to_string())
                        }
                        _ => None,
                    };
                    cx.unread(super::unread::Unread {
                        at: c.at.clone(),
                        command: format!("a here-document applying {d}"),
                        could: super::unread::Could::Kind { kind, namespace },
                    });
                }
            }
            if found.is_empty()
                && let Target::Url(url) = &c.target
                && let Some(note) = super::unknown_url(url)
            {
                cx.note(c.at.clone(), note);
            }
            items.extend(found);
        }
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_text(files: &[(&str, &str)], script: &str) -> Scripts {
        let index = RepoIndex::from_memory(files);
        let text = files.iter().find(|(p, _)| *p == script).unwrap().1;
        let mut out = Scripts::default();
        scan(&index, script, text, &variables(text), &mut out);
        out
    }

    #[test]
    fn kubectl_forms_and_pipelines() {
        let files = [
            ("bootstrap/crds/kustomization.yaml", "resources: []\n"),
            (
                "bootstrap/ns.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
            ),
            ("bootstrap/helmfile.d/00-crds.yaml", "releases: []\n"),
            (
                "bootstrap/mod.just",
                "base:\n    if ! kustomize build {{ source_directory() }}/crds | just template - | kubectl apply --server-side -f -; then\n        exit 1\n    fi\n    kubectl apply -f \"{{ source_directory() }}/ns.yaml\"\n    helmfile -f {{ source_directory() }}/helmfile.d/00-crds.yaml template -q | yq 'select(.kind == \"CustomResourceDefinition\")' | kubectl apply -f -\n    kubectl create namespace flux-system\n    kubectl create secret generic sops-age -n flux-system --from-file=age.agekey=/dev/stdin\n    kubectl -n flux-system create configmap cluster-info --from-literal=a=b\n    kubectl create secret generic \"$NAME\" -n flux-system\n",
            ),
        ];
        let out = scan_text(&files, "bootstrap/mod.just");
        let targets: Vec<&Target> = out.commands.iter().map(|c| &c.target).collect();
        assert!(
            targets.contains(&&Target::Kustomization("bootstrap/crds".into())),
            "{targets:?}"
        );
        assert!(
            targets.contains(&&Target::Path("bootstrap/ns.yaml".into())),
            "{targets:?}"
        );
        assert!(
            targets.contains(&&Target::Namespace("flux-system".into())),
            "{targets:?}"
        );
        assert!(
            targets.contains(&&Target::Object("Secret/flux-system/sops-age".into())),
            "{targets:?}"
        );
        assert!(targets.contains(&&Target::Object(
            "ConfigMap/flux-system/cluster-info".into()
        )));
        assert!(
            !targets
                .iter()
                .any(|t| matches!(t, Target::Object(o) if o.contains('$'))),
            "{targets:?}"
        );
        assert_eq!(out.crds_only, ["bootstrap/helmfile.d/00-crds.yaml"]);
    }

    #[test]
    fn variables_and_taskfile_vars_resolve() {
        let files = [
            ("kubernetes/bootstrap/kustomization.yaml", "resources: []\n"),
            (
                "Taskfile.yaml",
                "vars:\n  KUBERNETES_DIR: '{{.ROOT_DIR}}/kubernetes'\ntasks:\n  bootstrap:\n    cmds:\n      - kubectl apply --server-side --kustomize {{.KUBERNETES_DIR}}/bootstrap\n",
            ),
            (
                "scripts/crds.sh",
                "ROOT_DIR=\"$(git rev-parse --show-toplevel)\"\nfile=\"${ROOT_DIR}/kubernetes/bootstrap\"\nkubectl apply -k \"${file}\"\n",
            ),
        ];
        let out = scan_text(&files, "Taskfile.yaml");
        assert_eq!(
            out.commands[0].target,
            Target::Kustomization("kubernetes/bootstrap".into())
        );
        let out = scan_text(&files, "scripts/crds.sh");
        assert_eq!(
            out.commands[0].target,
            Target::Kustomization("kubernetes/bootstrap".into())
        );
    }

    #[test]
    fn flow_style_taskfiles_and_their_includes_are_read() {
        let files = [
            (
                "Taskfile.yaml",
                "{ version: '3', env: { BOOTSTRAP_DIR: '{{.ROOT_DIR}}/bootstrap' }, includes: { bootstrap: .taskfiles/bootstrap }, tasks: {} }\n",
            ),
            (
                ".taskfiles/bootstrap/Taskfile.yaml",
                "{ version: \"3\", tasks: { apps: { cmds: [ \"helmfile --file {{.BOOTSTRAP_DIR}}/helmfile.d/01-apps.yaml sync\", { cmd: \"kubectl apply --server-side -k {{.BOOTSTRAP_DIR}}/crds\" }, \"kubectl apply -f {{.TASKFILE_DIR}}/ns.yaml\" ] } } }\n",
            ),
            (
                ".taskfiles/bootstrap/ns.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
            ),
            ("bootstrap/helmfile.d/01-apps.yaml", "releases: []\n"),
            ("bootstrap/crds/kustomization.yaml", "resources: []\n"),
        ];
        let index = RepoIndex::from_memory(&files);
        let out = read(&index, true);
        let targets: Vec<&Target> = out.commands.iter().map(|c| &c.target).collect();
        assert!(
            targets.contains(&&Target::Kustomization("bootstrap/crds".into())),
            "{targets:?}"
        );
        assert!(
            targets.contains(&&Target::Path(".taskfiles/bootstrap/ns.yaml".into())),
            "{targets:?}"
        );
        assert_eq!(out.synced, ["bootstrap/helmfile.d/01-apps.yaml"]);
        assert!(
            out.commands
                .iter()
                .all(|c| c.at.file == ".taskfiles/bootstrap/Taskfile.yaml" && c.at.line == 1)
        );
    }

    #[test]
    fn included_taskfiles_anywhere_run_in_their_dir() {
        let files = [
            (
                "Taskfile.yaml",
                "version: '3'\nincludes:\n  tools:\n    taskfile: ./tools/tasks.yml\n    dir: ./kubernetes\n  more: ./more\n",
            ),
            (
                "tools/tasks.yml",
                "version: '3'\ntasks:\n  up:\n    cmds:\n      - kubectl apply -k bootstrap\n      - kubectl apply -f {{.TASKFILE_DIR}}/ns.yaml\n",
            ),
            (
                "more/Taskfile.yml",
                "version: '3'\ntasks:\n  up: kubectl create namespace more\n",
            ),
            (
                "tools/ns.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
            ),
            ("kubernetes/bootstrap/kustomization.yaml", "resources: []\n"),
        ];
        let index = RepoIndex::from_memory(&files);
        let out = read(&index, true);
        let got: Vec<(&str, u32, &Target)> = out
            .commands
            .iter()
            .map(|c| (c.at.file.as_str(), c.at.line, &c.target))
            .collect();
        assert!(
            got.contains(&(
                "tools/tasks.yml",
                5,
                &Target::Kustomization("kubernetes/bootstrap".into())
            )),
            "{got:?}"
        );
        assert!(
            got.contains(&("tools/tasks.yml", 6, &Target::Path("tools/ns.yaml".into()))),
            "{got:?}"
        );
        assert!(
            got.contains(&("more/Taskfile.yml", 3, &Target::Namespace("more".into()))),
            "{got:?}"
        );
    }

    #[test]
    fn chart_repository_urls_install_nothing() {
        let files = [(
            "scripts/bootstrap.sh",
            "kubectl apply -f https://github.com/cert-manager/cert-manager/releases/download/v1.16.0/cert-manager.crds.yaml\nhelm repo add longhorn https://charts.longhorn.io\nhelm upgrade --install longhorn longhorn --repo https://charts.longhorn.io -n longhorn-system\n",
        )];
        let out = scan_text(&files, "scripts/bootstrap.sh");
        let urls: Vec<&Target> = out
            .commands
            .iter()
            .map(|c| &c.target)
            .filter(|t| matches!(t, Target::Url(_)))
            .collect();
        assert_eq!(
            urls,
            [&Target::Url(
                "https://github.com/cert-manager/cert-manager/releases/download/v1.16.0/cert-manager.crds.yaml"
                    .into()
            )]
        );
    }

    #[test]
    fn helm_installs_behind_wrappers_and_continuations_with_their_crd_switches() {
        let files = [(
            "scripts/bootstrap.sh",
            "helm repo add longhorn https://charts.longhorn.io\nmise exec -- helm upgrade --install longhorn longhorn/longhorn \\\n  --namespace longhorn-system --create-namespace \\\n  --set persistence.defaultClass=false\nhelm install cert-manager oci://quay.io/jetstack/charts/cert-manager -n cert-manager --set crds.enabled=false\nhelm upgrade cilium cilium/cilium -n kube-system\nhelm template x cilium/cilium\n",
        )];
        let out = scan_text(&files, "scripts/bootstrap.sh");
        let targets: Vec<(u32, &Target)> = out
            .commands
            .iter()
            .map(|c| (c.at.line, &c.target))
            .collect();
        assert_eq!(
            targets,
            [
                (
                    2,
                    &Target::Chart {
                        chart: "longhorn".into(),
                        namespace: Some("longhorn-system".into()),
                        crds: true,
                        create_namespace: true,
                    }
                ),
                (
                    5,
                    &Target::Chart {
                        chart: "cert-manager".into(),
                        namespace: Some("cert-manager".into()),
                        crds: false,
                        create_namespace: false,
                    }
                ),
            ]
        );
    }

    #[test]
    fn installing_commands_not_understood_are_noted_with_why() {
        let files = [
            ("bootstrap/crds/kustomization.yaml", "resources: []\n"),
            (
                "scripts/up.sh",
                "kubectl apply -k bootstrap/crds\nkubectl apply -f \"$1/manifests\"\nkubectl apply -k ./missing\nkustomize build bootstrap/crds | kubectl apply -f -\ncurl -sL x | kubectl apply -f -\nkubectl create namespace \"$NS\" --dry-run=client -o yaml | kubectl apply -f -\nkubectl get pods\nhelm repo add a https://charts.example.com\nhelm install x \"$CHART\"\nflux install\nflux bootstrap github --version v2.4.0\n",
            ),
        ];
        let out = scan_text(&files, "scripts/up.sh");
        let lines: Vec<u32> = out.notes.iter().map(|(at, _)| at.line).collect();
        assert_eq!(lines, [2, 3, 5, 6, 9, 10], "{:?}", out.notes);
        assert!(out.notes[0].1.contains("cannot know"), "{:?}", out.notes[0]);
        assert!(
            out.notes[1].1.contains("not a file or directory"),
            "{:?}",
            out.notes[1]
        );
        assert!(
            out.notes[2].1.contains("feeds `-f -`"),
            "{:?}",
            out.notes[2]
        );
        assert!(out.notes[5].1.contains("--version"), "{:?}", out.notes[5]);
        assert!(
            out.notes
                .iter()
                .all(|(_, n)| n.starts_with("not read: ") || n.contains("flux install"))
        );
    }

    #[test]
    fn just_path_expressions_and_passive_commands() {
        let files = [
            ("bootstrap/helmfile.yaml", "releases: []\n"),
            ("bootstrap/crds/kustomization.yaml", "resources: []\n"),
            (
                "bootstrap/mod.just",
                "bootstrap_dir := source_directory()\ncrds := source_directory() / \"crds\"\n\nup:\n    @helmfile --file \"{{bootstrap_dir}}/helmfile.yaml\" sync --hide-notes\n    -kubectl apply -k {{crds}}\n    kubectl diff -f https://github.com/cert-manager/cert-manager/releases/download/v1.16.0/cert-manager.crds.yaml\n    echo \"kubectl apply -f https://github.com/cert-manager/cert-manager/releases/download/v1.16.0/cert-manager.crds.yaml\"\n",
            ),
        ];
        let out = scan_text(&files, "bootstrap/mod.just");
        assert_eq!(out.synced, ["bootstrap/helmfile.yaml"]);
        let targets: Vec<&Target> = out.commands.iter().map(|c| &c.target).collect();
        assert_eq!(
            targets,
            [&Target::Kustomization("bootstrap/crds".into())],
            "{:?}",
            out.notes
        );
        assert!(out.notes.is_empty(), "{:?}", out.notes);
    }

    #[test]
    fn unresolvable_paths_are_left_out() {
        let files = [(
            "mod.just",
            "apply ks_path:\n    kustomize build \"{{ ks_path }}\" | kubectl apply -f -\n",
        )];
        let out = scan_text(&files, "mod.just");
        assert!(out.commands.is_empty(), "{:?}", out.commands);
    }

    #[test]
    fn arrays_loops_and_script_arguments() {
        let script = "#!/usr/bin/env bash\nexport ROOT_DIR=\"$(git rev-parse --show-toplevel)\"\nreadonly CLUSTER=\"${1:?}\"\nfunction apply_configmaps() {\n    local -r configmaps=(\n        \"${ROOT_DIR}/kubernetes/${CLUSTER}/vars/cluster-settings.yaml\"\n    )\n    for configmap in \"${configmaps[@]}\"; do\n        if kubectl --context ${CLUSTER} --namespace flux-system apply --server-side --filename \"${configmap}\" &>/dev/null; then\n            echo ok\n        fi\n    done\n}\nfunction apply_secrets() {\n    local -r secrets=(\n        \"${ROOT_DIR}/kubernetes/${CLUSTER}/vars/cluster-secrets.sops.yaml\"\n    )\n    for secret in \"${secrets[@]}\"; do\n        if sops exec-file \"${secret}\" \"kubectl --context ${CLUSTER} --namespace flux-system apply --server-side --filename {}\" &>/dev/null; then\n            echo ok\n        fi\n    done\n}\n";
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\ndata: {}\n";
        let files = [
            ("scripts/bootstrap-apps.sh", script),
            ("kubernetes/main/vars/cluster-settings.yaml", cm),
            ("kubernetes/lab/vars/cluster-settings.yaml", cm),
            (
                "kubernetes/main/vars/cluster-secrets.sops.yaml",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-secrets\n  namespace: flux-system\nstringData:\n  A: ENC[AES256_GCM,data:x]\nsops:\n  mac: ENC[x]\n",
            ),
        ];
        let out = scan_text(&files, "scripts/bootstrap-apps.sh");
        let targets: Vec<&Target> = out.commands.iter().map(|c| &c.target).collect();
        for cluster in ["main", "lab"] {
            assert!(
                targets.contains(&&Target::PathIn(
                    format!("kubernetes/{cluster}/vars/cluster-settings.yaml"),
                    "flux-system".into()
                )),
                "{targets:?}"
            );
        }
        assert!(
            targets.contains(&&Target::PathIn(
                "kubernetes/main/vars/cluster-secrets.sops.yaml".into(),
                "flux-system".into()
            )),
            "{targets:?}"
        );
        let index = RepoIndex::from_memory(&files);
        let provides: Vec<Provides> = out
            .commands
            .iter()
            .flat_map(|c| c.items(&index, Catalog::embedded()))
            .map(|i| i.provides)
            .collect();
        assert!(
            provides.contains(&Provides::Object(
                "ConfigMap/flux-system/cluster-settings".into()
            )),
            "{provides:?}"
        );
    }
}
