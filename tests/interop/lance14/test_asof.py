"""As-of through pylance 14.0.2 (issue 25 section 3): `lancever asof --strict` equals
`lance.dataset(uri, asof=...)` on every probe time, under two time zones.

pylance's asof is the newest version whose timestamp (a naive *local* datetime, from the
manifest's nanoseconds) is strictly before the naive datetime it is given; it raises ValueError
when there is none.  So a probe instant t (epoch ms) is handed to pylance as
datetime.fromtimestamp(t/1000) in a subprocess running with TZ set, and to lancever as t (ms:
no zone involved).  Probes: 1 ms before, at and after each commit, between commits, before the
first and after the last.  Two histories: one written at full speed, and one whose manifest
times run backwards in places (timeline.py patches them), where the newest qualifying version
is not the last one before a later commit.  The Python package's version_as_of(naive datetime,
strict=True) is checked against pylance in the same process, in the same zone.  Zone-less ISO strings are the one place the zone
matters: pylance reads them as local time, lancever as UTC (docs/format.md, "Time travel").
"""
import datetime
import json
import os
import subprocess
import sys
import time

import lance
import pyarrow as pa

from conftest import LANCEVER
from timeline import Timeline

ZONES = ["UTC", "Asia/Kolkata", "America/New_York"]

PEER = r"""
import datetime, json, sys, lance, lancever
uri, probes = sys.argv[1], json.loads(sys.argv[2])
out, ours = [], []
d = lancever.Dataset(uri)
for p in probes:
    ts = datetime.datetime.fromtimestamp(p / 1000) if isinstance(p, (int, float)) else p
    try:
        out.append(lance.dataset(uri, asof=ts).version)
    except ValueError:
        out.append(None)
    if isinstance(ts, datetime.datetime):  # the Python package: a naive datetime is local
        try:
            ours.append(d.version_as_of(ts, strict=True)["version"])
        except lancever.NotFoundError:
            ours.append(None)
        assert ours[-1] == out[-1], (p, ours[-1], out[-1])
print(json.dumps(out))
"""


def pylance_asof(uri, probes, tz):
    env = dict(os.environ, TZ=tz)
    r = subprocess.run([sys.executable, "-c", PEER, uri, json.dumps(probes)],
                       capture_output=True, text=True, env=env, check=True)
    return json.loads(r.stdout)


def lancever_asof(uri, t, tz):
    r = subprocess.run([LANCEVER, "-q", "asof", uri, str(t), "--strict", "--json"],
                       capture_output=True, text=True, env=dict(os.environ, TZ=tz))
    if r.returncode != 0:
        assert "no version committed before" in r.stderr, r.stderr
        return None
    return json.loads(r.stdout)["version"]["version"]


def history(uri):
    out = json.loads(subprocess.run([LANCEVER, "-q", "versions", uri, "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    return [(v["version"], v["timestamp_millis"]) for v in out]


def probes_for(ts):
    s = sorted(set(ts))
    p = {s[0] - 60000, s[-1] + 60000}
    for t in s:
        p |= {t - 1, t, t + 1}
    for a, b in zip(s, s[1:]):
        p.add((a + b) // 2)
    return sorted(p)


def build(uri, backwards):
    tl = Timeline(uri)
    ds = lance.write_dataset(pa.table({"x": [0]}), uri)
    tl.mark("v1")
    for k in range(1, 6):
        ds = lance.write_dataset(pa.table({"x": [k]}), uri, mode="append")
        tl.mark(f"v{k + 1}")
    if backwards:  # v3 before v2, v5 before v3 (writer clocks disagree)
        tl.age([50 * 60, 30 * 60, 40 * 60, 20 * 60, 45 * 60, 10 * 60])
    return uri


def check_zone(uri, tz):
    hist = history(uri)
    ts = [t for _, t in hist]
    pr = probes_for(ts)
    theirs = pylance_asof(uri, pr, tz)
    ours = [lancever_asof(uri, t, tz) for t in pr]
    bad = [(t, o, p) for t, o, p in zip(pr, ours, theirs) if o != p]
    assert not bad, f"{uri} TZ={tz}: (probe ms, lancever, pylance): {bad}"
    # the answer by definition: the newest version committed strictly before the probe
    want = [max((v for v, t in hist if t < p), default=None) for p in pr]
    assert ours == want
    return len(pr)


def test_asof_fast_history(tmp_path):
    uri = build(str(tmp_path / "fast.lance"), backwards=False)
    for tz in ZONES[:2]:
        assert check_zone(uri, tz) >= len(history(uri)) + 2  # commits may share a millisecond


def test_asof_backwards_clock(tmp_path):
    uri = build(str(tmp_path / "skew.lance"), backwards=True)
    hist = history(uri)
    assert [v for v, _ in sorted(hist, key=lambda x: x[1])] != [v for v, _ in hist], "not skewed"
    for tz in (ZONES[0], ZONES[2]):
        check_zone(uri, tz)


def test_asof_naive_strings(tmp_path):
    """A zone-less time: pylance takes it as local, lancever as UTC; with the local offset
    written out, lancever's answer is pylance's in every zone."""
    uri = build(str(tmp_path / "naive.lance"), backwards=True)
    hist = history(uri)
    for tz in ZONES:
        texts, offsets = [], []
        for _, t in hist:
            # whole seconds: pylance's string form has no fraction
            for sec in (t // 1000, t // 1000 + 1):
                os.environ["TZ"] = tz
                time.tzset()
                local = datetime.datetime.fromtimestamp(sec)
                off = local.astimezone().strftime("%z")
                texts.append(local.strftime("%Y-%m-%d %H:%M:%S"))
                offsets.append(f"{off[:3]}:{off[3:]}")
        os.environ.pop("TZ")
        time.tzset()
        theirs = pylance_asof(uri, texts, tz)
        with_offset = [lancever_asof(uri, s.replace(" ", "T") + o, tz) for s, o in zip(texts, offsets)]
        assert with_offset == theirs, tz
        naive = [lancever_asof(uri, s, tz) for s in texts]
        if tz == "UTC":
            assert naive == theirs
        else:
            assert naive != theirs, f"TZ={tz}: expected the UTC reading to differ somewhere"
