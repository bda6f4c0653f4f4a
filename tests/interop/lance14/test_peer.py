"""The Lance 14 peer itself: the pinned pylance writes a dataset lancever lists exactly."""
import datetime

import lance
import pyarrow as pa

from conftest import lv_json


def test_versions_match_pylance(tmp_path):
    uri = str(tmp_path / "t.lance")
    ds = lance.write_dataset(pa.table({"id": [1, 2, 3]}), uri)
    ds = lance.write_dataset(pa.table({"id": [4]}), uri, mode="append")
    ds.delete("id = 2")
    ds = lance.dataset(uri)
    theirs = ds.versions()
    ours = lv_json("versions", uri)
    assert [v["version"] for v in ours] == [v["version"] for v in theirs] == [1, 2, 3]
    for o, t in zip(ours, theirs):
        # pylance gives naive local datetimes from the manifest's nanoseconds
        ts = datetime.datetime.fromtimestamp(o["timestamp_millis"] / 1000)
        assert abs((ts - t["timestamp"]).total_seconds()) < 0.001
        assert str(o["total_rows"]) == t["metadata"]["total_rows"]
