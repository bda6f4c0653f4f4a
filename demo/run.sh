#!/usr/bin/env bash
# Builds lancever and runs it on demo/demo.lance, a small dataset written by
# LanceDB 0.31 (Lance 8.0.0): appends, a delete, an update, a btree index, a
# compaction, two tags and an overwrite.  The demo works on a scratch copy, so
# the shipped dataset is never modified.
#
# It first installs what the build needs and is missing (tests/install-deps.sh --build,
# from the one list tests/debian-packages.txt; as root on Debian 12), then builds the
# library and the CLI, without the tests, in build-demo/.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
bash "$src/tests/install-deps.sh" --build
cmake -S "$src" -B "$src/build-demo" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLV_BUILD_TESTS=OFF >/dev/null
cmake --build "$src/build-demo" >/dev/null
lv="$src/build-demo/lancever"
ds=$(mktemp -d)/demo.lance
trap 'rm -rf "$(dirname "$ds")"' EXIT
cp -r "$src/demo/demo.lance" "$ds"

run() { printf '\n$ lancever %s\n' "$*"; "$lv" "$@"; }
run versions "$ds" --stats
run tags "$ds"
run show "$ds" 4
run checkpoint "$ds"
run versions "$ds" --stats
run cleanup "$ds" --older-than 0s --no-error-if-tagged-old-versions --list
run versions "$ds"
run history "$ds" --stats
t=$("$lv" show "$ds" 3 --json | sed -E 's/.*"timestamp_millis":([0-9]+).*/\1/')
run asof "$ds" "$t"
run diff "$ds" 3 12
