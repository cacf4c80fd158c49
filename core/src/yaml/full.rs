//! The full loader: serde-saphyr, with its budgets, anchors, merge keys,
//! tags and error messages; every text the fast path ([`super::events`])
//! leaves, and every error, is read here.

use super::{
    MAX_DEPTH, MAX_DOCUMENTS, MAX_EVENTS, MAX_FILE_BYTES, MAX_NODES, Node, Value, YamlError,
};

/// The full loader: serde-saphyr, with its budgets, anchors, merge keys,
/// tags and error messages.
pub(super) fn parse_documents_full(text: &str) -> Result<Vec<Node>, YamlError> {
    // Kubernetes tooling reads YAML with go-yaml v3: `0755` is octal, and
    // only true/false spellings are booleans (`yes`, `on` stay strings).
    // Comments are read as syntax but not kept (nothing here uses them):
    // kept, a long comment block between a key and its list is buffered
    // and fails at 32 comments ("too many buffered comments"), where
    // go-yaml reads any number.
    let options = serde_saphyr::options! {
        legacy_octal_numbers: true,
        strict_booleans: true,
        emit_comments: false,
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            max_documents: MAX_DOCUMENTS,
            max_events: MAX_EVENTS,
            max_nodes: MAX_NODES,
            max_total_scalar_bytes: MAX_FILE_BYTES as usize,
            flow_nesting_limit: MAX_DEPTH + 1,
        },
    };
    let docs: Vec<Node> =
        serde_saphyr::from_multiple_with_options(text, options).map_err(|err| {
            let (line, column) = err
                .location()
                .map_or((0, 0), |loc| (loc.line() as u32, loc.column() as u32));
            // Budget breaches may come wrapped (in an alias's error, with a
            // snippet): look through the wrappers.
            let mut inner = &err;
            while let serde_saphyr::Error::AliasError { error, .. }
            | serde_saphyr::Error::WithSnippet { error, .. } = inner
            {
                inner = error;
            }
            if let serde_saphyr::Error::Budget { breach, .. } = inner {
                return YamlError {
                    line,
                    column,
                    message: breach_message(breach),
                    budget: true,
                };
            }
            let rendered = err.without_snippet().to_string();
            if rendered.contains("recursion limit exceeded") {
                return YamlError {
                    line,
                    column,
                    message: format!("exceeds the nesting budget of {MAX_DEPTH} levels"),
                    budget: true,
                };
            }
            let message = rendered.lines().next().unwrap_or("invalid YAML").trim();
            // The location is carried separately; drop the parser's own suffix,
            // and its advice about options of ours that users cannot set.
            let message = match message.rfind(" at line ") {
                Some(cut) => &message[..cut],
                None => message,
            }
            .replace(", set DuplicateKeyPolicy in Options if acceptable", "")
            .to_string();
            YamlError {
                line,
                column,
                message,
                budget: false,
            }
        })?;
    Ok(docs
        .into_iter()
        .filter(|doc| !matches!(doc.value, Value::Null))
        .collect())
}

/// A budget breach in words that name the budget.
fn breach_message(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    match breach {
        B::Depth { .. } => format!("exceeds the nesting budget of {MAX_DEPTH} levels"),
        B::Documents { .. } => format!("exceeds the budget of {MAX_DOCUMENTS} documents in one file"),
        B::Events { .. } => format!("exceeds the budget of {MAX_EVENTS} YAML events in one file"),
        B::Nodes { .. } => format!("exceeds the budget of {MAX_NODES} YAML nodes in one file"),
        B::ScalarBytes { .. } => {
            format!("exceeds the budget of {MAX_FILE_BYTES} bytes of scalar text in one file")
        }
        B::Aliases { .. }
        | B::Anchors { .. }
        | B::AliasAnchorRatio { .. }
        | B::MergeKeys { .. }
        | B::RecordedAnchorEvents { .. }
        | B::RecordedAnchorBytes { .. } => {
            "exceeds the alias budget: its anchors and aliases expand far beyond its size (a YAML alias bomb)".to_string()
        }
        B::InputBytes { .. } => format!("exceeds the file-size budget of {MAX_FILE_BYTES} bytes"),
        other => format!(
            "exceeds a loader budget ({})",
            format!("{other:?}")
                .split([' ', '{'])
                .next()
                .unwrap_or("limit")
        ),
    }
}
