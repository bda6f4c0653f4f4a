#!/usr/bin/env bash
# The shell completion scripts (src/cli/completion.c), used as a shell uses them:
#
#   test_completion.sh LANCEVER DEMO_DATASET
#
# bash: `source <(lancever completion bash)`, `complete -p lancever`, then _lancever called with
# COMP_WORDS/COMP_CWORD as bash calls it, for commands, options (of the command typed and the
# global ones), option values, tag names where a VERSION is taken, help's COMMAND; every
# option of every command (from `lancever help`) completes.  zsh: the script parses and
# registers _lancever with compinit.  fish: `complete -C` answers from the script.  zsh and
# fish come from tests/debian-packages.txt (test group): missing, the test fails.
# Prints "N passed, M failed"; exits 1 on any failure.
set -u
LV=${1:?usage: test_completion.sh LANCEVER DEMO_DATASET}
DS=${2:?usage: test_completion.sh LANCEVER DEMO_DATASET}
LV=$(cd "$(dirname "$LV")" && pwd)/$(basename "$LV")
export PATH=$(dirname "$LV"):$PATH # the scripts call lancever for tag names
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# shellcheck disable=SC1090
source <("$LV" completion bash)
spec=$(complete -p lancever 2>&1)
[[ $spec == *"-F _lancever"*" lancever" ]] && ok || bad "complete -p lancever: $spec"

# comp WANT WORDS...: _lancever completing the last word of WORDS gives exactly WANT (sorted)
comp() {
	local want=$1 got
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$*"
	COMPREPLY=()
	_lancever lancever "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
	got=${got% }
	[ "$got" = "$want" ] && ok || bad "completing '$*': got '$got', expected '$want'"
}
comp "versions" lancever ver
comp "check checkpoint cleanup completion" lancever c
comp "history" lancever --no-pager his
comp "versions" lancever --branch main ver
comp "versions" lancever --color=always ver
comp "--limit" lancever versions "$DS" --li
comp "--reverse" lancever history "$DS" --rev
comp "--branch --bytes" lancever versions "$DS" --co --b
comp "--bytes" lancever versions "$DS" --by
comp "arrow csv json table" lancever versions "$DS" --format ""
comp "always auto never" lancever --color ""
comp "compacted indexed latest" lancever show "$DS" ""
comp "indexed" lancever diff "$DS" compacted ind
comp "compacted indexed latest" lancever versions "$DS" --since ""
comp "compacted" lancever cleanup "$DS" --before-version co
comp "" lancever versions "$DS" --limit ""
comp "checkpoint" lancever help checkp
comp "bash" lancever completion ba
# a missing DATASET: no tag names, just latest (and no error on the terminal)
comp "latest" lancever show /nonexistent/x.lance ""

# every option of every command completes (the script is written from the same tables)
cmds=$("$LV" help | awk '/^commands:/ { on = 1; next } /^global options/ { on = 0 } on && /^  [a-z]/ { print $1 }')
[ "$(wc -w <<<"$cmds")" -ge 12 ] && ok || bad "command list from lancever help: '$cmds'"
for c in $cmds; do
	want=$("$LV" "$c" --help | sed -n '/^options:/,/^$/p' | grep -oE '^  (-[a-z], )?--[a-z-]+' |
		grep -oE -- '--[a-z-]+' | grep -v -- '--help' | sort -u | tr '\n' ' ')
	COMP_WORDS=(lancever "$c" x --)
	COMP_CWORD=3
	COMPREPLY=()
	_lancever lancever -- x
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' ')
	missing=""
	for o in $want; do [[ " $got " == *" $o "* ]] || missing="$missing $o"; done
	[ -z "$missing" ] && ok || bad "$c: options that do not complete:$missing"
done

# zsh: the script parses, compinit registers it
if command -v zsh >/dev/null; then
	"$LV" completion zsh >"${TMPDIR:-/tmp}/_lancever.$$"
	out=$(zsh -f -c "autoload -U compinit && compinit -u -D && source ${TMPDIR:-/tmp}/_lancever.$$ && print -r -- \${_comps[lancever]}" 2>&1)
	rm -f "${TMPDIR:-/tmp}/_lancever.$$"
	[ "$out" = "_lancever" ] && ok || bad "zsh: _comps[lancever] = '$out'"
else
	bad "zsh is not installed (tests/debian-packages.txt, test group)"
fi
# fish: complete -C answers from the script
if command -v fish >/dev/null; then
	got=$(HOME=${TMPDIR:-/tmp} fish --no-config -c "$LV completion fish | source; complete -C 'lancever ver'" 2>&1 | cut -f1)
	[ "$got" = "versions" ] && ok || bad "fish: lancever ver -> '$got'"
	got=$(HOME=${TMPDIR:-/tmp} fish --no-config -c "$LV completion fish | source; complete -C 'lancever versions x --form'" 2>&1 | cut -f1)
	[ "$got" = "--format" ] && ok || bad "fish: --form -> '$got'"
	got=$(HOME=${TMPDIR:-/tmp} fish --no-config -c "$LV completion fish | source; complete -C 'lancever show $DS '" 2>&1 | cut -f1 | sort | tr '\n' ' ')
	[ "$got" = "compacted indexed latest " ] && ok || bad "fish: tags -> '$got'"
else
	bad "fish is not installed (tests/debian-packages.txt, test group)"
fi

# a wrong SHELL is a usage error
"$LV" completion tcsh >/dev/null 2>&1
[ $? = 2 ] && ok || bad "completion tcsh: not a usage error"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
