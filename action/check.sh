#!/usr/bin/env bash
# The action's one check, writing every report:
#
#   action/check.sh OUT_DIR
#
# with the inputs in the environment: REPO_PATH, CONFIG, ARGS, FETCH_REMOTE
# ("true"), JUNIT (a path, or empty), DOC_URL, BASELINE (a baseline file,
# or empty: passed as `--baseline FILE`), and SOURCES: the other
# checkouts of the job, one `REF=DIR` per line (blank lines and `#`
# comments skipped), each passed as `--source REF=DIR`. The check's
# annotations go to stdout; `json=` and `sarif=` are appended to
# $GITHUB_OUTPUT (when set). Exits with the check's status: 0 and 1 are
# the findings' verdict (later steps judge them), 2 the run itself failing.
set -uo pipefail

out="${1:?usage: check.sh OUT_DIR}"
mkdir -p "$out"
set -- --repo "${REPO_PATH:-.}" --format github \
  --output "json=$out/conformance.json" --output "sarif=$out/conformance.sarif" \
  --output "markdown=$out/conformance.md"
if [ -n "${DOC_URL:-}" ]; then set -- "$@" --doc-url "$DOC_URL"; fi
if [ "${FETCH_REMOTE:-}" = "true" ]; then set -- "$@" --fetch-remote; fi
if [ -n "${CONFIG:-}" ]; then set -- "$@" --config "$CONFIG"; fi
if [ -n "${BASELINE:-}" ]; then set -- "$@" --baseline "$BASELINE"; fi
if [ -n "${JUNIT:-}" ]; then set -- "$@" --output "junit=$JUNIT"; fi
while IFS= read -r line; do
  # Trim, and skip blank lines and comments.
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  case "$line" in
    "" | "#"*) continue ;;
    *=*) set -- "$@" --source "$line" ;;
    *)
      echo "conformance action: sources line \`$line\`: expected REF=DIR (the source's URL or Kind/namespace/name, then the checkout's path)" >&2
      exit 2
      ;;
  esac
done <<< "${SOURCES:-}"
# ARGS is split on spaces, as a command line would be.
# shellcheck disable=SC2086
conformance check "$@" ${ARGS:-}
status=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "json=$out/conformance.json"
    echo "sarif=$out/conformance.sarif"
  } >> "$GITHUB_OUTPUT"
fi
exit "$status"
