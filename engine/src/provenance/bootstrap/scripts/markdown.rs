//! Bootstrap steps documented in the repository's Markdown: the shell of
//! fenced code blocks (```` ```sh ````, `bash`, `shell`, `zsh`, `console`,
//! `shell-session`, and `~~~` fences), each command read like a line of a
//! script and placed at its line of the Markdown file, so a report says
//! where the tool took it from ("documented at README.md:LINE").
//!
//! Prompts are stripped: `$ `, `% ` and `❯ ` at the start of a line. In a
//! `console`/`shell-session` block only prompted lines are commands (the
//! rest is output). `catalog.documented_steps: false` in conformance.yaml
//! turns this off, for a repository whose READMEs show commands that are
//! not its bootstrap.
//!
//! The fence rules are CommonMark's (a fence of three or more backticks
//! or tildes, indented at most three spaces beyond its container — list
//! items are allowed, their indentation removed from the content — closed
//! by a fence of the same character at least as long). A hand-written
//! reader on purpose: only fences and info strings matter here, and a full
//! Markdown parser (pulldown-cmark) would add a dependency to find them.

/// One fenced shell block: the line of its first content line, and its
/// commands (prompts stripped, output lines blank so lines stay aligned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Block {
    pub(super) line: u32,
    pub(super) text: String,
}

const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "shell",
    "zsh",
    "console",
    "shell-session",
    "shellsession",
];
const PROMPTS: &[&str] = &["$ ", "% ", "❯ "];

/// The shell blocks of a Markdown text.
pub(super) fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = margin(line);
        let t = line.trim_start();
        let fence_char = t.chars().next().filter(|c| *c == '`' || *c == '~');
        let Some(fc) = fence_char else {
            i += 1;
            continue;
        };
        let len = t.chars().take_while(|c| *c == fc).count();
        if len < 3 {
            i += 1;
            continue;
        }
        let info = t[len..].trim();
        let lang = info
            .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
            .next()
            .unwrap_or_default()
            .trim_start_matches('.')
            .to_ascii_lowercase();
        // The content, to the closing fence (or the end of the text).
        let mut end = i + 1;
        while end < lines.len() {
            let c = lines[end].trim_start();
            let clen = c.chars().take_while(|x| *x == fc).count();
            if clen >= len && c[clen..].trim().is_empty() {
                break;
            }
            end += 1;
        }
        if SHELLS.contains(&lang.as_str()) {
            let session = matches!(lang.as_str(), "console" | "shell-session" | "shellsession");
            let body: Vec<String> = lines[i + 1..end]
                .iter()
                .map(|l| {
                    let l = &l[margin(l).min(indent)..];
                    let lt = l.trim_start();
                    match PROMPTS.iter().find_map(|p| lt.strip_prefix(p)) {
                        Some(command) => command.to_string(),
                        None if session => String::new(),
                        None => l.to_string(),
                    }
                })
                .collect();
            out.push(Block {
                line: i as u32 + 2,
                text: body.join("\n"),
            });
        }
        i = end + 1;
    }
    out
}

/// The bytes of a line's leading spaces and tabs (ASCII, so any cut
/// within them falls on a character boundary).
fn margin(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// Whether a repository path is a Markdown file.
pub(super) fn is_markdown(rel: &str) -> bool {
    let lower = rel.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// Whether a Markdown page documents how the cluster is set up, so its
/// shell blocks are steps someone runs before Flux: a README, or a page
/// (or a folder) named for installing (`install`, `bootstrap`, `setup`,
/// `getting-started`, `quickstart`, `onboarding`). Runbooks, migration
/// notes and troubleshooting pages are not: what they run is not the
/// bootstrap.
pub(super) fn is_setup_page(rel: &str) -> bool {
    const WORDS: &[&str] = &[
        "install",
        "bootstrap",
        "setup",
        "getting-started",
        "getting_started",
        "gettingstarted",
        "quickstart",
        "quick-start",
        "onboarding",
    ];
    let lower = rel.to_ascii_lowercase();
    let (dirs, name) = lower.rsplit_once('/').unwrap_or(("", &lower));
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    stem == "readme"
        || WORDS.iter().any(|w| stem.contains(w))
        || dirs.split('/').any(|d| {
            WORDS
                .iter()
                .any(|w| d == *w || d.ends_with(&format!("-{w}")))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_pages_are_readmes_and_pages_named_for_installing() {
        for page in [
            "README.md",
            "docs/readme.markdown",
            "docs/tutorials/getting-started.md",
            "initial-setup/doc/GitHub-Bootstrap.md",
            "docs/install/cilium.md",
        ] {
            assert!(is_setup_page(page), "{page}");
        }
        for page in [
            "docs/KOPIA_MANUAL_RESTORE.md",
            "docs/how-to/troubleshoot-flux.md",
            "docs/src/per-route-cert-migration.md",
            ".windsurf/workflows/configure-escalation-policies.md",
        ] {
            assert!(!is_setup_page(page), "{page}");
        }
    }

    #[test]
    fn wide_whitespace_inside_an_indented_block_is_kept_not_cut() {
        let md = " ```sh\n\u{3000}kubectl apply -k x\n ```\n";
        assert_eq!(
            blocks(md),
            [Block {
                line: 2,
                text: "\u{3000}kubectl apply -k x".into()
            }]
        );
    }

    #[test]
    fn fences_languages_prompts_and_lists() {
        let md = "# Setup\n\n```sh\n$ kubectl apply -k ./bootstrap/crds\n```\n\n1. Then:\n   ```console\n   $ kubectl apply --kustomize ./flux/config\n   namespace/flux-system created\n   ```\n\n```yaml\nkind: X\n```\n\n~~~bash\nhelm install a b \\\n  -n c\n~~~\n````\n```sh\nnot a fence\n````\n";
        let got = blocks(md);
        assert_eq!(
            got,
            [
                Block {
                    line: 4,
                    text: "kubectl apply -k ./bootstrap/crds".into()
                },
                Block {
                    line: 9,
                    text: "kubectl apply --kustomize ./flux/config\n".into()
                },
                Block {
                    line: 18,
                    text: "helm install a b \\\n  -n c".into()
                },
            ]
        );
    }
}
