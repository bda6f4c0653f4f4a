"""lancever.Capture (lancever/capture.h) beside pylance 14.0.2 writing with Lance's own
cleanups: auto-cleanup on every commit (interval 1, older_than 0s, retain_versions 1) and
cleanup_old_versions(older_than=0).  No CLI: the library through the Python package.

A capture that polls after every commit records every version (history 1..latest, no gap,
each row what pylance said of that version when it was live); one that polls every third
commit misses what Lance removed in between, and history names those gaps with the reason.
"""
import warnings
from datetime import timedelta

import lance
import pyarrow as pa

import lancever

AUTO = {"lance.auto_cleanup.interval": "1", "lance.auto_cleanup.older_than": "0s",
        "lance.auto_cleanup.retain_versions": "1"}


def table(k):
    return pa.table({"x": [k, k + 1], "s": [f"row {k}", None]})


def live_row(uri):
    """pylance's record of the latest version while its manifest exists."""
    v = lance.dataset(uri).versions()[-1]
    return v["version"], v["metadata"]


def test_every_version_captured_under_auto_cleanup(tmp_path):
    uri = str(tmp_path / "auto.lance")
    lance.write_dataset(table(0), uri)
    ds = lancever.dataset(uri)
    seen = {1: live_row(uri)[1]}
    with ds.capture(flush_interval=timedelta(seconds=60)) as cap:
        cap.poll()  # version 1, before the commit that turns auto-cleanup on removes it
        lance.dataset(uri).update_config(AUTO)
        for k in range(1, 25):
            lance.write_dataset(table(k), uri, mode="append")
            v, meta = live_row(uri)
            seen[v] = meta
            st = cap.poll()
            if k % 5 == 0:
                cap.flush()
            if k == 12:  # and an explicit cleanup of everything older than now
                lance.dataset(uri).cleanup_old_versions(older_than=timedelta(0))
        assert len(lance.dataset(uri).versions()) <= 2  # Lance did clean up
    latest = max(seen)
    assert st.missed == 0 and st.newest_version == latest
    rows = ds.history()
    assert [r["version"] for r in rows] == list(range(1, latest + 1))
    assert rows.gaps == []
    for r in rows:
        if r["version"] in seen:
            assert r["metadata"] == seen[r["version"]], r["version"]
    assert sum(r["is_cleaned_up"] for r in rows) >= latest - 2
    ds.close()


def test_polls_too_rare_report_their_misses(tmp_path):
    uri = str(tmp_path / "rare.lance")
    lance.write_dataset(table(0), uri)
    ds = lancever.dataset(uri)
    cap = ds.capture()
    cap.poll()
    lance.dataset(uri).update_config(AUTO)
    missed = 0
    for k in range(1, 10):
        lance.write_dataset(table(k), uri, mode="append")
        if k % 3 == 0:
            missed = cap.poll().missed
    cap.flush()
    cap.close()
    latest = lance.dataset(uri).versions()[-1]["version"]
    assert missed >= 3  # Lance keeps the newest two: one in three commits is gone at the poll
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rows = ds.history()
    recorded = [r["version"] for r in rows]
    assert recorded[-1] == latest and len(recorded) + missed == latest
    said = [str(x.message) for x in w if "lancever capture missed" in str(x.message)]
    assert len(said) == len(rows.gaps) >= 3, said
    assert all("committed and removed between two polls" in s for s in said)
    ds.close()
