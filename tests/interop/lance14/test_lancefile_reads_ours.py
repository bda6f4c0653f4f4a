"""pylance 14.0.2 reads the Lance files lancever writes (the Lance 14 side of
test_lancefile_lance_reads_ours.mjs): bench/write_lancefile (built next to lancever, found through
LANCEVER_BUILD_DIR) writes deterministic files through the public lv_lancefile_write in 2.0 and 2.1
(columns u64, i64 nullable, b, s nullable; short, long and huge strings; none, some and all
nulls; pages of limited rows), and `lance.file.LanceFileReader` reads every row back equal to
what the generator intended (re-derived here), with the schema and the schema metadata.
"""
import math
import os
import subprocess

import pyarrow as pa
import pytest
from lance.file import LanceFileReader

BUILD = os.environ.get("LANCEVER_BUILD_DIR") or os.path.dirname(os.environ.get("LANCEVER_BIN", ""))
WRITER = os.path.join(BUILD, "write_lancefile")
M = (1 << 64) - 1
ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
UTF8 = "h\u00e9llo \u2713"


def expected(seed, n, nulls, strs):
    """The rows of bench/write_lancefile.c's generator (xorshift64), mirrored."""
    st = (seed * 0x9E3779B97F4A7C15 + 1) & M

    def nxt():
        nonlocal st
        st ^= (st << 13) & M
        st ^= st >> 7
        st ^= (st << 17) & M
        return st
    nm = {"none": 0, "some": 1, "all": 2}[nulls]
    sm = {"short": 0, "long": 1, "huge": 2}[strs]
    rows = []
    for r in range(n):
        u64 = nxt()
        i64 = nxt()
        i64 = i64 - (1 << 64) if i64 >= 1 << 63 else i64
        ivalid = not (nm == 2 or (nm == 1 and nxt() % 7 == 0))
        b = (nxt() & 1) == 1
        svalid = not (nm == 2 or (nm == 1 and nxt() % 5 == 0))
        s = None
        if svalid:
            h = nxt()
            ln = h % 31 if sm == 0 else h % 2000 if sm == 1 else (70000 + r if r % 50 == 0 else h % 31)
            if r == 1:
                s = UTF8
            else:
                base = (h >> 11) % 62
                cyc = "".join(ALPHA[(base + 7 * k) % 62] for k in range(62))
                s = (cyc * math.ceil(ln / 62))[:ln]
        rows.append({"u64": u64, "i64": i64 if ivalid else None, "b": b, "s": s})
    return rows


CASES = [(v, *c) for v in ("2.0", "2.1") for c in [
    (3, "some", "short", 1, None), (1000, "some", "long", 2, None), (1000, "none", "short", 3, None),
    (1000, "all", "short", 4, None), (5000, "some", "long", 5, 700), (120, "some", "huge", 7, None)]]


@pytest.mark.parametrize("version,rows,nulls,strings,seed,page_rows", CASES)
def test_pylance_reads_ours(tmp_path, version, rows, nulls, strings, seed, page_rows):
    assert os.path.exists(WRITER), f"write_lancefile not found at {WRITER} (set LANCEVER_BUILD_DIR)"
    path = str(tmp_path / "t.lance")
    args = [WRITER, path, "--rows", rows, "--version", version, "--seed", seed, "--nulls", nulls,
            "--strings", strings] + (["--max-page-rows", page_rows] if page_rows else [])
    w = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    assert w.returncode == 0, w.stderr
    r = LanceFileReader(path)
    m = r.metadata()
    assert (m.major_version, m.minor_version) == ((0, 3) if version == "2.0" else (2, 1))
    t = r.read_all().to_table()
    assert [(f.name, f.type, f.nullable) for f in t.schema] == [
        ("u64", pa.uint64(), False), ("i64", pa.int64(), True), ("b", pa.bool_(), False), ("s", pa.string(), True)]
    md = {k.decode(): v.decode() for k, v in (m.schema.metadata or {}).items()}
    assert md.get("lancever.test.seed") == str(seed)
    got = t.to_pylist()
    want = expected(seed, rows, nulls, strings)
    assert len(got) == rows
    bad = [i for i in range(rows) if got[i] != want[i]]
    assert not bad, f"{len(bad)} rows differ; row {bad[0]}: pylance {str(got[bad[0]])[:200]} want {str(want[bad[0]])[:200]}"
