#!/usr/bin/env bash
# The checks `pnpm test` runs before jest, in two lanes at once (the CI machine has 2 cores and each
# tool uses one): ESLint on one, the build and the type checks then the docs' links on the other.
# Each lane runs the package.json scripts by name, so a change to one of them applies here too.
# Each lane's output is printed whole when it ends, so the two never interleave; the script fails
# when either lane does, after both have finished.
set -uo pipefail
cd "$(dirname "$0")/.."

out_lint=$(mktemp)
out_types=$(mktemp)
trap 'rm -f "$out_lint" "$out_types"' EXIT

# Lane 1: code style, import cycles and unused code.
pnpm -s lint >"$out_lint" 2>&1 &
lint=$!
# Lane 2: `build` (tsc -b) makes dist/ (the tests that run processes start the built apps) and checks
# the sources package by package, as published; `typecheck` checks tests and benchmarks against the
# sources, and the web app's JS; then every link of the docs.
{
  pnpm -s build && pnpm -s typecheck && pnpm -s lint:docs
} >"$out_types" 2>&1 &
types=$!

status=0
wait "$lint" || { status=1; echo "check: eslint failed"; }
cat "$out_lint"
wait "$types" || { status=1; echo "check: build, type check or docs links failed"; }
cat "$out_types"
exit "$status"
