#!/usr/bin/env bash
# Packages a release binary as the action's installer expects it:
#
#   scripts/package.sh TARGET BINARY OUTDIR
#
# writes OUTDIR/conformance-TARGET.tar.gz holding conformance-TARGET/
# (the binary, README.md, BENCHMARKS.md and docs/, which the README links
# to) and prints the archive's path.
# The release workflow runs it once per target; scripts/checksums.sh then
# writes SHA256SUMS over every archive.
set -euo pipefail
target="${1:?usage: package.sh TARGET BINARY OUTDIR}"
binary="${2:?usage: package.sh TARGET BINARY OUTDIR}"
outdir="${3:?usage: package.sh TARGET BINARY OUTDIR}"
root="$(cd "$(dirname "$0")/.." && pwd)"
[ -x "$binary" ] || { echo "package.sh: $binary is not an executable" >&2; exit 1; }
mkdir -p "$outdir"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
dir="$stage/conformance-$target"
mkdir -p "$dir"
install -m 0755 "$binary" "$dir/conformance"
cp "$root/README.md" "$root/BENCHMARKS.md" "$dir/"
cp -R "$root/docs" "$dir/docs"
# Reproducible: fixed order, owner and times.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01 00:00:00 UTC' \
  -C "$stage" -czf "$outdir/conformance-$target.tar.gz" "conformance-$target" 2>/dev/null ||
  tar -C "$stage" -czf "$outdir/conformance-$target.tar.gz" "conformance-$target"
echo "$outdir/conformance-$target.tar.gz"
