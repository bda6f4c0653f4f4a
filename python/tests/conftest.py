"""Shared set-up of the lancever Python tests (run by CTest: unit/python, interop/python).

* Says which interpreter runs the tests, and fails if it is not the one CMake chose
  (LANCEVER_EXPECTED_PYTHON, Debian's /usr/bin/python3 by default).
* Never skips: a skipped test fails the run.
* Fixtures: the C CLI (for its --json, the reference the package is compared with), a
  scratch copy of the shipped LanceDB-written demo dataset, synthetic datasets made by
  bench/gen_dataset, and (interop) datasets written by LanceDB through the Node peer.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("LANCEVER_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("LANCEVER_BUILD_DIR", SOURCE / "build"))
CLI = os.environ.get("LANCEVER_BIN", str(BUILD / "lancever"))
HERE = Path(__file__).resolve().parent


def pytest_configure(config):
    config.addinivalue_line("markers", "interop: needs the Node peer (LanceDB 0.31.0)")
    config.addinivalue_line("markers", "hooks: needs the test library's hooks (liblancever_test.so, "
                            "built with LV_TEST_HOOKS; CTest unit/python-hooks)")


def pytest_report_header(config):
    import lancever
    return [f"interpreter: {sys.executable} (Python {sys.version.split()[0]})",
            f"lancever package: {Path(lancever.__file__).parent}",
            f"liblancever: {lancever.library_path()} ({lancever.library_version()})"]


def pytest_sessionstart(session):
    want = os.environ.get("LANCEVER_EXPECTED_PYTHON")
    if want and os.path.realpath(sys.executable) != os.path.realpath(want):
        raise pytest.UsageError(f"tests must run with {want}, not {sys.executable}")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped:
        terminalreporter.write_line(f"FAIL: {len(skipped)} test(s) skipped; tests never skip")


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter and reporter.stats.get("skipped"):
        session.exitstatus = 1


def run_cli(*args, check=True):
    """Runs the C CLI; returns its CompletedProcess (text)."""
    r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"lancever {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return r


def cli_json(*args):
    return json.loads(run_cli(*args, "--json").stdout)


@pytest.fixture
def demo(tmp_path):
    """A scratch copy of demo/demo.lance (LanceDB 0.31.0-written, 12 versions, 2 tags)."""
    dst = tmp_path / "demo.lance"
    shutil.copytree(SOURCE / "demo" / "demo.lance", dst)
    return dst


def gen_dataset(path, versions, fragments=1, start=1):
    """A synthetic Lance dataset (bench/gen_dataset) of `versions` manifests."""
    exe = BUILD / "gen_dataset"
    subprocess.run([str(exe), str(path), "--versions", str(versions), "--fragments",
                    str(fragments), "--start", str(start)], check=True, capture_output=True)
    return path


@pytest.fixture
def cleaned_demo(demo):
    """The demo after a cleanup keeping 3 versions (tags kept): history has cleaned-up rows."""
    run_cli("cleanup", demo, "--retain-versions", "3", "--no-error-if-tagged-old-versions")
    return demo


# ---- interop: datasets written by LanceDB (Node peer) ----

def node(*args):
    r = subprocess.run(["node", str(HERE / "lance_peer.mjs"), *map(str, args)],
                       capture_output=True, text=True, cwd=SOURCE / "tests" / "interop")
    if r.returncode != 0:
        raise AssertionError(f"node lance_peer.mjs {' '.join(map(str, args))}: {r.stderr}")
    return json.loads(r.stdout)


@pytest.fixture(scope="session")
def lance_datasets(tmp_path_factory):
    """Every scenario of tests/interop/datasets.mjs, built by LanceDB:
    {name: {"dir": ..., "list": LanceDB listVersions() as JSON, "expectations": ...}}."""
    parent = tmp_path_factory.mktemp("lance")
    return node("build", parent)


def lance_list(path):
    """LanceDB's listVersions() of a dataset directory, now."""
    return node("list", path)
