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
# number), RUN_URL (the workflow run), GH_TOKEN (the token), and GH (the gh
# program; `gh` by default). Where gh is missing, the comment goes through
# GitHub's REST API with curl (GITHUB_API_URL, https://api.github.com by
# default; GH_TOKEN, else GITHUB_TOKEN), its JSON read and written with jq,
# or python3 where jq is missing. When that is missing too, it exits 1
# naming what is missing (and a `::warning` says so on the run's page).
set -euo pipefail

body_file="${1:?usage: comment.sh BODY_FILE}"
: "${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}"
: "${PR:?PR is not set}"
gh="${GH:-gh}"
marker="<!-- conformance -->"
limit=65536

# gh, else curl and a JSON tool: checked before anything is written.
token="${GH_TOKEN:-${GITHUB_TOKEN:-}}"
via=gh json=""
if ! command -v "$gh" >/dev/null; then
  via=curl
  missing=()
  command -v curl >/dev/null || missing+=("curl")
  if command -v jq >/dev/null; then
    json=jq
  elif command -v python3 >/dev/null; then
    json=python3
  else
    missing+=("jq or python3")
  fi
  [ -n "$token" ] || missing+=("a token (GH_TOKEN)")
  if [ ${#missing[@]} -gt 0 ]; then
    list=$(printf ', %s' "${missing[@]}")
    msg="no pull-request comment: $gh is not on PATH, and the fallback (the REST API with curl) is missing ${list#, }"
    echo "::warning title=conformance action::$msg"
    echo "conformance action: $msg" >&2
    exit 1
  fi
  echo "conformance action: $gh is not on PATH: commenting through the REST API with curl ($json reads the JSON)" >&2
fi

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

api="${GITHUB_API_URL:-https://api.github.com}"
# The token goes in a header file, never on a command line.
curl_api() {
  curl -fsSL --retry 3 -H "@$work/auth" -H "Accept: application/vnd.github+json" \
    -H "X-GitHub-Api-Version: 2022-11-28" "$@"
}

# `COUNT ID` of one page of comments (ID `-` when none carries the marker).
scan_page() {
  if [ "$json" = jq ]; then
    jq -r --arg m "$marker" \
      '"\(length) \(first(.[] | select((.body // "") | startswith($m)) | .id) // "-")"' "$1"
  else
    python3 -c 'import json, sys
page = json.load(open(sys.argv[1], encoding="utf-8"))
ids = [c["id"] for c in page if (c.get("body") or "").startswith(sys.argv[2])]
print(len(page), ids[0] if ids else "-")' "$1" "$marker"
  fi
}

# The request body `{"body": ...}` of a file.
body_json() {
  if [ "$json" = jq ]; then
    jq -Rs '{body: .}' "$1"
  else
    python3 -c 'import json, sys
json.dump({"body": open(sys.argv[1], encoding="utf-8").read()}, sys.stdout)' "$1"
  fi
}

find_with_curl() {
  local page=1 scan count found
  while [ "$page" -le 100 ]; do
    curl_api -o "$work/page.json" \
      "$api/repos/$GITHUB_REPOSITORY/issues/$PR/comments?per_page=100&page=$page" || return 1
    scan=$(scan_page "$work/page.json") || return 1
    read -r count found <<<"$scan"
    if [ "$found" != "-" ]; then
      echo "$found"
      return
    fi
    [ "$count" -ge 100 ] || return 0
    page=$((page + 1))
  done
}

if [ "$via" = gh ]; then
  id=$("$gh" api "repos/$GITHUB_REPOSITORY/issues/$PR/comments" --paginate \
    --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n1)
else
  (umask 077 && printf 'Authorization: Bearer %s\n' "$token" >"$work/auth")
  body_json "$work/body.md" >"$work/body.json"
  if ! id=$(find_with_curl); then
    echo "conformance action: cannot list the comments of #$PR through $api" >&2
    exit 1
  fi
fi
if [ -n "$id" ]; then
  if [ "$via" = gh ]; then
    "$gh" api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" \
      -F "body=@$work/body.md" >/dev/null
  else
    curl_api -X PATCH --data-binary "@$work/body.json" -o /dev/null \
      "$api/repos/$GITHUB_REPOSITORY/issues/comments/$id"
  fi
  echo "conformance action: updated comment $id" >&2
else
  if [ "$via" = gh ]; then
    "$gh" api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR/comments" \
      -F "body=@$work/body.md" >/dev/null
  else
    curl_api -X POST --data-binary "@$work/body.json" -o /dev/null \
      "$api/repos/$GITHUB_REPOSITORY/issues/$PR/comments"
  fi
  echo "conformance action: commented on #$PR" >&2
fi
