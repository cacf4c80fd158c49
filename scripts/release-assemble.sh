#!/usr/bin/env bash
# The release job's assembly (.github/workflows/release.yml), also what
# scripts/release-dry-run.sh runs:
#
#   scripts/release-assemble.sh DIST NOTES TARGET...
#
# DIST holds what the build jobs that succeeded uploaded (one
# conformance-TARGET.tar.gz each); TARGET... are every target the workflow
# builds. Fails when DIST holds no archive (no build succeeded: nothing to
# publish), an archive of a target not listed, or one without its
# conformance-TARGET/conformance. Then writes DIST/SHA256SUMS
# (scripts/checksums.sh) and NOTES, the first part of the release notes:
# what was built and, for each target whose build failed, that the action
# on such a runner builds from source.
set -euo pipefail
dist="${1:?usage: release-assemble.sh DIST NOTES TARGET...}"
notes="${2:?usage: release-assemble.sh DIST NOTES TARGET...}"
shift 2
[ $# -gt 0 ] || { echo "release-assemble: no targets given" >&2; exit 1; }
root="$(cd "$(dirname "$0")/.." && pwd)"

mkdir -p "$dist"
shopt -s nullglob
built=()
missing=()
for archive in "$dist"/conformance-*.tar.gz; do
  name="${archive##*/}"
  t="${name#conformance-}"
  t="${t%.tar.gz}"
  known=""
  for want in "$@"; do [ "$want" = "$t" ] && known=1; done
  [ -n "$known" ] || { echo "release-assemble: $name is of no target this release builds ($*)" >&2; exit 1; }
  tar -tzf "$archive" | grep -x "conformance-$t/conformance" >/dev/null ||
    { echo "release-assemble: $name does not hold conformance-$t/conformance" >&2; exit 1; }
done
for t in "$@"; do
  if [ -f "$dist/conformance-$t.tar.gz" ]; then built+=("$t"); else missing+=("$t"); fi
done
if [ ${#built[@]} -eq 0 ]; then
  echo "release-assemble: no build succeeded (no conformance-*.tar.gz in $dist): nothing to publish" >&2
  exit 1
fi
bash "$root/scripts/checksums.sh" "$dist" >&2

join() {
  local out
  out=$(printf ', %s' "$@")
  echo "${out#, }"
}
{
  echo "<!-- release-assemble -->"
  echo "Binaries: $(join "${built[@]}") (SHA-256 in \`SHA256SUMS\`)."
  if [ ${#missing[@]} -gt 0 ]; then
    echo
    echo "**Not built for this release: $(join "${missing[@]}")** (the build job failed)."
    echo "On a runner of that platform the action finds no binary and builds conformance"
    echo "from source instead (its log says so; that needs Rust on the runner). Re-running"
    echo "the failed jobs of the release workflow adds the missing binaries to this release."
  fi
  echo "<!-- /release-assemble -->"
} >"$notes"
if [ ${#missing[@]} -gt 0 ]; then
  echo "release-assemble: not built: $(join "${missing[@]}") (named in the release notes)" >&2
fi
echo "release-assemble: built: $(join "${built[@]}")" >&2
