#!/usr/bin/env bash
# Whole-process timing of `conformance check` with both renderers on one
# repository (default: the corpus's onedr0p-home-ops), in the same run.
# Uses hyperfine when installed (apt-get install hyperfine), else a plain
# loop with `date`. The full benchmark table is `cargo bench -p flux-conformance
# --bench render` (see BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="${1:-${CONFORMANCE_CORPUS:-../shared/corpus}/onedr0p-home-ops}"
runs="${RUNS:-5}"
cargo build --release -q -p flux-conformance
bin=target/release/conformance
if command -v hyperfine >/dev/null; then
  hyperfine --warmup 1 --runs "$runs" -i \
    "$bin check --renderer native --repo $repo" \
    "$bin check --renderer kustomize --repo $repo"
  exit 0
fi
for renderer in native kustomize; do
  start=$(date +%s.%N)
  for _ in $(seq "$runs"); do
    "$bin" check --renderer "$renderer" --repo "$repo" >/dev/null || true
  done
  end=$(date +%s.%N)
  echo "$renderer: $(echo "($end - $start) / $runs" | bc -l | cut -c1-6) s per run ($runs runs)"
done
