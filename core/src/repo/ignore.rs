//! source-controller's ignore rules (`SourceIgnoreFilter`, fluxcd/pkg
//! `sourceignore` and its vendored go-git `gitignore`): which paths of the
//! repository are left out of the artifact Flux builds from.
//!
//! * The defaults (`sourceignore.DefaultPatterns`): the VCS files, images
//!   and archives, CI configuration, and `**/.goreleaser.yml`,
//!   `**/.sops.yaml`, `**/.flux.yaml`.
//! * `.sourceignore` files at any depth (gitignore syntax, relative to their
//!   directory; `LoadIgnorePatterns`), then the GitRepository's `spec.ignore`
//!   (relative to the root), last and so strongest.
//! * As soon as any `.sourceignore` or `spec.ignore` contributes a pattern,
//!   the defaults other than the VCS ones are dropped
//!   (`storage.SourceIgnoreFilter`: `NewMatcher(VCS + patterns)` instead of
//!   `NewDefaultMatcher`).
//!
//! Patterns are matched from last to first; the first that matches decides
//! (`gitignore.Matcher.Match`). A pattern without `/` matches any path
//! component below its directory (`simpleNameMatch`); one with `/` is
//! anchored there (`globMatch`, `**` for any number of directories).

/// `sourceignore.ExcludeVCS`.
const VCS: &[&str] = &[".git/", ".gitignore", ".gitmodules", ".gitattributes"];
/// `ExcludeExt`, `ExcludeCI`, `ExcludeExtra`.
const DEFAULTS: &[&str] = &[
    "*.jpg",
    "*.jpeg",
    "*.gif",
    "*.png",
    "*.wmv",
    "*.flv",
    "*.tar.gz",
    "*.zip",
    ".github/",
    ".circleci/",
    ".travis.yml",
    ".gitlab-ci.yml",
    "appveyor.yml",
    ".drone.yml",
    "cloudbuild.yaml",
    "codeship-services.yml",
    "codeship-steps.yml",
    "**/.goreleaser.yml",
    "**/.sops.yaml",
    "**/.flux.yaml",
];

/// The name of an ignore file.
pub(crate) const IGNORE_FILE: &str = ".sourceignore";

/// One gitignore pattern with the directory it applies below.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    domain: Vec<String>,
    parts: Vec<String>,
    inclusion: bool,
    dir_only: bool,
    glob: bool,
}

impl Pattern {
    /// `gitignore.ParsePattern`.
    fn parse(text: &str, domain: &[String]) -> Pattern {
        let mut p = text;
        let inclusion = p.starts_with('!');
        if inclusion {
            p = &p[1..];
        }
        let trimmed;
        if !p.ends_with("\\ ") {
            trimmed = p.trim_end_matches(' ');
            p = trimmed;
        }
        let dir_only = p.ends_with('/');
        if dir_only {
            p = &p[..p.len() - 1];
        }
        Pattern {
            domain: domain.to_vec(),
            glob: p.contains('/'),
            parts: p.split('/').map(str::to_string).collect(),
            inclusion,
            dir_only,
        }
    }

    /// `Some(true)`: excluded, `Some(false)`: re-included, `None`: no match.
    fn matches(&self, path: &[&str], is_dir: bool) -> Option<bool> {
        if path.len() <= self.domain.len() || self.domain.iter().zip(path).any(|(d, p)| d != p) {
            return None;
        }
        let path = &path[self.domain.len()..];
        let hit = if self.glob {
            self.glob_match(path, is_dir)
        } else {
            self.simple_match(path, is_dir)
        };
        hit.then_some(!self.inclusion)
    }

    fn simple_match(&self, path: &[&str], is_dir: bool) -> bool {
        for (i, name) in path.iter().enumerate() {
            match go_match(&self.parts[0], name) {
                None => return false,
                Some(false) => continue,
                Some(true) => return !(self.dir_only && !is_dir && i == path.len() - 1),
            }
        }
        false
    }

    fn glob_match(&self, mut path: &[&str], is_dir: bool) -> bool {
        let mut matched = false;
        let mut traverse = false;
        for (i, part) in self.parts.iter().enumerate() {
            if part.is_empty() {
                traverse = false;
                continue;
            }
            if part == "**" {
                if i == self.parts.len() - 1 {
                    break;
                }
                traverse = true;
                continue;
            }
            if part.contains("**") || path.is_empty() {
                return false;
            }
            if traverse {
                traverse = false;
                while let Some((first, rest)) = path.split_first() {
                    path = rest;
                    match go_match(part, first) {
                        None => return false,
                        Some(true) => {
                            matched = true;
                            break;
                        }
                        Some(false) if path.is_empty() => matched = false,
                        Some(false) => {}
                    }
                }
            } else {
                match go_match(part, path[0]) {
                    Some(true) => {}
                    _ => return false,
                }
                matched = true;
                path = &path[1..];
            }
        }
        matched && !(self.dir_only && !is_dir && path.is_empty())
    }
}

/// The ignore rules of one artifact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceIgnore {
    patterns: Vec<Pattern>,
    /// Where the patterns came from, for messages: `.sourceignore` files,
    /// or `spec.ignore`.
    pub origins: Vec<String>,
}

impl SourceIgnore {
    /// Nothing ignored (a plain directory, not an artifact).
    pub fn none() -> SourceIgnore {
        SourceIgnore::default()
    }

    /// The rules for an artifact: `.sourceignore` files (path of the
    /// directory holding each, and its text, in depth-first order) and the
    /// GitRepository's `spec.ignore`.
    pub fn new(sourceignores: &[(String, String)], spec_ignore: Option<&str>) -> SourceIgnore {
        let mut custom = Vec::new();
        let mut origins = Vec::new();
        for (dir, text) in sourceignores {
            let domain: Vec<String> = dir
                .split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            let before = custom.len();
            custom.extend(read_patterns(text).map(|p| Pattern::parse(p, &domain)));
            if custom.len() > before {
                origins.push(crate::repo::join(dir, IGNORE_FILE));
            }
        }
        if let Some(text) = spec_ignore {
            let before = custom.len();
            custom.extend(read_patterns(text).map(|p| Pattern::parse(p, &[])));
            if custom.len() > before {
                origins.push("spec.ignore".into());
            }
        }
        let mut patterns: Vec<Pattern> = VCS.iter().map(|p| Pattern::parse(p, &[])).collect();
        if custom.is_empty() {
            patterns.extend(DEFAULTS.iter().map(|p| Pattern::parse(p, &[])));
        } else {
            patterns.extend(custom);
        }
        SourceIgnore { patterns, origins }
    }

    /// Whether the repository path is left out of the artifact.
    pub fn ignores(&self, rel: &str, is_dir: bool) -> bool {
        let path: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
        self.patterns
            .iter()
            .rev()
            .find_map(|p| p.matches(&path, is_dir))
            .unwrap_or(false)
    }

    /// Whether the repository's own `.sourceignore` files or `spec.ignore`
    /// replaced the defaults.
    #[cfg(test)]
    pub(crate) fn customised(&self) -> bool {
        !self.origins.is_empty()
    }
}

/// `sourceignore.ReadPatterns`: every line that is not blank or a comment.
fn read_patterns(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
}

/// One element of a `filepath.Match` pattern.
#[derive(Debug)]
enum Tok {
    Star,
    Any,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Lit(char),
}

/// Parses a `filepath.Match` pattern; `None` when it is malformed (Go's
/// ErrBadPattern: an unclosed class, a trailing `\`).
fn tokens(pattern: &str) -> Option<Vec<Tok>> {
    let p: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let escaped = |i: usize| -> Option<(char, usize)> {
        match p.get(i)? {
            '\\' => Some((*p.get(i + 1)?, i + 2)),
            c => Some((*c, i + 1)),
        }
    };
    while i < p.len() {
        match p[i] {
            '*' => {
                out.push(Tok::Star);
                i += 1;
            }
            '?' => {
                out.push(Tok::Any);
                i += 1;
            }
            '[' => {
                i += 1;
                let negated = p.get(i) == Some(&'^');
                if negated {
                    i += 1;
                }
                let mut ranges = Vec::new();
                let mut first = true;
                loop {
                    let c = *p.get(i)?;
                    if c == ']' && !first {
                        i += 1;
                        break;
                    }
                    first = false;
                    let (lo, next) = escaped(i)?;
                    i = next;
                    let mut hi = lo;
                    if p.get(i) == Some(&'-') && p.get(i + 1).is_some_and(|c| *c != ']') {
                        let (h, next) = escaped(i + 1)?;
                        hi = h;
                        i = next;
                    }
                    ranges.push((lo, hi));
                }
                out.push(Tok::Class { negated, ranges });
            }
            _ => {
                let (c, next) = escaped(i)?;
                out.push(Tok::Lit(c));
                i = next;
            }
        }
    }
    Some(out)
}

/// Go's `filepath.Match` on one path component. `None`: a malformed pattern
/// (which never matches).
fn go_match(pattern: &str, name: &str) -> Option<bool> {
    // The common shapes, without tokenising: a plain name (`.github`) and
    // a star then a plain suffix (`*.png`). Every path is matched against
    // every pattern, so these run tens of thousands of times.
    let plain = |p: &str| !p.contains(['*', '?', '[', '\\']);
    if plain(pattern) {
        return Some(pattern == name);
    }
    if let Some(suffix) = pattern.strip_prefix('*')
        && plain(suffix)
    {
        return Some(!name.contains('/') && name.ends_with(suffix));
    }
    let toks = tokens(pattern)?;
    let n: Vec<char> = name.chars().collect();
    let one = |t: &Tok, c: char| match t {
        Tok::Any => c != '/',
        Tok::Lit(l) => *l == c,
        Tok::Class { negated, ranges } => {
            c != '/' && ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi) != *negated
        }
        Tok::Star => false,
    };
    // Greedy matching, backtracking to the last star.
    let (mut ti, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() || ti < toks.len() {
        if ti < toks.len() {
            if let Tok::Star = toks[ti] {
                star = Some((ti, ni));
                ti += 1;
                continue;
            }
            if ni < n.len() && one(&toks[ti], n[ni]) {
                ti += 1;
                ni += 1;
                continue;
            }
        }
        match star {
            Some((st, sn)) if sn < n.len() && n[sn] != '/' => {
                star = Some((st, sn + 1));
                ti = st + 1;
                ni = sn + 1;
            }
            _ => return Some(false),
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_filepath_match() {
        assert_eq!(go_match("*.yaml", "a.yaml"), Some(true));
        assert_eq!(go_match("*.yaml", "a.yml"), Some(false));
        assert_eq!(go_match("a?c", "abc"), Some(true));
        assert_eq!(go_match("[a-c]x", "bx"), Some(true));
        assert_eq!(go_match("[^a-c]x", "bx"), Some(false));
        assert_eq!(go_match("\\*", "*"), Some(true));
        assert_eq!(go_match("*x*y", "axbxy"), Some(true));
        assert_eq!(go_match("[", "a"), None);
        assert_eq!(go_match("codeship-*.yml", "codeship-steps.yml"), Some(true));
    }

    #[test]
    fn defaults_drop_ci_images_and_sops_rules() {
        let rules = SourceIgnore::new(&[], None);
        assert!(rules.ignores(".github/workflows/ci.yaml", false));
        assert!(rules.ignores(".git/config", false));
        assert!(rules.ignores("docs/logo.png", false));
        assert!(rules.ignores("clusters/prod/.sops.yaml", false));
        assert!(rules.ignores(".sops.yaml", false));
        assert!(rules.ignores(".gitlab-ci.yml", false));
        assert!(!rules.ignores("clusters/prod/kustomization.yaml", false));
        assert!(!rules.ignores("apps/github/app.yaml", false));
        assert!(!rules.customised());
    }

    #[test]
    fn a_sourceignore_replaces_the_defaults_and_applies_below_its_directory() {
        let rules = SourceIgnore::new(
            &[
                (String::new(), "# comment\n\n/docs\n*.md\n".into()),
                ("apps".into(), "secret-*\n!secret-keep.yaml\n".into()),
            ],
            None,
        );
        assert!(rules.customised());
        assert!(rules.ignores("docs/x.yaml", false));
        assert!(
            !rules.ignores("apps/docs/x.yaml", false),
            "anchored at the root"
        );
        assert!(rules.ignores("apps/README.md", false));
        assert!(rules.ignores("apps/secret-a.yaml", false));
        assert!(!rules.ignores("apps/secret-keep.yaml", false));
        assert!(!rules.ignores("secret-a.yaml", false), "only below apps/");
        // The defaults are gone (only the VCS ones stay).
        assert!(!rules.ignores(".github/workflows/ci.yaml", false));
        assert!(!rules.ignores("clusters/.sops.yaml", false));
        assert!(rules.ignores(".git/HEAD", false));
    }

    #[test]
    fn spec_ignore_comes_last_and_wins() {
        let rules = SourceIgnore::new(
            &[(String::new(), "/clusters/**/dev\n".into())],
            Some("/*\n!/clusters/\n"),
        );
        assert!(rules.ignores("apps/a.yaml", false));
        assert!(!rules.ignores("clusters/prod/a.yaml", false));
        assert!(!rules.ignores("clusters/x/dev/a.yaml", false));
    }

    #[test]
    fn directory_patterns_match_what_is_below() {
        let rules = SourceIgnore::new(&[(String::new(), "build/\n/a/**/tmp\n".into())], None);
        assert!(rules.ignores("x/build/y.yaml", false));
        assert!(!rules.ignores("x/build", false), "a file named build");
        assert!(rules.ignores("x/build", true));
        assert!(rules.ignores("a/b/c/tmp/x.yaml", false));
        assert!(rules.ignores("a/tmp/x.yaml", false));
    }
}
