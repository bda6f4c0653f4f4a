// Interop test for `lancever versions` and `lancever tags` against real Lance
// (the LV_PEER peer: LanceDB 0.31.0 = Lance 8.0.0 or 0.39.0 = Lance 12.0.0).  For every dataset of datasets.mjs and for the
// shipped demo it checks, on every version, that `lancever versions DIR --json`
// equals LanceDB's listVersions() (version, timestamp in ms, all 7 counters) and that each
// record is a superset of LanceDB's own record (version, timestamp, metadata, exactly),
// that operation_type / read_version match what LanceDB did, that is_tagged
// matches the tags created, that transaction_uuid / transaction_file match the
// txn file named by the manifest, and that `lancever tags DIR --json` lists the
// tags and branches.  Then error paths: corrupt manifests, non-datasets.
// Never skips: a missing peer or binary fails (lib.mjs).
import fs from 'node:fs';
import path from 'node:path';
import {
  lv, openDir, check, checkEq, finish, lanceVersion, lanceRecord, pick, scratch, sourceDir, SUMMARY_KEYS,
  LANCEDB_KEYS,
} from './lib.mjs';
import { buildAll, DEMO_EXPECTATIONS } from './datasets.mjs';

const FIELDS = ['version', 'timestamp', 'metadata', 'tags', 'timestamp_millis', 'total_fragments', 'total_data_files',
  'total_files_size', 'total_deletion_files', 'total_data_file_rows', 'total_deletion_file_rows',
  'total_rows', 'is_tagged', 'is_cleaned_up', 'transaction_uuid', 'read_version', 'operation_type',
  'transaction_properties', 'manifest_path', 'manifest_size', 'writer_library', 'writer_version',
  'data_format', 'transaction_file', 'branch'];
const COUNTERS = SUMMARY_KEYS.filter((k) => k !== 'version' && k !== 'timestamp_millis');
const U64_MAX = (1n << 64n) - 1n;
const TXN_RE = /^(\d+)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.txn$/;

function manifestName(v, v2) {
  return v2 ? (U64_MAX - BigInt(v)).toString().padStart(20, '0') + '.manifest' : `${v}.manifest`;
}
const byVersion = (a, b) => a.version - b.version;
const sortByName = (a) => [...a].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));

// Runs `lancever versions DIR --json [...extra]`; returns the parsed array or null
// (after recording a failure).
function lvVersions(label, dir, extra = []) {
  const r = lv(['versions', dir, '--json', ...extra]);
  if (!check(r.status === 0, `${label}: lancever versions ${extra.join(' ')} exited ${r.status}: ${r.stderr}`))
    return null;
  try {
    const j = JSON.parse(r.stdout);
    return check(Array.isArray(j), `${label}: --json output is not an array`) ? j : null;
  } catch (e) {
    check(false, `${label}: --json output is not JSON: ${e.message}: ${r.stdout.slice(0, 200)}`);
    return null;
  }
}

// Compares lancever's versions of one branch (or main) with LanceDB's list and
// with the builder's expectations.
function checkVersions(label, dir, ours, lance, exp, { branch = null, taggedVersions }) {
  checkEq(ours.map((o) => o.version), lance.map((l) => l.version), `${label}: version list vs LanceDB`);
  checkEq(lance.map((l) => l.version), exp.versions.map((e) => e.version),
    `${label}: LanceDB version list vs builder expectations`);
  check(ours.every((o, i) => i === 0 || ours[i - 1].version < o.version), `${label}: not sorted by version`);
  const lanceBy = new Map(lance.map((l) => [l.version, l]));
  const expBy = new Map(exp.versions.map((e) => [e.version, e]));
  const oursBy = new Map(ours.map((o) => [o.version, o]));
  for (const o of ours) {
    const L = `${label} v${o.version}`;
    const missing = FIELDS.filter((k) => !(k in o));
    checkEq(missing, [], `${L}: missing fields`);
    const l = lanceBy.get(o.version);
    if (l) checkEq(pick(o), l, `${L}: summary vs LanceDB listVersions()`);
    const e = expBy.get(o.version);
    if (!check(e, `${L}: version not expected`)) continue;
    checkEq(o.operation_type, e.operation_type, `${L}: operation_type`);
    if (e.read_version !== null) checkEq(o.read_version, e.read_version, `${L}: read_version`);
    checkEq(o.is_cleaned_up, false, `${L}: is_cleaned_up`);
    checkEq(o.is_tagged, taggedVersions.has(o.version), `${L}: is_tagged`);
    checkEq(o.branch, branch, `${L}: branch`);
    checkEq(o.transaction_properties, {}, `${L}: transaction_properties (LanceDB sets none)`);
    checkEq([o.writer_library, o.writer_version], ['lance', exp.writer], `${L}: writer`);
    checkEq(o.data_format, exp.dataFormat, `${L}: data_format`);
    check(Number.isSafeInteger(o.timestamp_millis) && o.timestamp_millis > 1.5e12,
      `${L}: timestamp_millis ${o.timestamp_millis}`);
    // Manifest file: naming scheme and size from the file system.
    const mname = manifestName(o.version, exp.v2Paths);
    checkEq(o.manifest_path, `_versions/${mname}`, `${L}: manifest_path`);
    const mpath = path.join(dir, '_versions', mname);
    if (check(fs.existsSync(mpath), `${L}: ${mpath} missing`))
      checkEq(o.manifest_size, fs.statSync(mpath).size, `${L}: manifest_size vs stat`);
    // Transaction: the file named by the manifest, {read_version}-{uuid}.txn.
    const m = typeof o.transaction_file === 'string' ? TXN_RE.exec(o.transaction_file) : null;
    if (check(m, `${L}: transaction_file ${JSON.stringify(o.transaction_file)} is not {rv}-{uuid}.txn`)) {
      check(fs.existsSync(path.join(dir, '_transactions', o.transaction_file)),
        `${L}: _transactions/${o.transaction_file} does not exist`);
      checkEq(o.transaction_uuid, m[2], `${L}: transaction_uuid vs txn file name`);
      checkEq(o.read_version, Number(m[1]), `${L}: read_version vs txn file name prefix`);
    }
  }
  // Non-deterministic read versions (concurrent writers): compare as a multiset.
  if (exp.txnReadVersions) {
    const rvs = exp.versions.filter((e) => e.read_version === null)
      .map((e) => oursBy.get(e.version)?.read_version).sort((a, b) => a - b);
    checkEq(rvs, exp.txnReadVersions, `${label}: read versions of concurrent commits`);
  }
  // A restore commits a copy of the restored version: same counters.
  for (const { version, restored_from } of exp.restores || []) {
    const a = oursBy.get(version), b = oursBy.get(restored_from);
    if (check(a && b, `${label}: restore v${version} / v${restored_from} missing`))
      checkEq(pick(a, COUNTERS), pick(b, COUNTERS), `${label}: restore v${version} counters = v${restored_from}`);
  }
}

// Extra fields lancever prints beyond the 22 above (checked when present):
// num_indices against LanceDB listIndices() on that version (sum of segments), and
// the feature flags Lance recomputes on every commit: 1 = deletion files present,
// 2 = stable row ids, 16 = base paths (every branch manifest has one).
async function checkExtras(label, t, ours, exp, isBranch) {
  for (const o of ours) {
    const L = `${label} v${o.version}`;
    if ('num_indices' in o) {
      await t.checkout(o.version);
      const idx = await t.listIndices();
      checkEq(o.num_indices, idx.reduce((n, i) => n + Number(i.numSegments ?? 1), 0),
        `${L}: num_indices vs LanceDB listIndices()`);
    }
    const flags = (o.total_deletion_files > 0 ? 1 : 0) | (exp.stableRowIds ? 2 : 0) | (isBranch ? 16 : 0);
    if ('reader_feature_flags' in o) checkEq(o.reader_feature_flags, flags, `${L}: reader_feature_flags`);
    if ('writer_feature_flags' in o) checkEq(o.writer_feature_flags, flags, `${L}: writer_feature_flags`);
    if ('config' in o) checkEq(o.config, {}, `${L}: config (LanceDB sets none)`);
  }
  await t.checkoutLatest();
}

// Each of our records holds LanceDB's listVersions() record exactly (issue 29): the same
// version, timestamp (ISO 8601 UTC) and metadata object (the same keys, string values).
function checkSuperset(label, ours, raw) {
  const oursBy = new Map(ours.map((o) => [o.version, o]));
  // (metadata compared with its keys sorted: key order is no part of a JSON object)
  const norm = (x) => ({ ...x, metadata: Object.fromEntries(Object.entries(x.metadata || {}).sort()) });
  checkEq(raw.length, ours.length, `${label}: as many records as listVersions()`);
  for (const r of raw.map(lanceRecord)) {
    const o = oursBy.get(r.version);
    if (check(o, `${label} v${r.version}: in versions --json`))
      checkEq(norm(pick(o, LANCEDB_KEYS)), norm(r), `${label} v${r.version}: the listVersions() record, exactly`);
  }
}

async function checkDataset({ name, dir, expectations: exp }) {
  const label = name;
  const t = await openDir(dir);
  const raw = await t.listVersions();
  const lance = raw.map(lanceVersion).sort(byVersion);
  const ours = lvVersions(label, dir);
  if (!ours) return;
  checkSuperset(label, ours, raw);
  const lanceTags = await (await t.tags()).list();
  const mainTagged = new Set(Object.values(exp.tags).filter((x) => x.branch === null).map((x) => x.version));
  checkVersions(label, dir, ours, lance, exp, { taggedVersions: mainTagged });
  await checkExtras(label, await openDir(dir), ours, exp, false);

  // Same result single-threaded and with --stats (report on stderr only).
  const one = lvVersions(label + ' --threads 1', dir, ['--threads', '1']);
  if (one) checkEq(one, ours, `${label}: --threads 1 output differs from default`);
  const r = lv(['versions', dir, '--json', '--stats']);
  if (check(r.status === 0, `${label}: --stats exited ${r.status}: ${r.stderr}`)) {
    check(r.stderr.trim().length > 0, `${label}: --stats printed no report on stderr`);
    let j = null; try { j = JSON.parse(r.stdout); } catch { /* checked below */ }
    checkEq(j, ours, `${label}: --json --stats stdout differs from --json`);
  }
  const plain = lv(['versions', dir]);
  check(plain.status === 0 && plain.stdout.trim().split('\n').length >= ours.length,
    `${label}: plain 'versions' exited ${plain.status} or printed fewer lines than versions`);

  // Tags and branches.
  const tr = lv(['tags', dir, '--json']);
  if (check(tr.status === 0, `${label}: lancever tags exited ${tr.status}: ${tr.stderr}`)) {
    let tj = null;
    try { tj = JSON.parse(tr.stdout); } catch (e) { check(false, `${label}: tags --json not JSON: ${e.message}`); }
    if (tj) {
      const wantTags = sortByName(Object.entries(lanceTags).map(([n, c]) => ({
        name: n, version: Number(c.version), branch: exp.tags[n]?.branch ?? null,
        manifest_size: Number(c.manifestSize),
      })));
      checkEq(Object.keys(lanceTags).sort(), Object.keys(exp.tags).sort(), `${label}: LanceDB tags vs builder`);
      checkEq(sortByName((tj.tags || []).map((x) => pick(x, ['name', 'version', 'branch', 'manifest_size']))),
        wantTags, `${label}: tags`);
      const lanceBranches = await (await t.branches()).list();
      const wantBranches = sortByName(Object.entries(lanceBranches).map(([n, c]) => ({
        name: n, parent_branch: c.parentBranch ?? null, parent_version: Number(c.parentVersion),
      })));
      checkEq(Object.keys(lanceBranches).sort(), Object.keys(exp.branches).sort(), `${label}: LanceDB branches vs builder`);
      checkEq(sortByName((tj.branches || []).map((x) => pick(x, ['name', 'parent_branch', 'parent_version']))),
        wantBranches, `${label}: branches`);
    }
  }

  // Each branch is a dataset of its own under tree/{name}.
  for (const [bname, b] of Object.entries(exp.branches)) {
    const bl = `${label} branch ${bname}`;
    const bdir = path.join(dir, 'tree', ...bname.split('/'));
    const bt = await (await t.branches()).checkout(bname);
    const braw = await bt.listVersions();
    const blance = braw.map(lanceVersion).sort(byVersion);
    const bours = lvVersions(bl, bdir);
    if (!bours) continue;
    checkSuperset(bl, bours, braw);
    const tagged = new Set(Object.values(exp.tags).filter((x) => x.branch === bname).map((x) => x.version));
    checkVersions(bl, bdir, bours, blance, { ...exp, versions: b.versions, restores: [], txnReadVersions: null },
      { branch: bname, taggedVersions: tagged });
    await checkExtras(bl, bt, bours, exp, true);
  }
}

// An error exit: non-zero status, no signal (crash), a message on stderr.
function checkCleanError(label, r, mustName) {
  check(r.status !== 0 && r.status !== null, `${label}: expected a non-zero exit, got status ${r.status}`);
  check(r.stderr.trim().length > 0, `${label}: no error message on stderr`);
  check(!/AddressSanitizer|runtime error|Segmentation/.test(r.stderr), `${label}: crash output: ${r.stderr}`);
  if (mustName) check(r.stderr.includes(mustName), `${label}: error does not name ${mustName}: ${r.stderr.trim()}`);
}

async function errorCases(sets) {
  const base = sets.find((s) => s.name === 'ten_writes');
  const work = scratch('lv-versions-err-');
  const copy = (tag) => { const d = path.join(work, tag + '.lance'); fs.cpSync(base.dir, d, { recursive: true }); return d; };
  const m5 = manifestName(5, true);
  const original = lvVersions('ten_writes (reference)', base.dir);

  // Truncated manifest: half of version 5's manifest.
  {
    const d = copy('truncated'), f = path.join(d, '_versions', m5);
    fs.truncateSync(f, Math.floor(fs.statSync(f).size / 2));
    checkCleanError('truncated manifest', lv(['versions', d, '--json']), m5);
    checkCleanError('truncated manifest --threads 1', lv(['versions', d, '--json', '--threads', '1']), m5);
  }
  // Empty manifest file.
  {
    const d = copy('empty'), f = path.join(d, '_versions', m5);
    fs.truncateSync(f, 0);
    checkCleanError('empty manifest', lv(['versions', d, '--json']), m5);
  }
  // Bad footer magic.
  {
    const d = copy('badmagic'), f = path.join(d, '_versions', m5);
    const b = fs.readFileSync(f); b.write('XXXX', b.length - 4); fs.writeFileSync(f, b);
    checkCleanError('bad footer magic', lv(['versions', d, '--json']), m5);
  }
  // Manifest position pointing past the end.
  {
    const d = copy('badpos'), f = path.join(d, '_versions', m5);
    const b = fs.readFileSync(f); b.writeBigUInt64LE(BigInt(b.length * 4), b.length - 16); fs.writeFileSync(f, b);
    checkCleanError('manifest_pos past end', lv(['versions', d, '--json']), m5);
  }
  // Not datasets.
  checkCleanError('empty directory', lv(['versions', scratch('lv-notds-'), '--json']));
  checkCleanError('missing path', lv(['versions', path.join(work, 'does-not-exist'), '--json']));
  checkCleanError('directory without _versions', lv(['versions', path.join(sourceDir, 'tests'), '--json']));
  checkCleanError('regular file', lv(['versions', path.join(sourceDir, 'tests/interop/lib.mjs'), '--json']));
  checkCleanError('tags on a non-dataset', lv(['tags', scratch('lv-notds-'), '--json']));

  if (!original) return;
  // Ignored files: temp manifest from a rename commit, a detached manifest, junk,
  // and no .txn files (inline transaction sections suffice).  LanceDB must agree.
  {
    const d = copy('extra');
    const v = path.join(d, '_versions');
    fs.copyFileSync(path.join(v, m5), path.join(v, m5 + '-6f1e0f2a-3b9c-4f5e-9a0d-2f6f2b8c1d11'));
    fs.copyFileSync(path.join(v, manifestName(1, true)), path.join(v, 'd9223372036854775809.manifest'));
    fs.writeFileSync(path.join(v, 'notes.txt'), 'not a manifest\n');
    const ours = lvVersions('ignored files', d);
    if (ours) checkEq(ours, original, 'ignored files: output differs from the original dataset');
    const lance = (await (await openDir(d)).listVersions()).map(lanceVersion).sort(byVersion);
    checkEq(lance, original.map((o) => pick(o)), 'ignored files: LanceDB listVersions on the copy');
  }
  {
    const d = copy('notxn');
    fs.rmSync(path.join(d, '_transactions'), { recursive: true });
    const ours = lvVersions('no _transactions', d);
    if (ours) checkEq(ours, original, 'no _transactions/: output differs (inline sections must be used)');
  }
}

process.setMaxListeners(100);           // scratch() adds one exit listener per directory
const root = scratch('lv-versions-');
const t0 = Date.now();
const sets = await buildAll(root);
console.log(`built ${sets.length} datasets with LanceDB in ${Date.now() - t0} ms`);
sets.push({ name: 'demo (shipped)', dir: path.join(sourceDir, 'demo/demo.lance'), expectations: DEMO_EXPECTATIONS });
for (const s of sets) {
  try { await checkDataset(s); } catch (e) { check(false, `${s.name}: ${e.stack || e}`); }
}
try { await errorCases(sets); } catch (e) { check(false, `error cases: ${e.stack || e}`); }
finish('test_versions');
