//! Every rule's documentation has one shape (ruff's: what it catches, why
//! it is bad, an example, the fix), and the README's rule table is made
//! from the rules themselves: `BLESS=1 cargo test -p flux-conformance
//! --test it rule_docs` rewrites it.

use std::path::Path;

use conformance::rules::{self, Severity};

const SECTIONS: [&str; 4] = [
    "## What it catches",
    "## Why Flux fails",
    "## Example",
    "## Fix",
];

#[test]
fn every_rule_doc_has_the_four_sections_an_example_and_a_fix() {
    let mut problems = Vec::new();
    for rule in rules::all() {
        let id = rule.id();
        let doc = rule.explain();
        let headings: Vec<&str> = doc.lines().filter(|l| l.starts_with("## ")).collect();
        if headings != SECTIONS {
            problems.push(format!("{id}: sections {headings:?}, want {SECTIONS:?}"));
        }
        if !doc.starts_with(SECTIONS[0]) {
            problems.push(format!("{id}: text before the first section"));
        }
        let section = |name: &str| {
            let start = doc.find(name).map_or(doc.len(), |i| i + name.len());
            let end = SECTIONS
                .iter()
                .filter_map(|s| doc[start..].find(s).map(|i| start + i))
                .min()
                .unwrap_or(doc.len());
            &doc[start..end]
        };
        let example = section("## Example");
        if !example.contains("```yaml")
            && !example.contains("```bash")
            && !example.contains("```sh")
        {
            problems.push(format!("{id}: the example has no failing input"));
        }
        if !example.contains(rule.example()) {
            problems.push(format!(
                "{id}: the example does not show the rule's own example line"
            ));
        }
        if !section("## Fix").contains("```") {
            problems.push(format!("{id}: the fix shows nothing fixed"));
        }
        if !section("## Why Flux fails").contains('`') {
            problems.push(format!("{id}: Why Flux fails names no function or field"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The README's table, from each rule's id, default severity, summary
/// and example.
fn table() -> String {
    let mut out = String::from(
        "<!-- rules:begin (generated from the rules: BLESS=1 cargo test -p flux-conformance --test it rule_docs) -->\n| id | catches | example |\n|---|---|---|\n",
    );
    for rule in rules::all() {
        let id = rule.id();
        let severity = match rule.severity() {
            Severity::Warning => " (warning)",
            Severity::Error => "",
        };
        let example = rule.example().replace('|', "\\|");
        let example = if example.contains('`') {
            example
        } else {
            format!("`{example}`")
        };
        out.push_str(&format!(
            "| <a id=\"rule-{id}\"></a>[`{id}`](engine/src/rules/docs/{id}.md){severity} | {} | {example} |\n",
            rule.summary().replace('|', "\\|")
        ));
    }
    out.push_str("<!-- rules:end -->\n");
    out
}

#[test]
fn the_readme_rule_table_is_made_from_the_rules() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let (Some(start), Some(end)) = (
        readme.find("<!-- rules:begin"),
        readme.find("<!-- rules:end -->\n"),
    ) else {
        panic!("README.md has no <!-- rules:begin --> … <!-- rules:end --> table");
    };
    let end = end + "<!-- rules:end -->\n".len();
    let want = table();
    if readme[start..end] == want {
        return;
    }
    if std::env::var_os("BLESS").is_some() {
        let updated = format!("{}{want}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).expect("write README.md");
        return;
    }
    panic!("README.md's rule table is not the rules' (BLESS=1 rewrites it)");
}
