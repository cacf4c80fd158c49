#!/usr/bin/env bash
# Seeds the fuzz corpora from fixtures/: every YAML file for the loader, and
# every kustomization directory (its files joined as the renderer target
# reads them) for the renderer.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/loader corpus/renderer
n=0
while IFS= read -r -d '' f; do
  n=$((n + 1)); cp "$f" "corpus/loader/fixture-$n.yaml"
done < <(find ../fixtures -name '*.yaml' -size -64k -print0)
m=0
while IFS= read -r -d '' k; do
  dir=$(dirname "$k"); m=$((m + 1)); out="corpus/renderer/fixture-$m"
  : > "$out"
  for f in "$dir"/*.yaml; do
    printf 'app/%s\001' "$(basename "$f")" >> "$out"; cat "$f" >> "$out"; printf '\000' >> "$out"
  done
done < <(find ../fixtures -name kustomization.yaml -print0)
echo "seeded $n loader inputs and $m renderer inputs"
