#!/usr/bin/env bash
# The house as the docs draw it, against the tree (issue 15):
#
#   test_tree.sh SOURCE_DIR
#
# 1. The tree is written once: CONTRIBUTING's "The house"; no other doc (README.md, docs/*.md,
#    RELIABILITY.md) repeats it (they link to it).
# 2. Every directory under src/lib/ and src/cli/ is named in it.
# 3. Every file name it mentions (foo.c, foo.h) exists somewhere under src/, include/ or python/.
set -u
src=${1:?usage: test_tree.sh SOURCE_DIR}
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
tree_after() { # the first fenced block after the heading $2 in file $1
	awk -v h="$2" '$0 == h { on = 1; next } on == 1 && /^```/ { on = 2; next } on == 2 && /^```/ { exit } on == 2 { print }' "$1"
}
contrib=$(tree_after "$src/CONTRIBUTING.md" "## The house")
[ -n "$contrib" ] || bad "CONTRIBUTING.md has no tree under '## The house'"
first=$(head -1 <<<"$contrib")
for doc in "$src"/README.md "$src"/RELIABILITY.md "$src"/docs/*.md; do
	[ -f "$doc" ] || continue
	grep -qxF -- "$first" "$doc" && bad "${doc#"$src"/} repeats the house tree: link to CONTRIBUTING.md instead"
done
for d in "$src"/src/lib/*/ "$src"/src/cli/; do
	name=${d#"$src"/}
	name=${name%/}
	short=${name#src/lib/}
	grep -qE "(^|[^a-z_])${short}/" <<<"$contrib" || bad "directory $name is not in the tree"
done
for f in $(grep -oE '[a-z0-9_*]+\.[ch]\b' <<<"$contrib" | sort -u); do
	case $f in *'*'*) continue ;; esac
	[ -n "$(find "$src/src" "$src/include" "$src/python" -name "$f" -print -quit)" ] || bad "the tree names $f, which does not exist"
done
if [ $fail -gt 0 ]; then
	echo "test_tree: $fail problem(s)"
	exit 1
fi
echo "test_tree: the tree, written once in CONTRIBUTING.md, matches src/"
