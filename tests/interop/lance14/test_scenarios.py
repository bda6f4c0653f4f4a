"""Lance 14 scenarios (issue 25 §1): every dataset scenarios.py writes through pylance 14.0.2 --
all operations, indices, compaction, tags, branches, restore, stable row ids, blob columns, file
formats 2.0/2.1/2.2 and the default, V1 and V2 manifest names -- and lancever's versions, history,
show, asof and tags equal pylance's own answers (oracle.py), on main and on every branch.
"""
import os

import pytest

import oracle
import scenarios


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return {s.name: s for s in scenarios.build_all(str(tmp_path_factory.mktemp("l14")))}


NAMES = ["everything", "v1_names_2_0", "stable_row_ids_2_1", "blob_2_0", "blob_2_1", "blob_2_2",
         "blob_v2_sidecars", "default_format"]


def test_every_scenario_is_built(built):
    assert sorted(built) == sorted(NAMES)
    # what the scenarios cover, as pylance sees it
    ops = {op for s in built.values() for op in [*s.ops.values(), *(o for b in s.branches.values() for o in b.ops.values())]}
    assert ops >= {"Overwrite", "Append", "Delete", "Update", "Merge", "Project", "CreateIndex", "UpdateConfig",
                   "ReserveFragments", "Rewrite", "Restore", "Clone"}
    assert {s.data_format for s in built.values()} == {"2.0", "2.1", "2.2"}
    assert {s.v2_paths for s in built.values()} == {True, False}


@pytest.mark.parametrize("name", NAMES)
def test_versions_history_show(built, name):
    sc = built[name]
    assert oracle.compare_versions(sc) == len(sc.ops)
    for b in sc.branches:
        assert oracle.compare_versions(sc, b) == len(sc.branches[b].ops)


@pytest.fixture(params=["UTC", "America/St_Johns"])
def local_zone(request):
    """pylance's versions() and asof compare naive *local* datetimes: run under two zones (one
    with a half-hour offset from UTC)."""
    import time
    old = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    yield request.param
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


@pytest.mark.parametrize("name", NAMES)
def test_asof(built, name, local_zone):
    import datetime
    import time
    assert time.localtime(0).tm_gmtoff == (0 if local_zone == "UTC" else -12600)
    assert datetime.datetime.fromtimestamp(0).hour == (0 if local_zone == "UTC" else 20)
    assert oracle.compare_asof(built[name]) > 0


@pytest.mark.parametrize("name", NAMES)
def test_tags_and_branches(built, name):
    oracle.compare_refs(built[name])


@pytest.mark.parametrize("name", ["everything", "v1_names_2_0", "blob_v2_sidecars"])
def test_same_answers_other_ways(built, name, tmp_path):
    """The same records single-threaded, and without _transactions/: Lance 14 writes each
    transaction inline too (Manifest field 23, where Lance 8 and 12 used 21), so nothing may
    change when the .txn files are gone; pylance still reads them too."""
    import shutil

    import lance
    from conftest import lv_json
    sc = built[name]
    for branch in [None, *sc.branches]:
        args = oracle.branch_args(branch)
        ours = lv_json(*args, "versions", sc.uri)
        assert lv_json(*args, "versions", sc.uri, "--threads", "1") == ours
        copy = str(tmp_path / f"{name}-{(branch or 'main').replace('/', '_')}.lance")
        shutil.copytree(sc.uri, copy)
        for d, subdirs, _ in os.walk(copy):
            if "_transactions" in subdirs:
                shutil.rmtree(os.path.join(d, "_transactions"))
                subdirs.remove("_transactions")
        assert lv_json(*args, "versions", copy) == ours, f"{name} {branch}: without _transactions/"
        assert lv_json(*args, "history", copy) == ours
        ds = oracle.open_version(scenarios.Scenario(name, copy, sc.data_format), branch)
        for o in ours:
            if o["operation_type"] not in ("Rewrite", "ReserveFragments"):
                assert type(ds.read_transaction(o["version"]).operation).__name__ == o["operation_type"]
        assert lance.dataset(copy).count_rows() == lance.dataset(sc.uri).count_rows()


def test_ignored_files(built, tmp_path):
    """Staged manifests (`{v}.manifest-{uuid}`, V1 and V2 names, as a commit store leaves them), a
    detached manifest (`d{N}.manifest`) and junk in _versions/ are not versions: pylance 14 and
    lancever list the same versions as before, and lancever's cleanup never removes them."""
    import shutil

    import lance
    from conftest import lv, lv_json
    sc = built["everything"]
    copy = str(tmp_path / "ignored.lance")
    shutil.copytree(sc.uri, copy)
    vd = os.path.join(copy, "_versions")
    before = lv_json("versions", copy)
    newest = sorted(f for f in os.listdir(vd) if f.endswith(".manifest"))[0]
    nv = before[-1]["version"] + 1
    extra = [f"{(1 << 64) - 1 - nv:020d}.manifest-0b6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f1",
             f"{nv}.manifest-1c6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f2", "d9223372036854775809.manifest"]
    for e in extra:
        shutil.copyfile(os.path.join(vd, newest), os.path.join(vd, e))
    with open(os.path.join(vd, "notes.txt"), "w") as f:
        f.write("not a manifest\n")
    assert [v["version"] for v in lance.dataset(copy).versions()] == [b["version"] for b in before]
    assert lv_json("versions", copy) == before
    r = lv("cleanup", copy, "--retain-versions", "1", "--older-than", "0s", "--no-error-if-tagged-old-versions")
    for e in extra:
        assert os.path.exists(os.path.join(vd, e)), f"cleanup removed {e}: {r.stdout}"
    assert [v["version"] for v in lance.dataset(copy).versions()] == [o["version"] for o in lv_json("versions", copy)]
