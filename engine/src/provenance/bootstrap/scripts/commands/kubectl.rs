//! The kubectl stages: `kubectl create namespace|configmap|secret`,
//! `kubectl apply -k DIR|-f PATH|URL|-` (what feeds `-f -` included), and
//! `sops exec-file FILE "kubectl apply …"`.

use super::super::expand::{ARGUMENT, expand, resolve};
use super::super::words::{flag, words};
use super::{Line, Scan, Scripts, Stage, Target};
use crate::model::Span;

/// `kubectl [global flags] apply|create …` (`kubectl --context c
/// --namespace ns apply -f …`).
pub(super) fn applies(w: &[String]) -> bool {
    w.iter()
        .position(|x| x.ends_with("kubectl"))
        .is_some_and(|k| w[k + 1..].iter().any(|x| x == "apply" || x == "create"))
}

/// kubectl create configmap|secret [TYPE] NAME [-n NS]
pub(super) fn create_object(stage: &[String]) -> Option<Target> {
    let i = stage.iter().position(|w| w == "create")?;
    if !stage.iter().any(|w| w.ends_with("kubectl")) {
        return None;
    }
    let kind = stage.get(i + 1).and_then(|w| match w.as_str() {
        "configmap" | "cm" => Some("ConfigMap"),
        "secret" => Some("Secret"),
        _ => None,
    })?;
    let mut rest = i + 2;
    if kind == "Secret"
        && stage
            .get(rest)
            .is_some_and(|w| ["generic", "tls", "docker-registry"].contains(&w.as_str()))
    {
        rest += 1;
    }
    let name = stage.get(rest).filter(|w| !w.starts_with('-'));
    let ns = flag(stage, &["-n"], "--namespace").unwrap_or_else(|| "default".into());
    if let Some(name) = name
        && !name.contains('$')
        && !name.contains("{{")
        && !ns.contains('$')
        && !ns.contains("{{")
    {
        return Some(Target::Object(format!("{kind}/{ns}/{name}")));
    }
    None
}

impl Scan<'_> {
    /// kubectl create namespace NS
    pub(super) fn create_namespace(&self, stage: &[String]) -> Option<Target> {
        if let Some(i) = stage.iter().position(|w| w == "create")
            && stage
                .get(i + 1)
                .is_some_and(|w| w == "namespace" || w == "ns")
            && let Some(ns) = stage.get(i + 2)
            && stage.iter().any(|w| w.ends_with("kubectl"))
            && let Some(ns) = expand(ns, self.rel, self.vars, 0)
            && !ns.is_empty()
            && ns
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Some(Target::Namespace(ns));
        }
        None
    }

    /// `kubectl apply -k DIR`, `-f URL`, `-f PATH` (in `-n NS`), `-f -`
    /// (what the last of `stages` reads on its standard input).
    pub(super) fn apply(&self, stages: &[Stage], line: &Line, out: &mut Scripts) {
        let Some((last, earlier)) = stages.split_last() else {
            return;
        };
        let stage: &[String] = &last.words;
        let at = &line.at;
        if let Some(dir) = flag(stage, &["-k"], "--kustomize") {
            match resolve(self.index, self.rel, &dir, self.vars) {
                Some(p) => out.add(at, Target::Kustomization(p)),
                None => {
                    for p in self.another_value(&dir, at, out) {
                        out.add(at, Target::Kustomization(p));
                    }
                }
            }
        }
        let Some(f) = flag(stage, &["-f"], "--filename") else {
            return;
        };
        if f == "-" {
            self.apply_stdin(last, earlier, line, out);
        } else if f.starts_with("https://") || f.starts_with("http://") {
            out.add(at, Target::Url(f));
        } else {
            let ns = flag(stage, &["-n"], "--namespace")
                .filter(|n| !n.contains('$') && !n.contains("{{"));
            let mut paths = self.each(&f);
            if paths.is_empty() {
                paths = self.another_value(&f, at, out);
            }
            for p in paths {
                match &ns {
                    Some(ns) => out.add(at, Target::PathIn(p, ns.clone())),
                    None => out.add(at, Target::Path(p)),
                }
            }
        }
    }

    /// The paths a `-f`/`-k` path names with other values of its variables
    /// than the ones it has here, when with these it names nothing
    /// ([`super::super::expand::elsewhere`]: a Taskfile's default the
    /// command line overrides), with a note that says it was read so. At
    /// most a few: more are no longer one step's cluster directories, and
    /// the step stays unread.
    fn another_value(&self, raw: &str, at: &Span, out: &mut Scripts) -> Vec<String> {
        const AT_MOST: usize = 4;
        let Some(here) = expand(raw, self.rel, self.vars, 0).filter(|e| !e.contains(ARGUMENT))
        else {
            return Vec::new();
        };
        let paths = super::super::expand::elsewhere(self.index, self.rel, raw, self.vars);
        if paths.is_empty() || paths.len() > AT_MOST {
            return Vec::new();
        }
        out.notes.push((
            at.clone(),
            format!(
                "`{raw}` is {} with the values its variables have here, which is no path of this repository; read as {}, which another value gives (one given when the step runs, such as `task … VAR=…`)",
                here.trim_start_matches("@root/"),
                super::unread::shown_paths(&paths),
            ),
        ));
        paths
    }

    /// stdin: a here-document, or what earlier stages of the pipeline
    /// render.
    fn apply_stdin(&self, stage: &Stage, earlier: &[Stage], line: &Line, out: &mut Scripts) {
        if let Some(body) = &stage.stdin {
            out.add(&line.at, Target::Inline(self.here_document(body)));
        }
        for earlier in earlier {
            if let Some(body) = &earlier.stdin
                && earlier.words.first().is_some_and(|p| p == "cat")
            {
                out.add(&line.at, Target::Inline(self.here_document(body)));
                continue;
            }
            // `envsubst < FILE`
            let mut words = earlier.words.clone();
            if let Some(file) = &earlier.input {
                words.extend(["<".to_string(), file.clone()]);
            }
            self.feed(&words, line, out);
        }
    }

    /// A here-document's manifests, with the variables the script defines put
    /// in (a `$VAR` it does not define stays, and what names it is left out).
    fn here_document(&self, (body, expands): &(String, bool)) -> String {
        if !*expands {
            return body.clone();
        }
        body.lines()
            .map(|l| {
                expand(l, self.rel, self.vars, 0)
                    // a script argument stays unknown
                    .filter(|e| !e.contains(ARGUMENT))
                    .unwrap_or_else(|| l.to_string())
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// sops exec-file FILE "kubectl … apply … {}": the decrypted
    /// file is applied.
    pub(super) fn sops_exec_file(&self, stage: &[String], at: &Span, out: &mut Scripts) {
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
            for p in self.each(file) {
                match &ns {
                    Some(ns) => out.add(at, Target::PathIn(p, ns.clone())),
                    None => out.add(at, Target::Path(p)),
                }
            }
        }
    }
}
