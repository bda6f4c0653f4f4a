#!/usr/bin/env bash
# The shell experience of issue 29: the EXAMPLES of `lancever help COMMAND`
# (src/cli/examples.c) work as printed, and a database folder or a table name without .lance
# gets "did you mean db/t.lance?" (src/cli/hint.c).
#
#   test_shell.sh LANCEVER DEMO_DATASET
#
# Each example line of each command's help is run by bash in a scratch folder whose db/t.lance
# is a checkpointed copy of DEMO_DATASET (an output redirection is dropped, stdout discarded):
# it must exit 0 (one that names a relative time, "... ago", may also find nothing: 1), never
# 2 (a usage error: an example the CLI no longer takes).  Every command has examples, and the
# man page has an Examples block per command.  Prints "N passed, M failed".
set -u
LV=${1:?usage: test_shell.sh LANCEVER DEMO_DATASET}
SRC=${2:?usage: test_shell.sh LANCEVER DEMO_DATASET}
LV=$(cd "$(dirname "$LV")" && pwd)/$(basename "$LV")
T=$(mktemp -d "${TMPDIR:-/tmp}/lv-examples-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir "$T/db" "$T/bin"
cp -r "$SRC" "$T/db/t.lance"
ln -s "$LV" "$T/bin/lancever"
export PATH=$T/bin:$PATH
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
lancever checkpoint "$T/db/t.lance" >/dev/null || bad "checkpoint of the scratch copy"

cmds=$(lancever help | awk '/^commands:/ { on = 1; next } /^global options/ { on = 0 } on && /^  [a-z]/ { print $1 }')
n=0
for c in $cmds; do
	ex=$(lancever help "$c" | sed -n '/^examples:/,$p' | grep -E '^  (lancever |source )' | sed 's/^  //')
	[ -n "$ex" ] && ok || bad "$c: no examples in lancever help $c"
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		n=$((n + 1))
		run=$(sed -E 's/ > [^ ]+$//' <<<"$line")
		(cd "$T" && bash -c "$run" >/dev/null 2>"$T/err")
		st=$?
		if [ $st = 0 ] || { [ $st = 1 ] && [[ $line == *" ago"* ]]; }; then ok; else
			bad "$c: '$line' exited $st: $(head -3 "$T/err")"
		fi
	done <<<"$ex"
done
[ $n -ge 20 ] && ok || bad "only $n examples ran"
man=$(lancever help --man)
k=$(grep -c '^Examples:' <<<"$man")
[ "$k" -ge 13 ] && ok || bad "the man page has $k Examples blocks"

# "did you mean": row NAME STATUS STDERR_REGEX ARGV... (run in $T)
row() {
	local name=$1 want=$2 re=$3 st err
	shift 3
	err=$(cd "$T" && lancever "$@" 2>&1 >/dev/null)
	st=$?
	if [ "$st" = "$want" ] && [[ $err =~ $re ]]; then ok; else
		bad "$name: status $st (want $want), stderr: $err"
	fi
}
cp -r "$SRC" "$T/db/other.lance"
mkdir -p "$T/db/not-a-table"
row "a database folder" 1 "db is a LanceDB database folder, not a table.*did you mean db/other.lance\? \(db holds 2 tables: other.lance, t.lance\)" versions db
row "a database folder/" 1 "did you mean db/other.lance\?" history db/
row "a table without .lance" 1 "does not exist \(LV_ENOTFOUND\).lancever: did you mean db/t.lance\? \(db holds 2 tables: other.lance, t.lance\)" show db/t 3
(cd "$T/db" && lancever versions t >/dev/null 2>"$T/err"); grep -q "did you mean t.lance? (this folder holds 2 tables: other.lance, t.lance)" "$T/err" && ok || bad "bare name in the database folder: $(cat "$T/err")"
row "file:// works too" 1 "did you mean $T/db/t.lance\?" versions "file://$T/db/t"
row "no table of that name: no hint" 1 "^lancever: db/nope: does not exist \(LV_ENOTFOUND\)$" versions db/nope
row "an empty folder: no hint" 1 "^lancever: [^"$'\n'"]*not-a-table: not a Lance dataset[^"$'\n'"]*$" versions db/not-a-table
row "a table: no hint" 0 "^$" versions db/t.lance
row "after --" 1 "did you mean db/t.lance\?" versions -- db/t

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
