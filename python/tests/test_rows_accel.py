"""The C accelerator lancever._rows (python/ext/rows.c): versions()' pylance-shaped rows built
in C must equal, field for field, what pylance 14's own arithmetic gives and what the package's
Python path builds; bad buffers and offsets are refused; a time it does not convert exactly is
declined (None), so the Python path answers.

LANCEVER_EXPECT_ACCEL=1 (CTest sets it when CMake built the module; test_wheel.sh for the
wheel) makes its absence a failure, not a skip."""

import os
import random
import struct
import subprocess
import sys

import pytest

import lancever
from lancever import _accel, results


def _expected() -> bool:
    return os.environ.get("LANCEVER_EXPECT_ACCEL", "1") == "1"


def _rows():
    mod = _accel.rows()
    assert mod is not None, "lancever._rows is missing from this installation"
    return mod


def test_the_accelerator_is_there_when_built():
    assert _accel.accelerated() == _expected()


# A synthetic entry: the 11 fields at these offsets, in a stride of 120 bytes with padding.
OFFSETS = (0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80)
STRIDE = 120


def _entry(version, ms, has, ns, counters):
    e = bytearray(STRIDE)
    struct.pack_into("<Qqbxxxxxxxq7Q", e, 0, version, ms, has, ns, *counters)
    return bytes(e)


def test_rows_from_a_buffer():
    buf = _entry(7, 1_700_000_000_123, 0, 0, range(1, 8)) + _entry(8, 0, 1, 1_700_000_001_234_567_891, [0] * 7)
    rows = _rows().pylance_rows(buf, STRIDE, OFFSETS, 7)
    assert [r["version"] for r in rows] == [7, 8]
    assert list(rows[0]) == ["version", "timestamp", "metadata"]
    assert rows[0]["metadata"] == dict(zip(results.SUMMARY_KEYS, map(str, range(1, 8))))
    want = results._local_times([1_700_000_000_123_000, results._pylance_micros(1_700_000_001_234_567_891)])
    assert [r["timestamp"] for r in rows] == want
    assert rows[1]["timestamp"].microsecond == 234567
    # covered: version 8 is within the checkpoint, so its (zero) ms is used, not its ns
    assert _rows().pylance_rows(buf, STRIDE, OFFSETS, 8)[1]["timestamp"] == results._local_times([0])[0]
    assert _rows().pylance_rows(b"", STRIDE, OFFSETS, 0) == []


@pytest.mark.parametrize("bad", [
    dict(buf=b"\0" * 119),                         # not whole entries
    dict(stride=0), dict(stride=-8),
    dict(offsets=OFFSETS[:10]),                    # 10 offsets
    dict(offsets=(113,) + OFFSETS[1:]),            # a u64 past the entry's end
    dict(offsets=OFFSETS[:2] + (120,) + OFFSETS[3:]),  # the bool byte past the end
    dict(offsets=(-1,) + OFFSETS[1:]),
])
def test_bad_buffers_and_offsets_are_refused(bad):
    args = dict(buf=_entry(1, 0, 0, 0, [0] * 7), stride=STRIDE, offsets=OFFSETS)
    args.update(bad)
    with pytest.raises(ValueError):
        _rows().pylance_rows(args["buf"], args["stride"], args["offsets"], 0)


def test_wrong_types_are_refused():
    with pytest.raises(TypeError):
        _rows().pylance_rows("text", STRIDE, OFFSETS, 0)
    with pytest.raises(TypeError):
        _rows().pylance_rows(b"", STRIDE, list(OFFSETS), 0)
    with pytest.raises((TypeError, OverflowError)):
        _rows().pylance_rows(b"", STRIDE, OFFSETS, -1)


def test_times_it_cannot_convert_exactly_are_declined():
    far = 400_000 * 365 * 86400 * 1000  # ms in the year ~402000
    assert _rows().pylance_rows(_entry(1, far, 0, 0, [0] * 7), STRIDE, OFFSETS, 1) is None
    assert _rows().pylance_rows(_entry(1, -2**63, 0, 0, [0] * 7), STRIDE, OFFSETS, 1) is None
    assert _rows().pylance_rows(_entry(2, 0, 1, 2**63 - 1, [0] * 7), STRIDE, OFFSETS, 1) is None


_PROPERTY = r"""
import random, struct, sys
from datetime import datetime
sys.path.insert(0, sys.argv[1])
from lancever import _accel, results
from stamp_cases import cases, from_ms, pylance
ns, ms = cases(34)
rnd = random.Random(34)
counters = [rnd.choice([0, 1, 2**64 - 1, rnd.randrange(2**64)]) for _ in range(7)]
buf = bytearray()
for i, n in enumerate(ns):  # versions above `covered` with manifest details: the ns
    buf += struct.pack("<Qqbxxxxxxxq7Q", 10**6 + i, 0, 1, n, *counters) + bytes(32)
for i, m in enumerate(ms):  # at or below `covered`: the ms, whatever the ns says
    buf += struct.pack("<Qqbxxxxxxxq7Q", 1 + i, m, 1, 5, *counters) + bytes(32)
rows = _accel.rows().pylance_rows(bytes(buf), 120, tuple(range(0, 88, 8)), 10**6 - 1)
want = [pylance(n) for n in ns] + [from_ms(m) for m in ms]
bad = [(r["timestamp"], w) for r, w in zip(rows, want)
       if r["timestamp"] != w or r["timestamp"].fold != w.fold or type(r["timestamp"]) is not datetime]
meta = {k: str(v) for k, v in zip(results.SUMMARY_KEYS, counters)}
bad += [r for r in rows if r["metadata"] != meta]
print(len(rows), bad[:5])
sys.exit(1 if bad or len(rows) != len(want) else 0)
"""


@pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Australia/Lord_Howe", "Europe/Dublin"])
def test_times_equal_pylance_arithmetic(tz):
    """Each row's naive local time equals pylance 14's own arithmetic (ns // 1e9 seconds plus a
    timedelta: fold 0) for the ns rows and the ms formula for checkpoint rows, across DST
    changes (Lord Howe's is 30 minutes, Dublin's negative), before the epoch and at second
    boundaries; the counters are their decimal strings."""
    _rows()
    env = dict(os.environ, TZ=tz)
    r = subprocess.run([sys.executable, "-c", _PROPERTY, os.path.dirname(__file__)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_versions_equal_with_and_without_the_accelerator(cleaned_demo, monkeypatch):
    """Dataset.versions() on a LanceDB-written dataset, before and after a checkpoint: the C
    rows equal the Python rows (the interop suite compares both with pylance 14 itself)."""
    mod = _rows()
    for step in ("live", "checkpoint"):
        if step == "checkpoint":
            lancever.Dataset(cleaned_demo).checkpoint()
        fast = lancever.Dataset(cleaned_demo).versions()
        monkeypatch.setattr(_accel, "_module", None)
        slow = lancever.Dataset(cleaned_demo).versions()
        monkeypatch.setattr(_accel, "_module", mod)
        assert len(fast) > 0 and fast == slow, step
        assert [list(r) for r in fast] == [list(r) for r in slow]


def test_a_declined_list_is_built_in_python(monkeypatch, cleaned_demo):
    """When the module declines (answers None), versions() builds the rows in Python."""
    class Declines:
        calls = 0

        @staticmethod
        def pylance_rows(*args):
            Declines.calls += 1
            return None
    want = lancever.Dataset(cleaned_demo).versions()
    monkeypatch.setattr(_accel, "_module", Declines)
    got = lancever.Dataset(cleaned_demo).versions()
    assert Declines.calls == 1 and got == want and len(got) > 0
