#!/usr/bin/env bash
# The installed tree, used the way a user of the library uses it:
#
#   test_install.sh BUILD_DIR SOURCE_DIR VERSION DATASET
#
# `cmake --install BUILD_DIR --prefix <scratch>`, then, against that tree only (not the
# build or source tree): pkg-config --modversion / --cflags / --libs lancever; a small
# program (tests/cli/pc_consumer.c) compiled and linked with those flags, shared and
# static, runs on DATASET; every installed header compiles on its own; the installed
# lancever prints VERSION; the installed man page is well-formed roff (groff -ww) and
# documents every command and option `lancever help` lists.
set -u
BUILD=${1:?usage: test_install.sh BUILD_DIR SOURCE_DIR VERSION DATASET}
SRC=${2:?}
VERSION=${3:?}
DS=${4:?}
T=$(mktemp -d "${TMPDIR:-/tmp}/lv-install-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
P=$T/prefix
fail=0
pass=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { pass=$((pass + 1)); }
expect() { # NAME WANT GOT
	if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', expected '$2'"; fi
}

if ! cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1; then
	bad "cmake --install failed: $(tail -5 "$T/install.log")"
	echo "$pass passed, $fail failed"
	exit 1
fi
pc=$(find "$P" -name lancever.pc)
for f in bin/lancever include/lancever/lancever.h share/man/man1/lancever.1 \
	share/bash-completion/completions/lancever share/zsh/site-functions/_lancever \
	share/fish/vendor_completions.d/lancever.fish; do
	if [ -e "$P/$f" ]; then ok; else bad "not installed: $f"; fi
done
if [ -n "$pc" ]; then ok; else bad "not installed: lancever.pc"; fi
libdir=$(dirname "$(dirname "$pc")")
for f in liblancever.so liblancever.a; do
	if [ -e "$libdir/$f" ]; then ok; else bad "not installed: $libdir/$f"; fi
done

# ---- pkg-config against the installed (and moved: --prefix) tree ----
export PKG_CONFIG_PATH=$(dirname "$pc")
expect "pkg-config --modversion" "$VERSION" "$(pkg-config --modversion lancever 2>&1)"
cflags=$(pkg-config --cflags lancever)
libs=$(pkg-config --libs lancever)
case "$cflags $libs" in
*"$SRC"* | *"$BUILD"*) bad "pkg-config points into the source or build tree: $cflags $libs" ;;
*) ok ;;
esac
[ -e "$(sed -E 's/^-I//; s/ +$//' <<<"$cflags")/lancever/lancever.h" ] && ok ||
	bad "pkg-config --cflags ($cflags) does not name the installed include directory"

CC=${CC:-cc}
# shellcheck disable=SC2086
if $CC -std=c17 -Wall -Wextra -Werror "$SRC/tests/cli/pc_consumer.c" -o "$T/consumer" $cflags $libs 2>"$T/cc.log"; then
	expect "shared consumer" "lancever $VERSION: 12 live versions" \
		"$(LD_LIBRARY_PATH=$libdir "$T/consumer" "$DS" 2>&1)"
else
	bad "compiling with pkg-config --cflags --libs lancever failed: $(head -5 "$T/cc.log")"
fi
# static: the archive, plus what --static adds (Requires.private, Libs.private)
slibs=$(pkg-config --static --libs lancever)
slibs=${slibs/-llancever/$libdir/liblancever.a}
# shellcheck disable=SC2086
if $CC -std=c17 -Wall -Werror "$SRC/tests/cli/pc_consumer.c" -o "$T/consumer_static" $cflags $slibs 2>"$T/cc.log"; then
	expect "static consumer" "lancever $VERSION: 12 live versions" "$("$T/consumer_static" "$DS" 2>&1)"
else
	bad "linking statically with pkg-config --static --libs lancever failed: $(head -5 "$T/cc.log")"
fi
# every public header compiles on its own
for h in "$P"/include/lancever/*.h "$P"/include/lancever/sys/*.h; do
	rel=${h#"$P"/include/}
	# shellcheck disable=SC2086
	if printf '#include <%s>\n' "$rel" | $CC -std=c17 -Wall -Werror -fsyntax-only -x c - $cflags 2>"$T/h.log"; then ok
	else bad "$rel does not compile on its own: $(head -3 "$T/h.log")"; fi
done

# ---- the installed CLI and its man page ----
expect "installed lancever --version" "lancever $VERSION" "$("$P/bin/lancever" --version | head -1)"
man=$P/share/man/man1/lancever.1
if command -v groff >/dev/null; then
	warn=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
	[ -z "$warn" ] && ok || bad "groff warns about lancever.1: $(head -3 <<<"$warn")"
else
	bad "groff not found (tests/debian-packages.txt lists groff-base)"
fi
grep -q "^\.TH LANCEVER 1 \"\" \"lancever $VERSION\"" "$man" && ok || bad "lancever.1 has no .TH line with the version"
help=$("$P/bin/lancever" help)
for c in $(sed -nE 's/^  ([a-z]+) .*/\1/p' <<<"$help"); do
	grep -q "^\.SS \"$c " "$man" && ok || bad "lancever.1 does not document the command $c"
done
for o in $(grep -oE -- '--[a-z0-9-]+' <<<"$help" | sort -u); do
	grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$man" && ok || bad "lancever.1 does not mention $o"
done

echo "$pass passed, $fail failed"
[ $fail = 0 ]
