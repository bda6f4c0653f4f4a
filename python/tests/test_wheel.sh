#!/usr/bin/env bash
# CTest unit/python-wheel: `pip install` as a Python user does it, checked end to end.
#
#   bash python/tests/test_wheel.sh SOURCE_DIR BUILD_DIR
#
# 1. A fresh venv (no pip, no system site-packages) gets the pinned build backend and pytest
#    (python/requirements-wheel.txt, --require-hashes) from tests/python-venv.sh.
# 2. The wheel: `pip wheel SOURCE --no-deps` with that venv's backend (--no-build-isolation:
#    the same pinned scikit-build-core, and a CMake build directory kept under BUILD_DIR so a
#    second run compiles only what changed), installed into the venv from the file.
# 3. With no LANCEVER_* variable, no PYTHONPATH and the cwd outside the source tree: the
#    package imports from the venv, loads its bundled library, reads the demo dataset; the
#    console entry `lancever --version` prints CMakeLists.txt's version; ldd of every shared
#    object in the package finds only the bundled libraries and the allowed system ones
#    (cmake/wheel.cmake), and with a libcurl.so.4 that cannot load, the command still reads
#    a local dataset and an s3:// URI fails naming the library; the C accelerator
#    lancever._rows is inside the package and used (and a wheel built where Python's
#    headers are missing leaves it out and still works); python/tests passes against the installed package, with the
#    installed `lancever` as its CLI: all of it but the interop tests (Node peers), the
#    hypothesis ones (unit/python-props), test_install.py (the cmake --install path) and
#    test_to_pandas (pandas is an optional dependency the venv does not carry; unit/python
#    runs it with Debian's python3-pandas).
# 4. The sdist: built with the backend's PEP 517 hook, checked for the files a build needs,
#    and built into a wheel by pip exactly as `pip install .` or `pip install lancever-*.tar.gz`
#    does it (build isolation: pyproject.toml's pinned backend fetched from PyPI, a full
#    compile in a temporary directory), which a second fresh venv imports and runs.
# Any failure, including a download or a compile, fails the test: nothing is skipped.
set -euo pipefail
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
work=$build/python-wheel
abi_dump=${LANCEVER_ABI_DUMP:-$build/python/lv_python_abi}  # CTest passes the helper's path
pip=(/usr/bin/python3 -m pip --disable-pip-version-check --no-input)
rm -rf "$work/dist" "$work/venv" "$work/venv-sdist" "$work/run"
mkdir -p "$work/dist" "$work/run"
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $* ($(( SECONDS ))s)"; }

step "venv with the pinned backend and pytest"
bash "$src/tests/python-venv.sh" "$work/venv" "$src/python/requirements-wheel.txt" \
  scikit_build_core,pytest
py=$work/venv/bin/python

step "pip wheel $src"
"${pip[@]}" --python "$py" wheel --no-deps --no-build-isolation -w "$work/dist" \
  --config-settings=build-dir="$work/cmake-build" "$src"
whl=$(ls "$work"/dist/lancever-*.whl)
"${pip[@]}" --python "$py" install --no-deps --no-index "$whl"

# Everything below runs outside the source tree with a clean environment.
clean_env=(env -u PYTHONPATH -u LD_LIBRARY_PATH -u LD_PRELOAD)
for v in $(env | sed -n 's/^\(LANCEVER_[A-Z_]*\)=.*/\1/p'); do clean_env+=(-u "$v"); done
cd "$work/run"
site=$("${clean_env[@]}" "$py" -c "import sysconfig; print(sysconfig.get_path('purelib'))")
pkg=$site/lancever

step "import, the bundled library, the demo dataset"
got=$("${clean_env[@]}" "$py" -c '
import sys, lancever
ds = lancever.Dataset(sys.argv[1])
print(lancever.__file__, lancever.library_path(), len(ds.versions()), len(ds.history()))
' "$src/demo/demo.lance")
echo "$got"
[ "$got" = "$pkg/__init__.py $pkg/liblancever.so 12 12" ] || fail "unexpected: $got"

step "the console entry"
want=$(sed -n 's/^project(lancever VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
ver=$("${clean_env[@]}" "$work/venv/bin/lancever" --version | head -1)
[ "$ver" = "lancever $want" ] || fail "lancever --version said '$ver', want 'lancever $want'"
"${clean_env[@]}" "$work/venv/bin/lancever" versions "$src/demo/demo.lance" --json >/dev/null
# The entry execs the C command: its exit status and messages are the command's own.
set +e
"${clean_env[@]}" "$work/venv/bin/lancever" versions "$work/run/nothing-here" 2>"$work/run/e1"; rc1=$?
"${clean_env[@]}" "$build/lancever" versions "$work/run/nothing-here" 2>"$work/run/e2"; rc2=$?
set -e
[ "$rc1" -ne 0 ] && [ "$rc1" -eq "$rc2" ] && cmp -s "$work/run/e1" "$work/run/e2" ||
  fail "the console entry exited $rc1 ($(cat "$work/run/e1")), the C command $rc2 ($(cat "$work/run/e2"))"

step "libcurl missing: local datasets work, s3:// names the library"
mkdir -p "$work/run/nocurl" && : > "$work/run/nocurl/libcurl.so.4"  # found first, cannot load
nocurl=("${clean_env[@]}" LD_LIBRARY_PATH="$work/run/nocurl")
"${nocurl[@]}" "$work/venv/bin/lancever" versions "$src/demo/demo.lance" >/dev/null
set +e
msg=$("${nocurl[@]}" "$work/venv/bin/lancever" versions s3://bucket/t.lance 2>&1); rc=$?
set -e
[ "$rc" -ne 0 ] && grep -q "needs libcurl.so.4, which could not be loaded" <<<"$msg" ||
  fail "s3:// without libcurl exited $rc: $msg"

step "ldd of the package's shared objects"
allowed='^(libc|libm|libpthread|libdl|librt|libzstd|liblz4|libexpat)\.so\.[0-9]+$'
nelf=0
while IFS= read -r -d '' f; do
  [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
  nelf=$((nelf + 1))
  out=$("${clean_env[@]}" ldd "$f") || fail "ldd $f: $out"
  echo "$f:"; echo "$out"
  ! grep -q "not found" <<<"$out" || fail "$f needs a library this system lacks"
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    case $(realpath "$path") in "$(realpath "$pkg")"/*) continue ;; esac
    [[ $name =~ $allowed ]] || fail "$f links $name ($path): not bundled, not on every system"
  done <<<"$out"
done < <(find "$pkg" -type f -print0)
[ "$nelf" -eq 4 ] ||
  fail "expected 4 shared objects (library, bundled libjansson, CLI, the accelerator), found $nelf"

step "the C accelerator lancever._rows is the package's own"
got=$("${clean_env[@]}" "$py" -c 'import lancever._rows as r, lancever._accel as a; print(r.__file__, a.accelerated())')
[[ $got == "$pkg/_rows."*".so True" ]] || fail "lancever._rows: $got"

step "python/tests against the installed wheel"
"${clean_env[@]}" LANCEVER_SOURCE_DIR="$src" LANCEVER_BUILD_DIR="$build" \
  LANCEVER_BIN="$work/venv/bin/lancever" LANCEVER_ABI_DUMP="$abi_dump" LANCEVER_EXPECT_ACCEL=1 \
  PYTHONDONTWRITEBYTECODE=1 \
  "$py" -m pytest -p no:cacheprovider -rA -m "not interop and not hooks" "$src/python/tests" \
  --ignore="$src/python/tests/test_props.py" --ignore="$src/python/tests/test_install.py" \
  -k "not test_to_pandas" \
  | tee "$work/pytest.log"
grep -q "^lancever package: $pkg\$" "$work/pytest.log" ||
  fail "pytest did not import the installed package (see the header of $work/pytest.log)"

step "a build machine without Python's headers: the wheel leaves the accelerator out"
# scikit-build-core hands CMake the interpreter's include directory whether or not the headers
# are installed (python3-dev); an empty directory stands in for that machine here.
mkdir -p "$work/run/no-headers"
rm -rf "$work/dist-noheaders" "$work/venv-noheaders"
"${pip[@]}" --python "$py" wheel --no-deps --no-build-isolation -w "$work/dist-noheaders" \
  --config-settings=build-dir="$work/cmake-build-noheaders" \
  --config-settings=cmake.define.Python3_INCLUDE_DIR="$work/run/no-headers" "$src"
/usr/bin/python3 -m venv --without-pip "$work/venv-noheaders"
"${pip[@]}" --python "$work/venv-noheaders/bin/python" install --no-deps --no-index \
  "$work"/dist-noheaders/lancever-*.whl
got=$("${clean_env[@]}" "$work/venv-noheaders/bin/python" -c '
import sys, lancever, lancever._accel as a
print(len(lancever.Dataset(sys.argv[1]).versions()), a.accelerated())' "$src/demo/demo.lance")
[ "$got" = "12 False" ] || fail "the wheel built without headers: $got, want 12 False"

step "the sdist"
(cd "$src" && "$py" -c 'import sys
from scikit_build_core.build import build_sdist
print(build_sdist(sys.argv[1]))' "$work/dist")
sdist=$(ls "$work"/dist/lancever-*.tar.gz)
list=$(tar tzf "$sdist")
for need in pyproject.toml CMakeLists.txt cmake/wheel.cmake cmake/deps.cmake cmake/pyrows.cmake python/ext/rows.c \
            src/lib/core/history.c src/cli/main.c include/lancever/lancever.h \
            python/lancever/__init__.py python/lancever/_cli.py python/README.md; do
  grep -qx "lancever-$want/$need" <<<"$list" || fail "the sdist lacks $need"
done
! grep -q "^lancever-$want/fuzz/" <<<"$list" || fail "the sdist carries fuzz/"
rm -f "$whl"
"${pip[@]}" wheel --no-deps -w "$work/dist" "$sdist"
/usr/bin/python3 -m venv --without-pip "$work/venv-sdist"
"${pip[@]}" --python "$work/venv-sdist/bin/python" install --no-deps --no-index \
  "$work"/dist/lancever-*.whl
got=$("${clean_env[@]}" "$work/venv-sdist/bin/python" -c '
import sys, lancever, lancever._accel as a
print(len(lancever.Dataset(sys.argv[1]).versions()), a.accelerated())' "$src/demo/demo.lance")
[ "$got" = "12 True" ] || fail "the sdist-built wheel read/accelerated: $got, want 12 True"
ver=$("${clean_env[@]}" "$work/venv-sdist/bin/lancever" --version | head -1)
[ "$ver" = "lancever $want" ] || fail "sdist wheel: lancever --version said '$ver'"
step "ok"
