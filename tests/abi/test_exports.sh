#!/usr/bin/env bash
# The exported symbol set of the production liblancever.so must equal the functions the public
# headers declare with LV_EXTERN (include/lancever/**/*.h), leaving out the test-hook headers
# (those that require LV_TEST_HOOKS: sys/testing.h, sys/arrow.h): nothing internal leaks,
# nothing declared is missing, and no test hook is in the production library (.so or .a).
# The test library (liblancever_test.so, built with LV_TEST_HOOKS) exports the public API plus
# exactly the hooks.  And one internal prefix: every global symbol of the static libraries
# (liblancever.a, liblancever_test.a, beside the .so files) is either declared or starts with
# lv__ (file-local names are static).
#   test_exports.sh LIBLANCEVER_SO INCLUDE_DIR LIBLANCEVER_TEST_SO
set -euo pipefail
usage="usage: test_exports.sh LIBLANCEVER_SO INCLUDE_DIR LIBLANCEVER_TEST_SO"
lib=${1:?$usage}
inc=${2:?$usage}
testlib=${3:?$usage}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "$1:"; sed 's/^/  /' "$2"; status=1; }

exported() { nm -D --defined-only "$1" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u; }
# Declarations may span lines: join each header, then take the name before the '(' that follows
# LV_EXTERN (variables would be 'LV_EXTERN type name;').
declared() {
	for h in "$@"; do
		grep -v '^[[:space:]]*#' "$h" | tr '\n' ' ' | grep -oE 'LV_EXTERN[^;(]*[(;]' |
			sed -E 's/[[:space:]]*[(;]$//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)$/\1/' || true
	done | sort -u
}
find "$inc" -name '*.h' | sort >"$tmp/headers"
grep -l 'LV_TEST_HOOKS' $(cat "$tmp/headers") >"$tmp/hook_headers" || true
grep -vxF -f "$tmp/hook_headers" "$tmp/headers" >"$tmp/api_headers"
[ -s "$tmp/hook_headers" ] || { echo "no header of $inc requires LV_TEST_HOOKS"; status=1; }
declared $(cat "$tmp/api_headers") >"$tmp/api"
declared $(cat "$tmp/hook_headers") >"$tmp/hooks"
sort -u "$tmp/api" "$tmp/hooks" >"$tmp/all"

# 1. the production .so: the public API, no more, no less
exported "$lib" >"$tmp/exported"
comm -23 "$tmp/exported" "$tmp/all" >"$tmp/d"; [ ! -s "$tmp/d" ] || fail "exported by $(basename "$lib") but not declared in include/lancever/ (internals leaking)" "$tmp/d"
comm -13 "$tmp/exported" "$tmp/api" >"$tmp/d"; [ ! -s "$tmp/d" ] || fail "declared LV_EXTERN but not exported by $(basename "$lib")" "$tmp/d"
comm -12 "$tmp/exported" "$tmp/hooks" >"$tmp/d"; [ ! -s "$tmp/d" ] || fail "test hooks in the production $(basename "$lib") (compile them only with LV_TEST_HOOKS)" "$tmp/d"
# 2. the test .so: the public API plus the hooks
exported "$testlib" >"$tmp/texported"
if ! cmp -s "$tmp/texported" "$tmp/all"; then
	diff "$tmp/all" "$tmp/texported" | grep '^[<>]' >"$tmp/d" || true
	fail "$(basename "$testlib") differs from the public API plus the hooks (< declared, > exported)" "$tmp/d"
fi
# 3. the static libraries: declared or lv__-prefixed; the production one without hooks
globals() { # (a sanitizer build adds its own __odr_asan.* / __asan_* globals: not ours)
	nm -g --defined-only "$1" | awk 'NF == 3 {print $3}' | grep -vE '^__(odr_asan|asan|ubsan|sanitizer)' | sort -u
}
for a in "$(dirname "$lib")/liblancever.a" "$(dirname "$testlib")/liblancever_test.a"; do
	if [ ! -f "$a" ]; then
		echo "no $a"
		status=1
		continue
	fi
	globals "$a" >"$tmp/globals"
	grep -v '^lv__' "$tmp/globals" | comm -23 - "$tmp/all" >"$tmp/d" || true
	[ ! -s "$tmp/d" ] || fail "global symbols of $(basename "$a") that are neither public nor lv__-prefixed" "$tmp/d"
	case $a in */liblancever.a)
		comm -12 "$tmp/globals" "$tmp/hooks" >"$tmp/d"
		[ ! -s "$tmp/d" ] || fail "test hooks in the production $(basename "$a")" "$tmp/d"
		nint=$(grep -c '^lv__' "$tmp/globals" || true) ;;
	esac
done
echo "$(wc -l <"$tmp/exported") exported, $(wc -l <"$tmp/api") declared, $(wc -l <"$tmp/hooks") hooks (test library only: $(wc -l <"$tmp/texported") exported), ${nint:-?} internal lv__ globals"
exit $status
