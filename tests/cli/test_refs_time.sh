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

# ---- refs wherever a VERSION is taken ----
# a branch "feat" with versions 1..5 (main's first five manifests), a tag "nightly" on it
mkdir -p "$DS/tree/feat/_versions" "$DS/_refs/branches"
for n in 10 11 12 13 14; do # V2 names: u64::MAX - version, versions 5..1
	cp "$SRC/_versions/184467440737095516$n.manifest" "$DS/tree/feat/_versions/"
done
printf '{"parentBranch":null,"parentVersion":5,"createAt":1796232072991,"manifestSize":511}' \
	>"$DS/_refs/branches/feat.json"
sed -e 's/"branch": null/"branch": "feat"/' -e 's/"version": 6/"version": 4/' \
	"$SRC/_refs/tags/indexed.json" >"$DS/_refs/tags/nightly.json"
row "show TAG" 0 "^version +6$NL.*${NL}tags +indexed$NL" - show "$DS" indexed
row "show latest" 0 '^version +12' - show "$DS" latest
row "show latest~2" 0 '^version +10' - show "$DS" latest~2
row "show main:3" 0 '^version +3' - show "$DS" main:3
row "show feat:latest (another branch is opened)" 0 '^version +5' - show "$DS" feat:latest
row "show a tag on another branch: that branch's version" 0 '^version +4.*tags +nightly' - show "$DS" nightly
row "show --json: tags" 0 '"is_tagged":true,"tags":\["compacted"\],' - show "$DS" compacted --json
row "show: an unknown tag is named as typed, with the tags there" 1 - \
	"^lancever: show: 'nope': no tag 'nope' \(tags: compacted, indexed, nightly\)$" show "$DS" nope
row "show: an unknown branch" 1 - "^lancever: show: 'dev:3': no branch 'dev' \(branches: main, feat\)$" show "$DS" dev:3
row "show latest~12: beyond the first version" 1 - "'latest~12': the branch has fewer versions than that" show "$DS" latest~12
row "show: a ref's error names the ref" 1 - "^lancever: 'feat:9' \(version 9\): .*\(LV_ENOTFOUND\)$" show "$DS" feat:9
row "show: a bad ref is a usage error" 2 - "show: VERSION wants a version number, a tag, BRANCH:VERSION, latest or latest~N, got 'latest~x'" show "$DS" latest~x
row "show: BRANCH: with a tag is refused" 2 - "got 'feat:nightly'" show "$DS" feat:nightly
row "diff TAG latest" 0 'v6 +v12' - diff "$DS" indexed latest
row "diff across branches is refused" 1 - "diff: 'feat:3' is on branch feat, but this works on branch main" diff "$DS" 1 feat:3
row "diff on one other branch" 0 'v2 +v4' - diff "$DS" feat:2 nightly
row "cleanup --before-version TAG (5 is feat's base: kept)" 0 'would remove 4 of 12' - cleanup "$DS" --dry-run --before-version indexed
row "cleanup --versions with refs (10 is tagged: kept)" 0 'would remove 4 of 12' "version 10 \('compacted'\) was not selected" \
	cleanup "$DS" --dry-run --versions 1,2-3,latest~1,compacted --no-error-if-tagged-old-versions
row "cleanup: a ref on another branch is refused" 1 - "cleanup: 'nightly' is on branch feat, but this works on branch main \(choose it with --branch\)" \
	cleanup "$DS" --dry-run --before-version nightly
row "cleanup --branch feat --before-version nightly" 0 'would remove 3 of 5' - \
	--branch feat cleanup "$DS" --dry-run --before-version nightly --no-checkpoint
row "expire --before-version latest~9" 0 "would remove _versions/18446744073709551614.manifest \(version 1\)$NL.*would expire 2 of 12" - \
	expire "$DS" --dry-run --before-version latest~9
row "history --since TAG" 0 "^ +VERSION.*$NL +6 .* indexed$NL +7 " - history "$DS" --since indexed
row "versions: a TAGS column with the names" 0 "TAGS$NL.*$NL +6 .*CreateIndex .* indexed$NL" - versions "$DS"
row "versions --json: tags" 0 '"version":10,.*"tags":\["compacted"\]' - versions "$DS" --json
row "--branch feat versions: that branch's tags" 0 "$NL +4 .* nightly$NL" - --branch feat versions "$DS"
row "<root>/tree/feat versions: that branch's tags too" 0 "$NL +4 .* nightly$NL" - versions "$DS/tree/feat"
row "<root>/tree/feat versions --json: tags of that branch only" 0 '"version":4,.*"tags":\["nightly"\]' - versions "$DS/tree/feat" --json

# ---- dry-run and explain listings name each manifest's version ----
row "cleanup --dry-run: the version of a manifest" 0 "_versions/18446744073709551614\.manifest \(version 1\)  \(old version\)" - \
	cleanup "$DS" --dry-run --before-version 3
row "cleanup --dry-run --json: version per file" 0 '"path":"_versions/18446744073709551613.manifest","kind":"manifest","size_bytes":[0-9]+,"version":2,' - \
	cleanup "$DS" --dry-run --before-version 3 --json
row "cleanup --explain: version per candidate" 0 "_versions/18446744073709551613\.manifest \(version 2\)" - \
	cleanup "$DS" --explain --before-version 3
row "cleanup --explain --json: version per candidate" 0 '"size_bytes":[0-9]+,"version":1\}' - \
	cleanup "$DS" --explain --before-version 3 --json

# ---- versions and history: --limit, --reverse, --since, --until alike ----
for cmd in versions history; do
	same "$cmd (default: oldest first)" "1 2 3 4 5 6 7 8 9 10 11 12" $cmd "$DS"
	same "$cmd --limit 3 (the newest 3)" "10 11 12" $cmd "$DS" --limit 3
	same "$cmd --reverse" "12 11 10 9 8 7 6 5 4 3 2 1" $cmd "$DS" --reverse
	same "$cmd --reverse --limit 2" "12 11" $cmd "$DS" --reverse --limit 2
	same "$cmd --since 4 --until 6" "4 5 6" $cmd "$DS" --since 4 --until 6
	same "$cmd --since indexed --until compacted --limit 2 --reverse" "10 9" $cmd "$DS" --since indexed --until compacted --limit 2 --reverse
	same "$cmd --until latest~10" "1 2" $cmd "$DS" --until latest~10
	same "$cmd --since/--until by time" "3 4 5" $cmd "$DS" --since 2026-12-02T17:21:13.003Z --until @1796232073012
	same "$cmd --until TIME --limit 1" "3" $cmd "$DS" --until "2026-12-02 17:21:13.005" --limit 1
	same "$cmd --since 'N days ago' (all)" "11 12" $cmd "$DS" --since "100 years ago" --limit 2
	row "$cmd --limit 0" 2 - "--limit wants an integer in 1\.\.4294967295, got '0'" $cmd "$DS" --limit 0
	row "$cmd --since nope: the tag is named" 1 - "$cmd: 'nope': no tag 'nope'" $cmd "$DS" --since nope
	row "$cmd --until: a bad time" 2 - "^lancever: --until wants a version, a tag or a time .*got '2026-13-01'$" $cmd "$DS" --until 2026-13-01
	row "$cmd --json --reverse --limit 1" 0 '^\[\{"version":12,' - $cmd "$DS" --json --reverse --limit 1
done
row "versions --reverse --format csv is refused" 2 - "exports in version order: --reverse is for the table and --json" versions "$DS" --reverse --format csv
row "history --reverse --format arrow is refused" 2 - "exports in version order" history "$DS" --reverse --format arrow
row "history --since --limit --format csv" 0 "^version,[^$NL]*$NL""11,[^$NL]*$NL""12,[^$NL]*\$" - history "$DS" --since 5 --limit 2 --format csv
row "history --until TAG --limit --format csv" 0 "^version,[^$NL]*$NL""5,[^$NL]*$NL""6,[^$NL]*\$" - history "$DS" --until indexed --limit 2 --format csv
row "versions --since/--until by time --format csv" 0 "^version,[^$NL]*$NL""3,[^$NL]*$NL""4,[^$NL]*$NL""5,[^$NL]*\$" - \
	versions "$DS" --since 2026-12-02T17:21:13.003Z --until @1796232073012 --format csv
# an Arrow IPC stream starts with the continuation marker
if [ "$("$LV" versions "$DS" --limit 1 --format arrow | head -c 4 | od -An -tx1 | tr -d ' ')" = ffffffff ]; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL versions --limit 1 --format arrow: not an Arrow IPC stream"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
