#!/bin/bash
# Runs the tap suite on the compiled tests and ends with one plain "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
npx tap --reporter=tap "$@" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
# Top-level test points (one per test file) carry the totals of their subtests in tap's summary.
passed=$(grep -cE '^    ok [0-9]+' "$out" || true)
failed=$(grep -cE '^    not ok [0-9]+' "$out" || true)
skipped=$(grep -cE '^    ok [0-9]+ .*# SKIP' "$out" || true)
rm -f "$out"
echo "$passed passed, $failed failed, $skipped skipped"
exit "$status"
