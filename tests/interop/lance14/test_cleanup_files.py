"""Files a Lance 14 cleanup accounts for (issue 25 section 2), pylance 14.0.2 against lancever.

Each scenario builds one dataset with pylance, copies it twice (mtimes kept), cleans copy A with
pylance's cleanup_old_versions and copy B with `lancever cleanup` under the same policy, and
compares what remains (lancever's _checkpoints/ aside), what each removed and the counts.  The
differences lancever keeps on purpose (docs/operations.md, Cleanup) are asserted as such, never skipped:
_blobs/ and _fri/ are never touched by lancever (their liveness needs blob descriptors and
fragment-reuse details it does not read), and no manifest at or above the version hint goes.
"""
import datetime
import json
import os
import shutil
import time

import lance
import pyarrow as pa
from lance.blob import blob_array, blob_field
from lance.dataset import LanceOperation

from conftest import lv, lv_json

DAY = 86400
NEVER = ("_blobs/", "_fri/")  # lancever never touches these (docs/operations.md: where it differs)


def files(root):
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.relpath(os.path.join(d, f), root)
            if not p.startswith("_checkpoints/"):
                out[p] = os.path.getsize(os.path.join(d, f))
    return out


def twins(src, tmp_path):
    a, b = str(tmp_path / "A.lance"), str(tmp_path / "B.lance")
    shutil.copytree(src, a)  # copy2: mtimes kept
    shutil.copytree(src, b)
    assert files(a) == files(b)
    return a, b


def lv_args(older_than=None, retain_versions=None, delete_unverified=False, versions=None,
            error_if_tagged_old_versions=True):
    args = [] if error_if_tagged_old_versions else ["--no-error-if-tagged-old-versions"]
    if older_than is not None:
        args += ["--older-than", f"{int(older_than.total_seconds() * 1000)}ms"]
    if retain_versions is not None:
        args += ["--retain-versions", retain_versions]
    if versions is not None:
        args += ["--versions", ",".join(map(str, versions))]
    if delete_unverified:
        args += ["--delete-unverified"]
    return args


def compare(src, tmp_path, expect_only_ours=(), also_theirs=(), **policy):
    """Cleans twin copies; returns (pylance stats, lancever JSON, removed by pylance, by us)."""
    a, b = twins(src, tmp_path)
    before = files(a)
    theirs = lance.dataset(a).cleanup_old_versions(**policy)
    ours = lv_json("cleanup", b, *lv_args(**policy))
    fa, fb = files(a), files(b)
    gone_a, gone_b = set(before) - set(fa), set(before) - set(fb)
    only_theirs = sorted(gone_a - gone_b)
    # what only pylance removed must be under a directory lancever never touches (or a
    # difference the caller names: a branch base's manifest, which lancever always keeps)
    assert all(p.startswith(NEVER) or p in also_theirs for p in only_theirs), only_theirs
    assert sorted(gone_b - gone_a) == sorted(expect_only_ours), sorted(gone_b - gone_a)
    k = ours["by_kind"]
    theirs_manifests = sum(1 for p in also_theirs if p.startswith("_versions/"))
    data_also = sum(1 for p in only_theirs if p in also_theirs and p.startswith("data/"))
    index_also = sum(1 for p in only_theirs if p in also_theirs and p.startswith("_indices/"))
    assert k["manifest"]["files"] == theirs.old_versions - theirs_manifests
    data_never = sum(1 for p in only_theirs if p.startswith("_blobs/"))
    index_never = sum(1 for p in only_theirs if p.startswith("_fri/"))
    assert k["data"]["files"] == theirs.data_files_removed - data_never - data_also
    assert k["transaction"]["files"] == theirs.transaction_files_removed - \
        sum(1 for p in also_theirs if p.startswith("_transactions/"))
    assert k["index"]["files"] == theirs.index_files_removed - index_never - index_also
    assert k["deletion"]["files"] == theirs.deletion_files_removed
    assert ours["failed_deletes"] == theirs.failed_deletes == 0
    # pylance reads lancever's result: every remaining version, same rows
    for v in lance.dataset(a).versions():
        assert lance.dataset(b, version=v["version"]).count_rows() == \
            lance.dataset(a, version=v["version"]).count_rows()
    return theirs, ours, gone_a, gone_b


def table(n=20, start=0):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "v": pa.array(range(start, start + n), pa.int64())})


def flags_of(uri):
    return [(v["version"], v["reader_feature_flags"], v["writer_feature_flags"])
            for v in lv_json("versions", uri)]


def test_covering_index_flag_128(tmp_path):
    """Flag 128 (covering-index metadata): pylance 14 sets it as reader and writer flag; lancever
    reads and cleans such a dataset exactly as pylance does (it adds no file)."""
    src = str(tmp_path / "src.lance")
    ds = lance.write_dataset(table(), src)
    ds = lance.write_dataset(table(start=20), src, mode="append")
    seg = ds.create_index_uncommitted("id", "BTREE", fragment_ids=[0, 1])
    seg.fields, seg.covering_fields = [0, 1], [1]
    ds = lance.LanceDataset.commit(src, LanceOperation.CreateIndex(new_indices=[seg], removed_indices=[]),
                                   read_version=ds.version)
    ds = lance.write_dataset(table(start=40), src, mode="overwrite")
    assert [f for f in flags_of(src) if f[0] == 3] == [(3, 128, 128)]
    shown = lv_json("show", src, 3)
    assert shown["feature_flags"] == {"reader": ["covered_index_metadata"],
                                      "writer": ["covered_index_metadata"]}
    theirs, ours, _, gone = compare(src, tmp_path, retain_versions=1)
    assert theirs.old_versions == 3 and theirs.index_files_removed == 2
    assert any(p.startswith("_indices/") for p in gone)


def test_mixed_data_file_versions_flag_256(tmp_path):
    """Flag 256: an append or update with another data_storage_version sets it (pylance 14);
    each data file's own version is authoritative, no other file: cleanup knows it."""
    src = str(tmp_path / "src.lance")
    ds = lance.write_dataset(table(), src, data_storage_version="2.0")
    ds = lance.write_dataset(table(start=20), src, mode="append", data_storage_version="2.1")
    ds.update({"v": "v + 1"}, where="id < 5", data_storage_version="2.2")
    ds = lance.write_dataset(table(start=40), src, mode="append")
    fl = flags_of(src)
    assert fl[0] == (1, 0, 0) and fl[1] == (2, 256, 256) and fl[2][1] & 256 and fl[3][2] & 256
    assert lv_json("show", src, 2)["feature_flags"]["writer"] == ["mixed_data_file_versions"]
    theirs, _, _, _ = compare(src, tmp_path, retain_versions=2)
    assert theirs.old_versions == 2


def test_stable_row_ids_and_compaction(tmp_path):
    src = str(tmp_path / "src.lance")
    ds = lance.write_dataset(table(), src, enable_stable_row_ids=True, max_rows_per_file=10)
    ds = lance.write_dataset(table(start=20), src, mode="append", max_rows_per_file=10)
    ds.delete("id % 3 = 0")
    ds = lance.dataset(src)
    ds.optimize.compact_files(target_rows_per_fragment=100)
    assert all(f[1] & 2 for f in flags_of(src))
    theirs, _, _, _ = compare(src, tmp_path, retain_versions=1)
    assert theirs.old_versions == 4 and theirs.deletion_files_removed >= 1


def blob_table(start):
    sch = pa.schema([pa.field("id", pa.int64()),
                     blob_field("b", inline_size_threshold=1000, dedicated_size_threshold=100000)])
    vals = [b"x" * 10, b"y" * 5000, b"z" * 200000, None]
    return pa.table({"id": pa.array(range(start, start + 4), pa.int64()), "b": blob_array(vals)},
                    schema=sch)


def test_blob_sidecars(tmp_path):
    """Blob v2 sidecars data/<key>/<id>.blob (pylance 14 writes them for values over the inline
    threshold) go exactly when their data/<key>.lance goes, counted as data files."""
    src = str(tmp_path / "src.lance")
    lance.write_dataset(blob_table(0), src)
    lance.write_dataset(blob_table(4), src, mode="append")
    lance.write_dataset(blob_table(8), src, mode="overwrite")
    sidecars = [p for p in files(src) if p.startswith("data/") and p.endswith(".blob")]
    assert len(sidecars) == 6  # 2 per data file: the packed and the dedicated value
    theirs, ours, _, gone = compare(src, tmp_path, retain_versions=1)
    assert len([p for p in gone if p.endswith(".blob")]) == 4
    assert theirs.data_files_removed == 6 and ours["by_kind"]["data"]["files"] == 6
    # what stays is the kept version's data file and its own two sidecars
    kept = [p for p in files(str(tmp_path / "B.lance")) if p.startswith("data/")]
    key = [p for p in kept if p.endswith(".lance")][0][5:-6]
    assert sorted(kept) == sorted([f"data/{key}.lance"] + [p for p in kept if p.startswith(f"data/{key}/")])
    assert len(kept) == 3


LEFTOVERS = ["data/.tmp_a", "data/k1/.tmp_b", "_versions/.tmp_c", "data/unref.lance",
             "data/unref/00000000000000000000000000000001.blob", "_deletions/0-1-2.arrow",
             "_transactions/9-x.txn", "_indices/11111111-1111-1111-1111-111111111111/x.idx",
             "_blobs/zz.blob", "_fri/m1/stable_partition.lance", "junk/a",
             "_versions/18446744073709551610.manifest-0b6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f1"]


def leftovers_dataset(root, age_days):
    """v1, v2, then the leftovers (aged), then v3 (so they are older than every kept manifest)."""
    lance.write_dataset(table(), root)
    lance.write_dataset(table(start=20), root, mode="overwrite")
    # young ones 10 s old: clear of lancever's 2 s mtime margin before the next commit
    t = time.time() - (age_days * DAY if age_days else 10)
    for p in LEFTOVERS:
        f = os.path.join(root, p)
        os.makedirs(os.path.dirname(f), exist_ok=True)
        with open(f, "wb") as fh:
            fh.write(b"leftover " + p.encode())
        os.utime(f, (t, t))
    lance.write_dataset(table(start=40), root, mode="overwrite")


def test_leftovers(tmp_path):
    """.tmp leftovers (data/.tmp*, data/<key>/.tmp*, _versions/.tmp*) and orphans go only when
    unverified-old (older than 7 days) or with delete_unverified; staged manifests, unknown
    directories never; _blobs/ and _fri/ are Lance's alone (lancever never touches them)."""
    for age, unverified in [(8, False), (0, False), (0, True)]:
        src = str(tmp_path / f"src{age}{unverified}.lance")
        leftovers_dataset(src, age)
        sub = tmp_path / f"twins{age}{unverified}"
        sub.mkdir()
        _, _, gone_a, gone_b = compare(src, sub, retain_versions=1, delete_unverified=unverified)
        ours = sorted(p for p in gone_b if p in LEFTOVERS)
        theirs = sorted(p for p in gone_a if p in LEFTOVERS)
        if age == 0 and not unverified:
            assert theirs == ours == []
        else:
            assert theirs == sorted(p for p in LEFTOVERS if not p.startswith(("junk/", "_versions/1")))
            assert ours == sorted(p for p in theirs if not p.startswith(NEVER))


LATE = ["_indices/22222222-2222-2222-2222-222222222222/y.idx", "data/late.lance", "data/.tmp_late",
        "data/late/00000000000000000000000000000001.blob", "_deletions/9-9-9.arrow", "_transactions/8-y.txn",
        "_versions/.tmp_late"]


def test_listing_cutoffs(tmp_path):
    """Files newer than the earliest kept manifest: with delete_unverified, _deletions/,
    _transactions/ and _versions/ keep them in both (the earliest kept manifest's time); data/
    (sidecars, .tmp too) and _indices/ lose them in Lance 14 only: lancever keeps their cutoff
    then (docs/operations.md: a concurrent writer's files); without delete_unverified every one stays."""
    for unverified in (True, False):
        src = str(tmp_path / f"src{unverified}.lance")
        lance.write_dataset(table(), src)
        lance.write_dataset(table(start=20), src, mode="overwrite")
        time.sleep(0.05)
        for p in LATE:
            f = os.path.join(src, p)
            os.makedirs(os.path.dirname(f), exist_ok=True)
            with open(f, "wb") as fh:
                fh.write(b"late")
        sub = tmp_path / f"twins{unverified}"
        sub.mkdir()
        _, _, gone_a, gone_b = compare(src, sub, also_theirs=LATE[:4] if unverified else (),
                                       retain_versions=1, delete_unverified=unverified)
        assert {p for p in gone_a if p in LATE} == (set(LATE[:4]) if unverified else set())
        assert {p for p in gone_b if p in LATE} == set()


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def age_manifest(path, days):
    """Moves a manifest's commit time `days` back (its Timestamp.seconds varint, same length)."""
    with open(path, "rb") as f:
        d = f.read()
    now = int(time.time())
    for sec in range(now + 1, now - 30, -1):
        i = d.find(b"\x08" + varint(sec))
        if i >= 0:
            new = varint(sec - int(days * DAY))
            assert len(new) == len(varint(sec))
            with open(path, "wb") as f:
                f.write(d[:i + 1] + new + d[i + 1 + len(new):])
            return
    raise AssertionError(f"no commit time found in {path}")


def test_data_cutoff_is_a_week_when_history_is_older(tmp_path):
    """Kept manifests older than 7 days: data/'s cutoff is now - 7 days, so an orphan data file
    (and a .tmp) 8 days old but newer than the earliest kept manifest goes, while a deletion
    file of the same age stays (its cutoff is the earliest kept manifest), in both."""
    src = str(tmp_path / "src.lance")
    for i in range(3):
        lance.write_dataset(table(start=20 * i), src, mode="overwrite" if i else "create")
    names = sorted(os.listdir(os.path.join(src, "_versions")))  # V2 names: newest first
    age_manifest(os.path.join(src, "_versions", names[2]), 10)
    age_manifest(os.path.join(src, "_versions", names[1]), 9)
    assert [v["timestamp"].date() for v in lance.dataset(src).versions()][1] == \
        (datetime.datetime.now() - datetime.timedelta(days=9)).date()
    t = time.time() - 8 * DAY
    aged = ["data/orphan8.lance", "data/.tmp_8", "_deletions/7-7-7.arrow"]
    for p in aged:
        f = os.path.join(src, p)
        os.makedirs(os.path.dirname(f), exist_ok=True)
        with open(f, "wb") as fh:
            fh.write(b"x")
        os.utime(f, (t, t))
    theirs, _, gone_a, gone_b = compare(src, tmp_path, retain_versions=2)
    assert {p for p in gone_a if p in aged} == {"data/orphan8.lance", "data/.tmp_8"}
    assert theirs.old_versions == 1


def test_tag_sparse_drops_cutoff(tmp_path):
    """A tag on an old version makes the kept set sparse: the cutoff is dropped, so files the
    removed versions made after the tagged one go too (Lance's #8705 rule), in both."""
    src = str(tmp_path / "src.lance")
    ds = lance.write_dataset(table(), src)
    ds.tags.create("keep1", 1)
    for i in range(3):
        ds = lance.write_dataset(table(start=20 * (i + 1)), src, mode="overwrite")
    theirs, ours, gone_a, _ = compare(src, tmp_path, retain_versions=1,
                                      error_if_tagged_old_versions=False)
    assert theirs.old_versions == 2 and theirs.data_files_removed == 2


def test_tags_protect_only_their_branch(tmp_path):
    """A tag on branch feat's version 4 does not keep main's version 4 (Lance keeps only tags of
    the branch being cleaned), and tagged-version errors count only those: both agree."""
    src = str(tmp_path / "src.lance")
    ds = lance.write_dataset(table(), src)
    ds = lance.write_dataset(table(start=20), src, mode="append")
    ds = lance.write_dataset(table(start=40), src, mode="append")
    ds.create_branch("feat", 3).insert(table(start=60))
    br = lance.dataset(src).checkout_version(("feat", None))
    assert br.version == 4
    br.tags.create("feat4", ("feat", 4))
    for i in range(2):
        lance.write_dataset(table(start=80 + 20 * i), src, mode="append")
    # main 1..5: 1, 2 and 4 go (3 is feat's base, 5 the latest), the tag on feat's 4 keeps
    # nothing of main's and raises no tagged-version error
    base = [p for p in files(src) if p.startswith("_transactions/2-")] + \
        ["_versions/%020d.manifest" % (2**64 - 1 - 3)]
    # Lance 14 also removes main's 3, feat's base (its files stay: feat references them);
    # lancever keeps every branch base (docs/operations.md, Cleanup)
    theirs, ours, _, _ = compare(src, tmp_path, also_theirs=base, retain_versions=1)
    assert theirs.old_versions == 4 and ours["versions_removed"] == 3
    for root in ("A.lance", "B.lance"):
        feat = lance.dataset(str(tmp_path / root)).checkout_version(("feat", None))
        assert feat.count_rows() == 80


def hint(root):
    with open(os.path.join(root, "_versions", "latest_version_hint.json")) as f:
        return json.load(f)


def test_version_hint(tmp_path):
    """pylance 14 writes _versions/latest_version_hint.json {"version": N} on a local file system.
    A hint that lags (a writer that crashed after its commit) is a floor for lancever: cleanup
    and expire remove no manifest at or above it; pylance 14's own cleanup does (docs/operations.md)."""
    src = str(tmp_path / "src.lance")
    lance.write_dataset(table(), src)
    for i in range(9):
        lance.write_dataset(table(start=20 * (i + 1)), src, mode="append")
    with open(os.path.join(src, "_versions", "latest_version_hint.json")) as f:
        raw = f.read()
    assert json.loads(raw) == {"version": 10} and raw == '{"version":10}'
    with open(os.path.join(src, "_versions", "latest_version_hint.json"), "w") as f:
        f.write('{"version":5}')
    a, b = twins(src, tmp_path)
    lance.dataset(a).cleanup_old_versions(retain_versions=1)
    assert [v["version"] for v in lance.dataset(a).versions()] == [10]  # Lance ignores the floor
    ours = lv_json("cleanup", b, "--retain-versions", "1")
    assert ours["versions_removed"] == 4
    assert [v["version"] for v in lance.dataset(b).versions()] == [5, 6, 7, 8, 9, 10]
    assert lance.dataset(b).version == 10 and hint(b) == {"version": 5}
    assert all(lance.dataset(b, version=v).count_rows() == 20 * v for v in range(5, 11))
    # expire keeps the same floor
    c = str(tmp_path / "C.lance")
    shutil.copytree(src, c)
    ex = lv_json("expire", c, "--retain-versions", "1")
    assert ex["versions_removed"] == 4
    assert [v["version"] for v in lance.dataset(c).versions()] == [5, 6, 7, 8, 9, 10]
    # a hint that does not parse stops both before anything changes
    with open(os.path.join(c, "_versions", "latest_version_hint.json"), "w") as f:
        f.write("{\"version\": \"x\"}")
    before = files(c)
    cps = sorted(os.listdir(os.path.join(c, "_checkpoints")))
    for cmd in ("cleanup", "expire"):
        r = lv(cmd, c, "--retain-versions", "1", check=False)
        assert r.returncode == 1 and "version hint" in r.stderr, r.stderr
    assert files(c) == before and sorted(os.listdir(os.path.join(c, "_checkpoints"))) == cps


def test_auto_cleanup_interval_zero(tmp_path):
    """lance.auto_cleanup.interval = 0: pylance 14 cleans on every commit, as with 1."""
    counts = {}
    for iv in ("0", "1", "1000"):
        uri = str(tmp_path / f"i{iv}.lance")
        ds = lance.write_dataset(table(), uri)
        ds.update_config({"lance.auto_cleanup.interval": iv, "lance.auto_cleanup.older_than": "0s",
                          "lance.auto_cleanup.retain_versions": "1"})
        for i in range(4):
            lance.write_dataset(table(start=20 * i), uri, mode="append")
        counts[iv] = len(lance.dataset(uri).versions())
    assert counts["0"] == counts["1"] == 2 and counts["1000"] == 6
    info = lv_json("info", str(tmp_path / "i0.lance"))
    assert info["auto_cleanup"]["interval"] == "0"
