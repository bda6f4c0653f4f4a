#!/usr/bin/env bash
# check_layers.py can fail: on scratch copies of src/, include/, CONTRIBUTING.md and
# CMakeLists.txt, each planted fault must fail the check with its message, and the
# unchanged copy must pass (with the same --pending as CTest's arch/layers).
#   test_check_layers.sh SOURCE_DIR [--cmake CMAKELISTS] [--pending FILE]...  (check_layers.py's
#   arguments; --cmake is applied to each copy's own CMakeLists.txt)
set -u
src=${1:?usage: test_check_layers.sh SOURCE_DIR [--cmake CMAKELISTS] [--pending FILE]...}
shift
[ "${1:-}" = --cmake ] && shift 2
check=$src/tests/arch/check_layers.py
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
plant() { # name PATH=CONTENT... expected-message ("" = must pass)
	local name=$1 want=${!#} d=$T/$1
	mkdir -p "$d"
	cp -r "$src/src" "$src/include" "$src/CONTRIBUTING.md" "$src/CMakeLists.txt" "$d/"
	shift
	while [ $# -gt 1 ]; do
		mkdir -p "$(dirname "$d/${1%%=*}")"
		printf '%b' "${1#*=}" >>"$d/${1%%=*}"
		shift
	done
	out=$(python3 "$check" "$d" --cmake "$d/CMakeLists.txt" "${pending[@]}" 2>&1)
	rc=$?
	if [ -z "$want" ]; then
		[ $rc -eq 0 ] || { echo "FAIL: $name: the unchanged tree fails: $out"; fail=1; }
	elif [ $rc -eq 0 ] || ! grep -qF -- "$want" <<<"$out"; then
		echo "FAIL: $name: expected a failure with '$want', got (rc $rc): $out"
		fail=1
	else
		echo "ok: $name: $(grep -F -- "$want" <<<"$out" | head -1)"
	fi
}
pending=("$@")
plant unchanged ""
plant include-up 'src/lib/util/array.c=#include "core/vlist.h"\n' \
	"upward edge: src/lib/util/array.c -> src/lib/core/vlist.h"
plant call-up 'src/lib/format/refs.c=int lv__x(void);\nint lv__x(void) { return (int)lv__now_ms() + (lv_storage_list ? 1 : 0); }\n' \
	"upward edge: src/lib/format/refs.c -> src/lib/storage/storage.c (uses lv_storage_list)"
plant cli-internal 'src/cli/main.c=#include "util/util.h"\n' "upward edge: src/cli/main.c -> src/lib/util/util.h"
plant circle 'src/lib/util/array.c=int lv__circ_a(void);\nint lv__circ_a(void) { return lv__circ_b(); }\n' \
	'src/lib/util/buf.c=int lv__circ_b(void);\nint lv__circ_b(void) { return lv__circ_a(); }\n' \
	"circle of files: src/lib/util/array.c -> src/lib/util/buf.c"
plant core-order 'src/lib/core/fetch.c=int lv__y(void);\nint lv__y(void) { return lv_check_free ? 1 : 0; }\n' \
	"upward call in core: src/lib/core/fetch.c (rank 10) -> src/lib/core/check.c"
plant core-unlisted 'src/lib/core/newfile.c=int lv__n;\n' "src/lib/core/newfile.c: not in the core order table"
plant unplaced 'src/lib/newdir/z.c=int lv__z;\n' "src/lib/newdir/z.c: no row of the layer table places it"
plant hook-unlisted 'src/lib/util/text.c=#ifdef LV_TEST_HOOKS\n#endif\n' \
	"src/lib/util/text.c mentions LV_TEST_HOOKS but is not in LV_HOOK_SOURCES"
[ $fail -eq 0 ] || exit 1
# an exemption with nothing left to exempt fails
if python3 "$check" "$src" "${pending[@]}" --pending src/lib/util/array.c >"$T/out" 2>&1 ||
	! grep -q "pending src/lib/util/array.c: it has no upward edge left" "$T/out"; then
	echo "FAIL: a --pending file without upward edges passes: $(cat "$T/out")"
	exit 1
fi
echo "test_check_layers: every planted fault fails the check, the unchanged tree passes"
