#!/usr/bin/env bash
# The regression gate can fail (issue 30 §5): bench/gate.sh on one cheap operation (as-of on
# 1,000,000 recorded versions) passes against a baseline of its own count, fails (exit 1,
# "REGRESSION") against a baseline 20% lower, and refuses to compare without a baseline.
#   test_gate.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gate() { bash "$src/bench/gate.sh" "$build" --ops asof_1m --baseline "$tmp/base.tsv" "$@"; }
gate --update "test" >"$tmp/out" 2>&1 || { cat "$tmp/out"; echo "FAIL: --update"; exit 1; }
ir=$(awk -F'\t' '$1 == "asof_1m" { print $2 }' "$tmp/base.tsv")
[ -n "$ir" ] && [ "$ir" -gt 1000000 ] || { cat "$tmp/base.tsv"; echo "FAIL: no count"; exit 1; }
gate >"$tmp/out" 2>&1 || { cat "$tmp/out"; echo "FAIL: the same binary against its own count"; exit 1; }
awk -F'\t' -v OFS='\t' '$1 == "asof_1m" { $2 = int($2 * 0.8) } { print }' "$tmp/base.tsv" >"$tmp/low"
mv "$tmp/low" "$tmp/base.tsv"
if gate >"$tmp/out" 2>&1; then cat "$tmp/out"; echo "FAIL: a 25% growth passed"; exit 1; fi
grep -q REGRESSION "$tmp/out" || { cat "$tmp/out"; echo "FAIL: no REGRESSION line"; exit 1; }
rm "$tmp/base.tsv"
if gate >"$tmp/out" 2>&1; then echo "FAIL: compared without a baseline"; exit 1; fi
echo "ok: the gate passes its own count, fails a 25% growth, needs a baseline"
