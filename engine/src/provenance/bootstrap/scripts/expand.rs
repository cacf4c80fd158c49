//! Variables and paths as the tools resolve them: shell and template
//! variables a file defines, the file's own directory, the repository root,
//! script arguments.

use std::collections::BTreeMap;

use super::dir_of;
use crate::repo::{Kind, RepoIndex};

/// Variables a script defines: `NAME=value`, `export NAME=value`, `local -r
/// NAME="value"`, Taskfile `NAME: value` (under `vars:`), just `name :=
/// "value"`.
pub(super) fn variables(text: &str) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    if text.len() > super::MAX_SCRIPT_BYTES {
        return vars; // not read (scan says so)
    }
    // `NAME=$( … )` anywhere in a line (`if ! rendered=$(…); then`).
    for line in text.lines() {
        let mut rest = line;
        while let Some(i) = rest.find("=$(") {
            let name: String = rest[..i]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let body = &rest[i + 1..];
            let mut depth = 0usize;
            let mut end = None;
            for (k, c) in body.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = Some(k);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            if !name.is_empty() {
                vars.entry(name).or_insert_with(|| body[..=end].to_string());
            }
            rest = &body[end + 1..];
        }
    }
    for line in text.lines() {
        let t = line
            .trim()
            .trim_start_matches("export ")
            .trim_start_matches("local -r ");
        let t = t
            .trim_start_matches("local ")
            .trim_start_matches("readonly ");
        let (name, value) = if let Some((n, v)) = t.split_once(":=") {
            (n.trim(), v.trim())
        } else if let Some((n, v)) = t.split_once('=') {
            if n.contains(' ') || n.is_empty() {
                continue;
            }
            (n, v)
        } else if let Some((n, v)) = t.split_once(": ") {
            (n.trim(), v.trim())
        } else {
            continue;
        };
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
            continue;
        }
        let value = match just_path(value).filter(|_| t.contains(":=")) {
            Some(path) => path,
            None => value.trim_matches(|c| c == '"' || c == '\'').to_string(),
        };
        if !value.is_empty() {
            vars.entry(name.to_string()).or_insert(value);
        }
    }
    vars
}

/// A just expression's value as a path template: `source_directory()`,
/// `justfile_directory()` and quoted strings joined by `/` (path join) or
/// `+` (concatenation): `source_directory() / "bootstrap"`. `None` for
/// any other expression.
fn just_path(v: &str) -> Option<String> {
    let mut out = String::new();
    for (i, join) in v.split(" / ").enumerate() {
        if i > 0 {
            out.push('/');
        }
        for part in join.split(" + ") {
            let part = part.trim();
            let piece = match part {
                "source_directory()" | "source_dir()" => "{{ source_directory() }}",
                "justfile_directory()" | "justfile_dir()" => "{{ justfile_directory() }}",
                _ if part.len() >= 2
                    && (part.starts_with('"') && part.ends_with('"')
                        || part.starts_with('\'') && part.ends_with('\'')) =>
                {
                    &part[1..part.len() - 1]
                }
                // Another variable of the file (`kubernetes_dir + '/x'`),
                // expanded in turn.
                _ if !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
                {
                    out.push_str(&format!("{{{{ {part} }}}}"));
                    continue;
                }
                _ => return None,
            };
            out.push_str(piece);
        }
    }
    Some(out)
}

/// Expands what a path argument refers to: the file's directory, the
/// repository root, and variables the file defines. `None` when something
/// unknown remains.
pub(super) fn expand(
    raw: &str,
    script: &str,
    vars: &BTreeMap<String, String>,
    depth: usize,
) -> Option<String> {
    let mut s = raw.trim_matches(|c| c == '"' || c == '\'').to_string();
    let here = if dir_of(script).is_empty() {
        ".".to_string()
    } else {
        format!("@root/{}", dir_of(script))
    };
    // just's `justfile_directory()` is the root justfile's directory: in a
    // module (`mod bootstrap` reads `bootstrap/mod.just`) that is not the
    // module's own, which `source_directory()` is.
    if script.ends_with(".just") {
        for pattern in [
            "{{ justfile_directory() }}",
            "{{justfile_directory()}}",
            "{{ justfile_dir() }}",
            "{{justfile_dir()}}",
        ] {
            s = s.replace(pattern, "@root");
        }
    }
    for pattern in [
        "{{ source_directory() }}",
        "{{source_directory()}}",
        "{{ justfile_directory() }}",
        "{{justfile_directory()}}",
        "{{ justfile_dir() }}",
        "{{ source_dir() }}",
        "$(dirname \"$0\")",
        "$(dirname \"${0}\")",
        "$(dirname $0)",
        "{{.TASKFILE_DIR}}",
        "{{ .TASKFILE_DIR }}",
    ] {
        s = s.replace(pattern, &here);
    }
    for pattern in [
        "$(git rev-parse --show-toplevel)",
        "{{.ROOT_DIR}}",
        "{{ .ROOT_DIR }}",
        "{{.USER_WORKING_DIR}}",
    ] {
        s = s.replace(pattern, "@root");
    }
    // ${NAME}, $NAME, {{.NAME}}, {{ .NAME }}, {{ NAME }} (just).
    let mut out = String::new();
    let mut rest = s.as_str();
    while !rest.is_empty() {
        let (start, end, name) = if let Some(i) = rest.find("${") {
            let j = rest[i..].find('}')? + i;
            (i, j + 1, rest[i + 2..j].to_string())
        } else if let Some(i) = rest.find("{{") {
            let j = rest[i..].find("}}")? + i;
            (
                i,
                j + 2,
                rest[i + 2..j].trim().trim_start_matches('.').to_string(),
            )
        } else if let Some(i) = rest.find('$') {
            let name: String = rest[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                return None;
            }
            (i, i + 1 + name.len(), name)
        } else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..start]);
        let positional = |v: &str| {
            let v = v.trim_matches(|c| c == '"' || c == '\'');
            v.strip_prefix("${")
                .or_else(|| v.strip_prefix('$'))
                .and_then(|r| r.chars().next())
                .is_some_and(|c| c.is_ascii_digit() && c != '0')
        };
        let value = match name.as_str() {
            "ROOT_DIR" | "ROOT" | "REPO_ROOT" | "GIT_ROOT" => "@root".to_string(),
            // A Taskfile's `{{.CLI_ARGS}}` is the task's command-line
            // arguments, as `$1` is a script's.
            "CLI_ARGS" => ARGUMENT.to_string(),
            _ if vars.get(&name).is_some_and(|v| positional(v)) => ARGUMENT.to_string(),
            "SCRIPT_DIR" | "DIR" => here.clone(),
            _ if depth < 5 => expand(vars.get(&name)?, script, vars, depth + 1)?,
            _ => return None,
        };
        out.push_str(&value);
        rest = &rest[end..];
    }
    Some(out)
}

/// The repository path an argument names, if it exists.
pub(super) fn resolve(
    index: &RepoIndex,
    script: &str,
    raw: &str,
    vars: &BTreeMap<String, String>,
) -> Option<String> {
    resolve_all(index, script, raw, vars).into_iter().next()
}

/// Marks a script argument (`CLUSTER="${1:?}"`) in an expanded path.
pub(super) const ARGUMENT: char = '\u{2}';

/// Every repository path an argument names: one, or, where it holds a
/// script argument (`kubernetes/${CLUSTER}/…` with `CLUSTER="${1}"`), one
/// per directory that makes the path exist (each cluster's).
pub(super) fn resolve_all(
    index: &RepoIndex,
    script: &str,
    raw: &str,
    vars: &BTreeMap<String, String>,
) -> Vec<String> {
    let Some(expanded) = expand(raw, script, vars, 0) else {
        return Vec::new();
    };
    if !expanded.contains(ARGUMENT) {
        return resolve_expanded(index, script, &expanded)
            .into_iter()
            .collect();
    }
    // The directory names at the argument's place, from what precedes it.
    let (before, after) = expanded.split_once(ARGUMENT).unwrap_or((&expanded, ""));
    let Some(parent) = resolve_expanded(index, script, before.trim_end_matches('/')) else {
        return Vec::new();
    };
    let names: Vec<String> = index
        .below(&parent)
        .filter(|(p, k)| {
            **k == Kind::Dir
                && p[parent.len()..]
                    .trim_start_matches('/')
                    .matches('/')
                    .count()
                    == 0
        })
        .filter_map(|(p, _)| p.rsplit('/').next().map(str::to_string))
        .filter(|n| !n.is_empty() && !n.starts_with('.'))
        .collect();
    let mut out: Vec<String> = names
        .iter()
        .filter_map(|n| {
            let candidate = format!("{before}{n}{after}");
            (!candidate.contains(ARGUMENT))
                .then(|| resolve_expanded(index, script, &candidate))
                .flatten()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The repository path a command writes (`> FILE`, `tee FILE`): the file
/// need not exist (writing it is the point); the first of "relative to the
/// script (or page)" and "relative to the root" whose directory exists,
/// else the path as written (a `cd` the text leaves to the reader). `None`
/// for a path outside the repository or one holding a value this reader
/// cannot know.
pub(super) fn written(
    index: &RepoIndex,
    script: &str,
    raw: &str,
    vars: &BTreeMap<String, String>,
) -> Option<String> {
    let expanded = expand(raw, script, vars, 0)?;
    if expanded.contains(ARGUMENT) || expanded.starts_with('/') || expanded.starts_with("/dev/") {
        return None;
    }
    let candidates: Vec<String> = match expanded.strip_prefix("@root") {
        Some(rest) => vec![rest.trim_start_matches('/').to_string()],
        None => vec![
            crate::repo::join(dir_of(script), &expanded),
            expanded.clone(),
        ],
    };
    let fallback = candidates.last().cloned();
    candidates
        .into_iter()
        .find_map(|c| {
            let (path, escapes) = crate::repo::normalize("", &c);
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
            (!escapes && !path.is_empty() && matches!(index.kind(dir), Some(Kind::Dir)))
                .then_some(path)
        })
        // Relative to a directory the text leaves to the reader (`cd` into
        // one of several): kept as written, matched by its tail.
        .or_else(|| {
            let (path, escapes) = crate::repo::normalize("", &fallback?);
            (!escapes && !path.is_empty()).then_some(path)
        })
}

pub(super) fn resolve_expanded(index: &RepoIndex, script: &str, expanded: &str) -> Option<String> {
    let expanded = expanded.to_string();
    let candidates: Vec<String> = if let Some(rest) = expanded.strip_prefix("@root") {
        vec![rest.trim_start_matches('/').to_string()]
    } else if expanded.starts_with('/') {
        return None; // an absolute path on the operator's machine
    } else {
        let relative = crate::repo::join(dir_of(script), &expanded);
        vec![relative, expanded.clone()]
    };
    candidates.into_iter().find_map(|c| {
        let (normal, escapes) = crate::repo::normalize("", &c);
        (!escapes
            && index
                .kind(&normal)
                .is_some_and(|k| matches!(k, Kind::File | Kind::Dir)))
        .then_some(normal)
    })
}

/// The repository paths a path with variables names under other values
/// than the ones it has here, when under these it names nothing: every
/// path that ends with what follows its last variable
/// (`{{.CLUSTER_DIR}}/bootstrap/crds` is `kubernetes/bootstrap/crds` with
/// the Taskfile's default, which does not exist, while
/// `kubernetes/hegira/bootstrap/crds` does). A Taskfile's global `vars:`
/// are defaults the command line overrides (`task bootstrap
/// CLUSTER_DIR=…`), and a script is run from where its user is, so such a
/// step applies what it names with a value this tool cannot know; a path
/// with no variable, or whose tail names nothing anywhere, stays what it
/// is (a step a stale page documents, which fails). The tail must say
/// enough to tell: two segments (`bootstrap/crds`), or a file's name
/// (`cluster-settings.yaml`); a bare `crds` could be any chart's. Sorted.
pub(super) fn elsewhere(
    index: &RepoIndex,
    script: &str,
    raw: &str,
    vars: &BTreeMap<String, String>,
) -> Vec<String> {
    let raw = raw
        .trim_matches(|c| c == '"' || c == '\'')
        .trim_end_matches('/');
    let variable = |seg: &str| seg.contains('$') || seg.contains("{{");
    if !variable(raw) || resolve(index, script, raw, vars).is_some() {
        return Vec::new();
    }
    let segments: Vec<&str> = raw.split('/').collect();
    let tail: Vec<&str> = segments
        .iter()
        .rev()
        .take_while(|seg| !variable(seg) && !seg.is_empty() && **seg != "." && **seg != "..")
        .copied()
        .collect();
    let telling = tail.len() >= 2 || tail.first().is_some_and(|last| last.contains('.'));
    if !telling || tail.len() == segments.len() {
        return Vec::new();
    }
    let suffix: String = tail.iter().rev().copied().collect::<Vec<_>>().join("/");
    let ending = format!("/{suffix}");
    let mut out: Vec<String> = index
        .below("")
        .filter(|(p, k)| {
            matches!(k, Kind::File | Kind::Dir)
                && (*p == suffix || p.ends_with(&ending))
                && !p.split('/').any(|part| part.starts_with('.'))
        })
        .map(|(p, _)| p.to_string())
        .collect();
    out.sort();
    out
}
