//! Taskfiles (go-task) read as the YAML they are, in any style (block or
//! flow), not line by line: the variables of `vars:` and `env:` at the
//! root, in each task and in each `includes:` entry, and every command a
//! task runs (`cmds:` strings, `{cmd: …}`, `defer:`, a task's single
//! `cmd:`). Each command is then read like a line of a script, with
//! go-task's special variables: `{{.ROOT_DIR}}` (the repository root),
//! `{{.TASKFILE_DIR}}` (the Taskfile's own directory) and
//! `{{.USER_WORKING_DIR}}` (taken as the root, where the tasks are run
//! from). A `sh:` variable is computed when the task runs: it stays
//! unknown, so a path that needs it is left out.
//!
//! go-task reads a Taskfile with go-yaml (`taskfile.Read` →
//! `yaml.Unmarshal` into `ast.Taskfile`); the shapes here are those of
//! `ast.Cmd` and `ast.Var` unmarshalling.

use std::collections::BTreeMap;

use crate::yaml::{Node, Value};

/// One command a Taskfile runs: its text and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TaskCommand {
    /// The line of the text's first line (a block's first content line).
    pub(super) line: u32,
    pub(super) text: String,
    /// The name of the task that runs it (`bootstrap`).
    pub(super) task: String,
}

/// What a Taskfile says, once parsed.
#[derive(Debug, Default)]
pub(super) struct Taskfile {
    /// Variables (`vars:` and `env:` at every level, `includes.*.vars`),
    /// the first definition kept; `sh:` ones are absent (unknown).
    pub(super) vars: BTreeMap<String, String>,
    /// Every command of every task, in file order.
    pub(super) commands: Vec<TaskCommand>,
    /// The Taskfiles it includes, as written (relative to its own
    /// directory): `includes: {NAME: PATH}` or `{NAME: {taskfile: PATH,
    /// dir: DIR}}`, with the directory their commands run in.
    pub(super) includes: Vec<Include>,
}

/// One `includes:` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Include {
    /// `taskfile:` (a file, or a directory holding `Taskfile.yml`).
    pub(super) taskfile: String,
    /// `dir:`: where the included tasks run (default: the including
    /// Taskfile's directory, go-task's `ast.Include.Dir`).
    pub(super) dir: Option<String>,
}

/// Reads a Taskfile's parsed document; `None` when it is not a mapping
/// with `tasks:` or `includes:` (not a Taskfile: read as text).
pub(super) fn read(doc: &Node) -> Option<Taskfile> {
    if !doc.is_map() || (doc.get("tasks").is_none() && doc.get("includes").is_none()) {
        return None;
    }
    let mut out = Taskfile::default();
    variables(doc.get("vars"), &mut out.vars);
    variables(doc.get("env"), &mut out.vars);
    if let Some(includes) = doc.get("includes") {
        for (_, include) in includes.as_map() {
            variables(include.get("vars"), &mut out.vars);
            let taskfile = match &include.value {
                Value::String(path) => Some(path.clone()),
                _ => include.get("taskfile").and_then(Node::as_scalar_string),
            };
            if let Some(taskfile) = taskfile.filter(|t| !t.contains("{{")) {
                out.includes.push(Include {
                    taskfile,
                    dir: include
                        .get("dir")
                        .and_then(Node::as_scalar_string)
                        .filter(|d| !d.contains("{{")),
                });
            }
        }
    }
    if let Some(tasks) = doc.get("tasks") {
        for (name, task) in tasks.as_map() {
            variables(task.get("vars"), &mut out.vars);
            variables(task.get("env"), &mut out.vars);
            // A task given as a bare string or list is its commands.
            match &task.value {
                Value::String(_) | Value::Seq(_) => commands(task, name, &mut out.commands),
                _ => {
                    if let Some(cmd) = task.get("cmd") {
                        commands(cmd, name, &mut out.commands);
                    }
                    if let Some(cmds) = task.get("cmds") {
                        commands(cmds, name, &mut out.commands);
                    }
                }
            }
        }
    }
    Some(out)
}

/// A `vars:`/`env:` mapping: scalars as their text, `{value: …}` as its
/// value; `sh:`, `ref:`, `map:` are not known before the task runs.
fn variables(node: Option<&Node>, out: &mut BTreeMap<String, String>) {
    let Some(node) = node else { return };
    for (name, value) in node.as_map() {
        let text = match &value.value {
            Value::Map(_) => value.get("value").and_then(Node::as_scalar_string),
            _ => value.as_scalar_string(),
        };
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            out.entry(name.clone()).or_insert(text);
        }
    }
}

/// The commands of a `cmds:` list or a `cmd:` value: strings, `{cmd: …}`,
/// `{defer: …}` (a string or `{cmd: …}`); `{task: …}` runs another task,
/// whose own commands are read where it is defined.
fn commands(node: &Node, task: &str, out: &mut Vec<TaskCommand>) {
    match &node.value {
        Value::String(text) => out.push(TaskCommand {
            line: node.line,
            text: text.clone(),
            task: task.to_string(),
        }),
        Value::Seq(items) => {
            for item in items {
                commands(item, task, out);
            }
        }
        Value::Map(_) => {
            for key in ["cmd", "defer"] {
                if let Some(inner) = node.get(key) {
                    commands(inner, task, out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Taskfile {
        let docs = crate::yaml::parse_text(text).expect("yaml");
        read(&docs[0]).expect("a Taskfile")
    }

    #[test]
    fn flow_style_taskfiles_are_read_whole() {
        let t = parse(
            "{ version: \"3\", vars: { BOOTSTRAP_DIR: \"{{.ROOT_DIR}}/bootstrap\", KUBECONFIG: { sh: \"echo x\" } }, tasks: { apps: { cmds: [ \"helmfile --file {{.BOOTSTRAP_DIR}}/helmfile.d/01-apps.yaml sync\", { cmd: \"kubectl apply -k {{.BOOTSTRAP_DIR}}/crds\" }, { task: other } ] } } }\n",
        );
        assert_eq!(t.vars["BOOTSTRAP_DIR"], "{{.ROOT_DIR}}/bootstrap");
        assert!(!t.vars.contains_key("KUBECONFIG"), "sh: is unknown");
        let texts: Vec<&str> = t.commands.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "helmfile --file {{.BOOTSTRAP_DIR}}/helmfile.d/01-apps.yaml sync",
                "kubectl apply -k {{.BOOTSTRAP_DIR}}/crds"
            ]
        );
        assert!(t.commands.iter().all(|c| c.line == 1));
    }

    #[test]
    fn block_commands_defer_task_vars_env_and_include_vars() {
        let t = parse(
            "version: '3'\nenv:\n  CLUSTER_DIR: '{{.ROOT_DIR}}/kubernetes'\nincludes:\n  flux:\n    taskfile: .taskfiles/flux\n    vars:\n      FLUX_DIR: '{{.CLUSTER_DIR}}/flux'\ntasks:\n  bootstrap:\n    vars:\n      CRDS: { value: crds }\n    cmds:\n      - defer: kubectl delete ns scratch\n      - |\n        kubectl apply \\\n          -k {{.CLUSTER_DIR}}/{{.CRDS}}\n  one:\n    cmd: kubectl apply -f {{.FLUX_DIR}}/config\n  bare: kubectl apply -k x\n",
        );
        assert_eq!(t.vars["CLUSTER_DIR"], "{{.ROOT_DIR}}/kubernetes");
        assert_eq!(t.vars["FLUX_DIR"], "{{.CLUSTER_DIR}}/flux");
        assert_eq!(t.vars["CRDS"], "crds");
        let got: Vec<u32> = t.commands.iter().map(|c| c.line).collect();
        assert_eq!(got, [14, 16, 19, 20]);
    }

    #[test]
    fn other_yaml_is_no_taskfile() {
        let docs = crate::yaml::parse_text("apiVersion: v1\nkind: ConfigMap\n").expect("yaml");
        assert!(read(&docs[0]).is_none());
    }
}
