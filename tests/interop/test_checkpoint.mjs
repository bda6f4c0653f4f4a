// Interop test for version checkpoints against real Lance (LanceDB 0.31.0 = Lance 8.0.0).
//
//  (a) On LanceDB-written datasets: `lancever history --json` equals listVersions() before any
//      checkpoint; `lancever checkpoint` writes `_checkpoints/<20 digits>.lance`; afterwards
//      `versions` / `history` are unchanged (15 fields), answered from the newest checkpoint
//      with 0 manifests read; a second checkpoint is `already_present` with identical bytes.
//  (b) LanceDB reads the checkpoint file's rows back: the file becomes the only data file of a
//      one-fragment dataset with a hand-written manifest (docs/lance-reference.md, "The LanceDB peers"); every value
//      and null is compared with `lancever history --json` (cleaned-up rows too), and the
//      schema metadata with `lancever inspect --json`.
//  (c) Simulated cleanup (manifests deleted by hand): versions / history / LanceDB agree,
//      `asof` finds the newest version with timestamp <= T (or < T with --strict) and says
//      whether it can be checked out.
//  (d) Corrupt newest checkpoint (truncated, bytes flipped, zero-length, wrong schema) → older
//      checkpoint, output unchanged; all corrupt → manifests; `checkpoint` repairs the file.
//  (e) Dataset deleted and recreated at the same path → the old checkpoint is rejected.
//  (f) Concurrent `lancever checkpoint` processes → both succeed, one identical file.
// Never skips: a missing peer or binary fails (lib.mjs).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import {
  lv, lvJson, openDir, check, checkEq, finish, lanceVersion, pick, scratch, lanceverBin,
} from './lib.mjs';
import { lancedb } from './peer.mjs';
import { CP_FIELDS, CP_SCHEMA, CP_U64_FIELDS, wrapLanceFile } from './lancewrap.mjs';
import { tenWrites, compaction, v1Names, restore, stableRowIds, concurrent, rows } from './datasets.mjs';

const U64_MAX = (1n << 64n) - 1n;
const CP_NAME_RE = /^_checkpoints\/(\d{20})\.lance$/;
const byVersion = (a, b) => a.version - b.version;
const sha256 = (f) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');
const cp15 = (list) => list.map((v) => pick(v, CP_FIELDS));
const cpName = (v) => String(v).padStart(20, '0') + '.lance';
const manifestFile = (dir, v) => {
  const v2 = path.join(dir, '_versions', (U64_MAX - BigInt(v)).toString().padStart(20, '0') + '.manifest');
  return fs.existsSync(v2) ? v2 : path.join(dir, '_versions', `${v}.manifest`);
};
process.setMaxListeners(0); // scratch() adds one exit listener per openDir
const root = scratch('lv-cp-');

// ---------------------------------------------------------------- helpers

// Runs `lancever CMD DIR --json --stats [...]`; returns {json, stats} or null after a failure.
function run(label, cmd, dir, extra = []) {
  const r = lv([cmd, dir, '--json', '--stats', ...extra]);
  if (!check(r.status === 0, `${label}: lancever ${cmd} exited ${r.status}: ${r.stderr}`)) return null;
  let json;
  try { json = JSON.parse(r.stdout); } catch (e) {
    check(false, `${label}: ${cmd} --json is not JSON: ${e.message}`);
    return null;
  }
  const line = r.stderr.split('\n').find((l) => l.startsWith('lancever: answered from ')) || '';
  const m = /^lancever: answered from ([a-z ]+); manifests read (\d+)/.exec(line);
  check(m, `${label}: ${cmd} --stats printed no report line: ${r.stderr}`);
  return { json, rung: m ? m[1] : null, manifestsRead: m ? Number(m[2]) : null, stderr: r.stderr };
}
function checkStats(label, res, rung, manifestsRead) {
  if (!res) return;
  checkEq(res.rung, rung, `${label}: --stats rung`);
  if (manifestsRead !== undefined) checkEq(res.manifestsRead, manifestsRead, `${label}: --stats manifests read`);
}
async function lanceList(dir) {
  const t = await openDir(dir);
  return (await t.listVersions()).map(lanceVersion).sort(byVersion);
}
function checkpointJson(label, dir, extra = []) {
  const r = lv(['checkpoint', dir, '--json', ...extra]);
  if (!check(r.status === 0, `${label}: lancever checkpoint exited ${r.status}: ${r.stderr}`)) return null;
  return JSON.parse(r.stdout);
}
function listCheckpoints(dir) {
  const d = path.join(dir, '_checkpoints');
  return fs.existsSync(d) ? fs.readdirSync(d).sort() : [];
}
// Appends one row with LanceDB; returns the new version.
async function lanceAppend(dir, id) {
  const t = await openDir(dir);
  await t.add(rows(id, 1));
  return t.version();
}

// ---------------------------------------------------------------- (b) LanceDB reads a checkpoint

// Wraps `file` (nrows rows) as the only data file of a new dataset `dir`.
function wrapCheckpoint(dir, file, nrows) {
  wrapLanceFile(dir, file, { name: 'checkpoint.lance', fields: CP_SCHEMA, nrows });
}

// `lancever inspect --json` with 64-bit integers kept exact (as strings).
function inspectJson(file) {
  const r = lv(['inspect', '--json', file]);
  if (r.status !== 0) return { error: `exited ${r.status}: ${r.stderr}` };
  try { return JSON.parse(r.stdout.replace(/"([^"\\]*)":(-?\d+)([,}])/g, '"$1":"$2"$3')); } catch (e) {
    return { error: e.message };
  }
}

let wrapIdx = 0;
// Reads the checkpoint `file` with LanceDB and compares it with `history` (lancever history
// --json of the state the file covers).
async function checkLanceReadsCheckpoint(label, file, history) {
  const L = `${label} [LanceDB reads ${path.basename(file)}]`;
  const covered = Number(CP_NAME_RE.exec('_checkpoints/' + path.basename(file))[1]);
  const want = history.filter((v) => v.version <= covered);
  const dir = path.join(root, `wrap${wrapIdx++}.lance`);
  wrapCheckpoint(dir, file, want.length);
  let tbl, schema;
  try {
    const db = await lancedb.connect(path.dirname(dir));
    const t = await db.openTable(path.basename(dir, '.lance'));
    schema = await t.schema();
    tbl = await t.query().toArrow();
  } catch (e) {
    check(false, `${L}: LanceDB failed to read the checkpoint: ${e.message}`);
    return;
  }
  checkEq(schema.fields.map((f) => [f.name, String(f.type), f.nullable]),
    CP_SCHEMA.map((f) => [f.name, { uint64: 'Uint64', int64: 'Int64', bool: 'Bool', string: 'Utf8' }[f.type], f.nullable]),
    `${L}: schema as LanceDB sees it`);
  checkEq(tbl.numRows, want.length, `${L}: row count`);
  const cols = CP_FIELDS.map((n) => tbl.getChild(n));
  let bad = 0;
  for (let i = 0; i < Math.min(tbl.numRows, want.length); i++) {
    const w = want[i];
    const got = {}, exp = {};
    CP_FIELDS.forEach((n, k) => {
      let g = cols[k] ? cols[k].get(i) : undefined;
      let e = w[n];
      if (typeof g === 'bigint') g = g.toString();
      if (n === 'transaction_properties') {
        // the file holds the JSON text; history --json holds it parsed
        try { g = JSON.parse(g); } catch { g = { unparsable: g }; }
      } else if (e !== null && (CP_U64_FIELDS.has(n) || n === 'timestamp_millis')) e = String(e);
      got[n] = g === undefined ? '<missing>' : g;
      exp[n] = e;
    });
    if (!checkEq(got, exp, `${L}: row ${i} (version ${w.version})`) && ++bad > 3) break;
  }
  const nulls = want.filter((v) => v.transaction_uuid === null).length;
  const cleaned = want.filter((v) => v.is_cleaned_up).length;
  console.log(`  ok ${L}: ${tbl.numRows} rows read (${nulls} null uuids, ${cleaned} cleaned up)`);

  // Schema metadata through our own reader.
  const ins = inspectJson(file);
  if (!check(!ins.error, `${L}: lancever inspect --json: ${ins.error}`)) return;
  checkEq(ins.version, '2.1', `${L}: inspect: file version`);
  checkEq(Number(ins.num_rows), want.length, `${L}: inspect: num_rows`);
  checkEq(ins.schema, CP_SCHEMA.map(({ name, type, nullable }) => ({ name, type, nullable })),
    `${L}: inspect: schema`);
  const md = ins.metadata || {};
  checkEq(want[0].version, 1, `${L}: checkpoint starts at version 1`);
  checkEq(md['lance:checkpoint:dataset_created'], String(want[0].timestamp_millis),
    `${L}: lance:checkpoint:dataset_created = version 1's timestamp`);
  check(/^\d+$/.test(md['lance:checkpoint:created_at'] || ''),
    `${L}: lance:checkpoint:created_at missing or not ms: ${md['lance:checkpoint:created_at']}`);
  check(Object.keys(md).filter((k) => !k.startsWith('lance:checkpoint:') && !k.startsWith('lancever:')).length === 0,
    `${L}: unexpected metadata keys ${Object.keys(md)}`);
  // inspect rows equal LanceDB's view (raw transaction_properties string included)
  const raw = (v) => (typeof v === 'bigint' ? v.toString() : v);
  let badIns = 0;
  for (let i = 0; i < want.length; i++) {
    const o = (ins.rows || [])[i] || {};
    const g = CP_FIELDS.map((n, k) => raw(cols[k] ? cols[k].get(i) : undefined));
    const e = CP_FIELDS.map((n) => (o[n] === undefined ? '<missing>' : o[n]));
    if (JSON.stringify(g) !== JSON.stringify(e) && badIns++ < 2)
      checkEq(e, g, `${L}: inspect row ${i} vs LanceDB`);
  }
  check(badIns === 0, `${L}: ${badIns} inspect rows differ from LanceDB's`);
}

// ---------------------------------------------------------------- a hand-made dataset with nulls

// Version 1 is a hand-written manifest with no transaction and no timestamp (so the checkpoint
// has null transaction_uuid / read_version / operation_type and timestamp 0); LanceDB then
// appends versions 2 and 3.
async function handMade(parent, name = 'hand_made') {
  const seedParent = path.join(parent, 'seed');
  fs.mkdirSync(seedParent, { recursive: true });
  await (await lancedb.connect(seedParent)).createTable('s', rows(0, 3));
  const sdir = path.join(seedParent, 's.lance', 'data');
  const dfile = fs.readdirSync(sdir)[0];
  const dir = path.join(parent, name + '.lance');
  wrapLanceFile(dir, path.join(sdir, dfile), { name: dfile, nrows: 3, fields: [
    { name: 'id', type: 'double', nullable: true }, { name: 'val', type: 'double', nullable: true },
    { name: 'name', type: 'string', nullable: true }] });
  const t = await openDir(dir);
  await t.add(rows(3, 2));
  await t.add(rows(5, 2));
  if (await t.version() !== 3) throw new Error('handMade: expected version 3');
  return { name, dir };
}

// ---------------------------------------------------------------- (a) + (b) per dataset

async function scenarioA(ds) {
  const L = ds.name;
  const dir = ds.dir;
  const lance = await lanceList(dir);
  const h0 = run(`${L} before checkpoint`, 'history', dir);
  const v0 = run(`${L} before checkpoint`, 'versions', dir);
  if (!h0 || !v0) return null;
  checkStats(`${L} history before checkpoint`, h0, 'manifests', lance.length);
  checkEq(h0.json.map((v) => pick(v)), lance, `${L}: history --json vs listVersions() before checkpoint`);
  checkEq(cp15(v0.json), cp15(h0.json), `${L}: versions vs history before checkpoint`);
  check(h0.json.every((v) => v.is_cleaned_up === false), `${L}: is_cleaned_up before any cleanup`);
  checkEq(listCheckpoints(dir), [], `${L}: no _checkpoints before lancever checkpoint`);

  const c1 = checkpointJson(L, dir);
  if (!c1) return null;
  const latest = lance[lance.length - 1].version;
  check(CP_NAME_RE.test(c1.path), `${L}: checkpoint path ${c1.path}`);
  checkEq(c1.path, `_checkpoints/${cpName(latest)}`, `${L}: checkpoint named after latest version`);
  checkEq([c1.written, c1.already_present, c1.latest_version, c1.entries, c1.new_entries, c1.files_pruned],
    [true, false, latest, lance.length, lance.length, 0], `${L}: first checkpoint JSON`);
  const file = path.join(dir, c1.path);
  if (!check(fs.existsSync(file), `${L}: ${file} missing`)) return null;
  checkEq(c1.file_size, fs.statSync(file).size, `${L}: file_size vs stat`);
  checkEq(listCheckpoints(dir), [cpName(latest)], `${L}: exactly one checkpoint file, no temp files`);
  const sum1 = sha256(file);

  for (const cmd of ['versions', 'history']) {
    const r = run(`${L} after checkpoint`, cmd, dir);
    if (!r) continue;
    checkStats(`${L} ${cmd} after checkpoint`, r, 'newest checkpoint', 0);
    checkEq(r.json.map((v) => pick(v)), lance, `${L}: ${cmd} after checkpoint vs listVersions()`);
    checkEq(cp15(r.json), cp15(h0.json), `${L}: ${cmd} after checkpoint vs before (15 fields)`);
  }
  const c2 = checkpointJson(`${L} second`, dir);
  if (c2) {
    checkEq([c2.written, c2.already_present, c2.path, c2.new_entries], [true, true, c1.path, 0],
      `${L}: second checkpoint is already_present`);
    checkEq(sha256(file), sum1, `${L}: second checkpoint leaves identical bytes`);
  }
  checkEq(listCheckpoints(dir), [cpName(latest)], `${L}: still one checkpoint file`);
  // LanceDB still opens the dataset and sees no new version.
  checkEq(await lanceList(dir), lance, `${L}: listVersions() after checkpoint (no version created)`);

  await checkLanceReadsCheckpoint(L, file, h0.json);
  console.log(`  ok ${L}: ${lance.length} versions, checkpoint ${c1.file_size} bytes`);
  return { history: h0.json, lance, file };
}

// ---------------------------------------------------------------- (c) cleanup + asof

function asofExpect(history, T, strict) {
  let best = null;
  for (const v of history)
    if ((strict ? v.timestamp_millis < T : v.timestamp_millis <= T) && (!best || v.version > best.version)) best = v;
  return best;
}
function checkAsof(L, dir, history, T, strict, timeArg = String(T)) {
  const want = asofExpect(history, T, strict);
  const args = ['asof', dir, timeArg, '--json', ...(strict ? ['--strict'] : [])];
  const r = lv(args);
  const tag = `${L}: asof ${timeArg}${strict ? ' --strict' : ''}`;
  if (!want) { check(r.status !== 0, `${tag}: expected "no version" (non-zero exit), got ${r.stdout}`); return; }
  if (!check(r.status === 0, `${tag} exited ${r.status}: ${r.stderr}`)) return;
  const j = JSON.parse(r.stdout);
  checkEq([j.query_millis, j.strict, j.checkout_possible, j.version && j.version.version],
    [T, strict, !want.is_cleaned_up, want.version], `${tag}`);
  if (j.version) checkEq(pick(j.version, CP_FIELDS), pick(want, CP_FIELDS), `${tag}: version record`);
}

async function scenarioC(src, K) {
  const L = `${src.name} cleanup`;
  const dir = path.join(root, 'cleanup_' + src.name + '.lance');
  fs.cpSync(src.dir, dir, { recursive: true });
  fs.rmSync(path.join(dir, '_checkpoints'), { recursive: true, force: true });
  const full = run(L, 'history', dir);
  if (!full) return;
  const all = full.json;
  if (!checkpointJson(L, dir)) return;
  const removed = all.slice(0, K).map((v) => v.version);
  for (const v of removed) fs.rmSync(manifestFile(dir, v));
  const liveWant = cp15(all.filter((v) => !removed.includes(v.version)));
  const histWant = cp15(all).map((v) => ({ ...v, is_cleaned_up: removed.includes(v.version) }));

  const vs = run(L, 'versions', dir);
  if (vs) {
    checkStats(`${L} versions`, vs, 'newest checkpoint', 0);
    checkEq(cp15(vs.json), liveWant, `${L}: versions lists only live versions`);
  }
  const hs = run(L, 'history', dir);
  if (hs) {
    checkStats(`${L} history`, hs, 'newest checkpoint', 0);
    checkEq(cp15(hs.json), histWant, `${L}: history lists all, removed ones is_cleaned_up`);
  }
  let t;
  try {
    t = await openDir(dir);
    const lance = (await t.listVersions()).map(lanceVersion).sort(byVersion);
    checkEq(lance, liveWant.map((v) => pick(v)), `${L}: LanceDB listVersions() vs lancever versions`);
    check(await t.countRows() >= 0, `${L}: countRows`);
  } catch (e) {
    check(false, `${L}: LanceDB cannot open the cleaned-up dataset: ${e.message}`);
  }
  // asof: every commit time, one ms before and after, both modes; ISO 8601 for a few.
  for (const v of histWant) {
    for (const T of [v.timestamp_millis - 1, v.timestamp_millis, v.timestamp_millis + 1])
      for (const strict of [false, true]) checkAsof(L, dir, histWant, T, strict);
  }
  for (const v of [histWant[0], histWant[K - 1], histWant[K], histWant[histWant.length - 1]]) {
    checkAsof(L, dir, histWant, v.timestamp_millis, false, new Date(v.timestamp_millis).toISOString());
    checkAsof(L, dir, histWant, v.timestamp_millis, true, new Date(v.timestamp_millis).toISOString());
  }
  checkAsof(L, dir, histWant, 1000, false);
  checkAsof(L, dir, histWant, Date.now() + 86400000, false);
  // `show` of a cleaned-up version comes from the checkpoint.
  const sh = lv(['show', dir, String(removed[0]), '--json']);
  if (check(sh.status === 0, `${L}: show ${removed[0]} exited ${sh.status}: ${sh.stderr}`))
    checkEq(pick(JSON.parse(sh.stdout), CP_FIELDS), histWant[0], `${L}: show cleaned-up version`);

  // A re-checkpoint records the cleanup; a new LanceDB version then gives a checkpoint whose
  // cleaned-up rows LanceDB reads back (b).
  const c2 = checkpointJson(`${L} re-checkpoint`, dir);
  if (c2) checkEq(c2.entries, all.length, `${L}: re-checkpoint keeps cleaned-up versions`);
  const hs2 = run(`${L} after re-checkpoint`, 'history', dir);
  if (hs2) checkEq(cp15(hs2.json), histWant, `${L}: history after re-checkpoint`);
  const nv = await lanceAppend(dir, 5000);
  const c3 = checkpointJson(`${L} after append`, dir);
  const hs3 = run(`${L} after append`, 'history', dir);
  if (c3 && hs3) {
    checkEq(c3.latest_version, nv, `${L}: checkpoint covers the new version`);
    checkEq(cp15(hs3.json).slice(0, all.length), histWant, `${L}: history after append`);
    checkEq(hs3.json.filter((v) => v.is_cleaned_up).map((v) => v.version), removed, `${L}: cleaned-up set`);
    await checkLanceReadsCheckpoint(L, path.join(dir, c3.path), hs3.json);
  }
  console.log(`  ok ${L}: removed ${removed.length} manifests of ${all.length}`);
}

// ---------------------------------------------------------------- (d) corruption

async function scenarioD(src) {
  const L = `${src.name} corruption`;
  const dir = path.join(root, 'corrupt_' + src.name + '.lance');
  fs.cpSync(src.dir, dir, { recursive: true });
  fs.rmSync(path.join(dir, '_checkpoints'), { recursive: true, force: true });
  const ca = checkpointJson(L, dir);
  const nv = await lanceAppend(dir, 7000);
  const cb = checkpointJson(L, dir);
  if (!ca || !cb) return;
  checkEq(listCheckpoints(dir), [path.basename(ca.path), path.basename(cb.path)], `${L}: two checkpoint files`);
  checkEq(cb.latest_version, nv, `${L}: newest covers ${nv}`);
  const newest = path.join(dir, cb.path), older = path.join(dir, ca.path);
  const good = fs.readFileSync(newest), goodOld = fs.readFileSync(older);
  const base = run(L, 'history', dir);
  if (!base) return;
  checkStats(`${L} intact`, base, 'newest checkpoint', 0);
  const want = cp15(base.json);
  checkEq(want.map((v) => pick(v)), await lanceList(dir), `${L}: history vs listVersions()`);

  const expectRung = (tag, rung, read) => {
    for (const cmd of ['history', 'versions']) {
      const r = run(`${L} ${tag}`, cmd, dir);
      if (!r) continue;
      checkStats(`${L} ${tag} ${cmd}`, r, rung, read);
      checkEq(cp15(r.json), want, `${L} ${tag}: ${cmd} output unchanged`);
    }
  };
  // A data byte: the middle byte of version 2's timestamp, stored as little-endian int64.
  const tsBuf = Buffer.alloc(8); tsBuf.writeBigInt64LE(BigInt(want[1].timestamp_millis));
  const tsAt = good.indexOf(tsBuf);
  check(tsAt > 0, `${L}: version 2's timestamp not found raw in the checkpoint`);
  const flip = (buf, pos, mask = 0xff) => { const b = Buffer.from(buf); b[pos] ^= mask; return b; };
  const cases = [
    ['truncated to half', good.subarray(0, good.length >> 1)],
    ['truncated by 1 byte', good.subarray(0, good.length - 1)],
    ['zero-length', Buffer.alloc(0)],
    ['data byte flipped (a timestamp)', flip(good, tsAt + 1)],
    ['footer magic flipped', flip(good, good.length - 1)],
    ['wrong schema (a LanceDB data file)',
      fs.readFileSync(path.join(dir, 'data', fs.readdirSync(path.join(dir, 'data')).sort()[0]))],
    ['older checkpoint renamed as newest', goodOld],
  ];
  for (const [tag, bytesNow] of cases) {
    fs.writeFileSync(newest, bytesNow);
    // the older checkpoint covers all but the newest version: one tail manifest read
    expectRung(tag, 'older checkpoint', 1);
  }
  // Every byte flipped (sampled): the answer never changes.  Record which rung answered.
  const rungs = {};
  let wrong = 0;
  for (let pos = 0; pos < good.length; pos += 7) {
    fs.writeFileSync(newest, flip(good, pos, 0x01));
    const r = lv(['history', dir, '--json', '--stats']);
    let ok = r.status === 0;
    try { ok = ok && JSON.stringify(cp15(JSON.parse(r.stdout))) === JSON.stringify(want); } catch { ok = false; }
    const rung = (/answered from ([a-z ]+);/.exec(r.stderr) || [])[1] || 'error';
    rungs[rung] = (rungs[rung] || 0) + 1;
    if (!ok && wrong++ < 3) check(false, `${L}: byte ${pos} flipped: exit ${r.status}, output changed: ${r.stderr}`);
  }
  check(wrong === 0, `${L}: ${wrong} single-bit flips changed the answer`);
  console.log(`  info ${L}: single-bit flips every 7th byte of ${good.length}: answered from ${JSON.stringify(rungs)}`);

  // lancever checkpoint replaces a corrupt newest file with the identical good bytes.
  fs.writeFileSync(newest, good.subarray(0, 100));
  const rep = checkpointJson(`${L} repair`, dir);
  if (rep) check(fs.readFileSync(newest).equals(good), `${L}: checkpoint repaired the corrupt newest file`);

  // All corrupt → manifests.
  fs.writeFileSync(newest, flip(good, tsAt + 1));
  fs.writeFileSync(older, goodOld.subarray(0, goodOld.length >> 1));
  expectRung('all corrupt', 'manifests', want.length);
  fs.writeFileSync(newest, Buffer.alloc(0));
  fs.writeFileSync(older, Buffer.alloc(0));
  expectRung('all zero-length', 'manifests', want.length);
  fs.writeFileSync(newest, good);
  fs.writeFileSync(older, goodOld);
  expectRung('restored', 'newest checkpoint', 0);
  console.log(`  ok ${L}`);
}

// ---------------------------------------------------------------- (e) recreated dataset

async function scenarioE() {
  const L = 'recreated';
  const parent = path.join(root, 'recreate');
  const first = await tenWrites(parent, 'rec');
  const old = run(L, 'history', first.dir);
  const c1 = checkpointJson(L, first.dir);
  if (!c1 || !old) return;
  const oldBytes = fs.readFileSync(path.join(first.dir, c1.path));
  for (const e of fs.readdirSync(first.dir))
    if (e !== '_checkpoints') fs.rmSync(path.join(first.dir, e), { recursive: true, force: true });
  const second = await tenWrites(parent, 'rec');
  checkEq(second.dir, first.dir, `${L}: same path`);
  const lance = await lanceList(second.dir);
  checkEq(lance.length, old.json.length, `${L}: same number of versions (checkpoint name collides)`);
  check(lance[0].timestamp_millis !== old.json[0].timestamp_millis, `${L}: a new history`);
  for (const cmd of ['history', 'versions']) {
    const r = run(L, cmd, second.dir);
    if (!r) continue;
    checkStats(`${L} ${cmd}`, r, 'manifests', lance.length);
    check(/rejected/.test(r.stderr), `${L} ${cmd}: --stats does not say the checkpoint was rejected: ${r.stderr}`);
    checkEq(r.json.map((v) => pick(v)), lance, `${L}: ${cmd} vs the new listVersions()`);
  }
  const c2 = checkpointJson(`${L} new checkpoint`, second.dir);
  if (c2) {
    checkEq([c2.checkpoints_rejected, c2.new_entries, c2.entries], [1, lance.length, lance.length],
      `${L}: new checkpoint rejected the old one and starts afresh`);
    check(!fs.readFileSync(path.join(second.dir, c2.path)).equals(oldBytes), `${L}: old file replaced`);
    const r = run(`${L} after new checkpoint`, 'history', second.dir);
    if (r) {
      checkStats(`${L} after new checkpoint`, r, 'newest checkpoint', 0);
      checkEq(r.json.map((v) => pick(v)), lance, `${L}: history from the new checkpoint`);
    }
  }
  console.log(`  ok ${L}`);
}

// ---------------------------------------------------------------- (f) concurrency

function spawnCheckpoint(dir) {
  return new Promise((resolve) => {
    const p = spawn(lanceverBin, ['checkpoint', dir, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('error', (e) => resolve({ code: -1, out, err: err + String(e) }));
    p.on('close', (code) => resolve({ code, out, err }));
  });
}
async function scenarioF(src) {
  const L = `${src.name} concurrent checkpoint`;
  const dir = path.join(root, 'race_' + src.name + '.lance');
  const seq = path.join(root, 'seq_' + src.name + '.lance');
  fs.cpSync(src.dir, dir, { recursive: true });
  fs.rmSync(path.join(dir, '_checkpoints'), { recursive: true, force: true });
  const race = async (tag, n) => {
    fs.rmSync(seq, { recursive: true, force: true });
    fs.cpSync(dir, seq, { recursive: true });
    const s = checkpointJson(`${L} ${tag} sequential`, seq);
    if (!s) return;
    const ref = fs.readFileSync(path.join(seq, s.path));
    const res = await Promise.all(Array.from({ length: n }, () => spawnCheckpoint(dir)));
    res.forEach((r, i) => check(r.code === 0, `${L} ${tag}: process ${i} exited ${r.code}: ${r.err}`));
    const outs = res.filter((r) => r.code === 0).map((r) => JSON.parse(r.out));
    check(outs.every((o) => o.path === s.path && o.written), `${L} ${tag}: paths ${outs.map((o) => o.path)}`);
    const names = listCheckpoints(dir).filter((f) => f === path.basename(s.path));
    checkEq(names.length, 1, `${L} ${tag}: exactly one file for version ${s.latest_version}`);
    checkEq(listCheckpoints(dir), listCheckpoints(seq), `${L} ${tag}: same _checkpoints listing as sequential`);
    check(fs.readFileSync(path.join(dir, s.path)).equals(ref), `${L} ${tag}: bytes differ from a sequential run`);
  };
  for (let round = 0; round < 4; round++) {
    fs.rmSync(path.join(dir, '_checkpoints'), { recursive: true, force: true });
    await race(`fresh round ${round}`, 2 + (round & 1));
  }
  for (let round = 0; round < 3; round++) {
    await lanceAppend(dir, 9000 + round);
    await race(`incremental round ${round}`, 2);
  }
  const h = run(L, 'history', dir);
  if (h) {
    checkStats(`${L} final`, h, 'newest checkpoint', 0);
    checkEq(h.json.map((v) => pick(v)), await lanceList(dir), `${L}: final history vs listVersions()`);
  }
  console.log(`  ok ${L}`);
}

// ---------------------------------------------------------------- main

const parent = path.join(root, 'lance');
const built = [];
for (const fn of [tenWrites, compaction, v1Names, restore, stableRowIds, concurrent])
  built.push(await fn(parent));
built.push(await handMade(parent));
const byName = {};
for (const ds of built) {
  try {
    byName[ds.name] = await scenarioA(ds);
  } catch (e) {
    check(false, `${ds.name}: scenario (a/b) threw: ${e.stack}`);
  }
}
const get = (n) => built.find((d) => d.name === n);
for (const [name, K] of [['ten_writes', 3], ['v1_names', 2], ['compaction', 9], ['hand_made', 1]]) {
  try { await scenarioC(get(name), K); } catch (e) { check(false, `${name}: scenario (c) threw: ${e.stack}`); }
}
for (const name of ['ten_writes', 'v1_names']) {
  try { await scenarioD(get(name)); } catch (e) { check(false, `${name}: scenario (d) threw: ${e.stack}`); }
}
try { await scenarioE(); } catch (e) { check(false, `scenario (e) threw: ${e.stack}`); }
try { await scenarioF(get('compaction')); } catch (e) { check(false, `scenario (f) threw: ${e.stack}`); }
finish('test_checkpoint');
