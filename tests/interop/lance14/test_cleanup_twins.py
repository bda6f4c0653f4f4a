"""Twin cleanups through pylance 14.0.2 (issue 25 section 3): the same Lance 14 dataset cleaned
by pylance (`cleanup_old_versions`) and by `lancever cleanup`, over a generated matrix of
policies (older_than, retain_versions, versions=[...], delete_unverified,
error_if_tagged_old_versions, delete_rate_limit) on a few dataset shapes with tags, branches,
deletions, indices, compaction, V1 manifest names, blob sidecars and litter of every age.

For each (policy, shape) the dataset is restored at the path it was built at (a branch names its
parent by absolute path, so a copy elsewhere would point at the original), then
  1. `explain_cleanup_old_versions(include_files=True)` equals `lancever cleanup --explain --json`
     field for field (candidate paths made relative to the dataset root);
  2. pylance cleans it: its CleanupStats, or its error;
  3. restored again, lancever cleans it: `cleanup --json` mapped to CleanupStats, or its exit
     status and message;
  4. both succeed or both refuse (same tag list), and the remaining files are the same
     (_checkpoints/ aside).
History times are synthetic (timeline.py): versions from 30 days to 1 hour old, litter from
10 days and 83 minutes, so the 7-day rules and the listing cutoffs are all reached.
Known differences, asserted as such (docs/operations.md "Cleanup"), each the safe side (lancever keeps a file
Lance deletes; a file only lancever deletes fails the test):
  - the transaction file of a version a branch was created from: Lance deletes it (it keeps the
    manifest and data), lancever keeps it;
  - unreferenced data/ and _indices/ files newer than the earliest kept manifest: Lance 14 lists
    data/ up to max(earliest kept, now - 7 days) (up to now with delete_unverified) and
    _indices/ without a cutoff; lancever stops at the earliest kept manifest;
  - blob v2 sidecars data/<key>/<id>.blob: Lance removes them with data/<key>.lance, lancever
    keeps them;
  - when the policy selects a branch base (which both keep), Lance 14 takes the kept versions
    as not a suffix of history and lists every directory without a cutoff; lancever does so
    only when what it removes leaves a gap.
The matched CleanupStats and explanation are compared after accounting for exactly those files.
"""
import collections
import datetime
import json
import os
import random
import re
import shutil
import subprocess

import lance
import pyarrow as pa
import pytest

from conftest import LANCEVER
from timeline import Timeline, walk

H, D = 3600, 86400
YOUNG = 5000  # young litter's age: between the 1-hour and 2-hour commits, equal to none
TAGGED = re.compile(r"(\d+) tagged version\(s\) have been marked for cleanup")
EXCLUDE = ("_checkpoints/",)


def rows(a, n):
    return pa.table({"id": list(range(a, a + n)), "val": [i * 1.5 for i in range(a, a + n)],
                     "name": [f"r{i}" for i in range(a, a + n)]})


def litter(root, now):
    """Unreferenced files of Lance's kinds, old (10 days) and young (YOUNG seconds)."""
    made = []
    for rel, age in [("data/orphan-old.lance", 10 * D), ("data/orphan-young.lance", YOUNG),
                     ("_indices/00000000-0000-4000-8000-00000000aaaa/index.idx", 10 * D),
                     ("_indices/00000000-0000-4000-8000-00000000bbbb/index.idx", YOUNG),
                     ("_transactions/99-orphan-old.txn", 10 * D),
                     ("_transactions/98-orphan-young.txn", YOUNG),
                     ("_deletions/77-1-123.arrow", 10 * D),
                     ("_versions/.tmp_orphan_old", 10 * D),
                     ("_versions/.tmp_orphan_young", YOUNG)]:
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(b"litter " * (len(rel) + 3))
        os.utime(p, (now - age, now - age))
        made.append(rel)
    return made


def build_linear(uri, v1_names=False, fmt=None, stable=False):
    """v1..v9: append, delete, index, update, compaction, index replace; tags old/mid/new."""
    kw = dict(data_storage_version=fmt, enable_v2_manifest_paths=not v1_names,
              enable_stable_row_ids=stable)
    tl = Timeline(uri)
    ds = lance.write_dataset(rows(0, 5), uri, **{k: v for k, v in kw.items() if v is not None})
    tl.mark("v1")
    for k in (1, 2):
        ds = lance.write_dataset(rows(k * 10, 5), uri, mode="append")
        tl.mark(f"v{k + 1}")
    ds.delete("id < 3")
    tl.mark("v4 delete")
    ds.create_scalar_index("id", "BTREE")
    tl.mark("v5 index")
    ds.update({"val": "val * 2"}, where="id > 15")
    tl.mark("v6 update")
    ds.optimize.compact_files()
    tl.mark("v7 compact")
    ds = lance.dataset(uri)
    ds.create_scalar_index("id", "BTREE", replace=True)
    tl.mark("v8 index again")
    ds = lance.write_dataset(rows(100, 3), uri, mode="append")
    tl.mark("v9")
    ds.tags.create("old", 2)
    ds.tags.create("mid", 5)
    ds.tags.create("new", 8)
    return tl, [30 * D, 25 * D, 20 * D, 12 * D, 9 * D, 5 * D, 3 * D, 1 * D, 1 * H]


def build_branched(uri):
    """main v1..v6 (v4 overwrite); branch feat from v3 with two commits and a tag; exp from v5."""
    tl = Timeline(uri)
    ds = lance.write_dataset(rows(0, 5), uri)
    tl.mark("v1")
    for k in (1, 2):
        ds = lance.write_dataset(rows(k * 10, 5), uri, mode="append")
        tl.mark(f"v{k + 1}")
    feat = ds.create_branch("feat", 3)
    tl.mark("feat base")
    feat = lance.write_dataset(rows(500, 2), feat.uri, mode="append")
    tl.mark("feat +1")
    feat.delete("id = 500")
    tl.mark("feat +2")
    feat.tags.create("featTag", ("feat", feat.version))
    ds = lance.write_dataset(rows(40, 4), uri, mode="overwrite")
    tl.mark("v4 overwrite")
    ds.delete("id = 41")
    tl.mark("v5 delete")
    ds.create_branch("exp", 5)
    tl.mark("exp base")
    ds = lance.write_dataset(rows(60, 2), uri, mode="append")
    tl.mark("v6")
    ds.tags.create("keep", 2)
    return tl, [30 * D, 20 * D, 12 * D, 11 * D, 10 * D, 9 * D, 6 * D, 4 * D, 3 * D, 2 * H]


def blobs(a, sizes):
    """A blob column (Lance 14 blob v2): small values inline, the others in sidecar files
    data/<key>/<id>.blob next to their data file."""
    from lance.blob import blob_array, blob_field
    schema = pa.schema([pa.field("id", pa.int64()),
                        blob_field("b", inline_size_threshold=64, dedicated_size_threshold=4096)])
    return pa.table({"id": list(range(a, a + len(sizes))),
                     "b": blob_array([bytes([i % 251]) * s for i, s in enumerate(sizes)])},
                    schema=schema)


def build_blobs(uri):
    """v1..v6 with blob sidecars: append, delete, overwrite, append, compaction; tag on v2."""
    tl = Timeline(uri)
    ds = lance.write_dataset(blobs(0, [10, 1000, 10000]), uri)
    tl.mark("v1")
    ds = lance.write_dataset(blobs(10, [2000, 20000]), uri, mode="append")
    tl.mark("v2")
    ds.delete("id = 1")
    tl.mark("v3 delete")
    ds = lance.write_dataset(blobs(20, [3000, 30000]), uri, mode="overwrite")
    tl.mark("v4 overwrite")
    ds = lance.write_dataset(blobs(30, [50, 5000]), uri, mode="append")
    tl.mark("v5")
    ds.optimize.compact_files()
    tl.mark("v6 compact")
    ds.tags.create("two", 2)
    return tl, [30 * D, 20 * D, 12 * D, 6 * D, 3 * D, 2 * H]


SHAPES = {
    # name: (builder, kwargs, tags kept)
    "tags": (build_linear, {}, ["old", "mid", "new"]),
    "tag-new-only": (build_linear, {}, ["new"]),
    "v1-names-2.0-stable": (build_linear, {"v1_names": True, "fmt": "2.0", "stable": True}, []),
    "branches": (build_branched, {}, None),
    "fmt-2.1-mid-tag": (build_linear, {"fmt": "2.1"}, ["mid"]),
    "blob-sidecars": (build_blobs, {}, []),
}
POLICIES_PER_SHAPE = 42


def policies(rng, latest):
    """A seeded sample of pylance cleanup_old_versions keyword sets."""
    older = [None, None, 2 * H, 2 * D, 4 * D, 8 * D, 15 * D, 40 * D, 0]
    retain = [None, None, None, 1, 2, 3, 5, 100]
    vers = [None, None, None, [2], [1, 2, 3], [4, 6, 7], list(range(1, latest + 1)), [latest], [99, 3]]
    out = []
    for i in range(POLICIES_PER_SHAPE):
        p = {"older_than": rng.choice(older), "retain_versions": rng.choice(retain),
             "versions": rng.choice(vers), "delete_unverified": rng.random() < 0.5,
             "error_if_tagged_old_versions": rng.random() < 0.5,
             "delete_rate_limit": rng.choice([None, None, 10000])}
        # one in four cleaned through the Python package instead of the CLI (pylance's keywords,
        # delete_rate_limit included, since issue 27)
        p["door"] = "python" if i % 4 == 1 else "cli"
        out.append(p)
    out.append({"older_than": None, "retain_versions": None, "versions": None,
                "delete_unverified": False, "error_if_tagged_old_versions": True,
                "delete_rate_limit": None, "door": "cli"})  # pylance's default: 14 days
    return out


def pylance_kwargs(p):
    kw = {k: v for k, v in p.items() if v is not None and k not in ("older_than", "door")}
    if p["older_than"] is not None:
        kw["older_than"] = datetime.timedelta(seconds=p["older_than"])
    return kw


def lancever_flags(p):
    f = []
    if p["older_than"] is not None:
        f += ["--older-than", f"{p['older_than']}s"]
    elif p["retain_versions"] is None and p["versions"] is None:
        f += ["--older-than", "14d"]  # pylance's default when no condition is given
    if p["retain_versions"] is not None:
        f += ["--retain-versions", str(p["retain_versions"])]
    if p["versions"] is not None:
        f += ["--versions", ",".join(map(str, p["versions"]))]
    if p["delete_unverified"]:
        f.append("--delete-unverified")
    if not p["error_if_tagged_old_versions"]:
        f.append("--no-error-if-tagged-old-versions")
    if p["delete_rate_limit"] is not None:
        f += ["--delete-rate-limit", str(p["delete_rate_limit"])]
    return f


STAT_FIELDS = ["bytes_removed", "old_versions", "data_files_removed", "transaction_files_removed",
               "index_files_removed", "deletion_files_removed", "failed_deletes"]


def stats_of(s):
    return {k: getattr(s, k) for k in STAT_FIELDS}


def lv_stats(j):
    k = j["by_kind"]
    return {"bytes_removed": j["bytes_removed"], "old_versions": j["versions_removed"],
            "data_files_removed": k["data"]["files"],
            "transaction_files_removed": k["transaction"]["files"],
            "index_files_removed": k["index"]["files"],
            "deletion_files_removed": k["deletion"]["files"],
            "failed_deletes": j.get("failed_deletes", 0)}


def explanation_of(e, root):
    prefix = root.strip("/") + "/"
    def rel(p):
        return p[len(prefix):] if p.startswith(prefix) else p
    return {"read_version": e.read_version, "stats": stats_of(e.stats),
            "candidate_files": sorted((rel(c.path), c.kind, c.unverified, c.size_bytes)
                                      for c in e.candidate_files),
            "candidate_files_truncated": e.candidate_files_truncated,
            "candidate_file_limit": e.candidate_file_limit,
            "referenced_branches": sorted((b.name, b.referenced_version, b.cleanup_candidate)
                                          for b in e.referenced_branches),
            "warnings": list(e.warnings)}


def lv_explanation(j):
    stats = dict(j["stats"])
    # lancever adds its one name of Lance's old_versions beside it (issue 29): the same count
    assert stats.pop("versions_removed") == stats["old_versions"], j["stats"]
    return {"read_version": j["read_version"], "stats": stats,
            "candidate_files": sorted((c["path"], c["kind"], c["unverified"], c["size_bytes"])
                                      for c in j["candidate_files"]),
            "candidate_files_truncated": j["candidate_files_truncated"],
            "candidate_file_limit": j["candidate_file_limit"],
            "referenced_branches": sorted((b["name"], b["referenced_version"], b["cleanup_candidate"])
                                          for b in j["referenced_branches"]),
            "warnings": [w for w in j["warnings"] if not w.startswith(LV_ONLY_WARNINGS)]}


# lancever warns where Lance is silent (docs/operations.md "Cleanup": a listed version not removed).
LV_ONLY_WARNINGS = ("version ", "--versions")


def tag_map(message):
    """The {"tag": version, ...} both peers end a tagged-version refusal with."""
    return json.loads(re.search(r"(\{[^{}]*\})", message).group(1))


def run_python_package(root, kw):
    """lancever's Python package, shaped like run_lv's CompletedProcess (stdout: cleanup --json)."""
    import lancever
    try:
        with lancever.Dataset(root) as d:
            st = d.cleanup_old_versions(**kw)
    except lancever.TaggedVersionsError as e:
        return subprocess.CompletedProcess([], 1, "", str(e))
    j = {"bytes_removed": st.bytes_removed, "versions_removed": st.old_versions,
         "failed_deletes": st.failed_deletes,
         "by_kind": {k: {"files": getattr(st, f"{k}_files_removed")}
                     for k in ("data", "transaction", "index", "deletion")}}
    return subprocess.CompletedProcess([], 0, json.dumps(j), "")


def run_lv(root, flags):
    return subprocess.run([LANCEVER, "-q", "cleanup", root, *flags, "--json"],
                          capture_output=True, text=True)


def restore(pristine, root):
    shutil.rmtree(root)
    shutil.copytree(pristine, root, symlinks=True)


class Restorer:
    """Puts root back as pristine, touching only what changed (a cleanup only removes files
    and lancever adds _checkpoints/): extra files go, missing or changed (size, mtime) ones
    are copied back with their mtimes.  A few ms instead of a whole copy."""

    def __init__(self, pristine, root):
        self.pristine, self.root = pristine, root
        self.files = {rel: os.stat(os.path.join(pristine, rel)) for rel in walk(pristine)}

    def __call__(self, *_):
        shutil.rmtree(os.path.join(self.root, "_checkpoints"), ignore_errors=True)
        now = walk(self.root)
        for rel in now - self.files.keys():
            os.remove(os.path.join(self.root, rel))
        for rel, st in self.files.items():
            dst = os.path.join(self.root, rel)
            if rel in now:
                cur = os.stat(dst)
                if (cur.st_size, cur.st_mtime_ns) == (st.st_size, st.st_mtime_ns):
                    continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(self.pristine, rel), dst)


KIND_STAT = {"data/": "data_files_removed", "_indices/": "index_files_removed",
             "_transactions/": "transaction_files_removed", "_deletions/": "deletion_files_removed"}


class Known:
    """The differences lancever keeps on purpose (docs/operations.md "Cleanup"), each the safe side: a file
    only pylance deletes is named by one of these; one only lancever deletes is a failure."""

    def __init__(self, root, litter_files):
        self.size = {}
        self.base_txn = set()
        self.litter = set(litter_files)
        refs = os.path.join(root, "_refs", "branches")
        for f in os.listdir(refs) if os.path.isdir(refs) else []:
            b = json.load(open(os.path.join(refs, f)))
            v = b["parentVersion"]
            show = json.loads(subprocess.run([LANCEVER, "-q", "show", root, str(v), "--json"],
                                             capture_output=True, text=True, check=True).stdout)
            if show.get("transaction_file"):
                self.base_txn.add("_transactions/" + show["transaction_file"])
        for rel in walk(root, EXCLUDE):
            self.size[rel] = os.path.getsize(os.path.join(root, rel))

    def category(self, path, left):
        """Why only Lance removed path (None: no known reason); left: what lancever left."""
        if path in self.base_txn:
            return "branch-base transaction file (Lance deletes it, lancever keeps it)"
        if path in self.litter and path.startswith(("data/", "_indices/")):
            # Lance 14 lists data/ up to max(earliest kept manifest, now - 7 days) (to now with
            # delete_unverified) and _indices/ with no cutoff; lancever stops data/ and
            # _indices/ at the earliest kept manifest, as it does the other directories.
            return "unreferenced data/ or _indices/ file newer than the earliest kept manifest"
        if path.startswith("data/") and path.endswith(".blob") and \
                path.rsplit("/", 1)[0] + ".lance" not in left:
            # blob v2 sidecars data/<key>/<id>.blob: Lance removes them with their data file
            # data/<key>.lance; lancever does not know them yet and keeps them
            return "blob sidecar of a removed data file"
        if path in self.litter and self.base_txn:
            # Lance 14 counts a branch base the policy selects (and then keeps) as removed when
            # it decides whether the kept versions are a suffix of history, and so lists every
            # directory without a cutoff; lancever counts what it removes
            return "unreferenced file newer than the earliest kept manifest, a branch base selected"
        return None

    def adjust(self, stats, only_lance):
        s = dict(stats)
        for p in only_lance:
            s["bytes_removed"] += self.size[p]
            for prefix, k in KIND_STAT.items():
                if p.startswith(prefix):
                    s[k] += 1
        return s


def twin(root, restore, p, known, tally):
    label = f"{os.path.basename(os.path.dirname(root))} {p}"
    before = walk(root, EXCLUDE)
    kw, flags = pylance_kwargs(p), lancever_flags(p)
    # 1. explain, both on the untouched dataset
    ds = lance.dataset(root)
    try:
        theirs_x = explanation_of(ds.explain_cleanup_old_versions(include_files=True, **kw), root)
        theirs_x_err = None
    except Exception as e:  # noqa: BLE001 - the peer's refusal is the answer
        theirs_x, theirs_x_err = None, str(e)
    rx = run_lv(root, flags + ["--explain"])
    # 2. pylance cleans
    try:
        theirs = stats_of(ds.cleanup_old_versions(**kw))
        theirs_err = None
    except Exception as e:  # noqa: BLE001
        theirs, theirs_err = None, str(e)
    left_a = walk(root, EXCLUDE)
    # 3. lancever cleans the same dataset, restored
    restore()
    r = run_python_package(root, kw) if p["door"] == "python" else run_lv(root, flags)
    left_b = walk(root, EXCLUDE)
    tally["cleaned through lancever's " + p["door"]] += 1

    assert (theirs_err is None) == (theirs_x_err is None), f"{label}: pylance explain vs cleanup"
    if theirs_err is not None:
        tally["refused alike"] += 1
        m = TAGGED.search(theirs_err)
        assert m, f"{label}: pylance failed otherwise: {theirs_err}"
        assert r.returncode != 0 and rx.returncode != 0, f"{label}: lancever did not refuse: {r.stdout}"
        for text in (r.stderr, rx.stderr):
            ours = TAGGED.search(text)
            assert ours and ours.group(1) == m.group(1), f"{label}: {text!r} vs {theirs_err!r}"
            assert tag_map(text) == tag_map(theirs_err) == tag_map(theirs_x_err), label
        assert left_a == before and left_b == before, f"{label}: a refusal deleted files"
        return
    assert r.returncode == 0 and rx.returncode == 0, f"{label}: lancever failed: {r.stderr}{rx.stderr}"
    ours = lv_stats(json.loads(r.stdout))
    ours_x = lv_explanation(json.loads(rx.stdout))
    only_a, only_b = sorted(left_b - left_a), sorted(left_a - left_b)
    assert not only_b, f"{label}: only lancever deleted {only_b}"
    unknown = [x for x in only_a if known.category(x, left_b) is None]
    assert not unknown, f"{label}: only pylance deleted {unknown}"
    if only_a:
        for x in only_a:
            tally["known: " + known.category(x, left_b)] += 1
        if os.environ.get("L14TWIN_DUMP"):
            with open(os.environ["L14TWIN_DUMP"], "a") as f:
                f.write(json.dumps({"label": label, "only_pylance": only_a,
                                    "litter_gone_both": sorted((before - left_a) & known.litter),
                                    "kept_manifests": sorted(x for x in left_a if x.startswith("_versions/") and x.endswith(".manifest")),
                                    "removed_versions": theirs["old_versions"]}) + "\n")
        ours = known.adjust(ours, only_a)
        ours_x["stats"] = known.adjust(ours_x["stats"], only_a)
        theirs_x["candidate_files"] = [c for c in theirs_x["candidate_files"] if c[0] not in only_a]
    assert ours == theirs, f"{label}: stats differ: lancever {ours} pylance {theirs}"
    for k in theirs_x:
        assert ours_x[k] == theirs_x[k], f"{label}: explain {k}: lancever {ours_x[k]} pylance {theirs_x[k]}"
    tally["same" if not only_a else "same but known"] += 1
    if not only_a and len(theirs_x["candidate_files"]) > 2:
        truncated(root, restore, kw, flags, label, tally)


def truncated(root, restore, kw, flags, label, tally):
    """max_files / --max-candidates 2: the same truncation flag, limit, count and warnings."""
    restore()
    e = explanation_of(lance.dataset(root).explain_cleanup_old_versions(
        include_files=True, max_files=2, **kw), root)
    r = run_lv(root, flags + ["--explain", "--max-candidates", "2"])
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    o = lv_explanation(j)
    assert (o["candidate_files_truncated"], o["candidate_file_limit"], len(o["candidate_files"])) \
        == (e["candidate_files_truncated"], e["candidate_file_limit"], len(e["candidate_files"])) \
        == (True, 2, 2), label
    assert o["stats"] == e["stats"] and o["warnings"] == e["warnings"], \
        f"{label}: truncated explain: lancever {o['warnings']} pylance {e['warnings']}"
    tally["explain truncated alike"] += 1


@pytest.mark.parametrize("shape", list(SHAPES))
def test_twin_matrix(tmp_path, shape):
    build, kw, keep_tags = SHAPES[shape]
    root = str(tmp_path / "w" / "ds.lance")
    tl, ages = build(root, **kw)
    now = __import__("time").time()
    tl.age(ages, now)
    made = litter(root, now)
    if keep_tags is not None:
        for t in os.listdir(os.path.join(root, "_refs", "tags")):
            if t[:-5] not in keep_tags:
                os.remove(os.path.join(root, "_refs", "tags", t))
    pristine = str(tmp_path / "pristine")
    shutil.copytree(root, pristine, symlinks=True)
    known = Known(root, made)
    latest = lance.dataset(root).latest_version
    tally = collections.Counter()
    rng = random.Random(f"l14twin-{shape}")
    pols = policies(rng, latest)
    fast = Restorer(pristine, root)
    for p in pols:
        fast()
        assert walk(root) == walk(pristine)
        twin(root, fast, p, known, tally)
    print(f"{shape}: {len(pols)} policies: {tally}")
    assert len(pols) == tally["same"] + tally["same but known"] + tally["refused alike"]


# ---- clean_referenced_branches: pylance reaches it only through its automatic cleanup ----
# pylance 14's cleanup_old_versions has no clean_referenced_branches argument: Lance cascades
# only in the cleanup that runs after a commit when the dataset's lance.auto_cleanup.* keys say
# so (interval due, older_than / retain_versions, referenced_branch = true).  So copy A gets
# the commit that sets those keys on main (pylance then cleans: each referenced branch by its
# own keys first, then main); copy B gets the same keys with an interval that is not due, and
# `lancever cleanup --clean-referenced-branches` with main's policy.  The files both copies had
# before the commit must be left alike.
CASCADE_CHILD = {
    # variant: (feat's keys, exp's keys)
    "feat 5 days, exp retain 1": ({"interval": "1", "older_than": "5days"},
                                  {"interval": "1", "retain_versions": "1"}),
    "feat due every 2, exp none": ({"interval": "2", "older_than": "1days"}, None),
    "feat not due, exp interval 0": ({"interval": "4", "older_than": "1days"},
                                     {"interval": "0", "older_than": "1days"}),
    "feat without interval": ({"older_than": "1days"}, {"retain_versions": "1"}),
}
CASCADE_MAIN = [("3days", True), ("15days", True), ("3days", False), ("1days", False)]


def build_cascade(root, child):
    tl, ages = build_branched(root)
    for name, keys in zip(("feat", "exp"), child):
        if keys:
            lance.dataset(f"{root}/tree/{name}").update_config(
                {f"lance.auto_cleanup.{k}": v for k, v in keys.items()})
        tl.mark(f"{name} config")
        ages.append(ages[-1] - 60)
    return tl, ages


def test_twin_clean_referenced_branches(tmp_path):
    root = str(tmp_path / "w" / "ds.lance")
    tally = collections.Counter()
    for variant, child in CASCADE_CHILD.items():
        if os.path.exists(root):
            shutil.rmtree(os.path.dirname(root))
        tl, ages = build_cascade(root, child)
        tl.age(ages)
        pristine = str(tmp_path / "pristine")
        shutil.rmtree(pristine, ignore_errors=True)
        shutil.copytree(root, pristine, symlinks=True)
        known = Known(root, [])
        for older, with_tag in CASCADE_MAIN:
            label = f"{variant}; main older_than {older}{' tag on v2' if with_tag else ''}"
            keys = {"lance.auto_cleanup.interval": "1", "lance.auto_cleanup.older_than": older,
                    "lance.auto_cleanup.referenced_branch": "true"}
            restore(pristine, root)
            if not with_tag:
                os.remove(os.path.join(root, "_refs", "tags", "keep.json"))
            before = walk(root, EXCLUDE)
            lance.dataset(root).update_config(keys)
            left_a = walk(root, EXCLUDE) & before
            restore(pristine, root)
            if not with_tag:
                os.remove(os.path.join(root, "_refs", "tags", "keep.json"))
            lance.dataset(root).update_config(dict(keys, **{"lance.auto_cleanup.interval": "1000003"}))
            assert walk(root, EXCLUDE) >= before, f"{label}: the not-due commit cleaned"
            r = run_lv(root, ["--older-than", older.replace("days", "d"), "--clean-referenced-branches"])
            left_b = walk(root, EXCLUDE) & before
            only_a, only_b = sorted(left_b - left_a), sorted(left_a - left_b)
            if with_tag and r.returncode != 0:
                # Lance cleans the branches, then refuses main for the tag (a warning after
                # its commit); lancever refuses before changing anything: it keeps more.
                assert TAGGED.search(r.stderr), f"{label}: {r.stderr}"
                assert left_b == before and all(p.startswith("tree/") for p in left_b - left_a), label
                tally["refused (Lance cleans the branches first, lancever nothing)"] += 1
                continue
            assert r.returncode == 0, f"{label}: {r.stderr}"
            assert not only_b, f"{label}: only lancever deleted {only_b}"
            unknown = [x for x in only_a if known.category(x, left_b) is None]
            assert not unknown, f"{label}: only pylance deleted {unknown}"
            tally["same" if not only_a else "same but known"] += 1
            if os.environ.get("L14TWIN_DUMP"):
                with open(os.environ["L14TWIN_DUMP"], "a") as f:
                    f.write(json.dumps({"label": label, "gone_a": sorted(before - left_a),
                                        "only_a": only_a}) + "\n")
    print(f"clean_referenced_branches: {len(CASCADE_CHILD) * len(CASCADE_MAIN)} scenarios: {dict(tally)}")


def nocp(root):
    """Every file but checkpoints, the root's and the branches'."""
    return {p for p in walk(root) if not p.startswith("_checkpoints/") and "/_checkpoints/" not in p}


# ---- a branch cleaned on its own: pylance opens <root>/tree/feat, lancever --branch feat ----
def test_twin_branch_cleanup(tmp_path):
    root = str(tmp_path / "w" / "ds.lance")
    tl, ages = build_branched(root)
    feat = f"{root}/tree/feat"
    lance.write_dataset(rows(600, 2), feat, mode="append")  # feat: 3 (base), 4, 5 (tagged), 6
    tl.mark("feat +3")
    ages.append(ages[-1] - 60)
    now = __import__("time").time()
    tl.age(ages, now)
    pristine = str(tmp_path / "pristine")
    shutil.copytree(root, pristine, symlinks=True)
    fast = Restorer(pristine, root)
    known = Known(root, [])
    tally = collections.Counter()
    rng = random.Random("l14twin-branch")
    for p in policies(rng, 6)[:20]:
        fast()
        label = f"branch feat {p}"
        kw, flags = pylance_kwargs(p), lancever_flags(p)
        before = nocp(root)
        ds = lance.dataset(feat)
        try:
            theirs_x = explanation_of(ds.explain_cleanup_old_versions(include_files=True, **kw), feat)
            theirs = stats_of(ds.cleanup_old_versions(**kw))
            err = None
        except Exception as e:  # noqa: BLE001
            err = str(e)
        left_a = nocp(root)
        fast()
        rx = subprocess.run([LANCEVER, "-q", "--branch", "feat", "cleanup", root, *flags,
                             "--explain", "--json"], capture_output=True, text=True)
        r = subprocess.run([LANCEVER, "-q", "--branch", "feat", "cleanup", root, *flags, "--json"],
                           capture_output=True, text=True)
        left_b = nocp(root)
        if err is not None:
            assert TAGGED.search(err) and r.returncode != 0 and TAGGED.search(r.stderr), \
                f"{label}: {err} / {r.stderr}"
            assert tag_map(err) == tag_map(r.stderr) and left_a == left_b == before, label
            tally["refused alike"] += 1
            continue
        assert r.returncode == 0 and rx.returncode == 0, f"{label}: {r.stderr}{rx.stderr}"
        only_a, only_b = sorted(left_b - left_a), sorted(left_a - left_b)
        assert not only_b, f"{label}: only lancever deleted {only_b}"
        assert not only_a, f"{label}: only pylance deleted {only_a}"
        assert lv_stats(json.loads(r.stdout)) == theirs, f"{label}: {r.stdout} vs {theirs}"
        ours_x = lv_explanation(json.loads(rx.stdout))
        for k in theirs_x:
            assert ours_x[k] == theirs_x[k], f"{label}: explain {k}: lancever {ours_x[k]} pylance {theirs_x[k]}"
        tally["same"] += 1
    print(f"branch cleanup: 20 policies: {dict(tally)}")
