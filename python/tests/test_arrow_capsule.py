"""The Arrow PyCapsule protocol from the consumer's side (pyarrow, polars and DuckDB are not
installable here): ``__arrow_c_stream__()`` is consumed as pyarrow does it, through
``ctypes.pythonapi.PyCapsule_GetPointer`` and the C Stream Interface structs declared
below from the Arrow spec (independently of the package's own), and every column, type,
nullability flag, null and row is compared with the C CLI's --json.  Ownership: the
stream is moved out of the capsule (its release set to NULL in the capsule), batches are
kept past the stream's release, and the library's count of live exported objects
(lv_arrow_live_objects, a hook of the test library: those tests are marked `hooks`) must
return to zero."""

import ctypes
import gc
import json

import pytest

import lancever
from lancever import _lib
from conftest import cli_json


class Schema(ctypes.Structure):
    pass


class Array(ctypes.Structure):
    pass


class Stream(ctypes.Structure):
    pass


Schema._fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p),
                   ("metadata", ctypes.c_void_p), ("flags", ctypes.c_int64),
                   ("n_children", ctypes.c_int64), ("children", ctypes.POINTER(ctypes.POINTER(Schema))),
                   ("dictionary", ctypes.c_void_p),
                   ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(Schema))),
                   ("private_data", ctypes.c_void_p)]
Array._fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64),
                  ("offset", ctypes.c_int64), ("n_buffers", ctypes.c_int64),
                  ("n_children", ctypes.c_int64), ("buffers", ctypes.POINTER(ctypes.c_void_p)),
                  ("children", ctypes.POINTER(ctypes.POINTER(Array))), ("dictionary", ctypes.c_void_p),
                  ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(Array))),
                  ("private_data", ctypes.c_void_p)]
Stream._fields_ = [("get_schema", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Stream), ctypes.POINTER(Schema))),
                   ("get_next", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Stream), ctypes.POINTER(Array))),
                   ("get_last_error", ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(Stream))),
                   ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(Stream))),
                   ("private_data", ctypes.c_void_p)]

GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
GetPointer.restype = ctypes.c_void_p
GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
IsValid = ctypes.pythonapi.PyCapsule_IsValid
IsValid.restype = ctypes.c_int
IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]

# lancever/arrow.h: name, format, nullable
VERSION_SCHEMA = [
    ("version", "L", False), ("timestamp_millis", "tsm:UTC", False), ("total_fragments", "L", False),
    ("total_data_files", "L", False), ("total_files_size", "L", False),
    ("total_deletion_files", "L", False), ("total_data_file_rows", "L", False),
    ("total_deletion_file_rows", "L", False), ("total_rows", "L", False),
    ("is_tagged", "b", False), ("is_cleaned_up", "b", False), ("transaction_uuid", "u", True),
    ("read_version", "L", True), ("operation_type", "u", True),
    ("transaction_properties", "u", False), ("manifest_path", "u", True),
    ("manifest_size", "L", True), ("writer_library", "u", True), ("writer_version", "u", True),
    ("data_format", "u", True), ("branch", "u", True), ("num_indices", "L", True),
]


def live():
    """A test hook: only the test library (liblancever_test.so, LV_TEST_HOOKS) has it, so the
    tests that call it are marked `hooks` (CTest unit/python-hooks loads that library)."""
    fn = _lib.lib().lv_arrow_live_objects
    fn.restype, fn.argtypes = ctypes.c_int64, []
    return fn()


def cell(arr, fmt, i):
    """Cell i (offsets applied) of a column, decoded from its buffers per the C Data spec."""
    b = arr.buffers
    if b[0] and arr.null_count != 0:
        bits = ctypes.string_at(b[0], i // 8 + 1)
        if not (bits[i // 8] >> (i % 8)) & 1:
            return None
    if fmt == "L":
        return ctypes.c_uint64.from_address(b[1] + 8 * i).value
    if fmt in ("l", "tsm:UTC"):  # timestamp[ms, tz=UTC] is int64 milliseconds
        return ctypes.c_int64.from_address(b[1] + 8 * i).value
    if fmt == "b":
        return bool((ctypes.string_at(b[1], i // 8 + 1)[i // 8] >> (i % 8)) & 1)
    o0 = ctypes.c_int32.from_address(b[1] + 4 * i).value
    o1 = ctypes.c_int32.from_address(b[1] + 4 * i + 4).value
    return ctypes.string_at(b[2] + o0, o1 - o0).decode()


def metadata(ptr):
    out, at = {}, ptr
    n = ctypes.c_int32.from_address(at).value
    at += 4
    for _ in range(n):
        kv = []
        for _ in range(2):
            ln = ctypes.c_int32.from_address(at).value
            kv.append(ctypes.string_at(at + 4, ln).decode())
            at += 4 + ln
        out[kv[0]] = kv[1]
    return out


def consume(obj):
    """Consumes obj.__arrow_c_stream__() as a C consumer would; returns (schema fields,
    schema metadata, rows as dicts, number of batches)."""
    capsule = obj.__arrow_c_stream__()
    assert IsValid(capsule, b"arrow_array_stream") == 1
    inside = Stream.from_address(GetPointer(capsule, b"arrow_array_stream"))
    # Move the stream out of the capsule: the capsule's destructor must then only free memory.
    stream = Stream()
    ctypes.memmove(ctypes.byref(stream), ctypes.byref(inside), ctypes.sizeof(Stream))
    inside.release = ctypes.cast(None, type(inside.release))
    del capsule, inside
    gc.collect()
    schema = Schema()
    assert stream.get_schema(ctypes.byref(stream), ctypes.byref(schema)) == 0
    assert schema.format == b"+s"
    fields = []
    for i in range(schema.n_children):
        c = schema.children[i].contents
        fields.append((c.name.decode(), c.format.decode(), bool(c.flags & 2)))
    md = metadata(schema.metadata)
    rows, batches = [], []
    while True:
        batch = Array()
        assert stream.get_next(ctypes.byref(stream), ctypes.byref(batch)) == 0
        if not batch.release:
            break
        batches.append(batch)
    stream.release(ctypes.byref(stream))  # batches outlive the stream
    assert not stream.release
    for batch in batches:
        assert batch.n_children == len(fields)
        for k in range(batch.length):
            row = {}
            for c, (name, fmt, _) in enumerate(fields):
                col = batch.children[c].contents
                row[name] = cell(col, fmt, col.offset + batch.offset + k)
            rows.append(row)
        batch.release(ctypes.byref(batch))
        assert not batch.release
    schema.release(ctypes.byref(schema))  # the schema last
    return fields, md, rows, len(batches)


def expected(j, name):
    if name == "transaction_properties":
        return json.dumps(j["transaction_properties"], separators=(",", ":"), sort_keys=True)
    return j.get(name)  # manifest columns are absent from --json without a live manifest


def check_rows(rows, js):
    assert [r["version"] for r in rows] == [j["version"] for j in js]
    for r, j in zip(rows, js):
        for name, _, _ in VERSION_SCHEMA:
            got = r[name]
            if name == "transaction_properties":
                got = json.dumps(json.loads(got), separators=(",", ":"), sort_keys=True)
            assert got == expected(j, name), f"v{j['version']} {name}"


@pytest.mark.hooks
@pytest.mark.parametrize("method", ["versions", "history"])
def test_capsule_matches_cli_json(cleaned_demo, method):
    before = live()
    ds = lancever.Dataset(cleaned_demo)
    res = getattr(ds, method)()
    fields, md, rows, nb = consume(res)
    assert fields == [(n, f, null) for n, f, null in VERSION_SCHEMA]
    assert md["lancever:kind"] == method
    assert json.loads(md["lancever:gaps"]) == [list(g) for g in res.gaps]
    js = cli_json(method, cleaned_demo)
    check_rows(rows, js)
    if method == "history":
        assert any(r["is_cleaned_up"] and r["manifest_path"] is None for r in rows)
    assert nb == 1
    del res
    gc.collect()
    assert live() == before


@pytest.mark.hooks
def test_arrow_view_is_not_a_list_and_rereadable(cleaned_demo):
    """pyarrow.table, polars.DataFrame and DuckDB take a list as a list: VersionList.arrow()
    is only a stream source, and exports a fresh stream each time (DuckDB asks twice)."""
    before = live()
    res = lancever.Dataset(cleaned_demo).history()
    view = res.arrow()
    assert not isinstance(view, (list, tuple, dict)) and isinstance(view, lancever.ArrowView)
    js = cli_json("history", cleaned_demo)
    for _ in range(2):
        fields, md, rows, nb = consume(view)
        assert fields == [(n, f, null) for n, f, null in VERSION_SCHEMA]
        assert md["lancever:kind"] == "history"
        check_rows(rows, js)
    del res, view
    gc.collect()
    assert live() == before


def test_stream_batches_and_one_shot(cleaned_demo):
    ds = lancever.Dataset(cleaned_demo)
    s = ds.history_stream(batch_rows=5)
    fields, md, rows, nb = consume(s)
    assert nb == 3 and len(rows) == 12
    check_rows(rows, cli_json("history", cleaned_demo))
    with pytest.raises(lancever.Error, match="already consumed"):
        s.__arrow_c_stream__()
    assert s.report.rung in ("newest_checkpoint", "older_checkpoint")


@pytest.mark.hooks
def test_unconsumed_capsule_releases_the_stream(demo):
    before = live()
    ds = lancever.Dataset(demo)
    caps = [ds.versions().__arrow_c_stream__() for _ in range(3)]
    caps.append(ds.versions_stream().__arrow_c_stream__())
    assert live() == before + 4  # one stream each, nothing else yet
    del caps
    gc.collect()
    assert live() == before


def test_requested_schema_is_accepted_and_ignored(demo):
    fields, _, rows, _ = consume(type("R", (), {"__arrow_c_stream__":
        lambda self: lancever.Dataset(demo).versions().__arrow_c_stream__(requested_schema=None)})())
    assert len(rows) == 12


def test_tags_and_cleanup_explanation_are_streams(demo):
    ds = lancever.Dataset(demo)
    fields, md, rows, _ = consume(ds.tags)
    assert [f[0] for f in fields] == ["kind", "name", "version", "branch", "manifest_size", "created_at"]
    tags = cli_json("tags", demo)["tags"]
    assert sorted((r["name"], r["version"]) for r in rows) == sorted((t["name"], t["version"]) for t in tags)
    ex = ds.explain_cleanup_old_versions(retain_versions=3, error_if_tagged_old_versions=False)
    fields, md, rows, _ = consume(ex)
    assert [f[0] for f in fields] == ["path", "kind", "size_bytes", "version", "reason"]
    assert [(r["path"], r["kind"], r["size_bytes"], r["reason"]) for r in rows] == \
        [(f.path, f.kind, f.size_bytes, f.reason) for f in ex.candidate_files]
    assert int(md["lancever:versions_removed"]) == ex.stats.old_versions
