#!/usr/bin/env bash
# `lancever watch` at the CLI (CTest cli/watch):
#   test_watch.sh LANCEVER GEN_DATASET
# - --once on a folder of several datasets (one nested, a directory that is not one):
#   exit 0, every version recorded, log lines as text and as JSON (one object per line);
# - --once where a version's manifest is gone: exit 3, a "missed" line, history's gap;
# - --shard I/N: the shards of a folder partition its tables;
# - a running watch, new versions, SIGTERM before any flush was due (--flush 1h): exit 0 and
#   the versions recorded (the stop flushed them);
# - a running watch killed with SIGKILL after a flush, the flushed versions' manifests then
#   deleted (a cleanup), new versions written: a restarted watch --once records all of them;
# - usage errors (exit 2) and a target that does not exist (exit 1).
# Datasets are synthetic (bench/gen_dataset).  Waits are bounded polls of the log, not timings.
set -u
LV=${1:?usage: test_watch.sh LANCEVER GEN_DATASET}
GEN=${2:?usage: test_watch.sh LANCEVER GEN_DATASET}
T=$(mktemp -d "${TMPDIR:-/tmp}/lv-watch-cli.XXXXXX")
PID=
trap '[ -n "$PID" ] && kill -9 $PID 2>/dev/null; rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
expect() { local name=$1; shift; if "$@"; then ok; else bad "$name: '$*' is false"; fi; }

gen() { "$GEN" "$1" --versions "$2" --fragments 1 ${3:+--start $3} >/dev/null 2>&1 || bad "gen $*"; }
# recorded DS: the number of versions history records (rows), and no gap warning
recorded() { "$LV" history "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
# wait_log FILE REGEX: until the log matches (at most 30 s)
wait_log() {
	for _ in $(seq 300); do grep -Eq "$2" "$1" && return 0; sleep 0.1; done
	echo "  (log: $(tail -5 "$1"))"
	return 1
}

# ---- --once on a folder ----
DB=$T/db
gen "$DB/a.lance" 3
gen "$DB/b.lance" 2
gen "$DB/nested/c.lance" 4
mkdir -p "$DB/not-a-table" && echo x >"$DB/not-a-table/readme.txt"
"$LV" watch "$DB" --once >"$T/out" 2>"$T/err"
st=$?
expect "once: exit 0" [ "$st" = 0 ]
expect "once: stdout empty" [ ! -s "$T/out" ]
expect "once: a.lance recorded" [ "$(recorded "$DB/a.lance")" = 3 ]
expect "once: nested/c.lance recorded" [ "$(recorded "$DB/nested/c.lance")" = 4 ]
expect "once: checkpoint of b" [ -f "$DB/b.lance/_checkpoints/00000000000000000002.lance" ]
expect "once: 3 discovered" [ "$(grep -c ' discovered ' "$T/err")" = 3 ]
expect "once: start and stop lines" grep -Eq 'info stop: stopped: 9 captured, 0 missed' "$T/err"
expect "once: no table for not-a-table" bash -c "! grep -q not-a-table '$T/err'"
# again, JSON: nothing new, every line one JSON object
"$LV" watch "$DB" --once --log-format json 2>"$T/err"
st=$?
expect "once json: exit 0" [ "$st" = 0 ]
expect "once json: lines parse" python3 -c '
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
kinds = [e["event"] for e in events]
assert kinds[0] == "start" and kinds[-1] == "stop", kinds
assert "captured" not in kinds and "flush" not in kinds, kinds
assert all({"time", "level", "event", "table", "message"} <= set(e) for e in events)
assert events[-1]["captured"] == 0 and events[-1]["missed"] == 0
' "$T/err"

# ---- a missed version: exit 3 ----
gen "$T/m.lance" 5
rm "$T/m.lance/_versions/18446744073709551612.manifest" # version 3
"$LV" watch "$T/m.lance" --once 2>"$T/err"
st=$?
expect "missed: exit 3" [ "$st" = 3 ]
expect "missed: a missed line" grep -Eq 'warn missed \[\.\]: missed 1 version' "$T/err"
"$LV" history "$T/m.lance" >/dev/null 2>"$T/herr"
expect "missed: history names the gap" grep -q 'version 3' "$T/herr"

# ---- --shard: the shards partition the folder ----
for i in 0 1 2; do
	rm -rf "$T/s$i" && cp -r "$DB" "$T/s$i" && rm -rf "$T/s$i"/*/_checkpoints "$T/s$i"/nested/*/_checkpoints
	"$LV" watch "$T/s$i" --once --shard "$i/3" --log-format json 2>"$T/shard$i" || bad "shard $i/3: exit $?"
done
expect "shard: partition" python3 -c '
import json, sys
seen = []
for f in sys.argv[1:]:
    seen += [json.loads(l)["table"] for l in open(f) if json.loads(l)["event"] == "discovered"]
assert sorted(seen) == ["a.lance", "b.lance", "nested/c.lance"], seen
' "$T/shard0" "$T/shard1" "$T/shard2"

# ---- SIGTERM: flush and exit 0 ----
gen "$T/r.lance" 2
"$LV" watch "$T/r.lance" --flush 1h --min-interval 10ms --max-interval 50ms 2>"$T/run" &
PID=$!
wait_log "$T/run" 'captured \[\.\]: captured 2' || bad "sigterm: first capture"
gen "$T/r.lance" 3 3
wait_log "$T/run" 'captured .*newest 5' || bad "sigterm: capture of 3..5"
expect "sigterm: nothing flushed yet" [ ! -e "$T/r.lance/_checkpoints" ]
kill -TERM $PID
wait $PID
st=$?
PID=
expect "sigterm: exit 0" [ "$st" = 0 ]
expect "sigterm: flush line" grep -q 'flushed 5 records through version 5' "$T/run"
expect "sigterm: stop line" grep -q 'stopped: 5 captured, 0 missed' "$T/run"
expect "sigterm: recorded" [ "$(recorded "$T/r.lance")" = 5 ]

# ---- SIGKILL after a flush, a cleanup, a restart: nothing flushed is lost ----
gen "$T/k.lance" 3
"$LV" watch "$T/k.lance" --flush 10ms --min-interval 10ms --max-interval 50ms 2>"$T/run" &
PID=$!
wait_log "$T/run" 'flushed 3 records through version 3' || bad "kill: first flush"
gen "$T/k.lance" 2 4
wait_log "$T/run" 'through version 5' || bad "kill: second flush"
kill -9 $PID
wait $PID 2>/dev/null
PID=
python3 - "$T/k.lance/_versions" <<'PY'
import os, sys
d = sys.argv[1]
for v in (1, 2, 3, 4):  # a cleanup keeps only the latest manifest
    p = os.path.join(d, "%020d.manifest" % ((1 << 64) - 1 - v))
    if os.path.exists(p):
        os.remove(p)
PY
gen "$T/k.lance" 2 6
"$LV" watch "$T/k.lance" --once 2>"$T/err"
st=$?
expect "restart: exit 0" [ "$st" = 0 ]
expect "restart: 7 recorded" [ "$(recorded "$T/k.lance")" = 7 ]
"$LV" history "$T/k.lance" >/dev/null 2>"$T/herr"
expect "restart: no gap" bash -c "! grep -q 'no record' '$T/herr'"

# ---- usage errors and a missing target ----
for args in "--shard 3/3" "--shard x" "--log-format xml" "--min-interval 5s --max-interval 1s" \
	"--threads 0" "--flush soon"; do
	# shellcheck disable=SC2086
	"$LV" watch "$DB" --once $args >/dev/null 2>"$T/err"
	st=$?
	expect "usage $args: exit 2" [ "$st" = 2 ]
done
"$LV" watch >/dev/null 2>&1
expect "no target: exit 2" [ $? = 2 ]
"$LV" watch "$T/does-not-exist" --once 2>"$T/err"
st=$?
expect "missing target: exit 1" [ "$st" = 1 ]
expect "missing target: named" grep -q 'does-not-exist: does not exist' "$T/err"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
