#!/usr/bin/env bash
# history --format csv|arrow stream in bounded memory (issue 29): on 200,000 recorded versions
# (bench/gen_dataset), the peak RSS of each (bench/rusage) stays under 32 MB (the list-building
# code held 146 MB here, 615 MB at 1,000,000; --json's peak, the former yardstick at twice it,
# fell from ~21 MB to ~7 MB when a buffer's first reservation (lv__realloc of NULL) began to
# reuse the block cache's freed blocks, while csv and arrow are 13-20 MB); the outputs hold every
# version, the Arrow stream ends with its end-of-stream marker and names the gaps of a history
# with a missing segment in its schema, whose warnings still reach stderr.
#   test_stream.sh LANCEVER GEN_DATASET RUSAGE
# LV_SANITIZED=ON (an ASan build: its quarantine holds freed memory) checks all but the peaks.
set -u
lv=$1 gen=$2 rusage=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
N=200000
"$gen" "$tmp/h" --start $((N - 9)) --versions 10 --recorded --fragments 1 >/dev/null 2>&1 ||
  { echo "FAIL: gen_dataset"; exit 1; }

peak() { # peak RSS (KB) of lancever history "$@", its stdout in $tmp/out
  local j
  j=$("$rusage" --repeat 1 --warmup 0 --stdout "$tmp/out" -- "$lv" history "$tmp/h" "$@") ||
    { fail "history $* exited non-zero"; echo 0; return; }
  sed -n 's/.*"maxrss_kb":\([0-9]*\).*/\1/p' <<<"$j"
}
json=$(peak --json)
njson=$(grep -o '"version":' "$tmp/out" | wc -l)
[ "$njson" -eq $N ] || fail "--json: $njson records, want $N"
csv=$(peak --format csv)
lines=$(wc -l <"$tmp/out")
[ "$lines" -eq $((N + 1)) ] || fail "csv: $lines lines, want $((N + 1))"
[ "$(sed -n 2p "$tmp/out" | cut -d, -f1)" = 1 ] || fail "csv: first row is not version 1"
[ "$(tail -n 1 "$tmp/out" | cut -d, -f1)" = $N ] || fail "csv: last row is not version $N"
arrow=$(peak --format arrow)
[ "$(tail -c 8 "$tmp/out" | od -An -tx1 | tr -d ' \n')" = ffffffff00000000 ] ||
  fail "arrow: no end-of-stream marker"
echo "peak RSS: --json ${json} KB, --format csv ${csv} KB, --format arrow ${arrow} KB"
if [ "${LV_SANITIZED:-OFF}" != ON ]; then
  for f in csv arrow; do
    kb=${!f}
    [ "$kb" -le 32768 ] || fail "--format $f peak ${kb} KB > 32 MB (--json: ${json} KB)"
  done
fi

# a missing segment: a gap, warned on stderr, named in the Arrow schema before the rows
seg=$(ls "$tmp/h/_checkpoints/archive" | sed -n 2p)
rm "$tmp/h/_checkpoints/archive/$seg"
first=$((10#${seg%%-*})) last=${seg#*-}
last=$((10#${last%.lance}))
"$lv" history "$tmp/h" --format arrow >"$tmp/out" 2>"$tmp/err" || fail "arrow with a gap: exit $?"
grep -q "versions $first-$last: no record" "$tmp/err" || fail "arrow: no gap warning: $(cat "$tmp/err")"
grep -aq "\[\[$first,$last\]\]" "$tmp/out" || fail "arrow: schema lacks lancever:gaps [[$first,$last]]"
"$lv" history "$tmp/h" --format csv >"$tmp/out" 2>"$tmp/err" || fail "csv with a gap: exit $?"
grep -q "versions $first-$last: no record" "$tmp/err" || fail "csv: no gap warning"
lines=$(wc -l <"$tmp/out")
[ "$lines" -eq $((N + 1 - (last - first + 1))) ] || fail "csv with a gap: $lines lines"
# --since and --limit stream too; --reverse is still refused (exports are in version order)
"$lv" history "$tmp/h" --format csv --since 150000 --limit 5 >"$tmp/out" 2>/dev/null || fail "csv --since --limit"
[ "$(cut -d, -f1 "$tmp/out" | tr '\n' ' ')" = "version $((N - 4)) $((N - 3)) $((N - 2)) $((N - 1)) $N " ] ||
  fail "csv --since --limit: $(cut -d, -f1 "$tmp/out" | tr '\n' ' ')"
"$lv" history "$tmp/h" --format csv --reverse >/dev/null 2>&1
[ $? -eq 2 ] || fail "--reverse with csv is not a usage error"

[ $fails -eq 0 ] && echo "test_stream: all passed" || { echo "test_stream: $fails failure(s)"; exit 1; }
