#!/usr/bin/env bash
# Posts the action's pull-request comment, or updates the one it posted
# before (one comment per pull request, found by its first line):
#
#   action/comment.sh BODY_FILE
#
# A body over GitHub's limit of 65,536 characters is cut at the last whole
# line that fits, and ends with a link to the full report (the workflow
# run, whose artifact holds every format).
#
# Environment: GITHUB_REPOSITORY (owner/name), PR (the pull request's
# number), RUN_URL (the workflow run), GH (the gh program; `gh` by default,
# with GH_TOKEN set).
set -euo pipefail

body_file="${1:?usage: comment.sh BODY_FILE}"
: "${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}"
: "${PR:?PR is not set}"
gh="${GH:-gh}"
marker="<!-- conformance -->"
limit=65536

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "$marker"
  cat "$body_file"
} >"$work/full.md"

# Characters, not bytes (a UTF-8 locale); where awk counts bytes instead,
# the cut only comes earlier.
export LC_ALL=C.UTF-8
if [ "$(wc -m <"$work/full.md")" -le "$limit" ]; then
  cp "$work/full.md" "$work/body.md"
else
  note="… The report is longer than a pull-request comment can hold ($limit characters): the full report is in the run's artifacts, ${RUN_URL:-in this workflow run}."
  awk -v max=$((limit - ${#note} - 16)) '{ n += length($0) + 1; if (n > max) exit; print }' \
    "$work/full.md" >"$work/body.md"
  printf '\n%s\n' "$note" >>"$work/body.md"
fi

id=$("$gh" api "repos/$GITHUB_REPOSITORY/issues/$PR/comments" --paginate \
  --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n1)
if [ -n "$id" ]; then
  "$gh" api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" \
    -F "body=@$work/body.md" >/dev/null
  echo "conformance action: updated comment $id" >&2
else
  "$gh" api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR/comments" \
    -F "body=@$work/body.md" >/dev/null
  echo "conformance action: commented on #$PR" >&2
fi
