#!/bin/bash
# Runs the tap suite on the compiled tests and ends with one plain "N passed, N failed" line.
# Each subtest of a test file counts once; a file that fails outside any subtest counts as one failure.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
# tap skips folders named dist by default, so the compiled test files are named here.
files=("$@")
[ ${#files[@]} -eq 0 ] && mapfile -t files < <(find dist/test -name '*.test.js' | sort)
npx tap --reporter=tap "${files[@]}" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
awk '
  /^    ok [0-9]+/ { if ($0 ~ /# SKIP/) skipped++; else passed++; next }
  /^    not ok [0-9]+/ { failed++; nested++; next }
  /^not ok [0-9]+/ { if (nested == 0) failed++; nested = 0; next }
  /^ok [0-9]+/ { nested = 0 }
  END { printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped }
' "$out"
rm -f "$out"
exit "$status"
