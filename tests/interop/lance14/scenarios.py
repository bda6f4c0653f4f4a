"""The Lance 14 scenarios (issue 25 §1): datasets written through pylance 14.0.2 as its users write
them, for the tests that compare lancever's answers with pylance's own.

build_all(root) writes every scenario under root and returns a list of Scenario.  A scenario
records what its builder did, version by version (`ops`: the operation each commit must be named,
as Lance's transaction proto names it), which tags and branches it made, the file format it asked
for and whether it used V2 manifest names; everything else the tests ask pylance itself.  Sizes are
tiny on purpose (the whole set builds in a few seconds).
"""
import dataclasses
import os

import lance
import numpy as np
import pyarrow as pa


@dataclasses.dataclass
class Branch:
    name: str
    parent: str | None
    parent_version: int
    ops: dict = dataclasses.field(default_factory=dict)     # version -> operation name


@dataclasses.dataclass
class Scenario:
    name: str
    uri: str
    data_format: str                 # what every manifest says (DataStorageFormat.version)
    v2_paths: bool = True
    stable_row_ids: bool = False
    blob: bool = False
    ops: dict = dataclasses.field(default_factory=dict)      # version -> operation name
    branches: dict = dataclasses.field(default_factory=dict)  # name -> Branch (live ones)
    restores: list = dataclasses.field(default_factory=list)  # (version, restored_from)


def rows(a, n, vec=False):
    cols = {"id": pa.array(range(a, a + n), pa.int64()),
            "v": pa.array([i * 0.5 for i in range(a, a + n)]),
            "name": pa.array([f"r{i}" for i in range(a, a + n)])}
    if vec:
        rng = np.random.default_rng(a)
        cols["vec"] = pa.FixedSizeListArray.from_arrays(
            pa.array(rng.random(n * 8, dtype=np.float32)), 8)
    return pa.table(cols)


class Recorder:
    """Runs pylance calls and records the operation name of every version they commit."""

    def __init__(self, sc):
        self.sc = sc

    def __call__(self, op, fn):
        before = lance.dataset(self.sc.uri).latest_version if os.path.exists(self.sc.uri) else 0
        out = fn()
        after = lance.dataset(self.sc.uri).latest_version
        assert after > before, f"{self.sc.name}: {op} committed nothing"
        ops = op if isinstance(op, (list, tuple)) else [op]
        assert len(ops) == after - before, f"{self.sc.name}: {op} committed {after - before} versions"
        for i, o in enumerate(ops):
            self.sc.ops[before + 1 + i] = o
        return out


def everything(root):
    """Default file format (2.2) and manifest names (V2): every operation a user commits."""
    sc = Scenario("everything", os.path.join(root, "everything.lance"), "2.2")
    rec = Recorder(sc)
    u = sc.uri
    rec("Overwrite", lambda: lance.write_dataset(rows(0, 300, vec=True), u))
    rec("Append", lambda: lance.write_dataset(rows(300, 20, vec=True), u, mode="append",
                                              commit_message="second batch",
                                              transaction_properties={"source": "test", "batch": "2"}))
    ds = lance.dataset(u)
    rec("Delete", lambda: ds.delete("id < 3"))
    rec("Update", lambda: ds.update({"v": "1.25"}, where="id > 310"))
    rec("Update", lambda: ds.merge_insert("id").when_matched_update_all()
        .when_not_matched_insert_all().execute(rows(315, 10, vec=True)))
    rec("Merge", lambda: ds.add_columns({"doubled": "v * 2"}))
    rec("Project", lambda: ds.alter_columns({"path": "name", "name": "label"}))
    rec("Merge", lambda: ds.alter_columns({"path": "doubled", "data_type": pa.float32()}))
    rec("Project", lambda: ds.drop_columns(["doubled"]))
    rec("CreateIndex", lambda: ds.create_scalar_index("id", "BTREE"))
    rec("CreateIndex", lambda: ds.create_scalar_index("label", "BITMAP"))
    rec("CreateIndex", lambda: ds.create_index("vec", "IVF_PQ", num_partitions=1, num_sub_vectors=2))
    rec("UpdateConfig", lambda: ds.update_config({"lance.test.key": "x"}))
    rec(["ReserveFragments", "Rewrite"], lambda: lance.dataset(u).optimize.compact_files())
    ds = lance.dataset(u)
    ds.tags.create("t2", 2)
    ds.tags.create("t5", 5)
    ds.tags.update("t5", 6)
    ds.tags.create("gone", 3)
    ds.tags.delete("gone")
    # restore: check out version 2 and commit it again
    v = ds.latest_version
    rec("Restore", lambda: lance.dataset(u, version=2).restore())
    sc.restores.append((v + 1, 2))
    rec("Append", lambda: lance.write_dataset(rows(900, 5, vec=True), u, mode="append"))
    branches(sc, rec)
    return sc


def branches(sc, rec):
    """Branches: one from a version of main, written to and tagged; one from that branch; one with
    a '/' in its name; one created and deleted."""
    ds = lance.dataset(sc.uri)
    dev = ds.create_branch("dev", 4)
    b = Branch("dev", None, 4, {4: "Clone"})
    lance.write_dataset(rows(1000, 4, vec=True), dev, mode="append")
    b.ops[5] = "Append"
    dev = lance.dataset(sc.uri).checkout_version(("dev", None))
    dev.delete("id = 1001")
    b.ops[6] = "Delete"
    sc.branches["dev"] = b
    ds = lance.dataset(sc.uri)
    ds.tags.create("on_dev", ("dev", 5))
    ds.create_branch("feature/x", ("dev", 6))
    sc.branches["feature/x"] = Branch("feature/x", "dev", 6, {6: "Clone"})
    ds.create_branch("tmp", 3)
    ds.branches.delete("tmp")


def v1_names(root):
    """V1 manifest names (`{v}.manifest`) and file format 2.0."""
    sc = Scenario("v1_names_2_0", os.path.join(root, "v1.lance"), "2.0", v2_paths=False)
    rec = Recorder(sc)
    u = sc.uri
    rec("Overwrite", lambda: lance.write_dataset(rows(0, 30), u, data_storage_version="2.0",
                                                 enable_v2_manifest_paths=False))
    rec("Append", lambda: lance.write_dataset(rows(30, 10), u, mode="append"))
    ds = lance.dataset(u)
    rec("Delete", lambda: ds.delete("id % 7 = 0"))
    rec("Update", lambda: ds.update({"name": "'x'"}, where="id < 5"))
    ds.tags.create("first", 1)
    rec(["ReserveFragments", "Rewrite"], lambda: ds.optimize.compact_files())
    return sc


def stable_ids(root):
    """Stable row ids and file format 2.1, V2 names."""
    sc = Scenario("stable_row_ids_2_1", os.path.join(root, "stable.lance"), "2.1", stable_row_ids=True)
    rec = Recorder(sc)
    u = sc.uri
    rec("Overwrite", lambda: lance.write_dataset(rows(0, 40), u, data_storage_version="2.1",
                                                 enable_stable_row_ids=True))
    for i in range(3):
        rec("Append", lambda i=i: lance.write_dataset(rows(40 + 10 * i, 10), u, mode="append"))
    ds = lance.dataset(u)
    rec("Delete", lambda: ds.delete("id < 10"))
    rec("Update", lambda: ds.update({"v": "v + 1"}, where="id > 50"))
    rec("CreateIndex", lambda: ds.create_scalar_index("id", "BTREE"))
    rec(["ReserveFragments", "Rewrite"], lambda: ds.optimize.compact_files())
    return sc


def blobs(root, fmt):
    """A blob column (large_binary with lance-encoding:blob) in file format fmt."""
    sc = Scenario(f"blob_{fmt.replace('.', '_')}", os.path.join(root, f"blob{fmt}.lance"), fmt, blob=True)
    rec = Recorder(sc)
    u = sc.uri
    field = pa.field("payload", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    schema = pa.schema([pa.field("id", pa.int64()), field])

    def t(a, n):
        return pa.table({"id": pa.array(range(a, a + n), pa.int64()),
                         "payload": pa.array([bytes([i % 251]) * (100 + 997 * i) for i in range(a, a + n)],
                                             pa.large_binary())}, schema=schema)
    rec("Overwrite", lambda: lance.write_dataset(t(0, 8), u, schema=schema, data_storage_version=fmt))
    rec("Append", lambda: lance.write_dataset(t(8, 4), u, mode="append"))
    ds = lance.dataset(u)
    rec("Delete", lambda: ds.delete("id = 3"))
    return sc


def blob_v2(root):
    """Blob v2 (lance.blob_field, file format 2.2): small values inline, larger ones in sidecar files
    data/<key>/<id>.blob next to their data file."""
    sc = Scenario("blob_v2_sidecars", os.path.join(root, "blobv2.lance"), "2.2", blob=True)
    rec = Recorder(sc)
    u = sc.uri
    schema = pa.schema([pa.field("id", pa.int64()),
                        lance.blob_field("b", inline_size_threshold=64, dedicated_size_threshold=4096)])

    def t(a):
        return pa.table({"id": pa.array(range(a, a + 4), pa.int64()),
                         "b": lance.blob_array([b"x" * 10, b"y" * 1000, b"z" * 10000, None])}, schema=schema)
    rec("Overwrite", lambda: lance.write_dataset(t(0), u, schema=schema))
    rec("Append", lambda: lance.write_dataset(t(4), u, mode="append"))
    ds = lance.dataset(u)
    rec("Delete", lambda: ds.delete("id = 1"))
    sidecars = [f for _, _, fs in os.walk(os.path.join(u, "data")) for f in fs if f.endswith(".blob")]
    assert len(sidecars) == 4, f"blob v2: expected 4 sidecar files, found {sidecars}"
    return sc


def default_format(root):
    """No data_storage_version given: pylance 14's default, V1 names."""
    sc = Scenario("default_format", os.path.join(root, "default.lance"), "2.2", v2_paths=False)
    rec = Recorder(sc)
    u = sc.uri
    rec("Overwrite", lambda: lance.write_dataset(rows(0, 10), u, enable_v2_manifest_paths=False))
    rec("Append", lambda: lance.write_dataset(rows(10, 10), u, mode="append"))
    rec("Overwrite", lambda: lance.write_dataset(rows(100, 3), u, mode="overwrite"))
    return sc


def build_all(root):
    return [everything(root), v1_names(root), stable_ids(root), blobs(root, "2.0"), blobs(root, "2.1"),
            blobs(root, "2.2"), blob_v2(root), default_format(root)]
