#!/usr/bin/env bash
# One version number: CMakeLists.txt's project(VERSION), and every place that shows it agrees.
#
#   test_version.sh SOURCE_DIR BUILD_DIR
#
# 1. `lancever --version` says "lancever V", lv_version_string() (through Python) says V,
#    `lancever.__version__` is V, lancever.pc says V, and python/lancever/_version.py (what the
#    setuptools route of python/pyproject.toml reads) finds V.
# 2. No source file writes V a second time (src/, include/, python/, cmake/, the pyproject files):
#    a copy would drift at the next release.
set -u
src=$(cd "${1:?usage: test_version.sh SOURCE_DIR BUILD_DIR}" && pwd)
build=$(cd "${2:?usage: test_version.sh SOURCE_DIR BUILD_DIR}" && pwd)
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
V=$(sed -nE 's/^project\(lancever VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$src/CMakeLists.txt")
[ -n "$V" ] || { echo "FAIL: no project(lancever VERSION x.y.z) in CMakeLists.txt"; exit 1; }
echo "CMakeLists.txt: $V"

first=$("$build/lancever" --version | head -1)
[ "$first" = "lancever $V" ] || bad "lancever --version says '$first', not 'lancever $V'"
py=$(cd "$build" && PYTHONPATH="$src/python" LANCEVER_LIBRARY="$build/liblancever.so" python3 -c \
	'import lancever, lancever._version as v; print(lancever.__version__, lancever.library_version(), v.version)')
[ "$py" = "$V $V $V" ] || bad "Python says '$py' (__version__, library_version(), _version.version), not '$V' each"
pc=$(sed -nE 's/^Version: *//p' "$build/lancever.pc")
[ "$pc" = "$V" ] || bad "lancever.pc says '$pc'"

vre=${V//./\\.}
copies=$(cd "$src" && grep -rnE "(^|[^0-9.])$vre([^0-9]|\$)" src include python cmake pyproject.toml \
	--include='*.c' --include='*.h' --include='*.py' --include='*.toml' --include='*.cmake' --include='*.in' \
	--include='CMakeLists.txt' 2>/dev/null)
[ -z "$copies" ] || bad "the version $V is written again (use PROJECT_VERSION / lv_version_string):
$copies"
[ $fail = 0 ] && echo "one version: $V everywhere"
[ $fail = 0 ]
