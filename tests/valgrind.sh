#!/usr/bin/env bash
# Runs every unit test, every fuzz-corpus replay and the CLI (each command, on a
# copy of the LanceDB-written fixture dataset) of a normal, non-sanitizer build
# under valgrind memcheck.  Any invalid access, use of uninitialised memory or
# definite/indirect leak fails the run.
#
#   bash tests/valgrind.sh [BUILD_DIR]      (default: build/; it must be built already)
#
# LV_VALGRIND_JOBS (default 2) programs run at once; each one's log is printed
# only when it fails.  The closing line is "valgrind: N passed, N failed".
# test_corruption runs its quick sweep (LV_CORRUPTION_QUICK=1: every 7th byte);
# its full sweep runs under ASan+UBSan in every CI run.
export LV_CORRUPTION_QUICK=1
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
jobs=${LV_VALGRIND_JOBS:-2}
command -v valgrind >/dev/null || { echo "FAIL: valgrind not installed (tests/install-deps.sh)"; exit 1; }
[ -x "$build/lancever" ] || { echo "FAIL: $build/lancever not built"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

# One line per program: NAME<TAB>command...  (NAME is the log file's name)
cmds=$work/cmds
: >"$cmds"
n_unit=0
for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  printf '%s\t%s\n' "$(basename "$t")" "$t" >>"$cmds"
  n_unit=$((n_unit + 1))
done
for t in "$build"/tests/replay_*_fuzz; do
  [ -x "$t" ] || continue
  corpus=$(basename "$t"); corpus=${corpus#replay_}; corpus=${corpus%_fuzz}
  printf '%s\t%s %s\n' "$(basename "$t")" "$t" "$src/fuzz/corpora/$corpus" >>"$cmds"
done
[ "$n_unit" -gt 0 ] || { echo "FAIL: no unit tests in $build/tests"; exit 1; }

# The CLI on a LanceDB-written dataset: every command, read-only ones first,
# then the ones that write (checkpoint, cleanup) on the same private copy.
ds=$work/t.lance
cp -r "$src/tests/fixtures/lance8/t.lance" "$ds"
bin=$build/lancever
cli=(
  "versions $ds --json --stats"
  "versions $ds --threads 1"
  "history $ds --json"
  "asof $ds 2030-01-01T00:00:00Z --json"
  "show $ds 3 --json"
  "diff $ds 1 5 --json"
  "info $ds --json"
  "tags $ds --json"
  "inspect $src/fuzz/corpora/lancefile/lancedb_21_5rows.lance --json"
  "checkpoint $ds --json"
  "inspect $ds/_checkpoints/00000000000000000006.lance --csv"
  "history $ds --json --stats"
  "cleanup $ds --retain-versions 2 --no-error-if-tagged-old-versions --dry-run --json"
  "cleanup $ds --retain-versions 2 --no-error-if-tagged-old-versions --json"
  "history $ds"
)
i=0
for c in "${cli[@]}"; do
  i=$((i + 1))
  printf 'cli-%02d-%s\t%s %s\n' "$i" "${c%% *}" "$bin" "$c" >>"$cmds"
done

vg=(valgrind -q --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --track-origins=yes
    --num-callers=30 --suppressions="$src/tests/valgrind.supp")

run_one() { # NAME CMD...  -> NAME.log (program output), NAME.vg (valgrind's report), NAME.rc
  local name=$1; shift
  local t0
  t0=$(date +%s)
  set +e
  "${vg[@]}" --log-file="$work/$name.vg" "$@" >"$work/$name.log" 2>&1
  echo $? >"$work/$name.rc"
  set -e
  echo "$name $(( $(date +%s) - t0 )) s" >>"$work/times"
}
# Tests and replays are independent: $jobs at a time.  The CLI steps share one
# dataset and run in order afterwards.
running=0
while IFS=$'\t' read -r name cmd; do
  case $name in cli-*) continue ;; esac
  # shellcheck disable=SC2086
  run_one "$name" $cmd &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done <"$cmds"
wait
while IFS=$'\t' read -r name cmd; do
  case $name in cli-*) ;; *) continue ;; esac
  # shellcheck disable=SC2086
  run_one "$name" $cmd
done <"$cmds"

pass=0 fail=0
while IFS=$'\t' read -r name cmd; do
  rc=$(cat "$work/$name.rc" 2>/dev/null || echo missing)
  # Exit 99 is valgrind's verdict; any other non-zero status is the program's own failure.
  if [ "$rc" = 0 ] && [ ! -s "$work/$name.vg" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "---- FAIL $name (exit $rc): $cmd"
    tail -n 40 "$work/$name.log" || true
    cat "$work/$name.vg" || true
  fi
done <"$cmds"
sort -k2 -n -r "$work/times" | head -n 5 | sed 's/^/slowest: /'
echo "valgrind wall time: $(( $(date +%s) - start )) s"
echo "valgrind: $pass passed, $fail failed"
[ "$fail" = 0 ]
