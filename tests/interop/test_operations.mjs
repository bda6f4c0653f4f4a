// Transactions and manifests of every operation the peer can commit from Node:
// create/overwrite, append, delete, update, merge_insert, add / alter (rename, cast) /
// drop columns, create index, compaction, restore and a shallow clone (Clone, base paths).
// For each version, `lancever show DS V --json` must agree with
//   - LanceDB's listVersions() (version, timestamp, the 7 counters), and
//   - the transaction file decoded independently by `protoc --decode_raw` (the oneof
//     member's field number names the operation, per protos/transaction.proto; the
//     read version is the txn name's prefix),
// and `lancever versions` must list exactly LanceDB's versions, for the table and for the
// clone.  UpdateBases and DataReplacement cannot be produced from LanceDB's Node API
// (no call commits them); an unknown operation number is covered by unit/test_manifest.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { lancedb, lv, lvJson, check, checkEq, finish, lanceVersion, pick, scratch, peerName } from './lib.mjs';

const OPS = { 100: 'Append', 101: 'Delete', 102: 'Overwrite', 103: 'CreateIndex', 104: 'Rewrite',
  105: 'Merge', 106: 'Restore', 107: 'ReserveFragments', 108: 'Update', 109: 'Project',
  110: 'UpdateConfig', 111: 'DataReplacement', 112: 'UpdateMemWalState', 113: 'Clone',
  114: 'UpdateBases', 115: 'DataOverlay' };

// The operation of a .txn file by protoc's raw decoding: its top-level field >= 100.
function txnOperation(file) {
  const r = spawnSync('protoc', ['--decode_raw'], { input: fs.readFileSync(file), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`protoc --decode_raw ${file}: ${r.stderr}`);
  const tops = [...r.stdout.matchAll(/^(\d+)[: ]/gm)].map((m) => Number(m[1])).filter((n) => n >= 100 && n < 200);
  return tops.length ? (OPS[tops[tops.length - 1]] || `Unknown(${tops[tops.length - 1]})`) : null;
}

const root = scratch('lv-ops-');
const db = await lancedb.connect(root);
const rows = (a, n) => Array.from({ length: n }, (_, i) => ({ id: a + i, v: (a + i) * 0.5, name: `r${a + i}` }));
const t = await db.createTable('t', rows(0, 20));
const steps = [['createTable', 'Overwrite']];
const step = async (label, fn) => {
  const before = await t.version();
  try { await fn(); } catch (e) { check(false, `${label}: ${e.message}`); return; }
  const after = await t.version();
  for (let v = before + 1; v <= after; v++) steps[v - 1] = [label, null];
};
await step('add', () => t.add(rows(20, 10)));
await step('delete', () => t.delete('id < 3'));
await step('update', () => t.update({ where: 'id > 25', values: { v: 1.25 } }));
await step('mergeInsert', () => t.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(rows(28, 5)));
await step('addColumns', () => t.addColumns([{ name: 'doubled', valueSql: 'v * 2' }]));
await step('alterColumns rename', () => t.alterColumns([{ path: 'name', rename: 'label' }]));
await step('alterColumns cast', () => t.alterColumns([{ path: 'doubled', dataType: 'float' }]));
await step('dropColumns', () => t.dropColumns(['doubled']));
await step('createIndex', () => t.createIndex('id'));
await step('optimize', () => t.optimize());
const vrestore = await t.version();
await step('restore', async () => { await t.checkout(2); await t.restore(); });
const dir = path.join(root, 't.lance');

function compareAll(label, dsDir, listed) {
  const ours = lvJson(['versions', dsDir, '--json']);
  checkEq(ours.map((o) => o.version), listed.map((l) => l.version), `${label}: versions vs listVersions()`);
  const txns = fs.readdirSync(path.join(dsDir, '_transactions'));
  const seen = {};
  for (const l of listed) {
    const L = `${label} v${l.version}`;
    let s;
    try { s = lvJson(['show', dsDir, String(l.version), '--json']); } catch (e) { check(false, `${L}: ${e.message}`); continue; }
    checkEq(pick(s), l, `${L}: show vs listVersions()`);
    checkEq(s.writer_version, peerName === 'lance12' ? '12.0.0' : '8.0.0', `${L}: writer_version`);
    const tf = s.transaction_file;
    if (!check(tf && txns.includes(tf), `${L}: transaction file ${tf} not in _transactions/`)) continue;
    const op = txnOperation(path.join(dsDir, '_transactions', tf));
    checkEq(s.operation_type, op, `${L}: operation_type vs protoc --decode_raw of ${tf}`);
    checkEq(s.read_version, Number(tf.split('-')[0]), `${L}: read_version vs txn name`);
    check(!/^Unknown/.test(s.operation_type), `${L}: ${s.operation_type} should be known`);
    seen[s.operation_type] = (seen[s.operation_type] || 0) + 1;
  }
  return seen;
}

const listed = (await t.listVersions()).map(lanceVersion).sort((a, b) => a.version - b.version);
const seen = compareAll(`${peerName} t`, dir, listed);
console.log(`  ${peerName} t: operations ${JSON.stringify(seen)}; steps ${JSON.stringify(steps.map((s) => s[0]))}`);
for (const op of ['Overwrite', 'Append', 'Delete', 'Update', 'Merge', 'Project', 'CreateIndex', 'Rewrite', 'Restore'])
  check(seen[op] > 0, `${peerName} t: no ${op} version was produced`);
const rs = lvJson(['show', dir, String(vrestore + 1), '--json']);
checkEq([rs.operation_type, rs.total_rows], ['Restore', listed.find((l) => l.version === 2).total_rows],
  `${peerName} restore: operation and rows of the restored version 2`);

// Shallow clone: a Clone transaction and base paths pointing at the source.
const c = await db.cloneTable('c', dir, { sourceVersion: 3, isShallow: true });
await c.add(rows(100, 4));
const cdir = path.join(root, 'c.lance');
const clisted = (await c.listVersions()).map(lanceVersion).sort((a, b) => a.version - b.version);
const cseen = compareAll(`${peerName} clone`, cdir, clisted);
check(cseen.Clone === 1, `${peerName} clone: one Clone version (${JSON.stringify(cseen)})`);
const c1 = lvJson(['show', cdir, String(clisted[0].version), '--json']);
check((c1.reader_feature_flags & 16) === 16, `${peerName} clone: base paths reader flag (16) set (${c1.reader_feature_flags})`);
const h = lv(['history', cdir]);
check(h.status === 0, `${peerName} clone: lancever history exited ${h.status}: ${h.stderr}`);

// Staged manifests (`_versions/{v}.manifest-{uuid}`, as a DynamoDB or namespace commit
// store leaves them before the store commits the version) are not versions: neither
// LanceDB nor lancever lists them, and lancever cleanup never removes them.
{
  const vd = path.join(dir, '_versions');
  const newest = fs.readdirSync(vd).filter((f) => f.endsWith('.manifest')).sort()[0];
  const nv = listed[listed.length - 1].version + 1;
  const staged = [`${((1n << 64n) - 1n - BigInt(nv)).toString()}.manifest-0b6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f1`,
    `${nv}.manifest-1c6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f2`, `1.manifest-2d6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f3`];
  for (const s of staged) fs.copyFileSync(path.join(vd, newest), path.join(vd, s));
  const t2 = await db.openTable('t');
  const lanceList = (await t2.listVersions()).map((v) => v.version);
  checkEq(lanceList, listed.map((l) => l.version), `${peerName} staged: LanceDB ignores staged manifests`);
  checkEq(lvJson(['versions', dir, '--json']).map((o) => o.version), lanceList, `${peerName} staged: lancever versions ignores them`);
  const r = lv(['cleanup', dir, '--retain-versions', '1']);
  check(r.status === 0, `${peerName} staged: cleanup exited ${r.status}: ${r.stderr}`);
  for (const s of staged) check(fs.existsSync(path.join(vd, s)), `${peerName} staged: cleanup removed ${s}`);
  check(!/manifest-/.test(r.stdout), `${peerName} staged: cleanup names a staged manifest: ${r.stdout}`);
}
finish('test_operations');
