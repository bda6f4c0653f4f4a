"""Every Dataset method on datasets written by real Lance (LanceDB 0.31.0 or 0.39.0, the Node
peer LV_PEER names: every scenario of tests/interop/datasets.mjs -- appends, deletes, updates, indices,
tags, compaction, V1 names, storage 2.0 and legacy, stable row ids, branches, restore,
concurrent writers), compared with LanceDB's listVersions() and with the C CLI's --json;
the Arrow capsule of each, consumed from C; and, after a cleanup through the package,
history() = what listVersions() reported before it, with the removed versions flagged,
while versions() = what LanceDB lists after it."""

import os
import shutil
from datetime import datetime, timedelta, timezone

import pytest

import lancever
from conftest import cli_json, lance_list, run_cli
from test_arrow_capsule import VERSION_SCHEMA, check_rows, consume
from test_dataset import check_list, check_pylance_list, check_row

pytestmark = pytest.mark.interop
# The Node peer the datasets are written with (tests/interop/peer.mjs reads LV_PEER too).
PEER_LANCE = {"lance8": "8.0.0", "lance12": "12.0.0"}[os.environ.get("LV_PEER", "lance8")]
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def lance_rows(rows):
    """Our rows in listVersions()'s terms: version, timestamp in ms, metadata (strings).  A
    versions() row's naive local time (pylance's shape) is read as local time."""
    return [{"version": r["version"],
             "timestamp_millis": ((r["timestamp"] if r["timestamp"].tzinfo else r["timestamp"].astimezone())
                                  - EPOCH) // timedelta(milliseconds=1),
             "metadata": r["metadata"]} for r in rows]


def lance_match(rows, listed):
    """lance_rows(rows) == listed, but for one float rounding: pylance (and versions(), which
    gives its rows) turns the commit's nanoseconds into a float first, which can move a time
    less than 128 ns before the next millisecond onto it (then its microseconds are a whole
    millisecond), where LanceDB's listVersions() keeps the millisecond below."""
    ours = lance_rows(rows)
    if len(ours) != len(listed):
        return False
    for o, t, r in zip(ours, listed, rows):
        if o["timestamp_millis"] == t["timestamp_millis"] + 1 and r["timestamp"].microsecond % 1000 == 0:
            o = dict(o, timestamp_millis=t["timestamp_millis"])
        if o != t:
            return False
    return True


def test_lance_match_allows_only_the_float_rounding():
    meta = {"total_rows": "1"}
    at = datetime(2026, 12, 5, 19, 0, 0, 360000, tzinfo=timezone.utc)  # a whole millisecond
    ms = (at - EPOCH) // timedelta(milliseconds=1)
    row = {"version": 1, "timestamp": at, "metadata": meta}
    assert lance_match([row], [{"version": 1, "timestamp_millis": ms, "metadata": meta}])
    assert lance_match([row], [{"version": 1, "timestamp_millis": ms - 1, "metadata": meta}])
    assert not lance_match([row], [{"version": 1, "timestamp_millis": ms - 2, "metadata": meta}])
    off = dict(row, timestamp=at + timedelta(microseconds=1))  # not a whole millisecond
    assert not lance_match([off], [{"version": 1, "timestamp_millis": ms - 1, "metadata": meta}])


def test_every_scenario_matches_lancedb_and_the_cli(lance_datasets):
    assert len(lance_datasets) >= 9
    for name, d in lance_datasets.items():
        ds = lancever.Dataset(d["dir"])
        v = ds.versions()
        assert lance_match(v, d["list"]), (name, lance_rows(v), d["list"])
        check_pylance_list(v, cli_json("versions", d["dir"]))
        h = ds.history()
        assert lance_match(h, d["list"]) and not any(r["is_cleaned_up"] for r in h), name
        check_list(h, cli_json("history", d["dir"]))
        want_ops = [(e["version"], e["operation_type"]) for e in d["expectations"]["versions"]]
        assert [(r["version"], r["operation_type"]) for r in h] == want_ops, name
        for r in h:
            assert r["writer_library"] == "lance" and r["writer_version"] == PEER_LANCE
            assert r["data_format"] == d["expectations"]["dataFormat"], name
        tags = ds.tags.list()
        main_tags = {k: t for k, t in d["expectations"]["tags"].items()}
        assert {k: (t["version"], t["branch"]) for k, t in tags.items()} == \
               {k: (t["version"], t["branch"]) for k, t in main_tags.items()}, name
        assert {r["version"] for r in h if r["is_tagged"]} == \
               {t["version"] for t in main_tags.values() if t["branch"] is None}, name
        fields, md, rows, _ = consume(v)
        assert fields == [(n, f, null) for n, f, null in VERSION_SCHEMA]
        check_rows(rows, cli_json("versions", d["dir"]))


def test_show_asof_diff_on_lance_data(lance_datasets):
    for name in ("ten_writes", "compaction", "restore", "concurrent"):
        d = lance_datasets[name]["dir"]
        ds = lancever.Dataset(d)
        rows = ds.history()
        for r in rows:
            j = cli_json("show", d, str(r["version"]))
            s = ds.show(r["version"])
            assert s["source"] == "manifest" and s["config"] == j["config"]
            assert s["transaction_file"] == j["transaction_file"]
            a = cli_json("asof", d, str(r["timestamp_millis"]))
            assert ds.version_as_of(r["timestamp"])["version"] == a["version"]["version"], name
        first, last = rows[0]["version"], rows[-1]["version"]
        j = cli_json("diff", d, str(first), str(last))
        assert ds.diff(first, last)["total_rows"] == j["total_rows"]


def test_branches(lance_datasets):
    d = lance_datasets["branches"]
    exp = d["expectations"]["branches"]
    root = lancever.Dataset(d["dir"])
    assert {k: (b["parent_branch"], b["parent_version"]) for k, b in root.tags.branches().items()} == \
           {k: (b["parent_branch"], b["parent_version"]) for k, b in exp.items()}
    for br, e in exp.items():
        ds = lancever.Dataset(d["dir"], branch=br)
        v = [r for r in ds.history() if not r["is_cleaned_up"]]  # the rich record of the live versions
        assert [(r["version"], r["operation_type"]) for r in v] == \
               [(x["version"], x["operation_type"]) for x in e["versions"]], br
        assert all(r["branch"] == br for r in v)
        check_list(v, cli_json("versions", d["dir"], "--branch", br))
        check_pylance_list(ds.versions(), cli_json("versions", d["dir"], "--branch", br))


def test_history_after_cleanup_is_listversions_plus_cleaned_up(lance_datasets, tmp_path):
    for name in ("ten_writes", "compaction", "v1_names", "restore"):
        src = lance_datasets[name]
        d = tmp_path / (name + ".lance")
        shutil.copytree(src["dir"], d, symlinks=True)
        before = src["list"]
        ds = lancever.Dataset(d)
        ex = ds.explain_cleanup_old_versions(retain_versions=3, error_if_tagged_old_versions=False,
                                             include_files=True)
        j = cli_json("cleanup", d, "--retain-versions", "3", "--no-error-if-tagged-old-versions", "--dry-run")
        assert [(f.path, f.size_bytes) for f in ex.candidate_files] == [(f["path"], f["size_bytes"]) for f in j["files"]]
        stats = ds.cleanup_old_versions(retain_versions=3, error_if_tagged_old_versions=False)
        after = lance_list(d)  # what LanceDB lists now
        assert stats.old_versions == len(before) - len(after) > 0, name
        h = ds.history()
        assert lance_match(h, before), name  # every version still there, as LanceDB reported it
        live = {x["version"] for x in after}
        assert [r["version"] for r in h if not r["is_cleaned_up"]] == sorted(live), name
        assert lance_match(ds.versions(), after), name
        check_list(h, cli_json("history", d))
        for r in h:
            if r["is_cleaned_up"]:
                assert r["manifest_path"] is None and ds.show(r["version"])["source"] == "checkpoint"
