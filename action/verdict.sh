#!/usr/bin/env bash
# The action's outcome from the one JSON report of its check:
#
#   action/verdict.sh REPORT_JSON FAIL_ON
#
# prints `errors=N` and `warnings=N` (for $GITHUB_OUTPUT), and exits 1 when
# FAIL_ON says the findings fail the job: `error` (the default: any error
# finding), `warning` (any error or warning), `never` (report only).
# Waived findings count in neither. A report that is missing or not the
# check's JSON exits 2: the check itself failed.
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
if ! counts=$(jq -er '.summary | "\(.errors) \(.warnings)"' "$report" 2>/dev/null); then
  echo "conformance action: $report is not a conformance JSON report (did the check run?)" >&2
  exit 2
fi
read -r errors warnings <<<"$counts"
echo "errors=$errors"
echo "warnings=$warnings"
case "$fail_on" in
  error) [ "$errors" -eq 0 ] ;;
  warning) [ "$errors" -eq 0 ] && [ "$warnings" -eq 0 ] ;;
  never) true ;;
esac
