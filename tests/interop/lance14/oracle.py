"""pylance 14.0.2 as the oracle: compares lancever's answers for one dataset (main or a branch) with
pylance's own (issue 25 §1), the checks test_versions.mjs / test_operations.mjs make on the Lance 8
and 12 peers.

compare_versions(sc, branch) checks `versions`, `history`, `show V` against `ds.versions()`,
`ds.read_transaction(v)`, `lance.dataset(uri, version=v)` (rows, indices, config, file format) and
the files on disk; compare_asof(sc) checks `asof --strict` against `lance.dataset(uri, asof=...)`;
compare_refs(sc) checks `tags` against `ds.tags.list()` and `ds.branches.list()`.  Each returns the
number of comparisons it made and raises AssertionError naming the dataset, version and field.
"""
import datetime
import os
import re

import lance

from conftest import lv, lv_json

SUMMARY = ["total_fragments", "total_data_files", "total_files_size", "total_deletion_files",
           "total_data_file_rows", "total_deletion_file_rows", "total_rows"]
CP_FIELDS = ["version", "timestamp_millis", *SUMMARY, "is_tagged", "is_cleaned_up", "transaction_uuid",
             "read_version", "operation_type", "transaction_properties"]
FIELDS = [*CP_FIELDS, "manifest_path", "manifest_size", "writer_library", "writer_version", "data_format",
          "transaction_file", "branch", "num_indices", "reader_feature_flags", "writer_feature_flags", "config"]
U64_MAX = (1 << 64) - 1
TXN_RE = re.compile(r"^(\d+)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.txn$")
# pylance's Python classes for the operations it can decode; others come back as BaseOperation
# (ReserveFragments) or fail to decode (a Rewrite that rewrote an index: pylance 14.0.2's
# RewrittenIndex binding lacks three arguments), and the builder's record is the reference.
PYLANCE_NAMED = {"Overwrite", "Append", "Delete", "Update", "Merge", "Project", "CreateIndex", "Rewrite",
                 "Restore", "UpdateConfig", "Clone", "DataReplacement", "UpdateBases"}


def branch_args(branch):
    return ["--branch", branch] if branch else []


def branch_dir(sc, branch):
    return os.path.join(sc.uri, "tree", *branch.split("/")) if branch else sc.uri


def open_version(sc, branch, v=None):
    ds = lance.dataset(sc.uri)
    if branch is None:
        return ds if v is None else lance.dataset(sc.uri, version=v)
    return ds.checkout_version((branch, v))


def manifest_name(v, v2):
    return f"{U64_MAX - v:020d}.manifest" if v2 else f"{v}.manifest"


def local_dt(ms):
    """The naive local datetime pylance compares with, exactly ms milliseconds after the epoch."""
    return datetime.datetime.fromtimestamp(ms // 1000) + datetime.timedelta(milliseconds=ms % 1000)


def expected_flags(sc, branch, rec):
    """(reader, writer) flags as Lance recomputes them on every commit: 1 deletion files present,
    2 stable row ids, 16 base paths (every branch manifest has one); 8 (table config) is a writer
    flag only, set while the config is not empty."""
    r = (1 if rec["total_deletion_files"] else 0) | (2 if sc.stable_row_ids else 0) | (16 if branch else 0)
    return r, r | (8 if rec["config"] else 0)


def tagged_versions(sc, branch):
    tags = lance.dataset(sc.uri).tags.list()
    return {t["version"] for t in tags.values() if t["branch"] == branch}



FLAG_NAMES = ["deletion_files", "stable_row_ids", "use_v2_format_deprecated", "table_config",
              "base_paths", "disable_transaction_file", "unstable_data_overlay_files",
              "covered_index_metadata", "mixed_data_file_versions",
              "frag_reuse_with_stable_row_ids", "fragment_reuse_index",
              "semantic_types_or_managed_blobs"]


def flag_names(flags):
    """lancever show's names of the set bits (bit_N where no Lance release names one)."""
    return [FLAG_NAMES[b] if b < len(FLAG_NAMES) else f"bit_{b}" for b in range(64) if flags >> b & 1]


def compare_versions(sc, branch=None):
    """versions / history / show of one branch (None: main) against pylance; returns #checks."""
    L = f"{sc.name}{' branch ' + branch if branch else ''}"
    ds = open_version(sc, branch)
    theirs = sorted(ds.versions(), key=lambda x: x["version"])
    ours = lv_json(*branch_args(branch), "versions", sc.uri)
    n = 0
    assert [o["version"] for o in ours] == [t["version"] for t in theirs], f"{L}: version list"
    want_ops = sc.branches[branch].ops if branch else sc.ops
    assert [o["version"] for o in ours] == sorted(want_ops), f"{L}: versions vs what the builder committed"
    # the same dataset opened by its path under tree/
    if branch:
        assert lv_json("versions", branch_dir(sc, branch)) == ours, f"{L}: tree/ path differs from --branch"
    hist = lv_json(*branch_args(branch), "history", sc.uri)
    assert hist == ours, f"{L}: history differs from versions before any cleanup"
    tagged = tagged_versions(sc, branch)
    by_version = {o["version"]: o for o in ours}
    for o, t in zip(ours, theirs):
        v = o["version"]
        V = f"{L} v{v}"
        assert [k for k in FIELDS if k not in o] == [], f"{V}: missing fields"
        # summary: pylance's versions() entry (naive local datetime from the manifest's ns)
        got_ts = local_dt(o["timestamp_millis"])
        assert datetime.timedelta(0) <= t["timestamp"] - got_ts < datetime.timedelta(milliseconds=1), \
            f"{V}: timestamp {o['timestamp_millis']} ms vs pylance {t['timestamp']}"
        assert {k: str(o[k]) for k in SUMMARY} == t["metadata"], f"{V}: summary counters vs pylance"
        # the record is a superset of LanceDB's listVersions() (issue 29): its metadata is pylance's
        assert o["metadata"] == t["metadata"], f"{V}: metadata vs pylance's versions()"
        # show V is the same record
        show = lv_json(*branch_args(branch), "show", sc.uri, v)
        show.pop("warnings")
        # plus the names of the set feature flag bits (issue 25 section 2)
        assert show.pop("feature_flags") == {"reader": flag_names(o["reader_feature_flags"]),
                                             "writer": flag_names(o["writer_feature_flags"])}, \
            f"{V}: show's feature_flags"
        assert show == o, f"{V}: show differs from versions"
        # the operation: the builder's record, and pylance's decoding of the transaction
        assert o["operation_type"] == want_ops[v], f"{V}: operation_type"
        vds = open_version(sc, branch, v)
        try:
            txn = vds.read_transaction(v)
        except TypeError as e:          # pylance 14.0.2 cannot decode a Rewrite of an index
            assert o["operation_type"] == "Rewrite", f"{V}: pylance read_transaction: {e}"
            txn = None
        if txn is not None:
            pname = type(txn.operation).__name__
            if pname in PYLANCE_NAMED:
                assert o["operation_type"] == pname, f"{V}: operation_type vs pylance read_transaction"
            assert o["read_version"] == txn.read_version, f"{V}: read_version vs pylance"
            assert o["transaction_uuid"] == txn.uuid, f"{V}: transaction_uuid vs pylance"
            assert o["transaction_properties"] == dict(txn.transaction_properties or {}), \
                f"{V}: transaction_properties vs pylance"
        # the transaction file and the manifest on disk
        m = TXN_RE.match(o["transaction_file"] or "")
        assert m, f"{V}: transaction_file {o['transaction_file']!r}"
        bdir = branch_dir(sc, branch)
        assert os.path.exists(os.path.join(bdir, "_transactions", o["transaction_file"])), f"{V}: txn file missing"
        assert (o["transaction_uuid"], o["read_version"]) == (m[2], int(m[1])), f"{V}: txn name"
        mname = manifest_name(v, sc.v2_paths or branch is not None)
        assert o["manifest_path"] == "_versions/" + mname, f"{V}: manifest_path"
        assert o["manifest_size"] == os.path.getsize(os.path.join(bdir, "_versions", mname)), f"{V}: manifest_size"
        # the version as pylance opens it
        assert (o["writer_library"], o["writer_version"]) == ("lance", lance.__version__), f"{V}: writer"
        assert o["data_format"] == sc.data_format == vds.data_storage_version, f"{V}: data_format"
        assert o["total_rows"] == vds.count_rows(), f"{V}: total_rows vs count_rows()"
        assert o["num_indices"] == sum(len(i.segments) for i in vds.describe_indices()), f"{V}: num_indices"
        assert o["config"] == vds.config(), f"{V}: config"
        assert vds.has_stable_row_ids == sc.stable_row_ids, f"{V}: pylance has_stable_row_ids"
        assert (o["reader_feature_flags"], o["writer_feature_flags"]) == expected_flags(sc, branch, o), \
            f"{V}: feature flags"
        assert o["is_tagged"] == (v in tagged), f"{V}: is_tagged"
        assert o["is_cleaned_up"] is False, f"{V}: is_cleaned_up"
        assert o["branch"] == branch, f"{V}: branch"
        n += 1
    for v, src in ([] if branch else sc.restores):
        assert {k: by_version[v][k] for k in SUMMARY} == {k: by_version[src][k] for k in SUMMARY}, \
            f"{L}: restore v{v} counters = v{src}"
    return n


def compare_asof(sc):
    """asof --strict at every commit time (and 1 ms either side) = lance.dataset(uri, asof=...)."""
    ours = lv_json("versions", sc.uri)
    probes = sorted({o["timestamp_millis"] + d for o in ours for d in (-1, 0, 1)} | {1000})
    for T in probes:
        try:
            want = lance.dataset(sc.uri, asof=local_dt(T)).version
        except ValueError:
            want = None
        r = lv("asof", sc.uri, T, "--strict", "--json", check=False)
        if want is None:
            assert r.returncode != 0, f"{sc.name}: asof {T}: pylance finds none, lancever {r.stdout}"
            continue
        import json
        got = json.loads(r.stdout) if r.returncode == 0 else None
        assert got and got["version"]["version"] == want, f"{sc.name}: asof {T} --strict: {r.stdout} {r.stderr}, pylance v{want}"
        assert got["checkout_possible"] is True, f"{sc.name}: asof {T}: checkout_possible"
    return len(probes)


def _utc_iso_ns(dt):
    return dt.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")


def compare_refs(sc):
    """tags --json = ds.tags.list() and ds.branches.list()."""
    ds = lance.dataset(sc.uri)
    ours = lv_json("tags", sc.uri)
    tags = ds.tags.list()
    want = sorted(({"name": k, "version": t["version"], "branch": t["branch"], "manifest_size": t["manifest_size"]}
                   for k, t in tags.items()), key=lambda x: x["name"])
    got = sorted(({k: x[k] for k in ("name", "version", "branch", "manifest_size")} for x in ours["tags"]),
                 key=lambda x: x["name"])
    assert got == want, f"{sc.name}: tags"
    for x in ours["tags"]:
        t = tags[x["name"]]
        for k in ("created_at", "updated_at"):
            # ours: RFC 3339 with ns; pylance: an aware datetime with µs
            assert x[k][:26] == _utc_iso_ns(t[k]), f"{sc.name}: tag {x['name']} {k}"
    br = ds.branches.list()
    want = sorted(({"name": k, "parent_branch": b["parent_branch"], "parent_version": b["parent_version"],
                    "create_at": b["create_at"], "manifest_size": b["manifest_size"]} for k, b in br.items()),
                  key=lambda x: x["name"])
    got = sorted(({k: x[k] for k in ("name", "parent_branch", "parent_version", "create_at", "manifest_size")}
                  for x in ours["branches"]), key=lambda x: x["name"])
    assert got == want, f"{sc.name}: branches"
    assert sorted(br) == sorted(sc.branches), f"{sc.name}: pylance branches vs the builder's"
    for name, b in sc.branches.items():
        assert (br[name]["parent_branch"], br[name]["parent_version"]) == (b.parent, b.parent_version), \
            f"{sc.name}: branch {name} parent"
    return len(want) + len(tags)
