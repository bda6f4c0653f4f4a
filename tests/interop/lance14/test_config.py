"""The proposal's configuration as dataset config keys, set through pylance 14.0.2's config API
(`update_config`, `delete_config_keys`), honoured by every lancever command that reads it:
checkpoint, cleanup, expire and info (issue 25 section 3).

Keys (include/lancever/checkpoint.h): lance.version_checkpoint.enabled, .max_entries,
.max_checkpoint_files, .archive, .archive_segment_rows.  Each is read from the latest manifest's
config; a CLI option wins over it; a value that does not parse stops every command, naming the
key, with nothing changed.  pylance itself reads the dataset normally afterwards.
"""
import json
import os
import subprocess

import lance
import pyarrow as pa
import pytest

from conftest import LANCEVER, lv, lv_json
from timeline import walk

K = "lance.version_checkpoint."


def build(uri, n=20, config=None):
    ds = lance.write_dataset(pa.table({"x": [0]}), uri)
    for k in range(1, n):
        ds = lance.write_dataset(pa.table({"x": [k]}), uri, mode="append")
    if config:
        ds.update_config({K + k: v for k, v in config.items()})
    return lance.dataset(uri)


def segments(uri):
    d = os.path.join(uri, "_checkpoints", "archive")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def heads(uri):
    d = os.path.join(uri, "_checkpoints")
    return sorted(f for f in os.listdir(d) if f.endswith(".lance")) if os.path.isdir(d) else []


def same_versions_as_pylance(uri):
    theirs = [v["version"] for v in lance.dataset(uri).versions()]
    assert [v["version"] for v in lv_json("versions", uri)] == theirs
    return theirs


def test_keys_reach_checkpoint_cleanup_info(tmp_path):
    uri = str(tmp_path / "on.lance")
    ds = build(uri, config={"max_entries": "8", "archive_segment_rows": "4",
                            "max_checkpoint_files": "1"})
    assert ds.config()[K + "max_entries"] == "8"
    info = lv_json("info", uri)["checkpoint"]
    assert (info["enabled"], info["max_entries"], info["max_checkpoint_files"], info["archive"],
            info["archive_segment_rows"]) == (True, 8, 1, True, 4)
    # a CLI option wins over the key
    o = lv_json("info", uri, "--max-entries", "5", "--segment-rows", "2", "--no-archive")["checkpoint"]
    assert (o["max_entries"], o["archive_segment_rows"], o["archive"]) == (5, 2, False)

    c = lv_json("checkpoint", uri)  # v21: 8 in the head, 1..20 sealed in segments of 4
    assert (c["entries"], c["segments_written"], c["archived_through"]) == (8, 5, 20)
    assert segments(uri) == [f"{a:020d}-{a + 3:020d}.lance" for a in (1, 5, 9, 13, 17)]
    lance.write_dataset(pa.table({"x": [99]}), uri, mode="append")
    c = lv_json("checkpoint", uri)  # max_checkpoint_files 1: the older head is pruned
    assert c["files_pruned"] == 1 and heads(uri) == [f"{22:020d}.lance"]

    r = lv_json("cleanup", uri, "--retain-versions", "3")  # the archive keeps every version
    assert r["versions_removed"] == 19
    hist = lv_json("history", uri)
    assert [h["version"] for h in hist] == list(range(1, 23))
    assert [h["version"] for h in hist if not h["is_cleaned_up"]] == same_versions_as_pylance(uri)
    assert len(lance.dataset(uri).to_table()) == 21


def test_archive_off_keeps_max_entries(tmp_path):
    for cmd in ("cleanup", "expire"):
        uri = str(tmp_path / f"{cmd}.lance")
        build(uri, config={"archive": "false", "max_entries": "5"})
        assert lv_json("info", uri)["checkpoint"]["archive"] is False
        r = lv_json(cmd, uri, "--retain-versions", "2", "-q")
        assert r["versions_removed"] == 19
        assert segments(uri) == []
        # the newest max_entries versions are recorded; older ones left with their manifests
        assert [h["version"] for h in lv_json("history", uri, "-q")] == list(range(17, 22))
        assert same_versions_as_pylance(uri) == [20, 21]


def test_disabled_writes_no_checkpoint(tmp_path):
    for cmd, args in (("checkpoint", []), ("cleanup", ["--retain-versions", "2"]),
                      ("expire", ["--retain-versions", "2"])):
        uri = str(tmp_path / f"{cmd}.lance")
        build(uri, n=6, config={"enabled": "false"})
        assert lv_json("info", uri)["checkpoint"]["enabled"] is False
        r = lv_json(cmd, uri, *args, "-q")
        assert not os.path.exists(os.path.join(uri, "_checkpoints")), cmd
        assert r.get("checkpoint") is None and not r.get("written", False)
        # the key removed through pylance: the default (enabled) is back
        lance.dataset(uri).delete_config_keys([K + "enabled"])
        assert lv_json("info", uri)["checkpoint"]["enabled"] is True
        assert lv_json("checkpoint", uri)["written"] is True


@pytest.mark.parametrize("key,bad", [("enabled", "maybe"), ("max_entries", "0"),
                                     ("max_checkpoint_files", "-1"), ("archive", "yes please"),
                                     ("archive_segment_rows", "many")])
def test_bad_value_stops_every_command(tmp_path, key, bad):
    uri = str(tmp_path / "bad.lance")
    build(uri, n=4, config={key: bad})
    before = walk(uri)
    for args in (["checkpoint"], ["cleanup", "--retain-versions", "1"],
                 ["expire", "--retain-versions", "1"], ["info"]):
        r = lv(*args[:1], uri, *args[1:], check=False)
        assert r.returncode != 0 and K + key in r.stderr and "LV_EINVALID" in r.stderr, (args, r.stderr)
    assert walk(uri) == before
    assert len(lance.dataset(uri).versions()) == 5
