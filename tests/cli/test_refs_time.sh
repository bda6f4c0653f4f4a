#!/usr/bin/env bash
# Issue 29's CLI rows: the one TIME/DURATION syntax, refs wherever a VERSION is taken, the
# list options of versions/history (--limit, --reverse, --since, --until) and the JSON
# records (LanceDB's listVersions() superset, tags, one name per field).
#
#   test_refs_time.sh LANCEVER DEMO_DATASET
#
# Each row runs one command on a scratch copy of DEMO_DATASET (12 versions, tags indexed=6
# and compacted=10); a row passes when the exit status is the expected one and stdout and
# stderr match.  Prints "N passed, M failed" and exits 1 on any failure.
set -u
LV=${1:?usage: test_refs_time.sh LANCEVER DEMO_DATASET}
SRC=${2:?usage: test_refs_time.sh LANCEVER DEMO_DATASET}
T=$(mktemp -d "${TMPDIR:-/tmp}/lv-refs-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
cp -r "$SRC" "$T/ds.lance"
DS=$T/ds.lance
pass=0
fail=0
NL=$'\n'

# row NAME STATUS STDOUT STDERR ARGV...  (lancever ARGV)
#   STDOUT, STDERR: '-' = must be empty, '*' = anything, else an extended regex that must
#   match somewhere in the whole output.
row() {
	local name=$1 want=$2 out_re=$3 err_re=$4 why='' out err st
	shift 4
	"$LV" "$@" >"$T/stdout" 2>"$T/stderr" </dev/null
	st=$?
	out=$(cat "$T/stdout")
	err=$(cat "$T/stderr")
	[ "$st" = "$want" ] || why="exit status $st, expected $want"
	for pair in "stdout:$out_re" "stderr:$err_re"; do
		local which=${pair%%:*} re=${pair#*:} text
		[ "$which" = stdout ] && text=$out || text=$err
		[ -n "$why" ] && break
		case $re in
		'*') ;;
		-) [ -z "$text" ] || why="$which should be empty" ;;
		*) [[ $text =~ $re ]] || why="$which does not match /$re/" ;;
		esac
	done
	if [ -z "$why" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		printf 'FAIL %s: %s\n  argv:' "$name" "$why"
		printf " '%s'" "$@"
		printf '\n  stdout: %s\n  stderr: %s\n' "${out:0:400}" "${err:0:400}"
	fi
}
# versions_of ARGV...: the VERSION column of a versions/history table, one line, spaces between
versions_of() { "$LV" "$@" 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { printf "%s%s", s, $1; s = " " }'; }
# same NAME WANT ARGV...: versions_of ARGV is exactly WANT
same() {
	local name=$1 want=$2 got
	shift 2
	got=$(versions_of "$@")
	if [ "$got" = "$want" ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); printf 'FAIL %s: versions "%s", expected "%s"\n' "$name" "$got" "$want"; fi
}

# ---- one TIME and DURATION syntax ----
row "asof: a date without a zone is echoed as written" 1 - \
	"^lancever: no version committed at or before 2026-12-02 \(LV_ENOTFOUND\)$" asof "$DS" 2026-12-02
row "asof --strict echoes the user's form too" 1 - "no version committed before @0 " asof "$DS" @0 --strict
row "asof @ms" 0 '^version 3 ' - asof "$DS" @1796232073003
row "asof ms (the bare number)" 0 '^version 3 ' - asof "$DS" 1796232073003
row "asof ISO with an offset" 0 '^version 3 ' - asof "$DS" 2026-12-02T19:21:13.003+02:00
row "asof '3 days ago' (relative to now)" 0 '^version 12 ' - asof "$DS" "0s ago"
row "asof now" 0 '^version 12 ' - asof "$DS" now
row "asof --json: query as given" 0 '^\{"query":"2026-12-02 17:21:13.003","query_millis":1796232073003,' - \
	asof "$DS" "2026-12-02 17:21:13.003" --json
row "asof: a bad time names the forms" 2 - \
	"asof: TIME wants a time such as 2026-12-02, 2026-12-02T17:00:00Z, @1796169600000 or '3 days ago', got 'tomorrow'" \
	asof "$DS" tomorrow
row "cleanup --older-than 14days" 0 'would remove 0 of 12' - cleanup "$DS" --dry-run --older-than 14days
row "cleanup --older-than 2weeks" 0 'would remove 0 of 12' - cleanup "$DS" --dry-run --older-than 2weeks
row "cleanup --older-than '1h 30min'" 0 'would remove 9 of 12' - \
	cleanup "$DS" --dry-run --older-than "1h 30min" --no-error-if-tagged-old-versions
row "cleanup --older-than 1.5h is refused" 2 - "--older-than wants a duration such as 14days, 2weeks, 1h 30min or 36h, got '1.5h'" \
	cleanup "$DS" --dry-run --older-than 1.5h
row "expire --keep-one-per '1 hour'" 0 '*' - expire "$DS" --dry-run --keep-one-per "1 hour" --before-version 3
row "history --since @ms" 0 "^ +VERSION.*$NL +10 " - history "$DS" --since @1796232073030
row "history --since an ISO time" 0 "^ +VERSION.*$NL +10 " - history "$DS" --since 2026-12-02T17:21:13.030Z
row "history --since '10 years ago'" 0 "$NL +1 " - history "$DS" --since "10 years ago"
row "history --since: a bad time" 2 - "^lancever: --since wants .*got .next week.$" history "$DS" --since "next week"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
