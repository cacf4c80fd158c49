//! Version strings and `KEY=value` pins, read the same way wherever the
//! repository states a version (conformance.yaml, `versions.env`, Talos and
//! k3s configuration). A leaf: it depends on nothing but the repository
//! index.

use crate::repo::RepoIndex;

/// `1.36`, `v1.36.4+k3s1`, `1.36.4` → (1, 36).
pub fn minor_version(text: &str) -> Option<(u32, u32)> {
    let t = text.trim().trim_start_matches('v');
    let mut parts = t.split(['.', '+', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// `KEY=value` (optionally `export KEY=value`, quoted) with its line.
pub fn read_env(index: &RepoIndex, file: &str, key: &str) -> Option<(String, u32)> {
    let text = index.read_text(file).ok()?;
    text.lines().enumerate().find_map(|(i, line)| {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line);
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| {
            (
                v.trim().trim_matches(|c| c == '"' || c == '\'').to_string(),
                i as u32 + 1,
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minor_versions() {
        assert_eq!(minor_version("v1.36.4+k3s1"), Some((1, 36)));
        assert_eq!(minor_version("1.31"), Some((1, 31)));
        assert_eq!(minor_version("latest"), None);
    }
}
