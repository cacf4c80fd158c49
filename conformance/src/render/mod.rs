//! Rendering: turning a Flux Kustomization into the objects Flux would apply.
//!
//! Two layers. [`Kustomize`] is the kustomize build itself, behind one trait
//! so backends can be swapped: the built-in renderer ([`native`], the
//! default), the external `kustomize` or `kubectl kustomize` program
//! ([`external`]), or [`Auto`] (native, and the program for what native does
//! not implement). [`flux`] adds what kustomize-controller does around that
//! build, and [`reach`] says what a build reads without running it: the generated `kustomization.yaml` for
//! directories without one, `spec.patches`, `spec.components`,
//! `spec.targetNamespace`, `spec.images`, name prefix/suffix, then per object
//! the required fields, `spec.commonMetadata` and the owner labels.
//! Rendering never touches the network.

pub mod external;
pub mod flux;
pub mod native;
pub mod reach;

use std::path::Path;

use crate::yaml::Node;

/// A kustomize build backend.
pub trait Kustomize: Sync + std::fmt::Debug {
    /// A short name for reports (`kubectl kustomize`, `kustomize`).
    fn name(&self) -> &str;

    /// Builds the kustomization in `dir` with load restrictions off and
    /// plugins disabled, returning the objects in build order. `Err` carries
    /// the backend's own message.
    fn build(&self, dir: &Path) -> Result<Vec<Node>, String>;

    /// Builds the backend handed to another one (with `--renderer auto`),
    /// and why: one line each.
    fn fallbacks(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Which backend renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Choice {
    /// The external kustomize or kubectl program.
    Kustomize,
    /// The built-in renderer (the default).
    #[default]
    Native,
    /// Native, and the external program for kustomizations that use
    /// something the native renderer does not implement.
    Auto,
}

impl Choice {
    /// The backend for this choice.
    pub fn backend(self) -> Result<Box<dyn Kustomize>, external::MissingRenderer> {
        Ok(match self {
            Choice::Kustomize => Box::new(external::External::detect()?),
            Choice::Native => Box::new(native::Native),
            Choice::Auto => Box::new(Auto {
                external: external::External::detect().ok(),
                fallbacks: std::sync::Mutex::new(Vec::new()),
            }),
        })
    }
}

/// Native first; the external program where native says "unsupported".
#[derive(Debug)]
pub struct Auto {
    external: Option<external::External>,
    fallbacks: std::sync::Mutex<Vec<String>>,
}

impl Kustomize for Auto {
    fn name(&self) -> &str {
        "native (auto)"
    }

    fn build(&self, dir: &Path) -> Result<Vec<Node>, String> {
        match native::Native.build(dir) {
            Err(message) if message.starts_with("unsupported:") => match &self.external {
                Some(external) => {
                    if let Ok(mut list) = self.fallbacks.lock() {
                        list.push(format!("{} took over: {message}", external.name()));
                    }
                    external.build(dir)
                }
                None => Err(format!(
                    "{message}; and no kustomize or kubectl is installed to take over"
                )),
            },
            other => other,
        }
    }

    fn fallbacks(&self) -> Vec<String> {
        self.fallbacks.lock().map(|l| l.clone()).unwrap_or_default()
    }
}
