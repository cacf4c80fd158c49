//! Shell parsed, not scanned: a script (or a Taskfile command, a justfile
//! recipe line, a documented step) into the commands it runs, with
//! `brush-parser` (POSIX and bash grammar: quoting, escapes, continuations,
//! here-documents, `&&`/`||`/`;`, pipes, compound commands, functions).
//!
//! The walk follows what the shell would run, as far as the text shows it:
//! `for x in …` loops are unrolled over their literal values and over bash
//! arrays the script assigns (`list=( … )`, `local -r list=( … )`); a
//! function is read where it is called, its `$1`… bound to the call's
//! arguments (and once on its own when nothing calls it); `bash -c "…"` is
//! read as the script it runs. Go-template expressions (`{{.ROOT_DIR}}`,
//! just's `{{ source_directory() }}`) are kept whole inside their word.
//! ([`walk`] holds the walk, [`bindings`] what it binds, [`templates`] the
//! masking of template expressions, [`words`] quoting and substitutions.)
//!
//! A text the parser refuses (a shell dialect it does not know, a template
//! that is not shell until rendered) is left to the line reader of
//! [`super::commands`]; [`parse`] says so by returning `None`.

use brush_parser::ast;

mod bindings;
mod templates;
mod walk;
mod words;

use templates::mask_templates;

/// One command list item as the shell runs it: its and-or list's
/// pipelines, from the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unit {
    /// The 1-based line of the text the item starts on.
    pub line: u32,
    /// The pipelines of `a | b && c | d`, each a list of stages.
    pub pipelines: Vec<Vec<Stage>>,
}

/// One command of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Stage {
    /// Its words, quotes removed.
    pub words: Vec<String>,
    /// The file an input redirection (`< FILE`) reads.
    pub input: Option<String>,
    /// The file an output redirection (`> FILE`, `>> FILE`, `>| FILE`)
    /// writes.
    pub output: Option<String>,
    /// The here-document or here-string it reads on its standard input:
    /// the body, and whether the shell expands `$…` in it.
    pub stdin: Option<(String, bool)>,
}

impl Unit {
    /// Every word of the item, in order.
    pub fn words(&self) -> Vec<String> {
        self.pipelines
            .iter()
            .flatten()
            .flat_map(|s| s.words.iter().cloned())
            .collect()
    }
}

/// Larger texts are read line by line, not parsed.
const MAX_TEXT: usize = 1 << 20;
/// Deeper nesting (of brackets and compound commands) is read line by
/// line: the parser recurses.
const MAX_NESTING: usize = 64;

/// The commands of a shell text, in the order the shell runs them; `None`
/// when the text is not shell this parser reads.
pub(super) fn parse(text: &str) -> Option<Vec<Unit>> {
    if text.len() > MAX_TEXT || nesting(text) > MAX_NESTING {
        return None;
    }
    let (masked, templates) = mask_templates(text);
    let program = program(&masked)?;
    Some(walk::units(&program, &templates))
}

/// The parser's program, or `None`: a text it refuses, and a text it
/// panics on (brush-parser 0.4 unwraps inside its tokenizer on some
/// malformed input, `${<<EOF`), which is then read line by line like any
/// text it refuses. Its panics are kept off stderr: they are the parser's,
/// handled here, not the user's problem.
fn program(text: &str) -> Option<ast::Program> {
    quiet_parser_panics();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let options = brush_parser::ParserOptions::default();
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(text), &options);
        parser.parse_program().ok()
    }))
    .ok()
    .flatten()
}

/// Installs, once, a panic hook that stays silent for panics raised inside
/// brush-parser (caught by [`program`]) and reports every other panic as
/// before.
fn quiet_parser_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info
                .location()
                .is_some_and(|l| l.file().contains("brush-parser"))
            {
                return;
            }
            previous(info);
        }));
    });
}

/// A rough bound on how deep the text nests (brackets, and the keywords
/// that open compound commands), to keep the recursive parser's stack
/// bounded.
fn nesting(text: &str) -> usize {
    let mut depth: usize = 0;
    let mut max = 0;
    for word in text.split(|c: char| c.is_whitespace() || c == ';') {
        for c in word.chars() {
            match c {
                '(' | '{' | '[' => depth += 1,
                ')' | '}' | ']' => depth = depth.saturating_sub(1),
                _ => {}
            }
            max = max.max(depth);
        }
        match word {
            "if" | "for" | "while" | "until" | "case" | "select" => depth += 1,
            "fi" | "done" | "esac" => depth = depth.saturating_sub(1),
            _ => {}
        }
        max = max.max(depth);
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stages(text: &str) -> Vec<(u32, Vec<Vec<String>>)> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|u| {
                (
                    u.line,
                    u.pipelines.into_iter().flatten().map(|s| s.words).collect(),
                )
            })
            .collect()
    }

    fn w(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn assignments_are_seen_in_order_and_locals_in_their_function() {
        let text = "crds() {\n  local -r file=\"${ROOT}/00-crds.yaml\"\n  helmfile --file \"${file}\" template\n}\napps() {\n  local -r file=\"${ROOT}/01-apps.yaml\"\n  helmfile --file \"${file}\" sync\n}\ncrds\napps\nDIR=one\nkubectl apply -k $DIR\nDIR=two\nkubectl apply -k $DIR\nC=\"${1:?}\"\nkubectl apply -k $C\n";
        let got: Vec<Vec<String>> = stages(text)
            .into_iter()
            .flat_map(|(_, s)| s)
            .filter(|s| s.first().is_some_and(|p| p == "helmfile" || p == "kubectl"))
            .collect();
        assert_eq!(
            got,
            [
                w(&["helmfile", "--file", "${ROOT}/00-crds.yaml", "template"]),
                w(&["helmfile", "--file", "${ROOT}/01-apps.yaml", "sync"]),
                w(&["kubectl", "apply", "-k", "one"]),
                w(&["kubectl", "apply", "-k", "two"]),
                w(&["kubectl", "apply", "-k", "$C"]),
            ]
        );
    }

    #[test]
    fn quoting_pipes_and_lists() {
        let got = stages(
            "helmfile -f a.yaml template | yq 'select(.kind == \"CustomResourceDefinition\" or .x | length > 0)' | kubectl apply -f - && echo \"a && b\"; kubectl apply \\\n  -k \"${ROOT}/x\"\n",
        );
        assert_eq!(
            got,
            [
                (
                    1,
                    vec![
                        w(&["helmfile", "-f", "a.yaml", "template"]),
                        w(&[
                            "yq",
                            "select(.kind == \"CustomResourceDefinition\" or .x | length > 0)"
                        ]),
                        w(&["kubectl", "apply", "-f", "-"]),
                        w(&["echo", "a && b"]),
                    ]
                ),
                (1, vec![w(&["kubectl", "apply", "-k", "${ROOT}/x"])]),
            ]
        );
    }

    #[test]
    fn here_documents_feed_the_command() {
        let units = parse(
            "kubectl apply -f - <<EOF\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\nEOF\nkubectl get ns\n",
        )
        .unwrap();
        assert_eq!(units.len(), 2, "{units:?}");
        let stage = &units[0].pipelines[0][0];
        assert_eq!(stage.words, w(&["kubectl", "apply", "-f", "-"]));
        let (body, expands) = stage.stdin.clone().unwrap();
        assert!(body.contains("kind: Namespace"), "{body}");
        assert!(expands);
        assert_eq!(units[1].line, 7);
    }

    #[test]
    fn functions_are_read_where_they_are_called() {
        let got = stages(
            "apply() {\n  kubectl apply -k \"$1\" --namespace \"${2:-default}\"\n}\nlib() { kubectl apply -f \"$1\"; }\napply bootstrap/crds flux-system\napply bootstrap/apps x\n",
        );
        assert_eq!(
            got,
            [
                (5, vec![w(&["apply", "bootstrap/crds", "flux-system"])]),
                (
                    2,
                    vec![w(&[
                        "kubectl",
                        "apply",
                        "-k",
                        "bootstrap/crds",
                        "--namespace",
                        "flux-system"
                    ])]
                ),
                (6, vec![w(&["apply", "bootstrap/apps", "x"])]),
                (
                    2,
                    vec![w(&[
                        "kubectl",
                        "apply",
                        "-k",
                        "bootstrap/apps",
                        "--namespace",
                        "x"
                    ])]
                ),
                // never called: read once, `$1` unknown
                (4, vec![w(&["kubectl", "apply", "-f", "$1"])]),
            ]
        );
    }

    #[test]
    fn loops_unroll_over_words_and_arrays() {
        let got = stages(
            "main() {\n  local -r crds=(\n    \"https://a.example/x.yaml\" # comment\n    https://b.example/y.yaml\n  )\n  for crd in \"${crds[@]}\"; do\n    kubectl apply -f \"${crd}\"\n  done\n}\nmain\nfor d in a b; do kubectl apply -k \"$d\"; done\nfor f in *.yaml; do kubectl apply -f $f; done\n",
        );
        let applied: Vec<String> = got
            .iter()
            .flat_map(|(_, p)| p.iter())
            .filter(|s| s.first().is_some_and(|p| p == "kubectl"))
            .map(|s| s[3].clone())
            .collect();
        assert_eq!(
            applied,
            [
                "https://a.example/x.yaml",
                "https://b.example/y.yaml",
                "a",
                "b",
                "$f"
            ]
        );
    }

    #[test]
    fn templates_stay_whole_and_bash_c_is_read() {
        let got = stages(
            "kubectl apply -k {{ .ROOT_DIR }}/x {{if .A}}--server-side{{end}}\nbash -c 'kubectl apply -k \"{{.DIR}}/crds\"'\n",
        );
        assert_eq!(
            got[0].1[0],
            w(&[
                "kubectl",
                "apply",
                "-k",
                "{{ .ROOT_DIR }}/x",
                "{{if .A}}--server-side{{end}}"
            ])
        );
        assert_eq!(
            got[2],
            (2, vec![w(&["kubectl", "apply", "-k", "{{.DIR}}/crds"])])
        );
    }

    #[test]
    fn input_redirection_and_compound_commands() {
        let got = stages(
            "if ! envsubst < ./a.yaml | kubectl apply -f - &>/dev/null; then\n  exit 1\nfi\ncase \"$1\" in\n  up) kubectl apply -k b ;;\nesac\n",
        );
        assert_eq!(
            got[0],
            (
                1,
                vec![w(&["envsubst"]), w(&["kubectl", "apply", "-f", "-"])]
            )
        );
        assert!(
            got.contains(&(5, vec![w(&["kubectl", "apply", "-k", "b"])])),
            "{got:?}"
        );
        let units = parse("envsubst < ./a.yaml | kubectl apply -f -\n").unwrap();
        assert_eq!(units[0].pipelines[0][0].input.as_deref(), Some("./a.yaml"));
    }

    #[test]
    fn command_substitutions_are_read() {
        let got = stages(
            "SNAP=$(kubectl create -f - -o name <<EOF\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\nEOF\n)\necho \"$(( 1 + 2 ))\" \"$(kubectl apply -k 'x (y)')\"\n",
        );
        let commands: Vec<&Vec<String>> = got
            .iter()
            .flat_map(|(_, p)| p.iter())
            .filter(|s| s.first().is_some_and(|p| p == "kubectl"))
            .collect();
        assert_eq!(
            commands,
            [
                &w(&["kubectl", "create", "-f", "-", "-o", "name"]),
                &w(&["kubectl", "apply", "-k", "x (y)"])
            ],
            "{got:?}"
        );
    }

    #[test]
    fn what_is_not_shell_is_refused_and_deep_nesting_is_not_parsed() {
        assert!(parse("if then fi (((\n").is_none());
        let deep = format!("{}x{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(parse(&deep).is_none());
        assert!(parse(&"if a; then ".repeat(5_000)).is_none());
        // brush-parser 0.4 panics on this one: caught, refused.
        assert!(parse("${<<EOF\n}\nEOF\n").is_none());
    }
}
