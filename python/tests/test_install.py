"""The README's set-up: `cmake --install` puts the package into the interpreter's
site-packages with a copy of liblancever.so next to it, which the package loads first
(no LANCEVER_LIBRARY needed); `pip install --no-build-isolation ./python` (Debian's pip,
setuptools and wheel, no PyPI) installs the pure-Python package, which then finds the
library through LANCEVER_LIBRARY.  Both are installed into scratch directories (DESTDIR,
--target) and imported by a fresh interpreter."""

import json
import os
import re
import subprocess
import sys

from conftest import BUILD, SOURCE

PROBE = ("import json, sys, lancever; ds = lancever.Dataset(sys.argv[1]); "
         "print(json.dumps({'file': lancever.__file__, 'lib': lancever.library_path(), "
         "'versions': [r['version'] for r in ds.history()]}))")


def probe(pythonpath, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("LANCEVER_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = str(pythonpath)
    env.update(env_extra or {})
    r = subprocess.run([sys.executable, "-c", PROBE, str(SOURCE / "demo" / "demo.lance")],
                       capture_output=True, text=True, env=env, cwd="/")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def site_dir():
    cache = (BUILD / "CMakeCache.txt").read_text()
    line = next(l for l in cache.splitlines() if l.startswith("LV_PYTHON_SITEDIR:"))
    rel = line.split("=", 1)[1]
    prefix = next(l for l in cache.splitlines() if l.startswith("CMAKE_INSTALL_PREFIX:")).split("=", 1)[1]
    return rel if rel.startswith("/") else f"{prefix}/{rel}"


def test_cmake_install_puts_the_library_next_to_the_package(tmp_path):
    env = dict(os.environ, DESTDIR=str(tmp_path))
    r = subprocess.run(["cmake", "--install", str(BUILD)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    site = tmp_path / site_dir().lstrip("/")
    assert (site / "lancever" / "liblancever.so").is_file()
    assert (site / "lancever" / "dataset.py").is_file()
    got = probe(site)
    assert got["file"] == str(site / "lancever" / "__init__.py")
    assert got["lib"] == str(site / "lancever" / "liblancever.so")
    assert got["versions"] == list(range(1, 13))


def test_pip_install_no_build_isolation(tmp_path):
    # the repository's layout in a scratch copy (the build writes into its source folder):
    # python/ and the CMakeLists.txt whose project(VERSION) the package's version is
    (tmp_path / "repo").mkdir()
    subprocess.run(["cp", "-r", str(SOURCE / "python"), str(SOURCE / "CMakeLists.txt"),
                    str(tmp_path / "repo")], check=True)
    src = tmp_path / "repo" / "python"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                        "--no-index", "--target", str(tmp_path / "site"), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lib = os.environ["LANCEVER_LIBRARY"]
    got = probe(tmp_path / "site", {"LANCEVER_LIBRARY": lib})
    assert got["file"] == str(tmp_path / "site" / "lancever" / "__init__.py")
    assert got["lib"] == lib and got["versions"] == list(range(1, 13))
    # the metadata's version is CMakeLists.txt's project(VERSION), the one place it is written
    version = re.search(r"project\(lancever VERSION ([0-9.]+)", (SOURCE / "CMakeLists.txt").read_text()).group(1)
    assert (tmp_path / "site" / f"lancever-{version}.dist-info").is_dir()
