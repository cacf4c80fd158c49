//! What a HelmRelease's chart installs, read from the chart itself: the
//! CRDs it ships (its `crds/` directory, CRD templates, its subcharts'),
//! and the namespaces its templates create. Read from a chart repository or
//! OCI registry with `--fetch-remote`, or from the repository when the
//! chart's source is the repository itself; the hand-kept catalog is the
//! fallback.

/// A chart as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartContents {
    /// The chart's name (`Chart.yaml` `name`).
    pub name: String,
    /// The version read (`Chart.yaml` `version`).
    pub version: String,
    /// Where it was read from, for reports (`https://charts.jetstack.io`,
    /// `oci://ghcr.io/org/charts/x`, a directory of the repository).
    pub from: String,
    /// The CRDs it ships.
    pub crds: Vec<ChartCrd>,
    /// Namespaces its templates create (literal names only).
    pub namespaces: Vec<Gated<String>>,
}

/// One CRD a chart ships.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartCrd {
    /// `spec.group`.
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// The file in the chart (`crds/certificates.yaml`,
    /// `charts/crds/templates/…`).
    pub file: String,
    /// From a `crds/` directory (Helm installs those unless
    /// `install.crds: Skip`), or a template (rendered like any object).
    pub in_crds_dir: bool,
    /// The values that must be true for it to be installed (a template's
    /// `{{ if .Values.crds.enabled }}`, a subchart's `condition`), each
    /// with the chart's default; empty: always. `None`: a condition this
    /// reader cannot evaluate.
    pub gates: Option<Vec<Gate>>,
}

/// Something installed only when a value is true.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gated<T> {
    /// What is installed.
    pub value: T,
    /// As [`ChartCrd::gates`].
    pub gates: Option<Vec<Gate>>,
}

/// A value that gates part of a chart: its path in the values
/// (`crds.enabled`) and the chart's default for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// The value's path, dot-separated.
    pub path: String,
    /// The chart's `values.yaml` default (false when it has none).
    pub default: bool,
}
