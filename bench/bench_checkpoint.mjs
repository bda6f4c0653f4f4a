// Benchmark: version checkpoints (the Version Checkpointing proposal's local table).
//   node bench/bench_checkpoint.mjs [--quick|--full] [--runs N] [--out DIR] [--no-lancedb]
//                                   [--versions 2,4,..] [--fragments 1000,..] [--clean]
// Grid: versions {2,4,...,512} x fragments {1K, 10K, 100K}; --quick (default) stops 100K
// fragments at 32 versions, --full runs everything (100K x 512 is ~4 GB and LanceDB takes
// minutes).  Each dataset is written by bench/gen_dataset (cached in DIR, default
// bench/out/checkpoint/; --clean deletes the cache first) and timed, median of --runs
// (default 5, at least 5) after one warm-up, warm page cache:
//   LanceDB        fresh connect + openTable + listVersions() (LanceDB 0.31.0, in-process)
//   no-checkpoint  `lancever versions DIR` (whole process, stdout to /dev/null)
//   checkpoint     the same after `lancever checkpoint DIR`
//   +8 / +16 tail  the same after 8 / 16 more versions were generated past the checkpoint
// and in-process with bench/time_versions (lv_dataset_open + lv_versions, no process
// start-up).  Then: 10,000 versions x 1 fragment from a checkpoint (goal <= 5 ms), as-of
// lookups after load (goal <= 1 us), checkpoint write time and bytes per version at 10K
// entries.  Prints markdown tables (also written to DIR/results.md).
// LANCEVER_BIN (default <repo>/build-bench/lancever) and LANCEVER_BUILD_DIR (default: the
// binary's directory) locate lancever, gen_dataset and time_versions.
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
const full = args.includes('--full');
const runs = Math.max(5, Number(opt('--runs', 5)));
const outDir = path.resolve(opt('--out', process.env.LV_BENCH_OUT
  ? path.join(process.env.LV_BENCH_OUT, 'checkpoint') : path.join(here, 'out', 'checkpoint')));
const noLance = args.includes('--no-lancedb');
const bin = process.env.LANCEVER_BIN || path.join(repo, 'build-bench/lancever');
const buildDir = process.env.LANCEVER_BUILD_DIR || path.dirname(bin);
const gen = path.join(buildDir, 'gen_dataset');
const timer = path.join(buildDir, 'time_versions');
for (const f of [bin, gen, timer])
  if (!fs.existsSync(f)) { console.error(`bench: ${f} not found (build bench/*.c)`); process.exit(1); }
if (args.includes('--clean')) fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });

const VERSIONS = (opt('--versions', null) || '2,4,8,16,32,64,128,256,512').split(',').map(Number);
const FRAGMENTS = (opt('--fragments', null) || '1000,10000,100000').split(',').map(Number);
const maxVersions = (f) => (f >= 100000 && !full ? 32 : Infinity);
const U64_MAX = (1n << 64n) - 1n;

const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const devnull = fs.openSync('/dev/null', 'w');

function sh(cmd, argv, what = cmd) {
  const r = spawnSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${what} ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}
function timeProcess(argv) {
  const once = () => {
    const r = spawnSync(bin, argv, { stdio: ['ignore', devnull, 'pipe'], encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`lancever ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  };
  once();
  const t = [];
  for (let i = 0; i < runs; i++) { const a = nowMs(); once(); t.push(nowMs() - a); }
  return median(t);
}
function timeInProcess(dir) {
  return JSON.parse(sh(timer, [dir, '--repeat', String(Math.max(runs, 9))], 'time_versions').stdout);
}
async function timeLance(dir, expect) {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-bench-'));
  fs.symlinkSync(dir, path.join(parent, 'ds.lance'));
  try {
    const once = async () => {
      const db = await lancedb.connect(parent);
      const t = await db.openTable('ds');
      const n = (await t.listVersions()).length;
      if (n !== expect) throw new Error(`LanceDB listed ${n} versions of ${dir}, expected ${expect}`);
    };
    await once();
    const t = [];
    for (let i = 0; i < runs; i++) { const a = nowMs(); await once(); t.push(nowMs() - a); }
    return median(t);
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
}
function stats(dir, cmd = 'versions') {
  const r = spawnSync(bin, [cmd, dir, '--stats'], { stdio: ['ignore', devnull, 'pipe'], encoding: 'utf8' });
  return (/answered from ([a-z ]+); manifests read (\d+)/.exec(r.stderr) || []).slice(1).join(', ');
}

// A cached dataset with exactly `n` versions (base) and no checkpoint: tails and
// checkpoints of a previous run are removed.
function dataset(n, f) {
  const dir = path.join(outDir, `gen_${f}f_${n}v.lance`);
  const marker = dir + '.complete';
  if (!fs.existsSync(marker) || fs.readFileSync(marker, 'utf8').trim() !== String(n)) {
    fs.rmSync(dir, { recursive: true, force: true });
    const a = nowMs();
    sh(gen, [dir, '--versions', String(n), '--fragments', String(f)], 'gen_dataset');
    fs.writeFileSync(marker, `${n}\n`);
    console.error(`generated ${path.basename(dir)} in ${((nowMs() - a) / 1000).toFixed(1)} s`);
  }
  resetTo(dir, n);
  return dir;
}
function resetTo(dir, n) {
  fs.rmSync(path.join(dir, '_checkpoints'), { recursive: true, force: true });
  for (const name of fs.readdirSync(path.join(dir, '_versions'))) {
    const m = /^(\d{20})\.manifest$/.exec(name);
    if (m && U64_MAX - BigInt(m[1]) > BigInt(n)) fs.rmSync(path.join(dir, '_versions', name));
  }
  for (const name of fs.readdirSync(path.join(dir, '_transactions')))
    if (Number(name.split('-')[0]) >= n) fs.rmSync(path.join(dir, '_transactions', name));
  fs.writeFileSync(path.join(dir, '_versions', 'latest_version_hint.json'), `{"version":${n}}`);
}
function addTail(dir, from, count, f) {
  sh(gen, [dir, '--start', String(from), '--versions', String(count), '--fragments', String(f)], 'gen_dataset');
}

const f2 = (x) => (x === null || x === undefined ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(1));
const fx = (a, b) => (a && b ? `${(a / b).toFixed(a / b < 10 ? 1 : 0)}x` : '-');
const fk = (f) => (f >= 1000 ? `${f / 1000}K` : String(f));

// ---------------------------------------------------------------- the grid
const rowsOut = [];
for (const f of FRAGMENTS) {
  for (const n of VERSIONS) {
    if (n > maxVersions(f)) continue;
    const dir = dataset(n, f);
    const r = { n, f };
    r.manifestKB = fs.statSync(path.join(dir, '_versions', (U64_MAX - 1n).toString().padStart(20, '0') + '.manifest')).size / 1024;
    r.lance = noLance ? null : await timeLance(dir, n);
    r.none = timeProcess(['versions', dir]);
    r.noneIn = timeInProcess(dir);
    const a = nowMs();
    sh(bin, ['checkpoint', dir], 'lancever checkpoint');
    r.cpWrite = nowMs() - a;
    r.cp = timeProcess(['versions', dir]);
    r.cpIn = timeInProcess(dir);
    r.cpStats = stats(dir);
    addTail(dir, n + 1, 8, f);
    r.t8 = timeProcess(['versions', dir]);
    r.t8In = timeInProcess(dir);
    addTail(dir, n + 9, 8, f);
    r.t16 = timeProcess(['versions', dir]);
    r.t16In = timeInProcess(dir);
    r.t16Stats = stats(dir);
    resetTo(dir, n);
    rowsOut.push(r);
    console.error(`${n} versions x ${fk(f)}: LanceDB ${f2(r.lance)} ms, none ${f2(r.none)}, cp ${f2(r.cp)}, ` +
      `+8 ${f2(r.t8)}, +16 ${f2(r.t16)} (in-process ${f2(r.noneIn.open_versions_ms)} / ${f2(r.cpIn.open_versions_ms)})`);
  }
}

// ---------------------------------------------------------------- 10,000 versions
const big = dataset(10000, 1);
const bigRes = {};
bigRes.lance = noLance ? null : await timeLance(big, 10000);
bigRes.none = timeProcess(['versions', big]);
bigRes.noneIn = timeInProcess(big);
{
  const t = [];
  let j;
  for (let i = 0; i < runs; i++) {
    fs.rmSync(path.join(big, '_checkpoints'), { recursive: true, force: true });
    const a = nowMs();
    j = JSON.parse(sh(bin, ['checkpoint', big, '--json'], 'lancever checkpoint').stdout);
    t.push(nowMs() - a);
  }
  bigRes.cpWrite = median(t);
  bigRes.cpBytes = j.file_size;
  bigRes.cpEntries = j.entries;
  const t2 = [];
  for (let i = 0; i < runs; i++) { const a = nowMs(); sh(bin, ['checkpoint', big], 'lancever checkpoint'); t2.push(nowMs() - a); }
  bigRes.cpAgain = median(t2);
}
bigRes.cp = timeProcess(['versions', big]);
bigRes.cpIn = timeInProcess(big);
bigRes.history = timeProcess(['history', big]);
bigRes.cpStats = stats(big);
bigRes.asof = JSON.parse(sh(timer, [big, '--asof', '--lookups', '1000000', '--repeat', String(runs)], 'time_versions').stdout);
bigRes.asofCli = timeProcess(['asof', big, '1700005000500']);
resetTo(big, 10000);

// ---------------------------------------------------------------- report
const cpu = os.cpus()[0] ? os.cpus()[0].model : '?';
const L = [];
L.push(`## Version checkpoints: local benchmark`);
L.push('');
L.push(`Median of ${runs} runs after a warm-up, warm page cache; ${os.cpus().length} CPUs (${cpu}), ` +
  `${process.platform}, node ${process.version}, LanceDB 0.31.0 (Lance 8.0.0). Datasets from ` +
  `bench/gen_dataset (V2 manifest names, ~84 bytes per fragment like Lance's own). ` +
  `${full ? '--full' : '--quick'} grid.`);
L.push('');
L.push('### versions(): whole `lancever versions` process (ms)');
L.push('');
L.push('| versions | fragments | manifest KB | LanceDB ms | no-checkpoint ms | checkpoint ms | +8 tail | +16 tail | speedup vs LanceDB | speedup vs no-checkpoint |');
L.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rowsOut)
  L.push(`| ${r.n} | ${fk(r.f)} | ${r.manifestKB.toFixed(0)} | ${f2(r.lance)} | ${f2(r.none)} | ${f2(r.cp)} | ${f2(r.t8)} | ` +
    `${f2(r.t16)} | ${fx(r.lance, r.cp)} | ${fx(r.none, r.cp)} |`);
L.push('');
L.push('### versions(): in-process, `lv_dataset_open` + `lv_versions` (bench/time_versions, ms)');
L.push('');
L.push('| versions | fragments | LanceDB ms | no-checkpoint ms | checkpoint ms | +8 tail | +16 tail | speedup vs LanceDB | speedup vs no-checkpoint | checkpoint write ms |');
L.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rowsOut) {
  const c = r.cpIn.open_versions_ms;
  L.push(`| ${r.n} | ${fk(r.f)} | ${f2(r.lance)} | ${f2(r.noneIn.open_versions_ms)} | ${f2(c)} | ` +
    `${f2(r.t8In.open_versions_ms)} | ${f2(r.t16In.open_versions_ms)} | ${fx(r.lance, c)} | ` +
    `${fx(r.noneIn.open_versions_ms, c)} | ${f2(r.cpWrite)} |`);
}
const bad = rowsOut.filter((r) => !/^newest checkpoint, 0$/.test(r.cpStats) || !/^newest checkpoint, 16$/.test(r.t16Stats));
L.push('');
L.push(`Every checkpoint row was answered from the newest checkpoint with 0 manifests read ` +
  `(+16 tail: 16 read)${bad.length ? ` EXCEPT ${bad.map((r) => `${r.n}x${fk(r.f)}: ${r.cpStats} / ${r.t16Stats}`).join('; ')}` : ''}.`);
L.push('');
L.push('### 10,000 versions (1 fragment each)');
L.push('');
L.push('| measure | value | goal |');
L.push('|---|---:|---:|');
L.push(`| LanceDB listVersions() (fresh open) | ${f2(bigRes.lance)} ms | |`);
L.push(`| lancever versions, no checkpoint (process / in-process) | ${f2(bigRes.none)} / ${f2(bigRes.noneIn.open_versions_ms)} ms | |`);
L.push(`| lancever versions from checkpoint (process / in-process) | ${f2(bigRes.cp)} / ${f2(bigRes.cpIn.open_versions_ms)} ms | <= 5 ms |`);
L.push(`| lv_versions from checkpoint on an open handle | ${f2(bigRes.cpIn.versions_ms)} ms | |`);
L.push(`| lancever history from checkpoint (process) | ${f2(bigRes.history)} ms | |`);
L.push(`| answered from | ${bigRes.cpStats} manifests read | |`);
L.push(`| checkpoint write, from scratch (process) | ${f2(bigRes.cpWrite)} ms | |`);
L.push(`| checkpoint again, already present (process) | ${f2(bigRes.cpAgain)} ms | |`);
L.push(`| checkpoint file | ${bigRes.cpBytes} bytes, ${bigRes.cpEntries} entries, ${(bigRes.cpBytes / bigRes.cpEntries).toFixed(1)} B/version | ~200 B/version (proposal) |`);
L.push(`| lv_timeline_load (in-process) | ${f2(bigRes.asof.load_ms)} ms | |`);
L.push(`| as-of lookup after load (1e6 random, inclusive+strict) | ${bigRes.asof.lookup_ns.toFixed(1)} ns | <= 1000 ns |`);
L.push(`| as-of results checked against a linear scan | ${bigRes.asof.checked} x 2, ${bigRes.asof.mismatches} mismatches | 0 |`);
L.push(`| lancever asof (whole process) | ${f2(bigRes.asofCli)} ms | |`);
const text = L.join('\n');
console.log(text);
fs.writeFileSync(path.join(outDir, 'results.md'), text + '\n');
process.exit(bigRes.asof.mismatches ? 1 : 0);
