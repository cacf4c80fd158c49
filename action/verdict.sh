#!/usr/bin/env bash
# The action's outcome from the one JSON report of its check:
#
#   action/verdict.sh REPORT_JSON FAIL_ON
#
# prints `errors=N` and `warnings=N` (for $GITHUB_OUTPUT), and exits 1 when
# FAIL_ON says the findings fail the job: `error` (the default: any error
# finding), `warning` (any error or warning), `never` (report only).
# Waived findings count in neither. A report that is missing or not the
# check's JSON exits 2: the check itself failed. The report is read with jq,
# or with python3 where jq is missing; with neither it exits 2 and says so.
set -euo pipefail

report="${1:?usage: verdict.sh REPORT_JSON FAIL_ON}"
fail_on="${2:-error}"

case "$fail_on" in
  error | warning | never) ;;
  *)
    echo "conformance action: fail-on is \`$fail_on\`: expected error, warning or never" >&2
    exit 2
    ;;
esac
# The summary's two counts, read with jq, or python3 where jq is missing.
if command -v jq >/dev/null; then
  read_counts() { jq -er '.summary | "\(.errors) \(.warnings)"' "$report"; }
elif command -v python3 >/dev/null; then
  read_counts() {
    python3 -c 'import json, sys
s = json.load(open(sys.argv[1], encoding="utf-8"))["summary"]
print(s["errors"], s["warnings"])' "$report"
  }
else
  echo "conformance action: neither jq nor python3 is on PATH: cannot read the report $report (install one of them before this action)" >&2
  exit 2
fi
if ! counts=$(read_counts 2>/dev/null); then
  echo "conformance action: $report is not a conformance JSON report (did the check run?)" >&2
  exit 2
fi
read -r errors warnings <<<"$counts"
if ! [[ "$errors" =~ ^[0-9]+$ && "$warnings" =~ ^[0-9]+$ ]]; then
  echo "conformance action: $report has no summary counts (errors: $errors, warnings: $warnings): not a conformance JSON report" >&2
  exit 2
fi
echo "errors=$errors"
echo "warnings=$warnings"
case "$fail_on" in
  error) [ "$errors" -eq 0 ] ;;
  warning) [ "$errors" -eq 0 ] && [ "$warnings" -eq 0 ] ;;
  never) true ;;
esac
