#!/usr/bin/env bash
# A dry run of the release workflow (.github/workflows/release.yml) on this
# machine, then of the action installing what it would publish:
#
#   scripts/release-dry-run.sh [--binary PATH] [TARGET]
#
# TARGET defaults to this machine's (x86_64-unknown-linux-musl on an x86_64
# Linux). Everything happens in a temporary directory, removed at the end:
#
# 1. the build job for TARGET (scripts/release-build.sh): `cargo build
#    --release` unless --binary gives a binary to take instead (then a
#    dynamically linked Linux binary is only warned about), the check on
#    the reference platform, the package;
# 2. the release job's assembly (scripts/release-assemble.sh) with the
#    workflow's RELEASE_TARGETS: only TARGET was built here, so the notes
#    must name every other target as not built; SHA256SUMS;
# 3. dist/ served as a fake GitHub release on 127.0.0.1 (python3 -m
#    http.server: <owner>/<repo>/releases/download/<tag>/..., and the
#    tags as git's dumb HTTP protocol serves them, info/refs), and
#    action/install.sh run against it (GITHUB_SERVER_URL), with a cargo
#    that refuses to build:
#    * by tag: the binary is installed, its SHA-256 checked, and it runs
#      `--version`;
#    * by commit: the release tag pointing at it is found and used;
#    * a branch no release tag points at, and a runner whose target was not
#      built: the installer says so and turns to a source build;
#    * an archive that does not match SHA256SUMS: refused, nothing
#      installed, no source build.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

binary=""
target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary)
      binary="${2:?--binary needs a path}"
      shift 2
      ;;
    --binary=*)
      binary="${1#--binary=}"
      shift
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "release-dry-run: unknown option $1 (usage: release-dry-run.sh [--binary PATH] [TARGET])" >&2
      exit 2
      ;;
    *)
      target="$1"
      shift
      ;;
  esac
done

say() { echo "release-dry-run: $*" >&2; }
fail() {
  say "FAILED: $*"
  exit 1
}

# The runner (RUNNER_OS/RUNNER_ARCH) of a target, as action/install.sh maps it.
runner_of() {
  case "$1" in
    x86_64-unknown-linux-musl) echo "Linux X64" ;;
    aarch64-unknown-linux-musl) echo "Linux ARM64" ;;
    x86_64-apple-darwin) echo "macOS X64" ;;
    aarch64-apple-darwin) echo "macOS ARM64" ;;
    *) return 1 ;;
  esac
}

if [ -z "$target" ]; then
  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) target=x86_64-unknown-linux-musl ;;
    Linux/aarch64 | Linux/arm64) target=aarch64-unknown-linux-musl ;;
    Darwin/x86_64) target=x86_64-apple-darwin ;;
    Darwin/arm64 | Darwin/aarch64) target=aarch64-apple-darwin ;;
    *) fail "no release target for this machine ($(uname -s)/$(uname -m)): give one" ;;
  esac
fi
runner_of "$target" >/dev/null || fail "$target is not a release target"
read -r runner_os runner_arch <<<"$(runner_of "$target")"

# The workflow's own list of targets.
targets=$(sed -n 's/^ *RELEASE_TARGETS: *"\(.*\)"$/\1/p' .github/workflows/release.yml)
[ -n "$targets" ] || fail "no RELEASE_TARGETS in .github/workflows/release.yml"
case " $targets " in *" $target "*) ;; *) fail "$target is not in the workflow's RELEASE_TARGETS ($targets)" ;; esac
command -v python3 >/dev/null || fail "python3 is needed to serve the fake release"

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# 1. The build job, then its artifact.
say "1. build job for $target${binary:+ (taking $binary, nothing built)}"
if [ -n "$binary" ]; then
  [ -x "$binary" ] || fail "$binary is not an executable"
  # A copy: the binary given may be rebuilt meanwhile.
  cp "$binary" "$work/conformance"
  RELEASE_ALLOW_DYNAMIC=1 bash scripts/release-build.sh "$target" "$work/artifacts/dist-$target" "$work/conformance" >/dev/null
else
  bash scripts/release-build.sh "$target" "$work/artifacts/dist-$target" >/dev/null
fi

# 2. The release job: the artifacts merged into dist/, then assembled.
say "2. release job: assembly with RELEASE_TARGETS=$targets"
mkdir -p "$work/dist"
cp "$work"/artifacts/dist-*/* "$work/dist/"
# shellcheck disable=SC2086 # the workflow's list, split as the job splits it
bash scripts/release-assemble.sh "$work/dist" "$work/notes.md" $targets
for t in $targets; do
  [ "$t" = "$target" ] && continue
  grep -q "Not built for this release:.*$t" "$work/notes.md" || fail "the notes do not name $t as not built: $(cat "$work/notes.md")"
done
grep -q "conformance-$target.tar.gz" "$work/dist/SHA256SUMS" || fail "SHA256SUMS does not list conformance-$target.tar.gz"

# 3. The fake GitHub: releases, and the tags over git's dumb HTTP protocol.
owner_repo=dryrun/conformance
tag=v0.0.0-dryrun
commit=$(git rev-parse HEAD 2>/dev/null || echo 1111111111111111111111111111111111111111)
tag_object=2222222222222222222222222222222222222222
untagged=3333333333333333333333333333333333333333
www="$work/www"
rel="$www/$owner_repo/releases/download"
mkdir -p "$rel/$tag" "$rel/v0.0.0-corrupt" "$www/$owner_repo/info"
cp "$work/dist"/* "$rel/$tag/"
cp "$work/dist"/* "$rel/v0.0.0-corrupt/"
printf 'tampered' >>"$rel/v0.0.0-corrupt/conformance-$target.tar.gz"
printf '%s\trefs/heads/main\n%s\trefs/tags/%s\n%s\trefs/tags/%s^{}\n' \
  "$untagged" "$tag_object" "$tag" "$commit" "$tag" >"$www/$owner_repo/info/refs"

python3 -u -m http.server --bind 127.0.0.1 --directory "$www" 0 >"$work/http.log" 2>&1 &
server=$!
port=""
for _ in $(seq 50); do
  port=$(sed -n 's/.* port \([0-9][0-9]*\).*/\1/p' "$work/http.log" | head -n1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || fail "the fake release server did not start: $(cat "$work/http.log")"
say "3. fake release of $owner_repo at http://127.0.0.1:$port"

# A cargo that refuses: the dry run must never build from source.
mkdir -p "$work/nocargo"
printf '#!/bin/sh\necho "release-dry-run: cargo $*: the installer turned to a source build" >&2\nexit 3\n' >"$work/nocargo/cargo"
chmod +x "$work/nocargo/cargo"

# action/install.sh as the action runs it: REF SHA OS ARCH INSTALL_DIR.
run_install() {
  local ref="$1" sha="$2" os="$3" arch="$4" dir="$5"
  env -u GITHUB_ACTION_PATH PATH="$work/nocargo:$PATH" GITHUB_SERVER_URL="http://127.0.0.1:$port" \
    ACTION_REPOSITORY="$owner_repo" ACTION_REF="$ref" ACTION_SHA="$sha" \
    RUNNER_OS="$os" RUNNER_ARCH="$arch" INSTALL_DIR="$dir" GIT_TERMINAL_PROMPT=0 \
    bash action/install.sh install
}

say "  by tag $tag"
run_install "$tag" "$commit" "$runner_os" "$runner_arch" "$work/by-tag" 2>"$work/by-tag.log" ||
  fail "install by tag: $(cat "$work/by-tag.log")"
version=$("$work/by-tag/conformance" --version) || fail "the installed binary does not run"
case "$version" in conformance\ *) ;; *) fail "the installed binary says $version" ;; esac
say "    installed, runs: $version"

say "  by commit $commit"
run_install "$commit" "$commit" "$runner_os" "$runner_arch" "$work/by-commit" 2>"$work/by-commit.log" ||
  fail "install by commit: $(cat "$work/by-commit.log")"
grep -q "installed the $tag release binary" "$work/by-commit.log" ||
  fail "install by commit did not use $tag: $(cat "$work/by-commit.log")"
"$work/by-commit/conformance" --version >/dev/null || fail "the binary installed by commit does not run"
say "    found $tag at the commit, installed"

say "  a branch no release tag points at"
if run_install main "$untagged" "$runner_os" "$runner_arch" "$work/branch" 2>"$work/branch.log"; then
  fail "install of an untagged branch succeeded without a source build: $(cat "$work/branch.log")"
fi
if ! grep -q "no release tag of $owner_repo points at $untagged" "$work/branch.log" ||
  ! grep -q "building conformance from source" "$work/branch.log"; then
  fail "the installer did not say why it builds from source: $(cat "$work/branch.log")"
fi
say "    says so and turns to a source build"

for t in $targets; do
  [ "$t" = "$target" ] && continue
  read -r os arch <<<"$(runner_of "$t")"
  if run_install "$tag" "$commit" "$os" "$arch" "$work/missing-$t" 2>"$work/missing-$t.log"; then
    fail "install for $t (not built) succeeded without a source build"
  fi
  grep -q "no release binary for $t at $tag" "$work/missing-$t.log" ||
    fail "the installer did not say $t has no binary: $(cat "$work/missing-$t.log")"
done
say "  a runner whose target was not built: says so and turns to a source build"

say "  an archive that does not match SHA256SUMS"
if run_install v0.0.0-corrupt "$commit" "$runner_os" "$runner_arch" "$work/corrupt" 2>"$work/corrupt.log"; then
  fail "a tampered archive was installed: $(cat "$work/corrupt.log")"
fi
grep -q "not installed" "$work/corrupt.log" || fail "no refusal: $(cat "$work/corrupt.log")"
if grep -q "source build" "$work/corrupt.log"; then fail "a tampered archive led to a source build"; fi
[ ! -e "$work/corrupt/conformance" ] || fail "a tampered archive left a binary"
say "    refused: $(grep 'not installed' "$work/corrupt.log")"

say "passed: $target built, assembled with SHA256SUMS, published, installed by tag and by commit"
