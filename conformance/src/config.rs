//! `conformance.yaml`: what cannot be discovered, strictly parsed.
//!
//! Every section is optional. An unknown key is an error naming the key, the
//! file and the line, so a typo never silently disables a check.

use std::path::Path;

use serde::Deserialize;

use crate::provenance::Catalog;

/// The file name looked up at the repository root.
pub const FILE_NAME: &str = "conformance.yaml";

/// The repository's configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Additions to the chart and runtime catalogs, and CRDs installed
    /// outside Flux.
    #[serde(default)]
    pub catalog: Catalog,
    /// How the cluster's kustomize-controller substitutes.
    #[serde(default)]
    pub substitution: Substitution,
}

/// `substitution:` settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Substitution {
    /// Strict substitution (an undefined variable fails the build): the
    /// default since Flux 2.9 / kustomize-controller 1.9. Set `false` for
    /// older controllers, where it becomes the empty string.
    #[serde(default = "yes")]
    pub strict: bool,
}

impl Default for Substitution {
    fn default() -> Self {
        Substitution { strict: true }
    }
}

fn yes() -> bool {
    true
}

/// `conformance.yaml` is unreadable or invalid.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub line: u32,
    pub message: String,
}

impl Config {
    /// Reads `conformance.yaml` from the repository root; the default when
    /// there is none.
    pub fn load(repo: &Path) -> Result<Config, ConfigError> {
        let path = repo.join(FILE_NAME);
        if !path.is_file() {
            return Ok(Config::default());
        }
        let text = std::fs::read_to_string(&path).map_err(|err| ConfigError {
            file: FILE_NAME.into(),
            line: 0,
            message: err.to_string(),
        })?;
        Config::parse(&text)
    }

    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        serde_saphyr::from_str(text).map_err(|err| {
            let line = err.location().map_or(0, |l| l.line() as u32);
            let rendered = err.without_snippet().to_string();
            let first = rendered
                .lines()
                .next()
                .unwrap_or("invalid configuration")
                .trim();
            let message = match first.rfind(" at line ") {
                Some(cut) => &first[..cut],
                None => first,
            };
            ConfigError {
                file: FILE_NAME.into(),
                line,
                message: message.to_string(),
            }
        })
    }

    /// The embedded catalog extended with this repository's additions.
    pub fn catalog(&self) -> Catalog {
        Catalog::embedded().extended(&self.catalog)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_key_and_line() {
        let err = Config::parse("catalog:\n  charts: []\n  preinstaled: [x.io]\n").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.message.contains("preinstaled"), "{}", err.message);
    }

    #[test]
    fn catalog_extends_the_embedded_one() {
        let cfg = Config::parse(
            "catalog:\n  preinstalled: [talos.dev]\n  charts:\n    - chart: my-operator\n      groups: [my.example.com]\n",
        )
        .unwrap();
        let catalog = cfg.catalog();
        assert!(catalog.is_preinstalled("talos.dev", "ServiceAccount"));
        assert!(catalog.chart_groups().contains_key("my-operator"));
        assert!(catalog.chart_groups().contains_key("cert-manager"));
    }
}
