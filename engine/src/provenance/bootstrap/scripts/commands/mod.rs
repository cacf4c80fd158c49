//! Command recognition: which commands of a script apply what (kubectl,
//! kustomize, helmfile pipelines, namespaces), with loops over arrays and
//! the stages that feed `kubectl apply -f -`.
//!
//! [`units`] turns a text into the commands the shell runs; each stage of
//! each pipeline is then recognised: [`kubectl`] (and `sops exec-file`),
//! [`helm`] (helm and helmfile), [`feed`] (what an earlier stage pipes
//! into `kubectl apply -f -`). A stage that installs but is not understood
//! is noted with why ([`unread`]).

use std::collections::BTreeMap;

mod clusterctl;
mod feed;
mod helm;
mod kubectl;
mod units;
mod unread;

use super::expand::{expand, resolve_all};
use super::shell::{Stage, Unit};
use super::words::flag;
use super::{Scripts, Target};
use crate::model::Span;
use crate::provenance::bootstrap::unread::{Could, Unread};
use crate::repo::RepoIndex;
use kubectl::create_object;
use units::{loop_values, units};
use unread::{installing, shown, unread_why};

pub(super) fn scan(
    index: &RepoIndex,
    rel: &str,
    text: &str,
    vars: &BTreeMap<String, String>,
    out: &mut Scripts,
) {
    // As the YAML reader has its budget: a script this large (a generated
    // installer, an embedded archive) is not read at all, and says so.
    if text.len() > super::MAX_SCRIPT_BYTES {
        out.notes.push((
            Span::new(rel, 0),
            format!(
                "not read: {rel} is {} bytes, over the budget of {} bytes for a bootstrap script; what it installs is unknown",
                text.len(),
                super::MAX_SCRIPT_BYTES
            ),
        ));
        out.unread.push(Unread {
            at: Span::new(rel, 0),
            command: format!("the script {rel}"),
            could: Could::Anything,
        });
        return;
    }
    let applies = text.contains("kubectl apply") || text.contains("kubectl create");
    let cx = Scan {
        index,
        rel,
        vars,
        loops: loop_values(text),
    };
    for unit in &units(rel, text) {
        cx.unit(unit, applies, out);
    }
}

/// One text being scanned: where it is, the variables its paths resolve
/// with, and the values its loop variables take.
struct Scan<'a> {
    index: &'a RepoIndex,
    rel: &'a str,
    vars: &'a BTreeMap<String, String>,
    loops: Vec<(String, Vec<String>)>,
}

/// One command list item being scanned: where it is, and its words joined
/// (what a rendering stage's output is judged by).
struct Line<'a> {
    at: Span,
    text: &'a str,
}

impl Scan<'_> {
    /// A path, with a loop variable standing for each of its values.
    fn each(&self, raw: &str) -> Vec<String> {
        let mut raws = vec![raw.to_string()];
        for (var, values) in &self.loops {
            if raw.contains(&format!("${{{var}}}")) || raw.contains(&format!("${var}")) {
                raws = values
                    .iter()
                    .map(|v| {
                        raw.replace(&format!("${{{var}}}"), v)
                            .replace(&format!("${var}"), v)
                    })
                    .collect();
                break;
            }
        }
        raws.iter()
            .flat_map(|r| resolve_all(self.index, self.rel, r, self.vars))
            .collect()
    }

    /// What one command list item applies: each stage of each of its
    /// pipelines, then what its words say whatever the command (the Flux
    /// version, manifest URLs).
    fn unit(&self, unit: &Unit, applies: bool, out: &mut Scripts) {
        let line_words = unit.words();
        let text = line_words.join(" ");
        let line = Line {
            at: Span::new(self.rel, unit.line),
            text: &text,
        };
        // Each pipeline of the list (`;`, `&&`, `||`).
        for stages in &unit.pipelines {
            self.pipeline(stages, &line, out);
        }
        // URLs of known manifests in a file that applies; not a chart
        // repository's (`helm repo add NAME URL`, `helm … --repo URL`),
        // which installs nothing.
        // The Flux version: `flux install|bootstrap … --version V`, and
        // Flux's install manifests at a ref.
        flux_version(&line_words, &line.at, out);
        let helm_repo = line_words
            .windows(2)
            .any(|p| p[0].ends_with("helm") && p[1] == "repo");
        // Not in a command that reads or compares what is there (`kubectl
        // diff|get|delete -f URL`): it installs nothing.
        let passive = unit.pipelines.iter().flatten().any(|s| {
            s.words
                .iter()
                .any(|w| w == "kubectl" || w.ends_with("/kubectl"))
                && installing(&s.words).is_none()
        });
        if applies && !helm_repo && !passive {
            manifest_urls(&line_words, &line.at, out);
        }
    }

    /// What each stage of one pipeline applies, and a note for a stage
    /// that installs something this reader did not understand.
    fn pipeline(&self, stages: &[Stage], line: &Line, out: &mut Scripts) {
        let pipeline = out.found();
        for k in 0..stages.len() {
            let stage: &[String] = &stages[k].words;
            // `-f -` reads what earlier stages render: judged on the
            // whole pipeline so far.
            let found = if flag(stage, &["-f"], "--filename").as_deref() == Some("-") {
                pipeline
            } else {
                out.found()
            };
            let installs = installing(stage);
            self.stage(&stages[..=k], line, out);
            if let Some(what) = installs
                && out.found() == found
            {
                let why = unread_why(what, stage, self.index, self.rel, self.vars);
                out.notes.push((
                    line.at.clone(),
                    format!("not read: `{}`: {why}", shown(stage)),
                ));
                // Known: every variable has a value here, and the path it
                // gives is not one that other values would make exist.
                let known = |raw: &str| {
                    expand(raw, self.rel, self.vars, 0).is_some()
                        && super::expand::elsewhere(self.index, self.rel, raw, self.vars).is_empty()
                };
                // A feed that renders a file the page names by a known
                // path that is no file of the repository (a stale README)
                // applies nothing.
                let stale = stages[..k].iter().flat_map(|s| &s.words).any(|w| {
                    let w = w.trim_matches(|c| c == '"' || c == '\'');
                    [".yaml", ".yml", ".json", ".j2", ".tpl"]
                        .iter()
                        .any(|ext| w.ends_with(ext))
                        && known(w)
                        && super::expand::resolve(self.index, self.rel, w, self.vars).is_none()
                });
                if stale {
                    continue;
                }
                if let Some(could) =
                    could(what, &stages[..=k], known).map(|c| narrowed(self.index, stage, c))
                {
                    out.unread.push(Unread {
                        at: line.at.clone(),
                        command: shown(stage),
                        could,
                    });
                }
            }
        }
    }

    /// What the last stage of `stages` applies (the earlier ones are what
    /// feeds it).
    fn stage(&self, stages: &[Stage], line: &Line, out: &mut Scripts) {
        let Some(last) = stages.last() else { return };
        let stage: &[String] = &last.words;
        let at = &line.at;
        if let Some(ns) = self.create_namespace(stage) {
            out.add(at, ns);
        }
        if let Some(object) = create_object(stage) {
            out.add(at, object);
        }
        if kubectl::applies(stage) {
            self.apply(stages, line, out);
        }
        self.sops_exec_file(stage, at, out);
        // helm install|upgrade --install RELEASE CHART (behind any
        // wrapper: `mise exec --`, `env A=b`, `timeout 60`).
        let values_file = |f: &str| {
            let p = super::expand::resolve(self.index, self.rel, f, self.vars)?;
            self.index.file(&p)?.docs().as_ref().ok()?.first().cloned()
        };
        if let Some(release) = helm::helm_release(stage, values_file) {
            out.add(at, release);
        }
        self.helmfile(stage, out);
        for target in clusterctl::init(stage) {
            out.add(at, target);
        }
        // What it writes into the repository: `> FILE`, `tee FILE`.
        let tee = match stage.first().map(String::as_str) {
            Some("tee") => stage[1..].iter().filter(|w| !w.starts_with('-')).collect(),
            _ => Vec::new(),
        };
        for raw in last.output.iter().chain(tee) {
            if let Some(file) = super::expand::written(self.index, self.rel, raw, self.vars) {
                out.add(at, Target::File(file));
            }
        }
    }
}

/// The Flux version a line states (`flux install|bootstrap … --version V`,
/// Flux's install manifests at a ref), or a note that `flux install`
/// states none.
fn flux_version(line_words: &[String], at: &Span, out: &mut Scripts) {
    if let Some(f) = line_words
        .iter()
        .position(|w| w == "flux" || w.ends_with("/flux"))
        && line_words
            .get(f + 1..)
            .is_some_and(|rest| rest.iter().any(|w| w == "install" || w == "bootstrap"))
        && let Some(v) = flag(&line_words[f..], &[], "--version")
        && !v.contains('$')
        && !v.contains("{{")
    {
        out.flux
            .push((at.clone(), v, "flux install --version".to_string()));
    } else if let Some(f) = line_words
        .iter()
        .position(|w| w == "flux" || w.ends_with("/flux"))
        && let Some(verb) = line_words
            .get(f + 1..)
            .and_then(|rest| rest.iter().find(|w| *w == "install" || *w == "bootstrap"))
        && flag(&line_words[f..], &[], "--version").is_none()
    {
        out.notes.push((
            at.clone(),
            format!(
                "`flux {verb}` states no --version: it installs the Flux CLI's own version, which the repository does not show (pin it with `--version vX.Y.Z`)"
            ),
        ));
    }
    for w in line_words {
        if let Some(v) = crate::provenance::releases::flux_manifests_version(w) {
            out.flux.push((at.clone(), v, format!("kubectl apply {w}")));
        }
    }
}

/// Every manifest URL of a line that applies, but a chart repository's
/// (`--repo URL`).
fn manifest_urls(line_words: &[String], at: &Span, out: &mut Scripts) {
    let chart_repos: Vec<&String> = line_words
        .windows(2)
        .filter(|p| p[0] == "--repo")
        .map(|p| &p[1])
        .collect();
    for w in line_words.iter().filter(|w| !chart_repos.contains(w)) {
        let w = w.trim_matches(|c| c == '(' || c == ')' || c == ',');
        if (w.starts_with("https://") || w.starts_with("http://"))
            && !w.contains("{{")
            && !w.contains('$')
        {
            out.add(at, Target::Url(w.to_string()));
        }
    }
}

/// What an installing stage that was not read could create: a `kubectl
/// create secret|configmap|namespace` its kind (in its `-n` namespace), a
/// `-f -` feed objects but no CRDs ([`Could::Objects`]), anything else
/// (`-k "$DIR"`, a URL or a chart this tool cannot name) anything. A
/// `-f`/`-k` whose value is known (`known`) and is no path of the
/// repository (a step a stale page documents) creates nothing: `kubectl`
/// would fail on it.
fn could(what: &str, stages: &[Stage], known: impl Fn(&str) -> bool) -> Option<Could> {
    let stage: &[String] = &stages[stages.len() - 1].words;
    // A helmfile this reader could not locate: the repository's helmfiles
    // are read on their own (the conventional locations stay live).
    if what.starts_with("helmfile") {
        return None;
    }
    let target = flag(stage, &["-k"], "--kustomize").or_else(|| flag(stage, &["-f"], "--filename"));
    if what.starts_with("kubectl")
        && let Some(target) = &target
        && target != "-"
        && known(target)
    {
        return None;
    }
    if what == "kubectl create"
        && flag(stage, &["-f"], "--filename").is_none()
        && flag(stage, &["-k"], "--kustomize").is_none()
        && let Some(kind) = created_kind(stage)
    {
        return Some(kind);
    }
    if target.as_deref() == Some("-") {
        // What a `kubectl create KIND … --dry-run -o yaml` earlier in the
        // pipeline prints is that kind.
        let fed = stages[..stages.len() - 1]
            .iter()
            .find_map(|s| created_kind(&s.words));
        return Some(fed.unwrap_or(Could::Objects));
    }
    Some(Could::Anything)
}

/// A `-f` file whose path holds a value this tool cannot know but ends in
/// known segments (`{{.DIR}}/oci/registry-config.yaml`) names one of the
/// repository's files with that ending, when there are any: the step
/// creates objects of their kinds, not anything.
fn narrowed(index: &RepoIndex, stage: &[String], could: Could) -> Could {
    let Some(raw) = flag(stage, &["-f"], "--filename") else {
        return could;
    };
    let raw = raw.trim_matches(|c| c == '"' || c == '\'');
    let tail: Vec<&str> = raw
        .rsplit('/')
        .take_while(|seg| !seg.contains('$') && !seg.contains("{{") && !seg.is_empty())
        .collect();
    let Some(last) = tail.first() else {
        return could;
    };
    if tail.len() == raw.split('/').count()
        || !(last.ends_with(".yaml") || last.ends_with(".yml") || last.ends_with(".json"))
    {
        return could;
    }
    let suffix: String = tail.iter().rev().copied().collect::<Vec<_>>().join("/");
    let mut kinds: Vec<String> = Vec::new();
    let mut any = false;
    for (path, file) in index.files() {
        if path != suffix && !path.ends_with(&format!("/{suffix}")) {
            continue;
        }
        any = true;
        if let Ok(docs) = file.docs() {
            kinds.extend(docs.iter().filter_map(|d| d.str_at(&["kind"])));
        }
    }
    if !any {
        return could;
    }
    kinds.sort();
    kinds.dedup();
    Could::Kinds(kinds)
}

/// The kind a `kubectl create secret|configmap|namespace …` stage makes
/// (printed with `--dry-run -o yaml`, or created), in its `-n` namespace.
fn created_kind(stage: &[String]) -> Option<Could> {
    let k = stage
        .iter()
        .position(|w| w == "kubectl" || w.ends_with("/kubectl"))?;
    let create = stage[k..].iter().position(|w| w == "create")? + k;
    let kind = match stage.get(create + 1)?.as_str() {
        "secret" => "Secret",
        "configmap" | "cm" => "ConfigMap",
        "namespace" | "ns" => "Namespace",
        _ => return None,
    };
    let namespace =
        flag(stage, &["-n"], "--namespace").filter(|n| !n.contains('$') && kind != "Namespace");
    Some(Could::Kind {
        kind: kind.to_string(),
        namespace,
    })
}
