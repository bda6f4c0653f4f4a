"""Issue 24 section 2: what the package hands to C.  Each repro of the issue (an int wrapped
at 64 bits, a bool taken as 1, a path cut at NUL, a bytes path) is refused before anything
is read or changed; Ctrl-C during a long call stops it at its next storage operation and
raises KeyboardInterrupt with history intact; ``python -m lancever ... | head`` ends
quietly.  The property-based tests over every argument are in props/ (hypothesis)."""

import os
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

import lancever
from conftest import gen_dataset, run_cli


def manifests(path):
    return sorted(p.name for p in (Path(path) / "_versions").iterdir())


# ---- the repros: each refused, nothing changed ----

REPROS = [
    ("cleanup_old_versions", dict(before_version=-1), lancever.InvalidArgumentError),
    ("cleanup_old_versions", dict(retain_versions=2**64 + 5), lancever.InvalidArgumentError),
    ("cleanup_old_versions", dict(versions=[2**64 + 3]), lancever.InvalidArgumentError),
    ("cleanup_old_versions", dict(versions=[0]), lancever.InvalidArgumentError),
    ("cleanup_old_versions", dict(retain_versions=True), TypeError),
    ("cleanup_old_versions", dict(versions=[3.0]), TypeError),
    ("cleanup_old_versions", dict(older_than=timedelta(milliseconds=-1)),
     lancever.InvalidArgumentError),
    ("explain_cleanup_old_versions", dict(before_version=2**64), lancever.InvalidArgumentError),
    ("checkpoint", dict(max_entries=2**64 + 2), lancever.InvalidArgumentError),
    ("checkpoint", dict(max_files=-1), lancever.InvalidArgumentError),
    ("checkpoint", dict(enabled=1), TypeError),
    # pylance 14's keywords (issue 27)
    ("cleanup_old_versions", dict(delete_rate_limit=0), lancever.InvalidArgumentError),
    ("cleanup_old_versions", dict(delete_rate_limit=2**64), lancever.InvalidArgumentError),
    ("cleanup_old_versions", dict(delete_rate_limit=1.5), TypeError),
    ("cleanup_old_versions", dict(delete_rate_limit=True), TypeError),
    ("cleanup_old_versions", dict(delete_concurrency=0), lancever.InvalidArgumentError),
    ("cleanup_old_versions", dict(delete_concurrency=2**61), lancever.InvalidArgumentError),
    ("cleanup_old_versions", dict(delete_concurrency="4"), TypeError),
    ("explain_cleanup_old_versions", dict(delete_rate_limit=-1), lancever.InvalidArgumentError),
    ("explain_cleanup_old_versions", dict(max_files=0), lancever.InvalidArgumentError),
    ("explain_cleanup_old_versions", dict(include_files=1), TypeError),
    ("checkout_version", dict(version=2**64), lancever.InvalidArgumentError),
    ("checkout_version", dict(version=1.0), TypeError),
]


@pytest.mark.parametrize("method,kwargs,exc", REPROS, ids=[f"{m}-{k}" for m, k, _ in REPROS])
def test_wrapping_arguments_are_refused_and_change_nothing(demo, method, kwargs, exc):
    before = manifests(demo)
    checkpoints = sorted(os.listdir(demo)) + sorted(os.listdir(demo / "_versions"))
    with pytest.raises(exc) as e:
        getattr(lancever.Dataset(demo), method)(**kwargs)
    if exc is lancever.InvalidArgumentError:
        assert isinstance(e.value, ValueError)  # older callers catching ValueError still work
        assert next(iter(kwargs)) in str(e.value)  # names the argument
    assert manifests(demo) == before
    assert sorted(os.listdir(demo)) + sorted(os.listdir(demo / "_versions")) == checkpoints


@pytest.mark.parametrize("version", [2**64 + 3, -(2**64) + 3, -1, 2**64])
def test_show_refuses_a_version_out_of_range(demo, version):
    with pytest.raises(lancever.InvalidArgumentError, match="version"):
        lancever.Dataset(demo).show(version)


@pytest.mark.parametrize("version", [True, False, 3.0, None, ("main",), [None, 3], b"3"])
def test_show_refuses_a_non_integer(demo, version):
    with pytest.raises(TypeError):
        lancever.Dataset(demo).show(version)


def test_show_takes_a_string_as_a_tag_name(demo):
    """As pylance: a str is a tag name, never digits read as a number."""
    with pytest.raises(lancever.NotFoundError, match="no tag named '3'"):
        lancever.Dataset(demo).show("3")
    with pytest.raises(lancever.InvalidArgumentError):
        lancever.Dataset(demo).show("a\0b")
    with pytest.raises(lancever.InvalidArgumentError):
        lancever.Dataset(demo).show((None, 2**64))


def test_diff_and_as_of_refuse_what_would_wrap(demo):
    ds = lancever.Dataset(demo)
    with pytest.raises(lancever.InvalidArgumentError):
        ds.diff(1, 2**64 + 12)
    with pytest.raises(TypeError):
        ds.diff(True, 12)  # True == 1 as a dict key: it would answer for version 1
    for ms in (-(2**63) - 1, 2**63):
        with pytest.raises(lancever.InvalidArgumentError, match="when"):
            ds.version_as_of(ms)
    with pytest.raises(lancever.InvalidArgumentError):
        ds.version_as_of(str(2**64 + 5))  # digits: ms, checked as the int they are
    with pytest.raises(TypeError):
        ds.version_as_of(True)
    with pytest.raises(TypeError):
        ds.version_as_of(1.5e12)
    with pytest.raises(TypeError):
        ds.version_as_of(10**13, strict=1)
    with pytest.raises(lancever.InvalidArgumentError):
        ds.versions_stream(batch_rows=-1)


def test_in_range_values_behave_as_before(demo):
    ds = lancever.Dataset(demo)
    assert ds.show(3)["version"] == 3
    last = ds.history()[-1]
    assert ds.version_as_of(2**63 - 1)["version"] == last["version"]
    assert ds.version_as_of(str(last["timestamp_millis"]))["version"] == last["version"]
    with pytest.raises(lancever.NotFoundError):
        ds.version_as_of(-(2**63))
    with pytest.raises(lancever.NotFoundError):
        ds.show(2**64 - 1)
    s = ds.cleanup_old_versions(before_version=2**64 - 1, retain_versions=2**63 - 1, dry_run=True,
                                error_if_tagged_old_versions=False)
    assert s.old_versions == 0


def test_paths_with_nul_are_refused_bytes_paths_work(demo):
    with pytest.raises(lancever.InvalidArgumentError, match="NUL"):
        lancever.Dataset(str(demo) + "\x00junk")
    with pytest.raises(lancever.InvalidArgumentError, match="NUL"):
        lancever.Dataset(os.fsencode(demo) + b"\x00junk")
    ds = lancever.Dataset(os.fsencode(demo))
    assert ds.uri == str(demo)
    assert [v["version"] for v in ds.versions()] == list(range(1, 13))
    with pytest.raises(lancever.NotFoundError):
        lancever.Dataset(b"/x").versions()
    with pytest.raises(TypeError):
        lancever.Dataset(42)
    with pytest.raises(lancever.InvalidArgumentError, match="NUL"):
        lancever.Dataset(demo, branch="main\x00x")
    with pytest.raises(TypeError):
        lancever.Dataset(demo, branch=b"x")
    with pytest.raises(TypeError):
        lancever.Dataset(demo, threads=True)
    with pytest.raises(lancever.InvalidArgumentError, match="threads"):
        lancever.Dataset(demo, threads=2**32 + 1)


def test_storage_options_are_strings_without_nul(demo):
    with pytest.raises(lancever.InvalidArgumentError, match="NUL"):
        lancever.Dataset(demo, storage_options={"region": "eu\x00west"})
    with pytest.raises(lancever.InvalidArgumentError, match="NUL"):
        lancever.Dataset(demo, storage_options={"aws_\x00region": "x"})
    with pytest.raises(TypeError):
        lancever.Dataset(demo, storage_options={b"region": "x"})
    with pytest.raises(TypeError):
        lancever.Dataset(demo, storage_options={"region": b"x"})
    try:  # the value is never in the message
        lancever.Dataset(demo, storage_options={"aws_secret_access_key": "s3cr3t\x00"})
    except lancever.InvalidArgumentError as e:
        assert "s3cr3t" not in str(e)
    else:
        raise AssertionError("not refused")


def test_tags_get_version_wants_a_str(demo):
    tags = lancever.Dataset(demo).tags
    with pytest.raises(TypeError):
        tags.get_version(1)


# ---- Ctrl-C ----

SIGINT_SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    import lancever
    ds = lancever.Dataset(sys.argv[1])
    what = sys.argv[2]

    def prog(phase, done, total):
        if phase == "reading manifests":
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as the cleanup starts

    def ctrl_c_inside_the_call():
        # SIGINT has the package's handler only while a C call runs: Ctrl-C then.
        while signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            time.sleep(0.0002)
        os.kill(os.getpid(), signal.SIGINT)

    if what != "cleanup":
        threading.Thread(target=ctrl_c_inside_the_call, daemon=True).start()
    try:
        if what == "checkpoint":
            ds.checkpoint(max_entries=100)
        elif what == "history":
            ds.history()
        elif what == "versions":  # pylance's rows (issue 27)
            ds.versions()
        elif what == "latest_version":
            ds.latest_version
        elif what == "dataset":  # lancever.dataset(uri, version=): checks the version out
            lancever.dataset(sys.argv[1], version=1500)
        elif what == "rate_limited_cleanup":  # pylance's delete_rate_limit: 1 delete a second
            ds.cleanup_old_versions(retain_versions=2, delete_rate_limit=1, delete_concurrency=1)
        else:
            ds.cleanup_old_versions(retain_versions=2, progress=prog)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        ds.versions()  # the dataset is usable again (the interruption was lifted)
        print("usable", flush=True)
        sys.exit(3)
    print("returned normally")
""")


@pytest.mark.parametrize("what", ["cleanup", "checkpoint", "history", "versions", "latest_version",
                                  "dataset", "rate_limited_cleanup"])
def test_ctrl_c_stops_the_call_and_raises_keyboard_interrupt(tmp_path, what):
    ds = gen_dataset(tmp_path / "many.lance", 2000)
    before = manifests(ds)
    script = tmp_path / "sigint.py"
    script.write_text(SIGINT_SCRIPT)
    r = subprocess.run([sys.executable, str(script), str(ds), what], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert r.stdout.split() == ["KeyboardInterrupt", "usable"]
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    if what == "cleanup":  # stopped while reading: not one manifest deleted
        assert manifests(ds) == before
    check = run_cli("check", ds, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    assert [v["version"] for v in lancever.Dataset(ds).history()] == list(range(1, 2001))


def test_storage_interrupt_refuses_every_operation(tmp_path):
    """lv_storage_interrupt() itself: an interrupted handle reads nothing, a lifted one does."""
    ds = lancever.Dataset(gen_dataset(tmp_path / "d.lance", 5))
    from lancever import _lib
    _lib.lib().lv_storage_interrupt(ds._storage, True)
    with pytest.raises(lancever.StorageError, match="interrupted"):
        ds.versions()
    _lib.lib().lv_storage_interrupt(ds._storage, False)
    assert len(ds.versions()) == 5


# ---- python -m lancever | head ----

def test_python_m_lancever_into_a_closed_pipe(tmp_path):
    ds = gen_dataset(tmp_path / "d.lance", 3000)
    p = subprocess.Popen([sys.executable, "-m", "lancever", "history", str(ds)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()  # `| head -1`: read a line, close the pipe
    p.stdout.close()
    err = p.stderr.read().decode()
    rc = p.wait(timeout=60)
    assert err == "", err
    assert rc == 141
