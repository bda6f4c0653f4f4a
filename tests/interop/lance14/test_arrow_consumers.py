"""Real Arrow consumers read lancever's Arrow export (issue 27, section 3).

A dataset written by pylance 14.0.2 (appends, a delete, transaction properties, tags, a
branch, a cleanup so history has cleaned-up rows) is read through the Python package's
``__arrow_c_stream__`` by pyarrow (``pa.table``, ``RecordBatchReader.from_stream``), polars
(``pl.DataFrame``, ``pl.from_arrow``), DuckDB (``duckdb.sql("from v")``, ``duckdb.from_arrow``)
and pandas (``pa.table(v).to_pandas()``), all pinned in the lance14 venv.  Each must see the
schema of lancever/arrow.h with its Arrow types (uint64 counters, timestamp[ms, tz=UTC],
bool, string) and, cell by cell, the values of the CLI's ``--json`` for the same call:
history(), versions(), tags (and branches) and a cleanup explanation.  The CLI's
``--format arrow`` IPC stream, read by ``pa.ipc.open_stream``, must carry the same schema
and rows.  Nothing skips: a consumer that cannot be imported fails the module.
"""
import datetime
import json
import math
import os
import subprocess

import duckdb
import lance
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import lancever
from conftest import LANCEVER, lv_json

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
U64, TS, B, S = pa.uint64(), pa.timestamp("ms", tz="UTC"), pa.bool_(), pa.string()

# lancever/arrow.h: name, type, nullable
VERSION_SCHEMA = [
    ("version", U64, False), ("timestamp_millis", TS, False), ("total_fragments", U64, False),
    ("total_data_files", U64, False), ("total_files_size", U64, False),
    ("total_deletion_files", U64, False), ("total_data_file_rows", U64, False),
    ("total_deletion_file_rows", U64, False), ("total_rows", U64, False),
    ("is_tagged", B, False), ("is_cleaned_up", B, False), ("transaction_uuid", S, True),
    ("read_version", U64, True), ("operation_type", S, True),
    ("transaction_properties", S, False), ("manifest_path", S, True),
    ("manifest_size", U64, True), ("writer_library", S, True), ("writer_version", S, True),
    ("data_format", S, True), ("branch", S, True), ("num_indices", U64, True),
]
REF_SCHEMA = [("kind", S, False), ("name", S, False), ("version", U64, False),
              ("branch", S, True), ("manifest_size", U64, False), ("created_at", S, True)]
FILE_SCHEMA = [("path", S, False), ("kind", S, False), ("size_bytes", U64, False),
               ("version", U64, True), ("reason", S, False)]
POLARS = {U64: pl.UInt64, TS: pl.Datetime("ms", "UTC"), B: pl.Boolean, S: pl.String}
DUCKDB = {U64: "UBIGINT", TS: "TIMESTAMP WITH TIME ZONE", B: "BOOLEAN", S: "VARCHAR"}
CLEANUP = ["--before-version", "6", "--no-error-if-tagged-old-versions"]


@pytest.fixture(scope="module")
def uri(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("consumers") / "t.lance")
    ds = lance.write_dataset(pa.table({"id": [1, 2, 3]}), uri)
    for i in range(4):
        ds = lance.write_dataset(pa.table({"id": [10 + i]}), uri, mode="append",
                                 transaction_properties={"step": str(i), "city": "Zürich \"€\""})
    ds.delete("id = 2")
    ds = lance.dataset(uri)
    ds.tags.create("first", 1)
    ds.tags.create("ünï", 3)
    ds.create_branch("exp", 4)
    lv_json("cleanup", uri, "--before-version", "3", "--no-error-if-tagged-old-versions")
    return uri


def cell(v):
    """A consumer's cell as plain Python: None for null/NaN, ints for integral numbers,
    milliseconds since the epoch for timestamps (aware in any zone)."""
    if v is None or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, datetime.datetime):
        assert v.tzinfo is not None, f"{v!r}: a timestamp without its UTC zone"
        return (v - EPOCH) // datetime.timedelta(milliseconds=1)
    if hasattr(v, "item"):  # numpy scalars
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def plain_rows(names, rows):
    out = []
    for r in rows:
        d = {n: cell(v) for n, v in zip(names, r)}
        if d.get("transaction_properties") is not None:
            d["transaction_properties"] = json.loads(d["transaction_properties"])
        out.append(d)
    return out


def version_want(cmd, uri):
    names = [n for n, _, _ in VERSION_SCHEMA]
    return [{n: j[n] for n in names} for j in lv_json(cmd, uri)]


def refs_want(uri):
    j = lv_json("tags", uri)
    rows = [{"kind": "tag", "name": t["name"], "version": t["version"], "branch": t["branch"],
             "manifest_size": t["manifest_size"], "created_at": t["created_at"]} for t in j["tags"]]
    for b in j["branches"]:
        at = datetime.datetime.fromtimestamp(b["create_at"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        rows.append({"kind": "branch", "name": b["name"], "version": b["parent_version"],
                     "branch": b["parent_branch"], "manifest_size": b["manifest_size"],
                     "created_at": at})
    return rows


def files_want(uri):
    j = lv_json("cleanup", uri, *CLEANUP, "--dry-run", "--list")
    return sorted(j["files"], key=lambda f: f["path"]), j


# ---- one reader per consumer: (names, rows) plus its own type check ----

def read_pyarrow(obj, schema):
    t = pa.table(obj)
    assert [(f.name, f.type, f.nullable) for f in t.schema] == schema
    r = pa.RecordBatchReader.from_stream(obj).read_all()
    assert r.equals(t, check_metadata=True)
    return t.column_names, [tuple(d.values()) for d in t.to_pylist()]


def read_polars(obj, schema):
    df = pl.DataFrame(obj)
    assert list(df.schema.items()) == [(n, POLARS[t]) for n, t, _ in schema]
    s = pl.from_arrow(obj)  # a stream of struct batches comes back as one struct Series
    assert (s.struct.unnest() if isinstance(s, pl.Series) else s).equals(df)
    return df.columns, df.rows()


def read_duckdb(obj, schema):
    v = obj  # noqa: F841  (DuckDB's replacement scan finds the variable by name)
    rel = duckdb.sql("from v")
    assert [(n, str(t)) for n, t in zip(rel.columns, rel.types)] == \
        [(n, DUCKDB[t]) for n, t, _ in schema]
    rows = rel.fetchall()
    assert duckdb.from_arrow(obj).fetchall() == rows
    return rel.columns, rows


def read_pandas(obj, schema):
    df = pa.table(obj).to_pandas()
    for n, t, nullable in schema:
        want = {TS: "datetime64[ms, UTC]", B: "bool"}.get(t, "uint64" if t == U64 else None)
        if want and not (nullable and t == U64):  # a nullable uint64 column is float64
            assert str(df[n].dtype) == want, f"{n}: {df[n].dtype}"
    return list(df.columns), list(df.itertuples(index=False, name=None))


READERS = {"pyarrow": read_pyarrow, "polars": read_polars, "duckdb": read_duckdb,
           "pandas": read_pandas}


@pytest.mark.parametrize("consumer", READERS)
@pytest.mark.parametrize("cmd", ["history", "versions"])
def test_version_lists(uri, consumer, cmd):
    ds = lancever.Dataset(uri)
    got = getattr(ds, cmd)()
    want = version_want(cmd, uri)
    assert len(want) == 6 if cmd == "history" else 5
    assert any(w["is_cleaned_up"] for w in want) == (cmd == "history")
    assert any(w["transaction_properties"] for w in want)
    names, rows = READERS[consumer](got.arrow(), VERSION_SCHEMA)
    assert plain_rows(names, rows) == want
    assert pa.table(got.arrow()).schema.metadata[b"lancever:kind"] == cmd.encode()


def test_version_list_itself_is_a_stream(uri):
    """The list is also a stream for the consumers that look for the protocol first."""
    h = lancever.Dataset(uri).history()
    t = pa.RecordBatchReader.from_stream(h).read_all()
    assert t.equals(pa.table(h.arrow()), check_metadata=True)
    assert t.schema.field("timestamp_millis").type == TS
    assert [cell(x) for x in t.column("timestamp_millis").to_pylist()] == \
        [r["timestamp_millis"] for r in h]


@pytest.mark.parametrize("consumer", READERS)
def test_tags_and_branches(uri, consumer):
    tags = lancever.Dataset(uri).tags
    names, rows = READERS[consumer](tags, REF_SCHEMA)
    want = refs_want(uri)
    assert [w["kind"] for w in want] == ["tag", "tag", "branch"]
    assert plain_rows(names, rows) == want


@pytest.mark.parametrize("consumer", READERS)
def test_cleanup_explanation(uri, consumer):
    ex = lancever.Dataset(uri).explain_cleanup_old_versions(
        before_version=6, error_if_tagged_old_versions=False, include_files=True, max_files=None)
    names, rows = READERS[consumer](ex, FILE_SCHEMA)
    want, j = files_want(uri)
    assert want, "the explanation must list files"
    assert sorted(plain_rows(names, rows), key=lambda f: f["path"]) == want
    md = pa.table(ex).schema.metadata
    assert md[b"lancever:kind"] == b"cleanup_files" and md[b"lancever:dry_run"] == b"true"
    for k in ("versions_total", "versions_removed", "files_removed", "bytes_removed"):
        assert md[f"lancever:{k}".encode()] == str(j[k]).encode(), k


def ipc(*args):
    """The CLI's --format arrow output read by pyarrow; polars' own IPC reader and DuckDB
    (over pyarrow's stream reader) must see the same table."""
    r = subprocess.run([LANCEVER, *args, "--format", "arrow"], capture_output=True,
                       env={**os.environ, "LANCEVER_ARROW_BATCH_ROWS": "2"})
    assert r.returncode == 0, r.stderr.decode()
    with pa.ipc.open_stream(r.stdout) as reader:
        t = reader.read_all()
    assert pl.read_ipc_stream(r.stdout).equals(pl.DataFrame(t))
    with pa.ipc.open_stream(r.stdout) as reader:
        assert duckdb.from_arrow(reader).fetchall() == duckdb.from_arrow(t).fetchall()
    return t


def test_cli_ipc_stream(uri):
    """`--format arrow` carries the C export's types: the same table as the package's."""
    ds = lancever.Dataset(uri)
    for cmd in ("history", "versions"):
        t = ipc(cmd, uri)
        # the CLI appends the tag names (joined with ",", null when none) to the C export's columns
        tags = t.schema.field("tags")
        assert (t.schema.names[-1], tags.type, tags.nullable) == ("tags", pa.string(), True)
        j = json.loads(subprocess.run([LANCEVER, cmd, uri, "--json"], capture_output=True,
                                      check=True).stdout)
        assert t.column("tags").to_pylist() == [",".join(r["tags"]) or None for r in j]
        assert any(r["tags"] for r in j), "the dataset has a tagged version"
        t = t.drop_columns(["tags"])
        assert [(f.name, f.type, f.nullable) for f in t.schema] == VERSION_SCHEMA
        assert t.equals(pa.table(getattr(ds, cmd)().arrow()), check_metadata=True), cmd
        assert plain_rows(t.column_names, [tuple(d.values()) for d in t.to_pylist()]) == \
            version_want(cmd, uri)
    t = ipc("tags", uri)
    assert t.equals(pa.table(ds.tags), check_metadata=True)
    t = ipc("cleanup", uri, *CLEANUP, "--dry-run")
    assert [(f.name, f.type, f.nullable) for f in t.schema] == FILE_SCHEMA
    got = plain_rows(t.column_names, [tuple(d.values()) for d in t.to_pylist()])
    assert sorted(got, key=lambda f: f["path"]) == files_want(uri)[0]
