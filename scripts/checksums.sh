#!/usr/bin/env bash
# Writes DIR/SHA256SUMS: the SHA-256 of every release archive in DIR, in the
# `sha256sum` format the action's installer checks (`HASH  NAME`).
#
#   scripts/checksums.sh DIR
set -euo pipefail
dir="${1:?usage: checksums.sh DIR}"
cd "$dir"
shopt -s nullglob
archives=(conformance-*.tar.gz)
[ ${#archives[@]} -gt 0 ] || { echo "checksums.sh: no conformance-*.tar.gz in $dir" >&2; exit 1; }
if command -v sha256sum >/dev/null; then
  sha256sum "${archives[@]}" >SHA256SUMS
else
  shasum -a 256 "${archives[@]}" >SHA256SUMS
fi
cat SHA256SUMS
