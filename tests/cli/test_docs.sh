#!/usr/bin/env bash
# docs/cli.md (the CLI page) against the CLI's own help (one source: the tables in src/cli):
#
#   test_docs.sh docs/cli.md LANCEVER           check
#   test_docs.sh --update docs/cli.md LANCEVER  rewrite its generated block
#
# 1. The block after "<!-- generated: lancever help -->" is `lancever help`, verbatim.
# 2. Every option the CLI section mentions (--flag) is one `lancever help` lists.
# 3. `lancever help CMD` and `lancever CMD --help` print the same text, exit 0, for every
#    command the help lists, and name each option of that command's synopsis.
set -u
update=0
if [ "${1:-}" = --update ]; then
	update=1
	shift
fi
README=${1:?usage: test_docs.sh [--update] README LANCEVER}
LV=${2:?usage: test_docs.sh [--update] README LANCEVER}
MARK='<!-- generated: lancever help -->'
fail=0
pass=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { pass=$((pass + 1)); }

help=$("$LV" help) || { echo "FAIL: lancever help exited $?"; exit 1; }
# the fenced block right after the marker
block=$(awk -v m="$MARK" '$0 == m { on = 1; next } on == 1 && /^```/ { on = 2; next } on == 2 && /^```/ { exit } on == 2 { print }' "$README")

if [ $update = 1 ]; then
	awk -v m="$MARK" -v h="$help" '
		$0 == m { print; print "```"; print h; print "```"; skip = 1; next }
		skip == 1 && /^```/ { skip = 2; next }
		skip == 2 { if (/^```/) skip = 0; next }
		{ print }' "$README" >"$README.tmp" && mv "$README.tmp" "$README"
	echo "updated the generated block of $README"
	exit 0
fi

if ! grep -qxF "$MARK" "$README"; then
	bad "$README has no '$MARK' line"
elif [ "$block" = "$help" ]; then
	ok
else
	bad "the CLI page's block differs from 'lancever help' (bash tests/cli/test_docs.sh --update docs/cli.md build/lancever):"
	diff <(printf '%s\n' "$block") <(printf '%s\n' "$help") | head -20
fi

# every --flag in the README's CLI section is one the help lists
section=$(awk '/^## CLI/ { on = 1; next } on && /^## / { exit } on { print }' "$README")
for o in $(grep -oE -- '--[a-z0-9][a-z0-9-]*' <<<"$section" | sort -u); do
	if grep -qE -- "(^|[ [,])$o([] =,]|\$)" <<<"$help"; then ok
	else bad "the CLI page mentions $o, which 'lancever help' does not list"; fi
done

# per-command help
for c in $(sed -nE 's/^  ([a-z]+) .*/\1/p' <<<"$help"); do
	h1=$("$LV" help "$c")
	s1=$?
	h2=$("$LV" "$c" --help)
	s2=$?
	if [ $s1 = 0 ] && [ $s2 = 0 ] && [ "$h1" = "$h2" ] && [[ $h1 == "usage: lancever $c "* ]]; then ok
	else bad "lancever help $c (exit $s1) and lancever $c --help (exit $s2) differ or are not its usage"; fi
	syn=$(awk -v c="$c" '$1 == c { on = 1; print; next } on && /^ +\[/ { print; next } on { exit }' <<<"$help")
	for o in $(grep -oE -- '--[a-z0-9-]+' <<<"$syn"); do
		grep -qE -- "^  $o( |\$)" <<<"$h1" && ok || bad "lancever help $c does not explain $o"
	done
done

echo "$pass passed, $fail failed"
[ $fail = 0 ]
