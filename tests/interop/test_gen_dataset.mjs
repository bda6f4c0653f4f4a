// The benchmark generator (bench/gen_dataset.c) writes datasets real Lance can open.
//
// A 1-row table (id int64, val double, name string) written by LanceDB 0.31.0 donates its
// data file; gen_dataset writes 5 versions × 1000 fragments pointing at it, then 3 more with
// --start 6.  LanceDB opens the result: listVersions() equals `lancever versions --json`
// (version, timestamp, 7 counters), countRows() and a query work, on the latest and on a
// checked-out version; manifests are ~60-90 bytes per fragment like real ones.
// Never skips: a missing peer, binary or generator fails.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  arrow, lancedb, lv, lvJson, openDir, check, checkEq, finish, lanceVersion, pick, scratch,
} from './lib.mjs';

process.setMaxListeners(0);
const buildDir = process.env.LANCEVER_BUILD_DIR || path.dirname(process.env.LANCEVER_BIN || '');
const gen = path.join(buildDir, 'gen_dataset');
if (!fs.existsSync(gen)) {
  console.error(`FAIL: gen_dataset not found at ${gen} (set LANCEVER_BUILD_DIR)`);
  process.exit(1);
}
const root = scratch('lv-gen-');
const byVersion = (a, b) => a.version - b.version;
const V = 5, F = 1000;

function runGen(args) {
  const r = spawnSync(gen, args, { encoding: 'utf8' });
  check(r.status === 0, `gen_dataset ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}

// Donor: a 1-row LanceDB table with the generator's schema (plain Utf8, not dictionary).
const donorParent = path.join(root, 'donor');
fs.mkdirSync(donorParent);
const tbl = new arrow.Table({
  id: arrow.vectorFromArray([42n], new arrow.Int64()),
  val: arrow.vectorFromArray([1.5], new arrow.Float64()),
  name: arrow.vectorFromArray(['forty-two'], new arrow.Utf8()),
});
await (await lancedb.connect(donorParent)).createTable('d', tbl);
const donorData = path.join(donorParent, 'd.lance', 'data');
const dataFile = path.join(donorData, fs.readdirSync(donorData)[0]);
checkEq(path.basename(dataFile).length, 56, 'LanceDB data file name is 50 chars + .lance');

const dir = path.join(root, 'gen.lance');
runGen([dir, '--versions', String(V), '--fragments', String(F), '--data-file', dataFile]);

async function compare(label, nversions) {
  const ours = lvJson(['versions', dir, '--json']);
  checkEq(ours.map((v) => v.version), Array.from({ length: nversions }, (_, i) => i + 1), `${label}: versions`);
  let t;
  try { t = await openDir(dir); } catch (e) { check(false, `${label}: LanceDB cannot open: ${e.message}`); return; }
  const lance = (await t.listVersions()).map(lanceVersion).sort(byVersion);
  checkEq(lance.length, nversions, `${label}: listVersions() count`);
  checkEq(ours.map((v) => pick(v)), lance, `${label}: lancever versions vs listVersions()`);
  checkEq(await t.version(), nversions, `${label}: LanceDB latest version`);
  checkEq(await t.countRows(), F, `${label}: countRows()`);
  try {
    const rows = await t.query().limit(3).toArrow();
    checkEq(rows.numRows, 3, `${label}: query rows`);
    checkEq([String(rows.getChild('id').get(0)), rows.getChild('val').get(0), rows.getChild('name').get(0)],
      ['42', 1.5, 'forty-two'], `${label}: row values`);
  } catch (e) {
    check(false, `${label}: LanceDB query failed: ${e.message}`);
  }
  await t.checkout(2);
  checkEq(await t.countRows(), F, `${label}: countRows() at version 2`);
  const schema = await t.schema();
  checkEq(schema.fields.map((f) => [f.name, String(f.type)]), [['id', 'Int64'], ['val', 'Float64'], ['name', 'Utf8']],
    `${label}: schema`);
  for (const v of ours) {
    checkEq([v.operation_type, v.read_version, v.writer_version, v.data_format, v.total_fragments, v.total_rows],
      [v.version === 1 ? 'Overwrite' : 'Append', v.version - 1, '8.0.0', '2.1', F, F], `${label} v${v.version}: fields`);
    check(fs.existsSync(path.join(dir, '_transactions', v.transaction_file)), `${label} v${v.version}: txn file`);
  }
  const dt = ours.slice(1).map((v, i) => v.timestamp_millis - ours[i].timestamp_millis);
  check(dt.every((d) => d === 1000), `${label}: timestamps 1 s apart: ${dt}`);
  const perFrag = ours[ours.length - 1].manifest_size / F;
  check(perFrag > 55 && perFrag < 95, `${label}: ${perFrag.toFixed(1)} bytes per fragment`);
  console.log(`  ok ${label}: ${nversions} versions, ${perFrag.toFixed(1)} manifest bytes per fragment`);
}

await compare('generated', V);
// Append three more versions; LanceDB and lancever agree again.
runGen([dir, '--start', String(V + 1), '--versions', '3', '--fragments', String(F), '--data-file', dataFile]);
await compare('generated + --start', V + 3);
// A checkpoint of a generated dataset is read back unchanged.
const before = lvJson(['versions', dir, '--json']).map((v) => pick(v));
const cp = lvJson(['checkpoint', dir, '--json']);
checkEq([cp.latest_version, cp.entries], [V + 3, V + 3], 'checkpoint of the generated dataset');
const r = lv(['versions', dir, '--json', '--stats']);
check(/answered from newest checkpoint; manifests read 0/.test(r.stderr), `versions from checkpoint: ${r.stderr}`);
checkEq(JSON.parse(r.stdout).map((v) => pick(v)), before, 'versions after checkpoint');
// Without --data-file the generator still gives a listable dataset (used by the bench).
const bare = path.join(root, 'bare.lance');
runGen([bare, '--versions', '3', '--fragments', '10']);
const t = await openDir(bare);
checkEq((await t.listVersions()).map(lanceVersion).sort(byVersion),
  lvJson(['versions', bare, '--json']).map((v) => pick(v)), 'bare dataset: listVersions() vs lancever');
// Bad arguments are a clean error.
for (const args of [[], [bare], [bare, '--versions', 'x', '--fragments', '1'], [bare, '--versions', '1']]) {
  const b = spawnSync(gen, args, { encoding: 'utf8' });
  check(b.status === 2 && /usage|not a number/.test(b.stderr), `gen_dataset ${args.join(' ')}: status ${b.status}`);
}
finish('test_gen_dataset');
