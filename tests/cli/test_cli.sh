#!/usr/bin/env bash
# CLI table test: argv -> exit status, stdout shape, stderr pattern.
#
#   test_cli.sh LANCEVER DEMO_DATASET [WRITE_LANCEFILE]
#
# LANCEVER is the lancever binary, DEMO_DATASET a dataset directory (demo/demo.lance) that is
# copied to a scratch directory first (nothing is written to the original), WRITE_LANCEFILE
# the bench/write_lancefile test-file writer (its rows are skipped when not given).
# Each row runs one command; a row passes when the exit status is the expected one and
# stdout and stderr match.  Prints "N passed, M failed" and exits 1 on any failure.
set -u
LV=${1:?usage: test_cli.sh LANCEVER DEMO_DATASET [WRITE_LANCEFILE]}
SRC=${2:?usage: test_cli.sh LANCEVER DEMO_DATASET [WRITE_LANCEFILE]}
WL=${3:-}
# (some rows run from another directory: a relative LANCEVER is made absolute)
[[ $LV == */* && $LV != /* ]] && LV=$PWD/$LV
T=$(mktemp -d "${TMPDIR:-/tmp}/lv-cli-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
cp -r "$SRC" "$T/ds.lance"
DS=$T/ds.lance
pass=0
fail=0

# run NAME STATUS STDOUT STDERR DEST CMD ARGV...
#   STDOUT, STDERR: '-' = must be empty, '*' = anything, else an extended regex that must
#   match somewhere in the whole output.  DEST is where stdout goes (a file, or /dev/full).
run() {
	local name=$1 want=$2 out_re=$3 err_re=$4 dest=$5
	shift 5
	local out='' err st why=''
	"$@" >"$dest" 2>"$T/stderr" </dev/null
	st=$?
	[ "$dest" != /dev/full ] && out=$(cat "$dest")
	err=$(cat "$T/stderr")
	[ "$st" = "$want" ] || why="exit status $st, expected $want"
	if [ -z "$why" ]; then
		case $out_re in
		'*') ;;
		-) [ -z "$out" ] || why="stdout should be empty" ;;
		*) [[ $out =~ $out_re ]] || why="stdout does not match /$out_re/" ;;
		esac
	fi
	if [ -z "$why" ]; then
		case $err_re in
		'*') ;;
		-) [ -z "$err" ] || why="stderr should be empty" ;;
		*) [[ $err =~ $err_re ]] || why="stderr does not match /$err_re/" ;;
		esac
	fi
	if [ -z "$why" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		printf 'FAIL %s: %s\n  argv:' "$name" "$why"
		printf " '%s'" "${@:2}"
		printf '\n  stdout: %s\n  stderr: %s\n' "${out:0:300}" "${err:0:300}"
	fi
}
# row NAME STATUS STDOUT STDERR ARGV...   (lancever ARGV, stdout to a file)
row() { local n=$1 s=$2 o=$3 e=$4; shift 4; run "$n" "$s" "$o" "$e" "$T/stdout" "$LV" "$@"; }
# full NAME STATUS STDERR ARGV...   (lancever ARGV > /dev/full)
full() { local n=$1 s=$2 e=$3; shift 3; run "$n" "$s" '*' "$e" /dev/full "$LV" "$@"; }
# check NAME CONDITION-COMMAND...   (a post-condition, e.g. a file left alone)
check() {
	local n=$1
	shift
	if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $n: '$*' is false"; fi
}

USAGE=-  # usage errors print nothing on stdout
# q S: S as a regex matching itself (for values like '+1' inside an expected message)
q() { printf '%s' "$1" | sed 's/[][\\.^$*+?(){}|]/\\&/g'; }
NONNEG="wants a non-negative integer \(at most 18446744073709551615\), got"

# ---- the happy paths still work ----
row "versions" 0 'VERSION +TIMESTAMP' - versions "$DS"
row "versions --threads 4" 0 '^ +VERSION' - versions "$DS" --threads 4
row "versions --threads 256" 0 '^ +VERSION' - versions "$DS" --threads 256
row "show 1" 0 'version +1' - show "$DS" 1
row "show 007" 0 'version +7' - show "$DS" 007
row "diff 1 2" 0 'rows +5 +10' - diff "$DS" 1 2
row "asof ISO" 0 '^version 3 ' - asof "$DS" 2026-12-02T17:21:13.003Z
row "asof ms" 0 '^version 3 ' - asof "$DS" 1796232073003
row "asof ms before everything" 1 - 'no version committed' asof "$DS" 0
row "show 2^64-1 (parses, not recorded)" 1 - 'neither live nor recorded' show "$DS" 18446744073709551615
row "cleanup --before-version 3 --dry-run" 0 'would remove 2 of 12' - cleanup "$DS" --dry-run --before-version 3
row "cleanup --retain-versions 2 --dry-run" 0 'would remove' - cleanup "$DS" --dry-run --retain-versions 2 --no-error-if-tagged-old-versions
# issue 16: Lance's exact version list and the explanation
row "cleanup --versions 1,2 --dry-run" 0 'would remove 2 of 12' - cleanup "$DS" --dry-run --versions 1,2
row "cleanup --versions: a kept version is warned about" 0 'would remove 1 of 12' 'warning: version 12 was not selected' cleanup "$DS" --dry-run --versions 2,12
row "cleanup --versions 1,x (x: a tag that is not there)" 1 - "cleanup: 'x': no tag 'x' \(tags: " cleanup "$DS" --dry-run --versions 1,x
row "cleanup --versions 5-2" 2 $USAGE "--versions: bad item '5-2'" cleanup "$DS" --dry-run --versions 5-2
row "cleanup --versions 0" 2 $USAGE "--versions: bad item '0'" cleanup "$DS" --dry-run --versions 0
row "cleanup --versions 1,,2" 2 $USAGE "--versions: bad list" cleanup "$DS" --dry-run --versions 1,,2
cp -r "$SRC" "$T/hint.lance"
printf 'nope' > "$T/hint.lance/_versions/latest_version_hint.json"
row "cleanup: a version hint that does not parse stops it" 1 - 'version hint _versions/latest_version_hint.json: invalid JSON.*refusing to remove versions' cleanup "$T/hint.lance" --before-version 3
row "expire: a version hint that does not parse stops it" 1 - 'version hint _versions/latest_version_hint.json: invalid JSON.*refusing to remove versions' expire "$T/hint.lance" --before-version 3
row "cleanup --explain --json" 0 '^\{"read_version":12,"stats":\{"bytes_removed":[0-9]+,"old_versions":2,.*"candidate_file_limit":1000,"referenced_branches":\[\],"warnings":\[\]\}$' - cleanup "$DS" --explain --json --versions 1-2
row "cleanup --explain (text)" 0 '^read version 12: a cleanup would remove 2 of 12 versions' - cleanup "$DS" --explain --versions 1-2
row "cleanup --explain --max-candidates 1" 0 '"candidate_files_truncated":true,"candidate_file_limit":1,' - cleanup "$DS" --explain --json --versions 1-2 --max-candidates 1
row "cleanup --explain --list" 2 $USAGE "--explain prints its own report" cleanup "$DS" --explain --list
row "cleanup --max-candidates without --explain" 2 $USAGE "--max-candidates goes with --explain" cleanup "$DS" --dry-run --max-candidates 5
row "checkpoint --max-entries 100 --max-files 3" 0 'versions' - checkpoint "$DS" --max-entries 100 --max-files 3
# a Lance file lancever reads (the demo's data files hold doubles, which inspect does not decode)
DATAFILE=$(ls "$DS"/_checkpoints/*.lance 2>/dev/null | head -1)
DATAFILE=${DATAFILE:-$T/no-checkpoint-was-written.lance}
# inspect: Lance 12 files (format 2.2), a file with nested columns (schema shown, the
# columns it cannot decode named, exit 1), a manifest (named as one)
FIX=$(cd "$(dirname "$0")/../fixtures/lance12" && pwd)
MANIFEST=$(ls "$DS"/_versions/*.manifest | head -1)
row "inspect --json a 2.2 file" 0 '"version":"2.2"' - inspect --json "$FIX/numeric_2_2.lance"
row "inspect a 2.2 file with vectors" 0 'fixed_size_list:float:4' - inspect "$FIX/vectors_2_2.lance"
row "inspect nested columns: schema" 1 'tags +list +nullable.    item +string' "column 'tags': nested type 'list' is not supported" inspect "$FIX/nested_2_2.lance"
row "inspect --json nested columns: error in schema" 1 '"error":"file ' 'not supported' inspect --json "$FIX/nested_2_2.lance"
row "inspect a manifest" 1 - 'is a Lance manifest .* not a data file' inspect "$MANIFEST"
row "--help mentions --quiet" 0 'silence warnings on stderr' - --help
row "-q is accepted" 0 '^ +VERSION' - -q versions "$DS"
row "--quiet is accepted anywhere" 0 '^ +VERSION' - versions "$DS" --quiet

# ---- one strict number rule: digits only, no sign/space/empty/0x/exponent, no overflow ----
for bad in ' -1' '-1' '+1' '' ' 1' '1 ' '1e3' '0x10' '0' '99999999999999999999999' '18446744073709551616'; do
	# (a ref that does not start with a digit is not a number: it is refused as a ref)
	want="positive integer \(at most 18446744073709551615\)"
	[[ $bad =~ ^[0-9] ]] || want="version number, a tag, BRANCH:VERSION, latest or latest~N"
	row "cleanup --before-version '$bad'" 2 $USAGE "--before-version wants a $want, got '$(q "$bad")'" \
		cleanup "$DS" --dry-run --before-version "$bad"
done
for bad in ' 1' '+1' '-1' '' '1e3' '0x10' '0' '9223372036854775808' '99999999999999999999999'; do
	row "cleanup --retain-versions '$bad'" 2 $USAGE "--retain-versions wants a positive integer \(at most 9223372036854775807\), got '$(q "$bad")'" \
		cleanup "$DS" --dry-run --retain-versions "$bad"
done
for opt in --max-entries --max-files; do
	for bad in ' 5' '+5' '' '1e3' '0x10' '99999999999999999999999'; do
		row "checkpoint $opt '$bad'" 2 $USAGE "$opt wants a positive integer \(at most 9223372036854775807\), got '$(q "$bad")'" \
			checkpoint "$DS" $opt "$bad"
		row "cleanup $opt '$bad'" 2 $USAGE "$opt wants a positive integer \(at most 9223372036854775807\), got '$(q "$bad")'" \
			cleanup "$DS" --dry-run $opt "$bad"
	done
done
for bad in ' 4' '+4' '' '0' '257' '1e3' '0x10' '18446744073709551616'; do
	row "versions --threads '$bad'" 2 $USAGE "--threads wants an integer in 1..256, got '$(q "$bad")'" versions "$DS" --threads "$bad"
done
for bad in ' 1' '+1' '-1' '' '1e3' '0x10' '99999999999999999999999' '18446744073709551616'; do
	want=$NONNEG
	[[ $bad =~ ^[0-9] ]] || want="wants a version number, a tag, BRANCH:VERSION, latest or latest~N, got"
	row "show '$bad'" 2 $USAGE "show: VERSION $want '$(q "$bad")'" show "$DS" "$bad"
	row "diff '$bad' 2" 2 $USAGE "diff: A $want '$(q "$bad")'" diff "$DS" "$bad" 2
	row "diff 1 '$bad'" 2 $USAGE "diff: B $want '$(q "$bad")'" diff "$DS" 1 "$bad"
done
for bad in ' 1796232073003' '+1796232073003' '-1' '' '1e3' '0x10' '9223372036854775808' '99999999999999999999999' garbage; do
	row "asof '$bad'" 2 $USAGE "asof: TIME" asof "$DS" "$bad"
done

# ---- usage errors are exit 2 everywhere ----
row "cleanup --older-than abc" 2 $USAGE "--older-than wants a duration" cleanup "$DS" --dry-run --older-than abc
row "cleanup --older-than ''" 2 $USAGE "--older-than wants a duration" cleanup "$DS" --dry-run --older-than ''
row "unknown command" 2 $USAGE "unknown command 'frobnicate'" frobnicate "$DS"
row "no command" 2 $USAGE "usage: lancever" 
row "cleanup unknown option" 2 $USAGE "unknown option '--bogus'" cleanup "$DS" --bogus

# ---- an option given last without its value ----
for opt in --older-than --retain-versions --before-version --max-entries --max-files; do
	row "cleanup $opt (last)" 2 $USAGE "^lancever: missing value for $opt\$" cleanup "$DS" --dry-run $opt
done
row "checkpoint --max-entries (last)" 2 $USAGE "^lancever: missing value for --max-entries\$" checkpoint "$DS" --max-entries
row "checkpoint --max-files (last)" 2 $USAGE "^lancever: missing value for --max-files\$" checkpoint "$DS" --max-files
row "versions --threads (last)" 2 $USAGE "^lancever: missing value for --threads\$" versions "$DS" --threads
row "--branch (last)" 2 $USAGE "^lancever: missing value for --branch\$" versions "$DS" --branch
row "--s3-region (last)" 2 $USAGE "^lancever: missing value for --s3-region\$" versions "$DS" --s3-region
# storage options reach the library as one bag: where-keys are ignored for a local path, others named
row "--s3-* flags on a local path are ignored" 0 '^ *VERSION' - --s3-region r --s3-endpoint http://x --s3-allow-http versions "$DS"
row "--storage-option on a local path is named" 1 - "^lancever: storage option 'aws_access_key_id' given for a local path, which takes no storage options \(LV_EINVALID\)\$" --storage-option aws_access_key_id=SECRET versions "$DS"

# ---- every command checks that its output was written ----
WERR="^lancever: error writing output: No space left on device\$"
full "versions > /dev/full" 1 "$WERR" versions "$DS"
full "versions --json > /dev/full" 1 "$WERR" versions "$DS" --json
full "history > /dev/full" 1 "$WERR" history "$DS"
full "show > /dev/full" 1 "$WERR" show "$DS" 3
full "diff > /dev/full" 1 "$WERR" diff "$DS" 1 12
full "asof > /dev/full" 1 "$WERR" asof "$DS" 1796232073003
full "info > /dev/full" 1 "$WERR" info "$DS"
full "tags > /dev/full" 1 "$WERR" tags "$DS" --json
full "checkpoint > /dev/full" 1 "$WERR" checkpoint "$DS"
full "cleanup --dry-run > /dev/full" 1 "$WERR" cleanup "$DS" --dry-run --before-version 3
full "inspect > /dev/full" 1 "$WERR" inspect "$DATAFILE"
full "inspect --csv > /dev/full" 1 "$WERR" inspect --csv "$DATAFILE"
full "--help > /dev/full" 1 "$WERR" --help
full "--version > /dev/full" 1 "$WERR" --version
# (anchored at both ends: the one message, no write error added)
full "a usage error stays exit 2" 2 "^lancever: --threads wants an integer in 1\.\.256, got 'x'\$" versions "$DS" --threads x
full "a failure stays one message" 1 "^lancever: version 99 is neither live nor recorded in a checkpoint \(LV_ENOTFOUND\)\$" show "$DS" 99

# ---- a reader that went away (issue 24): quietly, as SIGPIPE would, also when it is ignored ----
# closed MODE ARGV...: lancever with stdout a pipe whose reader is already gone (deterministic),
# SIGPIPE in MODE (default, ignore, block); prints "STATUS STDERR" (STATUS -13: killed by SIGPIPE)
closed() {
	"$PY" -c 'import os, signal, subprocess, sys
mode = sys.argv[1]
r, w = os.pipe()
os.close(r)
def pre():
    signal.signal(signal.SIGPIPE, signal.SIG_IGN if mode == "ignore" else signal.SIG_DFL)
    if mode == "block":
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPIPE})
p = subprocess.run(sys.argv[2:], stdout=w, stderr=subprocess.PIPE, preexec_fn=pre, restore_signals=False)
print(p.returncode, p.stderr.decode(errors="replace"), end="")' "$@"
}
PY=${PY:-/usr/bin/python3}
for args in "versions $DS" "versions $DS --json" "history $DS" "history $DS --json" "history $DS --format csv" \
	"history $DS --format arrow" "tags $DS" "show $DS 3" "info $DS" "cleanup $DS --dry-run --before-version 3" "--help"; do
	# shellcheck disable=SC2086
	got=$(closed ignore "$LV" $args)
	check "SIGPIPE ignored, $args | (closed): killed by SIGPIPE, nothing on stderr ($got)" test "$got" = "-13 "
	# shellcheck disable=SC2086
	got=$(closed block "$LV" $args)
	check "SIGPIPE blocked, $args | (closed): exit 141, nothing on stderr ($got)" test "$got" = "141 "
done
# shellcheck disable=SC2086
got=$(closed default "$LV" versions "$DS")
check "SIGPIPE default: killed by it, as before ($got)" test "$got" = "-13 "
# the shell's view: a reader that closed its end before lancever starts, SIGPIPE ignored by
# the shell
(
	trap '' PIPE
	{ sleep 0.5; exec "$LV" history "$DS" 2>"$T/pipe.err"; } | { exec 0<&-; sleep 1; }
	echo "${PIPESTATUS[0]}" >"$T/pipe.st"
)
check "(trap '' PIPE; lancever history DS | reader gone): status 141 ($(cat "$T/pipe.st"))" test "$(cat "$T/pipe.st")" = 141
check "... and nothing on stderr ($(head -c 200 "$T/pipe.err"))" test ! -s "$T/pipe.err"
full "a full disk is still an error, not a pipe" 1 "^lancever: error writing output: No space left on device\$" history "$DS"

# ---- --format json|table|csv|arrow (versions, history, tags, cleanup) ----
row "history --format csv" 0 '^version,timestamp_millis,total_fragments,.*,branch,num_indices,tags
1,1796232072991,' - history "$DS" --format csv
row "history --format csv: tag names in the tags column" 0 '
6,.*,indexed
' - history "$DS" --format csv
row "versions --format csv: tag names in the tags column" 0 '
10,.*,compacted
' - versions "$DS" --format csv
row "versions --format=csv" 0 '^version,' - versions "$DS" --format=csv
row "tags --format csv" 0 '^kind,name,version,branch,manifest_size,created_at
tag,' - tags "$DS" --format csv
row "cleanup --dry-run --format csv" 0 '^path,kind,size_bytes,version,reason
' - cleanup "$DS" --dry-run --before-version 3 --format csv
"$LV" history "$DS" --format arrow >"$T/h.arrows" 2>"$T/stderr"
check "history --format arrow: exit 0, nothing on stderr" test $? = 0 -a ! -s "$T/stderr"
check "--format arrow starts with an IPC continuation marker" test "$(head -c 4 "$T/h.arrows" | od -An -tx1 | tr -d ' ')" = ffffffff
check "--format arrow ends with the end-of-stream marker" test "$(tail -c 8 "$T/h.arrows" | od -An -tx1 | tr -d ' ')" = ffffffff00000000
row "--format json is --json" 0 '^\[\{"version":1,' - history "$DS" --format json
row "--format table" 0 '^ +VERSION +TIMESTAMP' - history "$DS" --format table
row "--format xml" 2 $USAGE "^lancever: --format wants json, table, csv, arrow or html, got 'xml'\$" history "$DS" --format xml
row "--format (last)" 2 $USAGE "^lancever: missing value for --format\$" history "$DS" --format
row "--format twice" 2 $USAGE "^lancever: --format given twice" history "$DS" --format csv --format arrow
row "--json with --format csv" 2 $USAGE "^lancever: history: --json and --format csv contradict each other\$" history "$DS" --json --format csv
row "show --format" 2 $USAGE "^lancever: show: unknown option '--format'" show "$DS" 1 --format csv
full "history --format csv > /dev/full" 1 "$WERR" history "$DS" --format csv
full "history --format arrow > /dev/full" 1 "$WERR" history "$DS" --format arrow

# ---- inspect never writes ----
row "inspect reads" 0 'rows:' - inspect "$DATAFILE"
row "inspect --write-test is gone" 2 $USAGE "inspect: unknown option '--write-test'" inspect --write-test "$T/new.lance" --rows 3
check "inspect --write-test creates nothing" test ! -e "$T/new.lance"
printf keep >"$T/existing.lance"
printf keep >"$T/existing.ref"
row "inspect --write-test EXISTING" 2 $USAGE "unknown option '--write-test'" inspect --write-test "$T/existing.lance" --rows 3
check "inspect --write-test leaves an existing file alone" cmp -s "$T/existing.lance" "$T/existing.ref"

# ---- only regular files are read, sizes checked first (issue 13) ----
mkfifo "$T/fifo"
run "inspect a FIFO does not hang" 1 - "$T/fifo: not a regular file" "$T/stdout" timeout 20 "$LV" inspect "$T/fifo"
run "inspect /dev/zero is refused, not read" 1 - "/dev/zero: not a regular file" "$T/stdout" timeout 20 "$LV" inspect /dev/zero
truncate -s 50G "$T/sparse.lance"
row "inspect a 50 GB file is refused before reading" 1 - "sparse.lance: 53687091200 bytes; inspect reads files of at most" inspect "$T/sparse.lance"
rm -f "$T/sparse.lance"
cp -r "$SRC" "$T/junk.lance"
truncate -s 3G "$T/junk.lance/_versions/18446744073709551000.manifest"
row "a 3 GiB junk manifest is refused by size" 1 - "18446744073709551000.manifest: 3221225472 bytes, more than the" versions "$T/junk.lance"
truncate -s 900M "$T/junk.lance/_versions/18446744073709551000.manifest"
row "a 900 MB junk manifest is refused by its footer" 1 - "18446744073709551000.manifest: no Lance footer at its end" versions "$T/junk.lance"
rm -rf "$T/junk.lance"

# ---- check (issue 13) ----
row "check a healthy dataset" 0 '(^|[^0-9])0 problem' - check "$DS"
cp -r "$SRC" "$T/dmg.lance"
"$LV" -q checkpoint "$T/dmg.lance" >/dev/null
cp_file=$(ls "$T/dmg.lance/_checkpoints/"*.lance | tail -1)
truncate -s 100 "$cp_file"
row "check names a damaged checkpoint" 1 'checkpoint +REJECTED +_checkpoints/[0-9]{20}\.lance.*missing LANC magic' "*" check "$T/dmg.lance"
row "check --json" 1 '"problems":1' "*" check "$T/dmg.lance" --json
row "history warns about it on stderr" 0 'VERSION' 'warning: checkpoint _checkpoints/[0-9]{20}\.lance rejected' history "$T/dmg.lance"
row "--quiet silences the warning" 0 'VERSION' - history "$T/dmg.lance" --quiet
row "checkpoint moves it aside" 0 'wrote' 'kept as _checkpoints/[0-9]{20}\.lance\.damaged-[0-9a-f]{8}' checkpoint "$T/dmg.lance"
row "check lists the file kept aside" 1 'kept-aside +REJECTED' "*" check "$T/dmg.lance"
row "check: unknown option" 2 - "check: unknown option '--x'" check "$T/dmg.lance" --x
rm -rf "$T/dmg.lance"

# ---- help, version, "did you mean" (issue 14) ----
NL=$'\n'  # (the patterns match the whole output: $NL...$NL is one whole line)
row "versions --help" 0 '^usage: lancever versions DATASET \[--json\] \[--format F\] \[--limit N\] \[--reverse\]' - versions --help
row "versions DS -h" 0 '^usage: lancever versions DATASET' - versions "$DS" -h
row "help cleanup: that command's usage" 0 '^usage: lancever cleanup DATASET .*--older-than DURATION +remove versions committed' - help cleanup
row "inspect --help" 0 '^usage: lancever inspect FILE\.lance' - inspect --help
row "help lists checkpoint --disable" 0 'checkpoint DATASET [^
]*\[--disable\]' - help
row "help nope" 2 $USAGE "unknown command 'nope'" help nope
row "help --man" 0 '^\.TH LANCEVER 1 ' - help --man
VER=${LV_EXPECT_VERSION:-[0-9]+\.[0-9]+\.[0-9]+}
row "--version: the version and the formats" 0 "^lancever $VER
reads: +Lance table format manifests .* Lance file format 2\.0, 2\.1 and 2\.2
writes: checkpoints .* Lance file format 2\.1" - --version
row "--version takes no arguments" 2 $USAGE "--version takes no arguments" --version x
row "a mistyped command" 2 $USAGE "unknown command 'verions' \(did you mean versions\?\)" verions "$DS"
row "a mistyped option" 2 $USAGE "versions: unknown option '--jsno' \(did you mean --json\?\)" versions "$DS" --jsno
row "--dryrun" 2 $USAGE "cleanup: unknown option '--dryrun' \(did you mean --dry-run\?\)" cleanup "$DS" --dryrun
row "an abbreviated option" 2 $USAGE "unknown option '--older' \(did you mean --older-than\?\)" cleanup "$DS" --older 1d
row "an option before the command" 2 $USAGE "unknown option '--json' \(a command's options go after the command" --json versions "$DS"
row "--threads=4" 0 '^ +VERSION' - versions "$DS" --threads=4
row "--json=1" 2 $USAGE "^lancever: --json takes no value, got '--json=1'\$" versions "$DS" --json=1
row "show without VERSION" 2 $USAGE "^lancever: show: missing VERSION
usage: lancever show DATASET VERSION \[--json\]\$" show "$DS"
row "two datasets" 2 $USAGE "versions: unexpected argument 'x'" versions "$DS" x
row "diff: a fourth argument (crashed before)" 2 $USAGE "^lancever: diff: unexpected argument 'x'" diff "$DS" 1 2 x
row "asof: a third argument" 2 $USAGE "^lancever: asof: unexpected argument 'x'" asof "$DS" 1796232073003 x

# ---- "--" ends the options, in every command (issue 24) ----
# a dataset and a data file whose names start with '-', given after "--" (run from $T)
cp -r "$SRC" "$T/-d.lance"
cp "$DATAFILE" "$T/-f.lance"
# dd CMD: CMD's arguments with "--" (options before it), and what its stdout shows
dd_args() {
	case $1 in
	versions | history | info | tags | check) echo "-- -d.lance" ;;
	checkpoint) echo "--max-files 3 -- -d.lance" ;;
	asof) echo "-- -d.lance 1796232073003" ;;
	show) echo "-- -d.lance 3" ;;
	diff) echo "-- -d.lance 1 2" ;;
	cleanup | expire) echo "--dry-run --before-version 3 -- -d.lance" ;;
	inspect) echo "-- -f.lance" ;;
	watch) echo "-q --once -- -d.lance" ;;
	completion) echo "-- bash" ;;
	*) return 1 ;;
	esac
}
dd_out() {
	case $1 in
	versions | history) echo '^ +VERSION' ;;
	checkpoint) echo '(wrote|up to date) _checkpoints/' ;;
	asof) echo '^version 3 ' ;;
	show) echo 'version +3' ;;
	diff) echo 'rows +5 +10' ;;
	cleanup | expire) echo 'would remove' ;;
	info) echo '^latest version +12' ;;
	tags) echo 'indexed' ;;
	check) echo '(^|[^0-9])0 problem' ;;
	inspect) echo 'rows:' ;;
	watch) echo '-' ;;
	completion) echo 'complete .*-F _lancever lancever' ;;
	esac
}
cmds=$("$LV" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
check "the command list is read from lancever help ($(echo $cmds))" test "$(echo "$cmds" | wc -w)" -ge 12
for c in $cmds; do
	if ! a=$(dd_args "$c"); then
		check "\"--\" test rows for the command '$c'" false
		continue
	fi
	# shellcheck disable=SC2086
	run "$c: -- then a name starting with '-'" 0 "$(dd_out "$c")" - "$T/stdout" env -C "$T" "$LV" "$c" $a
	if [ "$c" = watch ]; then # TARGET...: a second target, which does not exist
		# shellcheck disable=SC2086
		run "$c: an option after -- is an argument" 1 - "--json: does not exist" "$T/stdout" env -C "$T" "$LV" "$c" $a --json
	else
		# shellcheck disable=SC2086
		run "$c: an option after -- is an argument" 2 $USAGE "$c: unexpected argument '--json'|only one file" "$T/stdout" env -C "$T" "$LV" "$c" $a --json
	fi
	if [ "$c" = completion ]; then # SHELL, not a path
		run "$c: -h after -- is not help" 2 - "SHELL is bash, zsh or fish, got '-h'" "$T/stdout" env -C "$T" "$LV" "$c" -- -h
		continue
	fi
	run "$c: -h after -- is not help" 1 - "-h(: does not exist|: No such file)" "$T/stdout" env -C "$T" "$LV" "$c" -- -h $(dd_args "$c" | sed 's/.*-- -[df]\.lance//')
done
run "a global option after -- is an argument" 1 - "^lancever: --quiet: does not exist \(LV_ENOTFOUND\)\$" "$T/stdout" env -C "$T" "$LV" versions -- --quiet
run "--branch after -- is an argument" 2 $USAGE "versions: unexpected argument '--branch'" "$T/stdout" env -C "$T" "$LV" versions -- -d.lance --branch x
run "options before --, globals too" 0 '^\[\{"version":1,' - "$T/stdout" env -C "$T" "$LV" -q versions --json -- -d.lance
run "without --, a name starting with '-' is an option" 2 $USAGE "versions: unknown option '-d.lance'" "$T/stdout" env -C "$T" "$LV" versions -d.lance
run "a second -- is an argument" 2 $USAGE "versions: unexpected argument '--'" "$T/stdout" env -C "$T" "$LV" versions -- -d.lance --

# ---- messages that name the real problem (issue 14) ----
row "a path that does not exist" 1 - "^lancever: $T/nope: does not exist \(LV_ENOTFOUND\)\$" versions "$T/nope"
row "a file:// path that does not exist" 1 - "^lancever: file://$T/nope: does not exist \(LV_ENOTFOUND\)\$" history "file://$T/nope"
row "a file, not a directory" 1 - "^lancever: $T/existing.ref: is not a directory" versions "$T/existing.ref"
row "--branch nope" 1 - "branch 'nope' is not registered \(no _refs/branches/nope\.json\) \(LV_ENOTFOUND\)\$" versions "$DS" --branch nope
# branch names as Lance accepts them (issue 24): a branch "ünï" laid out as Lance 12 makes it
# (its ref file named with the name percent-encoded, its versions under tree/ünï/)
cp -r "$SRC" "$T/br.lance"
mkdir -p "$T/br.lance/tree/ünï/_versions" "$T/br.lance/_refs/branches"
cp "$SRC"/_versions/*.manifest "$T/br.lance/tree/ünï/_versions/"
printf '{"parentBranch":null,"parentVersion":12,"createAt":1796232072991,"manifestSize":511}' \
	>"$T/br.lance/_refs/branches/%C3%BCn%C3%AF.json"
row "--branch ünï" 0 '^ +VERSION .*
 +12 ' - --branch ünï versions "$T/br.lance"
row "--branch ünï history --json" 0 '^\[\{"version":1,' - history "$T/br.lance" --branch ünï --json
row "<root>/tree/ünï is that branch (the root's refs apply)" 0 '"branches":\[\{"name":"ünï",' - tags "$T/br.lance/tree/ünï" --json
row "--branch कि (a vowel sign is Alphabetic): not registered" 1 - "branch 'कि' is not registered \(no _refs/branches/%E0%A4%95%E0%A4%BF\.json\) \(LV_ENOTFOUND\)\$" versions "$T/br.lance" --branch कि
for b in 'e🙂' 'x̃' 'a b' 'a..b' 'x.lock' 'a//b' '/x' 'a/./b' $'a\x01' $'\xff'; do
	row "--branch '$b' is refused as Lance refuses it" 1 - "^lancever: invalid branch name '.*': .* \(LV_EINVALID\)\$" versions "$T/br.lance" --branch "$b"
done
cp -r "$SRC" "$T/tag.lance"
for t in a b; do sed 's/"version": 6/"version": 1/' "$SRC/_refs/tags/indexed.json" >"$T/tag.lance/_refs/tags/$t.json"; done
row "the tagged refusal: Lance's words and count, the CLI's flag" 1 - "^lancever: 2 tagged version\(s\) have been marked for cleanup\. Either pass --no-error-if-tagged-old-versions or delete the following tag\(s\) to enable cleanup: \{\"a\": 1, \"b\": 1\} \(LV_ETAGGED\)\$" cleanup "$T/tag.lance" --before-version 2

# ---- --json: one shape per command; nothing on stdout on failure (issue 14) ----
PY=/usr/bin/python3
# json NAME STATUS CONDITION ARGV...: stdout is strict UTF-8 JSON, `j`, and CONDITION holds.
json() {
	local n=$1 s=$2 cond=$3 st
	shift 3
	"$LV" "$@" >"$T/stdout" 2>"$T/stderr" </dev/null
	st=$?
	if [ "$st" != "$s" ]; then
		fail=$((fail + 1))
		printf 'FAIL %s: exit status %s, expected %s\n  stderr: %s\n' "$n" "$st" "$s" "$(head -c 300 "$T/stderr")"
	elif "$PY" -c "import json, sys
j = json.load(open(sys.argv[1], encoding='utf-8', errors='strict'))
sys.exit(0 if ($cond) else 1)" "$T/stdout" 2>"$T/pyerr"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		printf 'FAIL %s: %s\n  stdout: %s\n  %s\n' "$n" "$cond" "$(head -c 400 "$T/stdout")" "$(tail -1 "$T/pyerr")"
	fi
}
KEYS="['version', 'timestamp', 'metadata', 'timestamp_millis', 'total_fragments', 'total_data_files',
 'total_files_size', 'total_deletion_files', 'total_data_file_rows', 'total_deletion_file_rows', 'total_rows',
 'is_tagged', 'tags', 'is_cleaned_up', 'transaction_uuid', 'read_version', 'operation_type', 'transaction_properties',
 'manifest_path', 'manifest_size', 'writer_library', 'writer_version', 'data_format', 'transaction_file',
 'branch', 'num_indices', 'reader_feature_flags', 'writer_feature_flags', 'config']"
cp -r "$SRC" "$T/keys.lance"
json "versions --json from manifests: the 29 keys" 0 "len(j) == 12 and all(list(v) == $KEYS for v in j) and j[0]['writer_version'] == '8.0.0'" versions "$T/keys.lance" --json
"$LV" checkpoint "$T/keys.lance" >/dev/null 2>&1
json "versions --json from a checkpoint: the same 29 keys, null where unknown" 0 "len(j) == 12 and all(list(v) == $KEYS for v in j) and j[0]['writer_version'] is None and j[0]['config'] is None and j[0]['manifest_path'].startswith('_versions/') and j[0]['manifest_size'] in (None, 511)" versions "$T/keys.lance" --json
json "history --json: the same 29 keys" 0 "len(j) == 12 and all(list(v) == $KEYS for v in j)" history "$T/keys.lance" --json
json "show --json: the record's keys and warnings" 0 "list(j) == $KEYS + ['feature_flags', 'warnings'] and j['version'] == 3 and j['feature_flags'] == {'reader': [], 'writer': []}" show "$T/keys.lance" 3 --json
json "cleanup --json: failed_deletes (Lance 14's count of refused deletes)" 0 "j['failed_deletes'] == 0" cleanup "$DS" --dry-run --before-version 3 --json
for args in "show $DS 3" "asof $DS 1796232073003" "diff $DS 1 2" "info $DS" "tags $DS" "checkpoint $DS" "cleanup $DS --dry-run --before-version 3" "check $DS"; do
	# shellcheck disable=SC2086
	json "$args --json: an object with warnings" 0 "isinstance(j, dict) and j['warnings'] == []" $args --json
done
row "versions --json on a missing path: nothing on stdout" 1 - "does not exist" versions "$T/nope" --json
row "cleanup --json refused: nothing on stdout" 1 - "2 tagged version\(s\)" cleanup "$T/tag.lance" --before-version 2 --json
row "show --json of a version never recorded: nothing on stdout" 1 - "neither live nor recorded" show "$DS" 99 --json

# ---- warnings: once each on stderr, and in every JSON report (issues 13, 14) ----
cp -r "$SRC" "$T/warn.lance"
"$LV" checkpoint "$T/warn.lance" >/dev/null 2>&1
printf 'not a checkpoint' >"$T/warn.lance/_checkpoints/00000000000000000012.lance"
row "a rejected checkpoint: one warning line" 0 '^ +VERSION' "^lancever: warning: checkpoint _checkpoints/0+12\.lance rejected: [^
]*\$" versions "$T/warn.lance"
row "-q silences warnings" 0 '^ +VERSION' - -q versions "$T/warn.lance"
json "info --json lists the warning" 0 "[(w['kind'], w['path'], w['first'], w['last']) for w in j['warnings']] == [('checkpoint_rejected', '_checkpoints/00000000000000000012.lance', None, None)] and 'rejected' in j['warnings'][0]['message']" info "$T/warn.lance" --json

# ---- a stray file in _checkpoints/archive/ hides nothing (issue 24) ----
cp -r "$SRC" "$T/stray.lance"
"$LV" -q cleanup "$T/stray.lance" --retain-versions 2 --max-entries 5 --segment-rows 3 \
	--no-error-if-tagged-old-versions >/dev/null
SEGD=$T/stray.lance/_checkpoints/archive
cp "$SEGD/00000000000000000001-00000000000000000003.lance" "$SEGD/00000000000000000001-18446744073709551615.lance"
row "history with a stray segment: every version, a warning" 0 '(^|
) +5 ' "warning: _checkpoints/archive/0+1-18446744073709551615\.lance ignored: not in the head's index" history "$T/stray.lance"
row "show 5 past a stray segment" 0 'version +5' '*' show "$T/stray.lance" 5
json "show --json lists the stray" 0 "[w['kind'] for w in j['warnings']] == ['segment_stray']" show "$T/stray.lance" 5 --json
row "check lists the stray" 1 'segment +.*0+1-18446744073709551615\.lance' '*' check "$T/stray.lance"
check "the stray is left in place" test -f "$SEGD/00000000000000000001-18446744073709551615.lance"
rm -rf "$T/stray.lance"

# ---- names as Lance means them, escaped for the terminal and for JSON (issue 14) ----
cp -r "$SRC" "$T/names.lance"
TAGS=$T/names.lance/_refs/tags
mk_tag() { sed 's/"version": 6/"version": 3/' "$SRC/_refs/tags/indexed.json" >"$TAGS/$1.json"; }
mk_tag '%C3%BCn%C3%AFcode'  # LanceDB 0.31's file for the tag "ünïcode"
mk_tag '%FFbad'             # decodes to a byte that is not UTF-8
mk_tag "ctl"$'\x01'"x"      # a control character in the file name: refused, and named
printf 'not json' >"$TAGS/broken.json"
row "tags: names decoded; refused files named, escaped" 0 '
ünïcode +3  main' "^lancever: warning: tag _refs/tags/broken\.json skipped: [^
]*
lancever: warning: tag _refs/tags/ctl\\\\x01x\.json skipped: [^
]*\$" tags "$T/names.lance"
check "tags: invalid UTF-8 shown as \\xff" grep -q '^\\xffbad ' "$T/stdout"
check "tags: no control character reaches the terminal" bash -c "! LC_ALL=C grep -q \$'[\\x01-\\x09\\x0b-\\x1f\\x7f]' '$T/stdout'"
check "tags: the output is UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null "$T/stdout"
json "tags --json: decoded names, strict UTF-8, refused files as warnings" 0 "sorted(t['name'] for t in j['tags']) == sorted(['compacted', 'indexed', '\u00fcn\u00efcode', '\ufffdbad']) and [(w['kind'], w['path']) for w in j['warnings']] == [('tag_unreadable', '_refs/tags/broken.json'), ('tag_unreadable', '_refs/tags/ctl\x01x.json')]" tags "$T/names.lance" --json
cp -r "$SRC" "$T/esc.lance"
odd="$T/esc.lance/data/odd"$'\x1b'"[31mname.lance"
printf x >"$odd"
touch -d 2020-01-01 "$odd"
row "cleanup --dry-run: a name with ESC is shown escaped" 0 'would remove data +1  data/odd\\x1b\[31mname\.lance  \(unreferenced and older than 7 days\)' - cleanup "$T/esc.lance" --dry-run --before-version 2
check "cleanup --dry-run: no raw ESC on stdout" bash -c "! grep -q \$'\\x1b' '$T/stdout'"
json "cleanup --dry-run --json: the name, exactly" 0 "any(f['path'] == 'data/odd\x1b[31mname.lance' for f in j['files'])" cleanup "$T/esc.lance" --dry-run --before-version 2 --json

# ---- cleanup: --stats, honest counts and summaries, progress (issue 14) ----
cp -r "$SRC" "$T/stats.lance"
row "cleanup --stats" 0 '^removed 2 of 12 versions; their history is kept in _checkpoints/0+12\.lance \(12 versions recorded\)' "^lancever: cleanup read 12 manifests; requests [0-9]+, bytes read [0-9]+, bytes written [0-9]+\$" cleanup "$T/stats.lance" --before-version 3 --stats
row "a dry run's summary" 0 "$NL""would remove 9 of 12 versions; a checkpoint written first would keep their history$NL" - cleanup "$SRC" --dry-run --older-than 0s --no-error-if-tagged-old-versions
row "a dry run without checkpoints" 0 "$NL""would remove 9 of 12 versions; checkpoints are disabled, so their history is not kept$NL" - cleanup "$SRC" --dry-run --older-than 0s --no-error-if-tagged-old-versions --no-checkpoint
row "nothing to remove" 0 "^removed 0 of 12 versions$NL" - cleanup "$T/keys.lance" --older-than 3650d
cp -r "$SRC" "$T/cp.lance"
row "checkpoint --max-entries 5: 5 new, not 12" 0 '^wrote _checkpoints/0+12\.lance: 5 versions \(5 new\)' '*' checkpoint "$T/cp.lance" --max-entries 5
cp -r "$SRC" "$T/prog.lance"
# LANCEVER_PROGRESS_DELAY_MS=0: draw at once (a terminal waits 500 ms before the first line);
# the checkpoint writer's phases (listing, writing checkpoint, verifying) are drawn too
LANCEVER_PROGRESS_DELAY_MS=0 script -qec "'$LV' cleanup '$T/prog.lance' --older-than 0s --no-error-if-tagged-old-versions" /dev/null >"$T/typescript" 2>&1
redraws=$(grep -o $'\r\033\\[K' "$T/typescript" | wc -l)
check "progress: a few redraws on a terminal, not one per file ($redraws)" test "$redraws" -ge 3 -a "$redraws" -le 16
check "progress: the file phase says what it counts" grep -q 'checking files [0-9]*/[0-9]*' "$T/typescript"
cp -r "$SRC" "$T/link.lance"
printf outside >"$T/outside.lance"
ln -s "$T/outside.lance" "$T/link.lance/data/zz-link.lance"
touch -h -d 2020-01-01 "$T/link.lance/data/zz-link.lance"
row "cleanup with a symlinked data file" 0 "$NL""removed 9 of 12 versions;" - cleanup "$T/link.lance" --older-than 0s --no-error-if-tagged-old-versions --delete-unverified --list
check "the symlinked data file is not listed" bash -c "! grep -q zz-link '$T/stdout'"
check "the link is still there" test -L "$T/link.lance/data/zz-link.lance"
check "its target is untouched" grep -qx outside "$T/outside.lance"

# ---- info says what happens to history beyond max_entries (issue 24) ----
row "info: archive on keeps every version" 0 "
history kept +every version \(archive on\): each complete run of 4096 versions is sealed into a segment in _checkpoints/archive/, the newer ones stay in the head \(at most max_entries rows\); nothing is dropped
" - info "$DS"
check "info: archive on does not say history is dropped" bash -c "! grep -q 'versions is dropped' '$T/stdout'"
row "info --segment-rows 3 --max-entries 5" 0 "
checkpoints +enabled, max_entries 5, .*
history kept +every version \(archive on\): each complete run of 3 versions" - info "$DS" --segment-rows 3 --max-entries 5
row "info --no-archive: only the newest max_entries" 0 "
history kept +the newest 7 versions \(archive off\): a checkpoint records no more, so an older version leaves the history once its manifest is removed
" - info "$DS" --no-archive --max-entries 7
row "info --json: the archive settings" 0 '"checkpoint":\{"enabled":true,"max_entries":10000,"max_checkpoint_files":2,"latest_checkpoint_version":[0-9]+,"archive":false,"archive_segment_rows":4096\}' - info "$DS" --json --no-archive
# ... and it is what happens: a cleanup with max_entries 5 keeps all 12 versions in history with
# the archive on, and loses the cleaned-up ones older than the newest 5 with it off
for m in on off; do
	cp -r "$SRC" "$T/keep-$m.lance"
	opt=(); [ $m = off ] && opt=(--no-archive)
	"$LV" -q cleanup "$T/keep-$m.lance" --older-than 0s --no-error-if-tagged-old-versions --max-entries 5 --segment-rows 3 "${opt[@]}" >/dev/null
done
row "archive on: every version still in history" 0 "^ +VERSION.*
 +1  2026-.*
 +12  2026-" - history "$T/keep-on.lance"
row "archive off: versions older than the newest 5 left the history" 0 "
 +1-5  \(no record of these versions" "no record" history "$T/keep-off.lance"
# a capture's gap note gives the gap's row its reason (issue 29), streamed and --reverse alike
cp -r "$T/keep-off.lance" "$T/gapnote.lance"
mkdir -p "$T/gapnote.lance/_checkpoints/gaps"
printf 'noted\n' >"$T/gapnote.lance/_checkpoints/gaps/00000000000000000001-00000000000000000005.removed-before-read"
row "history: a gap's row names the capture's reason" 0 "
 +1-5  \(no record of these versions: a capture missed them: removed-before-read, manifest removed before it could be read\)
" "capture missed" history "$T/gapnote.lance"
mv "$T/gapnote.lance/_checkpoints/gaps/00000000000000000001-00000000000000000005.removed-before-read" \
	"$T/gapnote.lance/_checkpoints/gaps/00000000000000000001-00000000000000000005.removed-unseen"
row "history --reverse: the same reason in the gap's row" 0 " +1-5  \(no record of these versions: a capture missed them: removed-unseen, committed and removed between two polls" "capture missed" \
	history "$T/gapnote.lance" --reverse
json "check --json: the noted gap's record has its gap_reason" 1 "[(i['first'], i['last'], i['gap_reason']) for i in j['items'] if i['kind'] == 'gap'] == [(1, 5, 'removed-unseen'), (7, 7, None)] and all('gap_reason' in i for i in j['items']) and 'a capture missed them: removed-unseen' in [i for i in j['items'] if i['kind'] == 'gap'][0]['message']" check "$T/gapnote.lance" --json

# ---- the test-file writer that replaced it (bench/write_lancefile) ----
if [ -n "$WL" ]; then
	run "write_lancefile writes" 0 - - "$T/stdout" "$WL" "$T/w.lance" --rows 3 --version 2.0
	row "inspect reads what write_lancefile wrote" 0 'rows: +3' - inspect "$T/w.lance"
	printf keep >"$T/existing.lance" # (an old lancever overwrote it above)
	run "write_lancefile refuses to overwrite" 1 - "exists; not overwriting" "$T/stdout" "$WL" "$T/existing.lance" --rows 3
	check "write_lancefile left the existing file alone" cmp -s "$T/existing.lance" "$T/existing.ref"
	run "write_lancefile --rows ' 3'" 2 - "--rows wants" "$T/stdout" "$WL" "$T/w2.lance" --rows ' 3'
	run "write_lancefile --rows (last)" 2 - "missing value for '--rows'" "$T/stdout" "$WL" "$T/w2.lance" --rows
	check "write_lancefile usage errors create nothing" test ! -e "$T/w2.lance"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
