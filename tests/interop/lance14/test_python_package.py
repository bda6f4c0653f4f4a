"""lancever's own Python package (python/lancever, ctypes over liblancever) on the Lance 14
scenarios, next to pylance in one process, as a pylance user would use both (the Lance 14 side of
python/tests/test_interop.py): versions() equals pylance's versions() (==), history()'s live rows
match it; pyarrow 26 consumes versions_stream() / history_stream() through the Arrow C stream
(PyCapsule) and gets exactly the CLI's --json records; tags, branches and version_as_of(strict)
equal pylance's answers; on main and every branch.
"""
import datetime
import json

import lance
import pyarrow as pa
import pytest

import lancever
import oracle
import scenarios
from conftest import lv_json

UTC = datetime.timezone.utc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return scenarios.build_all(str(tmp_path_factory.mktemp("l14py")))


def rounded_up(t, o):
    """Did pylance's float rounding move version o's commit time onto the next millisecond?  Its
    rows make a float of the commit's nanoseconds first, so a time less than ~128 ns before a
    millisecond shows as that millisecond (a whole one), one above ours (python/tests/test_interop.py
    lance_match has the same rule for LanceDB's listVersions())."""
    local = o["timestamp"].astimezone().replace(tzinfo=None)
    return t["timestamp"] - local == datetime.timedelta(milliseconds=1) and t["timestamp"].microsecond % 1000 == 0


def arrow_rows(stream):
    t = pa.RecordBatchReader.from_stream(stream).read_all()
    assert t.schema.field("timestamp_millis").type == pa.timestamp("ms", tz="UTC")
    rows = t.to_pylist()
    epoch = datetime.datetime(1970, 1, 1, tzinfo=UTC)
    for r in rows:
        r["transaction_properties"] = json.loads(r["transaction_properties"])
        r["timestamp_millis"] = (r["timestamp_millis"] - epoch) // datetime.timedelta(milliseconds=1)
    return t.schema, rows


def test_package_equals_pylance_and_cli(built):
    seen = 0
    for sc in built:
        for branch in [None, *sc.branches]:
            L = f"{sc.name}{' branch ' + branch if branch else ''}"
            ds = lancever.Dataset(sc.uri, branch=branch)
            theirs = oracle.open_version(sc, branch).versions()
            cli = lv_json(*oracle.branch_args(branch), "versions", sc.uri)
            assert ds.versions() == theirs, L  # pylance's own shape and values (test_dropin has more)
            for kind, ours in (("versions", [r for r in ds.history() if not r["is_cleaned_up"]]),
                               ("history", ds.history())):
                assert [r["version"] for r in ours] == [t["version"] for t in theirs], f"{L} {kind}"
                for o, t, c in zip(ours, theirs, cli):
                    V = f"{L} {kind} v{o['version']}"
                    assert o["metadata"] == t["metadata"], V
                    local = o["timestamp"].astimezone().replace(tzinfo=None)
                    assert datetime.timedelta(0) <= t["timestamp"] - local < datetime.timedelta(milliseconds=1) \
                        or rounded_up(t, o), V
                    # the CLI's "timestamp" is the ISO 8601 text of the package's datetime
                    assert c["timestamp"] == o["timestamp"].isoformat(timespec="milliseconds").replace("+00:00", "Z"), V
                    same = [k for k in o if k in c and k != "timestamp"]
                    assert {k: o[k] for k in same} == {k: c[k] for k in same}, V
            for kind, stream in (("versions", ds.versions_stream()), ("history", ds.history_stream(batch_rows=3))):
                schema, rows = arrow_rows(stream)
                assert schema.metadata[b"lancever:kind"] == kind.encode(), L
                assert len(rows) == len(cli), f"{L} {kind} stream"
                for r, c in zip(rows, cli):
                    assert r == {k: c[k] for k in r}, f"{L} {kind} stream v{c['version']}"
            ds.close()
            seen += 1
    assert seen == len(built) + 2


def test_tags_branches_asof(built):
    for sc in built:
        pds = lance.dataset(sc.uri)
        ds = lancever.Dataset(sc.uri)
        assert {k: (t["version"], t["branch"], t["manifest_size"]) for k, t in ds.tags.list().items()} == \
               {k: (t["version"], t["branch"], t["manifest_size"]) for k, t in pds.tags.list().items()}, sc.name
        ours_b = ds.tags.branches()
        theirs_b = pds.branches.list()
        assert {k: (b["parent_branch"], b["parent_version"], b["manifest_size"], int(b["create_at"].timestamp()))
                for k, b in ours_b.items()} == \
               {k: (b["parent_branch"], b["parent_version"], b["manifest_size"], b["create_at"])
                for k, b in theirs_b.items()}, sc.name
        # pylance's asof makes a float of the time asked for too: at the millisecond a commit less
        # than ~128 ns before it was rounded up to, it may answer the version before that commit
        theirs = {t["version"]: t for t in pds.versions()}
        edge = {o["timestamp_millis"] + 1: o["version"] for o in ds.history()
                if o["version"] in theirs and rounded_up(theirs[o["version"]], o)}
        for v in ds.history():  # the rich record (timestamp_millis)
            for d in (-1, 0, 1):
                T = v["timestamp_millis"] + d
                try:
                    want = lance.dataset(sc.uri, asof=oracle.local_dt(T)).version
                except ValueError:
                    want = None
                when = datetime.datetime.fromtimestamp(T // 1000, UTC) + datetime.timedelta(milliseconds=T % 1000)
                try:
                    got = ds.version_as_of(when, strict=True)["version"]
                except lancever.NotFoundError:
                    got = None
                if got != want and edge.get(T) == got:
                    continue  # the commit at T - 1 ms + (T's float rounding) is ours, rightly
                assert got == want, f"{sc.name}: version_as_of({T}, strict) = {got}, pylance {want}"
        ds.close()


def test_rounded_up_allows_only_the_float_rounding():
    ours = {"timestamp": datetime.datetime(2026, 12, 5, 22, 23, 55, 287000, tzinfo=UTC)}
    local = ours["timestamp"].astimezone().replace(tzinfo=None)
    ms = datetime.timedelta(milliseconds=1)
    assert rounded_up({"timestamp": local + ms}, ours)                                   # onto the next ms
    assert not rounded_up({"timestamp": local}, ours)                                    # the same ms
    assert not rounded_up({"timestamp": local + ms + datetime.timedelta(microseconds=500)}, ours)
    assert not rounded_up({"timestamp": local + 2 * ms}, ours)
    assert not rounded_up({"timestamp": local - ms}, ours)
