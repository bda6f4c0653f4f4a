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
row "checkpoint --max-entries 100 --max-files 3" 0 'versions' - checkpoint "$DS" --max-entries 100 --max-files 3
# a Lance file lancever reads (the demo's data files hold doubles, which inspect does not decode)
DATAFILE=$(ls "$DS"/_checkpoints/*.lance 2>/dev/null | head -1)
DATAFILE=${DATAFILE:-$T/no-checkpoint-was-written.lance}
row "--help mentions --quiet" 0 'silence warnings on stderr' - --help
row "-q is accepted" 0 '^ +VERSION' - -q versions "$DS"
row "--quiet is accepted anywhere" 0 '^ +VERSION' - versions "$DS" --quiet

# ---- one strict number rule: digits only, no sign/space/empty/0x/exponent, no overflow ----
for bad in ' -1' '-1' '+1' '' ' 1' '1 ' '1e3' '0x10' '0' '99999999999999999999999' '18446744073709551616'; do
	row "cleanup --before-version '$bad'" 2 $USAGE "--before-version wants a positive integer \(at most 18446744073709551615\), got '$(q "$bad")'" \
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
	row "show '$bad'" 2 $USAGE "show: VERSION $NONNEG '$(q "$bad")'" show "$DS" "$bad"
	row "diff '$bad' 2" 2 $USAGE "diff: A $NONNEG '$(q "$bad")'" diff "$DS" "$bad" 2
	row "diff 1 '$bad'" 2 $USAGE "diff: B $NONNEG '$(q "$bad")'" diff "$DS" 1 "$bad"
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
