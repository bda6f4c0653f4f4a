"""pylance 14.0.2 reads lancever's checkpoints back (issue 25 §1), as test_checkpoint.mjs and
test_archive.mjs have the Lance 8 and 12 peers do, but through Lance's own file reader
(`lance.file.LanceFileReader`) instead of a hand-made wrapper dataset:

 (a) after `lancever checkpoint` on every scenario (main and branches), the head checkpoint read by
     pylance equals `lancever history --json` row for row in all 15 columns, with the 15-column
     schema and the schema metadata `lancever inspect` reports (documented keys present), and
     `lancever check` finds no problem (also after (b) and (c));
 (b) after pylance's own cleanup_old_versions on a checkpointed dataset, `versions` = pylance's
     versions(), `history` still lists every version, is_cleaned_up exactly where pylance removed the
     manifest; the next checkpoint, read by pylance, records it;
 (c) a lancever cleanup with tiny archive segments (`--segment-rows 4 --max-entries 6`): every
     segment under _checkpoints/archive/ and the head, read by pylance, equal history (the 13
     columns that are facts; is_tagged / is_cleaned_up are as of writing), with the segment
     metadata; pylance then lists and reads every retained version.
"""
import datetime
import json
import os
import re
import shutil

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

import oracle
import scenarios
from conftest import lv_json

CP_TYPES = {"timestamp_millis": pa.int64(), "is_tagged": pa.bool_(), "is_cleaned_up": pa.bool_(),
            "transaction_uuid": pa.string(), "operation_type": pa.string(), "transaction_properties": pa.string()}
CP_NULLABLE = {"transaction_uuid", "read_version", "operation_type"}
DOCUMENTED = {"lance:checkpoint:dataset_created", "lance:checkpoint:created_at", "lancever:format",
              "lancever:latest_version", "lancever:dataset_id", "lancever:checksum"}
FACTS = [f for f in oracle.CP_FIELDS if f not in ("is_tagged", "is_cleaned_up")]
SEAL = ["--segment-rows", "4", "--max-entries", "6"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return {s.name: s for s in scenarios.build_all(str(tmp_path_factory.mktemp("l14cp")))}


def pylance_rows(path):
    """(rows, schema, metadata) of a Lance file as pylance reads it."""
    r = LanceFileReader(path)
    t = r.read_all().to_table()
    md = {k.decode(): v.decode() for k, v in (r.metadata().schema.metadata or {}).items()}
    return t.to_pylist(), t.schema, md


def check_file(label, path, history, fields=oracle.CP_FIELDS):
    """pylance's rows of a checkpoint/segment file = history's records of those versions."""
    got, schema, md = pylance_rows(path)
    assert schema.names == oracle.CP_FIELDS, f"{label}: columns"
    for f in schema:
        assert f.type == CP_TYPES.get(f.name, pa.uint64()), f"{label}: type of {f.name}"
        assert f.nullable == (f.name in CP_NULLABLE), f"{label}: nullability of {f.name}"
    ins = lv_json("inspect", path)
    assert md == ins["metadata"], f"{label}: schema metadata, pylance vs lancever inspect"
    assert ins["version"] == "2.1" and LanceFileReader(path).metadata().minor_version == 1, f"{label}: file version"
    by_v = {h["version"]: h for h in history}
    for row in got:
        h = by_v.get(row["version"])
        assert h is not None, f"{label}: a row for v{row['version']}, which history does not list"
        row = dict(row, transaction_properties=json.loads(row["transaction_properties"]))
        assert {k: row[k] for k in fields} == {k: h[k] for k in fields}, f"{label}: v{row['version']}"
    assert [r["version"] for r in got] == sorted(r["version"] for r in got), f"{label}: rows not in version order"
    return got, md


def checkpoint(uri, branch=None, *extra):
    return lv_json(*oracle.branch_args(branch), "checkpoint", uri, *extra)



@pytest.mark.parametrize("name", ["everything", "v1_names_2_0", "stable_row_ids_2_1", "blob_2_0", "blob_2_1",
                                  "blob_2_2", "blob_v2_sidecars", "default_format"])
def test_pylance_reads_head_checkpoint(built, name):
    sc = built[name]
    for branch in [None, *sc.branches]:
        L = f"{name}{' branch ' + branch if branch else ''}"
        cp = checkpoint(sc.uri, branch)
        hist = lv_json(*oracle.branch_args(branch), "history", sc.uri)
        assert cp["written"] and cp["latest_version"] == hist[-1]["version"] and cp["entries"] == len(hist), L
        path = os.path.join(oracle.branch_dir(sc, branch), cp["path"])
        got, md = check_file(L, path, hist)
        assert [r["version"] for r in got] == [h["version"] for h in hist], f"{L}: the head holds every version"
        assert DOCUMENTED <= set(md), f"{L}: documented metadata keys missing: {DOCUMENTED - set(md)}"
        assert md["lancever:latest_version"] == str(hist[-1]["version"]) and md["lancever:format"] == "1", L
        assert re.fullmatch(r"crc32c:[0-9a-f]{8}", md["lancever:checksum"]), L
        assert md["lance:checkpoint:dataset_created"] == str(hist[0]["timestamp_millis"]), L
        chk = lv_json(*oracle.branch_args(branch), "check", sc.uri)
        assert chk["problems"] == 0 and not chk["warnings"], f"{L}: lancever check: {chk}"


def test_history_after_pylance_cleanup(built, tmp_path):
    src = built["everything"]
    uri = str(tmp_path / "c.lance")
    shutil.copytree(src.uri, uri)
    sc = scenarios.Scenario("cleanup", uri, src.data_format, branches=src.branches)
    before = lv_json("history", uri)
    checkpoint(uri)
    stats = lance.dataset(uri).cleanup_old_versions(older_than=datetime.timedelta(0), retain_versions=3,
                                                    error_if_tagged_old_versions=False)
    live = [v["version"] for v in lance.dataset(uri).versions()]
    removed = [h["version"] for h in before if h["version"] not in live]
    assert stats.old_versions == len(removed) > 5, f"pylance removed {stats.old_versions} ({removed})"
    # the tagged versions (t2 -> 2, t5 -> 6) survive; pylance 14.0.2 removes the manifest of the
    # version branch dev is rooted at (4), keeping its files: the branches still read the same
    assert {2, 6} <= set(live) and 4 not in live
    for b in src.branches:
        assert lv_json("--branch", b, "history", uri) == lv_json("--branch", b, "history", src.uri), f"branch {b}"
        assert lance.dataset(uri).checkout_version((b, None)).count_rows() == \
            lance.dataset(src.uri).checkout_version((b, None)).count_rows(), f"branch {b}"
    ours = lv_json("versions", uri)
    theirs = lance.dataset(uri).versions()
    assert [o["version"] for o in ours] == live
    for o, t in zip(ours, theirs):
        assert {k: str(o[k]) for k in oracle.SUMMARY} == t["metadata"], f"cleanup v{o['version']}"
    hist = lv_json("history", uri)
    assert [h["version"] for h in hist] == [h["version"] for h in before], "history lists every version"
    for h, b in zip(hist, before):
        assert h["is_cleaned_up"] == (h["version"] in removed), f"v{h['version']} is_cleaned_up"
        assert {k: h[k] for k in FACTS} == {k: b[k] for k in FACTS}, f"v{h['version']} changed by the cleanup"
    cp = checkpoint(uri)
    got, _ = check_file("cleanup re-checkpoint", os.path.join(uri, cp["path"]), hist)
    assert [r["version"] for r in got if r["is_cleaned_up"]] == removed
    chk = lv_json("check", uri)
    assert chk["problems"] == 0 and not chk["warnings"], f"lancever check after pylance's cleanup: {chk}"
    assert oracle.compare_refs(sc) > 0


def test_pylance_reads_archive_segments(tmp_path):
    uri = str(tmp_path / "a.lance")
    lance.write_dataset(scenarios.rows(0, 3), uri)
    for v in range(2, 41):
        ds = lance.dataset(uri)
        if v % 9 == 0:
            ds.delete(f"id = {v}")
        elif v % 11 == 0:
            ds.update({"v": "v + 1"}, where=f"id < {v}")
        elif v == 20:
            ds.create_scalar_index("id", "BTREE")
        else:
            lance.write_dataset(scenarios.rows(v * 10, 2), uri, mode="append")
        if v in (13, 27):
            lance.dataset(uri).tags.create(f"t{v}", v)
    before = lv_json("history", uri)
    assert [h["version"] for h in before] == list(range(1, 41))
    lv_json("cleanup", uri, "--retain-versions", "5", "--older-than", "0s", "--no-error-if-tagged-old-versions", *SEAL)
    for v in range(41, 51):
        lance.write_dataset(scenarios.rows(v * 10, 1), uri, mode="append")
    cp = checkpoint(uri, None, *SEAL)
    assert cp["archived_through"] >= 44, cp
    hist = lv_json("history", uri)
    assert [h["version"] for h in hist] == list(range(1, 51))
    for b in before:
        assert {k: hist[b["version"] - 1][k] for k in FACTS} == {k: b[k] for k in FACTS}, f"v{b['version']}"
    seg_dir = os.path.join(uri, "_checkpoints", "archive")
    segs = sorted(n for n in os.listdir(seg_dir) if re.fullmatch(r"\d{20}-\d{20}\.lance", n))
    assert len(segs) >= 11, segs
    covered = []
    for s in segs:
        first, last = map(int, s[:-6].split("-"))
        got, md = check_file(f"segment {s}", os.path.join(seg_dir, s), hist, FACTS)
        assert [r["version"] for r in got] == list(range(first, last + 1)), f"segment {s}: rows"
        assert md["lancever:segment"] == f"{first}-{last}", f"segment {s}: lancever:segment"
        assert re.fullmatch(r"crc32c:[0-9a-f]{8}", md["lancever:archive_checksum"]), f"segment {s}"
        covered += [r["version"] for r in got]
    assert covered == list(range(1, cp["archived_through"] + 1)), "the segments hold every version they answer for"
    got, md = check_file("head", os.path.join(uri, cp["path"]), hist, FACTS)
    assert len(got) <= 6, f"the head holds {len(got)} rows (max_entries 6)"
    assert md["lancever:archive"].startswith("lancever-archive 1 4 "), md["lancever:archive"]
    # pylance lists exactly lancever's live versions after lancever's cleanup, and reads each
    ours = lv_json("versions", uri)
    assert [o["version"] for o in ours] == [v["version"] for v in lance.dataset(uri).versions()]
    for o in ours:
        assert lance.dataset(uri, version=o["version"]).count_rows() == o["total_rows"], f"v{o['version']}"
    assert [h["version"] for h in hist if not h["is_cleaned_up"]] == [o["version"] for o in ours]
    chk = lv_json("check", uri)
    assert chk["problems"] == 0 and not chk["warnings"], f"lancever check: {chk}"
