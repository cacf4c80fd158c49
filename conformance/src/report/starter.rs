//! `conformance init`'s starter conformance.yaml: what the run could not
//! know, each as the entry that settles it, commented out with the
//! evidence: the sources the clusters sync that the run did not read
//! (`sources:` with a checkout's `dir`), what they refer to that may come
//! from outside (`external:`), and the bootstrap steps this tool could not
//! read (`provides:`). Nothing is asserted for the user: each entry is
//! uncommented only by someone who knows it is true.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::plural;
use crate::check::Outcome;
use crate::model::{SourceRef, TierState};

/// The starter file's text for the repository the run checked.
pub fn render(outcome: &Outcome, repo: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# conformance.yaml: a starter written by `conformance init` from what the check\n\
         # of {repo} could not know. Each entry is commented out, with the evidence:\n\
         # uncomment those that are true, fill in what is marked, and run\n\
         # `conformance config check`. Every section is described in the README's\n\
         # Configuration part."
    );
    let sources = unread_sources(outcome);
    let boundary = outcome.boundary();
    let unread = &outcome.bootstrap.unread;
    if sources.is_empty() && boundary.is_empty() && unread.is_empty() {
        let _ = writeln!(
            out,
            "#\n# The run read every source its clusters sync, found nothing it refers to\n\
             # that may come from outside, and read every bootstrap step: nothing to settle."
        );
        return out;
    }
    if !sources.is_empty() {
        let _ = writeln!(
            out,
            "\n# Sources the clusters sync that this run did not read: map each to a\n\
             # checkout of it (DIR relative to this repository), or pass\n\
             # `--source REF=DIR` on the command line.\n# sources:"
        );
        // One entry per URL: it maps every source with that URL.
        let mut by_url: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (source, (url, tiers, at)) in &sources {
            if let Some(url) = url {
                by_url.entry(url.as_str()).or_default().push(format!(
                    "{source}: {tiers} Kustomization{} not checked ({at})",
                    plural(*tiers)
                ));
            }
        }
        for (url, evidence) in &by_url {
            let _ = writeln!(out, "#   - url: {url}   # {}", evidence.join("; "));
            let _ = writeln!(
                out,
                "#     dir: ../{}   # FILL IN: the checkout's path",
                dir_hint(url)
            );
        }
        for (source, (url, tiers, at)) in &sources {
            let evidence = format!("{tiers} Kustomization{} not checked ({at})", plural(*tiers));
            match url {
                Some(_) => continue,
                None => {
                    let _ = writeln!(
                        out,
                        "#   - kind: {}   # {evidence}\n#     namespace: {}\n#     name: {}",
                        source.kind, source.namespace, source.name
                    );
                }
            }
            let _ = writeln!(
                out,
                "#     dir: ../{}   # FILL IN: the checkout's path",
                source.name
            );
        }
    }
    if !boundary.is_empty() {
        let _ = writeln!(
            out,
            "\n# What the clusters refer to that nothing this run reads creates, on clusters\n\
             # whose world the run does not read whole: uncomment what does exist (made by\n\
             # the installer, another repository or an in-cluster provider).\n# external:"
        );
        for item in &boundary {
            let by = item.referred_by.join(", ");
            let _ = writeln!(
                out,
                "#   - {}   # {}: referred to by {by}; {}",
                yaml_scalar(&item.item),
                item.cluster,
                item.evidence.join("; ")
            );
        }
    }
    if !unread.is_empty() {
        let _ = writeln!(
            out,
            "\n# Bootstrap steps this tool saw but could not read: declare what each\n\
             # creates before Flux (`creates: []` if nothing the clusters need).\n# provides:"
        );
        for step in unread {
            let _ = writeln!(
                out,
                "#   - step: \"{}\"   # `{}`\n#     creates: []   # FILL IN: Kind/namespace/name, Namespace/NAME or group/Kind",
                step.at,
                step.command.replace('\n', " ")
            );
        }
    }
    out
}

/// The sources tiers are not checked for because the run did not read
/// them: each with its URL (when a rendered object shows it), how many
/// tiers, and where the first is defined.
fn unread_sources(outcome: &Outcome) -> BTreeMap<SourceRef, (Option<String>, usize, String)> {
    let mut out: BTreeMap<SourceRef, (Option<String>, usize, String)> = BTreeMap::new();
    for cluster in &outcome.model.clusters {
        for tier in cluster.tiers.values() {
            if !matches!(tier.state, TierState::NotChecked(_)) || cluster.known_statically(&tier.id)
            {
                continue;
            }
            let source = &tier.source_ref;
            let url = cluster
                .source_object(source)
                .and_then(|o| o.body.str_at(&["spec", "url"]));
            let entry = out
                .entry(source.clone())
                .or_insert_with(|| (url, 0, tier.defined_at.to_string()));
            entry.1 += 1;
        }
    }
    out
}

/// A directory name to suggest for a URL's checkout: its last segment.
fn dir_hint(url: &str) -> String {
    url.trim_end_matches('/')
        .trim_end_matches(".git")
        .rsplit(['/', ':'])
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("checkout")
        .to_string()
}

/// A value as a YAML scalar: quoted when plain YAML would misread it.
fn yaml_scalar(value: &str) -> String {
    let plain = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/-._".contains(c));
    if plain {
        value.to_string()
    } else {
        serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
    }
}
