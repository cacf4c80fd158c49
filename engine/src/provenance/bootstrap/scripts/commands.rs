//! Command recognition: which commands of a script apply what (kubectl,
//! kustomize, helmfile pipelines, namespaces), with loops over arrays and
//! the stages that feed `kubectl apply -f -`.

use std::collections::BTreeMap;

use super::expand::{resolve, resolve_all};
use super::shell::{self, Stage, Unit};
use super::words::{flag, words};
use super::{Scripts, Target};
use crate::model::Span;
use crate::repo::RepoIndex;

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
        return;
    }
    let applies = text.contains("kubectl apply") || text.contains("kubectl create");
    let units = units(rel, text);
    let loops = loop_values(text);
    // A path, with a loop variable standing for each of its values.
    let each = |raw: &str| -> Vec<String> {
        let mut raws = vec![raw.to_string()];
        for (var, values) in &loops {
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
            .flat_map(|r| resolve_all(index, rel, r, vars))
            .collect()
    };
    for unit in &units {
        let line_no = &unit.line;
        let line_words = unit.words();
        let t = line_words.join(" ");
        let t = t.as_str();
        let at = Span::new(rel, *line_no);
        // `kubectl [global flags] apply|create …` (`kubectl --context c
        // --namespace ns apply -f …`).
        let kubectl_apply = |w: &[String]| {
            w.iter()
                .position(|x| x.ends_with("kubectl"))
                .is_some_and(|k| w[k + 1..].iter().any(|x| x == "apply" || x == "create"))
        };
        let push = |out: &mut Scripts, target: Target| out.add(&at, target);
        // Each pipeline of the list (`;`, `&&`, `||`).
        for pipeline_stages in &unit.pipelines {
            let stages: Vec<&Vec<String>> = pipeline_stages.iter().map(|s| &s.words).collect();
            let pipeline = out.found();
            for (k, stage) in stages.iter().enumerate() {
                let stage: &[String] = stage;
                // `-f -` reads what earlier stages render: judged on the
                // whole pipeline so far.
                let found = if flag(stage, &["-f"], "--filename").as_deref() == Some("-") {
                    pipeline
                } else {
                    out.found()
                };
                let installs = installing(stage);
                // kubectl create namespace NS
                if let Some(i) = stage.iter().position(|w| w == "create")
                    && stage
                        .get(i + 1)
                        .is_some_and(|w| w == "namespace" || w == "ns")
                    && let Some(ns) = stage.get(i + 2)
                    && stage.iter().any(|w| w.ends_with("kubectl"))
                    && let Some(ns) = super::expand::expand(ns, rel, vars, 0)
                    && !ns.is_empty()
                    && ns
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                {
                    push(out, Target::Namespace(ns));
                }
                // kubectl create configmap|secret [TYPE] NAME [-n NS]
                if let Some(i) = stage.iter().position(|w| w == "create")
                    && stage.iter().any(|w| w.ends_with("kubectl"))
                    && let Some(kind) = stage.get(i + 1).and_then(|w| match w.as_str() {
                        "configmap" | "cm" => Some("ConfigMap"),
                        "secret" => Some("Secret"),
                        _ => None,
                    })
                {
                    let mut rest = i + 2;
                    if kind == "Secret"
                        && stage.get(rest).is_some_and(|w| {
                            ["generic", "tls", "docker-registry"].contains(&w.as_str())
                        })
                    {
                        rest += 1;
                    }
                    let name = stage.get(rest).filter(|w| !w.starts_with('-'));
                    let ns =
                        flag(stage, &["-n"], "--namespace").unwrap_or_else(|| "default".into());
                    if let Some(name) = name
                        && !name.contains('$')
                        && !name.contains("{{")
                        && !ns.contains('$')
                        && !ns.contains("{{")
                    {
                        push(out, Target::Object(format!("{kind}/{ns}/{name}")));
                    }
                }
                if kubectl_apply(stage) {
                    if let Some(dir) = flag(stage, &["-k"], "--kustomize")
                        && let Some(p) = resolve(index, rel, &dir, vars)
                    {
                        push(out, Target::Kustomization(p));
                    }
                    if let Some(f) = flag(stage, &["-f"], "--filename") {
                        if f == "-" {
                            // stdin: a here-document, or what earlier
                            // stages of the pipeline render.
                            if let Some(body) = &pipeline_stages[k].stdin {
                                push(out, Target::Inline(here_document(body, rel, vars)));
                            }
                            for (j, earlier) in stages[..k].iter().enumerate() {
                                if let Some(body) = &pipeline_stages[j].stdin
                                    && earlier.first().is_some_and(|p| p == "cat")
                                {
                                    push(out, Target::Inline(here_document(body, rel, vars)));
                                    continue;
                                }
                                // `envsubst < FILE`
                                let mut earlier = earlier.to_vec();
                                if let Some(file) = &pipeline_stages[j].input {
                                    earlier.extend(["<".to_string(), file.clone()]);
                                }
                                feed(index, rel, vars, &earlier, t, &at, out);
                            }
                        } else if f.starts_with("https://") || f.starts_with("http://") {
                            push(out, Target::Url(f));
                        } else {
                            let ns = flag(stage, &["-n"], "--namespace")
                                .filter(|n| !n.contains('$') && !n.contains("{{"));
                            for p in each(&f) {
                                match &ns {
                                    Some(ns) => push(out, Target::PathIn(p, ns.clone())),
                                    None => push(out, Target::Path(p)),
                                }
                            }
                        }
                    }
                }
                // sops exec-file FILE "kubectl … apply … {}": the decrypted
                // file is applied.
                if let Some(i) = stage.iter().position(|w| w == "exec-file")
                    && stage.iter().any(|w| w.ends_with("sops"))
                    && let Some(file) = stage.get(i + 1)
                    && stage[i + 2..]
                        .iter()
                        .any(|w| w.contains("kubectl") && w.contains("apply"))
                {
                    let command = stage[i + 2..].join(" ");
                    let ns = words(&command)
                        .windows(2)
                        .find(|p| p[0] == "-n" || p[0] == "--namespace")
                        .map(|p| p[1].clone())
                        .filter(|n| !n.contains('$') && !n.contains("{{"));
                    for p in each(file) {
                        match &ns {
                            Some(ns) => push(out, Target::PathIn(p, ns.clone())),
                            None => push(out, Target::Path(p)),
                        }
                    }
                }
                // helm install|upgrade --install RELEASE CHART (behind any
                // wrapper: `mise exec --`, `env A=b`, `timeout 60`).
                let values_file = |f: &str| {
                    let p = resolve(index, rel, f, vars)?;
                    index.file(&p)?.docs().as_ref().ok()?.first().cloned()
                };
                if let Some(release) = helm_release(stage, values_file) {
                    push(out, release);
                }
                // helmfile [-f FILE|DIR] SUBCOMMAND: the helmfile it names
                // is one the entrypoints run; `sync` and `apply` install
                // it. A word `helmfile` with no subcommand after it
                // (`which helmfile`, `check_cli helm helmfile`) runs none.
                if let Some(h) = stage.iter().position(|w| w.ends_with("helmfile"))
                    && let Some(verb) = stage[h + 1..]
                        .iter()
                        .find(|w| HELMFILE_SUBCOMMANDS.contains(&w.as_str()))
                {
                    match flag(&stage[h..], &["-f"], "--file")
                        .and_then(|f| resolve(index, rel, &f, vars))
                    {
                        Some(p) => {
                            if !out.helmfile_named.contains(&p) {
                                out.helmfile_named.push(p.clone());
                            }
                            if verb == "sync" || verb == "apply" {
                                out.understood += 1;
                                if !out.synced.contains(&p) {
                                    out.synced.push(p);
                                }
                            }
                        }
                        None => out.helmfile_unresolved = true,
                    }
                }
                if let Some(what) = installs
                    && out.found() == found
                {
                    let why = unread_why(what, stage, rel, vars);
                    out.notes
                        .push((at.clone(), format!("not read: `{}`: {why}", shown(stage))));
                }
            }
        }
        // URLs of known manifests in a file that applies; not a chart
        // repository's (`helm repo add NAME URL`, `helm … --repo URL`),
        // which installs nothing.
        // The Flux version: `flux install|bootstrap … --version V`, and
        // Flux's install manifests at a ref.
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
        for w in &line_words {
            if let Some(v) = crate::provenance::releases::flux_manifests_version(w) {
                out.flux.push((at.clone(), v, format!("kubectl apply {w}")));
            }
        }
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
                    out.add(&at, Target::Url(w.to_string()));
                }
            }
        }
    }
}

/// The commands of a text, as the shell runs them: parsed whole (a
/// script, a Taskfile command, a documented step); a justfile or Makefile
/// one recipe line at a time (each line its own shell); a line the parser
/// refuses split at `;`, `&&`, `||` and `|` (continuations joined).
fn units(rel: &str, text: &str) -> Vec<Unit> {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase();
    let per_line = name == "justfile"
        || name == ".justfile"
        || name.ends_with(".just")
        || name == "makefile"
        || name.ends_with(".mk");
    if !per_line && let Some(units) = shell::parse(text) {
        return units;
    }
    // Logical lines: continuations joined, each with its first line.
    let mut lines: Vec<(u32, String)> = Vec::new();
    let mut pending: Option<(u32, String)> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let (start, mut acc) = pending.take().unwrap_or((n as u32 + 1, String::new()));
        acc.push(' ');
        acc.push_str(line.trim_end_matches('\\'));
        if line.ends_with('\\') {
            pending = Some((start, acc));
        } else {
            lines.push((start, acc));
        }
    }
    if let Some(p) = pending {
        lines.push(p);
    }
    let mut out = Vec::new();
    for (line, text) in lines {
        let t = text.trim().trim_start_matches("- ").trim();
        if t.starts_with('#') || t.is_empty() {
            continue;
        }
        // A recipe line's prefixes (`@` quiet, `-` ignore errors, `+`).
        let t = if per_line {
            t.trim_start_matches(['@', '-', '+'])
        } else {
            t
        };
        if let Some(units) = shell::parse(t).filter(|u| !u.is_empty()) {
            out.extend(units.into_iter().map(|mut u| {
                u.line = line;
                u
            }));
            continue;
        }
        let commands = t
            .replace("||", "\u{1}")
            .replace("&&", "\u{1}")
            .replace(';', "\u{1}");
        out.push(Unit {
            line,
            pipelines: commands
                .split('\u{1}')
                .map(|c| {
                    c.split('|')
                        .map(|s| Stage {
                            words: words(s),
                            ..Stage::default()
                        })
                        .collect()
                })
                .collect(),
        });
    }
    out
}

/// A here-document's manifests, with the variables the script defines put
/// in (a `$VAR` it does not define stays, and what names it is left out).
fn here_document(
    (body, expands): &(String, bool),
    rel: &str,
    vars: &BTreeMap<String, String>,
) -> String {
    if !*expands {
        return body.clone();
    }
    body.lines()
        .map(|l| {
            super::expand::expand(l, rel, vars, 0)
                // a script argument stays unknown
                .filter(|e| !e.contains(super::expand::ARGUMENT))
                .unwrap_or_else(|| l.to_string())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Loop variables and the values they take: `for x in "${list[@]}"` over a
/// bash array `list=( … )` (one item per word, over several lines), and
/// `for x in a b c`.
pub(super) fn loop_values(text: &str) -> Vec<(String, Vec<String>)> {
    let mut arrays: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i]
            .trim()
            .trim_start_matches("local ")
            .trim_start_matches("readonly ")
            .trim_start_matches("declare ")
            .trim_start_matches("-r ")
            .trim_start_matches("-a ")
            .trim_start_matches("-ra ")
            .trim();
        if let Some((name, rest)) = t.split_once("=(")
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            let mut body = String::from(rest);
            while !body.contains(')') && i + 1 < lines.len() {
                i += 1;
                let l = lines[i].trim();
                if !l.starts_with('#') {
                    body.push(' ');
                    body.push_str(l);
                }
            }
            let body = body.split(')').next().unwrap_or_default();
            arrays.insert(name.to_string(), words(body));
        }
        i += 1;
    }
    let mut out = Vec::new();
    for line in &lines {
        let t = line.trim();
        let Some(rest) = t.strip_prefix("for ") else {
            continue;
        };
        let Some((var, list)) = rest.split_once(" in ") else {
            continue;
        };
        let var = var.trim();
        let list = list.split(';').next().unwrap_or_default().trim();
        let inner = list.trim_matches('"');
        let values = if let Some(name) = inner
            .strip_prefix("${")
            .and_then(|r| r.strip_suffix("[@]}"))
        {
            arrays.get(name).cloned().unwrap_or_default()
        } else if list.contains('$') || list.contains('*') {
            continue;
        } else {
            words(list)
        };
        if !values.is_empty() {
            out.push((var.to_string(), values));
        }
    }
    out
}

/// A variable name worth following (no further expansion inside).
pub(super) fn depth_ok(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An earlier stage of a pipeline into `kubectl apply -f -`.
pub(super) fn feed(
    index: &RepoIndex,
    rel: &str,
    vars: &BTreeMap<String, String>,
    stage: &[String],
    line: &str,
    at: &Span,
    out: &mut Scripts,
) {
    feed_following(index, rel, vars, stage, line, at, out, &mut Vec::new());
}

/// [`feed`], with the variables whose `$(…)` is being followed: a variable
/// assigned from itself (`X=$(echo "$X" | yq …)`) is followed once.
#[allow(clippy::too_many_arguments)]
fn feed_following(
    index: &RepoIndex,
    rel: &str,
    vars: &BTreeMap<String, String>,
    stage: &[String],
    line: &str,
    at: &Span,
    out: &mut Scripts,
    following: &mut Vec<String>,
) {
    let push = |out: &mut Scripts, target: Target| out.add(at, target);
    // The program: past shell keywords and variable assignments.
    const KEYWORDS: &[&str] = &[
        "if", "!", "then", "do", "else", "elif", "while", "until", "time", "exec", "sudo",
        "command", "&&", "||", ";", "{", "(", "-",
    ];
    let first = stage
        .iter()
        .position(|w| {
            let assignment = w.contains('=') && !w.contains('/');
            !KEYWORDS.contains(&w.as_str()) && !assignment
        })
        .unwrap_or(0);
    let program = stage.get(first).map(String::as_str).unwrap_or_default();
    // `echo "${rendered}" | kubectl apply -f -`, with `rendered=$(…)`
    // earlier: what the assignment's command renders.
    if matches!(program, "echo" | "printf")
        && let Some(arg) = stage.get(first + 1)
    {
        let name = arg
            .trim_start_matches('$')
            .trim_start_matches('{')
            .trim_end_matches('}');
        if arg.starts_with('$')
            && depth_ok(name)
            && !following.iter().any(|f| f == name)
            && let Some(value) = vars.get(name)
            && let Some(inner) = value.strip_prefix("$(").and_then(|v| v.strip_suffix(')'))
        {
            following.push(name.to_string());
            for inner_stage in inner.split('|').map(words) {
                feed_following(index, rel, vars, &inner_stage, line, at, out, following);
            }
            following.pop();
        }
        return;
    }
    let args: Vec<&String> = stage[first.min(stage.len())..]
        .iter()
        .skip(1)
        .filter(|w| !w.starts_with('-'))
        .collect();
    if program.ends_with("kustomize") && stage.get(first + 1).is_some_and(|w| w == "build")
        || program.ends_with("kubectl") && stage.get(first + 1).is_some_and(|w| w == "kustomize")
    {
        if let Some(dir) = args.get(1)
            && let Some(p) = resolve(index, rel, dir, vars)
        {
            push(out, Target::Kustomization(p));
        }
        return;
    }
    if program.ends_with("helmfile") {
        let runs = stage[first + 1..]
            .iter()
            .any(|w| HELMFILE_SUBCOMMANDS.contains(&w.as_str()));
        let file = flag(stage, &["-f"], "--file").and_then(|f| resolve(index, rel, &f, vars));
        if runs && file.is_none() {
            out.helmfile_unresolved = true;
        }
        if let Some(p) = file {
            if !out.helmfile_named.contains(&p) {
                out.helmfile_named.push(p.clone());
            }
            out.understood += 1;
            if line.contains("CustomResourceDefinition") {
                if !out.crds_only.contains(&p) {
                    out.crds_only.push(p);
                }
            } else if !out.synced.contains(&p) {
                out.synced.push(p);
            }
        }
        return;
    }
    let file: Option<String> = match program.rsplit('/').next().unwrap_or(program) {
        "cat" | "minijinja-cli" | "envsubst" => args.first().map(|s| s.to_string()),
        "op" => flag(stage, &["-i"], "--in-file"),
        "sops" => args.last().map(|s| s.to_string()),
        _ => None,
    };
    // `envsubst < FILE`
    let file = file.or_else(|| {
        let i = stage.iter().position(|w| w == "<")?;
        stage.get(i + 1).cloned()
    });
    if let Some(f) = file
        && let Some(p) = resolve(index, rel, &f, vars)
    {
        push(out, Target::Path(p));
    }
}

/// helmfile's subcommands that read a helmfile (`helmfile --help`): a
/// stage with one of them after the word `helmfile` runs helmfile.
const HELMFILE_SUBCOMMANDS: &[&str] = &[
    "apply",
    "build",
    "deps",
    "destroy",
    "diff",
    "fetch",
    "lint",
    "list",
    "repos",
    "status",
    "sync",
    "template",
    "test",
    "write-values",
];

/// Helm's flags that take a value (the next word, or `=VALUE`).
const HELM_VALUE_FLAGS: &[&str] = &[
    "-n",
    "--namespace",
    "-f",
    "--values",
    "--set",
    "--set-string",
    "--set-file",
    "--set-json",
    "--set-literal",
    "--version",
    "--repo",
    "--kube-context",
    "--kubeconfig",
    "--timeout",
    "--post-renderer",
    "--post-renderer-args",
    "--username",
    "--password",
    "--description",
    "--ca-file",
    "--cert-file",
    "--key-file",
    "--history-max",
    "--labels",
    "-l",
];

/// `helm install RELEASE CHART` or `helm upgrade --install RELEASE CHART`
/// (`-i`), with its namespace and whether its CRDs are installed
/// (`--skip-crds`, or the chart's CRD switch set to false by `--set` or a
/// `-f`/`--values` file). An
/// `upgrade` without `--install` changes a release that already exists and
/// installs nothing on a cold cluster; `helm repo add`, `template`, `pull`
/// install nothing either.
pub(super) fn helm_release(
    stage: &[String],
    values_file: impl Fn(&str) -> Option<crate::yaml::Node>,
) -> Option<Target> {
    let h = stage
        .iter()
        .position(|w| w == "helm" || w.ends_with("/helm"))?;
    let args = &stage[h + 1..];
    let verb = args.iter().position(|w| !w.starts_with('-'))?;
    let install = match args[verb].as_str() {
        "install" => true,
        "upgrade" => args.iter().any(|w| w == "--install" || w == "-i"),
        _ => false,
    };
    if !install {
        return None;
    }
    let mut positional = Vec::new();
    let mut i = 0;
    let rest = &args[verb + 1..];
    while i < rest.len() {
        let w = &rest[i];
        if w.starts_with('-') {
            if HELM_VALUE_FLAGS.contains(&w.as_str()) {
                i += 1;
            }
        } else {
            positional.push(w.clone());
        }
        i += 1;
    }
    let chart = positional.get(1)?;
    let name = chart.trim_end_matches('/').rsplit('/').next()?.to_string();
    if name.is_empty() || name.contains('$') || name.contains("{{") || name.ends_with(".tgz") {
        return None;
    }
    let namespace =
        flag(rest, &["-n"], "--namespace").filter(|n| !n.contains('$') && !n.contains("{{"));
    let sets: Vec<String> = flag_values(rest, &["--set", "--set-string"])
        .iter()
        .flat_map(|v| v.split(',').map(str::to_string))
        .collect();
    let files = flag_values(rest, &["-f", "--values"]);
    let crds_off = sets.iter().any(|s| {
        s.split_once('=')
            .is_some_and(|(k, v)| crate::provenance::bootstrap::values::set_switches_off(k, v))
    }) || files.iter().any(|f| {
        values_file(f).is_some_and(|v| crate::provenance::bootstrap::values::values_switch_off(&v))
    });
    let crds = !crds_off && !rest.iter().any(|w| w == "--skip-crds");
    Some(Target::Chart {
        chart: name,
        namespace,
        crds,
        create_namespace: rest.iter().any(|w| w == "--create-namespace"),
    })
}

/// Every value of the flags `names`, written `--flag VALUE` or `--flag=VALUE`.
fn flag_values(words: &[String], names: &[&str]) -> Vec<String> {
    let spaced = words
        .windows(2)
        .filter(|p| names.contains(&p[0].as_str()))
        .map(|p| p[1].clone());
    let joined = words.iter().filter_map(|w| {
        names
            .iter()
            .find_map(|n| w.strip_prefix(n)?.strip_prefix('='))
            .map(str::to_string)
    });
    spaced.chain(joined).collect()
}

/// What kind of installing command a pipeline stage is, if it is one:
/// `kubectl apply|create|replace`, `helm install|upgrade --install`,
/// `helmfile sync|apply`. Other commands (`kubectl get`, `helm repo add`,
/// `helm template`, `kustomize build` on its own) install nothing.
fn installing(stage: &[String]) -> Option<&'static str> {
    // `--dry-run` renders (for a later `kubectl apply -f -`), installing nothing.
    if stage.iter().any(|w| w.starts_with("--dry-run")) {
        return None;
    }
    let program = |name: &str| {
        stage
            .iter()
            .position(|w| w == name || w.ends_with(&format!("/{name}")))
    };
    if let Some(k) = program("kubectl") {
        let verb = stage[k + 1..].iter().find(|w| {
            [
                "apply",
                "create",
                "replace",
                "get",
                "delete",
                "wait",
                "kustomize",
                "patch",
                "label",
                "annotate",
                "rollout",
                "config",
                "logs",
                "exec",
                "describe",
                "scale",
                "cordon",
                "drain",
                "port-forward",
                "version",
                "cluster-info",
                "auth",
                "certificate",
                "edit",
                "cp",
                "debug",
                "top",
                "diff",
                "explain",
                "api-resources",
                "set",
            ]
            .contains(&w.as_str())
        })?;
        return match verb.as_str() {
            "apply" | "replace" => Some("kubectl apply"),
            "create" => {
                let i = stage.iter().position(|w| w == "create")?;
                let what = stage.get(i + 1).map(String::as_str).unwrap_or_default();
                [
                    "namespace",
                    "ns",
                    "configmap",
                    "cm",
                    "secret",
                    "-f",
                    "--filename",
                    "-k",
                    "--kustomize",
                ]
                .contains(&what)
                .then_some("kubectl create")
            }
            _ => None,
        };
    }
    if let Some(h) = program("helm") {
        let args = &stage[h + 1..];
        let verb = args.iter().find(|w| !w.starts_with('-'))?;
        return match verb.as_str() {
            "install" => Some("helm install"),
            "upgrade" if args.iter().any(|w| w == "--install" || w == "-i") => Some("helm install"),
            _ => None,
        };
    }
    if program("helmfile").is_some() && stage.iter().any(|w| w == "sync" || w == "apply") {
        return Some("helmfile sync");
    }
    None
}

/// Why an installing command was not understood, in words.
fn unread_why(what: &str, stage: &[String], rel: &str, vars: &BTreeMap<String, String>) -> String {
    let unknown = |raw: &str| {
        if super::expand::expand(raw, rel, vars, 0).is_none() {
            format!(
                "`{raw}` needs a value this tool cannot know (an argument, an environment variable, a command's output)"
            )
        } else {
            format!("`{raw}` is not a file or directory of this repository")
        }
    };
    match what {
        "kubectl apply" | "kubectl create" => {
            if let Some(dir) = flag(stage, &["-k"], "--kustomize") {
                unknown(&dir)
            } else if let Some(f) = flag(stage, &["-f"], "--filename") {
                if f == "-" {
                    "what the pipeline or here-document feeds `-f -` is not something this tool reads".into()
                } else if f.starts_with("http") {
                    format!("the URL `{f}` needs a value this tool cannot know")
                } else {
                    unknown(&f)
                }
            } else {
                "its object's name or namespace needs a value this tool cannot know, or it names no -f/-k this tool reads".into()
            }
        }
        "helm install" => {
            "its chart is not named in a way this tool can read (a variable, a local .tgz)".into()
        }
        _ => match flag(stage, &["-f"], "--file") {
            Some(f) => unknown(&f),
            None => {
                "it names no helmfile (-f); the repository's helmfiles are read on their own".into()
            }
        },
    }
}

/// A stage's words, for a note (at most 120 characters).
fn shown(stage: &[String]) -> String {
    let text = stage.join(" ");
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(117).collect();
        format!("{cut}...")
    } else {
        text
    }
}
