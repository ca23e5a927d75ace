#!/usr/bin/env bash
# The checks `pnpm test` runs before jest, in two lanes at once (the CI machine has 2 cores and each
# tool uses one): ESLint on one, the type checks then the docs' links on the other.
# Each lane runs the package.json scripts by name, so a change to one of them applies here too.
# Each lane's output is printed whole when it ends, so the two never interleave; the script fails
# when either lane does, after both have finished.
set -uo pipefail
cd "$(dirname "$0")/.."

out_lint=$(mktemp)
out_types=$(mktemp)
trap 'rm -f "$out_lint" "$out_types"' EXIT

# Lane 1: code style, import cycles and unused code, then the formatting (Prettier, .prettierrc.json).
{ pnpm -s lint && pnpm -s format:check; } >"$out_lint" 2>&1 &
lint=$!
# Lane 2: `typecheck` checks sources, tests and benchmarks, and the web app's JS; then every link of
# the docs. The build (tsc -b: dist/, and each package checked on its own, as published) is left to
# `pnpm test:scenarios`, whose tests start the built apps; no suite test reads dist/, and CI runs both.
# REELAY_CHECK_BUILD=1 puts it back here.
{
  if [ "${REELAY_CHECK_BUILD:-0}" = 1 ]; then pnpm -s build || exit 1; fi
  pnpm -s typecheck && pnpm -s lint:docs
} >"$out_types" 2>&1 &
types=$!

status=0
wait "$lint" || { status=1; echo "check: eslint or prettier failed (pnpm format fixes the formatting)"; }
cat "$out_lint"
wait "$types" || { status=1; echo "check: type check or docs links failed"; }
cat "$out_types"
exit "$status"
