"""lancever reads the Lance files pylance 14.0.2 writes (issue 25 §1), value for value as pylance's
own `LanceFileReader` reads them:

 (a) every data and index file of every scenario (file formats 2.0, 2.1, 2.2 and the default,
     vectors, blob columns, BTREE / BITMAP / IVF_PQ index files): each column `lancever inspect
     --json` decodes equals pylance's column row for row; a column it does not decode is named with
     an error (exit 1), and only for the types lancever does not read (KNOWN_UNREAD);
 (b) files written with `LanceFileWriter` in 2.0, 2.1 and 2.2 holding what a default 2.2 file
     holds: bit-packed and random integers, dictionary and FSST strings, nulls, all-null and
     constant columns, vectors, timestamps, full-zip pages and the `general` compression (zstd,
     lz4) asked for by field metadata (the encodings present are checked in pylance's page metadata).
A file pylance itself cannot read as a standalone file (2.2 blob columns, legacy or blob v2, stored
as a packed descriptor struct) must be refused by lancever too, never misread.
"""
import json
import math
import os

import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader, LanceFileWriter

import scenarios
from conftest import lv

# Logical types lancever's reader does not decode (docs/format.md "What it reads"): named per column.
KNOWN_UNREAD = {"large_binary", "binary"}  # uint32 is read since the l14file merge (BTREE lookup pages)


def file_version(path):
    """"2.0" / "2.1" / "2.2" from the footer (2.0 files say 0.3 there)."""
    m = LanceFileReader(path).metadata()
    return {(0, 3): "2.0"}.get((m.major_version, m.minor_version), f"{m.major_version}.{m.minor_version}")


def ours(path):
    r = lv("inspect", "--json", path, check=False)
    return r.returncode, (json.loads(r.stdout) if r.stdout else None), r.stderr


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def compare_file(path, label):
    """Returns (columns compared, columns lancever named undecoded)."""
    rc, j, err = ours(path)
    try:
        t = LanceFileReader(path).read_all().to_table()
    except Exception as e:  # noqa: BLE001 -- pylance cannot read it (a 2.2 file with a blob column)
        # lancever must not answer as if whole: exit 1, the blob column named as not decoded
        assert rc != 0, f"{label}: pylance fails ({e}) but lancever read it whole"
        assert j is None or any("error" in c for c in j["schema"]), f"{label}: nothing named as not decoded"
        return None
    assert j is not None, f"{label}: lancever inspect exit {rc}: {err}"
    assert j["num_rows"] == t.num_rows == len(j["rows"]), f"{label}: num_rows"
    assert j["version"] == file_version(path), f"{label}: file version"
    assert [c["name"] for c in j["schema"]] == t.schema.names, f"{label}: columns"
    compared, unread = 0, []
    for c, field in zip(j["schema"], t.schema):
        if "error" in c:
            unread.append(c["type"])
            assert c["type"] in KNOWN_UNREAD, f"{label}: column {c['name']} ({c['type']}) not decoded: {c['error']}"
            continue
        col = t.column(field.name)
        if pa.types.is_timestamp(field.type):
            col = col.cast(pa.int64())
        want = col.to_pylist()
        got = [row.get(c["name"]) for row in j["rows"]]
        bad = [i for i, (a, b) in enumerate(zip(got, want)) if not same(a, b)]
        assert not bad, f"{label}: column {c['name']} row {bad[0]}: lancever {got[bad[0]]!r}, pylance {want[bad[0]]!r}"
        compared += 1
    assert (rc == 0) == (not unread), f"{label}: exit {rc} with undecoded {unread}"
    return compared, unread


def test_every_scenario_file(tmp_path):
    sets = scenarios.build_all(str(tmp_path))
    seen = {"files": 0, "columns": 0, "refused": [], "unread": set(), "formats": set()}
    for sc in sets:
        for d, _, files in os.walk(sc.uri):
            if "_checkpoints" in d:
                continue
            for f in sorted(files):
                if not f.endswith(".lance"):
                    continue
                path = os.path.join(d, f)
                label = f"{sc.name}: {os.path.relpath(path, sc.uri)}"
                res = compare_file(path, label)
                seen["files"] += 1
                if res is None:
                    seen["refused"].append(sc.name)
                    continue
                seen["columns"] += res[0]
                seen["unread"] |= set(res[1])
                seen["formats"].add(file_version(path))
    assert seen["formats"] == {"2.0", "2.1", "2.2"}
    # only the 2.2 blob files (legacy blob metadata or blob v2: a packed descriptor struct whose
    # schema names more top-level fields than the file has columns), which pylance refuses too
    assert set(seen["refused"]) == {"blob_2_2", "blob_v2_sidecars"}, seen["refused"]
    assert seen["unread"] == KNOWN_UNREAD, seen["unread"]
    assert seen["files"] >= 40 and seen["columns"] >= 90, seen


def encodings_table(n):
    rng = np.random.default_rng(7)
    words = ["alpha", "beta", "gamma", "delta"]
    return pa.table({
        "seq": pa.array(np.arange(n, dtype=np.int64)),                               # bit-packed
        "rand": pa.array(rng.integers(-2**62, 2**62, n, dtype=np.int64)),
        "small": pa.array(rng.integers(0, 100, n, dtype=np.int32)),
        "f64": pa.array(rng.random(n)),
        "f32": pa.array(rng.random(n, dtype=np.float32)),
        "b": pa.array(rng.random(n) < 0.3),
        "dict": pa.array([words[i % 4] for i in range(n)]),                          # dictionary
        "text": pa.array([f"the quick brown fox {i} jumps over the lazy dog {i * 7}" for i in range(n)]),  # FSST
        "nulls": pa.array([None if i % 3 else i for i in range(n)], pa.int64()),
        "allnull": pa.array([None] * n, pa.string()),
        "const": pa.array([42] * n, pa.int64()),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 4, dtype=np.float32)), 4),
        "ts": pa.array(np.arange(n, dtype=np.int64) * 1_000_003, pa.timestamp("us", tz="UTC")),
        "zstd": pa.array([f"z{i % 17}-{i}" for i in range(n)]),
        "lz4": pa.array(rng.integers(0, 1000, n, dtype=np.int64)),
        "zstd_f": pa.array(rng.random(n)),
        "wide": pa.array([(f"{i:06d}" + "abcdefghij" * (60 + i % 7)) for i in range(n)]),   # full-zip
    })


def encodings_of(path):
    """The encoding names pylance reports for the file's pages."""
    import re
    names = set()
    for c in LanceFileReader(path).metadata().columns:
        for pg in c.pages:
            names |= set(re.findall(r"\b([A-Z][A-Za-z]+)\b", str(pg.encoding)))
    return names


WANT_ENCODINGS = {"2.0": {"Dictionary", "Binary", "FixedSizeList", "Nullable"},
                  "2.1": {"General", "Fsst", "InlineBitpacking", "OutOfLineBitpacking", "ByteStreamSplit",
                          "ConstantLayout", "Rle", "MiniBlockLayout", "FullZipLayout", "Variable"},
                  "2.2": {"General", "Fsst", "InlineBitpacking", "OutOfLineBitpacking", "ByteStreamSplit",
                          "ConstantLayout", "MiniBlockLayout", "FullZipLayout", "Variable"}}


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_lancefilewriter_encodings(tmp_path, version):
    t = encodings_table(3000)
    meta = {"zstd": "zstd", "lz4": "lz4", "zstd_f": "zstd"}
    schema = pa.schema([f.with_metadata({"lance-encoding:compression": meta[f.name]}) if f.name in meta else f
                        for f in t.schema])
    path = str(tmp_path / f"enc{version}.lance")
    with LanceFileWriter(path, schema, version=version, max_page_bytes=8192) as w:
        for b in t.cast(schema).to_batches(max_chunksize=1500):
            w.write_batch(b)
    assert file_version(path) == version
    missing = WANT_ENCODINGS[version] - encodings_of(path)
    assert not missing, f"{version}: the file does not hold {missing}"
    compared, unread = compare_file(path, f"LanceFileWriter {version}")
    assert compared == len(t.columns) and not unread
