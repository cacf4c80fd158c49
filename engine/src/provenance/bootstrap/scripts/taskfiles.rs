//! The repository's Taskfiles read together: each parsed ([`taskfile`]),
//! the Taskfiles they include followed wherever they are, their variables
//! shared (global across included Taskfiles), and each command scanned in
//! place, in the directory its Taskfile runs in.

use std::collections::BTreeMap;

use super::expand::variables;
use super::taskfile::{self, Taskfile};
use super::{Scripts, dir_of, scan};
use crate::repo::{Kind, RepoIndex};

/// The Taskfiles among the scripts, with those they include.
pub(super) struct Taskfiles {
    /// Each Taskfile that parses as one, by path.
    parsed: BTreeMap<String, Taskfile>,
    /// The directory each included Taskfile's commands run in (`dir:`).
    run_in: BTreeMap<String, String>,
    /// Taskfile variables, global across the included Taskfiles (the
    /// root's `vars:` reach `.taskfiles/**`): the first definition kept.
    vars: BTreeMap<String, String>,
}

impl Taskfiles {
    /// Parses the Taskfiles of `texts` (path and text), and adds to
    /// `texts` each Taskfile they include that is not there yet.
    pub(super) fn read(index: &RepoIndex, texts: &mut Vec<(String, String)>) -> Self {
        let parsed = texts
            .iter()
            .filter(|(rel, _)| is_taskfile(rel))
            .filter_map(|(rel, text)| Some((rel.clone(), parse(index, rel, text)?)))
            .collect();
        let mut out = Taskfiles {
            parsed,
            run_in: BTreeMap::new(),
            vars: BTreeMap::new(),
        };
        out.follow_includes(index, texts);
        out.share_vars(texts);
        out
    }

    /// Included Taskfiles wherever they are (`includes: {x: ./tools/tasks.yml}`),
    /// and the directory each included Taskfile's commands run in (`dir:`).
    fn follow_includes(&mut self, index: &RepoIndex, texts: &mut Vec<(String, String)>) {
        let mut pending: Vec<String> = self.parsed.keys().cloned().collect();
        while let Some(rel) = pending.pop() {
            let includes = self
                .parsed
                .get(&rel)
                .map(|t| t.includes.clone())
                .unwrap_or_default();
            for include in includes {
                let Some(file) = included_file(index, dir_of(&rel), &include.taskfile) else {
                    continue;
                };
                if let Some(dir) = &include.dir {
                    let (dir, escapes) = crate::repo::normalize(dir_of(&rel), dir);
                    if !escapes {
                        self.run_in.entry(file.clone()).or_insert(dir);
                    }
                }
                if self.parsed.contains_key(&file) {
                    continue;
                }
                let Ok(text) = index.read_text(&file) else {
                    continue;
                };
                if let Some(tf) = parse(index, &file, &text) {
                    self.parsed.insert(file.clone(), tf);
                    texts.push((file.clone(), text));
                    pending.push(file);
                }
            }
        }
    }

    /// The variables of every Taskfile, parsed or read as text, in the
    /// order of `texts`.
    fn share_vars(&mut self, texts: &[(String, String)]) {
        for (rel, text) in texts {
            if let Some(tf) = self.parsed.get(rel.as_str()) {
                for (k, v) in &tf.vars {
                    self.vars.entry(k.clone()).or_insert_with(|| v.clone());
                }
            } else if is_taskfile(rel) {
                for (k, v) in variables(text) {
                    self.vars.entry(k).or_insert(v);
                }
            }
        }
    }

    /// Scans one script: a parsed Taskfile command by command; any other
    /// text whole, with its own variables (and the shared ones, for a
    /// Taskfile that did not parse as one).
    pub(super) fn scan(&self, index: &RepoIndex, rel: &str, text: &str, out: &mut Scripts) {
        if let Some(tf) = self.parsed.get(rel) {
            self.scan_commands(index, rel, tf, out);
            return;
        }
        let mut vars = variables(text);
        if is_taskfile(rel) {
            for (k, v) in &self.vars {
                vars.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        scan(index, rel, text, &vars, out);
    }

    /// Each command of a parsed Taskfile, with its variables and the
    /// shared ones, placed at its lines of the Taskfile.
    fn scan_commands(&self, index: &RepoIndex, rel: &str, tf: &Taskfile, out: &mut Scripts) {
        let mut vars = tf.vars.clone();
        for (k, v) in &self.vars {
            vars.entry(k.clone()).or_insert_with(|| v.clone());
        }
        // Run in `dir:`: relative paths resolve there, while
        // `{{.TASKFILE_DIR}}` stays the Taskfile's own directory.
        let (at_file, own_dir) = match self.run_in.get(rel) {
            Some(dir) => (
                crate::repo::join(dir, "Taskfile.yml"),
                format!("{{{{.ROOT_DIR}}}}/{}", dir_of(rel)),
            ),
            None => (rel.to_string(), String::new()),
        };
        for command in &tf.commands {
            let mark = out.mark();
            let text = if own_dir.is_empty() {
                command.text.clone()
            } else {
                command
                    .text
                    .replace("{{.TASKFILE_DIR}}", &own_dir)
                    .replace("{{ .TASKFILE_DIR }}", &own_dir)
            };
            scan(index, &at_file, &text, &vars, out);
            // Lines of the command's text, placed in the Taskfile.
            out.place_since(mark, command.line, Some(rel));
            // A task named for the bootstrap (`task bootstrap`) is on the
            // bootstrap path wherever its Taskfile is.
            if super::bootstrap_name(&command.task) {
                let steps: Vec<_> = out.unread[mark.unread..]
                    .iter()
                    .map(|u| u.at.clone())
                    .collect();
                out.bootstrap_steps.extend(steps);
            }
        }
    }
}

/// Taskfiles parsed as YAML (any style); one that does not parse as a
/// Taskfile is read as text, line by line.
fn parse(index: &RepoIndex, rel: &str, text: &str) -> Option<Taskfile> {
    let docs = match index.file(rel) {
        Some(file) => file.docs().as_ref().ok()?.clone(),
        None => crate::yaml::parse_text(text).ok()?,
    };
    taskfile::read(docs.first()?)
}

/// The Taskfile an `includes:` entry names, relative to the including
/// Taskfile's directory: a file, or a directory holding one of go-task's
/// default names (`taskfile.DefaultTaskfiles`).
fn included_file(index: &RepoIndex, dir: &str, taskfile: &str) -> Option<String> {
    let (path, escapes) = crate::repo::normalize(dir, taskfile);
    if escapes {
        return None;
    }
    match index.kind(&path)? {
        Kind::File => Some(path),
        Kind::Dir => [
            "Taskfile.yml",
            "taskfile.yml",
            "Taskfile.yaml",
            "taskfile.yaml",
            "Taskfile.dist.yml",
            "taskfile.dist.yml",
            "Taskfile.dist.yaml",
            "taskfile.dist.yaml",
        ]
        .iter()
        .map(|name| crate::repo::join(&path, name))
        .find(|p| index.kind(p) == Some(&Kind::File)),
        _ => None,
    }
}

fn is_taskfile(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase();
    name.starts_with("taskfile") || rel.contains(".taskfiles/")
}
