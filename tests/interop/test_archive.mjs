// Interop test for the archive (issue 18) against real Lance (LanceDB 0.31.0 = Lance 8.0.0).
//
//  (a) A LanceDB dataset of 40 versions (appends, deletes, updates, an index, tags) is cleaned up
//      with tiny segments (`--segment-rows 4 --max-entries 6`), then grows and is checkpointed
//      again: every segment file under _checkpoints/archive/ and the head are read by LanceDB
//      (each wrapped as the only data file of a one-fragment dataset with a hand-written
//      manifest), and their rows equal `lancever history --json` (the 13 columns that are facts;
//      is_tagged / is_cleaned_up are stored as they were when the file was written, and history
//      recomputes them), with the schema and the archive metadata docs/format.md documents.
//  (b) `lancever history --json` lists every version LanceDB ever listed, and `versions --json`
//      equals LanceDB's listVersions(); --limit and --since agree with the full history.
//  (c) `lancever expire --keep-one-per` / `--retain-versions` then `lancever cleanup
//      --delete-unverified`: LanceDB still lists and reads every retained version with the rows
//      it read before, and history still holds every version (expired ones cleaned up).
// Never skips: a missing peer or binary fails (lib.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { lv, lvJson, openDir, check, checkEq, finish, lanceVersion, pick, scratch, SUMMARY_KEYS } from './lib.mjs';
import { lancedb } from './peer.mjs';
import { rows } from './datasets.mjs';
import { CP_FIELDS, CP_SCHEMA, CP_U64_FIELDS, wrapLanceFile } from './lancewrap.mjs';
import { readVersion } from './reliability.mjs';

const root = scratch('lv-archive-');
const FACTS = CP_FIELDS.filter((f) => f !== 'is_tagged' && f !== 'is_cleaned_up');
// ---- a file read by LanceDB: wrapped as the only data file of a dataset (lancewrap.mjs)
let wraps = 0;
async function lanceRead(file, nrows) {
  const dir = path.join(root, `wrap${wraps++}.lance`);
  wrapLanceFile(dir, file, { fields: CP_SCHEMA, nrows });
  const db = await lancedb.connect(root);
  const t = await db.openTable(path.basename(dir, '.lance'));
  return { schema: await t.schema(), table: await t.query().toArrow() };
}
const inspect = (file) => {
  const r = lv(['inspect', '--json', file]);
  return r.status === 0 ? JSON.parse(r.stdout.replace(/"([^"\\]*)":(-?\d+)([,}])/g, '"$1":"$2"$3')) : null;
};

// A file's rows (read by LanceDB) against history's rows for its versions.
async function checkFile(label, file, history) {
  const ins = inspect(file);
  if (!check(ins, `${label}: lancever inspect failed`)) return 0;
  const n = Number(ins.num_rows);
  let got;
  try { got = await lanceRead(file, n); } catch (e) { check(false, `${label}: LanceDB cannot read it: ${e.message}`); return 0; }
  checkEq(got.schema.fields.map((f) => [f.name, f.nullable]), CP_SCHEMA.map((f) => [f.name, f.nullable]), `${label}: schema as LanceDB sees it`);
  checkEq(got.table.numRows, n, `${label}: rows LanceDB reads`);
  const byV = new Map(history.map((h) => [h.version, h]));
  const cols = CP_FIELDS.map((c) => got.table.getChild(c));
  let bad = 0;
  for (let i = 0; i < got.table.numRows && bad < 3; i++) {
    const v = Number(cols[0].get(i));
    const h = byV.get(v);
    if (!check(h, `${label}: row for version ${v}, which history does not list`)) { bad++; continue; }
    const mine = {}, theirs = {};
    for (const f of FACTS) {
      let g = cols[CP_FIELDS.indexOf(f)].get(i);
      if (typeof g === 'bigint') g = g.toString();
      let e = h[f];
      if (f === 'transaction_properties') g = JSON.parse(g);
      else if (e !== null && (CP_U64_FIELDS.has(f) || f === 'timestamp_millis')) e = String(e);
      mine[f] = g;
      theirs[f] = e;
    }
    if (!checkEq(mine, theirs, `${label}: version ${v}`)) bad++;
  }
  return n;
}

// ---- (a) and (b)
const parent = path.join(root, 'db');
fs.mkdirSync(parent, { recursive: true });
const db = await lancedb.connect(parent);
const t = await db.createTable('a', rows(0, 3));
for (let v = 2; v <= 40; v++) {
  if (v % 9 === 0) await t.delete(`id = ${v}`);
  else if (v % 11 === 0) await t.update({ where: `id < ${v}`, valuesSql: { val: 'val + 1' } });
  else if (v === 20) await t.createIndex('id');
  else await t.add(rows(v * 10, 2));
  if (v === 13 || v === 27) await (await t.tags()).create(`t${v}`, v);
}
const dir = path.join(parent, 'a.lance');
const reference = {};
for (const v of (await t.listVersions()).map((x) => Number(x.version))) reference[v] = (await readVersion(t, v)).rows;
await t.checkoutLatest();
const before = lvJson(['history', dir, '--json']);
checkEq(before.length, 40, 'history before: 40 versions');
const SEAL = ['--segment-rows', '4', '--max-entries', '6'];
lvJson(['cleanup', dir, '--retain-versions', '5', '--older-than', '0s', '--no-error-if-tagged-old-versions', ...SEAL, '--json']);
for (let v = 41; v <= 50; v++) await t.add(rows(v * 10, 1));
for (let v = 41; v <= 50; v++) reference[v] = (await readVersion(t, v)).rows;
await t.checkoutLatest();
const cp = lvJson(['checkpoint', dir, ...SEAL, '--json']);
check(cp.archived_through >= 44, `checkpoint sealed through ${cp.archived_through}`);
const hist = lvJson(['history', dir, '--json']);
checkEq(hist.map((h) => h.version), Array.from({ length: 50 }, (_, i) => i + 1), '(b) history lists every version');
for (const h of before) {
  const now = hist.find((x) => x.version === h.version);
  checkEq(pick(now, FACTS), pick(h, FACTS), `(b) history v${h.version} unchanged by cleanup and sealing`);
}
const segDir = path.join(dir, '_checkpoints', 'archive');
const segs = fs.readdirSync(segDir).filter((n) => /^\d{20}-\d{20}\.lance$/.test(n)).sort();
check(segs.length >= 11, `(a) ${segs.length} segments`);
let segRows = 0;
for (const s of segs) {
  const [first, last] = s.slice(0, -6).split('-').map(Number);
  segRows += await checkFile(`(a) segment ${s}`, path.join(segDir, s), hist);
  const md = inspect(path.join(segDir, s)).metadata;
  checkEq(md['lancever:segment'], `${first}-${last}`, `(a) ${s}: lancever:segment names its range`);
  check(/^crc32c:[0-9a-f]{8}$/.test(md['lancever:archive_checksum'] || ''), `(a) ${s}: archive checksum`);
}
checkEq(segRows, cp.archived_through, '(a) the segments hold every version they answer for');
const heads = fs.readdirSync(path.join(dir, '_checkpoints')).filter((n) => /^\d{20}\.lance$/.test(n)).sort();
const head = path.join(dir, '_checkpoints', heads[heads.length - 1]);
const headRows = await checkFile('(a) head', head, hist);
check(headRows <= 6, `(a) the head holds ${headRows} rows (max_entries 6)`);
const hmd = inspect(head).metadata;
check((hmd['lancever:archive'] || '').startsWith('lancever-archive 1 4 '), `(a) head: archive index ${hmd['lancever:archive']}`);
const lanceVersions = async () => (await (await openDir(dir)).listVersions()).map((v) => pick(lanceVersion(v), SUMMARY_KEYS))
  .sort((x, y) => x.version - y.version);
checkEq(lvJson(['versions', dir, '--json']).map((v) => pick(v, SUMMARY_KEYS)), await lanceVersions(),
  '(b) versions = LanceDB listVersions()');
checkEq(lvJson(['history', dir, '--json', '--limit', '7']).map((h) => h.version), [44, 45, 46, 47, 48, 49, 50], '(b) --limit 7');
checkEq(lvJson(['history', dir, '--json', '--since', '23']).map((h) => h.version), hist.filter((h) => h.version >= 23).map((h) => h.version),
  '(b) --since 23');
const T = hist[29].timestamp_millis;
checkEq(lvJson(['history', dir, '--json', '--since', `@${T}`]).map((h) => h.version),
  hist.filter((h) => h.timestamp_millis >= T).map((h) => h.version), '(b) --since @TIME');

// ---- (c) expire, then cleanup
const dataFiles = () => fs.readdirSync(path.join(dir, 'data')).length;
const data0 = dataFiles();
const ex = lvJson(['expire', dir, '--older-than', '0s', '--retain-versions', '4', '--no-error-if-tagged-old-versions', ...SEAL, '--json']);
check(ex.versions_removed > 0, `(c) expire removed ${ex.versions_removed} manifests`);
const liveAfterExpire = (await lanceVersions()).map((v) => v.version);
checkEq(liveAfterExpire, [13, 27, 47, 48, 49, 50], '(c) after expire: the tagged versions and the newest 4');
checkEq(dataFiles(), data0, '(c) expire deletes no data file');
// Lance's cleanup rule: an unreferenced file newer than the earliest kept version is left alone
// (the kept versions are a suffix); with the old tagged versions kept, the expired versions' files
// are behind that cutoff.  The tags go first, as a user would to reclaim the space (docs/format.md).
for (const tg of ['t13', 't27']) await (await t.tags()).delete(tg);
lvJson(['cleanup', dir, '--older-than', '0s', '--retain-versions', '4', '--delete-unverified', ...SEAL, '--json']);
check(dataFiles() < data0, `(c) the cleanup after expire removes the expired versions' data files (${data0} -> ${dataFiles()})`);
const t2 = await openDir(dir);
const listed = (await t2.listVersions()).map((v) => Number(v.version)).sort((x, y) => x - y);
checkEq(listed, [47, 48, 49, 50], '(c) after cleanup: LanceDB lists the retained versions');
for (const v of listed) {
  const r = await readVersion(t2, v);
  if (check(r.rows, `(c) LanceDB reads v${v}: ${r.error}`)) checkEq(r.rows, reference[v], `(c) rows of v${v}`);
}
const final = lvJson(['history', dir, '--json']);
checkEq(final.map((h) => h.version), Array.from({ length: 50 }, (_, i) => i + 1), '(c) history still holds every version');
checkEq(final.filter((h) => !h.is_cleaned_up).map((h) => h.version), listed, '(c) cleaned up exactly where the manifest is gone');
const chk = lv(['check', dir, '--json']);
checkEq(chk.status, 0, `(c) lancever check: ${chk.stdout.slice(0, 300)}`);
finish('test_archive');
