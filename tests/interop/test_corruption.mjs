// Corruption oracle: what real Lance (LanceDB 0.31.0 = Lance 8.0.0) says about a
// corrupted manifest, against what lancever says about the same bytes.
//
// A copy of the LanceDB-written fixture tests/fixtures/lance8/t.lance (6 versions:
// Overwrite, Append, Delete, Update, CreateIndex with a btree index, Overwrite;
// every manifest carries its transaction inline) gets one manifest corrupted at a
// time: every byte XOR 0xFF, a seeded sample of single-bit flips, and a sample of
// truncations.  For each case:
//   Lance:    connect + openTable + listVersions(), then checkout(v) + countRows()
//             of the corrupted version;
//   lancever: `versions DIR --json` and `show DIR v --json`.
// Each case is classified as
//   both error | we error, Lance not | Lance errors, we not | same answer | different answer
// where "answer" is the version list with the 7 summary counters and the commit
// time in ms (what listVersions() returns).  lancever must never crash, and
// every error must name the manifest.  "Lance errors, we not" and "different
// answer" cases must fall in one of the explained classes below (EXPLAINED);
// anything else fails the test.  Counts per class are printed.
//
// LV_CORRUPTION_DENSE=1 sweeps every byte of all six manifests, 256 seeded bit
// flips and every 4th truncation length of each (about 6,000 cases, ~15 min; run
// by hand, for the figures); the default is a sample of the same kinds that fits
// the CI budget.  LV_CORRUPTION_DUMP=FILE writes one JSON line per case.
import fs from 'node:fs';
import path from 'node:path';
import { lancedb, lv, check, finish, lanceVersion, pick, scratch, sourceDir, SUMMARY_KEYS } from './lib.mjs';

process.env.RUST_BACKTRACE = '0'; // Lance panics on some corrupt schemas: keep the log short
const DENSE = !!process.env.LV_CORRUPTION_DENSE && process.env.LV_CORRUPTION_DENSE !== '0';
const SEED = 20261203;
const fixture = path.join(sourceDir, 'tests/fixtures/lance8/t.lance');
const U64_MAX = (1n << 64n) - 1n;
const manifestName = (v) => (U64_MAX - BigInt(v)).toString().padStart(20, '0') + '.manifest';

// splitmix32-style PRNG with a fixed seed (reproducible samples).
function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function cases(size, { xorStride, bits, truncStride }, rnd) {
  const out = [];
  for (let i = 0; i < size; i += xorStride) out.push({ kind: 'xor', pos: i });
  const total = size * 8;
  if (bits >= total) {
    for (let b = 0; b < total; b++) out.push({ kind: 'bit', pos: b >> 3, bit: b & 7 });
  } else {
    const seen = new Set();
    while (seen.size < bits) seen.add(rnd() % total);
    for (const b of [...seen].sort((x, y) => x - y)) out.push({ kind: 'bit', pos: b >> 3, bit: b & 7 });
  }
  for (let n = 0; n < size; n += truncStride) out.push({ kind: 'trunc', pos: n });
  return out;
}
function apply(orig, c) {
  if (c.kind === 'trunc') return orig.subarray(0, c.pos);
  const b = Buffer.from(orig);
  b[c.pos] ^= c.kind === 'xor' ? 0xff : 1 << c.bit;
  return b;
}
const caseName = (c) => (c.kind === 'bit' ? `bit@${c.pos}.${c.bit}` : `${c.kind}@${c.pos}`);

// ---- the two sides ----

async function lanceSide(parent, name, v) {
  const r = { list: null, error: null, checkoutError: null };
  try {
    const db = await lancedb.connect(parent);
    const t = await db.openTable(name);
    r.list = (await t.listVersions()).map(lanceVersion).sort((a, b) => a.version - b.version);
    try {
      await t.checkout(v);
      await t.countRows();
    } catch (e) {
      r.checkoutError = String(e.message || e).split('\n')[0];
    }
    t.close();
  } catch (e) {
    r.error = String(e.message || e).split('\n')[0];
  }
  return r;
}

function ourSide(dir, v, mname) {
  const r = { list: null, error: null, show: null, showError: null, crash: null, unnamed: null };
  const a = lv(['versions', dir, '--json', '--threads', '1']);
  if (a.status === 0) r.list = JSON.parse(a.stdout).map((o) => pick(o, SUMMARY_KEYS));
  else if (a.status === 1) {
    r.error = a.stderr.trim();
    if (!r.error.includes(mname)) r.unnamed = r.error;
  } else r.crash = `versions exited ${a.status}: ${a.stderr}`;
  const s = lv(['show', dir, String(v), '--json']);
  if (s.status === 0) r.show = pick(JSON.parse(s.stdout), SUMMARY_KEYS);
  else if (s.status === 1) r.showError = s.stderr.trim();
  else r.crash = (r.crash ? r.crash + '; ' : '') + `show exited ${s.status}: ${s.stderr}`;
  return r;
}

// A flipped version field can make two manifests claim the same version; both sides
// then list it twice, and which of the two comes first is not part of the answer.
const canon = (l) => [...l].sort((a, b) => a.version - b.version ||
  (JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0));

// Top-level fields of a manifest's Manifest message, as absolute byte spans of the file.
function manifestSpans(orig) {
  const n = orig.length;
  const pos = Number(orig.readBigUInt64LE(n - 16));
  const len = orig.readUInt32LE(pos);
  const base = pos + 4, msg = orig.subarray(base, base + len);
  const out = [];
  let i = 0;
  while (i < msg.length) {
    const start = i;
    let key; [key, i] = readVarint(msg, i);
    const wire = Number(key & 7n);
    let value = null;
    if (wire === 0) [value, i] = readVarint(msg, i);
    else if (wire === 2) { let l; [l, i] = readVarint(msg, i); i += Number(l); }
    else if (wire === 1) i += 8; else if (wire === 5) i += 4; else throw new Error('bad wire');
    out.push({ num: Number(key >> 3n), start: base + start, end: base + i, value });
  }
  return out;
}
const inField = (orig, pos, nums) => manifestSpans(orig).some((f) => nums.includes(f.num) && pos >= f.start && pos < f.end);

// ---- explanations for the expected disagreements ----
// Each takes the case context and returns a class name, or null if it does not apply.
// Every one checks where the corrupted byte is, not only what Lance said.

// Lance 8.0.0 writes the inline transaction first: [u32 len][Transaction] at offset 0.
const txnSpan = (orig) => [0, 4 + orig.readUInt32LE(0)];
const EXPLAINED = [
  // openTable() decodes the *latest* manifest's inline transaction in full (the
  // operation body: its fragments and schema); a corrupt byte there makes the whole
  // table unopenable, so listVersions() never runs.  lancever reads only the
  // transaction's uuid, read_version, operation kind and properties, and Lance's
  // own listVersions() reads no transaction at all (for older versions the same
  // corruption is the class "same answer (Lance cannot check it out)").
  ({ p, c, L, orig }, cls) => {
    if (cls !== 'Lance errors, we not' || p.v !== LATEST || c.kind === 'trunc') return null;
    const [a, b] = txnSpan(orig);
    if (c.pos < a || c.pos >= b) return null;
    return /Transaction\.operation|Option::unwrap\(\)/.test(L.error)
      ? 'latest version: body of its inline transaction operation (Lance decodes it to open the table)' : null;
  },
  // A flipped Field id / parent_id leaves the schema's tree inconsistent (a child
  // whose parent does not exist): Lance panics building its Schema
  // (lance-file datatypes.rs, Option::unwrap on None) for any version it lists.
  // lancever never builds the schema; it checks each Field only for wire format.
  ({ c, L, orig }, cls) => (cls === 'Lance errors, we not' && c.kind !== 'trunc' &&
    /Option::unwrap\(\)/.test(L.error) && inField(orig, c.pos, [1])
    ? 'schema: Field id/parent_id no longer form a tree (Lance panics building it)' : null),
  // A flip that sets feature flag 2 (stable row ids) in reader/writer_feature_flags:
  // Lance then requires a row-id sequence in every fragment ("All fragments must
  // have row ids"); the flag changes nothing in a version listing, so lancever
  // (which refuses only reader flags >= 64, like Lance) answers as before.
  // (Seen: max_fragment_id's key 0x58 flipped to 0x48 turns its value 2 into reader flags = 2.)
  ({ c, L, orig }, cls) => {
    if (cls !== 'Lance errors, we not' || c.kind === 'trunc' || !/must have row ids/.test(L.error)) return null;
    let spans;
    try { spans = manifestSpans(apply(orig, c)); } catch { return null; }
    const flags = spans.filter((f) => (f.num === 9 || f.num === 10) && f.value !== null && (f.value & 2n));
    return flags.length && !manifestSpans(orig).some((f) => (f.num === 9 || f.num === 10) && (f.value & 2n))
      ? 'feature flags: stable-row-ids bit set (Lance then demands row ids)' : null;
  },
  // Field fields newer than the Lance 8 schema (docs/lance-reference.md, "Table format") lists (primary/clustering key
  // positions): skipped as unknown by lancever, type-checked by Lance.
  ({ L }, cls) => (cls === 'Lance errors, we not' && /Field\.unenforced_/.test(L.error)
    ? 'schema Field fields newer than the reference lists (unenforced_* keys)' : null),
];
const LATEST = 6;

// ---- main ----

const work = scratch('lv-corrupt-');
let dsName = 'c0';
fs.cpSync(fixture, path.join(work, dsName + '.lance'), { recursive: true });

const counts = {};
const byClass = {};
const bump = (o, k) => { o[k] = (o[k] || 0) + 1; };
const examples = {};
let caseNo = 0;
const t0 = Date.now();

// Pristine: both sides agree exactly (sanity check of the oracle itself).
{
  const dir = path.join(work, dsName + '.lance');
  const L = await lanceSide(work, dsName, 1);
  const O = ourSide(dir, 1, 'x');
  check(L.error === null && O.error === null, `pristine: errors ${L.error} / ${O.error}`);
  check(JSON.stringify(L.list) === JSON.stringify(O.list), 'pristine: lancever != LanceDB');
}

const plan = process.env.LV_CORRUPTION_ONLY_TS ? [] : DENSE
  ? [1, 2, 3, 4, 5, 6].map((v) => ({ v, xorStride: 1, bits: 256, truncStride: 4 }))
  : [{ v: 5, xorStride: 3, bits: 64, truncStride: 24 }, { v: 3, xorStride: 8, bits: 16, truncStride: 64 },
     { v: 6, xorStride: 8, bits: 16, truncStride: 64 }];
const dump = process.env.LV_CORRUPTION_DUMP ? fs.openSync(process.env.LV_CORRUPTION_DUMP, 'w') : null;

// LV_CORRUPTION_ONLY="4:bit:631.4,6:xor:48,1:trunc:100" replays chosen cases (for investigation).
if (process.env.LV_CORRUPTION_ONLY) {
  plan.length = 0;
  for (const t of process.env.LV_CORRUPTION_ONLY.split(',')) {
    const [v, kind, at] = t.split(':');
    const [pos, bit] = at.split('.').map(Number);
    plan.push({ v: Number(v), only: [{ kind, pos, bit }] });
  }
}
for (const p of plan) {
  const mname = manifestName(p.v);
  const orig = fs.readFileSync(path.join(fixture, '_versions', mname));
  const list = p.only || cases(orig.length, p, prng(SEED + p.v));
  for (const c of list) {
    // A fresh directory name per case, so no cache in LanceDB can answer from a previous case.
    const next = `c${++caseNo}`;
    fs.renameSync(path.join(work, dsName + '.lance'), path.join(work, next + '.lance'));
    dsName = next;
    const dir = path.join(work, dsName + '.lance');
    const mpath = path.join(dir, '_versions', mname);
    fs.writeFileSync(mpath, apply(orig, c));
    const L = await lanceSide(work, dsName, p.v);
    const O = ourSide(dir, p.v, mname);
    fs.writeFileSync(mpath, orig);
    const label = `v${p.v} ${caseName(c)}`;
    if (!check(O.crash === null, `${label}: lancever crashed: ${O.crash}`)) continue;
    check(O.unnamed === null, `${label}: error does not name ${mname}: ${O.unnamed}`);
    // show must agree with versions about the corrupted version
    if (O.list) {
      const row = O.list.find((r) => r.version === p.v);
      if (row && O.show) check(JSON.stringify(row) === JSON.stringify(O.show), `${label}: show != versions row`);
    }
    let cls;
    if (L.error && O.error) cls = 'both error';
    else if (O.error) cls = 'we error, Lance not';
    else if (L.error) cls = 'Lance errors, we not';
    else if (JSON.stringify(canon(L.list)) === JSON.stringify(canon(O.list))) cls = 'same answer';
    else cls = 'different answer';
    if (cls === 'same answer' && L.checkoutError) cls = 'same answer (Lance cannot check it out)';
    bump(counts, cls);
    if (dump) fs.writeSync(dump, JSON.stringify({ v: p.v, c, cls, lanceError: L.error, checkoutError: L.checkoutError,
      ourError: O.error, lance: L.list && L.list.find((r) => r.version === p.v), ours: O.list && O.list.find((r) => r.version === p.v) }) + '\n');
    const ctx = { p, c, L, O, orig, label };
    if (cls === 'Lance errors, we not' || cls === 'different answer') {
      const why = EXPLAINED.map((f) => f(ctx, cls)).find((x) => x);
      const key = `${cls}: ${why || 'UNEXPLAINED'}`;
      bump(byClass, key);
      if (!examples[key]) examples[key] = [];
      if (examples[key].length < 3)
        examples[key].push(`${label} Lance: ${L.error || JSON.stringify(L.list.find((r) => r.version === p.v))}` +
          ` | ours: ${O.error || JSON.stringify(O.list.find((r) => r.version === p.v) || O.list)}`);
      check(!!why, `${label}: ${cls}, not explained\n    Lance: ${L.error || JSON.stringify(L.list)}\n    ours:  ${O.error || JSON.stringify(O.list)}`);
    }
  }
}

// ---- absurd commit times: what Lance reports against what we report ----
// v5's Timestamp submessage is replaced by seconds/nanos that no writer produces
// (negative, beyond year 9999, int64 extremes); the sizes of the other sections do
// not change, so the manifest stays valid.  Lance and lancever must agree on the
// commit time in ms (or both refuse), and the text outputs must not crash.
function varint(v) { // BigInt, two's complement for negatives
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do { let b = Number(x & 0x7fn); x >>= 7n; if (x) b |= 0x80; out.push(b); } while (x);
  return Buffer.from(out);
}
function readVarint(b, i) {
  let v = 0n, s = 0n;
  for (;;) { const x = b[i++]; v |= BigInt(x & 0x7f) << s; s += 7n; if (!(x & 0x80)) return [v, i]; }
}
function withTimestamp(orig, seconds, nanos) {
  const n = orig.length;
  const pos = Number(orig.readBigUInt64LE(n - 16));
  const len = orig.readUInt32LE(pos);
  const parts = manifestSpans(orig).filter((f) => f.num !== 7) // not the old timestamp
    .map((f) => orig.subarray(f.start, f.end));
  const ts = Buffer.concat([...(seconds !== 0n ? [varint(8), varint(seconds)] : []),
    ...(nanos !== 0n ? [varint(16), varint(nanos)] : [])]);
  parts.push(Buffer.concat([varint(0x3a), varint(ts.length), ts]));
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(4); head.writeUInt32LE(body.length);
  return Buffer.concat([orig.subarray(0, pos), head, body, orig.subarray(pos + 4 + len)]);
}
{
  const I64_MAX = (1n << 63n) - 1n, I64_MIN = -(1n << 63n);
  const times = [[-1n, 0n], [-1n, 999999999n], [0n, -1n], [-62135596800n, 0n], [253402300800n, 0n],
    [8640000000000n, 0n], [8640000000001n, 0n], [1n << 40n, 5n], [-(1n << 40n), 0n], [I64_MAX, 999999999n],
    [I64_MIN, 0n], [8210266876799n, 999999999n], [8210266876800n, 0n], [9223372036n, 854775807n], [9223372037n, 0n], [0n, 2147483647n], [1796232069n, -2147483648n], [1796232069n, 999999900n],
    [1796232069n, 999999872n], [1796232069n, 999999500n], [1796232069n, 999999999n]];
  const mname = manifestName(5);
  let agree = 0;
  for (const [sec, ns] of times) {
    const next = `c${++caseNo}`;
    fs.renameSync(path.join(work, dsName + '.lance'), path.join(work, next + '.lance'));
    dsName = next;
    const dir = path.join(work, dsName + '.lance');
    const mpath = path.join(dir, '_versions', mname);
    const orig = fs.readFileSync(mpath);
    fs.writeFileSync(mpath, withTimestamp(orig, sec, ns));
    const L = await lanceSide(work, dsName, 5);
    const O = ourSide(dir, 5, mname);
    const label = `timestamp ${sec}s ${ns}ns`;
    check(O.crash === null, `${label}: lancever crashed: ${O.crash}`);
    const lt = L.list ? L.list.find((r) => r.version === 5).timestamp_millis : `error: ${L.error}`;
    const ot = O.list ? O.list.find((r) => r.version === 5).timestamp_millis : `error: ${O.error}`;
    // Lance's JS Date cannot hold beyond +-8.64e15 ms: it reports null (NaN); we report the number.
    const ok = lt === ot || (lt === null && typeof ot === 'number' && Math.abs(ot) > 8.64e15);
    if (ok) agree++;
    check(ok, `${label}: Lance says ${lt}, lancever says ${ot}`);
    for (const args of [['versions', dir], ['history', dir], ['show', dir, '5'], ['asof', dir, '0'],
      ['asof', dir, String(ot)]]) {
      const r = lv(args);
      check(r.status === 0 || r.status === 1, `${label}: lancever ${args[0]} exited ${r.status}: ${r.stderr}`);
    }
    fs.writeFileSync(mpath, orig);
  }
  console.log(`absurd timestamps: ${agree} of ${times.length} agree with Lance`);
}

console.log(`corruption oracle: ${caseNo} cases in ${((Date.now() - t0) / 1000).toFixed(1)} s${DENSE ? ' (dense)' : ''}`);
for (const [k, n] of Object.entries(counts)) console.log(`  ${k}: ${n}`);
for (const [k, n] of Object.entries(byClass)) {
  console.log(`  [${k}]: ${n}`);
  for (const e of examples[k]) console.log(`      e.g. ${e}`);
}
finish('test_corruption');
