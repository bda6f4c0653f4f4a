// versions() on datasets written by LanceDB itself (no checkpoint: every manifest read).
//   node bench/bench_versions.mjs [--runs N] [--out DIR] [--only 200|2000] [--keep]
// Datasets, built with LanceDB 0.31.0 and cached in bench/out/datasets/ (deleted afterwards
// without --keep; building them takes ~15-20 s):
//   (i)  200 versions: createTable + 199 single-row appends
//   (ii) 2,000 versions: createTable + 1,999 single-row appends, no compaction, so version N
//        has N fragments and manifests grow to ~168 KB (~160 MiB in all).
// Measured: LanceDB connect + openTable + listVersions() in a child process (fresh connection
// per run, and listVersions() again on the same handle), lancever in-process
// (bench/time_versions) and as a whole process with its peak RSS (bench/rusage).
// Writes DIR/results.json (default bench/out/versions/).
import fs from 'node:fs';
import path from 'node:path';
import { lancedb } from '../tests/interop/peer.mjs';
import {
  here, bin, requireBinaries, parseArgs, run, timeProcess, timeInProcess, lvStats, lanceChild, machine,
  fms, fx, fmb, nowMs,
} from './lib.mjs';

const a = parseArgs();
const runs = Math.max(5, Number(a.get('--runs', 9)));
const keep = a.has('--keep');
const only = a.get('--only', null);
const outDir = path.resolve(a.get('--out', path.join(here, 'out', 'versions')));
const dataDir = path.resolve(process.env.LV_BENCH_DATA || path.join(here, 'out', 'datasets'));
requireBinaries('time_versions', 'rusage');
fs.mkdirSync(outDir, { recursive: true });
fs.mkdirSync(dataDir, { recursive: true });

const CASES = [
  { key: '200', name: '200 single-row appends', table: 'appends_200', versions: 200 },
  { key: '2000', name: '2,000 single-row appends (big manifests)', table: 'appends_2000', versions: 2000 },
].filter((c) => !only || c.key === only);
const row = (i) => [{ id: i, val: i * 1.5, name: 'r' + i }];

async function build(c) {
  const dir = path.join(dataDir, c.table + '.lance');
  const marker = path.join(dataDir, c.table + '.complete');
  if (fs.existsSync(marker) && fs.existsSync(dir)) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  const t0 = nowMs();
  const db = await lancedb.connect(dataDir);
  const t = await db.createTable(c.table, row(0));
  for (let i = 1; i < c.versions; i++) await t.add(row(i));
  if (await t.version() !== c.versions) throw new Error(`${c.table}: version ${await t.version()}`);
  fs.writeFileSync(marker, `${c.versions}\n`);
  console.error(`built ${c.table}: ${c.versions} versions in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
  return dir;
}

const results = [];
const started = nowMs();
for (const c of CASES) {
  const dir = await build(c);
  let bytes = 0, max = 0;
  for (const f of fs.readdirSync(path.join(dir, '_versions')).filter((x) => x.endsWith('.manifest'))) {
    const s = fs.statSync(path.join(dir, '_versions', f)).size;
    bytes += s; max = Math.max(max, s);
  }
  const ours = JSON.parse((await run(bin, ['versions', dir, '--json'])).stdout).length;
  if (ours !== c.versions) throw new Error(`${c.table}: lancever lists ${ours}, expected ${c.versions}`);
  const r = { case: c.name, versions: c.versions, manifest_bytes: bytes, max_manifest_bytes: max };
  r.lance = await lanceChild(['versions', dataDir, c.table, String(c.versions), '--runs', String(runs)]);
  r.inproc = await timeInProcess(dir, { repeat: runs });
  r.proc = await timeProcess(['versions', dir], { repeat: runs });
  r.proc1 = await timeProcess(['versions', dir, '--threads', '1'], { repeat: runs });
  r.stats = await lvStats(['versions', dir]);
  results.push(r);
  console.error(`${c.table}: LanceDB ${fms(r.lance.median_ms)} ms, lancever ${fms(r.inproc.open_versions_ms)} ms in-process, ` +
    `${fms(r.proc.median_ms)} ms process`);
}
fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify({ kind: 'versions', runs, machine: machine(),
  date: new Date().toISOString(), seconds: Math.round((nowMs() - started) / 1000), cases: results }, null, 1) + '\n');
const L = ['| case | manifests MiB (max KB) | LanceDB ms (same handle) | lancever in-process ms | lancever process ms (1 thread) | speedup (in-process / process) | RSS MB LanceDB / lancever |',
  '|---|---:|---:|---:|---:|---:|---:|'];
for (const r of results)
  L.push(`| ${r.case} | ${(r.manifest_bytes / 1048576).toFixed(1)} (${(r.max_manifest_bytes / 1024).toFixed(0)}) | ` +
    `${fms(r.lance.median_ms)} (${fms(r.lance.same_handle_ms)}) | ${fms(r.inproc.open_versions_ms)} | ` +
    `${fms(r.proc.median_ms)} (${fms(r.proc1.median_ms)}) | ${fx(r.lance.median_ms, r.inproc.open_versions_ms)} / ` +
    `${fx(r.lance.median_ms, r.proc.median_ms)} | ${fmb(r.lance.maxrss_kb)} / ${fmb(r.proc.maxrss_kb)} |`);
console.log(L.join('\n'));
if (!keep)
  for (const c of CASES) {
    fs.rmSync(path.join(dataDir, c.table + '.lance'), { recursive: true, force: true });
    fs.rmSync(path.join(dataDir, c.table + '.complete'), { force: true });
  }
process.exit(0);
