//! The walk over the parsed program, in the order the shell runs it:
//! functions read where they are called, `for` loops unrolled, `bash -c`
//! and `$( … )` read as the scripts they run.

use std::collections::BTreeMap;

use brush_parser::ast;

use super::bindings::{Bindings, has_positional};
use super::templates::unmask;
use super::words::{substitutions, unquote};
use super::{Stage, Unit, parse};

/// How deep function calls are followed.
const MAX_CALLS: usize = 8;

/// The units of a parsed program: its functions and arrays collected
/// first, then its commands walked, then each function nothing calls.
pub(super) fn units(program: &ast::Program, templates: &[String]) -> Vec<Unit> {
    let mut walk = Walk {
        templates,
        functions: BTreeMap::new(),
        arrays: BTreeMap::new(),
        called: Vec::new(),
        units: Vec::new(),
    };
    for list in &program.complete_commands {
        walk.collect(list);
    }
    let mut bind = Bindings::default();
    for list in &program.complete_commands {
        walk.list(list, &mut bind, 0);
    }
    // Functions nothing calls (a library of functions, or one run by
    // name from outside): read once, their arguments unknown.
    let functions: Vec<(String, ast::FunctionBody)> = walk
        .functions
        .iter()
        .filter(|(name, _)| !walk.called.contains(name))
        .map(|(n, b)| (n.clone(), b.clone()))
        .collect();
    for (_, body) in functions {
        walk.compound(&body.0, &mut Bindings::default(), 1);
    }
    walk.units
}

/// One walk: what it has collected, and the units read so far.
struct Walk<'a> {
    /// The template expressions masked out of the text.
    templates: &'a [String],
    /// Functions the text defines, by name.
    functions: BTreeMap<String, ast::FunctionBody>,
    /// Bash arrays the text assigns, by name: their elements.
    arrays: BTreeMap<String, Vec<String>>,
    /// Functions called at least once.
    called: Vec<String>,
    units: Vec<Unit>,
}

impl Walk<'_> {
    /// A word's text as the command receives it: templates back, quotes
    /// removed.
    fn word(&self, w: &ast::Word) -> String {
        unquote(&unmask(&w.value, self.templates))
    }

    /// Functions and arrays, wherever they are defined.
    fn collect(&mut self, list: &ast::CompoundList) {
        for item in &list.0 {
            let and_or = &item.0;
            for p in
                std::iter::once(&and_or.first).chain(and_or.additional.iter().map(|a| match a {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
                }))
            {
                for c in &p.seq {
                    self.collect_command(c);
                }
            }
        }
    }

    fn collect_command(&mut self, c: &ast::Command) {
        match c {
            ast::Command::Function(f) => {
                self.functions
                    .entry(self.word(&f.fname))
                    .or_insert_with(|| f.body.clone());
                self.collect_compound(&f.body.0);
            }
            ast::Command::Simple(s) => {
                let items = s
                    .prefix
                    .iter()
                    .flat_map(|p| p.0.iter())
                    .chain(s.suffix.iter().flat_map(|p| p.0.iter()));
                for item in items {
                    if let ast::CommandPrefixOrSuffixItem::AssignmentWord(a, _) = item
                        && let ast::AssignmentName::VariableName(name) = &a.name
                        && let ast::AssignmentValue::Array(values) = &a.value
                    {
                        let values: Vec<String> =
                            values.iter().map(|(_, v)| self.word(v)).collect();
                        self.arrays.entry(name.clone()).or_insert(values);
                    }
                }
            }
            ast::Command::Compound(c, _) => self.collect_compound(c),
            ast::Command::ExtendedTest(..) => {}
        }
    }

    fn collect_compound(&mut self, c: &ast::CompoundCommand) {
        for list in compound_lists(c) {
            self.collect(list);
        }
    }

    fn list(&mut self, list: &ast::CompoundList, bind: &mut Bindings, depth: usize) {
        for item in &list.0 {
            let and_or = &item.0;
            let pipelines: Vec<&ast::Pipeline> = std::iter::once(&and_or.first)
                .chain(and_or.additional.iter().map(|a| match a {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
                }))
                .collect();
            let mut unit = Unit {
                line: 0,
                pipelines: Vec::new(),
            };
            let mut follow: Vec<(Stage, u32)> = Vec::new();
            let mut inner: Vec<(u32, String)> = Vec::new();
            for p in pipelines {
                let mut stages = Vec::new();
                for c in &p.seq {
                    match c {
                        ast::Command::Simple(s) => {
                            if unit.line == 0 {
                                unit.line = simple_line(s);
                            }
                            let (stage, substituted) = self.stage(s, bind);
                            self.assign(s, &stage, bind);
                            follow.push((stage.clone(), unit.line));
                            inner.extend(substituted);
                            stages.push(stage);
                        }
                        ast::Command::Compound(c, redirects) => {
                            // Flush what came before, then what the
                            // compound command runs, in order.
                            if !stages.is_empty() {
                                unit.pipelines.push(std::mem::take(&mut stages));
                            }
                            self.flush(&mut unit);
                            for (stage, line) in std::mem::take(&mut follow) {
                                self.follow(&stage, line, bind, depth);
                            }
                            self.compound(c, bind, depth);
                            // `{ …; } <<EOF`: the block's stdin is rare and
                            // not read.
                            let _ = redirects;
                        }
                        ast::Command::Function(_) | ast::Command::ExtendedTest(..) => {}
                    }
                }
                if !stages.is_empty() {
                    unit.pipelines.push(stages);
                }
            }
            self.flush(&mut unit);
            // What a called function or `bash -c` runs, after the call;
            // what a `$( … )` runs.
            for (stage, line) in follow {
                self.follow(&stage, line, bind, depth);
            }
            if depth < MAX_CALLS {
                for (line, text) in inner {
                    for mut u in parse(&text).unwrap_or_default() {
                        u.line = line + u.line.saturating_sub(1);
                        self.units.push(u);
                    }
                }
            }
        }
    }

    fn flush(&mut self, unit: &mut Unit) {
        if !unit.pipelines.is_empty() {
            self.units.push(std::mem::replace(
                unit,
                Unit {
                    line: 0,
                    pipelines: Vec::new(),
                },
            ));
        }
    }

    fn compound(&mut self, c: &ast::CompoundCommand, bind: &mut Bindings, depth: usize) {
        match c {
            ast::CompoundCommand::ForClause(f) => {
                let values = f.values.as_ref().and_then(|values| {
                    let mut out = Vec::new();
                    for v in values {
                        let text = bind.apply(&self.word(v));
                        // `"${list[@]}"`: the array's elements.
                        if let Some(name) = text
                            .strip_prefix("${")
                            .and_then(|r| r.strip_suffix("[@]}").or_else(|| r.strip_suffix("[*]}")))
                        {
                            out.extend(self.arrays.get(name)?.iter().cloned());
                        } else if text.contains('$') || text.contains('*') || text.contains('?') {
                            return None;
                        } else {
                            out.push(text);
                        }
                    }
                    Some(out)
                });
                match values {
                    Some(values) => {
                        for value in values {
                            let scope = bind.vars.len();
                            bind.vars.push((f.variable_name.clone(), value));
                            self.list(&f.body.list, bind, depth);
                            bind.vars.truncate(scope);
                        }
                    }
                    // Values the text does not show: read once, the
                    // variable unknown.
                    None => self.list(&f.body.list, bind, depth),
                }
            }
            other => {
                for list in compound_lists(other) {
                    self.list(list, bind, depth);
                }
            }
        }
    }

    /// Binds what a command assigns, in order, so a later word sees the
    /// value assigned last: `NAME=value` alone, and `local`, `export`,
    /// `readonly`, `declare`, `typeset` (`local -r file=…` in two
    /// functions is two values, each seen in its own function: a function
    /// is read with its caller's bindings copied, [`Self::follow`]).
    fn assign(&self, s: &ast::SimpleCommand, stage: &Stage, bind: &mut Bindings) {
        let declares = stage.words.first().is_some_and(|p| {
            ["local", "export", "readonly", "declare", "typeset"].contains(&p.as_str())
        });
        let items: Vec<&ast::CommandPrefixOrSuffixItem> = if s.word_or_name.is_none() {
            s.prefix.iter().flat_map(|p| p.0.iter()).collect()
        } else if declares {
            s.suffix.iter().flat_map(|p| p.0.iter()).collect()
        } else {
            Vec::new()
        };
        for item in items {
            if let ast::CommandPrefixOrSuffixItem::AssignmentWord(a, _) = item
                && let ast::AssignmentName::VariableName(name) = &a.name
                && let ast::AssignmentValue::Scalar(value) = &a.value
                && !a.append
            {
                let value = bind.apply(&self.word(value));
                // A script's own arguments (`CLUSTER="${1:?}"` at the top)
                // are resolved where the script is called, not here.
                // A command's output (`rendered=$(…)`) is followed where
                // the variable is used, by the file's own reading
                // ([`super::expand::variables`]), not put in as text.
                if !has_positional(&value) && !value.contains("$(") && !value.contains('`') {
                    bind.vars.push((name.clone(), value));
                }
            }
        }
    }

    /// A simple command's words (assignments before the program left
    /// out), with its here-document.
    fn stage(&self, s: &ast::SimpleCommand, bind: &Bindings) -> (Stage, Vec<(u32, String)>) {
        let mut stage = Stage::default();
        // The commands of its `$( … )`, each with the line of its word.
        let mut substituted = Vec::new();
        let raw_words = s.word_or_name.iter().chain(
            s.prefix
                .iter()
                .flat_map(|p| p.0.iter())
                .chain(s.suffix.iter().flat_map(|p| p.0.iter()))
                .filter_map(|item| match item {
                    ast::CommandPrefixOrSuffixItem::Word(w)
                    | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => Some(w),
                    _ => None,
                }),
        );
        for w in raw_words {
            let line = w
                .loc
                .as_ref()
                .map_or(1, |l| u32::try_from(l.start.line).unwrap_or(u32::MAX));
            for inner in substitutions(&w.value) {
                substituted.push((line, bind.apply(&unmask(inner, self.templates))));
            }
        }
        let redirect = |stage: &mut Stage, r: &ast::IoRedirect| match r {
            ast::IoRedirect::HereDocument(_, doc) => {
                stage.stdin = Some((
                    unmask(&doc.doc.value, self.templates),
                    doc.requires_expansion,
                ));
            }
            ast::IoRedirect::HereString(_, w) => {
                stage.stdin = Some((bind.apply(&self.word(w)), true));
            }
            ast::IoRedirect::File(
                _,
                ast::IoFileRedirectKind::Read,
                ast::IoFileRedirectTarget::Filename(w),
            ) => {
                stage.input = Some(bind.apply(&self.word(w)));
            }
            ast::IoRedirect::File(
                None | Some(1),
                ast::IoFileRedirectKind::Write
                | ast::IoFileRedirectKind::Append
                | ast::IoFileRedirectKind::Clobber,
                ast::IoFileRedirectTarget::Filename(w),
            ) => {
                stage.output = Some(bind.apply(&self.word(w)));
            }
            _ => {}
        };
        for item in s.prefix.iter().flat_map(|p| p.0.iter()) {
            if let ast::CommandPrefixOrSuffixItem::IoRedirect(r) = item {
                redirect(&mut stage, r);
            }
        }
        if let Some(w) = &s.word_or_name {
            stage.words.push(bind.apply(&self.word(w)));
        }
        for item in s.suffix.iter().flat_map(|p| p.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::Word(w) => {
                    stage.words.push(bind.apply(&self.word(w)));
                }
                ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                    stage.words.push(bind.apply(&self.word(w)));
                }
                ast::CommandPrefixOrSuffixItem::IoRedirect(r) => redirect(&mut stage, r),
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(..) => {}
            }
        }
        (stage, substituted)
    }

    /// A call of a function the text defines (its body read with the
    /// call's arguments), and `bash -c "…"` (its script read).
    fn follow(&mut self, stage: &Stage, line: u32, bind: &Bindings, depth: usize) {
        let Some(program) = stage.words.first() else {
            return;
        };
        if depth < MAX_CALLS
            && let Some(body) = self.functions.get(program).cloned()
        {
            if !self.called.contains(program) {
                self.called.push(program.clone());
            }
            let mut inner = Bindings {
                positional: Some(stage.words[1..].to_vec()),
                vars: bind.vars.clone(),
            };
            self.compound(&body.0, &mut inner, depth + 1);
            return;
        }
        let shell = program.rsplit('/').next().unwrap_or(program);
        if depth < MAX_CALLS
            && matches!(shell, "bash" | "sh" | "zsh")
            && let Some(c) = stage.words.iter().position(|w| w == "-c")
            && let Some(script) = stage.words.get(c + 1)
            && let Some(units) = parse(script)
        {
            for mut u in units {
                u.line = line + u.line.saturating_sub(1);
                self.units.push(u);
            }
        }
    }
}

/// The lists a compound command runs (a `for` loop's body included).
fn compound_lists(c: &ast::CompoundCommand) -> Vec<&ast::CompoundList> {
    match c {
        ast::CompoundCommand::BraceGroup(b) => vec![&b.list],
        ast::CompoundCommand::Subshell(s) => vec![&s.list],
        ast::CompoundCommand::ForClause(f) => vec![&f.body.list],
        ast::CompoundCommand::CaseClause(c) => {
            c.cases.iter().filter_map(|i| i.cmd.as_ref()).collect()
        }
        ast::CompoundCommand::IfClause(i) => {
            let mut out = vec![&i.condition, &i.then];
            for e in i.elses.iter().flatten() {
                out.extend(e.condition.iter());
                out.push(&e.body);
            }
            out
        }
        ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
            vec![&w.0, &w.1.list]
        }
        ast::CompoundCommand::ArithmeticForClause(f) => vec![&f.body.list],
        ast::CompoundCommand::Arithmetic(_) | ast::CompoundCommand::Coprocess(_) => Vec::new(),
    }
}

/// The line a simple command starts on.
fn simple_line(s: &ast::SimpleCommand) -> u32 {
    use brush_parser::ast::SourceLocation;
    s.location()
        .map_or(1, |l| u32::try_from(l.start.line).unwrap_or(u32::MAX))
}
