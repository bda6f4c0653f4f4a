#!/usr/bin/env bash
# The mixed-settings race campaign of RELIABILITY.md §6 (issue 24, case 3), run by hand:
#   tests/campaign/race_mixed.sh BUILD_DIR RUNS KILL(0|1) checkpoint|cleanup
# Each run: a 300-version synthetic dataset (BUILD_DIR/gen_dataset), three `lancever` writers
# at once with different archive settings (segments of 50/200, 40/150, 64/100), the third
# SIGKILLed after 10-90 ms when KILL=1; then an honest checkpoint, `check` (must pass) and
# `history --json` (must list 1..300).  Prints the failure counts; exit 1 if any.
set -u
B=$1; RUNS=$2; KILL=$3; MODE=$4
BIN=$B/lancever GEN=$B/gen_dataset
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bad=0; lost=0; checkfail=0
for i in $(seq 1 "$RUNS"); do
  d=$tmp/ds$i
  "$GEN" "$d" --versions 300 --fragments 1 >/dev/null || { echo "gen_dataset failed"; exit 2; }
  if [ "$MODE" = cleanup ]; then
    common=(--older-than 0s); A=(--retain-versions 3); Bq=(--retain-versions 5); C=(--retain-versions 4)
  else
    common=(); A=(); Bq=(); C=()
  fi
  "$BIN" "$MODE" "$d" "${common[@]}" "${A[@]}" --segment-rows 50 --max-entries 200 >/dev/null 2>&1 & pa=$!
  "$BIN" "$MODE" "$d" "${common[@]}" "${Bq[@]}" --segment-rows 40 --max-entries 150 >/dev/null 2>&1 & pb=$!
  "$BIN" "$MODE" "$d" "${common[@]}" "${C[@]}" --segment-rows 64 --max-entries 100 >/dev/null 2>&1 & pc=$!
  if [ "$KILL" = 1 ]; then sleep "0.0$((RANDOM % 9 + 1))"; kill -9 $pc 2>/dev/null; fi
  wait $pa $pb $pc 2>/dev/null
  "$BIN" checkpoint "$d" >/dev/null 2>"$tmp/f" || { bad=$((bad + 1)); echo "run $i: final checkpoint: $(tail -1 "$tmp/f")"; }
  "$BIN" check "$d" >/dev/null 2>"$tmp/k" || { checkfail=$((checkfail + 1)); echo "run $i: check failed"; }
  n=$("$BIN" history "$d" --json 2>/dev/null | python3 -c 'import json,sys; v=[r["version"] for r in json.load(sys.stdin)]; print(len(v) if v==list(range(1,len(v)+1)) else -1)')
  [ "$n" = 300 ] || { lost=$((lost + 1)); echo "run $i: history rows $n"; }
  rm -rf "$d"
done
echo "runs=$RUNS mode=$MODE kill=$KILL final_checkpoint_failed=$bad check_failed=$checkfail history_wrong=$lost"
[ $((bad + checkfail + lost)) = 0 ]
