"""lancever reads every file pylance 14.0.2 writes (issue 25).

For every case of lf14_cases.py and every file format pylance 14 writes (2.0, 2.1 and its
default 2.2), pylance's LanceFileWriter writes a file; `lancever inspect --json` must give
every cell pylance's own LanceFileReader gives, in file order, for every column of a type
lancever decodes.  A column of a type lancever does not decode (binary, float16, dates, blobs,
nested types; docs/format.md "Lance file format layer") must be named as not decoded, with the
file and its type in the reason, exit status 1, and never a wrong value.  Whole datasets
written by lance.write_dataset(data_storage_version=2.2 / default) are read the same way,
file by file.  The page encodings pylance chose are printed per column (pytest -s).
"""
import json
import math
import os
import re

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader, LanceFileWriter

import lf14_cases as C
from conftest import lv

VERSIONS = ["2.0", "2.1", "2.2"]
KIND = re.compile(r"\b([A-Z][A-Za-z0-9]+)\b(?=\(|\s*\{)")
NOISE = {"Some", "ArrayEncoding", "CompressiveEncoding", "PageLayout", "Buffer", "ColumnEncoding",
         "Nullable", "NoNull", "NoNulls", "SomeNull", "SomeNulls", "BufferCompression", "FieldEncoding"}


def encodings(path):
    """Per physical column: the encoding kinds of its pages, from pylance's own metadata."""
    out = []
    for c in LanceFileReader(path).metadata().columns:
        kinds = []
        for p in c.pages:
            e = str(p.encoding)
            schemes = [a.replace("CompressionAlgorithm", "").lower() + (f"({lvl})" if lvl else "")
                       for a, lvl in re.findall(r"scheme: (\w+),\s*level: (?:Some\(\s*(-?\d+),?\s*\)|None)", e)]
            for k in KIND.findall(e) + schemes:
                if k not in NOISE and k not in kinds:
                    kinds.append(k)
            if "has_large_chunk: true" in e and "large_chunk" not in kinds:
                kinds.append("large_chunk")
        out.append(kinds)
    return out


def inspect(path):
    r = lv("inspect", "--json", path, check=False)
    assert r.returncode in (0, 1), f"{path}: inspect exited {r.returncode}: {r.stderr}"
    return r.returncode, json.loads(r.stdout), r.stderr


def theirs(col):
    """pylance's cells in the form lancever prints them."""
    t = col.type
    if pa.types.is_timestamp(t):
        col = col.cast(pa.int64())

    def f(v):
        if isinstance(v, float):
            return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity") if math.isinf(v) else v
        if isinstance(v, list):
            return [f(x) for x in v]
        return v
    return [f(v) for v in col.to_pylist()]


DECODES = re.compile(r"^(u?int(8|16|32|64)|bool|string|large_string|float|double|timestamp:.*"
                     r"|fixed_size_list:float:\d+)$")


def compare(path, tag):
    """lancever's reading of `path` against pylance's; returns (decoded, refused) names."""
    want = LanceFileReader(path).read_all().to_table()
    rc, ours, err = inspect(path)
    assert int(ours["num_rows"]) == want.num_rows, tag
    schema = {c["name"]: c for c in ours["schema"]}
    assert list(schema) == want.schema.names, tag
    decoded, refused = [], []
    for f in want.schema:
        c = schema[f.name]
        if "error" in c:
            # a refusal must be deliberate: a type we do not decode, never an encoding of one we do
            assert path in c["error"] and f"'{f.name}'" in c["error"], f"{tag}: {c['error']}"
            assert not DECODES.match(c["type"]) or "follows nested field" in c["error"], (
                f"{tag}: column {f.name} ({c['type']}) not decoded: {c['error']}")
            assert ("unsupported logical type" in c["error"] or "nested type" in c["error"]
                    or "follows nested field" in c["error"] or "blob column" in c["error"]), f"{tag}: {c['error']}"
            assert c["error"] in err, f"{tag}: refusal of {f.name} not on stderr"
            refused.append(f.name)
            continue
        exp = theirs(want.column(f.name))
        got = [row.get(f.name) for row in ours["rows"]]
        bad = [i for i, (g, e) in enumerate(zip(got, exp)) if g != e]
        assert not bad and len(got) == len(exp), (
            f"{tag} column {f.name}: {len(bad)} of {len(exp)} cells differ; row {bad[0] if bad else '-'}: "
            f"ours {str(got[bad[0]])[:100] if bad else ''} pylance {str(exp[bad[0]])[:100] if bad else ''}")
        decoded.append(f.name)
    assert (rc == 1) == bool(refused), f"{tag}: exit status {rc} with {len(refused)} refused columns"
    return decoded, refused


def write_file(path, table, version):
    with LanceFileWriter(str(path), table.schema, version=version) as w:
        w.write_batch(table)
    return str(path)


def report(tag, path, decoded, refused):
    enc = encodings(path)
    print(f"\n{tag}: {os.path.getsize(path)} bytes, {len(decoded)} columns read, {len(refused)} refused")
    for i, kinds in enumerate(enc):
        print(f"   physical column {i}: {'/'.join(kinds)}")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", sorted(C.DECODED))
def test_lancever_reads_what_pylance_writes(tmp_path, case, version):
    path = write_file(tmp_path / f"{case}_{version}.lance", C.make(case), version)
    decoded, refused = compare(path, f"v{version} {case}")
    report(f"v{version} {case}", path, decoded, refused)
    expected_refused = {"blob"} if case == "blob" else set()
    assert set(refused) == expected_refused, f"v{version} {case}: refused {refused}"


@pytest.mark.parametrize("version", VERSIONS)
def test_many_pages(tmp_path, version):
    """Small pages (max_page_bytes) and several batches: rows spread over many pages."""
    for case in ("ints", "strings", "runs", "zstd", "vectors"):
        t = C.make(case)
        path = str(tmp_path / f"{case}_{version}.lance")
        with LanceFileWriter(path, t.schema, version=version, max_page_bytes=4096,
                             data_cache_bytes=64 * 1024) as w:
            for k in range(0, t.num_rows, 700):
                w.write_batch(t.slice(k, 700))
        pages = [len(c.pages) for c in LanceFileReader(path).metadata().columns]
        assert max(pages) > 3, f"{case}: pages per column {pages}"
        decoded, refused = compare(path, f"v{version} {case} paged")
        assert not refused
        print(f"\nv{version} {case} paged: pages per column {pages}")


@pytest.mark.parametrize("version", VERSIONS)
def test_types_lancever_refuses_are_named(tmp_path, version):
    t = C.make("other")
    path = write_file(tmp_path / f"other_{version}.lance", t, version)
    decoded, refused = compare(path, f"v{version} other")
    report(f"v{version} other", path, decoded, refused)
    assert decoded == ["id"] and refused == t.schema.names[1:]


@pytest.mark.parametrize("version", VERSIONS)
def test_nested_columns_are_named(tmp_path, version):
    t = C.make("nested")
    # what pylance 14 itself refuses to write below 2.2: Map and the variable packed
    # struct are 2.2 encodings; 2.0 cannot store struct validity
    refusals = [("m", "(?i)map"), ("vpacked", "(?i)(variable packed struct|packed struct encoder)")]
    if version == "2.0":
        refusals.append(("pt", "(?i)struct validity"))
    for name, why in refusals if version != "2.2" else []:
        with pytest.raises(Exception, match=why):
            write_file(tmp_path / "m.lance", t.select(["id", name]), version)
        t = t.drop_columns([name])
    path = write_file(tmp_path / f"nested_{version}.lance", t, version)
    decoded, refused = compare(path, f"v{version} nested")
    report(f"v{version} nested", path, decoded, refused)
    # every nested column is named; the columns between and after them are read
    assert decoded == ["id", "mid", "after"], decoded
    assert refused == [c for c in t.schema.names if c not in decoded]


@pytest.mark.parametrize("storage", ["2.0", "2.1", "2.2", None])
def test_dataset_files(tmp_path, storage):
    """Data files of a dataset pylance writes (every storage version and the default, 2.2),
    with an append."""
    uri = str(tmp_path / "d.lance")
    kw = {"data_storage_version": storage} if storage else {}
    t = C.make("strings", 1500)
    t = t.append_column("n", pa.array(range(1500), pa.int64()))
    ds = lance.write_dataset(t, uri, max_rows_per_file=1000, **kw)
    ds = lance.write_dataset(C.make("strings", 300).append_column("n", pa.array(range(300), pa.int64())),
                             uri, mode="append")
    files = [f.path for frag in ds.get_fragments() for f in frag.data_files()]
    assert len(files) == 3
    for name in files:
        path = os.path.join(uri, "data", name)
        decoded, refused = compare(path, f"dataset {storage or 'default'} {name}")
        ours = inspect(path)[1]
        assert ours["version"] == (storage or "2.2"), f"{name}: file version {ours['version']}"
        assert not refused
    report(f"dataset {storage or 'default'}", path, decoded, refused)


@pytest.mark.parametrize("kind", ["metadata", "blob_v2"])
def test_blob_dataset_files(tmp_path, kind):
    """A 2.2 dataset with a blob column (lance-encoding:blob large_binary, or pylance's
    blob_field): its data file lists the blob descriptor fields after the blob with id -1,
    so pylance's own LanceFileReader cannot read it (checked below); lancever names the
    blob column as not decoded and reads every other column as the dataset returns it."""
    from lance.blob import blob_array, blob_field
    n = 120
    vals = [None if i % 5 == 0 else bytes([i % 256]) * (60 + 400 * (i % 7)) for i in range(n)]
    if kind == "metadata":
        bf, arr = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"}), \
            pa.array(vals, pa.large_binary())
    else:
        bf, arr = blob_field("b"), blob_array(vals)
    t = pa.Table.from_arrays([pa.array(range(n), pa.int64()), arr, pa.array([f"s{i % 4}" for i in range(n)]),
                              pa.array([i * 0.5 for i in range(n)])],
                             schema=pa.schema([pa.field("id", pa.int64()), bf, pa.field("after", pa.string()),
                                               pa.field("x", pa.float64())]))
    uri = str(tmp_path / "b.lance")
    ds = lance.write_dataset(t, uri, data_storage_version="2.2")
    [frag] = ds.get_fragments()
    [df] = frag.data_files()
    path = os.path.join(uri, "data", df.path)
    with pytest.raises(Exception, match="column index"):
        LanceFileReader(path).read_all().to_table()
    rc, ours, err = inspect(path)
    assert rc == 1
    errs = {c["name"]: c.get("error") for c in ours["schema"]}
    assert list(errs) == ["id", "b", "after", "x"]
    assert errs["b"] and "blob column" in errs["b"] and path in errs["b"] and errs["b"] in err
    assert not errs["id"] and not errs["after"] and not errs["x"]
    want = ds.to_table(columns=["id", "after", "x"])
    for name in ("id", "after", "x"):
        assert [r[name] for r in ours["rows"]] == want.column(name).to_pylist(), name
    assert [f["name"] for f in ours["fields"] if f["depth"] == 1] == ["kind", "position", "size", "blob_id", "blob_uri"]
    # the blob values themselves, through pylance, are still what was written
    got = ds.take_blobs("b", indices=[1, 2])
    assert [g.read() for g in got] == [vals[1], vals[2]]
    report(f"dataset blob ({kind})", path, ["id", "after", "x"], ["b"])
