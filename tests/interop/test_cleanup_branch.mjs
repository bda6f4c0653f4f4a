// Cleaning a branch made by real Lance (issue 16): `lancever --branch feat cleanup` removes the
// branch's own old versions and the files only they used, never a file or manifest of main
// (the branch's first version references main's data with a base_id), and afterwards LanceDB
// reads main (every version) and the branch with the same rows, and can still write to the
// branch.  Also: --clean-referenced-branches on a LanceDB-made branch (no auto-cleanup config:
// left alone), and cleaning a branch that has a child branch (the child reads as before).  LanceDB's Node API cannot clean a branch itself, so there is no twin comparison.
import fs from 'node:fs';
import path from 'node:path';
import { scratch, lv, check, checkEq, finish, lancedb, peerLabel } from './lib.mjs';
import { rows } from './datasets.mjs';

const rowsOf = (a) => a.map((r) => ({ id: Number(r.id), name: r.name })).sort((x, y) => x.id - y.id);

// Every file of the dataset directory, relative path -> size (tree/feat/ apart).
function files(dir) {
  const out = { main: {}, branch: {} };
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const rel = path.relative(dir, p);
        (rel.startsWith('tree/feat/') ? out.branch : out.main)[rel] = fs.statSync(p).size;
      }
    }
  };
  walk(dir);
  return out;
}

const parent = scratch('lv-cleanup-branch-');
const db = await lancedb.connect(parent);
const t = await db.createTable('ds', rows(0, 3));            // v1
await t.add(rows(3, 3));                                       // v2
await t.add(rows(6, 3));                                       // v3
const feat = await (await t.branches()).create('feat', undefined, 3);
await feat.add(rows(100, 2));                                  // feat v4
await feat.add(rows(200, 2));                                  // feat v5
await feat.delete('id = 100');                                 // feat v6 (a deletion file)
await feat.add(rows(300, 2));                                  // feat v7
await t.add(rows(9, 3));                                       // main v4
const dir = path.join(parent, 'ds.lance');

const mainRows = {};
for (let v = 1; v <= 4; v++) { await t.checkout(v); mainRows[v] = rowsOf(await t.query().toArray()); }
await t.checkoutLatest();
const featRows = rowsOf(await feat.query().toArray());
const before = files(dir);
check(Object.keys(before.branch).some((p) => p.startsWith('tree/feat/data/')),
  `the branch wrote its own data files under tree/feat/data/ (${JSON.stringify(Object.keys(before.branch))})`);

// The explanation first: nothing changes.
const ex = lv(['--branch', 'feat', 'cleanup', dir, '--older-than', '0s', '--delete-unverified', '--explain', '--json']);
check(ex.status === 0, `--explain on the branch exits 0: ${ex.stderr}`);
checkEq(files(dir), before, '--explain changes nothing');
const e = ex.status === 0 ? JSON.parse(ex.stdout) : {};
check(e.read_version >= 7, `explain read_version is the branch's latest (${e.read_version})`);

const r = lv(['--branch', 'feat', 'cleanup', dir, '--older-than', '0s', '--delete-unverified', '--json', '--list']);
check(r.status === 0, `cleanup of the branch exits 0: ${r.stderr}`);
const out = r.status === 0 ? JSON.parse(r.stdout) : { files: [] };
check(out.versions_removed >= 3, `old versions of the branch removed (${out.versions_removed})`);
checkEq(e.stats && e.stats.old_versions, out.versions_removed, 'the explanation said how many versions would go');
const after = files(dir);
// main: every file still there, the same size; the checkpoint is the branch's own (tree/feat/)
checkEq(after.main, before.main, 'no file outside tree/feat/ was touched');
const gone = Object.keys(before.branch).filter((p) => !(p in after.branch));
check(gone.length >= 3, `files of the branch removed (${gone.length})`);
check(gone.every((p) => /^tree\/feat\/(_versions|data|_deletions|_transactions|_indices)\//.test(p)),
  `only the branch's own Lance files went: ${JSON.stringify(gone)}`);

// LanceDB reads every version of main and the branch as before, and writes to the branch.
const db2 = await lancedb.connect(parent);
const t2 = await db2.openTable('ds');
for (let v = 1; v <= 4; v++) {
  await t2.checkout(v);
  checkEq(rowsOf(await t2.query().toArray()), mainRows[v], `main v${v} reads the same rows`);
}
await t2.checkoutLatest();
const f2 = await (await t2.branches()).checkout('feat');
checkEq(rowsOf(await f2.query().toArray()), featRows, 'the branch reads the same rows');
await f2.add(rows(400, 1));
check((await f2.countRows()) === featRows.length + 1, 'LanceDB writes to the cleaned branch');
// a rerun has nothing left to remove
const again = lv(['--branch', 'feat', 'cleanup', dir, '--older-than', '0s', '--json']);
check(again.status === 0, `a second cleanup exits 0: ${again.stderr}`);

// --clean-referenced-branches on main: feat (made from main's v3, which the policy selects) is
// a referenced branch, but LanceDB wrote no lance.auto_cleanup.* keys, so it is not cleaned --
// as Lance leaves a branch without an auto-cleanup interval alone.
const beforeCascade = files(dir);
const cx = lv(['cleanup', dir, '--older-than', '0s', '--clean-referenced-branches', '--explain', '--json']);
check(cx.status === 0, `--explain --clean-referenced-branches exits 0: ${cx.stderr}`);
const cxj = cx.status === 0 ? JSON.parse(cx.stdout) : { referenced_branches: [] };
checkEq(cxj.referenced_branches, [{ name: 'feat', referenced_version: 3, cleanup_candidate: false }],
  'feat is listed as referenced, not to be cleaned (no auto-cleanup config)');
check((cxj.warnings || []).some((w) => w.startsWith('referenced branch feat was not selected')),
  `--explain warns that feat is not cleaned: ${JSON.stringify(cxj.warnings)}`);
const cr = lv(['cleanup', dir, '--older-than', '0s', '--clean-referenced-branches', '--json']);
check(cr.status === 0, `cleanup --clean-referenced-branches exits 0: ${cr.stderr}`);
check(/warning: referenced branch feat was not cleaned/.test(cr.stderr),
  `the run says on stderr that feat was not cleaned: ${cr.stderr}`);
checkEq(files(dir).branch, beforeCascade.branch, 'the branch without auto-cleanup config is untouched');
await t2.checkoutLatest();
checkEq(rowsOf(await t2.query().toArray()), mainRows[4], 'main still reads its latest rows');
checkEq(rowsOf(await f2.query().toArray()).length, featRows.length + 1, 'the branch still reads');

// A child branch of the branch being cleaned: `child` is made from feat's v3, whose data file
// feat itself stops using (it deletes those rows); cleaning feat keeps v3 (the child's base)
// and every file the child reads through its base_id, and LanceDB reads every version of the
// child with the same rows afterwards.
const u = await db.createTable('ds2', rows(0, 3));              // v1
await u.add(rows(3, 3));                                         // v2
const uf = await (await u.branches()).create('feat', undefined, 2);
await uf.add(rows(100, 2));                                      // feat v3
const child = await (await uf.branches()).create('child', 'feat', 3);
await child.add(rows(500, 1));                                   // child v4
await uf.delete('id >= 100');                                    // feat v4
await uf.add(rows(200, 2));                                      // feat v5
const childRows = {};
for (const v of [3, 4]) { await child.checkout(v); childRows[v] = rowsOf(await child.query().toArray()); }
await child.checkoutLatest();
const dir2 = path.join(parent, 'ds2.lance');
const rc2 = lv(['--branch', 'feat', 'cleanup', dir2, '--older-than', '0s', '--delete-unverified', '--json']);
check(rc2.status === 0, `cleanup of a branch with a child branch exits 0: ${rc2.stderr}`);
const o2 = rc2.status === 0 ? JSON.parse(rc2.stdout) : {};
check(o2.versions_removed >= 1, `feat's old versions went (${o2.versions_removed}), its v3 kept for the child`);
const db3 = await lancedb.connect(parent);
const u3 = await db3.openTable('ds2');
const c3 = await (await u3.branches()).checkout('child');
for (const v of [3, 4]) {
  await c3.checkout(v);
  checkEq(rowsOf(await c3.query().toArray()), childRows[v], `the child's v${v} reads the same rows after its parent branch was cleaned`);
}
console.log(`branch cleanup on ${peerLabel}: ${out.versions_removed} versions, ${gone.length} files`);
finish('test_cleanup_branch');
