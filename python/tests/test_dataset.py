"""Every method of lancever.Dataset on real LanceDB-written data (the shipped demo) and on
synthetic histories with cleaned-up versions and gaps, compared with the C CLI's --json
(the reference: the CLI and the package share the library, and the CLI's output is
itself checked against LanceDB by tests/interop).  Also: pylance's shapes, errors per
status, warnings, pandas, pickling."""

import json
import os
import pickle
import shutil
import subprocess
import sys
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import lancever
from conftest import CLI, cli_json, gen_dataset, run_cli

UTC = timezone.utc
COUNTERS = ["total_fragments", "total_data_files", "total_files_size", "total_deletion_files",
            "total_data_file_rows", "total_deletion_file_rows", "total_rows"]
MANIFEST_COLS = ["manifest_path", "manifest_size", "writer_library", "writer_version",
                 "data_format", "branch", "num_indices"]


def check_row(row, j):
    """A package row against the CLI's --json object for the same version."""
    assert list(row)[:3] == ["version", "timestamp", "metadata"]  # pylance's keys first
    assert row["version"] == j["version"]
    ts = row["timestamp"]
    assert ts.tzinfo is UTC or ts.utcoffset() == timedelta(0)
    assert ts == datetime.fromtimestamp(0, UTC) + timedelta(milliseconds=j["timestamp_millis"])
    assert row["metadata"] == {k: str(j[k]) for k in COUNTERS}
    for k in ["timestamp_millis", *COUNTERS, "is_tagged", "is_cleaned_up", "transaction_uuid",
              "read_version", "operation_type", "transaction_properties"]:
        assert row[k] == j[k], f"v{j['version']} {k}"
    for k in MANIFEST_COLS:
        assert row[k] == j.get(k), f"v{j['version']} {k}"


def local_dt(ms):
    """The naive local datetime of ms since the epoch (pylance's versions() shape)."""
    return datetime.fromtimestamp(ms // 1000) + timedelta(milliseconds=ms % 1000)


def check_pylance_list(rows, js):
    """versions(): exactly pylance's {version, timestamp (naive local), metadata (strings)}; the
    timestamp within the millisecond the CLI reports (a manifest read now gives microseconds)."""
    assert [r["version"] for r in rows] == [j["version"] for j in js]
    for r, j in zip(rows, js):
        assert list(r) == ["version", "timestamp", "metadata"]
        assert r["timestamp"].tzinfo is None
        assert timedelta(0) <= r["timestamp"] - local_dt(j["timestamp_millis"]) < timedelta(milliseconds=1)
        assert r["metadata"] == {k: str(j[k]) for k in COUNTERS}


def check_list(rows, js):
    assert [r["version"] for r in rows] == [j["version"] for j in js]
    for r, j in zip(rows, js):
        check_row(r, j)


def test_versions_and_history_match_the_cli(cleaned_demo):
    ds = lancever.Dataset(cleaned_demo)
    v = ds.versions()
    check_pylance_list(v, cli_json("versions", cleaned_demo))
    assert v.kind == "versions" and v.gaps == [] and v.warnings == []
    h = ds.history()
    check_list(h, cli_json("history", cleaned_demo))
    assert len(h) == 12 and len(v) < 12
    assert {r["version"] for r in h if r["is_cleaned_up"]} == {r["version"] for r in h} - {r["version"] for r in v}
    assert h.report.rung == "newest_checkpoint" and h.report.checkpoint_version == 12



@pytest.mark.parametrize("enabled", [True, False])
def test_row_building_leaves_the_collector_as_it_was(cleaned_demo, enabled):
    """versions() and history() pause the cyclic collector while they build rows
    (results._gc_paused); they must hand it back as they found it, on errors too."""
    import gc
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        ds = lancever.Dataset(cleaned_demo)
        assert len(ds.versions()) > 0 and gc.isenabled() is enabled
        assert len(ds.history()) == 12 and gc.isenabled() is enabled
        from lancever import results
        with pytest.raises(ZeroDivisionError):
            with results._gc_paused():
                assert not gc.isenabled()
                1 / 0
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()

def test_history_gap_is_a_warning(tmp_path):
    d = gen_dataset(tmp_path / "g.lance", 10)
    run_cli("checkpoint", d)
    gen_dataset(d, 5, start=11)
    run_cli("cleanup", d, "--retain-versions", "1", "--no-checkpoint")
    ds = lancever.Dataset(d)
    with pytest.warns(lancever.LanceverWarning, match="11"):
        h = ds.history()
    assert h.gaps == [(11, 14)]
    assert [w.kind for w in h.warnings] == ["history_gap"]
    assert (h.warnings[0].first, h.warnings[0].last) == (11, 14)
    assert [r["version"] for r in h] == list(range(1, 11)) + [15]
    check_list(h, cli_json("history", d))
    # an as-of answer the gap could change says so
    with pytest.warns(lancever.LanceverWarning):
        r = ds.version_as_of(1700000000000 + 1000 * 13)
    assert r["version"] == 10


def test_version_as_of(cleaned_demo):
    ds = lancever.Dataset(cleaned_demo)
    h = ds.history()
    for row in h:
        ms = row["timestamp_millis"]
        j = cli_json("asof", cleaned_demo, str(ms))
        got = ds.version_as_of(ms)
        check_row({k: got[k] for k in got if k != "checkout_possible"}, j["version"])
        assert got["checkout_possible"] == j["checkout_possible"]
        assert ds.version_as_of(row["timestamp"])["version"] == got["version"]       # aware
        naive_local = row["timestamp"].astimezone().replace(tzinfo=None)
        assert ds.version_as_of(naive_local)["version"] == got["version"]            # naive = local
        iso = row["timestamp"].strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        assert ds.version_as_of(iso)["version"] == got["version"]                    # ISO string
        r = run_cli("asof", cleaned_demo, str(ms), "--strict", "--json", check=False)
        if r.returncode == 0:
            assert ds.version_as_of(ms, strict=True)["version"] == json.loads(r.stdout)["version"]["version"]
        else:
            with pytest.raises(lancever.NotFoundError):
                ds.version_as_of(ms, strict=True)
    with pytest.raises(lancever.NotFoundError):
        ds.version_as_of(h[0]["timestamp_millis"], strict=True)
    with pytest.raises(lancever.InvalidArgumentError, match="invalid time"):
        ds.version_as_of("yesterday-ish")
    with pytest.raises(TypeError):
        ds.version_as_of(1.5)


def test_show_and_diff(cleaned_demo):
    ds = lancever.Dataset(cleaned_demo)
    for row in ds.history():
        v = row["version"]
        j = cli_json("show", cleaned_demo, str(v))
        s = ds.show(v)
        check_row({k: s[k] for k in s if k not in ("source", "config", "transaction_file",
                                                   "reader_feature_flags", "writer_feature_flags",
                                                   "timestamp_nanos")}, j)
        if row["is_cleaned_up"]:
            assert s["source"] == "checkpoint"
        else:
            assert s["source"] == "manifest"
            assert s["config"] == j["config"]
            assert s["transaction_file"] == j["transaction_file"]
            assert s["reader_feature_flags"] == j["reader_feature_flags"]
            assert s["timestamp_nanos"] // 1000000 == j["timestamp_millis"]
    with pytest.raises(lancever.NotFoundError, match="99"):
        ds.show(99)
    d = ds.diff(1, 12)
    j = cli_json("diff", cleaned_demo, "1", "12")
    assert d["ms_between"] == j["ms_between"]
    # one name per counter (issue 29): the CLI's JSON keys are the library's
    for key in ("total_rows", "total_fragments", "total_data_files", "total_files_size",
                "total_deletion_files", "total_deletion_file_rows", "total_data_file_rows"):
        assert d[key] == j[key]
    with pytest.raises(lancever.NotFoundError):
        ds.diff(1, 40)


def test_show_takes_what_pylance_takes(demo):
    """show() takes an int, a tag name or (branch, version) (issue 27: show("indexed") died)."""
    ds = lancever.Dataset(demo)
    want = {x["name"]: x["version"] for x in cli_json("tags", demo)["tags"]}
    assert "indexed" in want
    for name, v in want.items():
        assert ds.show(name)["version"] == v == ds.tags.get_version(name)
        assert ds.checkout_version(name).version == v
        assert lancever.dataset(demo, version=name).version == v
    assert ds.show((None, 3))["version"] == ds.show(("main", 3))["version"] == 3
    assert ds.show((None, None))["version"] == ds.latest_version == ds.version == 12
    assert ds.diff("indexed", 12)["from"] == want["indexed"]
    with pytest.raises(lancever.NotFoundError, match="nope"):
        ds.show("nope")
    with pytest.raises(TypeError):
        ds.show(2.0)


def test_tags(demo):
    ds = lancever.Dataset(demo)
    t = ds.tags
    j = cli_json("tags", demo)
    assert sorted(t) == sorted(x["name"] for x in j["tags"])
    for x in j["tags"]:
        got = t.list()[x["name"]]
        assert (got["version"], got["branch"], got["manifest_size"]) == \
               (x["version"], x["branch"], x["manifest_size"])
        # pylance's shape: an aware UTC datetime, the RFC 3339 text cut to microseconds
        assert got["created_at"].tzinfo is UTC
        assert got["created_at"].isoformat()[:26] == x["created_at"][:26]
        assert t.get_version(x["name"]) == x["version"]
    assert set(t.list()["indexed"]) == {"branch", "version", "created_at", "updated_at", "manifest_size",
                                        "metadata"}
    with pytest.raises(lancever.NotFoundError):
        t.get_version("nope")
    assert t.branches() == {}


def test_checkpoint(demo):
    ds = lancever.Dataset(demo)
    r = ds.checkpoint()
    assert r.written and not r.already_present and r.path == "_checkpoints/00000000000000000012.lance"
    assert (r.latest_version, r.entries, r.new_entries) == (12, 12, 12)
    assert (demo / r.path).stat().st_size == r.file_size
    assert r.files_quarantined == 0 and r.unrecorded_versions == 0
    again = ds.checkpoint()
    assert again.already_present and again.previous.checkpoint_version == 12
    off = ds.checkpoint(enabled=False)
    assert not off.written and off.path is None
    with pytest.raises(lancever.InvalidArgumentError):
        ds.checkpoint(max_entries=0)
    assert ds.history().report.rung == "newest_checkpoint"


def test_cleanup_dry_run_explain_and_real(demo):
    ds = lancever.Dataset(demo)
    j = cli_json("cleanup", demo, "--retain-versions", "3", "--no-error-if-tagged-old-versions", "--dry-run")
    phases = []
    dry = ds.cleanup_old_versions(retain_versions=3, error_if_tagged_old_versions=False, dry_run=True,
                                  progress=lambda p, d, t: phases.append(p))
    assert dry.dry_run and dry.old_versions == j["versions_removed"] == 8
    assert dry.versions_removed == dry.old_versions  # one name beside pylance's (issue 29)
    assert dry.bytes_removed == j["bytes_removed"]
    for k, v in j["by_kind"].items():
        assert dry.files_removed_by_kind[k] == v["files"] and dry.bytes_removed_by_kind[k] == v["bytes"]
    assert dry.transaction_files_removed == j["by_kind"]["transaction"]["files"]
    assert dry.index_files_removed == j["by_kind"]["index"]["files"]
    assert "reading manifests" in phases and phases[-1] == "done"
    assert ds.explain_cleanup_old_versions(retain_versions=3, error_if_tagged_old_versions=False
                                           ).candidate_files == []  # pylance's default: no files
    ex = ds.explain_cleanup_old_versions(retain_versions=3, error_if_tagged_old_versions=False,
                                         include_files=True)
    assert ex.read_version == 12
    assert [(f.path, f.kind, f.size_bytes, f.reason) for f in ex.candidate_files] == \
        [(f["path"], f["kind"], f["size_bytes"], f["reason"]) for f in j["files"]]
    assert not ex.candidate_files_truncated and ex.candidate_file_limit == 1000
    assert all(not f.unverified for f in ex.candidate_files)
    short = ds.explain_cleanup_old_versions(retain_versions=3, error_if_tagged_old_versions=False,
                                            include_files=True, max_files=2)
    assert len(short.candidate_files) == 2 and short.candidate_files_truncated
    assert len(ds.versions()) == 12  # nothing changed
    with pytest.raises(lancever.TaggedVersionsError, match="tagged"):
        ds.cleanup_old_versions(retain_versions=3)
    real = ds.cleanup_old_versions(retain_versions=3, error_if_tagged_old_versions=False)
    assert not real.dry_run and real.old_versions == 8 and real.checkpoint_written
    assert real.versions_archived == 12 and real.checkpoint_path.startswith("_checkpoints/")
    h = ds.history()
    assert sum(r["is_cleaned_up"] for r in h) == 8 and len(ds.versions()) == 4


def test_cleanup_policies(tmp_path):
    d = gen_dataset(tmp_path / "p.lance", 6)  # timestamps in 2023: all older than 14 days
    ds = lancever.Dataset(d)
    dry = ds.cleanup_old_versions(dry_run=True)  # no policy: pylance's 14 days
    assert dry.old_versions == 5
    assert ds.cleanup_old_versions(timedelta(days=365 * 100), dry_run=True).old_versions == 0
    assert ds.cleanup_old_versions(before_version=3, dry_run=True).old_versions == 2
    with pytest.raises(TypeError):
        ds.cleanup_old_versions(older_than=7)
    with pytest.raises(lancever.InvalidArgumentError):
        ds.cleanup_old_versions(retain_versions=0)

    def boom(phase, done, total):
        raise RuntimeError("stop")
    with pytest.raises(RuntimeError, match="stop"):
        ds.cleanup_old_versions(retain_versions=2, dry_run=True, progress=boom)
    r = ds.cleanup_old_versions(retain_versions=2, checkpoint=False)
    assert r.old_versions == 4 and not r.checkpoint_written
    with pytest.warns(lancever.LanceverWarning, match="versions 1-4: no record"):
        h = ds.history()  # no checkpoint: their history is gone, and history says so
    assert [x["version"] for x in h] == [5, 6] and h.gaps == [(1, 4)]


def test_cleanup_versions_list(tmp_path):
    d = gen_dataset(tmp_path / "v.lance", 6)
    ds = lancever.Dataset(d)
    j = cli_json("cleanup", d, "--versions", "2,4,6", "--dry-run")
    dry = ds.cleanup_old_versions(versions=[2, 4, 6], dry_run=True)  # 6 is the latest: kept
    assert dry.old_versions == j["versions_removed"] == 2
    ex = ds.explain_cleanup_old_versions(versions=[3], clean_referenced_branches=True)
    assert ex.stats.old_versions == 1 and ex.referenced_branches == []
    with pytest.raises(lancever.InvalidArgumentError, match="empty"):
        ds.cleanup_old_versions(versions=[])
    real = ds.cleanup_old_versions(versions=[1, 2])
    assert real.old_versions == 2 and [v["version"] for v in ds.versions()] == [3, 4, 5, 6]


def test_errors_are_typed(tmp_path, demo):
    with pytest.raises(lancever.NotFoundError, match="missing.lance: does not exist"):
        lancever.Dataset(tmp_path / "missing.lance")  # the library names it when opening
    (tmp_path / "empty.lance").mkdir()
    with pytest.raises(lancever.NotFoundError, match="not a Lance dataset"):
        lancever.Dataset(tmp_path / "empty.lance").versions()
    bad = tmp_path / "bad.lance"
    shutil.copytree(demo, bad)
    m = sorted((bad / "_versions").iterdir())[0]
    m.write_bytes(m.read_bytes()[:-7] + b"XXXXXXX")  # the footer's magic is gone
    with pytest.raises(lancever.CorruptError) as e:
        lancever.Dataset(bad).versions()
    assert m.name in str(e.value) and e.value.status == "LV_ECORRUPT" and e.value.code == -2
    with pytest.raises(lancever.InvalidArgumentError, match="unknown storage option 'bogus'"):
        lancever.Dataset("s3://b/t.lance", storage_options={"bogus": "1"})
    with pytest.raises(lancever.UnsupportedError, match="aws_request_payer"):
        lancever.Dataset("s3://b/t.lance", storage_options={"aws_request_payer": "true"})
    with pytest.raises(lancever.InvalidArgumentError, match="allow_http"):
        lancever.Dataset("s3://b/t.lance", storage_options={"allow_http": "maybe"})
    ds = lancever.Dataset(demo)
    ds.close()
    with pytest.raises(lancever.Error, match="closed"):
        ds.versions()
    assert issubclass(lancever.NotFoundError, LookupError)
    assert issubclass(lancever.InvalidArgumentError, ValueError)


def test_storage_options_reach_the_library(demo, monkeypatch):
    # region / endpoint / allow_http are accepted (v1 fields); a local path ignores them.
    ds = lancever.Dataset(demo, storage_options={"region": "eu-west-1", "endpoint": "http://127.0.0.1:1",
                                                 "allow_http": "true"})
    assert len(ds.versions()) == 12
    # On s3:// they are used: a closed port fails fast with an I/O error naming no secret.
    monkeypatch.setenv("LANCEVER_S3_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    ds = lancever.Dataset("s3://bucket/t.lance", storage_options={
        "aws_endpoint": "http://127.0.0.1:9", "aws_region": "us-east-1", "allow_http": True})
    with pytest.raises(lancever.Error) as e:
        ds.versions()
    assert "127.0.0.1:9" in str(e.value) and "wJalr" not in str(e.value)
    # Credentials as storage options (pairs of the library's bag) win over the environment,
    # and no secret reaches a message.
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    ds = lancever.Dataset("s3://bucket/t.lance", storage_options={
        "aws_endpoint": "http://127.0.0.1:9", "aws_region": "us-east-1", "allow_http": True,
        "aws_access_key_id": "AKIDOPTION", "aws_secret_access_key": "secret-from-option-XYZ"})
    src = ds.credential_source() if hasattr(ds, "credential_source") else None
    with pytest.raises(lancever.Error) as e:
        ds.versions()
    assert "127.0.0.1:9" in str(e.value) and "secret-from-option" not in str(e.value)
    assert src is None or "option" in src


def test_results_outlive_the_dataset_and_pickle(cleaned_demo):
    ds = lancever.Dataset(cleaned_demo)
    h = ds.history()
    ds.close()
    del ds
    assert len(h) == 12
    rows = pickle.loads(pickle.dumps(h))
    assert type(rows) is list and rows == list(h)
    import gc
    gc.collect()
    cap = h.__arrow_c_stream__()  # the C list is still alive, owned by the result
    assert cap is not None


def test_to_pandas(cleaned_demo):
    import pandas as pd
    h = lancever.Dataset(cleaned_demo).history()
    df = h.to_pandas()
    assert list(df.columns)[:3] == ["version", "timestamp", "timestamp_millis"]
    assert len(df) == len(h)
    assert str(df["version"].dtype) == "uint64" and str(df["read_version"].dtype) == "UInt64"
    assert str(df["timestamp"].dtype) == "datetime64[ns, UTC]"
    for i, row in enumerate(h):
        assert df["timestamp"][i] == pd.Timestamp(row["timestamp"])
        assert df["total_rows"][i] == row["total_rows"]
        assert (pd.isna(df["manifest_size"][i]) and row["manifest_size"] is None) or \
            df["manifest_size"][i] == row["manifest_size"]
        assert json.loads(df["transaction_properties"][i]) == row["transaction_properties"]


def test_python_m_lancever(cleaned_demo):
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "lancever", "history", str(cleaned_demo), "--json"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert [x["version"] for x in json.loads(r.stdout)] == list(range(1, 13))
    live = [x["version"] for x in cli_json("versions", cleaned_demo)]
    for extra in ([], ["--json"]):  # versions: the live versions' rich rows (operation, rows)
        r = subprocess.run([sys.executable, "-m", "lancever", "versions", str(cleaned_demo), *extra],
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        if extra:
            got = json.loads(r.stdout)
            assert [x["version"] for x in got] == live and all("operation_type" in x for x in got)
        else:
            assert [int(x.split()[0]) for x in r.stdout.splitlines()[1:]] == live
    r = subprocess.run([sys.executable, "-m", "lancever", "bogus"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "usage" in r.stderr


def test_library_not_found_names_what_it_tried(tmp_path):
    pkg = tmp_path / "pkg"
    shutil.copytree(Path(lancever.__file__).parent, pkg / "lancever",
                    ignore=shutil.ignore_patterns("*.so*", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("LANCEVER_LIBRARY", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(pkg)
    code = "import lancever; lancever.Dataset('x')"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode != 0
    assert "LibraryNotFoundError" in r.stderr
    assert str(pkg / "lancever" / "liblancever.so") in r.stderr
    assert "$LANCEVER_LIBRARY (not set)" in r.stderr
    env["LANCEVER_LIBRARY"] = str(tmp_path / "nowhere.so")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert str(tmp_path / "nowhere.so") + " (no such file)" in r.stderr


def test_help_reads_like_a_manual():
    doc = lancever.Dataset.__doc__ + "".join(
        getattr(lancever.Dataset, m).__doc__ for m in (
            "versions", "history", "version_as_of", "show", "diff", "checkpoint",
            "cleanup_old_versions", "explain_cleanup_old_versions", "versions_stream",
            "history_stream"))
    for word in ("pylance", "UTC", "GIL", "fork", "14 days", "TaggedVersionsError"):
        assert word in doc
    for name in lancever.__all__:
        obj = getattr(lancever, name)
        if callable(obj):
            assert obj.__doc__, name


_STAMP_CHECK = r"""
import sys
sys.path.insert(0, sys.argv[1])
from lancever.results import _local_times, _pylance_micros
from stamp_cases import cases, from_ms, pylance
ns, ms = cases(27)
bad = [n for n, t in zip(ns, _local_times([_pylance_micros(n) for n in ns])) if t != pylance(n)]
bad += [m for m, t in zip(ms, _local_times([m * 1000 for m in ms])) if t != from_ms(m)]
big = [9 * 10**18, -9 * 10**18 + 5]  # beyond 2**33 s: the exact fallback
bad += [n for n, t in zip(big, _local_times([_pylance_micros(n) for n in big])) if t != pylance(n)]
print(len(ns) + len(ms) + len(big), bad[:5])
sys.exit(1 if bad else 0)
"""


@pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Australia/Lord_Howe"])
def test_versions_timestamps_equal_pylance_arithmetic(tz):
    """versions() builds its naive local times from one float of microseconds each (fast);
    they must equal pylance 14's own arithmetic (ns // 1e9 seconds + a timedelta) and the
    ms-row formula, across DST changes, before the epoch and at second boundaries."""
    env = dict(os.environ, TZ=tz)
    r = subprocess.run([sys.executable, "-c", _STAMP_CHECK, os.path.dirname(__file__)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
