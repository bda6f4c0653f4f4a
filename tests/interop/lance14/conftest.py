"""Shared by the Lance 14 interop tests (pylance 14.0.2, the third peer; issue 25).

They run with pytest in the venv tests/python-venv.sh makes from
tests/interop/peers/lance14/requirements.txt (CTest: interop/lance14/*).  Nothing here
skips: a peer that cannot be imported, or that is not the pinned version, fails every test.
"""
import json
import os
import subprocess

import pytest

import lance  # noqa: F401  (an import error fails the run: never a skip)
import pyarrow as pa

PEER_VERSION = "14.0.2"
LANCEVER = os.environ.get("LANCEVER_BIN")


def pytest_report_header(config):
    return f"peer: pylance {lance.__version__} (Lance {lance.__version__.split('.')[0]}), pyarrow {pa.__version__}"


@pytest.fixture(scope="session", autouse=True)
def the_pinned_peer():
    assert lance.__version__ == PEER_VERSION, f"pylance {lance.__version__}, not the pinned {PEER_VERSION}"
    assert LANCEVER and os.path.exists(LANCEVER), "LANCEVER_BIN is not set or missing"


def lv(*args, check=True, env=None):
    """Runs the lancever CLI; returns the CompletedProcess (text)."""
    r = subprocess.run([LANCEVER, *map(str, args)], capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        raise AssertionError(f"lancever {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr}")
    return r


def lv_json(*args, **kw):
    return json.loads(lv(*args, "--json", **kw).stdout)
