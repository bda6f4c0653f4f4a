// Deterministic Arrow tables whose Lance data files exercise the encodings Lance 8 and
// Lance 12 choose for the column types lancever decodes: bitpacking, dictionaries, RLE,
// constant pages, FSST and full-zip strings, zstd/lz4 general compression (through the
// "lance-encoding:compression" field metadata), byte stream split, vectors.  Shared by
// test_lancefile_encodings.mjs and tests/fixtures/lance12/make_fixtures.mjs.
import { arrow } from './peer.mjs';

export const N = 4096 + 904;

function prng(seed) {
  let s = BigInt(seed) | 1n;
  const M = (1n << 64n) - 1n;
  return () => { s ^= (s << 13n) & M; s ^= s >> 7n; s ^= (s << 17n) & M; return s; };
}
const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,;:\u00e9\u00fc\u4e2d';

function col(name, type, nullable, vals, meta) {
  const m = meta ? new Map(Object.entries(meta)) : undefined;
  return { f: new arrow.Field(name, type, nullable, m), v: arrow.vectorFromArray(vals, type) };
}
const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));

export const CASES = {
  basic: (r, n) => {
    const str = (n) => { let s = ''; for (let i = 0; i < n; i++) s += ALPHA[Number(r() % BigInt(ALPHA.length))]; return s; };
    return [
      col('u64', new arrow.Uint64(), false, range(n, () => r())),
      col('u64seq', new arrow.Uint64(), false, range(n, (i) => BigInt(i * 3 + 7))),
      col('i64', new arrow.Int64(), true, range(n, (i) => (i % 7 === 3 ? null : BigInt.asIntN(64, r())))),
      col('b', new arrow.Bool(), false, range(n, () => (r() & 1n) === 1n)),
      col('bn', new arrow.Bool(), true, range(n, (i) => (i % 5 === 0 ? null : (r() & 1n) === 1n))),
      col('s', new arrow.Utf8(), true, range(n, (i) => (i % 9 === 2 ? null : str(Number(r() % 40n))))),
      col('slow', new arrow.Utf8(), false, range(n, (i) => ['alpha', 'beta', 'gamma', '', 'delta'][i % 5])),
    ];
  },
  runs: (r, n) => [
    col('u64run', new arrow.Uint64(), false, range(n, (i) => BigInt(Math.floor(i / 100)))),
    col('i64run', new arrow.Int64(), true, range(n, (i) => (i % 1000 === 999 ? null : BigInt(Math.floor(i / 500) * 1000000007)))),
    col('bconst', new arrow.Bool(), false, range(n, () => true)),
    col('i64const', new arrow.Int64(), false, range(n, () => -42n)),
    col('sconst', new arrow.Utf8(), false, range(n, () => 'same')),
    col('sallnull', new arrow.Utf8(), true, range(n, () => null)),
    col('i64allnull', new arrow.Int64(), true, range(n, () => null)),
    col('f64runs', new arrow.Float64(), true, range(n, (i) => (Math.floor(i / 300) % 3 === 1 ? null : Math.floor(i / 40) * 0.5))),
  ],
  long: (r, n) => [
    col('slong', new arrow.Utf8(), true, range(Math.min(n, 600), (i) => (i % 13 === 1 ? null : ('lorem ipsum ' + i + ' ').repeat(20 + Number(r() % 60n))))),
    col('id', new arrow.Int64(), false, range(Math.min(n, 600), (i) => BigInt(i))),
  ],
  zstd: (r, n) => general('zstd', r, n),
  lz4: (r, n) => general('lz4', r, n),
  numeric: (r, n) => [
    col('i32', new arrow.Int32(), true, range(n, (i) => (i % 11 === 0 ? null : Number(BigInt.asIntN(32, r()))))),
    col('i32small', new arrow.Int32(), false, range(n, (i) => (i % 200) - 100)),
    col('f32', new arrow.Float32(), true, range(n, (i) => (i % 11 === 0 ? null : Math.fround(Number(r() % 2000000n) / 7 - 100000)))),
    col('f64', new arrow.Float64(), false, range(n, () => Number(r() % 1000000007n) / 3.7)),
    col('f64bss', new arrow.Float64(), false, range(n, (i) => Math.sin(i) * 1000), { 'lance-encoding:compression': 'zstd' }),
    col('ts', new arrow.TimestampMicrosecond(), true, range(n, (i) => (i % 17 === 0 ? null : 1.7e15 + i * 1000 + Number(r() % 997n)))),
    col('tsms', new arrow.TimestampMillisecond(), false, range(n, (i) => 1.7e12 + i)),
  ],
  vectors: (r, n) => [
    col('vec4', new arrow.FixedSizeList(4, new arrow.Field('item', new arrow.Float32(), true)), true,
      range(n, (i) => (i % 19 === 0 ? null : range(4, (k) => Math.fround(k * i / 7))))),
    col('vec16', new arrow.FixedSizeList(16, new arrow.Field('item', new arrow.Float32(), true)), false,
      range(n, () => range(16, () => Math.fround(Number(r() % 100000n) / 1000 - 50)))),
  ],
  embeddings: (r, n) => [
    col('emb', new arrow.FixedSizeList(128, new arrow.Field('item', new arrow.Float32(), true)), false,
      range(Math.min(n, 800), () => range(128, () => Math.fround(Number(r() % 100000n) / 1000 - 50)))),
    col('id', new arrow.Int32(), false, range(Math.min(n, 800), (i) => i)),
  ],
};

function general(scheme, r, n) {
  const meta = { 'lance-encoding:compression': scheme };
  return [
    col('s', new arrow.Utf8(), true, range(n, (i) => (i % 9 === 2 ? null : 'z' + (r() % 100000000n).toString(36))), meta),
    col('i64', new arrow.Int64(), false, range(n, () => BigInt.asIntN(64, r() % 1000000000000n)), meta),
    col('slong', new arrow.Utf8(), false, range(n, (i) => (i < n / 12 ? ('lorem ipsum ' + i + ' ').repeat(30 + i % 50) : 'q' + (i % 3))), meta),
    col('u64', new arrow.Uint64(), true, range(n, (i) => (i % 4 === 0 ? null : BigInt(i % 37))), meta),
  ];
}

// An Arrow table of one case (seeded per case name).
export function makeCase(name, n = N) {
  let seed = 0x9E3779B9;
  for (const ch of name) seed = (seed * 31 + ch.charCodeAt(0)) >>> 0;
  const cols = CASES[name](prng(seed), n);
  const schema = new arrow.Schema(cols.map((c) => c.f));
  const len = cols[0].v.length;
  const data = arrow.makeData({ type: new arrow.Struct(schema.fields), length: len, nullCount: 0,
    children: cols.map((c) => c.v.data[0]) });
  return new arrow.Table(schema, new arrow.RecordBatch(schema, data));
}

// The cells of one column of a LanceDB result (apache-arrow Vector), as `cell` gives
// them; timestamps as their stored integers (arrow-js would convert them to ms).
export function cells(vec) {
  const out = [];
  for (const d of vec.data) {
    const ts = d.type.typeId === arrow.Type.Timestamp;
    for (let i = 0; i < d.length; i++) {
      const valid = !d.nullBitmap || d.nullCount === 0 ||
        ((d.nullBitmap[(d.offset + i) >> 3] >> ((d.offset + i) & 7)) & 1) === 1;
      if (ts) out.push(valid ? d.values[d.offset + i].toString() : null);
      else out.push(cell(vec.isValid !== undefined && !valid ? null : arrow.makeVector(d).get(i)));
    }
  }
  return out;
}

// Cell value in the form `lancever inspect --json` prints it (64-bit integers as strings
// once inspectJson has quoted them; floats as numbers; vectors as arrays).
export function cell(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  if (v instanceof Date) return v.getTime();
  if (typeof v.toArray === 'function') return Array.from(v.toArray(), (x) => cell(x));
  if (ArrayBuffer.isView(v)) return Array.from(v, (x) => cell(x));
  return String(v);
}
