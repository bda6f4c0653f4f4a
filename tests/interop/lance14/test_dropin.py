"""lancever's Python package as a drop-in beside pylance 14.0.2 (issue 27 §2): every pylance-shaped
entry point is called on the same dataset through pylance and through lancever and the answers are
compared.

* versions() == pylance's versions() with `==` (keys, types: naive local datetime, metadata of
  strings; values) on every scenario of scenarios.py, main and every branch, under two time zones,
  with the rows built by the C accelerator (lancever._rows) and by the package's Python;
  after a checkpoint the versions it covers keep their millisecond (the documented difference);
* lancever.dataset(uri | LanceDataset, version=int | tag | (branch, version)) checks out what
  lance.dataset / checkout_version check out; latest_version, version, tags.list(),
  tags.get_version(), show(tag) and show((branch, v)) agree with pylance;
* cleanup_old_versions / explain_cleanup_old_versions take pylance's exact signature (its
  parameters are a prefix of ours, same names, kinds and defaults), and on twin copies give
  pylance's read_version, stats (failed_deletes included) and candidate files with Lance's
  `unverified` flag;
* the new arguments are checked as pylance checks them (delete_rate_limit, delete_concurrency,
  max_files, version references).
"""
import datetime
import inspect
import os
import shutil
import time

import lance
import pytest

import lancever
import oracle
import scenarios

STATS = ["bytes_removed", "old_versions", "data_files_removed", "transaction_files_removed",
         "index_files_removed", "deletion_files_removed", "failed_deletes"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return scenarios.build_all(str(tmp_path_factory.mktemp("l14dropin")))


@pytest.fixture(params=["UTC", "America/St_Johns"])
def local_zone(request):
    old = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    yield request.param
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


@pytest.fixture(params=["c_rows", "python_rows"])
def row_builder(request, monkeypatch):
    """versions() with the C accelerator (lancever._rows, which the build makes beside the
    library) and without it (the package's Python rows): both must equal pylance's."""
    from lancever import _accel
    assert _accel.accelerated(), "lancever._rows was not built beside LANCEVER_LIBRARY"
    if request.param == "python_rows":
        monkeypatch.setattr(_accel, "_module", None)
    return request.param


def test_versions_equal_pylance(built, local_zone, row_builder):
    seen = 0
    for sc in built:
        for branch in [None, *sc.branches]:
            theirs = oracle.open_version(sc, branch).versions()
            ours = lancever.Dataset(sc.uri, branch=branch).versions()
            assert ours == theirs, f"{sc.name} {branch or 'main'} ({local_zone}, {row_builder})"
            assert [set(r) for r in ours] == [{"version", "timestamp", "metadata"}] * len(ours)
            assert all(type(r["timestamp"]) is datetime.datetime and r["timestamp"].tzinfo is None
                       and all(type(x) is str for x in r["metadata"].values()) for r in ours)
            seen += 1
        # lancever.dataset() on pylance's own object
        assert lancever.dataset(lance.dataset(sc.uri)).versions() == lance.dataset(sc.uri).versions(), sc.name
    assert seen == len(built) + 2


def test_versions_from_a_checkpoint(built, tmp_path, row_builder):
    """A checkpoint keeps ms: the versions it covers differ from pylance by < 1 ms (docs/python.md)."""
    sc = built[2]
    d = str(tmp_path / "cp.lance")
    shutil.copytree(sc.uri, d)
    ds = lancever.Dataset(d)
    assert ds.checkpoint().written
    ours, theirs = ds.versions(), lance.dataset(d).versions()
    assert ds.versions().report.rung == "newest_checkpoint"
    assert [(r["version"], r["metadata"]) for r in ours] == [(t["version"], t["metadata"]) for t in theirs]
    for o, t in zip(ours, theirs):
        assert datetime.timedelta(0) <= t["timestamp"] - o["timestamp"] < datetime.timedelta(milliseconds=1)
    # history() keeps aware UTC datetimes
    assert all(r["timestamp"].tzinfo is datetime.timezone.utc for r in ds.history())


def test_references_equal_pylance(built):
    sc = built[0]  # everything: tags on main and on a branch, branches
    pds = lance.dataset(sc.uri)
    ds = lancever.dataset(sc.uri)
    assert (ds.latest_version, ds.version) == (pds.latest_version, pds.version)
    assert ds.tags.list() == pds.tags.list()
    for name, t in pds.tags.list().items():
        assert ds.tags.get_version(name) == pds.tags.get_version(name), name
        theirs = pds.checkout_version(name)
        ours = ds.checkout_version(name)
        assert ours.version == theirs.version and ours.branch == t["branch"], name
        assert ds.show(name)["version"] == t["version"], name
        assert lancever.dataset(sc.uri, version=name).version == lance.dataset(sc.uri, version=name).version
    for v in (1, 3, pds.latest_version):
        assert lancever.dataset(sc.uri, version=v).version == lance.dataset(sc.uri, version=v).version == v
        assert ds.show(v)["version"] == v
    for br in sc.branches:
        theirs = pds.checkout_version((br, None))
        ours = ds.checkout_version((br, None))
        assert (ours.version, ours.latest_version) == (theirs.version, theirs.latest_version), br
        assert ds.show((br, None))["branch"] == br
        assert ds.show((br, theirs.version))["version"] == theirs.version
    assert ds.checkout_version(("main", 2)).version == pds.checkout_version(("main", 2)).version == 2
    assert ds.diff("t2", ds.latest_version)["from"] == 2
    with pytest.raises(ValueError):
        pds.tags.get_version("nope")
    for call in (lambda: ds.tags.get_version("nope"), lambda: ds.show("nope"),
                 lambda: lancever.dataset(sc.uri, version="nope"), lambda: lancever.dataset(sc.uri, version=999)):
        with pytest.raises(lancever.NotFoundError):
            call()


def test_cleanup_signatures_are_pylances():
    for name in ("cleanup_old_versions", "explain_cleanup_old_versions"):
        theirs = list(inspect.signature(getattr(lance.LanceDataset, name)).parameters.values())
        ours = list(inspect.signature(getattr(lancever.Dataset, name)).parameters.values())
        assert [(p.name, p.kind, p.default) for p in ours[:len(theirs)]] == \
               [(p.name, p.kind, p.default) for p in theirs], name
        assert all(p.kind is p.KEYWORD_ONLY for p in ours[len(theirs):]), name
        assert getattr(lancever.Dataset, name).__doc__, name
    theirs = inspect.signature(lance.dataset).parameters
    ours = inspect.signature(lancever.dataset).parameters
    assert list(ours) == ["uri", "version", "storage_options"]
    assert all(ours[k].default == theirs[k].default for k in ("version", "storage_options"))


def twins(sc, tmp_path, n=2):
    out = []
    for i in range(n):
        d = str(tmp_path / f"twin{i}.lance")
        shutil.copytree(sc.uri, d, symlinks=True)
        out.append(d)
    return out


def candidates(files, root=None):
    strip = (root or "").lstrip("/") + "/"
    return sorted((f.path[len(strip):] if root else f.path, f.kind, f.size_bytes, f.unverified) for f in files)


@pytest.mark.parametrize("kw", [dict(retain_versions=2, error_if_tagged_old_versions=False),
                                dict(older_than=datetime.timedelta(0), error_if_tagged_old_versions=False,
                                     delete_unverified=True, delete_rate_limit=1000),
                                dict(versions=[2, 3], error_if_tagged_old_versions=False)])
def test_cleanup_equals_pylance(built, tmp_path, kw):
    sc = next(s for s in built if s.name == "stable_row_ids_2_1")  # an index, compaction, deletions
    a, b = twins(sc, tmp_path)
    theirs = lance.dataset(a).explain_cleanup_old_versions(include_files=True, **kw)
    ours = lancever.Dataset(b).explain_cleanup_old_versions(include_files=True, **kw)
    assert ours.read_version == theirs.read_version
    assert [getattr(ours.stats, k) for k in STATS] == [getattr(theirs.stats, k) for k in STATS]
    assert candidates(ours.candidate_files) == candidates(theirs.candidate_files, a)
    assert (ours.candidate_files_truncated, ours.candidate_file_limit, ours.referenced_branches) == \
           (theirs.candidate_files_truncated, theirs.candidate_file_limit, theirs.referenced_branches)
    assert ours.stats.old_versions > 0
    run = dict(kw, delete_rate_limit=1000, delete_concurrency=2)
    t = lance.dataset(a).cleanup_old_versions(**run)
    o = lancever.Dataset(b).cleanup_old_versions(**run)
    assert [getattr(o, k) for k in STATS] == [getattr(t, k) for k in STATS]
    assert lancever.dataset(a).versions() == lance.dataset(a).versions()  # pylance's cleanup: no checkpoint
    # lancever's cleanup wrote a checkpoint first: what it covers is known to the ms (docs/python.md)
    ours, theirs = lancever.dataset(b).versions(), lance.dataset(b).versions()
    assert [(r["version"], r["metadata"]) for r in ours] == [(r["version"], r["metadata"]) for r in theirs]
    assert all(datetime.timedelta(0) <= t["timestamp"] - r["timestamp"] < datetime.timedelta(milliseconds=1)
               for r, t in zip(ours, theirs))


def test_explain_truncation_equals_pylance(built):
    sc = next(s for s in built if s.name == "stable_row_ids_2_1")
    kw = dict(older_than=datetime.timedelta(0), error_if_tagged_old_versions=False, include_files=True)
    for m in (1, 2, 1000):
        theirs = lance.dataset(sc.uri).explain_cleanup_old_versions(max_files=m, **kw)
        ours = lancever.Dataset(sc.uri).explain_cleanup_old_versions(max_files=m, **kw)
        assert (ours.candidate_files_truncated, ours.candidate_file_limit, len(ours.candidate_files),
                ours.warnings) == (theirs.candidate_files_truncated, theirs.candidate_file_limit,
                                   len(theirs.candidate_files), list(theirs.warnings)), m
    assert ours.dataset_warnings == []


def test_explain_without_files_is_pylances_default(built):
    sc = built[1]
    kw = dict(retain_versions=1, error_if_tagged_old_versions=False)
    theirs = lance.dataset(sc.uri).explain_cleanup_old_versions(**kw)
    ours = lancever.Dataset(sc.uri).explain_cleanup_old_versions(**kw)
    assert ours.candidate_files == list(theirs.candidate_files) == []
    assert ours.candidate_file_limit == theirs.candidate_file_limit == 1000
    assert ours.candidate_files_truncated is theirs.candidate_files_truncated is False
    assert [getattr(ours.stats, k) for k in STATS] == [getattr(theirs.stats, k) for k in STATS]


def test_new_arguments_are_checked_as_pylance_checks_them(built):
    sc = built[1]
    pds, ds = lance.dataset(sc.uri), lancever.Dataset(sc.uri)
    # both refuse; lancever's errors are its own classes (InvalidArgumentError is a ValueError)
    for kw, ours_err in ((dict(delete_rate_limit=0), lancever.InvalidArgumentError),
                         (dict(delete_concurrency=0), lancever.InvalidArgumentError),
                         (dict(delete_rate_limit=1.5), TypeError),
                         (dict(delete_rate_limit=True), TypeError)):
        if "True" not in repr(kw):
            with pytest.raises((OSError, TypeError, ValueError)):
                pds.cleanup_old_versions(retain_versions=1, **kw)
        with pytest.raises(ours_err):
            ds.cleanup_old_versions(retain_versions=1, **kw)
    with pytest.raises(ValueError):
        pds.explain_cleanup_old_versions(max_files=0)
    with pytest.raises(lancever.InvalidArgumentError):
        ds.explain_cleanup_old_versions(max_files=0)
    pds.explain_cleanup_old_versions(delete_rate_limit=0)  # ignored by explain: both accept it
    ds.explain_cleanup_old_versions(delete_rate_limit=0)
    for bad, err in ((1.5, TypeError), (True, TypeError), (("main",), TypeError), ((1, 2), TypeError),
                     (-1, lancever.InvalidArgumentError), ("a\0b", lancever.InvalidArgumentError)):
        with pytest.raises(err):
            ds.show(bad)
        with pytest.raises(err):
            lancever.dataset(sc.uri, version=bad)
    with pytest.raises(TypeError):
        lancever.dataset(42)
    with pytest.raises(TypeError):
        lancever.dataset(sc.uri, storage_options=["x"])
    assert len(ds.versions()) == len(pds.versions())  # nothing was removed by a refused call


def test_tag_metadata_equals_pylance(built, tmp_path):
    """tags.list()'s metadata: the tag file's map of strings, as pylance 14 lists it."""
    d = str(tmp_path / "tags.lance")
    shutil.copytree(built[1].uri, d, symlinks=True)
    pds = lance.dataset(d)
    pds.tags.create("m", 2)
    pds.tags.replace_metadata("m", {"owner": "ann", "why": "release ✓", "empty": ""})
    pds.tags.create("plain", 3)
    theirs = lance.dataset(d).tags.list()
    ours = lancever.dataset(d).tags.list()
    assert theirs["m"]["metadata"] == {"owner": "ann", "why": "release ✓", "empty": ""}
    assert ours == theirs
    assert lancever.dataset(d).tags.get_version("m") == lance.dataset(d).tags.get_version("m") == 2
