#!/usr/bin/env bash
# The exported symbol set of liblancever.so must equal the functions the public headers declare
# with LV_EXTERN (include/lancever/**/*.h): nothing internal leaks, nothing declared is missing.
# And one internal prefix: every global symbol of the static library (liblancever.a, beside the
# .so) is either one of those or starts with lv__ (file-local names are static).
#   test_exports.sh LIBLANCEVER_SO INCLUDE_DIR
set -euo pipefail
lib=${1:?usage: test_exports.sh LIBLANCEVER_SO INCLUDE_DIR}
inc=${2:?usage: test_exports.sh LIBLANCEVER_SO INCLUDE_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u >"$tmp/exported"
# Declarations may span lines: join each header, then take the name before the '(' that follows
# LV_EXTERN (variables would be 'LV_EXTERN type name;').
for h in $(find "$inc" -name '*.h' | sort); do
	grep -v '^[[:space:]]*#' "$h" | tr '\n' ' ' | grep -oE 'LV_EXTERN[^;(]*[(;]' |
		sed -E 's/[[:space:]]*[(;]$//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)$/\1/'  || true
done | sort -u >"$tmp/declared"
status=0
if ! comm -23 "$tmp/exported" "$tmp/declared" | grep -q .; then :; else
	echo "exported but not declared in include/lancever/ (internals leaking):"
	comm -23 "$tmp/exported" "$tmp/declared" | sed 's/^/  /'
	status=1
fi
if comm -13 "$tmp/exported" "$tmp/declared" | grep -q .; then
	echo "declared LV_EXTERN but not exported:"
	comm -13 "$tmp/exported" "$tmp/declared" | sed 's/^/  /'
	status=1
fi
archive=$(dirname "$lib")/liblancever.a
if [ ! -f "$archive" ]; then
	echo "no $archive beside $lib"
	status=1
else
	# (a sanitizer build adds its own __odr_asan.* / __asan_* globals: not ours)
	nm -g --defined-only "$archive" | awk 'NF == 3 {print $3}' | grep -vE '^__(odr_asan|asan|ubsan|sanitizer)' |
		sort -u >"$tmp/globals"
	if grep -v '^lv__' "$tmp/globals" | comm -23 - "$tmp/declared" | grep -q .; then
		echo "global symbols of liblancever.a that are neither public nor lv__-prefixed:"
		grep -v '^lv__' "$tmp/globals" | comm -23 - "$tmp/declared" | sed 's/^/  /'
		status=1
	fi
fi
echo "$(wc -l <"$tmp/exported") exported, $(wc -l <"$tmp/declared") declared, $(grep -c '^lv__' "$tmp/globals" 2>/dev/null) internal lv__ globals"
exit $status
