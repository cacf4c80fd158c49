#!/usr/bin/env bash
# One build job of the release workflow (.github/workflows/release.yml),
# also what scripts/release-dry-run.sh runs on this machine:
#
#   scripts/release-build.sh TARGET OUTDIR [BINARY]
#
# 1. builds conformance for TARGET (`cargo build --release --locked
#    --target TARGET`); given BINARY, takes that binary and builds nothing;
# 2. checks a Linux (musl) binary is static, as the action's Linux runners
#    need (RELEASE_ALLOW_DYNAMIC=1 makes a dynamic one a warning: only for
#    the dry run of a host binary);
# 3. checks it runs: `--version`, and `check` passes on the reference
#    platform (fixtures/reference-platform);
# 4. packages it with scripts/package.sh: OUTDIR/conformance-TARGET.tar.gz.
set -euo pipefail
target="${1:?usage: release-build.sh TARGET OUTDIR [BINARY]}"
outdir="${2:?usage: release-build.sh TARGET OUTDIR [BINARY]}"
binary="${3:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"

say() { echo "release-build: $*" >&2; }

if [ -z "$binary" ]; then
  say "building for $target"
  (cd "$root" && cargo build --release --locked -p flux-conformance --target "$target")
  binary="$root/target/$target/release/conformance"
fi
[ -x "$binary" ] || { say "$binary is not an executable"; exit 1; }

case "$target" in
  *-linux-musl)
    command -v file >/dev/null || { say "no \`file\` on PATH: cannot check that $binary is static"; exit 1; }
    kind=$(file -L "$binary")
    case "$kind" in
      # `file` 5.39 and later call a static PIE (Rust's musl default)
      # "static-pie linked".
      *"statically linked"* | *"static-pie linked"*) say "static: $kind" ;;
      *)
        if [ "${RELEASE_ALLOW_DYNAMIC:-}" = 1 ]; then
          say "WARNING: not static (the release build would fail here; allowed for a dry run): $kind"
        else
          say "$binary is not statically linked: $kind"
          exit 1
        fi
        ;;
    esac
    ;;
esac

say "runs: $("$binary" --version)"
"$binary" check --repo "$root/fixtures/reference-platform" >&2
scripts_dir="$root/scripts"
bash "$scripts_dir/package.sh" "$target" "$binary" "$outdir"
