// Dataset builders for the interop tests: each creates a dataset with real Lance
// (the LV_PEER peer: LanceDB 0.31.0 = Lance 8.0.0 or 0.39.0 = Lance 12.0.0) under a given parent directory and returns
//   { name, dir, expectations }
// where `expectations` records what LanceDB did, derived only from LanceDB's own
// API results and from file names on disk, never from lancever:
//   versions:  [{version, operation_type, read_version}]  for the main branch, in
//              commit order.  read_version is null when it is not deterministic
//              (concurrent writers); those are checked through `txnReadVersions`.
//   txnReadVersions: (optional) multiset of read versions taken from the
//              `_transactions/{read_version}-{uuid}.txn` names of non-deterministic
//              commits.
//   tags:      {name: {version, branch}}   as created through LanceDB.
//   branches:  {name: {parent_branch, parent_version, versions: [...]}}
//   v2Paths, dataFormat, writer, stableRowIds:  what the manifests should say
//              (writer: the Lance version in writer_version).
//   restores:  [{version, restored_from}]  (restored version has the counters of
//              restored_from).
// A builder throws if LanceDB does not behave as these expectations assume
// (e.g. an operation that did not commit exactly the versions we expected).
import fs from 'node:fs';
import path from 'node:path';
import { lancedb, peerDataFormat, peerLanceVersion } from './peer.mjs';

export const rows = (from, n) => Array.from({ length: n },
  (_, i) => ({ id: from + i, val: (from + i) * 1.5, name: 'r' + (from + i) }));

// Versions 1..7 of table `name` in the connection `db` (on any store): appends, a delete, an
// update, a btree index, a tag keep6 on version 6, one more append; returns the table.
export async function mixedSeven(db, name) {
  const t = await db.createTable(name, rows(0, 5));                  // v1
  await t.add(rows(5, 5));                                           // v2
  await t.add(rows(10, 5));                                          // v3
  await t.delete('id < 3');                                          // v4
  await t.update({ where: 'id > 10', valuesSql: { val: 'val * 2' } }); // v5
  await t.createIndex('id', { config: lancedb.Index.btree() });      // v6
  await (await t.tags()).create('keep6', 6);
  await t.add(rows(15, 5));                                          // v7
  return t;
}

// Tracks versions committed through one table handle.
class Recorder {
  constructor(t) {
    this.t = t;
    this.versions = [];
    this.tags = {};
    this.branches = {};
    this.restores = [];
  }
  static async create(db, name, data, opts, op = 'Overwrite') {
    const t = await db.createTable(name, data, opts);
    const r = new Recorder(t);
    const v = await t.version();
    if (v !== 1) throw new Error(`createTable gave version ${v}, expected 1`);
    r.versions.push({ version: 1, operation_type: op, read_version: 0 });
    return r;
  }
  // One sequential operation that must commit exactly one version read from the
  // version current before it.
  async step(op, fn) {
    const before = await this.t.version();
    await fn(this.t);
    const after = await this.t.version();
    if (after !== before + 1)
      throw new Error(`${op}: version ${before} -> ${after}, expected exactly one new version`);
    this.versions.push({ version: after, operation_type: op, read_version: before });
    return after;
  }
  async append(data) { return this.step('Append', (t) => t.add(data)); }
  async overwrite(data) { return this.step('Overwrite', (t) => t.add(data, { mode: 'overwrite' })); }
  async del(pred) { return this.step('Delete', (t) => t.delete(pred)); }
  async update(u) { return this.step('Update', (t) => t.update(u)); }
  async btree(col) {
    return this.step('CreateIndex', (t) => t.createIndex(col, { config: lancedb.Index.btree() }));
  }
  // optimize() with a cutoff far in the past, so that nothing is pruned.
  // Compaction commits ReserveFragments then Rewrite, both read from the version
  // optimize started at; with a scalar index present, the index optimisation then
  // commits a CreateIndex read from the Rewrite version [observed, Lance 8.0.0].
  async optimize({ withIndex = false } = {}) {
    const before = await this.t.version();
    const stats = await this.t.optimize({ cleanupOlderThan: new Date(0) });
    const after = await this.t.version();
    const want = withIndex ? 3 : 2;
    if (after !== before + want)
      throw new Error(`optimize: version ${before} -> ${after}, expected ${want} new versions`);
    if (stats.prune.oldVersionsRemoved !== 0) throw new Error('optimize pruned versions');
    this.versions.push({ version: before + 1, operation_type: 'ReserveFragments', read_version: before });
    this.versions.push({ version: before + 2, operation_type: 'Rewrite', read_version: before });
    if (withIndex)
      this.versions.push({ version: before + 3, operation_type: 'CreateIndex', read_version: before + 2 });
    return after;
  }
  // checkout(v) + restore(): commits a copy of version v as latest+1, read from latest.
  async restore(v) {
    const latest = await this.t.version();
    await this.t.checkout(v);
    await this.t.restore();
    const after = await this.t.version();
    if (after !== latest + 1) throw new Error(`restore: ${latest} -> ${after}`);
    this.versions.push({ version: after, operation_type: 'Restore', read_version: latest });
    this.restores.push({ version: after, restored_from: v });
    return after;
  }
  async tag(name, version) {
    const before = await this.t.version();
    await (await this.t.tags()).create(name, version);
    if (await this.t.version() !== before) throw new Error('tag create made a version');
    this.tags[name] = { version, branch: null };
  }
  expectations(extra = {}) {
    return {
      versions: this.versions, tags: this.tags, branches: this.branches, restores: this.restores,
      v2Paths: true, dataFormat: peerDataFormat, writer: peerLanceVersion, stableRowIds: false, ...extra,
    };
  }
}

async function connect(parent) {
  fs.mkdirSync(parent, { recursive: true });
  return lancedb.connect(parent);
}
function result(parent, name, rec, extra) {
  return { name, dir: path.join(parent, name + '.lance'), expectations: rec.expectations(extra) };
}

// (a) The "ten writes" of docs/lance-reference.md, "The LanceDB peers".
export async function tenWrites(parent, name = 'ten_writes') {
  const db = await connect(parent);
  const r = await Recorder.create(db, name, rows(0, 5));      // v1 Overwrite
  await r.append(rows(5, 5));                                  // v2
  await r.append(rows(10, 5));                                 // v3
  await r.del('id < 3');                                       // v4
  await r.update({ where: 'id > 10', valuesSql: { val: 'val * 2' } }); // v5
  await r.btree('id');                                         // v6
  await r.tag('keep6', 6);
  await r.append(rows(15, 5));                                 // v7
  await r.del('id = 7');                                       // v8
  await r.tag('keep8', 8);
  await r.overwrite(rows(100, 3));                             // v9
  await r.append(rows(200, 2));                                // v10
  return result(parent, name, r);
}

// (b) Compaction through optimize(), without and with a scalar index.
export async function compaction(parent, name = 'compaction') {
  const db = await connect(parent);
  const r = await Recorder.create(db, name, rows(0, 3));      // v1
  for (let i = 1; i <= 4; i++) await r.append(rows(i * 10, 2)); // v2..v5
  await r.del('id = 11');                                      // v6
  await r.optimize();                                          // v7 Reserve, v8 Rewrite (rv 6)
  await r.tag('compacted', 8);
  await r.append(rows(100, 2));                                // v9
  await r.btree('id');                                         // v10
  await r.append(rows(200, 2));                                // v11
  await r.del('id = 200');                                     // v12
  await r.optimize({ withIndex: true });                       // v13, v14 (rv 12), v15 CreateIndex (rv 14)
  await r.append(rows(300, 1));                                // v16
  return result(parent, name, r);
}

// (c) V1 manifest names (`_versions/{n}.manifest`).
export async function v1Names(parent, name = 'v1_names') {
  const db = await connect(parent);
  const r = await Recorder.create(db, name, rows(0, 4),
    { storageOptions: { new_table_enable_v2_manifest_paths: 'false' } });
  await r.append(rows(4, 4));
  await r.append(rows(8, 4));
  await r.del('id < 2');
  await r.tag('v1tag', 3);
  await r.update({ where: 'id = 9', values: { name: 'nine' } });
  await r.overwrite(rows(50, 2));
  await r.append(rows(60, 2));
  if (await r.t.usesV2ManifestPaths()) throw new Error('v1Names: table uses V2 paths');
  return result(parent, name, r, { v2Paths: false });
}

// (d) Data storage version 2.0 (and 'legacy' = 0.1) instead of the default 2.1.
export async function storage(parent, version = '2.0', name = 'storage_' + version.replace('.', '_')) {
  const db = await connect(parent);
  const r = await Recorder.create(db, name, rows(0, 4),
    { storageOptions: { new_table_data_storage_version: version } });
  await r.append(rows(4, 4));
  await r.del('id = 5');
  await r.append(rows(8, 4));
  return result(parent, name, r, { dataFormat: version === 'legacy' ? '0.1' : version });
}

// (e) Stable row ids (feature flag 2, next_row_id).
export async function stableRowIds(parent, name = 'stable_row_ids') {
  const db = await connect(parent);
  const r = await Recorder.create(db, name, rows(0, 4),
    { storageOptions: { new_table_enable_stable_row_ids: 'true' } });
  await r.append(rows(4, 4));
  await r.del('id = 1');
  await r.update({ where: 'id > 5', valuesSql: { val: 'val + 1' } });
  await r.append(rows(20, 2));
  return result(parent, name, r, { stableRowIds: true });
}

// (f) Branches: `feat` forked from main v3, `feat/sub` forked from feat v4, a tag
// on a branch version (its number also exists on main, which is NOT tagged).
export async function branches(parent, name = 'branches') {
  const db = await connect(parent);
  const r = await Recorder.create(db, name, rows(0, 3));      // v1
  await r.append(rows(3, 3));                                  // v2
  await r.append(rows(6, 3));                                  // v3
  const br = await r.t.branches();
  const feat = await br.create('feat', undefined, 3);
  const fv = [{ version: 3, operation_type: 'Clone', read_version: 3 }];
  if (await feat.version() !== 3) throw new Error('branch feat did not start at 3');
  await feat.add(rows(30, 2));
  if (await feat.version() !== 4) throw new Error('branch feat append not v4');
  fv.push({ version: 4, operation_type: 'Append', read_version: 3 });
  await feat.delete('id = 30');
  fv.push({ version: 5, operation_type: 'Delete', read_version: 4 });
  await (await feat.tags()).create('feat4', 4);
  const sub = await br.create('feat/sub', 'feat', 4);
  await sub.add(rows(40, 1));
  const sv = [{ version: 4, operation_type: 'Clone', read_version: 4 },
    { version: 5, operation_type: 'Append', read_version: 4 }];
  if (await sub.version() !== 5) throw new Error('branch feat/sub append not v5');
  await r.append(rows(9, 3));                                  // main v4
  await r.del('id = 0');                                       // main v5
  await r.tag('main2', 2);
  const res = result(parent, name, r);
  res.expectations.tags.feat4 = { version: 4, branch: 'feat' };
  res.expectations.branches = {
    feat: { parent_branch: null, parent_version: 3, versions: fv },
    'feat/sub': { parent_branch: 'feat', parent_version: 4, versions: sv },
  };
  return res;
}

// (g) Restore: checkout(v) + restore() commits a copy of v.
export async function restore(parent, name = 'restore') {
  const db = await connect(parent);
  const r = await Recorder.create(db, name, rows(0, 4));      // v1
  await r.append(rows(4, 4));                                  // v2
  await r.del('id < 3');                                       // v3
  await r.append(rows(8, 4));                                  // v4
  await r.restore(2);                                          // v5 = copy of v2, rv 4
  await r.append(rows(20, 1));                                 // v6
  await r.restore(1);                                          // v7 = copy of v1, rv 6
  return result(parent, name, r);
}

// (h) Four concurrent appends from four connections: committed versions read from
// the same version, so read_version != version - 1.  Which txn became which
// version is not deterministic: the multiset of txn-name prefixes is the truth.
export async function concurrent(parent, name = 'concurrent') {
  const db = await connect(parent);
  const r = await Recorder.create(db, name, rows(0, 3));      // v1
  await r.append(rows(3, 1));                                  // v2
  const txdir = path.join(parent, name + '.lance', '_transactions');
  const txBefore = new Set(fs.readdirSync(txdir));
  const handles = await Promise.all([0, 1, 2, 3].map(async () => (await lancedb.connect(parent)).openTable(name)));
  const res = await Promise.allSettled(handles.map((h, i) => h.add(rows(100 + i, 1))));
  const bad = res.filter((x) => x.status !== 'fulfilled');
  if (bad.length) throw new Error('concurrent append failed: ' + bad[0].reason);
  await r.t.checkoutLatest();
  const latest = await r.t.version();
  if (latest !== 6) throw new Error(`concurrent: latest ${latest}, expected 6`);
  for (let v = 3; v <= 6; v++) r.versions.push({ version: v, operation_type: 'Append', read_version: null });
  const txNew = fs.readdirSync(txdir).filter((f) => !txBefore.has(f));
  await r.append(rows(200, 1));                                // v7, rv 6
  return result(parent, name, r, {
    txnReadVersions: txNew.map((f) => Number(f.split('-')[0])).sort((a, b) => a - b),
  });
}

// The shipped demo (demo/demo.lance), built by make_demo.mjs.  Versions:
//   v1  Overwrite         createTable, 5 rows (id, val, name)
//   v2  Append            5 rows
//   v3  Append            5 rows
//   v4  Delete            id < 3
//   v5  Update            val = val * 2 where id > 10
//   v6  CreateIndex       btree on id                      <- tag "indexed"
//   v7  Append            5 rows
//   v8  ReserveFragments  optimize(): compaction, read from v7
//   v9  Rewrite           optimize(): compaction, read from v7
//   v10 CreateIndex       optimize(): index optimisation, read from v9  <- tag "compacted"
//   v11 Overwrite         3 rows (drops the index)
//   v12 Append            2 rows
export async function demo(parent, name = 'demo') {
  const db = await connect(parent);
  const r = await Recorder.create(db, name, rows(0, 5));
  await r.append(rows(5, 5));
  await r.append(rows(10, 5));
  await r.del('id < 3');
  await r.update({ where: 'id > 10', valuesSql: { val: 'val * 2' } });
  await r.btree('id');
  await r.append(rows(15, 5));
  await r.optimize({ withIndex: true });
  await r.tag('indexed', 6);
  await r.tag('compacted', 10);
  await r.overwrite(rows(100, 3));
  await r.append(rows(200, 2));
  return result(parent, name, r);
}
// Static expectations of the shipped demo (operations are deterministic).
export const DEMO_EXPECTATIONS = {
  versions: [
    ['Overwrite', 0], ['Append', 1], ['Append', 2], ['Delete', 3], ['Update', 4],
    ['CreateIndex', 5], ['Append', 6], ['ReserveFragments', 7], ['Rewrite', 7],
    ['CreateIndex', 9], ['Overwrite', 10], ['Append', 11],
  ].map(([op, rv], i) => ({ version: i + 1, operation_type: op, read_version: rv })),
  tags: { indexed: { version: 6, branch: null }, compacted: { version: 10, branch: null } },
  branches: {}, restores: [], v2Paths: true, dataFormat: '2.1', writer: '8.0.0', stableRowIds: false,
};

// Every scenario the interop test runs, in order.
export const SCENARIOS = {
  ten_writes: tenWrites,
  compaction,
  v1_names: v1Names,
  storage_2_0: (p) => storage(p, '2.0'),
  storage_legacy: (p) => storage(p, 'legacy'),
  stable_row_ids: stableRowIds,
  branches,
  restore,
  concurrent,
};

// Builds every scenario under `parent`; returns [{name, dir, expectations}].
export async function buildAll(parent) {
  const out = [];
  for (const [name, fn] of Object.entries(SCENARIOS)) out.push(await fn(parent, name));
  return out;
}

// Removes the empty `__manifest` namespace table LanceDB 0.31 writes into a parent.
export function removeNamespaceTable(parent) {
  fs.rmSync(path.join(parent, '__manifest'), { recursive: true, force: true });
}
