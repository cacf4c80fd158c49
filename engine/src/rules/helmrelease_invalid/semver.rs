//! Chart version constraints as source-controller reads `chart.spec.version`
//! (Masterminds/semver `NewConstraint`): `||`-separated alternatives, each a
//! list of comparisons separated by spaces or commas (`>=1.2.0 <2`,
//! `~1.2`, `^0.3`, `1.x`, `*`), with `A - B` ranges. Only whether the text
//! parses is decided here: a constraint that does not parse fails the
//! HelmChart ("invalid version/constraint format"), so the release is never
//! installed. Hand-written over `regex` rather than a semver crate: the
//! Rust crates implement Cargo's or npm's grammar, which accept and refuse
//! different texts (`1.2.x`, `=>1`, comma lists) than the Go library Flux
//! uses.

use std::sync::OnceLock;

use regex::Regex;

/// One version of a constraint: `v1`, `1.2`, `1.2.x`, `1.2.3-rc.1+meta`.
const VERSION: &str = r"v?[0-9xX*|]+(?:\.[0-9xX*|]+)?(?:\.[0-9xX*|]+)?(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?";

/// The comparison operators, the empty one (equal, or tilde with `x`) included.
const OPERATOR: &str = r"(?:!=|>=|=>|<=|=<|~>|=|>|<|~|\^)?";

fn range() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(r"\s*({VERSION})\s+-\s+({VERSION})\s*")).expect("a valid regex")
    })
}

fn alternative() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(
            r"^\s*{OPERATOR}\s*{VERSION}\s*(?:(?:\s+|,\s*){OPERATOR}\s*{VERSION}\s*)*$"
        ))
        .expect("a valid regex")
    })
}

/// Whether `text` is a version constraint source-controller accepts. An
/// empty version means the newest (`*`).
pub(crate) fn is_constraint(text: &str) -> bool {
    if text.trim().is_empty() {
        return true;
    }
    let rewritten = range().replace_all(text, ">= $1, <= $2");
    rewritten.split("||").all(|alt| alternative().is_match(alt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masterminds_forms_parse() {
        for ok in [
            "1.2.3",
            "v1.2.3",
            ">=1.2.0 <2.0.0",
            ">=1.2.0, <2.0.0",
            "~1.2",
            "~>1.2.3",
            "^0.3",
            "1.x",
            "1.2.X",
            "*",
            "=>1",
            "=<2",
            "!=1.4.0",
            "1.2 - 1.4.5",
            ">=1 <2 || >=3",
            "1.0.0-rc.1+build.5",
            "",
        ] {
            assert!(is_constraint(ok), "{ok}");
        }
    }

    #[test]
    fn what_source_controller_refuses() {
        for bad in [
            ">=1.0,,<2",
            "latest",
            "1.2.3.4",
            ">== 1.0",
            "1.0 ||",
            "~~1.2",
            "1.0.0 - ",
            "stable",
        ] {
            assert!(!is_constraint(bad), "{bad}");
        }
    }
}
