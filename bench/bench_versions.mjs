// Benchmark: `lancever versions` against LanceDB listVersions() (LanceDB 0.31.0 =
// Lance 8.0.0) on the same datasets, in one run.
//   node bench/bench_versions.mjs [--keep] [--runs N] [--out DIR] [--only 200|2000]
// Datasets (built with LanceDB, cached in DIR, default bench/out/):
//   (i)  200 versions: createTable + 199 single-row appends
//   (ii) 2,000 versions: createTable + 1,999 single-row appends, no compaction, so
//        version N has N fragments and manifests grow to ~168 KB (~160 MiB total).
// A cached dataset is reused if complete; without --keep the datasets are deleted
// after the run.  Timings are medians of --runs (default 9, at least 7) after one
// warm-up, with a warm page cache for both sides:
//   LanceDB fresh:  connect + openTable + listVersions() (new connection per run)
//   LanceDB handle: listVersions() on an already opened table
//   lancever:       the whole `lancever versions DIR` process, stdout to /dev/null
//                   (default --threads, and --threads 1)
// LANCEVER_BIN selects the binary (default <repo>/build-bench/lancever, as built
// in Release by bench/run.sh).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { lancedb } from '../tests/interop/peer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const keep = args.includes('--keep');
const runs = Math.max(7, Number(opt('--runs', 9)));
const outDir = path.resolve(opt('--out', process.env.LV_BENCH_OUT || path.join(here, 'out')));
const only = opt('--only', null);
const bin = process.env.LANCEVER_BIN || path.join(repo, 'build-bench/lancever');
if (!fs.existsSync(bin)) { console.error(`bench: lancever binary not found at ${bin}`); process.exit(1); }

const CASES = [
  { key: '200', name: '200 single-row appends', table: 'appends_200', versions: 200 },
  { key: '2000', name: '2,000 single-row appends (big manifests)', table: 'appends_2000', versions: 2000 },
].filter((c) => !only || c.key === only);

const row = (i) => [{ id: i, val: i * 1.5, name: 'r' + i }];
const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

async function build(c) {
  const dir = path.join(outDir, c.table + '.lance');
  const marker = path.join(outDir, c.table + '.complete');
  if (fs.existsSync(marker) && fs.existsSync(dir)) return { dir, built: false };
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const t0 = nowMs();
  const db = await lancedb.connect(outDir);
  const t = await db.createTable(c.table, row(0));
  for (let i = 1; i < c.versions; i++) await t.add(row(i));
  if (await t.version() !== c.versions) throw new Error(`${c.table}: version ${await t.version()}`);
  fs.writeFileSync(marker, `${c.versions}\n`);
  console.error(`built ${c.table}: ${c.versions} versions in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
  return { dir, built: true };
}

function manifestBytes(dir) {
  let n = 0, count = 0, max = 0;
  for (const f of fs.readdirSync(path.join(dir, '_versions'))) {
    if (!f.endsWith('.manifest')) continue;
    const s = fs.statSync(path.join(dir, '_versions', f)).size;
    n += s; count++; max = Math.max(max, s);
  }
  return { bytes: n, count, max };
}

async function timeAsync(fn) {
  await fn();                                       // warm-up
  const t = [];
  for (let i = 0; i < runs; i++) { const a = nowMs(); await fn(); t.push(nowMs() - a); }
  return median(t);
}

const devnull = fs.openSync('/dev/null', 'w');
function runLv(argv) {
  const r = spawnSync(bin, argv, { stdio: ['ignore', devnull, 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`lancever ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}
function timeLv(argv) {
  runLv(argv);                                      // warm-up
  const t = [];
  for (let i = 0; i < runs; i++) { const a = nowMs(); runLv(argv); t.push(nowMs() - a); }
  return median(t);
}

const results = [];
const builtDirs = [];
for (const c of CASES) {
  const { dir, built } = await build(c);
  builtDirs.push(c);
  const parent = path.dirname(dir);
  const m = manifestBytes(dir);

  // Sanity: both sides list the same number of versions.
  const json = spawnSync(bin, ['versions', dir, '--json'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (json.status !== 0) throw new Error(`lancever --json failed: ${json.stderr}`);
  const ours = JSON.parse(json.stdout).length;
  const db0 = await lancedb.connect(parent);
  const handle = await db0.openTable(c.table);
  const theirs = (await handle.listVersions()).length;
  if (ours !== c.versions || theirs !== c.versions)
    throw new Error(`${c.table}: lancever lists ${ours}, LanceDB ${theirs}, expected ${c.versions}`);

  const fresh = await timeAsync(async () => {
    const db = await lancedb.connect(parent);
    const t = await db.openTable(c.table);
    await t.listVersions();
  });
  const same = await timeAsync(() => handle.listVersions());
  const lvDefault = timeLv(['versions', dir]);
  const lvOne = timeLv(['versions', dir, '--threads', '1']);
  const stats = spawnSync(bin, ['versions', dir, '--stats'], { stdio: ['ignore', devnull, 'pipe'], encoding: 'utf8' });
  results.push({ c, m, fresh, same, lvDefault, lvOne, stats: (stats.stderr || '').trim(), built });
}

const f1 = (x) => x.toFixed(1);
const lines = [
  `lancever versions vs LanceDB 0.31.0 listVersions(), median of ${runs} runs, warm cache` +
    ` (${process.platform}, ${os.cpus().length} CPUs, node ${process.version})`,
  '',
  '| case | versions | total manifest MiB (max KB) | LanceDB fresh ms | LanceDB same-handle ms | lancever ms | lancever --threads 1 ms | speedup vs fresh (same-handle) |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
];
for (const r of results) {
  lines.push(`| ${r.c.name} | ${r.c.versions} | ${(r.m.bytes / 1048576).toFixed(1)} (${(r.m.max / 1024).toFixed(0)}) | ` +
    `${f1(r.fresh)} | ${f1(r.same)} | ${f1(r.lvDefault)} | ${f1(r.lvOne)} | ` +
    `${f1(r.fresh / r.lvDefault)}x (${f1(r.same / r.lvDefault)}x) |`);
}
console.log(lines.join('\n'));
for (const r of results) if (r.stats) console.log(`\n${r.c.table} --stats: ${r.stats}`);

if (!keep) {
  for (const c of builtDirs) {
    fs.rmSync(path.join(outDir, c.table + '.lance'), { recursive: true, force: true });
    fs.rmSync(path.join(outDir, c.table + '.complete'), { force: true });
  }
  fs.rmSync(path.join(outDir, '__manifest'), { recursive: true, force: true });
  try { fs.rmdirSync(outDir); } catch { /* not empty or absent */ }
}
process.exit(0);
