//! kustomize's name hash of a generated ConfigMap or Secret (api/hasher),
//! over Go's JSON of it, and base64 as kustomize writes Secret data.

use sha2::{Digest, Sha256};

use crate::render::Error;
use crate::yaml::Node;

/// kustomize's ConfigMap/Secret hash (api/hasher): sha256 of Go's JSON of
/// {kind, name: "" (kustomize's lookup never finds it), data, binaryData |
/// type, stringData}, first 10 hex digits, with 0→g 1→h 3→k a→m e→t.
pub(super) fn name_hash(node: &Node) -> Result<String, Error> {
    let kind = node.str_at(&["kind"]).unwrap_or_default();
    let field = |key: &str| -> serde_json::Value {
        match node.get(key) {
            Some(n) if n.is_map() => n.to_json(),
            _ => serde_json::Value::String(String::new()),
        }
    };
    let mut map = serde_json::Map::new();
    map.insert("kind".into(), serde_json::Value::String(kind.clone()));
    map.insert("name".into(), serde_json::Value::String(String::new()));
    map.insert("data".into(), field("data"));
    if kind == "ConfigMap" {
        if node.get("binaryData").is_some_and(Node::is_map) {
            map.insert("binaryData".into(), field("binaryData"));
        }
    } else {
        map.insert(
            "type".into(),
            serde_json::Value::String(node.str_at(&["type"]).unwrap_or_default()),
        );
        if node.get("stringData").is_some_and(Node::is_map) {
            map.insert("stringData".into(), field("stringData"));
        }
    }
    let json = go_json(&serde_json::Value::Object(map));
    let digest = Sha256::digest(json.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(hex[..10]
        .chars()
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            other => other,
        })
        .collect())
}

/// JSON as Go's encoding/json writes it: sorted keys, no spaces, `<`, `>`,
/// `&`, U+2028 and U+2029 escaped.
fn go_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", go_string(k), go_json(&m[*k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        serde_json::Value::Array(a) => {
            format!("[{}]", a.iter().map(go_json).collect::<Vec<_>>().join(","))
        }
        serde_json::Value::String(s) => go_string(s),
        other => other.to_string(),
    }
}

fn go_string(s: &str) -> String {
    let json = serde_json::Value::String(s.to_string()).to_string();
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub(super) fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// kustomize wraps long base64 values at 70 characters, each line ending in
/// a newline (the last one too).
pub(super) fn wrap_base64(encoded: &str) -> String {
    if encoded.len() < 70 {
        return encoded.to_string();
    }
    let mut out = String::new();
    for chunk in encoded.as_bytes().chunks(70) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(yaml: &str) -> String {
        name_hash(&crate::yaml::parse_documents(yaml).unwrap()[0]).unwrap()
    }

    /// kustomize's api/hasher/hasher_test.go vectors.
    #[test]
    fn name_hash_matches_kustomize_vectors() {
        assert_eq!(hash("kind: ConfigMap\n"), "6ct58987ht");
        assert_eq!(hash("kind: ConfigMap\ndata:\n  one: \"\"\n"), "9g67k2htb6");
        assert_eq!(
            hash("kind: ConfigMap\ndata:\n  two: 2\n  one: \"\"\n  three: 3\n"),
            "7757f9kkct"
        );
        assert_eq!(
            hash("kind: ConfigMap\nbinaryData:\n  one: \"\"\n"),
            "6mtk2m274t"
        );
        assert_eq!(
            hash("kind: ConfigMap\nbinaryData:\n  two: 2\n  one: \"\"\n  three: 3\n"),
            "9th7kc28dg"
        );
        assert_eq!(
            hash("kind: ConfigMap\ndata:\n  one: \"\"\nbinaryData:\n  two: \"\"\n"),
            "698h7c7t9m"
        );
        assert_eq!(hash("kind: Secret\ntype: my-type\n"), "5gmgkf8578");
        assert_eq!(
            hash("kind: Secret\ntype: my-type\ndata:\n  one: \"\"\n"),
            "74bd68bm66"
        );
        assert_eq!(
            hash("kind: Secret\ntype: my-type\ndata:\n  two: 2\n  one: \"\"\n  three: 3\n"),
            "4gf75c7476"
        );
        assert_eq!(
            hash("kind: Secret\ntype: my-type\ndata:\n  one: \"\"\nstringData:\n  two: 2\n"),
            "c4h4264gdb"
        );
    }

    #[test]
    fn base64_wraps_like_kustomize() {
        assert_eq!(base64(b"hello"), "aGVsbG8=");
        let long = base64(&[7u8; 60]);
        assert_eq!(long.len(), 80);
        let wrapped = wrap_base64(&long);
        assert_eq!(wrapped.lines().next().unwrap().len(), 70);
        assert!(wrapped.ends_with('\n'));
    }
}
