#!/usr/bin/env bash
# Installs the `conformance` binary the GitHub Action runs, for the action's
# own code:
#
#   action/install.sh resolve   prints the commit of the action's code (the
#                               cache key) as `sha=<commit>`; empty for a
#                               local action that is no clean git checkout
#                               (then nothing is cached)
#   action/install.sh install   puts `conformance` in $INSTALL_DIR, the first
#                               of:
#     1. the binary already there (the cache restored it);
#     2. the release binary for this runner, its SHA-256 checked against the
#        release's SHA256SUMS: the release of the action's ref when that is a
#        version tag (v1, v1.2.3); else (a branch, a commit, a local action)
#        the release of a version tag that points at the action's commit
#        (`git ls-remote --tags`, annotated tags by their peeled `^{}` line);
#     3. a build from source with cargo: of the resolved commit
#        (`cargo install --git`), or for a local action of its checkout
#        (`cargo install --path $GITHUB_ACTION_PATH/conformance`).
#   Which one, and why, is said on stderr.
#
# Environment: ACTION_REPOSITORY (owner/name) and ACTION_REF (tag, branch or
# commit), both empty for a local action (`uses: ./`): its code is then the
# checkout at GITHUB_ACTION_PATH, and its releases are those of
# GITHUB_REPOSITORY. ACTION_SHA (install: the commit `resolve` printed),
# RUNNER_OS (Linux, macOS), RUNNER_ARCH (X64, ARM64), INSTALL_DIR, and
# GITHUB_SERVER_URL (https://github.com by default).
#
# A download that fails is not an error (the source build follows); a
# checksum that does not match is, and nothing is installed.
set -euo pipefail

server="${GITHUB_SERVER_URL:-https://github.com}"

die() {
  echo "conformance action: $*" >&2
  exit 1
}

note() {
  echo "conformance action: $*" >&2
}

# One scratch directory, removed however the script ends.
scratch=""
trap 'if [ -n "$scratch" ]; then rm -rf "$scratch"; fi' EXIT

# A local action (`uses: ./`): GitHub leaves both empty.
local_action=""
if [ -z "${ACTION_REPOSITORY:-}" ] && [ -z "${ACTION_REF:-}" ]; then
  local_action="${GITHUB_ACTION_PATH:?a local action (no ACTION_REPOSITORY nor ACTION_REF) needs GITHUB_ACTION_PATH}"
  repo="${GITHUB_REPOSITORY:-}"
  ref=""
else
  repo="${ACTION_REPOSITORY:?ACTION_REPOSITORY is not set (ACTION_REF is $ACTION_REF)}"
  ref="${ACTION_REF:?ACTION_REF is not set (ACTION_REPOSITORY is $repo)}"
fi

# The release target of this runner.
target() {
  case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
    Linux/X64) echo x86_64-unknown-linux-musl ;;
    Linux/ARM64) echo aarch64-unknown-linux-musl ;;
    macOS/X64) echo x86_64-apple-darwin ;;
    macOS/ARM64) echo aarch64-apple-darwin ;;
    *) return 1 ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    die "neither sha256sum nor shasum is on PATH: cannot check the release binary's SHA-256"
  fi
}

resolve_local() {
  if ! command -v git >/dev/null; then
    note "no git on PATH: the local action at $local_action has no commit to key the cache on (nothing cached)"
    echo "sha="
    return
  fi
  if [ "$(git -C "$local_action" rev-parse --is-inside-work-tree 2>/dev/null)" != "true" ]; then
    note "the local action at $local_action is not a git work tree git can read: no commit to key the cache on (nothing cached)"
    echo "sha="
    return
  fi
  if [ -n "$(git -C "$local_action" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    note "the local action at $local_action has uncommitted changes: nothing cached, built from the checkout"
    echo "sha="
    return
  fi
  echo "sha=$(git -C "$local_action" rev-parse HEAD)"
}

resolve() {
  if [ -n "$local_action" ]; then
    resolve_local
    return
  fi
  if [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
    echo "sha=$ref"
    return
  fi
  # An annotated tag's commit is the peeled `^{}` line; a lightweight tag or
  # a branch has only its own.
  local lines sha
  lines=$(git ls-remote "$server/$repo" "refs/tags/$ref^{}" "refs/tags/$ref" "refs/heads/$ref") ||
    die "cannot list $server/$repo to resolve $ref"
  sha=$(printf '%s\n' "$lines" | awk '$2 ~ /\^\{\}$/ {print $1; exit}')
  [ -n "$sha" ] || sha=$(printf '%s\n' "$lines" | awk 'NF {print $1; exit}')
  [ -n "$sha" ] || die "$server/$repo has no tag or branch $ref"
  echo "sha=$sha"
}

# The release tags to download from, best first, one a line: the ref itself
# when it is a version tag, else the version tags that point at the action's
# commit (the newest, most precise version first). Says on stderr why there
# are none.
release_tags() {
  if [ -z "$local_action" ] && [[ "$ref" =~ ^v[0-9] ]]; then
    echo "$ref"
    return
  fi
  local sha="${ACTION_SHA:-}" what="ref $ref"
  [ -n "$local_action" ] && what="local checkout $local_action"
  if [ -z "$sha" ]; then
    note "the action's $what has no commit to look a release up for"
    return
  fi
  if [ -z "$repo" ]; then
    note "no repository to look a release up in (GITHUB_REPOSITORY is not set)"
    return
  fi
  if ! command -v git >/dev/null; then
    note "no git on PATH: cannot look up a release tag at $sha"
    return
  fi
  local lines tags
  if ! lines=$(GIT_TERMINAL_PROMPT=0 git ls-remote --tags "$server/$repo" 2>/dev/null); then
    note "cannot list the tags of $server/$repo: no release looked up for $sha"
    return
  fi
  # `SHA<TAB>refs/tags/NAME` (a lightweight tag, or an annotated tag's own
  # object) and `SHA<TAB>refs/tags/NAME^{}` (an annotated tag's commit).
  tags=$(printf '%s\n' "$lines" |
    awk -v sha="$sha" '$1 == sha { n = $2; sub(/^refs\/tags\//, "", n); sub(/\^\{\}$/, "", n); print n }' |
    grep -E '^v[0-9]' | sort -u | sort -r -V || true)
  if [ -z "$tags" ]; then
    note "no release tag of $repo points at $sha (the action's $what)"
    return
  fi
  note "release tags of $repo at $sha (the action's $what): $(echo "$tags" | tr '\n' ' ')"
  printf '%s\n' "$tags"
}

from_release() {
  local t="$1" tag="$2" work
  if ! command -v curl >/dev/null; then
    note "no curl on PATH: cannot download the $tag release binary"
    return 1
  fi
  work="$scratch/release-$tag"
  mkdir -p "$work"
  local base="$server/$repo/releases/download/$tag"
  if ! curl -fsSL --retry 3 -o "$work/SHA256SUMS" "$base/SHA256SUMS" ||
    ! curl -fsSL --retry 3 -o "$work/conformance-$t.tar.gz" "$base/conformance-$t.tar.gz"; then
    note "no release binary for $t at $tag (its release has no SHA256SUMS or no conformance-$t.tar.gz)"
    return 1
  fi
  local want got
  want=$(awk -v f="conformance-$t.tar.gz" '$2 == f || $2 == "*" f {print $1; exit}' "$work/SHA256SUMS")
  [ -n "$want" ] || die "SHA256SUMS of $tag does not list conformance-$t.tar.gz: not installed"
  got=$(sha256 "$work/conformance-$t.tar.gz")
  [ "$want" = "$got" ] || die "conformance-$t.tar.gz of $tag has SHA-256 $got, not $want as SHA256SUMS says: not installed"
  # Called in a condition, where `set -e` does not hold: each step checked.
  tar -xzf "$work/conformance-$t.tar.gz" -C "$work" ||
    die "conformance-$t.tar.gz of $tag does not unpack: not installed"
  if ! mkdir -p "$INSTALL_DIR" ||
    ! install -m 0755 "$work/conformance-$t/conformance" "$INSTALL_DIR/conformance"; then
    die "cannot install conformance-$t/conformance of $tag into $INSTALL_DIR"
  fi
  note "installed the $tag release binary for $t (SHA-256 $got)"
}

from_source() {
  command -v cargo >/dev/null || die "no release binary for this runner and no cargo to build one: install Rust (e.g. dtolnay/rust-toolchain) before this action, or use a release tag"
  local root="$scratch/root"
  if [ -n "$local_action" ]; then
    note "building conformance from source: the local checkout $local_action"
    cargo install --locked --root "$root" --path "$local_action/conformance"
  else
    local sha="${ACTION_SHA:?ACTION_SHA is not set (run resolve first)}"
    note "building conformance from source: $repo at $sha"
    cargo install --locked --root "$root" --git "$server/$repo" --rev "$sha" flux-conformance
  fi
  mkdir -p "$INSTALL_DIR"
  install -m 0755 "$root/bin/conformance" "$INSTALL_DIR/conformance"
  note "built conformance from source"
}

install_binary() {
  : "${INSTALL_DIR:?INSTALL_DIR is not set}"
  if [ -x "$INSTALL_DIR/conformance" ] && "$INSTALL_DIR/conformance" --version >/dev/null 2>&1; then
    note "$("$INSTALL_DIR/conformance" --version) from the cache"
    return
  fi
  scratch=$(mktemp -d)
  local t tag
  if ! t=$(target); then
    note "no release binary is made for a ${RUNNER_OS:-?}/${RUNNER_ARCH:-?} runner"
    from_source
    return
  fi
  local tags
  tags=$(release_tags)
  while IFS= read -r tag; do
    if [ -n "$tag" ] && from_release "$t" "$tag"; then
      return
    fi
  done <<<"$tags"
  from_source
}

case "${1:-}" in
  resolve) resolve ;;
  install) install_binary ;;
  *) die "usage: install.sh resolve|install" ;;
esac
