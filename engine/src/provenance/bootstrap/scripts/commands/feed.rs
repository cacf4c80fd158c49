//! What an earlier stage of a pipeline into `kubectl apply -f -` renders:
//! `kustomize build DIR`, `helmfile -f FILE template`, a file piped through
//! `cat`, `envsubst`, `op inject`, `minijinja-cli`, `jinja2`/`j2`,
//! `gomplate -f`, `just template`, `sops -d`, `yq`, and a
//! variable's `$( … )` echoed into the pipe.

use super::super::expand::resolve;
use super::super::words::{flag, words};
use super::helm::HELMFILE_SUBCOMMANDS;
use super::{Line, Scan, Scripts, Target};

/// A variable name worth following (no further expansion inside).
fn depth_ok(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Scan<'_> {
    /// An earlier stage of a pipeline into `kubectl apply -f -`.
    pub(super) fn feed(&self, stage: &[String], line: &Line, out: &mut Scripts) {
        self.feed_following(stage, line, out, &mut Vec::new());
    }

    /// [`Self::feed`], with the variables whose `$(…)` is being followed: a
    /// variable assigned from itself (`X=$(echo "$X" | yq …)`) is followed
    /// once.
    fn feed_following(
        &self,
        stage: &[String],
        line: &Line,
        out: &mut Scripts,
        following: &mut Vec<String>,
    ) {
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
            self.echoed(arg, line, out, following);
            return;
        }
        let args: Vec<&String> = stage[first.min(stage.len())..]
            .iter()
            .skip(1)
            .filter(|w| !w.starts_with('-'))
            .collect();
        if program.ends_with("kustomize") && stage.get(first + 1).is_some_and(|w| w == "build")
            || program.ends_with("kubectl")
                && stage.get(first + 1).is_some_and(|w| w == "kustomize")
        {
            if let Some(dir) = args.get(1)
                && let Some(p) = resolve(self.index, self.rel, dir, self.vars)
            {
                out.add(&line.at, Target::Kustomization(p));
            }
            return;
        }
        if program.ends_with("helmfile") {
            self.helmfile_rendered(stage, first, line, out);
            return;
        }
        // A template or an encrypted file rendered into the pipe: its
        // kinds, names and namespaces are nearly always literal, so the file
        // is read as manifests with its template expressions as unknown
        // scalars (`manifests::read` untemplates it).
        let file: Option<String> = match program.rsplit('/').next().unwrap_or(program) {
            "cat" | "minijinja-cli" | "envsubst" | "jinja2" | "j2" => {
                args.first().map(|s| s.to_string())
            }
            // A justfile's `template` recipe (`just template FILE`).
            "just" if args.first().is_some_and(|a| *a == "template") => {
                args.get(1).map(|s| s.to_string())
            }
            "gomplate" => flag(stage, &["-f"], "--file"),
            "op" => flag(stage, &["-i"], "--in-file"),
            "sops" | "yq" => args.last().map(|s| s.to_string()),
            _ => None,
        };
        // `envsubst < FILE`
        let file = file.or_else(|| {
            let i = stage.iter().position(|w| w == "<")?;
            stage.get(i + 1).cloned()
        });
        if let Some(f) = file
            && let Some(p) = resolve(self.index, self.rel, &f, self.vars)
        {
            out.add(&line.at, Target::Path(p));
        }
    }

    /// `echo "$NAME"` where `NAME=$(…)`: each stage of the assignment's
    /// command, fed in turn.
    fn echoed(&self, arg: &str, line: &Line, out: &mut Scripts, following: &mut Vec<String>) {
        let name = arg
            .trim_start_matches('$')
            .trim_start_matches('{')
            .trim_end_matches('}');
        if arg.starts_with('$')
            && depth_ok(name)
            && !following.iter().any(|f| f == name)
            && let Some(value) = self.vars.get(name)
            && let Some(inner) = value.strip_prefix("$(").and_then(|v| v.strip_suffix(')'))
        {
            following.push(name.to_string());
            for inner_stage in inner.split('|').map(words) {
                self.feed_following(&inner_stage, line, out, following);
            }
            following.pop();
        }
    }

    /// `helmfile -f FILE …` piped into `kubectl apply`: the CRDs it renders
    /// when the line selects `CustomResourceDefinition`, else what it syncs.
    fn helmfile_rendered(&self, stage: &[String], first: usize, line: &Line, out: &mut Scripts) {
        let runs = stage[first + 1..]
            .iter()
            .any(|w| HELMFILE_SUBCOMMANDS.contains(&w.as_str()));
        let file = flag(stage, &["-f"], "--file")
            .and_then(|f| resolve(self.index, self.rel, &f, self.vars));
        if runs && file.is_none() {
            out.helmfile_unresolved = true;
        }
        if let Some(p) = file {
            if !out.helmfile_named.contains(&p) {
                out.helmfile_named.push(p.clone());
            }
            out.understood += 1;
            if line.text.contains("CustomResourceDefinition") {
                if !out.crds_only.contains(&p) {
                    out.crds_only.push(p);
                }
            } else if !out.synced.contains(&p) {
                out.synced.push(p);
            }
        }
    }
}
