#!/usr/bin/env bash
# A fuzz campaign, one libFuzzer process at a time (the CI machine has 2 cores, shared):
#
#   bash fuzz/campaign.sh [target:seconds ...]      default: every fuzz/*_fuzz.c for 300 s
#
# Builds the targets like stage 3 of tests/run-all.sh (clang-14, -fsanitize=fuzzer with
# ASan+UBSan, the whole library instrumented) into $LV_FUZZ_BUILD (default build-campaign/),
# runs each target on a scratch corpus seeded from fuzz/corpora/<name>/ for the given time
# (-max_total_time, leak detection on, -timeout=25 s per input), and prints per target the
# executions, wall time, exec/s, final coverage (cov/ft) and whether it found anything.
# Scratch corpora and logs go to $LV_FUZZ_WORK (default /tmp/lv-campaign); crashes to
# $LV_FUZZ_WORK/artifacts/. Afterwards,
#
#   bash fuzz/campaign.sh --merge
#
# minimises each scratch corpus against the checked-in one (-merge=1 -use_counters=0: only
# inputs that reach new edges are added, hit counts ignored, so the repository stays small;
# inputs over $LV_FUZZ_MERGE_MAX_BYTES, default 16384, are not considered) and copies the
# additions into fuzz/corpora/<name>/ (files named by their SHA-1, as libFuzzer names them).
# LV_FUZZ_SEED fixes the seed (default: random).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${LV_FUZZ_BUILD:-$src/build-campaign}
work=${LV_FUZZ_WORK:-/tmp/lv-campaign}
mkdir -p "$work/logs" "$work/artifacts"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
clang=$(command -v clang-14 || command -v clang)
CC=$clang cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLV_BUILD_FUZZERS=ON -DLV_BUILD_TESTS=OFF -DLV_SANITIZE=ON -DLV_WERROR=OFF \
  -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
cmake --build "$build" -j "${LV_JOBS:-2}" >/dev/null

if [ "${1:-}" = --merge ]; then
  for f in "$src"/fuzz/*_fuzz.c; do
    name=$(basename "$f" .c); corpus=${name%_fuzz}
    [ -d "$work/$corpus" ] || continue
    m=$(mktemp -d) small=$(mktemp -d)
    cp -r "$src/fuzz/corpora/$corpus/." "$m/"
    find "$work/$corpus" -type f -size -"$(( ${LV_FUZZ_MERGE_MAX_BYTES:-16384} + 1 ))"c -exec cp {} "$small/" \;
    before=$(ls "$m" | wc -l)
    "$build/fuzz/$name" -merge=1 -use_counters=0 "$m" "$small" >"$work/logs/merge-$corpus.log" 2>&1
    for x in "$m"/*; do
      [ -e "$src/fuzz/corpora/$corpus/$(basename "$x")" ] || cp "$x" "$src/fuzz/corpora/$corpus/"
    done
    echo "$corpus: $before seeds, $(( $(ls "$m" | wc -l) - before )) inputs added ($(du -sh "$src/fuzz/corpora/$corpus" | cut -f1))"
    rm -rf "$m" "$small"
  done
  exit 0
fi

specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  for f in "$src"/fuzz/*_fuzz.c; do specs+=("$(basename "$f" _fuzz.c):300"); done
fi
printf '%-10s %12s %8s %9s %6s %7s  %s\n' target execs wall_s exec/s cov ft findings
for spec in "${specs[@]}"; do
  t=${spec%%:*}; secs=${spec##*:}
  mkdir -p "$work/$t"
  log="$work/logs/$t.$(date +%Y%m%d%H%M%S).log"
  start=$(date +%s)
  set +e
  (cd "$work" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$build/fuzz/${t}_fuzz" \
    -max_total_time="$secs" -timeout=25 -seed="${LV_FUZZ_SEED:-0}" -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$t-" "$work/$t" "$src/fuzz/corpora/$t") >"$log" 2>&1
  rc=$?
  set -e
  wall=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}')
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | awk '{print $2}')
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | awk '{print $2}')
  found=none
  [ $rc -ne 0 ] && found="rc=$rc, see $log"
  printf '%-10s %12s %8s %9s %6s %7s  %s\n' "$t" "${execs:-?}" "$wall" \
    "$(( ${execs:-0} / (wall > 0 ? wall : 1) ))" "${cov:-?}" "${ft:-?}" "$found"
done
