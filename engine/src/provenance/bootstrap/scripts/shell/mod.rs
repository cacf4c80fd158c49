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
//!
//! A text the parser refuses (a shell dialect it does not know, a template
//! that is not shell until rendered) is left to the line reader of
//! [`super::commands`]; [`parse`] says so by returning `None`.

use std::collections::BTreeMap;

use brush_parser::ast;

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
/// How deep function calls are followed.
const MAX_CALLS: usize = 8;

/// The commands of a shell text, in the order the shell runs them; `None`
/// when the text is not shell this parser reads.
pub(super) fn parse(text: &str) -> Option<Vec<Unit>> {
    if text.len() > MAX_TEXT || nesting(text) > MAX_NESTING {
        return None;
    }
    let (masked, templates) = mask_templates(text);
    let program = program(&masked)?;
    let mut walk = Walk {
        templates: &templates,
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
    Some(walk.units)
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

/// Template expressions (`{{ … }}`) replaced by placeholders the shell
/// reads as plain word characters, and the expressions by placeholder.
fn mask_templates(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut templates = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let expr = &rest[start..start + len + 2];
        out.push_str(&rest[..start]);
        out.push_str(&format!("\u{E000}{}\u{E001}", templates.len()));
        // Keep the line count: a template across lines keeps its newlines.
        for _ in expr.matches('\n') {
            out.push('\n');
        }
        templates.push(expr.to_string());
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    (out, templates)
}

/// Puts the template expressions back.
fn unmask(text: &str, templates: &[String]) -> String {
    if !text.contains('\u{E000}') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('\u{E000}') {
        out.push_str(&rest[..start]);
        let after = &rest[start + '\u{E000}'.len_utf8()..];
        let Some(end) = after.find('\u{E001}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        match after[..end]
            .parse::<usize>()
            .ok()
            .and_then(|i| templates.get(i))
        {
            Some(t) => out.push_str(t),
            None => out.push_str(&rest[start..start + '\u{E000}'.len_utf8() + end]),
        }
        rest = &after[end + '\u{E001}'.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// Positional parameters and loop variables bound while walking.
#[derive(Debug, Clone, Default)]
struct Bindings {
    /// `$1`… of the function being read, when called with known arguments.
    positional: Option<Vec<String>>,
    /// Loop variables and their value in this unrolled iteration.
    vars: Vec<(String, String)>,
}

impl Bindings {
    /// A word with the bound parameters and variables put in.
    fn apply(&self, word: &str) -> String {
        if !word.contains('$') {
            return word.to_string();
        }
        let mut w = word.to_string();
        // The innermost (latest) binding of a name wins.
        for (name, value) in self.vars.iter().rev() {
            w = replace_var(&w, name, value);
        }
        if let Some(args) = &self.positional {
            for (i, value) in args.iter().enumerate().take(9).rev() {
                w = replace_var(&w, &(i + 1).to_string(), value);
            }
            if w.contains("$@") || w.contains("${@}") || w.contains("$*") {
                let all = args.join(" ");
                w = w
                    .replace("${@}", &all)
                    .replace("$@", &all)
                    .replace("$*", &all);
            }
        }
        w
    }
}

/// `$NAME`, `${NAME}` and `${NAME:…}` (a default or a check, moot once
/// the value is known) replaced by `value`.
fn replace_var(word: &str, name: &str, value: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(inner) = after.strip_prefix('{')
            && let Some(body) = inner.strip_prefix(name)
            && (body.starts_with('}') || body.starts_with(':'))
            && let Some(close) = body.find('}')
        {
            out.push_str(value);
            rest = &body[close + 1..];
            continue;
        }
        if let Some(body) = after.strip_prefix(name)
            && !body.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            out.push_str(value);
            rest = body;
            continue;
        }
        out.push('$');
        rest = after;
    }
    out.push_str(rest);
    out
}

struct Walk<'a> {
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

/// The texts of a word's command substitutions (`$( … )`, not
/// arithmetic `$(( … ))`), outermost only.
fn substitutions(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = word.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'$' && bytes[i + 1] == b'(' && bytes.get(i + 2) != Some(&b'(') {
            let start = i + 2;
            let mut depth = 1usize;
            let mut j = start;
            let mut quote: Option<u8> = None;
            while j < bytes.len() {
                match (quote, bytes[j]) {
                    (Some(q), c) if c == q => quote = None,
                    (Some(_), _) => {}
                    (None, b'\'' | b'"') => quote = Some(bytes[j]),
                    (None, b'(') => depth += 1,
                    (None, b')') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if depth == 0 {
                out.push(&word[start..j]);
            }
            i = j + 1;
            continue;
        }
        i += 1;
    }
    out
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

/// A word with its quotes and escapes removed, the way the shell passes it
/// on: `'…'` literal, `"…"` with `\"`, `\\`, `\$` unescaped, and `$(…)`,
/// `${…}` kept whole.
fn unquote(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), c) => out.push(c),
            (Some('"'), '"') => quote = None,
            (Some('"'), '\\') => match chars.peek() {
                Some(&n) if matches!(n, '"' | '\\' | '$' | '`') => {
                    out.push(n);
                    chars.next();
                }
                _ => out.push('\\'),
            },
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            (None, '\'' | '"') => quote = Some(c),
            (None, '$') if chars.peek() == Some(&'\'') => {
                // $'…': ANSI-C quoting, read as a literal.
                chars.next();
                quote = Some('\'');
            }
            (_, c) => out.push(c),
        }
    }
    out
}

/// Whether a word still names a positional parameter (`$1`, `${2:-x}`,
/// `$@`, `$*`).
fn has_positional(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, b)| {
        *b == b'$'
            && match bytes.get(i + 1) {
                Some(b'{') => bytes
                    .get(i + 2)
                    .is_some_and(|c| c.is_ascii_digit() || *c == b'@' || *c == b'*'),
                Some(c) => c.is_ascii_digit() || *c == b'@' || *c == b'*',
                None => false,
            }
    })
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
