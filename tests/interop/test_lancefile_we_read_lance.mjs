// lancever reads data files written by real Lance (LanceDB 0.31 / Lance 8.0.0).
//
// LanceDB writes tables in storage versions 2.0 and 2.1 with UInt64, Int64, Boolean and
// Utf8 columns (several sizes, nulls, low-cardinality strings that trigger dictionary
// encoding, strings over 256 bytes that trigger 2.1 full-zip + FSST, sequences that
// trigger bitpacking).  For each data file, `lancever inspect --json` must return exactly
// the rows LanceDB's query().toArrow() returns, in file order.
import fs from 'node:fs';
import path from 'node:path';
import { lancedb, arrow, scratch, lv, check, checkEq, finish } from './lib.mjs';

function inspectJson(file) {
  const r = lv(['inspect', '--json', file]);
  if (r.status !== 0) throw new Error(`inspect exited ${r.status}: ${r.stderr.trim()}`);
  // keep 64-bit integers exact: turn bare integers into strings before JSON.parse
  return JSON.parse(r.stdout.replace(/([{,])"([^"\\]*)":(-?\d+)(?=[,}])/g, '$1"$2":"$3"'));
}

let seedState = 0x2545F491n;
const M = (1n << 64n) - 1n;
function rnd() {
  seedState ^= (seedState << 13n) & M; seedState ^= seedState >> 7n; seedState ^= (seedState << 17n) & M;
  return seedState;
}
const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,;:\u00e9\u00fc\u4e2d';
function randStr(len) {
  let s = '';
  for (let i = 0; i < len; i++) s += ALPHA[Number(rnd() % BigInt(ALPHA.length))];
  return s;
}

// kinds: rand (short random strings), low (5 repeated values), long (300..3000 chars),
// allnull (every nullable value null), seq (u64 sequence, i64 small range)
function makeTable(n, kind) {
  const u = new BigUint64Array(n), iv = [], b = [], s = [];
  for (let k = 0; k < n; k++) {
    const r = rnd();
    u[k] = kind === 'seq' ? BigInt(k) * 3n + 7n : r;
    const i = kind === 'seq' ? BigInt(k % 1000) - 500n : BigInt.asIntN(64, rnd());
    iv.push(kind === 'allnull' || k % 7 === 3 ? null : i);
    b.push((rnd() & 1n) === 1n);
    let v;
    if (kind === 'allnull') v = null;
    else if (kind === 'low') v = k % 11 === 5 ? null : ['alpha', 'beta', 'gamma', '', 'delta'][k % 5];
    else if (kind === 'long') v = k % 13 === 1 ? null : randStr(300 + Number(rnd() % 2700n));
    else v = k % 9 === 2 ? null : randStr(Number(rnd() % 40n));
    s.push(v);
  }
  const fields = [new arrow.Field('u64', new arrow.Uint64(), false),
    new arrow.Field('i64', new arrow.Int64(), true), new arrow.Field('b', new arrow.Bool(), false),
    new arrow.Field('s', new arrow.Utf8(), true)];
  const schema = new arrow.Schema(fields);
  const vecs = [arrow.makeVector({ type: new arrow.Uint64(), data: u }),
    arrow.vectorFromArray(iv, new arrow.Int64()), arrow.vectorFromArray(b, new arrow.Bool()),
    arrow.vectorFromArray(s, new arrow.Utf8())];
  const data = arrow.makeData({ type: new arrow.Struct(fields), length: n, nullCount: 0,
    children: vecs.map(v => v.data[0]) });
  return new arrow.Table(schema, new arrow.RecordBatch(schema, data));
}

const norm = v => (v === null || v === undefined ? null : typeof v === 'bigint' ? v.toString() : v);

const root = scratch('lv-lf-lance-');
const db = await lancedb.connect(root);
const cases = [];
for (const version of ['2.0', '2.1'])
  for (const [n, kind] of [[5, 'rand'], [5000, 'rand'], [5000, 'low'], [5000, 'long'],
    [5000, 'seq'], [2000, 'allnull'], [100000, 'rand'], [100000, 'low']])
    cases.push({ version, n, kind });

let i = 0;
for (const c of cases) {
  const tag = `v${c.version} rows=${c.n} ${c.kind}`;
  const name = `t${i++}`;
  await db.createTable(name, makeTable(c.n, c.kind),
    { storageOptions: { new_table_data_storage_version: c.version } });
  const t = await db.openTable(name);
  const tbl = await t.query().toArrow();
  const dataDir = path.join(root, `${name}.lance`, 'data');
  const files = fs.readdirSync(dataDir).filter(f => f.endsWith('.lance'));
  if (!check(files.length === 1, `${tag}: expected one data file, found ${files.length}`)) continue;
  const file = path.join(dataDir, files[0]);
  let ours;
  try {
    ours = inspectJson(file);
  } catch (e) {
    check(false, `${tag}: ${e.message}`);
    continue;
  }
  checkEq(ours.version, c.version, `${tag}: version`);
  checkEq(Number(ours.num_rows), c.n, `${tag}: num_rows`);
  checkEq(ours.schema.map(f => [f.name, f.type, f.nullable]),
    [['u64', 'uint64', false], ['i64', 'int64', true], ['b', 'bool', false], ['s', 'string', true]],
    `${tag}: schema`);
  const cols = ['u64', 'i64', 'b', 's'].map(n => tbl.getChild(n));
  check(tbl.numRows === c.n, `${tag}: LanceDB returned ${tbl.numRows} rows`);
  let bad = 0, first = '', nulls = 0;
  for (let r = 0; r < tbl.numRows; r++) {
    const want = cols.map(v => norm(v.get(r)));
    const o = ours.rows[r];
    const got = o ? [o.u64, o.i64, o.b, o.s].map(norm) : null;
    if (want[3] === null) nulls++;
    if (JSON.stringify(got) !== JSON.stringify(want) && !bad++)
      first = `row ${r}: ours ${JSON.stringify(got).slice(0, 160)} lance ${JSON.stringify(want).slice(0, 160)}`;
  }
  check(bad === 0, `${tag}: ${bad} rows differ; ${first}`);
  console.log(`  ok ${tag}: ${tbl.numRows} rows (${nulls} null strings) match, ` +
    `${fs.statSync(file).size} bytes`);
}
finish('test_lancefile_we_read_lance');
