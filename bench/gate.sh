#!/usr/bin/env bash
# The performance regression gate (issue 30 §5): instruction counts of the key operations,
# counted by valgrind's callgrind (the same total for the same binary, inputs and environment,
# whatever else the machine does), against the baseline committed in bench/gate/baseline.tsv.
#
#   bash bench/gate.sh BUILD_DIR                      compare (CI: tests/run-all.sh)
#   bash bench/gate.sh BUILD_DIR --update "WHY"       re-measure and write the baseline
#   ... [--baseline FILE] [--ops NAME,NAME]           another baseline file; only these operations
#                                                     (tests/cli/test_gate.sh: the gate can fail)
#
# BUILD_DIR is a Release build with the bench programs (build-release/, build-bench/).
# Fails (exit 1) when an operation's count grew by more than 10% over the baseline; a change
# that costs more on purpose updates the baseline in the same commit with --update and says
# why (the reason is kept in the file's history lines).  A count that fell by more than 10% is
# reported so the gain can be locked in.  Minor page faults of each operation (a native run,
# bench/rusage.c) are printed and recorded beside the counts, not gated: they depend on the
# kernel and the allocator's state more than on the code.
#
# Invariants: the inputs are generated here by bench/gen_dataset.c with fixed parameters at a
# fixed path under BUILD_DIR, the environment is fixed (env -i, LC_ALL=C, TZ=UTC), and every
# operation must exit 0 (a failing command is not a measurement).  The baseline holds for the
# compiler and C library of the CI image (Debian 12's gcc and glibc); another image may need
# --update.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bash bench/gate.sh BUILD_DIR [--update WHY] [--baseline FILE] [--ops A,B]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
update="" only="" baseline=$src/bench/gate/baseline.tsv
while [ $# -gt 0 ]; do
  case $1 in
    --update) update=${2:?"--update wants a reason"}; shift 2 ;;
    --baseline) baseline=${2:?}; shift 2 ;;
    --ops) only=,${2:?},; shift 2 ;;
    *) echo "gate: unknown argument $1" >&2; exit 2 ;;
  esac
done
limit=1.10
for tool in lancever gen_dataset lancefile_bench rusage time_versions; do
  [ -x "$build/$tool" ] || { echo "gate: $build/$tool is missing (a Release build with LV_BUILD_BENCH=ON)" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "gate: valgrind is missing (tests/debian-packages.txt)" >&2; exit 2; }

data=$build/gate-data
rm -rf "$data"
mkdir -p "$data"
run_env=(env -i PATH=/usr/bin:/bin LC_ALL=C TZ=UTC HOME="$data")
lv=$build/lancever
want() { [ -z "$only" ] || [[ $only == *",$1,"* ]]; }
# The inputs (a few seconds): 10,000 and 2 live versions with a checkpoint; 100,000 and
# 1,000,000 versions recorded (10 live, the rest history in the head and archive segments).
gen() { "${run_env[@]}" "$build/gen_dataset" "$data/$1" "${@:2}" --fragments 1 2>/dev/null >/dev/null; }
if want versions_10k || want cleanup_plan_10k || want arrow_10k; then
  gen v10k --versions 10000
  "${run_env[@]}" "$lv" checkpoint "$data/v10k" >/dev/null
fi
if want versions_fresh_2; then
  gen v2 --versions 2
  "${run_env[@]}" "$lv" checkpoint "$data/v2" >/dev/null
fi
want history_100k && gen h100k --start 99991 --versions 10 --recorded
want asof_1m && gen h1m --start 999991 --versions 10 --recorded

# name | command (run in $data)
ops=(
  "versions_10k|$lv versions v10k --json"
  "versions_fresh_2|$build/time_versions v2 --repeat 200"
  "history_100k|$lv history h100k --json"
  "cleanup_plan_10k|$lv cleanup v10k --retain-versions 16 --dry-run --json"
  "asof_1m|$lv asof h1m 2023-11-20T12:00:00Z"
  "arrow_10k|$lv history v10k --format arrow"
  "lancefile_100k|$build/lancefile_bench 100000 1"
)

count() { # prints the instruction count of one run of "$@"
  local log
  log=$(cd "$data" && "${run_env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$@" 2>&1 >/dev/null) || { echo "gate: failed under callgrind: $*" >&2; echo "$log" >&2; return 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$log"
}
faults() { # prints the minor page faults of one native run of "$@"
  (cd "$data" && "${run_env[@]}" "$build/rusage" --repeat 1 --warmup 0 -- "$@") |
    sed -n 's/.*"minflt":\([0-9]*\).*/\1/p'
}

declare -A base
if [ -f "$baseline" ]; then
  while IFS=$'\t' read -r name ir flt; do
    case $name in ''|'#'*|op) continue ;; esac
    base[$name]=$ir
  done <"$baseline"
fi

rows=()
fail=0
printf '%-18s %14s %14s %8s %10s\n' operation instructions baseline ratio minflt
for op in "${ops[@]}"; do
  name=${op%%|*}
  want "$name" || continue
  read -r -a cmd <<<"${op#*|}"
  ir=$(count "${cmd[@]}")
  flt=$(faults "${cmd[@]}")
  [ -n "$ir" ] || { echo "gate: $name: no instruction count" >&2; exit 1; }
  rows+=("$name"$'\t'"$ir"$'\t'"$flt")
  b=${base[$name]:-}
  if [ -z "$b" ]; then
    ratio=new
  else
    ratio=$(awk -v a="$ir" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
    if awk -v r="$ratio" -v l="$limit" 'BEGIN { exit !(r > l) }'; then
      fail=1
      ratio="$ratio REGRESSION"
    elif awk -v r="$ratio" 'BEGIN { exit !(r < 0.9) }'; then
      ratio="$ratio (faster: update the baseline to keep the gain)"
    fi
  fi
  printf '%-18s %14s %14s %8s %10s\n' "$name" "$ir" "${b:--}" "$ratio" "$flt"
done

if [ -n "$update" ]; then
  commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
  {
    grep '^#' "$baseline" 2>/dev/null || printf '# bench/gate.sh baseline: instructions (callgrind) and minor page faults per operation\n'
    printf '# %s, on top of %s: %s\n' "$(date -u +%Y-%m-%d)" "$commit" "$update"
    printf 'op\tinstructions\tminflt\n'
    printf '%s\n' "${rows[@]}"
  } >"$baseline.new"
  mv "$baseline.new" "$baseline"
  echo "gate: baseline written: $baseline"
  exit 0
fi
[ -f "$baseline" ] || { echo "gate: no baseline ($baseline): run with --update" >&2; exit 1; }
if [ $fail = 1 ]; then
  echo "gate: an operation costs more than ${limit}x its baseline; if that is intended, run" >&2
  echo "      bash bench/gate.sh BUILD_DIR --update \"why\" and commit bench/gate/baseline.tsv with it" >&2
  exit 1
fi
echo "gate: every operation within ${limit}x of its baseline"
