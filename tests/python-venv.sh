#!/usr/bin/env bash
# Makes the virtual environment the hypothesis tests run in (CTest's unit/python-venv, the
# fixture of unit/python-props; run it by hand the same way):
#
#   bash tests/python-venv.sh [DIR [REQUIREMENTS [MODULES]]]
#
# DIR defaults to build/venv, REQUIREMENTS to python/requirements-test.txt, MODULES (the
# imports that prove the venv works, comma-separated) to "hypothesis,pytest".  The Lance 14
# peer's venv is the same script with tests/interop/peers/lance14/requirements.txt and
# "lance,pyarrow,pytest,polars,duckdb,pandas" (CTest's interop/lance14/venv).
#
# The venv is made with $LV_PYTHON (default /usr/bin/python3, CMake's LV_PYTHON) without pip
# or system site-packages, and gets exactly the wheels python/requirements-test.txt pins,
# each checked against its hash (pip --require-hashes --no-deps: nothing unpinned is
# fetched).  Debian's pip installs into it (pip --python), so no ensurepip / python3-venv
# is needed.  A venv already made from the same requirements file is kept (a stamp holds
# the file's hash); any failure fails the run: a test that needs hypothesis never skips.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$src/build/venv}
python=${LV_PYTHON:-/usr/bin/python3}
req=${2:-$src/python/requirements-test.txt}
mods=${3:-hypothesis,pytest}
stamp=$venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null || true)" = "$want" ] &&
   "$venv/bin/python" -c "import $mods" 2>/dev/null; then
  echo "python-venv: $venv is up to date with $req"
  exit 0
fi
rm -rf "$venv"
"$python" -m venv --without-pip "$venv"
"$python" -m pip --python "$venv/bin/python" install --disable-pip-version-check --no-input \
  --require-hashes --no-deps --only-binary=:all: -r "$req"
"$venv/bin/python" -c "import $mods; print('python-venv: ' + ', '.join(m + ' ' + getattr(__import__(m), '__version__', '?') for m in '$mods'.split(',')))"
echo "$want" > "$stamp"
