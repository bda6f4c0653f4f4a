// Interop test for `lancever cleanup` against real Lance (LanceDB 0.31.0 = Lance 8.0.0).
//
//  (a) On LanceDB-written datasets (appends, deletes, updates, btree index, tags, compaction,
//      overwrite, V1 names, stable row ids, branches, restore, concurrent commits):
//      `cleanup --older-than 0s --no-error-if-tagged-old-versions` removes exactly the versions
//      that are neither latest, tagged nor a branch base; LanceDB then reads every retained
//      version back with the same rows (indexed versions through their scalar index), removed
//      versions fail to check out, branches still read, `history` lists every version with
//      is_cleaned_up true exactly for the removed ones and every other field unchanged, and the
//      files deleted are exactly the files the JSON report lists.
//  (b) Twin copies: LanceDB's own cleanup (optimize with a future cutoff, with and without
//      deleteUnverified) and `lancever cleanup --older-than 0s [--delete-unverified]` delete the
//      same set of files (ignoring latest_version_hint.json and _checkpoints/).
//  (c) --dry-run deletes nothing and lists exactly what the real run then deletes.
//  (d) A tag on an old version: non-zero exit naming the tags, nothing changed on disk.
//  (e) --retain-versions / --before-version / combined / default policies select exactly
//      what Lance's rules say.
//  (f) Concurrency: two cleanups at once; cleanups while LanceDB appends row by row.
//  (g) Safety: a manifest whose file path leaves the dataset root → refused, nothing deleted,
//      the outside file untouched.
// Never skips: a missing peer or binary fails (lib.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import {
  lv, lvJson, openDir, check, checkEq, finish, scratch, lanceverBin,
} from './lib.mjs';
import { lancedb } from './peer.mjs';
import { buildAll, demo, tenWrites, compaction, restore, rows } from './datasets.mjs';
import { u, bytes, packed, field, manifestBytes } from './lancewrap.mjs';
import { walkFiles } from './files.mjs';

process.setMaxListeners(0); // scratch() adds one exit listener per openDir
const root = scratch('lv-cl-');
const U64_MAX = (1n << 64n) - 1n;
const CP_FIELDS = ['version', 'timestamp_millis', 'total_fragments', 'total_data_files',
  'total_files_size', 'total_deletion_files', 'total_data_file_rows', 'total_deletion_file_rows',
  'total_rows', 'is_tagged', 'is_cleaned_up', 'transaction_uuid', 'read_version', 'operation_type',
  'transaction_properties'];
const IGNORED = (p) => p === 'latest_version_hint.json' || p.startsWith('_checkpoints/');
const byNum = (a, b) => a - b;
const sortedSet = (s) => [...s].sort();
const omit = (o, keys) => { const r = { ...o }; for (const k of keys) delete r[k]; return r; };

// ---------------------------------------------------------------- helpers

// Every regular file under dir: relative path -> {size, mtimeMs}.
function listing(dir) {
  const out = new Map();
  walkFiles(dir, (r, p) => { const st = fs.statSync(p); out.set(r, { size: st.size, mtimeMs: st.mtimeMs }); });
  return out;
}
const deletedFiles = (before, after) => sortedSet([...before.keys()].filter((p) => !after.has(p)));
const createdFiles = (before, after) => sortedSet([...after.keys()].filter((p) => !before.has(p)));
const listingJson = (l) => JSON.stringify([...l.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)));

function copyDir(src, dst) {
  fs.cpSync(src, dst, { recursive: true, preserveTimestamps: true });
  return dst;
}
let copyIdx = 0;
const freshCopy = (src, tag) => copyDir(src, path.join(root, `${tag}-${copyIdx++}.lance`));

const rowsOf = (arr) => arr.map((r) => r.toJSON()).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

// What LanceDB sees of a dataset: every live version's rows and index names, and each
// branch's latest rows.
async function snapshot(dir, branchNames = []) {
  const t = await openDir(dir);
  const vs = (await t.listVersions()).map((v) => Number(v.version)).sort(byNum);
  const out = { versions: vs, rows: {}, indices: {}, branches: {} };
  for (const v of vs) {
    await t.checkout(v);
    out.rows[v] = rowsOf(await t.query().toArray());
    out.indices[v] = (await t.listIndices()).map((i) => i.name).sort();
  }
  for (const b of branchNames) {
    const bt = await (await t.branches()).checkout(b);
    out.branches[b] = rowsOf(await bt.query().toArray());
  }
  return out;
}

function history(label, dir) {
  const r = lv(['history', dir, '--json']);
  if (!check(r.status === 0, `${label}: history exited ${r.status}: ${r.stderr}`)) return null;
  return JSON.parse(r.stdout);
}

// The versions Lance's rules remove with a policy selecting `sel(v)`: not latest, not tagged
// (main), not a branch base.
function expectedRemoved(versions, exp, sel) {
  const latest = Math.max(...versions);
  const tagged = new Set(Object.values(exp.tags || {}).filter((t) => !t.branch || t.branch === 'main')
    .map((t) => t.version));
  const bases = new Set(Object.values(exp.branches || {}).filter((b) => !b.parent_branch)
    .map((b) => b.parent_version));
  return new Set(versions.filter((v) => v !== latest && !tagged.has(v) && !bases.has(v) && sel(v)));
}

// Runs `lancever cleanup DIR args --json --list`; returns {status, json, stderr}.
function cleanup(dir, args) {
  const r = lv(['cleanup', dir, ...args, '--json', '--list']);
  let json = null;
  if (r.status === 0) { try { json = JSON.parse(r.stdout); } catch (e) { json = { parseError: e.message, raw: r.stdout }; } }
  return { status: r.status, json, stderr: r.stderr };
}

// After a cleanup of `dir` that was expected to remove exactly `removed` (set of versions):
// LanceDB / history / listing checks against `before` = {snap, hist, files}.
async function verifyAfter(label, dir, before, removed, report) {
  const all = before.snap.versions;
  const retained = all.filter((v) => !removed.has(v));
  // LanceDB's view
  let snap;
  try { snap = await snapshot(dir, Object.keys(before.snap.branches)); } catch (e) {
    check(false, `${label}: LanceDB failed to read the cleaned dataset: ${e.message}`);
    return;
  }
  checkEq(snap.versions, retained, `${label}: LanceDB listVersions() after cleanup`);
  for (const v of retained) {
    if (!snap.rows[v]) continue;
    checkEq(snap.rows[v], before.snap.rows[v], `${label}: rows of retained v${v}`);
    checkEq(snap.indices[v], before.snap.indices[v], `${label}: indices of retained v${v}`);
  }
  for (const [b, r] of Object.entries(before.snap.branches))
    checkEq(snap.branches[b], r, `${label}: rows of branch ${b}`);
  // Removed versions fail to check out (fresh handle, so nothing is cached).
  const t = await openDir(dir);
  for (const v of removed) {
    let ok = false;
    try { await t.checkout(v); await t.query().toArray(); ok = true; } catch (e) {
      check(/not found/i.test(e.message), `${label}: checkout(${v}) error should say not found: ${e.message}`);
    }
    check(!ok, `${label}: removed version ${v} still checks out`);
  }
  // Index files of retained indexed versions: a filtered query that uses the btree index.
  for (const v of retained) {
    if (!(before.snap.indices[v] || []).includes('id_idx') || !before.snap.rows[v].length) continue;
    const probe = before.snap.rows[v][Math.floor(before.snap.rows[v].length / 2)].id;
    try {
      await t.checkout(v);
      const q = t.query().where(`id = ${probe}`);
      const plan = await q.explainPlan();
      check(/ScalarIndexQuery/.test(plan), `${label}: v${v} filtered query does not use the index:\n${plan}`);
      checkEq(rowsOf(await q.toArray()), before.snap.rows[v].filter((r) => r.id === probe),
        `${label}: v${v} indexed query id = ${probe}`);
    } catch (e) { check(false, `${label}: indexed query on v${v} failed: ${e.message}`); }
  }
  // History: every version, is_cleaned_up exactly for the removed ones, the rest unchanged.
  const hist = history(label, dir);
  if (hist) {
    checkEq(hist.map((h) => h.version), before.hist.map((h) => h.version), `${label}: history versions`);
    const hb = new Map(before.hist.map((h) => [h.version, h]));
    for (const h of hist) {
      const b = hb.get(h.version);
      if (!b) continue;
      checkEq(h.is_cleaned_up, removed.has(h.version), `${label}: history v${h.version} is_cleaned_up`);
      // The 15 checkpoint fields (a checkpointed history answers with those only).
      const pick = (o) => omit(Object.fromEntries(CP_FIELDS.map((k) => [k, o[k]])), ['is_cleaned_up']);
      checkEq(pick(h), pick(b), `${label}: history v${h.version} (${removed.has(h.version) ? 'removed' : 'retained'}) other fields`);
    }
    const live = lv(['versions', dir, '--json']);
    if (check(live.status === 0, `${label}: versions exited ${live.status}: ${live.stderr}`))
      checkEq(JSON.parse(live.stdout).map((x) => x.version), retained, `${label}: lancever versions`);
  }
  // Files: what went is what the report listed; nothing appeared but a checkpoint.
  const after = listing(dir);
  const gone = deletedFiles(before.files, after);
  if (report) {
    checkEq(gone, sortedSet(report.files.map((f) => f.path)), `${label}: deleted files = reported files`);
    checkEq(report.versions_removed, removed.size, `${label}: versions_removed`);
    checkEq(report.versions_total, all.length, `${label}: versions_total`);
    checkEq(report.files_removed, report.files.length, `${label}: files_removed = listed files`);
    checkEq(report.bytes_removed, report.files.reduce((s, f) => s + f.size_bytes, 0), `${label}: bytes_removed`);
    for (const f of report.files) {
      const b = before.files.get(f.path);
      check(b && b.size === f.size_bytes, `${label}: reported size of ${f.path} (${f.size_bytes}) vs disk ${b && b.size}`);
    }
    const wantManifests = sortedSet(before.hist.filter((h) => removed.has(h.version)).map((h) => h.manifest_path));
    checkEq(sortedSet(report.files.filter((f) => f.kind === 'manifest').map((f) => f.path)), wantManifests,
      `${label}: manifests removed`);
    if (removed.size) check(typeof report.checkpoint === 'string' && fs.existsSync(path.join(dir, report.checkpoint)),
      `${label}: checkpoint ${report.checkpoint} written`);
  }
  checkEq(createdFiles(before.files, after).filter((p) => !p.startsWith('_checkpoints/')), [],
    `${label}: files created by cleanup`);
}

async function capture(dir, branchNames = []) {
  return { snap: await snapshot(dir, branchNames), hist: history('capture', dir), files: listing(dir) };
}

// Spawns lancever asynchronously; resolves {status, signal, stdout, stderr}.
function lvAsync(args) {
  return new Promise((resolve) => {
    const p = spawn(lanceverBin, args);
    let stdout = '', stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}
function checkCleanExit(label, r) {
  check(r.signal === null, `${label}: killed by ${r.signal}: ${r.stderr}`);
  if (r.status !== 0)
    check(/^lancever: .+/m.test(r.stderr), `${label}: exited ${r.status} without a message: '${r.stderr}'`);
}

// ---------------------------------------------------------------- (a) datasets of every kind

const built = root + '/built';
const scenarios = await buildAll(built);
scenarios.push(await demo(built, 'demo'));
const tw = scenarios.find((s) => s.name === 'ten_writes');

for (const sc of scenarios) {
  const L = `(a) ${sc.name}`;
  const dir = freshCopy(sc.dir, 'a-' + sc.name);
  const before = await capture(dir, Object.keys(sc.expectations.branches || {}));
  if (!before.hist) continue;
  check(before.hist.every((h) => !h.is_cleaned_up), `${L}: fresh dataset has cleaned-up versions`);
  const removed = expectedRemoved(before.snap.versions, sc.expectations, () => true);
  const r = cleanup(dir, ['--older-than', '0s', '--no-error-if-tagged-old-versions']);
  if (!check(r.status === 0 && r.json && !r.json.parseError, `${L}: cleanup exited ${r.status}: ${r.stderr} ${r.json && r.json.raw}`)) continue;
  await verifyAfter(L, dir, before, removed, r.json);
  // A second run removes no version and changes no history.
  const b2 = { ...before, files: listing(dir) };
  const r2 = cleanup(dir, ['--older-than', '0s', '--no-error-if-tagged-old-versions']);
  if (check(r2.status === 0, `${L}: second cleanup exited ${r2.status}: ${r2.stderr}`)) {
    checkEq(r2.json.versions_removed, 0, `${L}: second cleanup versions_removed`);
    checkEq(r2.json.files, [], `${L}: second cleanup files`);
    const h = history(L, dir);
    if (h) checkEq(h.map((x) => [x.version, x.is_cleaned_up]),
      before.hist.map((x) => [x.version, removed.has(x.version)]), `${L}: history after second cleanup`);
    checkEq(deletedFiles(b2.files, listing(dir)), [], `${L}: second cleanup deleted files`);
  }
}

// ---------------------------------------------------------------- (b) twin copies vs LanceDB

// A dataset with appends, deletes, an update, a btree index (dropped by the overwrite),
// an overwrite and a final compaction, then stray files of every kind, some old, some new.
async function twinOriginal(parent) {
  const db = await (fs.mkdirSync(parent, { recursive: true }), lancedb.connect(parent));
  const t = await db.createTable('twin', rows(0, 5));
  await t.add(rows(5, 5));
  await t.add(rows(10, 5));
  await t.delete('id < 3');
  await t.update({ where: 'id > 10', valuesSql: { val: 'val * 2' } });
  await t.createIndex('id', { config: lancedb.Index.btree() });
  await t.add(rows(15, 5));
  await t.delete('id = 7');
  await t.add(rows(100, 3), { mode: 'overwrite' });
  await t.add(rows(200, 2));
  await t.add(rows(300, 2));
  await t.delete('id = 100');
  await t.optimize({ cleanupOlderThan: new Date(0) });
  const v = await t.version();
  await t.optimize({ cleanupOlderThan: new Date(0) });
  if (await t.version() !== v) throw new Error('twin: a second optimize committed a version');
  const dir = path.join(parent, 'twin.lance');
  // Strays: [relative path, age in ms (0 = now)].
  const old = 10 * 86400e3, hour = 3600e3;
  const strays = [
    ['data/stray-old.lance', old], ['data/stray-hour.lance', hour], ['data/stray-new.lance', 0],
    ['data/sub/nested-old.lance', old], ['data/notes-old.txt', old],
    ['_deletions/0-1-999.arrow', old], ['_deletions/1-2-998.bin', hour],
    ['_transactions/99-00000000-0000-0000-0000-000000000000.txn', old],
    ['_transactions/98-00000000-0000-0000-0000-000000000001.txn', hour],
    ['_indices/11111111-2222-3333-4444-555555555555/page_data.lance', old],
    ['_indices/11111111-2222-3333-4444-666666666666/page_data.lance', hour],
    ['_versions/.tmp_stray_old', old], ['_versions/.tmp_stray_hour', hour],
    ['misc/old.lance', old], ['other-old.lance', old],
  ];
  const now = Date.now();
  for (const [p, age] of strays) {
    const f = path.join(dir, p);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, 'stray ' + p);
    if (age) fs.utimesSync(f, (now - age) / 1000, (now - age) / 1000);
  }
  return dir;
}

const twinDir = await twinOriginal(root + '/twin');
const twinRows = (await snapshot(twinDir)).rows;
for (const unverified of [true, false]) {
  const L = `(b) twin deleteUnverified=${unverified}`;
  const pa = path.join(root, `twinA-${unverified}`), pb = path.join(root, `twinB-${unverified}`);
  fs.mkdirSync(pa); fs.mkdirSync(pb);
  const A = copyDir(twinDir, path.join(pa, 'ds.lance'));
  const B = copyDir(twinDir, path.join(pb, 'ds.lance'));
  const before = listing(A);
  checkEq(listingJson(listing(B)), listingJson(before), `${L}: twin copies identical (cp keeps mtimes)`);
  // A: LanceDB's own cleanup.
  const ta = await (await lancedb.connect(pa)).openTable('ds');
  const va = await ta.version();
  let stats = null;
  try {
    stats = await ta.optimize({ cleanupOlderThan: new Date(Date.now() + 1000), deleteUnverified: unverified });
  } catch (e) { check(false, `${L}: LanceDB optimize failed: ${e.message}`); }
  checkEq(await ta.version(), va, `${L}: LanceDB optimize committed no version (nothing to compact)`);
  // B: ours.
  const rb = lv(['cleanup', B, '--older-than', '0s', '--json', '--list', ...(unverified ? ['--delete-unverified'] : [])]);
  if (!check(rb.status === 0, `${L}: lancever cleanup exited ${rb.status}: ${rb.stderr}`)) continue;
  const jb = JSON.parse(rb.stdout);
  const goneA = deletedFiles(before, listing(A)).filter((p) => !IGNORED(p));
  const goneB = deletedFiles(before, listing(B)).filter((p) => !IGNORED(p));
  const onlyA = goneA.filter((p) => !goneB.includes(p)), onlyB = goneB.filter((p) => !goneA.includes(p));
  check(onlyA.length === 0 && onlyB.length === 0,
    `${L}: deleted file sets differ\n    only LanceDB deleted: ${JSON.stringify(onlyA)}\n    only lancever deleted: ${JSON.stringify(onlyB)}`);
  checkEq(createdFiles(before, listing(B)).filter((p) => !IGNORED(p)), [], `${L}: lancever created files`);
  if (stats) {
    checkEq(jb.versions_removed, stats.prune.oldVersionsRemoved, `${L}: versions removed vs LanceDB`);
    checkEq(jb.bytes_removed, stats.prune.bytesRemoved, `${L}: bytes removed vs LanceDB`);
  }
  const latest = Math.max(...Object.keys(twinRows).map(Number));
  for (const [d, who] of [[A, 'LanceDB-cleaned'], [B, 'lancever-cleaned']]) {
    try {
      const t = await openDir(d);
      checkEq(rowsOf(await t.query().toArray()), twinRows[latest], `${L}: ${who} copy latest rows`);
    } catch (e) { check(false, `${L}: ${who} copy unreadable: ${e.message}`); }
  }
  console.log(`${L}: LanceDB deleted ${goneA.length} files, lancever ${goneB.length}`);
}

// ---------------------------------------------------------------- (c) --dry-run

for (const [name, src, args] of [
  ['twin --delete-unverified', twinDir, ['--older-than', '0s', '--delete-unverified']],
  ['twin (7-day rule)', twinDir, ['--older-than', '0s']],
  ['ten_writes tagged', tw.dir, ['--older-than', '0s', '--no-error-if-tagged-old-versions']],
  ['compaction retain 4', scenarios.find((s) => s.name === 'compaction').dir, ['--retain-versions', '4', '--no-error-if-tagged-old-versions']],
]) {
  const L = `(c) dry-run ${name}`;
  const dir = freshCopy(src, 'c');
  const before = listing(dir);
  const hist0 = history(L, dir);
  const dr = lv(['cleanup', dir, ...args, '--dry-run', '--json']);
  if (!check(dr.status === 0, `${L}: dry run exited ${dr.status}: ${dr.stderr}`)) continue;
  const dj = JSON.parse(dr.stdout);
  checkEq(dj.dry_run, true, `${L}: dry_run flag`);
  checkEq(dj.checkpoint, null, `${L}: dry run writes no checkpoint`);
  checkEq(listingJson(listing(dir)), listingJson(before), `${L}: dry run changed nothing on disk`);
  checkEq(history(L, dir), hist0, `${L}: dry run changed no history`);
  check(dj.files.length > 0, `${L}: dry run lists something`);
  const rr = cleanup(dir, args);
  if (!check(rr.status === 0, `${L}: real run exited ${rr.status}: ${rr.stderr}`)) continue;
  const key = (f) => JSON.stringify([f.path, f.kind, f.size_bytes, f.reason]);
  checkEq(dj.files.map(key).sort(), rr.json.files.map(key).sort(), `${L}: dry-run list = real run list`);
  checkEq(deletedFiles(before, listing(dir)), sortedSet(dj.files.map((f) => f.path)), `${L}: real run deleted = dry-run list`);
  for (const k of ['versions_total', 'versions_removed', 'files_removed', 'bytes_removed', 'by_kind'])
    checkEq(rr.json[k], dj[k], `${L}: ${k} dry vs real`);
}

// ---------------------------------------------------------------- (d) tags on old versions

{
  const L = '(d) tagged old versions';
  for (const args of [['--older-than', '0s'], ['--retain-versions', '1'], ['--before-version', '9'],
    ['--older-than', '0s', '--error-if-tagged-old-versions'], ['--older-than', '0s', '--delete-unverified']]) {
    const dir = freshCopy(tw.dir, 'd');
    const before = listing(dir);
    const hist0 = history(L, dir);
    const r = lv(['cleanup', dir, ...args, '--json', '--list']);
    check(r.status !== 0, `${L} ${args.join(' ')}: exit status ${r.status}, expected non-zero`);
    check(/keep6/.test(r.stderr) && /keep8/.test(r.stderr) && /tagged version/.test(r.stderr),
      `${L} ${args.join(' ')}: message should name both tags: ${r.stderr}`);
    check(/2 tagged version\(s\) have been marked for cleanup/.test(r.stderr),
      `${L} ${args.join(' ')}: Lance's message: ${r.stderr}`);
    checkEq(listingJson(listing(dir)), listingJson(before), `${L} ${args.join(' ')}: nothing changed on disk`);
    checkEq(history(L, dir), hist0, `${L} ${args.join(' ')}: history unchanged`);
  }
  // Only keep8 in range → the message names it alone.
  {
    const dir = freshCopy(tw.dir, 'd');
    const r = lv(['cleanup', dir, '--before-version', '6', '--json']);
    check(r.status === 0, `${L}: --before-version 6 (tags 6, 8 not selected) exit ${r.status}: ${r.stderr}`);
  }
  {
    const dir = freshCopy(tw.dir, 'd');
    const before = listing(dir);
    const r = lv(['cleanup', dir, '--before-version', '8', '--json']);
    check(r.status !== 0 && /keep6/.test(r.stderr) && !/keep8/.test(r.stderr) && /1 tagged version/.test(r.stderr),
      `${L}: --before-version 8 should fail naming keep6 only: ${r.status} ${r.stderr}`);
    checkEq(listingJson(listing(dir)), listingJson(before), `${L}: --before-version 8 nothing changed`);
  }
  // Nothing selected (cutoff 1 day) → no error, as LanceDB's case C.
  {
    const dir = freshCopy(tw.dir, 'd');
    const before = listing(dir);
    const r = lv(['cleanup', dir, '--older-than', '1d', '--json']);
    check(r.status === 0, `${L}: --older-than 1d exit ${r.status}: ${r.stderr}`);
    checkEq(deletedFiles(before, listing(dir)), [], `${L}: --older-than 1d deleted files`);
  }
  // After LanceDB deletes both tags and tags the latest, cleanup works.
  {
    const dir = freshCopy(tw.dir, 'd');
    const t = await openDir(dir);
    const tags = await t.tags();
    await tags.delete('keep6'); await tags.delete('keep8'); await tags.create('cur', await t.version());
    const before = await capture(dir);
    const exp = { tags: { cur: { version: 10, branch: null } }, branches: {} };
    const r = cleanup(dir, ['--older-than', '0s']);
    if (check(r.status === 0, `${L}: after deleting tags exit ${r.status}: ${r.stderr}`))
      await verifyAfter(`${L} tags deleted`, dir, before, expectedRemoved(before.snap.versions, exp, () => true), r.json);
  }
}

// ---------------------------------------------------------------- (e) policies

{
  const rs = scenarios.find((s) => s.name === 'restore');
  const cmp = scenarios.find((s) => s.name === 'compaction');
  const cases = [];
  for (const sc of [rs, cmp, tw]) {
    const vs = sc.expectations.versions.map((v) => v.version).sort(byNum);
    const retainBefore = (n) => (n >= vs.length ? vs[0] : vs[vs.length - n]);
    const extra = Object.keys(sc.expectations.tags).length ? ['--no-error-if-tagged-old-versions'] : [];
    for (const n of [1, 3, vs.length - 1, vs.length, vs.length + 5])
      cases.push([sc, [`--retain-versions`, String(n), ...extra], (v) => v < retainBefore(n)]);
    cases.push([sc, ['--retain-versions', '3', '--older-than', '0s', ...extra], (v) => v < retainBefore(3)]);
    cases.push([sc, ['--retain-versions', '3', '--older-than', '1d', ...extra], () => false]);
    for (const V of [1, 2, 5, vs[vs.length - 1], vs[vs.length - 1] + 10])
      cases.push([sc, ['--before-version', String(V), ...extra], (v) => v < V]);
    cases.push([sc, ['--before-version', '5', '--retain-versions', '5', ...extra], (v) => v < 5 && v < retainBefore(5)]);
    cases.push([sc, ['--before-version', '5', '--older-than', '0s', ...extra], (v) => v < 5]);
    cases.push([sc, [...extra], () => false]); // default: older than 7 days
    cases.push([sc, ['--older-than', '36h', ...extra], () => false]);
  }
  for (const [sc, args, sel] of cases) {
    const L = `(e) ${sc.name} ${args.join(' ')}`;
    const dir = freshCopy(sc.dir, 'e');
    const before = await capture(dir);
    const removed = expectedRemoved(before.snap.versions, sc.expectations, sel);
    const r = cleanup(dir, args);
    if (!check(r.status === 0, `${L}: exit ${r.status}: ${r.stderr}`)) continue;
    checkEq(sortedSet(before.hist.filter((h) => r.json.files.some((f) => f.path === h.manifest_path)).map((h) => String(h.version))),
      sortedSet([...removed].map(String)), `${L}: removed versions`);
    await verifyAfter(L, dir, before, removed, r.json);
  }
  // retain 3 twice: the second run sees 3 live versions (or the tagged ones) and removes nothing more.
  {
    const L = '(e) restore retain 3 twice';
    const dir = freshCopy(rs.dir, 'e');
    const r1 = cleanup(dir, ['--retain-versions', '3']);
    const r2 = cleanup(dir, ['--retain-versions', '3']);
    check(r1.status === 0 && r2.status === 0, `${L}: exits ${r1.status} ${r2.status}: ${r1.stderr}${r2.stderr}`);
    if (r2.json) checkEq(r2.json.versions_removed, 0, `${L}: second run versions_removed`);
  }
  // Bad arguments are usage errors, nothing done.
  for (const args of [['--retain-versions', '0'], ['--retain-versions', '-1'], ['--before-version', '0'],
    ['--older-than', 'soon'], ['--older-than', '-1d'], ['--bogus']]) {
    const dir = freshCopy(rs.dir, 'e');
    const before = listing(dir);
    const r = lv(['cleanup', dir, ...args]);
    check(r.status !== 0 && r.stderr.length > 0, `(e) bad args ${args.join(' ')}: exit ${r.status}`);
    checkEq(listingJson(listing(dir)), listingJson(before), `(e) bad args ${args.join(' ')}: nothing changed`);
  }
}

// ---------------------------------------------------------------- (f) concurrency

{
  // Two cleanups at once, several rounds, on datasets with and without tags.
  for (const sc of [tw, scenarios.find((s) => s.name === 'compaction'), scenarios.find((s) => s.name === 'restore')]) {
    for (let round = 0; round < 4; round++) {
      const L = `(f) two cleanups ${sc.name} #${round}`;
      const dir = freshCopy(sc.dir, 'f');
      const before = await capture(dir);
      const opts = ['--older-than', '0s', '--no-error-if-tagged-old-versions', ...(round % 2 ? ['--delete-unverified'] : [])];
      const args = ['cleanup', dir, ...opts, '--json', '--list'];
      const [r1, r2] = await Promise.all([lvAsync(args), lvAsync(args)]);
      checkCleanExit(`${L} [1]`, r1);
      checkCleanExit(`${L} [2]`, r2);
      check(r1.status === 0 || r2.status === 0, `${L}: both failed: ${r1.stderr} | ${r2.stderr}`);
      // Whatever happened: history complete, latest and tagged read.
      const h = history(L, dir);
      if (h) checkEq(h.map((x) => x.version), before.hist.map((x) => x.version), `${L}: history complete`);
      // A rerun finishes the job; the end state is exactly the sequential one.
      const r3 = cleanup(dir, opts);
      check(r3.status === 0, `${L}: rerun exit ${r3.status}: ${r3.stderr}`);
      await verifyAfter(L, dir, before, expectedRemoved(before.snap.versions, sc.expectations, () => true), null);
    }
  }

  // Cleanups in a loop while LanceDB appends 20 rows one at a time.
  for (const [sc, extra] of [[tw, ['--no-error-if-tagged-old-versions']], [scenarios.find((s) => s.name === 'restore'), []],
    [scenarios.find((s) => s.name === 'restore'), ['--delete-unverified']]]) {
    const L = `(f) cleanup during appends ${sc.name} ${extra.join(' ')}`;
    const dir = freshCopy(sc.dir, 'f');
    const before = await capture(dir);
    const t = await openDir(dir);
    const latest0 = await t.version();
    let appending = true, runs = 0, fails = 0;
    const loop = (async () => {
      while (appending) {
        const r = await lvAsync(['cleanup', dir, '--older-than', '0s', ...extra, '--json']);
        runs++;
        if (r.status !== 0) fails++;
        checkCleanExit(`${L} run ${runs}`, r);
      }
    })();
    const appendErrors = [];
    for (let i = 0; i < 20; i++) {
      try { await t.add(rows(5000 + i, 1)); } catch (e) { appendErrors.push(`append ${i}: ${e.message}`); }
    }
    appending = false;
    await loop;
    checkEq(appendErrors, [], `${L}: every append succeeded`);
    const t2 = await openDir(dir);
    const latest = await t2.version();
    checkEq(latest, latest0 + 20, `${L}: latest version`);
    const got = rowsOf(await t2.query().toArray());
    const want = [...before.snap.rows[latest0], ...rows(5000, 20).map((r) => ({ id: r.id, val: r.val, name: r.name }))];
    checkEq(got, want, `${L}: latest rows = before + 20 appended`);
    const h = history(L, dir);
    if (h) checkEq(h.map((x) => x.version), Array.from({ length: latest }, (_, i) => i + 1), `${L}: history lists 1..${latest}`);
    for (const [name, tg] of Object.entries(sc.expectations.tags)) {
      await t2.checkout(tg.version);
      checkEq(rowsOf(await t2.query().toArray()), before.snap.rows[tg.version], `${L}: tag ${name} rows`);
    }
    console.log(`${L}: ${runs} cleanups ran alongside, ${fails} failed cleanly`);
  }
}

// A commit landing between the cleanup's manifest listing and its file listing, whose data
// file's mtime is not after the latest manifest's timestamp (file systems stamp mtimes from a
// coarse clock, measured up to ~2 ms behind CLOCK_REALTIME here, so a data file written right
// after a commit can look older than it): made deterministic by delaying the cleanup's first
// open of data/ with strace and stamping the file as the coarse clock may.
for (const extra of [[], ['--delete-unverified']]) {
  const L = `(f) commit between manifest and file listing ${extra.join(' ')}`;
  const strace = ['/usr/bin/strace', '/bin/strace'].find((p) => fs.existsSync(p));
  if (!check(strace, `${L}: strace is needed for this check (apt-get install strace)`)) break;
  const dir = freshCopy(scenarios.find((s) => s.name === 'restore').dir, 'f');
  const t = await openDir(dir);
  const tsN = history(L, dir).at(-1).timestamp_millis;
  const p = spawn(strace, ['-f', '-qq', '-o', '/dev/null', '-P', path.join(dir, 'data'), '-e', 'trace=openat',
    '-e', 'inject=openat:delay_enter=1500000:when=1',
    lanceverBin, 'cleanup', dir, '--older-than', '0s', ...extra, '--json', '--list'],
    // LeakSanitizer cannot run under ptrace (an ASan build would exit 1 at the end for that)
    { env: { ...process.env, ASAN_OPTIONS: `${process.env.ASAN_OPTIONS || ''}:detect_leaks=0` } });
  let out = '', errs = '';
  p.stdout.on('data', (d) => { out += d; });
  p.stderr.on('data', (d) => { errs += d; });
  const done = new Promise((r) => p.on('close', r));
  await new Promise((r) => setTimeout(r, 500));
  const before = new Set(fs.readdirSync(path.join(dir, 'data')));
  await t.add(rows(9000, 1));
  const nf = fs.readdirSync(path.join(dir, 'data')).filter((f) => !before.has(f));
  fs.utimesSync(path.join(dir, 'data', nf[0]), (tsN - 1) / 1000, (tsN - 1) / 1000);
  const status = await done;
  check(status === 0, `${L}: cleanup exit ${status}: ${errs.slice(0, 600)}`);
  check(!out.includes(nf[0]), `${L}: cleanup deleted data/${nf[0]}, the data file of the concurrent commit v${await t.version()}:\n${out}`);
  try { await (await openDir(dir)).query().toArray(); } catch (e) { check(false, `${L}: latest unreadable: ${e.message.slice(0, 300)}`); }
}

// ---------------------------------------------------------------- (g) paths leaving the root

// Hand-written manifests (docs/lance-reference.md, "The LanceDB peers"), with lancewrap.mjs's encoder.

function handManifest(version, { dataPath = 'x.lance', txn = '', externalRowIds = null }) {
  const df = Buffer.concat([bytes(1, dataPath), packed(2, [0, 1, 2]), packed(3, [0, 1, 2]), u(4, 2), u(5, 1), u(6, 921)]);
  const frag = Buffer.concat([u(1, 0), bytes(2, df), u(4, 3),
    externalRowIds ? bytes(6, Buffer.concat([bytes(1, externalRowIds), u(2, 0), u(3, 10)])) : Buffer.alloc(0)]);
  const ts = bytes(7, Buffer.concat([u(1, Math.floor(Date.now() / 1000))]));
  return manifestBytes(Buffer.concat([field('id', 0, 'double', true), field('val', 1, 'double', true),
    field('name', 2, 'string', true), bytes(2, frag), u(3, version), ts, u(11, 0),
    txn ? bytes(12, txn) : Buffer.alloc(0)]));
}

{
  const variants = [
    ['data ../../outside.lance', { dataPath: '../../outside.lance' }],
    ['data ../inside.lance', { dataPath: '../inside.lance' }],
    ['data a/../../../outside.lance', { dataPath: 'a/../../../outside.lance' }],
    ['data absolute', { dataPath: null }],
    ['transaction ../../outside.txn', { txn: '../../outside.txn' }],
    ['external row ids ../outside.bin', { externalRowIds: '../outside.bin' }],
  ];
  for (const [name, opts] of variants) {
    for (const where of ['latest', 'old']) {
      const L = `(g) ${name} (${where} version)`;
      const parent = path.join(root, `g-${copyIdx++}`);
      fs.mkdirSync(parent);
      const dir = copyDir(scenarios.find((s) => s.name === 'restore').dir, path.join(parent, 'ds.lance'));
      const outside = path.join(parent, 'outside.lance');
      fs.writeFileSync(outside, 'outside');
      fs.writeFileSync(path.join(parent, 'outside.txn'), 'outside');
      fs.writeFileSync(path.join(parent, 'outside.bin'), 'outside');
      fs.utimesSync(outside, 1e6, 1e6);
      if (opts.dataPath === null) opts.dataPath = outside;
      const h = history(L, dir);
      const latest = Math.max(...h.map((x) => x.version));
      const vnum = where === 'latest' ? latest + 1 : 1;
      const mpath = path.join(dir, '_versions', (U64_MAX - BigInt(vnum)).toString().padStart(20, '0') + '.manifest');
      fs.writeFileSync(mpath, handManifest(vnum, opts));
      const before = listing(dir), outBefore = listing(parent);
      const r = lv(['cleanup', dir, '--older-than', '0s', '--delete-unverified', '--json', '--list']);
      check(r.status !== 0, `${L}: cleanup exit ${r.status}, expected a refusal`);
      check(/leave the dataset root|unsafe/i.test(r.stderr), `${L}: message should say the path leaves the root: ${r.stderr}`);
      checkEq(listingJson(listing(dir)), listingJson(before), `${L}: nothing changed in the dataset`);
      checkEq(listingJson(listing(parent)), listingJson(outBefore), `${L}: nothing changed around it`);
      const dr = lv(['cleanup', dir, '--older-than', '0s', '--dry-run', '--json']);
      check(dr.status !== 0, `${L}: dry run should refuse too (exit ${dr.status})`);
    }
  }
}

finish('test_cleanup');
