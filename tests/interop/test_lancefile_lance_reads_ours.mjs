// Real Lance (LanceDB 0.31 / Lance 8.0.0) reads data files written by lancever.
//
// For each case, the test-file writer bench/write_lancefile (built next to lancever, found
// through LANCEVER_BUILD_DIR) writes a deterministic file (columns u64, i64 nullable, b,
// s nullable) through the public lv_lancefile_write.  The file becomes the
// only data file of a one-fragment dataset with a hand-written manifest
// (docs/lance-reference.md, "The LanceDB peers"), LanceDB reads every row back, and the rows are compared with
// what the generator intended (re-derived here) and with `lancever inspect --json`.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { lancedb, lanceverBin, scratch, lv, check, checkEq, finish } from './lib.mjs';
import { wrapLanceFile } from './lancewrap.mjs';

const buildDir = process.env.LANCEVER_BUILD_DIR || path.dirname(lanceverBin);
const writer = path.join(buildDir, 'write_lancefile');
if (!fs.existsSync(writer)) {
  console.error(`FAIL: write_lancefile not found at ${writer} (set LANCEVER_BUILD_DIR)`);
  process.exit(1);
}

// ---- the generator of bench/write_lancefile.c, mirrored ----
const M = (1n << 64n) - 1n;
const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const UTF8 = 'h\u00e9llo \u2713';
function expected(seed, n, nulls, strs) {
  let st = (BigInt(seed) * 0x9E3779B97F4A7C15n + 1n) & M;
  const next = () => { st ^= (st << 13n) & M; st ^= st >> 7n; st ^= (st << 17n) & M; return st; };
  const nm = { none: 0, some: 1, all: 2 }[nulls], sm = { short: 0, long: 1, huge: 2 }[strs];
  const rows = [];
  for (let r = 0; r < n; r++) {
    const u64 = next();
    const i64raw = BigInt.asIntN(64, next());
    const ivalid = !(nm === 2 || (nm === 1 && next() % 7n === 0n));
    const b = (next() & 1n) === 1n;
    const svalid = !(nm === 2 || (nm === 1 && next() % 5n === 0n));
    let s = null;
    if (svalid) {
      const h = next();
      const len = sm === 0 ? Number(h % 31n) : sm === 1 ? Number(h % 2000n)
        : (r % 50 === 0 ? 70000 + r : Number(h % 31n));
      if (r === 1) s = UTF8;
      else {
        const base = Number((h >> 11n) % 62n);
        let cyc = '';
        for (let k = 0; k < 62; k++) cyc += ALPHA[(base + 7 * k) % 62];
        s = cyc.repeat(Math.ceil(len / 62)).slice(0, len);
      }
    }
    rows.push({ u64, i64: ivalid ? i64raw : null, b, s });
  }
  return rows;
}

// The file as the only data file of a dataset LanceDB can open (lancewrap.mjs).
function makeDataset(dir, file, minor, nrows) {
  wrapLanceFile(dir, file, { name: 'lancever-test.lance', minor, nrows, fields: [
    { name: 'u64', type: 'uint64', nullable: false }, { name: 'i64', type: 'int64', nullable: true },
    { name: 'b', type: 'bool', nullable: false }, { name: 's', type: 'string', nullable: true }] });
}

// `lancever inspect --json` output with 64-bit integers kept exact (as strings).
function inspectJson(file) {
  const r = lv(['inspect', '--json', file]);
  if (r.status !== 0) throw new Error(`inspect ${file} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.replace(/([{,])"([^"\\]*)":(-?\d+)(?=[,}])/g, '$1"$2":"$3"'));
}

const show = v => (typeof v === 'bigint' ? v.toString() : v);
function rowKey(r) { return JSON.stringify([show(r.u64), show(r.i64), r.b, r.s]); }

const root = scratch('lv-lf-ours-');
const cases = [];
for (const version of ['2.0', '2.1']) {
  cases.push({ version, rows: 3, nulls: 'some', strings: 'short', seed: 1 });
  cases.push({ version, rows: 1000, nulls: 'some', strings: 'long', seed: 2 });
  cases.push({ version, rows: 1000, nulls: 'none', strings: 'short', seed: 3 });
  cases.push({ version, rows: 1000, nulls: 'all', strings: 'short', seed: 4 });
  cases.push({ version, rows: 5000, nulls: 'some', strings: 'long', seed: 5, pageRows: 700 });
  cases.push({ version, rows: 100000, nulls: 'some', strings: 'short', seed: 6 });
  cases.push({ version, rows: 120, nulls: 'some', strings: 'huge', seed: 7 });
}

let idx = 0;
for (const c of cases) {
  const tag = `v${c.version} rows=${c.rows} nulls=${c.nulls} strings=${c.strings}` +
    (c.pageRows ? ` pages<=${c.pageRows}` : '');
  const file = path.join(root, `t${idx}.lance`);
  const args = [file, '--rows', String(c.rows), '--version', c.version,
    '--seed', String(c.seed), '--nulls', c.nulls, '--strings', c.strings];
  if (c.pageRows) args.push('--max-page-rows', String(c.pageRows));
  const w = spawnSync(writer, args, { encoding: 'utf8' });
  if (!check(w.status === 0, `${tag}: write_lancefile failed (${w.status}): ${w.stderr}`)) continue;
  const want = expected(c.seed, c.rows, c.nulls, c.strings);

  // what our own reader says
  const ours = inspectJson(file);
  checkEq(ours.version, c.version, `${tag}: inspect version`);
  checkEq(Number(ours.num_rows), c.rows, `${tag}: inspect num_rows`);
  checkEq(ours.schema, [{ name: 'u64', type: 'uint64', nullable: false },
    { name: 'i64', type: 'int64', nullable: true }, { name: 'b', type: 'bool', nullable: false },
    { name: 's', type: 'string', nullable: true }], `${tag}: inspect schema`);
  checkEq(ours.metadata['lancever.test.seed'], String(c.seed), `${tag}: metadata`);

  // what real Lance says
  const dir = path.join(root, `ds${idx}.lance`);
  makeDataset(dir, file, c.version === '2.0' ? 0 : 1, c.rows);
  let got;
  try {
    const db = await lancedb.connect(root);
    const t = await db.openTable(`ds${idx}`);
    const tbl = await t.query().toArrow();
    const cols = ['u64', 'i64', 'b', 's'].map(n => tbl.getChild(n));
    got = [];
    for (let i = 0; i < tbl.numRows; i++) {
      const [a, b, cc, d] = cols.map(v => v.get(i));
      got.push({ u64: a, i64: b, b: cc, s: d });
    }
  } catch (e) {
    check(false, `${tag}: LanceDB failed to read our file: ${e.message}`);
    idx++;
    continue;
  }
  check(got.length === c.rows, `${tag}: LanceDB returned ${got.length} rows, expected ${c.rows}`);
  let badLance = 0, badOurs = 0, first = '';
  for (let i = 0; i < c.rows; i++) {
    const e = rowKey(want[i]);
    if (got[i] === undefined || rowKey(got[i]) !== e) {
      if (!badLance++) first = `row ${i}: lance ${got[i] && rowKey(got[i]).slice(0, 200)} want ${e.slice(0, 200)}`;
    }
    const o = ours.rows[i];
    const ok = o && JSON.stringify([o.u64 === null ? null : String(o.u64),
      o.i64 === null ? null : String(o.i64), o.b, o.s]) === e;
    if (!ok && !badOurs++) first += ` | ours row ${i}: ${JSON.stringify(o).slice(0, 200)}`;
  }
  check(badLance === 0, `${tag}: ${badLance} rows differ between LanceDB and the generator; ${first}`);
  check(badOurs === 0, `${tag}: ${badOurs} rows differ between inspect --json and the generator; ${first}`);
  const nulls = want.filter(r => r.s === null).length;
  console.log(`  ok ${tag}: LanceDB read ${got.length} rows (${nulls} null strings), ` +
    `${fs.statSync(file).size} bytes`);
  idx++;
}
finish('test_lancefile_lance_reads_ours');
