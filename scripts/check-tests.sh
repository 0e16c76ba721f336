#!/usr/bin/env bash
# Fails when a test bounds a fast-check property by time: `interruptAfterTimeLimit`,
# `markInterruptAsFailure` or `skipAllAfterTimeLimit` anywhere in test/. Whether a time limit is
# reached depends on the machine's speed and load, so a property that fails (or stops, or skips)
# on one is a timed assertion; bound it by `numRuns` and by the sizes it generates instead.
set -euo pipefail
cd "$(dirname "$0")/.."

pattern='interruptAfterTimeLimit|markInterruptAsFailure|skipAllAfterTimeLimit'
status=0
matches=$(grep -rnIE "$pattern" test) || status=$?
if [ "$status" -eq 0 ]; then
  echo "check-tests: properties bounded by time (bound them by numRuns and generated sizes):" >&2
  printf '%s\n' "$matches" | sed 's/^/  /' >&2
  exit 1
elif [ "$status" -ne 1 ]; then
  echo "check-tests: could not search test/" >&2
  exit "$status"
fi
echo "check-tests: no property bounded by time"
