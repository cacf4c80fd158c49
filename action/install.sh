#!/usr/bin/env bash
# Installs the `conformance` binary the GitHub Action runs, for the action's
# own ref:
#
#   action/install.sh resolve   prints the commit the action's ref names
#                               (the cache key), as `sha=<commit>`
#   action/install.sh install   puts `conformance` in $INSTALL_DIR: the
#                               release binary for this runner, its SHA-256
#                               checked against the release's SHA256SUMS;
#                               when the ref is no release (a branch, a
#                               commit) or has no binary for this runner, a
#                               build from source at the resolved commit
#
# Environment: ACTION_REPOSITORY (owner/name), ACTION_REF (tag, branch or
# commit), ACTION_SHA (install: the commit `resolve` printed), RUNNER_OS
# (Linux, macOS), RUNNER_ARCH (X64, ARM64), INSTALL_DIR, and
# GITHUB_SERVER_URL (https://github.com by default).
#
# A download that fails is not an error (the source build follows); a
# checksum that does not match is, and nothing is installed.
set -euo pipefail

server="${GITHUB_SERVER_URL:-https://github.com}"
repo="${ACTION_REPOSITORY:?ACTION_REPOSITORY is not set}"
ref="${ACTION_REF:?ACTION_REF is not set}"

die() {
  echo "conformance action: $*" >&2
  exit 1
}

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
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

resolve() {
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

from_release() {
  local t="$1" work
  work=$(mktemp -d)
  local base="$server/$repo/releases/download/$ref"
  if ! curl -fsSL --retry 3 -o "$work/SHA256SUMS" "$base/SHA256SUMS" ||
    ! curl -fsSL --retry 3 -o "$work/conformance-$t.tar.gz" "$base/conformance-$t.tar.gz"; then
    echo "conformance action: no release binary for $t at $ref; building from source" >&2
    rm -rf "$work"
    return 1
  fi
  local want got
  want=$(awk -v f="conformance-$t.tar.gz" '$2 == f || $2 == "*" f {print $1; exit}' "$work/SHA256SUMS")
  [ -n "$want" ] || die "SHA256SUMS of $ref does not list conformance-$t.tar.gz"
  got=$(sha256 "$work/conformance-$t.tar.gz")
  [ "$want" = "$got" ] || die "conformance-$t.tar.gz of $ref has SHA-256 $got, not $want as SHA256SUMS says: not installed"
  mkdir -p "$INSTALL_DIR"
  tar -xzf "$work/conformance-$t.tar.gz" -C "$work"
  install -m 0755 "$work/conformance-$t/conformance" "$INSTALL_DIR/conformance"
  rm -rf "$work"
  echo "conformance action: installed the $ref release binary for $t (SHA-256 $got)" >&2
}

from_source() {
  local sha="${ACTION_SHA:?ACTION_SHA is not set (run resolve first)}"
  command -v cargo >/dev/null || die "no release binary for this runner and no cargo to build one: install Rust (e.g. dtolnay/rust-toolchain) before this action, or use a release tag"
  local root
  root=$(mktemp -d)
  cargo install --locked --root "$root" --git "$server/$repo" --rev "$sha" flux-conformance
  mkdir -p "$INSTALL_DIR"
  install -m 0755 "$root/bin/conformance" "$INSTALL_DIR/conformance"
  rm -rf "$root"
  echo "conformance action: built conformance from $repo at $sha" >&2
}

install_binary() {
  : "${INSTALL_DIR:?INSTALL_DIR is not set}"
  if [ -x "$INSTALL_DIR/conformance" ] && "$INSTALL_DIR/conformance" --version >/dev/null 2>&1; then
    echo "conformance action: $("$INSTALL_DIR/conformance" --version) from the cache" >&2
    return
  fi
  local t
  if t=$(target) && [[ "$ref" =~ ^v[0-9] ]] && from_release "$t"; then
    return
  fi
  from_source
}

case "${1:-}" in
  resolve) resolve ;;
  install) install_binary ;;
  *) die "usage: install.sh resolve|install" ;;
esac
