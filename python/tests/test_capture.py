"""lancever.Capture (lancever/capture.h from Python): versions a cleanup removes after a poll
stay in history, a manifest gone before its read is a gap with its reason, the `with` block
flushes, and the arguments are checked."""

import os
from datetime import timedelta

import pytest

import lancever
from conftest import gen_dataset, run_cli


def _manifest(d, version):
    return d / "_versions" / f"{(1 << 64) - 1 - version:020d}.manifest"


def test_poll_flush_keeps_versions_a_cleanup_removes(tmp_path):
    d = gen_dataset(tmp_path / "c.lance", 5)
    run_cli("checkpoint", d)
    ds = lancever.dataset(str(d))
    with ds.capture(flush_interval=timedelta(seconds=2)) as cap:
        assert cap.stats().newest_version == 5
        gen_dataset(d, 5, start=6)
        st = cap.poll()
        assert (st.captured, st.missed, st.held, st.newest_version) == (5, 0, 5, 10)
        assert not cap.due  # read just now, flushed after 2 s
        for v in range(6, 10):  # Lance's cleanup: manifests removed, no checkpoint
            os.remove(_manifest(d, v))
        cap.flush()
        st = cap.stats()
        assert (st.held, st.flushes, st.flushed_version) == (0, 1, 10)
        assert cap.poll().requests - st.requests == 1  # an idle poll: one listing
    rows = ds.history()
    assert [r["version"] for r in rows] == list(range(1, 11))
    assert [r["version"] for r in rows if r["is_cleaned_up"]] == [6, 7, 8, 9]
    ds.close()


def test_vanished_versions_are_a_gap_with_the_reason(tmp_path):
    d = gen_dataset(tmp_path / "g.lance", 3)
    run_cli("checkpoint", d)
    ds = lancever.dataset(str(d))
    cap = ds.capture()
    gen_dataset(d, 4, start=4)
    for v in (4, 5):  # committed and removed before any poll saw them
        os.remove(_manifest(d, v))
    st = cap.poll()
    assert (st.captured, st.missed) == (2, 2)
    cap.flush()
    cap.close()
    with pytest.raises(lancever.Error):
        cap.poll()
    with pytest.warns(lancever.LanceverWarning, match=r"versions 4-5: no record; lancever capture missed "
                      r"versions 4-5: committed and removed between two polls \(or while no "
                      r"capture ran\)"):
        rows = ds.history()
    assert [r["version"] for r in rows] == [1, 2, 3, 6, 7]
    assert rows.report.unrecorded_versions == 2
    assert os.listdir(d / "_checkpoints" / "gaps") == [
        "00000000000000000004-00000000000000000005.removed-unseen"]
    ds.close()


def test_arguments(tmp_path):
    d = gen_dataset(tmp_path / "a.lance", 2)
    ds = lancever.dataset(str(d))
    for bad in (0, -1, timedelta(0)):
        with pytest.raises(ValueError):
            ds.capture(flush_interval=bad)
    with pytest.raises(TypeError):
        ds.capture(flush_interval="1s")
    cap = ds.capture(0.5)
    assert cap.poll().captured == 2  # no checkpoint yet: every live manifest
    cap.close()  # does not flush
    assert [r["version"] for r in ds.history()] == [1, 2]  # nothing was written
    assert not (d / "_checkpoints").exists()
    ds.close()
    with pytest.raises(lancever.Error):
        cap.flush()
