"""Deterministic Arrow tables whose Lance files exercise what pylance 14 writes.

Shared by test_lancefile.py (lancever reads every file pylance 14.0.2 writes, cell for cell
as pylance's own LanceFileReader reads it) and tests/fixtures/lance14/make_fixtures.py
(the small committed files of the C unit suite).

Each case is a list of columns (name, Arrow type, values, field metadata).  The columns of
DECODED cases have the types lancever's reader decodes (ints of every width, float, double,
bool, string/large_string, timestamp, fixed_size_list<float>); NESTED/OTHER cases hold the
types it refuses by design, named per column (see docs/format.md "Lance file format layer").
The field metadata keys are ones pylance 14.0.2's binary holds (its strings), their effect
checked by the encodings each case produces, which the test prints:
  lance-encoding:compression          zstd | lz4 | none | fsst (general compression)
  lance-encoding:compression-level    the zstd level (stored in the page encoding)
  lance-encoding:rle-threshold, lance-encoding:dict-divisor, lance-encoding:minichunk-size,
  lance-encoding:dict-values-compression, lance-encoding:packed (struct in one column),
  lance-encoding:structural-encoding  miniblock | fullzip
  lance-encoding:blob                 true: a blob column (large_binary)
("lance-encoding:bss" is not a 14.0.2 key; the f*bss columns keep it to show it is ignored.)
"""
import random

import pyarrow as pa

N = 3000  # > 1024 rows: bitpacking blocks, dictionaries and several mini-block chunks


def _rng(name):
    return random.Random(sum(ord(c) * 31 ** i for i, c in enumerate(name)) & 0xFFFFFFFF)


ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,;:\u00e9\u00fc\u4e2d"


def _s(r, n):
    return "".join(r.choice(ALPHA) for _ in range(n))


def col(name, typ, vals, meta=None, nullable=True):
    return (name, typ, vals, meta, nullable)


def _ints(r, n, bits, signed, nulls):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return [None if nulls and i % 7 == 3 else r.randint(lo, hi) for i in range(n)]


def case_ints(r, n):
    return [
        col("i32", pa.int32(), _ints(r, n, 32, True, True)),
        col("i32small", pa.int32(), [(i % 200) - 100 for i in range(n)], nullable=False),
        col("i64", pa.int64(), _ints(r, n, 64, True, True)),
        col("i64seq", pa.int64(), [i * 3 - 5000 for i in range(n)], nullable=False),
        col("u64", pa.uint64(), _ints(r, n, 64, False, False), nullable=False),
        col("u64small", pa.uint64(), [None if i % 4 == 0 else i % 37 for i in range(n)]),
        col("u64max", pa.uint64(), [(1 << 64) - 1 - (i % 3) for i in range(n)], nullable=False),
    ]


def case_smallints(r, n):
    return [
        col("i8", pa.int8(), _ints(r, n, 8, True, True)),
        col("i16", pa.int16(), _ints(r, n, 16, True, True)),
        col("u8", pa.uint8(), _ints(r, n, 8, False, False), nullable=False),
        col("u16", pa.uint16(), _ints(r, n, 16, False, True)),
        col("u32", pa.uint32(), _ints(r, n, 32, False, True)),
        col("u32max", pa.uint32(), [(1 << 32) - 1 - (i % 2) for i in range(n)], nullable=False),
        col("i8small", pa.int8(), [(i % 9) - 4 for i in range(n)], nullable=False),
        col("i16run", pa.int16(), [None if i % 700 == 1 else -(i // 300) for i in range(n)]),
        col("u8const", pa.uint8(), [200] * n, nullable=False),
        col("i16constn", pa.int16(), [None if i % 4 == 0 else -7 for i in range(n)]),
        col("u16z", pa.uint16(), [(i * 31) % 60000 for i in range(n)], {"lance-encoding:compression": "zstd"}),
        col("i8full", pa.int8(), [None if i % 5 == 0 else (i % 250) - 125 for i in range(n)],
            {"lance-encoding:structural-encoding": "fullzip"}),
    ]


def case_floats(r, n):
    return [
        col("f32", pa.float32(), [None if i % 11 == 0 else r.uniform(-1e5, 1e5) for i in range(n)]),
        col("f64", pa.float64(), [r.uniform(-1e9, 1e9) for i in range(n)], nullable=False),
        col("f64nan", pa.float64(), [float("nan") if i % 13 == 0 else (float("inf") if i % 17 == 0 else i * 0.25)
                                     for i in range(n)], nullable=False),
        col("f64bss", pa.float64(), [((i * 2654435761) % 1000) / 7.0 for i in range(n)],
            {"lance-encoding:compression": "zstd", "lance-encoding:bss": "on"}),
        col("f32bss", pa.float32(), [((i * 40503) % 5000) / 3.0 for i in range(n)],
            {"lance-encoding:bss": "on"}),
    ]


def case_bools(r, n):
    return [
        col("b", pa.bool_(), [r.random() < 0.5 for _ in range(n)], nullable=False),
        col("bn", pa.bool_(), [None if i % 5 == 0 else r.random() < 0.3 for i in range(n)]),
        col("bconst", pa.bool_(), [True] * n, nullable=False),
        col("ballnull", pa.bool_(), [None] * n),
    ]


def case_strings(r, n):
    return [
        col("s", pa.string(), [None if i % 9 == 2 else _s(r, r.randint(0, 40)) for i in range(n)]),
        col("ls", pa.large_string(), [None if i % 10 == 1 else _s(r, r.randint(0, 30)) for i in range(n)]),
        col("sdict", pa.string(), [None if i % 11 == 5 else ["alpha", "beta", "gamma", "", "delta"][i % 5]
                                   for i in range(n)]),
        col("sfsst", pa.string(), [f"https://example.com/datasets/user_{i % 97}/item/{i}.json" for i in range(n)],
            nullable=False),
        col("lsdict", pa.large_string(), [["north", "south", "east", "west"][(i // 3) % 4] for i in range(n)],
            nullable=False),
        col("sempty", pa.string(), [""] * n, nullable=False),
    ]


def case_long(r, n):
    n = min(n, 400)
    return [
        col("slong", pa.string(), [None if i % 13 == 1 else (f"lorem ipsum {i} " * (20 + r.randint(0, 60)))
                                   for i in range(n)]),
        col("lslong", pa.large_string(), [_s(r, 300 + r.randint(0, 900)) for i in range(n)], nullable=False),
        col("sfull", pa.string(), [_s(r, r.randint(0, 50)) for i in range(n)],
            {"lance-encoding:structural-encoding": "fullzip"}),
        col("ifull", pa.int64(), [None if i % 6 == 0 else r.randint(-10**12, 10**12) for i in range(n)],
            {"lance-encoding:structural-encoding": "fullzip"}),
        col("id", pa.int64(), list(range(n)), nullable=False),
    ]


def case_runs(r, n):
    return [
        col("u64run", pa.uint64(), [i // 100 for i in range(n)], nullable=False),
        col("i64run", pa.int64(), [None if i % 1000 == 999 else (i // 500) * 1000000007 for i in range(n)]),
        col("i32rle", pa.int32(), [(i // 250) % 3 for i in range(n)], {"lance-encoding:rle-threshold": "0.9"},
            nullable=False),
        col("i64const", pa.int64(), [-42] * n, nullable=False),
        col("i32constn", pa.int32(), [None if i % 3 == 0 else 7 for i in range(n)]),
        col("sconst", pa.string(), ["same"] * n, nullable=False),
        col("sconstn", pa.string(), [None if i % 4 == 0 else "same" for i in range(n)]),
        col("sallnull", pa.string(), [None] * n),
        col("i64allnull", pa.int64(), [None] * n),
        col("f64allnull", pa.float64(), [None] * n),
        col("f64runs", pa.float64(), [None if (i // 300) % 3 == 1 else (i // 40) * 0.5 for i in range(n)]),
        col("tsconst", pa.timestamp("us", tz="UTC"), [1700000000000000] * n, nullable=False),
    ]


def _general(scheme, level=None):
    def make(r, n):
        m = {"lance-encoding:compression": scheme}
        if level is not None:
            m["lance-encoding:compression-level"] = str(level)
        return [
            col("s", pa.string(), [None if i % 9 == 2 else "z" + format(r.getrandbits(40), "x") for i in range(n)], m),
            col("i64", pa.int64(), [r.randint(-10**12, 10**12) for i in range(n)], m, nullable=False),
            col("slong", pa.string(), [(f"lorem ipsum {i} " * (30 + i % 50)) if i < n // 12 else f"q{i % 3}"
                                       for i in range(n)], m, nullable=False),
            col("u64", pa.uint64(), [None if i % 4 == 0 else i % 37 for i in range(n)], m),
            col("f64", pa.float64(), [None if i % 8 == 0 else (i % 91) * 1.5 for i in range(n)], m),
            col("i32", pa.int32(), [(i * 7919) % 100003 for i in range(n)], m, nullable=False),
            col("ls", pa.large_string(), [f"row {i} of the large strings " * 3 for i in range(n)], m, nullable=False),
            col("b", pa.bool_(), [i % 3 == 0 for i in range(n)], m, nullable=False),
        ]
    return make


def case_numeric(r, n):
    return [
        col("ts", pa.timestamp("us", tz="UTC"), [None if i % 17 == 0 else 1700000000000000 + i * 1000 + r.randint(0, 996)
                                                 for i in range(n)]),
        col("tsms", pa.timestamp("ms"), [1700000000000 + i for i in range(n)], nullable=False),
        col("tsns", pa.timestamp("ns"), [1700000000000000000 + i * 7 for i in range(n)], nullable=False),
    ]


def case_vectors(r, n):
    return [
        col("vec4", pa.list_(pa.float32(), 4), [None if i % 19 == 0 else [k * i / 7 for k in range(4)] for i in range(n)]),
        col("vec16", pa.list_(pa.float32(), 16), [[r.uniform(-50, 50) for _ in range(16)] for _ in range(n)],
            nullable=False),
        col("vec8z", pa.list_(pa.float32(), 8), [[float(i % 5)] * 8 for i in range(n)],
            {"lance-encoding:compression": "zstd"}, nullable=False),
    ]


def case_embeddings(r, n):
    n = min(n, 600)
    return [
        col("emb", pa.list_(pa.float32(), 128), [[r.uniform(-1, 1) for _ in range(128)] for _ in range(n)],
            nullable=False),
        col("id", pa.int32(), list(range(n)), nullable=False),
    ]


def case_knobs(r, n):
    """The other field-metadata knobs pylance 14 honours, and nullable vectors."""
    return [
        col("dictz", pa.string(), [["red", "green", "blue"][i % 3] * (1 + i % 2) for i in range(n)],
            {"lance-encoding:dict-values-compression": "zstd"}, nullable=False),
        col("dictlz", pa.int64(), [(i % 9) * 1000000007 for i in range(n)],
            {"lance-encoding:dict-values-compression": "lz4", "lance-encoding:dict-divisor": "2"}),
        col("nocomp", pa.string(), [_s(r, 12) for _ in range(n)], {"lance-encoding:compression": "none"}),
        col("fsst", pa.string(), [f"prefix-{i % 50}-suffix" for i in range(n)],
            {"lance-encoding:compression": "fsst"}, nullable=False),
        col("bigchunk", pa.int64(), [r.randint(-2**62, 2**62) for _ in range(n)],
            {"lance-encoding:minichunk-size": "262144"}, nullable=False),
        col("smallchunk", pa.string(), [_s(r, 20) for _ in range(n)], {"lance-encoding:minichunk-size": "512"}),
        col("smini", pa.string(), [None if i % 5 == 0 else f"mini {i} " * 40 for i in range(n)],
            {"lance-encoding:structural-encoding": "miniblock"}),
        col("vecn", pa.list_(pa.float32(), 32), [None if i % 6 == 0 else [i + k / 4 for k in range(32)]
                                                 for i in range(n)]),
        col("vecfz", pa.list_(pa.float32(), 4), [None if i % 3 == 0 else [i, -i, 0.5, 2] for i in range(n)],
            {"lance-encoding:structural-encoding": "fullzip"}),
    ]


def case_blob(r, n):
    n = min(n, 300)
    return [
        col("id", pa.int64(), list(range(n)), nullable=False),
        col("s", pa.string(), [f"name {i}" for i in range(n)], nullable=False),
        col("blob", pa.large_binary(), [None if i % 10 == 0 else bytes([i % 256]) * (1000 + 37 * i) for i in range(n)],
            {"lance-encoding:blob": "true"}),
    ]


# Types lancever does not decode (deliberate, documented): each column must be named as
# undecoded with its type; decodable columns before them are still read.
def case_other(r, n):
    return [
        col("id", pa.int64(), list(range(n)), nullable=False),
        col("bin", pa.binary(), [None if i % 5 == 0 else bytes([i % 251, 0, 255]) * (i % 4) for i in range(n)]),
        col("lbin", pa.large_binary(), [bytes([i % 256]) * 3 for i in range(n)], nullable=False),
        col("f16", pa.float16(), None),  # filled by table_of (numpy half floats)
        col("date", pa.date32(), [19000 + i for i in range(n)]),
        col("vecint", pa.list_(pa.int32(), 3), [[i, i + 1, i + 2] for i in range(n)]),
    ]


def case_nested(r, n):
    base = [
        col("id", pa.int64(), list(range(n)), nullable=False),
        col("tags", pa.list_(pa.string()), [None if i % 7 == 0 else [f"t{i % 5}"] * (i % 4) for i in range(n)]),
        col("pt", pa.struct([("x", pa.float64()), ("y", pa.int32())]),
            [None if i % 9 == 0 else {"x": i * 0.5, "y": i} for i in range(n)]),
        col("mid", pa.string(), [None if i % 6 == 0 else f"m{i % 7}" for i in range(n)]),
        col("ss", pa.struct([("a", pa.struct([("b", pa.int64()), ("c", pa.string())])), ("d", pa.list_(pa.int64()))]),
            [{"a": {"b": i, "c": "x"}, "d": [i] * (i % 2)} for i in range(n)]),
        col("ll", pa.large_list(pa.int64()), [[i] * (i % 3) for i in range(n)]),
        col("m", pa.map_(pa.string(), pa.int64()), [[(f"k{i % 4}", i)] for i in range(n)]),
        col("packed", pa.struct([("a", pa.int32()), ("b", pa.float32())]),
            [{"a": i, "b": i / 2} for i in range(n)], {"lance-encoding:packed": "true"}),
        col("vpacked", pa.struct([("a", pa.int32()), ("s", pa.string())]),
            [{"a": i, "s": f"v{i % 10}"} for i in range(n)], {"lance-encoding:packed": "true"}),
        col("after", pa.int64(), [i * 2 for i in range(n)], nullable=False),
    ]
    return base


DECODED = {
    "ints": case_ints, "smallints": case_smallints, "floats": case_floats, "bools": case_bools, "strings": case_strings,
    "long": case_long, "runs": case_runs, "zstd": _general("zstd"), "zstd9": _general("zstd", 9),
    "lz4": _general("lz4"), "numeric": case_numeric, "vectors": case_vectors,
    "embeddings": case_embeddings, "blob": case_blob, "knobs": case_knobs,
}
REFUSED = {"other": case_other, "nested": case_nested}


def make(name, n=N):
    fn = DECODED.get(name) or REFUSED[name]
    cols = fn(_rng(name), n)
    out = []
    for c in cols:
        if c[2] is None:  # float16: from numpy
            import numpy as np
            m = len(cols[0][2])
            vals = pa.array(np.arange(m, dtype=np.float16) / np.float16(8))
            out.append((c[0], c[1], vals, c[3], c[4]))
        else:
            out.append(c)
    fields, arrays = [], []
    for name_, typ, vals, meta, nullable in out:
        fields.append(pa.field(name_, typ, nullable=nullable, metadata=meta))
        arrays.append(vals if isinstance(vals, pa.Array) else pa.array(vals, type=typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
