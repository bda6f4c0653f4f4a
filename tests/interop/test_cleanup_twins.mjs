// Twin cleanups on the peer (Lance 8.0.0 or 12.0.0): the same dataset cleaned by LanceDB
// (optimize with cleanupOlderThan, deleteUnverified false/true; nothing left to compact)
// and by `lancever cleanup --older-than` with the same cutoff must refuse alike (tags on
// old versions) or delete the same files - except where the difference is known and
// lancever's side is the safe one, which is asserted as such:
//   - a branch forked from an old main version: Lance (8 and 12) keeps that version's
//     manifest and data files but deletes its transaction file; lancever keeps the
//     transaction file too (never delete what a retained version names).
// Scenarios: tags on old / mid / new versions with a cutoff now or between versions,
// no tags, a tag on the latest version, and a branch.  Lance cleans the original in
// place (a branch's base path is absolute, so a copy's branch would point at the
// original); lancever cleans a copy made first.  File sets ignore latest_version_hint.json
// and _checkpoints/.
import fs from 'node:fs';
import path from 'node:path';
import { lancedb, lv, check, checkEq, finish, scratch, peerName } from './lib.mjs';
import { walkFiles } from './files.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const root = scratch('lv-twins-');
const rows = (a, n) => Array.from({ length: n }, (_, i) => ({ id: a + i, val: (a + i) * 1.5, name: 'r' + (a + i) }));
function listing(dir) {
  const out = new Set();
  walkFiles(dir, (r) => out.add(r));
  return out;
}
const IGN = (p) => p.endsWith('latest_version_hint.json') || p.includes('_checkpoints/');
const gone = (b, a) => [...b].filter((p) => !a.has(p) && !IGN(p)).sort();
const TAGGED_ERR = /tagged version\(s\) have been marked for cleanup/;

// History v1..v8 + compaction, tags old (v3) / mid (last before tMid) / new (after tMid).
async function buildTagged(parent) {
  const db = await lancedb.connect(parent);
  const t = await db.createTable('ds', rows(0, 5));
  for (let k = 1; k <= 3; k++) await t.add(rows(k * 10, 5));
  await t.delete('id < 3');
  await t.update({ where: 'id > 30', valuesSql: { val: 'val * 2' } });
  await t.createIndex('id', { config: lancedb.Index.btree() });
  await t.optimize({ cleanupOlderThan: new Date(0) });
  await t.optimize({ cleanupOlderThan: new Date(0) });
  const tags = await t.tags();
  await tags.create('old', 3);
  await tags.create('mid', await t.version());
  await sleep(1200);
  const tMid = Date.now();
  await sleep(1200);
  await t.createIndex('id', { config: lancedb.Index.btree(), replace: true });
  await tags.create('new', await t.version());
  await t.createIndex('id', { config: lancedb.Index.btree(), replace: true });
  return { dir: path.join(parent, 'ds.lance'), tMid };
}

async function buildBranched(parent, tagLatest) {
  const db = await lancedb.connect(parent);
  const t = await db.createTable('ds', rows(0, 5));
  for (let k = 1; k <= 5; k++) await t.add(rows(k * 10, 5));
  await t.delete('id < 3');
  await t.optimize({ cleanupOlderThan: new Date(0) });
  await t.optimize({ cleanupOlderThan: new Date(0) });
  if (tagLatest) await (await t.tags()).create('latest', await t.version());
  else {
    const feat = await (await t.branches()).create('feat', undefined, 5);
    await feat.add(rows(500, 2));
    await (await feat.tags()).create('featTag', await feat.version());
  }
  return path.join(parent, 'ds.lance');
}

// Runs both cleanups: Lance on dirA (in place), lancever on dirB; returns the outcome.
async function twin(dirA, dirB, cutoff, unverified) {
  const before = listing(dirA);
  checkEq([...listing(dirB)].sort(), [...before].sort(), 'twin copies start identical');
  let lance;
  try {
    const ta = await (await lancedb.connect(path.dirname(dirA))).openTable('ds');
    const va = await ta.version();
    const st = await ta.optimize({ cleanupOlderThan: new Date(cutoff), deleteUnverified: unverified });
    lance = { ok: true, removed: st.prune.oldVersionsRemoved, committed: (await ta.version()) - va };
  } catch (e) { lance = { ok: false, err: e.message }; }
  const older = `${Math.max(0, Date.now() - cutoff)}ms`;
  const r = lv(['cleanup', dirB, '--older-than', older, '--json', ...(unverified ? ['--delete-unverified'] : [])]);
  const goneA = gone(before, listing(dirA)), goneB = gone(before, listing(dirB));
  return { lance, ours: r, goneA, goneB, onlyA: goneA.filter((p) => !goneB.includes(p)),
    onlyB: goneB.filter((p) => !goneA.includes(p)) };
}

function expectSame(label, o) {
  checkEq(o.ours.status === 0, o.lance.ok, `${label}: both succeed or both refuse (lancever: ${o.ours.stderr.trim()}; Lance: ${o.lance.err || 'ok'})`);
  if (!o.lance.ok) {
    check(TAGGED_ERR.test(o.lance.err) && TAGGED_ERR.test(o.ours.stderr), `${label}: both refuse for tagged old versions`);
    checkEq([o.goneA.length, o.goneB.length], [0, 0], `${label}: a refusal deletes nothing`);
    return;
  }
  checkEq(o.lance.committed, 0, `${label}: LanceDB optimize committed no version`);
  check(o.onlyA.length === 0 && o.onlyB.length === 0,
    `${label}: deleted sets differ; only Lance: ${JSON.stringify(o.onlyA)} only lancever: ${JSON.stringify(o.onlyB)}`);
  checkEq(JSON.parse(o.ours.stdout).versions_removed, o.lance.removed, `${label}: versions removed`);
}

// Tag scenarios on copies of one tagged dataset (no branches: copies are faithful).
const tg = await buildTagged(path.join(root, 'tagged'));
const SC = [['all tags, cutoff now', ['old', 'mid', 'new'], 'now'], ['all tags, cutoff between', ['old', 'mid', 'new'], 'mid'],
  ['tags mid+new, cutoff between', ['mid', 'new'], 'mid'], ['tag new only, cutoff between', ['new'], 'mid'],
  ['tag new only, cutoff now', ['new'], 'now'], ['no tags, cutoff between', [], 'mid'], ['tag mid only, cutoff now', ['mid'], 'now']];
let n = 0, agree = 0;
for (const [label, keep, cut] of SC) {
  for (const unverified of [false, true]) {
    const dirs = [0, 1].map((k) => path.join(root, `t${n}-${k}`, 'ds.lance'));
    n++;
    for (const d of dirs) {
      fs.cpSync(tg.dir, d, { recursive: true, preserveTimestamps: true });
      for (const t of ['old', 'mid', 'new']) if (!keep.includes(t)) fs.rmSync(path.join(d, '_refs', 'tags', `${t}.json`));
    }
    const o = await twin(dirs[0], dirs[1], cut === 'now' ? Date.now() + 1000 : tg.tMid, unverified);
    const L = `${peerName} ${label}${unverified ? ' deleteUnverified' : ''}`;
    expectSame(L, o);
    console.log(`  ${L}: Lance ${o.lance.ok ? `removed ${o.lance.removed} versions, ${o.goneA.length} files` : 'refused (tagged old versions)'}; lancever ${o.ours.status === 0 ? `${o.goneB.length} files` : 'refused'}`);
    agree++;
  }
}

// Tag on the latest version; a branch forked from main v5 (Lance cleans in place).
for (const [label, tagLatest] of [['tag on latest, cutoff now', true], ['branch from v5, cutoff now', false]]) {
  const dirA = await buildBranched(path.join(root, `b-${tagLatest}`), tagLatest);
  const dirB = path.join(root, `b-${tagLatest}-copy`, 'ds.lance');
  fs.cpSync(dirA, dirB, { recursive: true, preserveTimestamps: true });
  const o = await twin(dirA, dirB, Date.now() + 1000, false);
  const L = `${peerName} ${label}`;
  if (tagLatest) { expectSame(L, o); agree++; continue; }
  // The known difference: Lance deletes the branch base's transaction file, lancever keeps it.
  check(o.lance.ok && o.ours.status === 0, `${L}: both succeed`);
  checkEq(o.onlyB, [], `${L}: lancever deletes nothing Lance keeps`);
  check(o.onlyA.length === 1 && /^_transactions\/4-.*\.txn$/.test(o.onlyA[0]),
    `${L}: only Lance deletes the transaction file of the branch base v5 (read version 4): ${JSON.stringify(o.onlyA)}`);
  const v5 = JSON.parse(lv(['show', dirB, '5', '--json']).stdout || '{}');
  checkEq(v5.transaction_file && fs.existsSync(path.join(dirB, '_transactions', v5.transaction_file)), true,
    `${L}: lancever kept v5's transaction file`);
  console.log(`  ${L}: Lance ${o.goneA.length} files, lancever ${o.goneB.length} (only Lance: ${o.onlyA.join(' ')})`);
}
console.log(`  ${agree} scenarios agree on ${peerName}`);
finish('test_cleanup_twins');
