//! Flux's `spec.postBuild` substitution, applied to every tier that has it,
//! and the substitution audit of every tier (with or without it).
//!
//! As kustomize-controller does: the variables are the keys of the
//! `substituteFrom` ConfigMaps and Secrets (in the Kustomization's namespace,
//! in list order, later entries winning) overridden by the inline
//! `substitute`; every key must be a valid name; values lose their newlines.
//! The pass is skipped when no variable is defined, unless
//! `substituteStrategy: Always`. Objects labelled or annotated
//! `kustomize.toolkit.fluxcd.io/substitute: disabled` are left alone. Every
//! string of the object, keys included, is substituted; a value that becomes
//! empty turns into null, as Flux's YAML round trip does.
//!
//! The ConfigMaps and Secrets are the ones the repository renders for that
//! cluster. A SOPS-encrypted Secret defines its keys with unknown values
//! (expressions using them are left as written, and no value is ever
//! printed). A source the repository does not render at all (created outside
//! Flux) makes the variable set incomplete: then nothing is claimed about
//! undefined variables.

pub mod envsubst;
pub mod injected;
mod retype;

use std::collections::BTreeMap;

use envsubst::{EvalError, Lookup, Op};

pub use crate::model::{Audit, Hazard, HazardKind};
use crate::model::{Cluster, Object, ObjectId, Span, Tier, TierState};
use crate::yaml::{Node, Value};

/// The label or annotation that turns substitution off for one object.
pub(crate) const DISABLE_KEY: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// Applies postBuild substitution to every tier of the cluster that has it
/// and stores each tier's audit in `tier.substitution`.
/// `injections`: variables added at admission ([`injected`]); a
/// Kustomization one reaches is substituted as though it had a postBuild
/// (the webhook adds one).
pub fn apply(cluster: &mut Cluster, injections: &[injected::Injection]) {
    let sources = Sources::of(cluster);
    for tier in cluster.tiers.values_mut() {
        let reaching: Vec<&injected::Injection> = injections
            .iter()
            .filter(|i| i.reaches(&tier.id.namespace, &tier.id.name))
            .collect();
        let post_build = tier
            .post_build
            .clone()
            .or_else(|| (!reaching.is_empty()).then(|| Node::new(Value::Map(Vec::new()))));
        tier.substitution = match post_build {
            Some(post_build) => substitute_tier(tier, &post_build, &sources, &reaching),
            None => Audit {
                unaudited: unaudited_refs(tier),
                ..Audit::default()
            },
        };
        let child_lines = child_patch_lines(tier);
        tier.substitution.unaudited.retain(|(id, at, _)| {
            !at.as_ref()
                .is_some_and(|at| child_lines.contains(&(id.clone(), at.line)))
        });
    }
}

/// Lines of the `spec.patches` of the Flux Kustomizations a tier renders.
/// kustomize-controller applies a Kustomization's `spec.patches` while it
/// builds that Kustomization's path, before that Kustomization's own
/// postBuild (`kustomize_generator.go`, then `postBuild` in `build`): a
/// `${VAR}` in them is meant for the child's substitution, and when this
/// tier runs no pass it is the child's audit that judges it, not ours.
fn child_patch_lines(tier: &Tier) -> std::collections::BTreeSet<(ObjectId, u32)> {
    let mut out = std::collections::BTreeSet::new();
    for o in tier
        .objects()
        .iter()
        .filter(|o| o.id.group == "kustomize.toolkit.fluxcd.io" && o.id.kind == "Kustomization")
    {
        if let Some(patches) = o.body.path(&["spec", "patches"]) {
            collect_lines(patches, &mut |line| {
                out.insert((o.id.clone(), line));
            });
        }
    }
    out
}

fn collect_lines(node: &Node, f: &mut dyn FnMut(u32)) {
    f(node.line);
    match &node.value {
        Value::String(s) => {
            // A block scalar's lines follow its first.
            for k in 0..s.lines().count() as u32 {
                f(node.line + k);
                f(node.line + k + 1);
            }
        }
        Value::Seq(items) => items.iter().for_each(|i| collect_lines(i, f)),
        Value::Map(entries) => entries.iter().for_each(|(_, v)| collect_lines(v, f)),
        _ => {}
    }
}

/// A best-effort substitution of one object during discovery (the sources
/// seen so far; anything undefined is left as written), so that a child
/// Kustomization whose name or path uses a variable is found where Flux
/// finds it.
pub fn substitute_early(
    body: &Node,
    tier_namespace: &str,
    post_build: &Node,
    sources: &Sources,
) -> Node {
    let (vars, complete) = variables(tier_namespace, post_build, sources, &[]);
    let mut out = body.clone();
    // The pass runs as it does for the tier's other objects
    // ([`substitute_tier`]): a name no source defines, once every source is
    // known, is unset, so `${VAR:=default}` takes its default.
    let always = post_build.str_at(&["substituteStrategy"]).as_deref() == Some("Always");
    let pass_ran = !vars.is_empty() || always || !complete;
    if !pass_ran || substitution_disabled(body) {
        return out;
    }
    let lookup = |name: &str| match vars.get(name) {
        Some(v) => v.clone(),
        None if complete => Lookup::Missing,
        None => Lookup::Unknown,
    };
    rewrite(&mut out, &mut |text: &str, _| {
        if !text.contains('$') {
            return None;
        }
        envsubst::parse(text).ok()?.eval(text, &lookup, false).ok()
    });
    out
}

/// ConfigMaps and Secrets rendered in a cluster, by (kind, namespace, name).
/// Hashed: a platform renders hundreds of thousands of them, and nothing
/// iterates them in order.
#[derive(Debug, Default)]
pub struct Sources(std::collections::HashMap<(String, String, String), Vec<(String, Lookup)>>);

impl Sources {
    /// Collects the ConfigMaps and Secrets every tier of a cluster renders.
    pub fn of(cluster: &Cluster) -> Sources {
        let mut sources = Sources::default();
        for tier in cluster.tiers.values() {
            for object in tier.objects() {
                sources.add(object);
            }
        }
        sources
    }

    /// Records an object if it is a ConfigMap or Secret (first one wins).
    pub fn add(&mut self, object: &Object) {
        let id = &object.id;
        if !id.group.is_empty() || !(id.kind == "ConfigMap" || id.kind == "Secret") {
            return;
        }
        let key = (
            id.kind.clone(),
            id.namespace.clone().unwrap_or_else(|| "default".into()),
            id.name.clone(),
        );
        if self.0.contains_key(&key) {
            return;
        }
        let encrypted = object
            .body
            .get("sops")
            .is_some_and(|s| s.get("mac").is_some());
        let mut vars = Vec::new();
        // ConfigMap: .data only (binaryData is ignored). Secret: .data
        // (base64) and .stringData.
        let fields: &[&str] = if id.kind == "ConfigMap" {
            &["data"]
        } else {
            &["data", "stringData"]
        };
        for field in fields {
            for (k, v) in object.body.get(field).map(Node::as_map).unwrap_or_default() {
                let value = if encrypted {
                    Lookup::Unknown
                } else {
                    let raw = v.as_scalar_string().unwrap_or_default();
                    let text = if id.kind == "Secret" && *field == "data" {
                        match decode_base64(&raw) {
                            Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                            None => {
                                vars.push((k.clone(), Lookup::Unknown));
                                continue;
                            }
                        }
                    } else {
                        raw
                    };
                    Lookup::Value(text.replace('\n', ""))
                };
                vars.push((k.clone(), value));
            }
        }
        self.0.insert(key, vars);
    }

    fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<&[(String, Lookup)]> {
        self.0
            .get(&(kind.to_string(), namespace.to_string(), name.to_string()))
            .map(Vec::as_slice)
    }
}

/// The merged variables of a postBuild and whether every non-optional
/// source was found.
fn variables(
    namespace: &str,
    post_build: &Node,
    sources: &Sources,
    injections: &[&injected::Injection],
) -> (BTreeMap<String, Lookup>, bool) {
    let mut vars = BTreeMap::new();
    let mut complete = true;
    for entry in post_build
        .get("substituteFrom")
        .map(Node::as_seq)
        .unwrap_or_default()
    {
        let kind = entry.str_at(&["kind"]).unwrap_or_default();
        let name = entry.str_at(&["name"]).unwrap_or_default();
        let optional = entry
            .get("optional")
            .and_then(Node::as_bool)
            .unwrap_or(false);
        if kind != "ConfigMap" && kind != "Secret" {
            continue; // Flux skips other kinds silently
        }
        match sources.get(&kind, namespace, &name) {
            Some(found) => {
                for (k, v) in found {
                    vars.insert(k.clone(), v.clone());
                }
            }
            // A missing optional source counts as empty. A missing required
            // one fails Flux's build, unless it exists in the cluster already
            // (created outside Flux): we cannot know its keys.
            None if optional => {}
            None => complete = false,
        }
    }
    // A policy appending to substituteFrom: after the Kustomization's own
    // sources, before its inline substitute.
    complete &= merge_injected(&mut vars, sources, injections, false);
    for (k, v) in post_build
        .get("substitute")
        .map(Node::as_map)
        .unwrap_or_default()
    {
        vars.insert(
            k.clone(),
            Lookup::Value(v.as_scalar_string().unwrap_or_default().replace('\n', "")),
        );
    }
    // A webhook adding to postBuild.substitute (JSON-patch `add` replaces a
    // key the Kustomization sets).
    complete &= merge_injected(&mut vars, sources, injections, true);
    (vars, complete)
}

/// Merges the keys of the injections that add to `substituteFrom`
/// (`wins` false) or to `substitute` (`wins` true); false when a source is
/// not rendered (created outside the tiers: its keys cannot be known).
fn merge_injected(
    vars: &mut BTreeMap<String, Lookup>,
    sources: &Sources,
    injections: &[&injected::Injection],
    wins: bool,
) -> bool {
    let mut complete = true;
    for injection in injections.iter().filter(|i| i.wins == wins) {
        for s in &injection.sources {
            match sources.get(&s.kind, &s.namespace, &s.name) {
                Some(found) => {
                    for (k, v) in found {
                        vars.insert(k.clone(), v.clone());
                    }
                }
                None => complete = false,
            }
        }
    }
    complete
}

fn substitute_tier(
    tier: &mut Tier,
    post_build: &Node,
    sources: &Sources,
    injections: &[&injected::Injection],
) -> Audit {
    let (vars, complete) = variables(&tier.id.namespace, post_build, sources, injections);
    let always = post_build.str_at(&["substituteStrategy"]).as_deref() == Some("Always");
    let pass_ran = !vars.is_empty() || always || !complete;
    let mut audit = Audit {
        post_build: true,
        pass_ran,
        complete,
        injected: injections.iter().map(|i| i.describe()).collect(),
        ..Audit::default()
    };
    for name in vars.keys().filter(|n| !envsubst::is_valid_name(n)) {
        audit.hazards.push(Hazard {
            object: None,
            at: Some(tier.defined_at.clone()),
            kind: HazardKind::InvalidName {
                name: name.clone(),
                source: source_of_var(post_build, name),
            },
        });
    }
    let TierState::Rendered(objects) = &mut tier.state else {
        return audit;
    };
    let lookup = |name: &str| -> Lookup {
        match vars.get(name) {
            Some(v) => v.clone(),
            None if complete => Lookup::Missing,
            None => Lookup::Unknown,
        }
    };
    for object in objects.iter_mut() {
        if substitution_disabled(&object.body) {
            continue;
        }
        let file = object.source.as_ref().map(|s| s.file.clone());
        let id = object.id.clone();
        let mut visit = |text: &str, line: u32| -> Option<String> {
            if !text.contains("${") && !text.contains("$$") {
                return None;
            }
            let at = file.as_ref().map(|f| Span::new(f.clone(), line));
            if !pass_ran {
                // No variable defined: Flux skips the pass and the tokens
                // ship literally (often meant, as in Grafana dashboards).
                list_unaudited(text, &id, at, &mut audit);
                return None;
            }
            substitute_text(text, &id, at, &lookup, &mut audit)
        };
        rewrite(&mut object.body, &mut visit);
        if let Some(new_id) = ObjectId::of(&object.body) {
            object.id = new_id;
        }
    }
    audit.hazards.dedup();
    audit
}

/// The variables of a string in a tier whose pass does not run: left as
/// written, and listed as unaudited.
fn list_unaudited(text: &str, id: &ObjectId, at: Option<Span>, audit: &mut Audit) {
    if let Ok(t) = envsubst::parse(text) {
        for var in t.vars() {
            let entry = (id.clone(), at.clone(), var.name.clone());
            if !audit.unaudited.contains(&entry) {
                audit.unaudited.push(entry);
            }
        }
    }
}

/// One string of an object through Flux's envsubst: its hazards and
/// defined variables go to the audit; the substituted text, or `None` to
/// leave it as written.
fn substitute_text(
    text: &str,
    id: &ObjectId,
    at: Option<Span>,
    lookup: &dyn Fn(&str) -> Lookup,
    audit: &mut Audit,
) -> Option<String> {
    let template = match envsubst::parse(text) {
        Ok(t) => t,
        Err(err) => {
            audit.hazards.push(Hazard {
                object: Some(id.clone()),
                at,
                kind: HazardKind::Unparsable {
                    expression: excerpt(text, err.offset),
                    message: err.message.to_string(),
                },
            });
            return None;
        }
    };
    audit_vars(&template, id, &at, lookup, audit);
    // Non-strict evaluation for the object itself: strict failures
    // are hazards above, and the object keeps its best-known shape.
    match template.eval(text, lookup, false) {
        Ok(out) => {
            if let Some(message) = retype::unparsable(text, &out) {
                audit.hazards.push(Hazard {
                    object: Some(id.clone()),
                    at,
                    kind: HazardKind::InvalidYaml {
                        written: text.to_string(),
                        message,
                    },
                });
            }
            Some(out)
        }
        Err(EvalError::BadSubstring { name, .. }) => {
            audit.hazards.push(Hazard {
                object: Some(id.clone()),
                at,
                kind: HazardKind::BadSubstring { name },
            });
            None
        }
        Err(EvalError::NotSet { .. }) => None,
    }
}

/// What each variable of a parsed string says: defined (or unknown), a
/// hazard when no source defines it and it has no default, a hazard for
/// an operator whose meaning misleads (`:?`, `:+`).
fn audit_vars(
    template: &envsubst::Template,
    id: &ObjectId,
    at: &Option<Span>,
    lookup: &dyn Fn(&str) -> Lookup,
    audit: &mut Audit,
) {
    for var in template.vars() {
        match lookup(&var.name) {
            Lookup::Value(_) | Lookup::Unknown => {
                audit.defined.insert(var.name.clone());
            }
            Lookup::Missing if !var.op.is_default() => audit.hazards.push(Hazard {
                object: Some(id.clone()),
                at: at.clone(),
                kind: HazardKind::Undefined {
                    name: var.name.clone(),
                },
            }),
            Lookup::Missing => {}
        }
        if let Op::Default(op @ (":?" | ":+"), _) = &var.op {
            audit.hazards.push(Hazard {
                object: Some(id.clone()),
                at: at.clone(),
                kind: HazardKind::Misleading {
                    name: var.name.clone(),
                    op,
                },
            });
        }
    }
}

/// `${…}` references in the objects of a tier without postBuild (escaped
/// `$${…}` ones are literal either way and not reported).
fn unaudited_refs(tier: &Tier) -> Vec<(ObjectId, Option<Span>, String)> {
    let mut out = Vec::new();
    for object in tier
        .objects()
        .iter()
        .filter(|o| !substitution_disabled(&o.body))
    {
        let file = object.source.as_ref().map(|s| s.file.clone());
        let mut visit = |text: &str, line: u32| -> Option<String> {
            if text.contains("${")
                && let Ok(t) = envsubst::parse(text)
            {
                for var in t.vars() {
                    let at = file.as_ref().map(|f| Span::new(f.clone(), line));
                    let entry = (object.id.clone(), at, var.name.clone());
                    if !out.contains(&entry) {
                        out.push(entry);
                    }
                }
            }
            None
        };
        let mut copy = object.body.clone();
        rewrite(&mut copy, &mut visit);
    }
    out
}

fn substitution_disabled(body: &Node) -> bool {
    ["labels", "annotations"].iter().any(|field| {
        body.path(&["metadata", field])
            .and_then(|m| m.get(DISABLE_KEY))
            .and_then(Node::as_scalar_string)
            .as_deref()
            == Some("disabled")
    })
}

/// Rewrites every string (mapping keys included) through `f`, which returns
/// the replacement when the text changes. A changed value takes the type
/// Flux's YAML round trip gives it ([`retype`]).
fn rewrite(node: &mut Node, f: &mut dyn FnMut(&str, u32) -> Option<String>) {
    let line = node.line;
    match &mut node.value {
        Value::String(s) => {
            if let Some(new) = f(s, line) {
                node.value = retype::retype(s, new);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|i| rewrite(i, f)),
        Value::Map(entries) => {
            for (key, value) in entries.iter_mut() {
                if let Some(new) = f(key, value.line) {
                    *key = new;
                }
                rewrite(value, f);
            }
        }
        _ => {}
    }
}

fn excerpt(text: &str, offset: usize) -> String {
    let rest = text.get(offset..).unwrap_or(text);
    let end = rest.char_indices().nth(60).map_or(rest.len(), |(i, _)| i);
    let cut = rest[..end].find('}').map_or(end, |i| i + 1);
    rest[..cut].to_string()
}

/// Which source defines a variable, for messages.
fn source_of_var(post_build: &Node, name: &str) -> String {
    if post_build.path(&["substitute", name]).is_some() {
        return "spec.postBuild.substitute".into();
    }
    "a substituteFrom ConfigMap or Secret".into()
}

/// Standard base64 (with or without padding); `None` when invalid.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buf = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        buf = (buf << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
            buf &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes() {
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_base64("aGVsbG8").unwrap(), b"hello");
        assert!(decode_base64("!!").is_none());
    }
}
