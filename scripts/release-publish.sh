#!/usr/bin/env bash
# The release job's publishing (.github/workflows/release.yml):
#
#   scripts/release-publish.sh TAG DIST
#
# with RELEASE_TARGETS (every target the workflow builds, space-separated),
# GITHUB_SHA (the tag's commit), GH_TOKEN and GH_REPO for gh, and GH (the gh
# program; `gh` by default). DIST holds the archives of the builds that
# succeeded.
#
# 1. When TAG's release exists already (the run's failed jobs were re-run),
#    the archives it has and DIST lacks are downloaded into DIST, so that
#    SHA256SUMS lists every archive the release keeps.
# 2. scripts/release-assemble.sh checks DIST, writes SHA256SUMS and the
#    notes' first part (naming any target that was not built).
# 3. Creates TAG's release (those notes, then GitHub's generated ones; a
#    prerelease for a tag with a `-`, such as v1.2.0-rc.1), or updates the
#    existing one (files replaced, that first part of the notes rewritten).
# 4. Unless TAG is a prerelease: moves the major tag (v1) to GITHUB_SHA and
#    gives its release exactly DIST's files: a binary of an older version
#    for a target this one lacks is deleted (the new SHA256SUMS does not
#    list it; the action then builds that target from source).
set -euo pipefail
tag="${1:?usage: release-publish.sh TAG DIST}"
dist="${2:?usage: release-publish.sh TAG DIST}"
gh="${GH:-gh}"
: "${GITHUB_SHA:?GITHUB_SHA is not set}"
read -r -a targets <<<"${RELEASE_TARGETS:?RELEASE_TARGETS is not set}"
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v "$gh" >/dev/null || { echo "release-publish: $gh is not on PATH" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$dist"
exists=""
if "$gh" release view "$tag" >/dev/null 2>&1; then
  exists=1
  echo "release-publish: $tag has a release already: keeping the archives it has" >&2
  "$gh" release download "$tag" --pattern 'conformance-*.tar.gz' --dir "$dist" --skip-existing
fi
bash "$root/scripts/release-assemble.sh" "$dist" "$work/notes.md" "${targets[@]}"
files=("$dist"/conformance-*.tar.gz "$dist/SHA256SUMS")

prerelease=""
case "$tag" in *-*) prerelease=1 ;; esac

if [ -z "$exists" ]; then
  flags=(--title "$tag" --notes-file "$work/notes.md" --generate-notes --verify-tag)
  [ -z "$prerelease" ] || flags+=(--prerelease)
  "$gh" release create "$tag" "${files[@]}" "${flags[@]}"
else
  "$gh" release upload "$tag" "${files[@]}" --clobber
  # The notes: the assembly's part replaced, the rest (generated) kept.
  "$gh" release view "$tag" --json body --jq .body >"$work/old.md"
  {
    cat "$work/notes.md"
    awk '/^<!-- release-assemble -->$/ { skip = 1 } !skip { print } /^<!-- \/release-assemble -->$/ { skip = 0 }' \
      "$work/old.md"
  } >"$work/body.md"
  "$gh" release edit "$tag" --notes-file "$work/body.md"
fi

[ -z "$prerelease" ] || exit 0
major="${tag%%.*}"
git tag -f "$major" "$GITHUB_SHA"
git push -f origin "refs/tags/$major"
{
  echo "The newest $major.x release, $tag: the binaries the action at @$major installs."
  echo
  cat "$work/notes.md"
} >"$work/major.md"
if "$gh" release view "$major" >/dev/null 2>&1; then
  # Exactly this version's files; stale ones go first, so that an action
  # installing meanwhile finds no binary (and builds) rather than one
  # SHA256SUMS does not list.
  "$gh" release view "$major" --json assets --jq '.assets[].name' >"$work/assets"
  while IFS= read -r asset; do
    if [ -n "$asset" ] && [ ! -e "$dist/$asset" ]; then
      "$gh" release delete-asset "$major" "$asset" --yes
    fi
  done <"$work/assets"
  "$gh" release upload "$major" "${files[@]}" --clobber
  "$gh" release edit "$major" --title "$major (latest: $tag)" --notes-file "$work/major.md"
else
  # Not "Latest": that stays the version's own release.
  "$gh" release create "$major" "${files[@]}" --title "$major (latest: $tag)" \
    --notes-file "$work/major.md" --latest=false
fi
