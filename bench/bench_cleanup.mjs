// Benchmark: cleanup of N versions x F fragments, lancever vs LanceDB's own cleanup on twin copies.
//   node bench/bench_cleanup.mjs [--runs N] [--out DIR] [--shapes 512x10000,64x10000,512x1000]
//                                [--strays K] [--clean]
// Each shape is written once by bench/gen_dataset (cached in DIR, default bench/out/cleanup/):
// N versions, each with the same F fragments pointing at one real 1-row data file (physical_rows
// 2,000,000 so that LanceDB's optimize() has nothing to compact and commits no version), one
// .txn per version, plus K (default 1000) unreferenced stray data files.  Manifests, txns and
// files are stamped in the past (manifest mtime = its timestamp), as a real history would be.
// Per run, two fresh twin copies (cp -a) are cleaned:
//   lancever  `lancever cleanup COPY --older-than 0s --delete-unverified --json` (whole process)
//   LanceDB   connect + openTable + optimize({cleanupOlderThan: now + 1 s, deleteUnverified: true})
//             (LanceDB 0.31.0 in a child process, bench/lance_child.mjs)
// with each side's peak RSS (bench/rusage for lancever), and a third twin on which bench/unlink_limit
// removes the files lancever removed (one process, a directory opened once, unlinkat each file: the
// deletion limit; its own timer, list reading excluded).
// median of --runs (default 3).  Files and bytes removed by each are compared (from before/after
// listings, ignoring latest_version_hint.json and _checkpoints/); any difference fails the bench.
// Prints a markdown table (also written to DIR/results.md, and DIR/results.json).
// LANCEVER_BIN (default <repo>/build-bench/lancever) and LANCEVER_BUILD_DIR locate the binaries.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { lancedb, arrow } from '../tests/interop/peer.mjs';
import { tool, lanceChild, machine } from './lib.mjs';
import { walkFiles } from '../tests/interop/files.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const runs = Math.max(1, Number(opt('--runs', 3)));
const strays = Number(opt('--strays', 1000));
const outDir = path.resolve(opt('--out', process.env.LV_BENCH_OUT
  ? path.join(process.env.LV_BENCH_OUT, 'cleanup') : path.join(here, 'out', 'cleanup')));
const bin = process.env.LANCEVER_BIN || path.join(repo, 'build-bench/lancever');
const buildDir = process.env.LANCEVER_BUILD_DIR || path.dirname(bin);
const gen = path.join(buildDir, 'gen_dataset');
for (const f of [bin, gen, tool('rusage'), tool('unlink_limit')])
  if (!fs.existsSync(f)) { console.error(`bench: ${f} not found (build bench/*.c)`); process.exit(1); }
if (args.includes('--clean')) fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
const SHAPES = (opt('--shapes', null) || '512x10000,64x10000,512x1000').split(',')
  .map((s) => s.split('x').map(Number));

const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const U64_MAX = (1n << 64n) - 1n;
const IGNORED = (p) => p === 'latest_version_hint.json' || p.startsWith('_checkpoints/');

function sh(cmd, argv, what = cmd) {
  const r = spawnSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${what} ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}
function listing(dir) {
  const out = new Map();
  walkFiles(dir, (r, p) => out.set(r, fs.statSync(p).size));
  return out;
}
function removed(before, after) {
  const files = [...before.keys()].filter((p) => !after.has(p) && !IGNORED(p)).sort();
  return { files, bytes: files.reduce((s, p) => s + before.get(p), 0) };
}

// A 1-row data file with the generator's schema (id int64, val double, name utf8).
async function donorFile() {
  const parent = path.join(outDir, 'donor');
  const data = path.join(parent, 'd.lance', 'data');
  if (!fs.existsSync(data)) {
    const tbl = new arrow.Table({
      id: arrow.vectorFromArray([42n], new arrow.Int64()),
      val: arrow.vectorFromArray([1.5], new arrow.Float64()),
      name: arrow.vectorFromArray(['forty-two'], new arrow.Utf8()),
    });
    await (await lancedb.connect(parent)).createTable('d', tbl);
  }
  return path.join(data, fs.readdirSync(data)[0]);
}

function dataset(n, f, donor) {
  const dir = path.join(outDir, `cl_${f}f_${n}v_${strays}s`, 'ds.lance');
  const marker = path.dirname(dir) + '.complete';
  if (fs.existsSync(marker)) return dir;
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  const a = nowMs();
  const base = Date.now() - 2 * 86400e3; // versions 2 days ago, 1 s apart
  sh(gen, [dir, '--versions', String(n), '--fragments', String(f), '--data-file', donor,
    '--data-rows', '2000000', '--base-ms', String(base)], 'gen_dataset');
  const stamp = (p, ms) => fs.utimesSync(p, ms / 1000, ms / 1000);
  for (const name of fs.readdirSync(path.join(dir, '_versions'))) {
    const m = /^(\d{20})\.manifest$/.exec(name);
    if (m) stamp(path.join(dir, '_versions', name), base + 1000 * Number(U64_MAX - BigInt(m[1])));
  }
  for (const name of fs.readdirSync(path.join(dir, '_transactions')))
    stamp(path.join(dir, '_transactions', name), base + 1000 * (Number(name.split('-')[0]) + 1) - 1);
  for (const name of fs.readdirSync(path.join(dir, 'data'))) stamp(path.join(dir, 'data', name), base - 1000);
  const bytes = fs.readFileSync(donor);
  for (let i = 0; i < strays; i++) {
    const p = path.join(dir, 'data', `stray${String(i).padStart(6, '0')}.lance`);
    fs.writeFileSync(p, bytes);
    stamp(p, base - 2000);
  }
  fs.writeFileSync(marker, 'ok\n');
  console.error(`generated ${n} x ${f} in ${((nowMs() - a) / 1000).toFixed(1)} s`);
  return dir;
}

function twin(dir, tag) {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), `lv-bench-cl-${tag}-`));
  sh('cp', ['-a', dir, path.join(parent, 'ds.lance')], 'cp');
  return parent;
}

const rowsOut = [], cells = [];
let bad = 0;
const started = nowMs();
const donor = await donorFile();
const jsonOut = path.join(os.tmpdir(), `lv-bench-cl-${process.pid}.json`);
for (const [n, f] of SHAPES) {
  const dir = dataset(n, f, donor);
  const before = listing(dir);
  const tl = [], tk = [], tu = [];
  let lvRes = null, lkRes = null, lvJson = null, lkStats = null, lvRss = 0, lkRss = 0;
  for (let i = 0; i < runs; i++) {
    const pa = twin(dir, 'lv'), pb = twin(dir, 'lance');
    try {
      const r = JSON.parse(sh(tool('rusage'), ['--repeat', '1', '--warmup', '0', '--stdout', jsonOut, '--', bin,
        'cleanup', path.join(pa, 'ds.lance'), '--older-than', '0s', '--delete-unverified', '--json'], 'rusage').stdout.trim());
      tl.push(r.median_ms);
      lvRss = Math.max(lvRss, r.maxrss_kb);
      lvJson = JSON.parse(fs.readFileSync(jsonOut, 'utf8'));
      lvRes = removed(before, listing(path.join(pa, 'ds.lance')));
      lkStats = await lanceChild(['cleanup', pb, 'ds']);
      tk.push(lkStats.median_ms);
      lkRss = Math.max(lkRss, lkStats.maxrss_kb);
      lkRes = removed(before, listing(path.join(pb, 'ds.lance')));
      fs.rmSync(pb, { recursive: true, force: true });
      const pc = twin(dir, 'limit'), list = path.join(pc, 'removed.txt');
      try {
        fs.writeFileSync(list, lvRes.files.join('\n') + '\n');
        tu.push(JSON.parse(sh(tool('unlink_limit'), [path.join(pc, 'ds.lance'), list], 'unlink_limit').stdout.trim()).ms);
      } finally {
        fs.rmSync(pc, { recursive: true, force: true });
      }
    } finally {
      fs.rmSync(pa, { recursive: true, force: true });
      fs.rmSync(pb, { recursive: true, force: true });
    }
  }
  const onlyLv = lvRes.files.filter((p) => !lkRes.files.includes(p));
  const onlyLk = lkRes.files.filter((p) => !lvRes.files.includes(p));
  const agree = !onlyLv.length && !onlyLk.length && lvJson.bytes_removed === lkStats.bytes_removed &&
    lvJson.versions_removed === lkStats.versions_removed;
  if (!agree) {
    bad++;
    console.error(`${n} x ${f}: DISAGREE\n  only lancever: ${JSON.stringify(onlyLv.slice(0, 20))} (${onlyLv.length})\n` +
      `  only LanceDB: ${JSON.stringify(onlyLk.slice(0, 20))} (${onlyLk.length})\n` +
      `  bytes lancever ${lvJson.bytes_removed} LanceDB ${lkStats.bytes_removed}; versions ${lvJson.versions_removed} vs ${lkStats.versions_removed}`);
  }
  const mb = (b) => (b / 1048576).toFixed(1);
  const total = [...before.values()].reduce((s, x) => s + x, 0);
  cells.push({ versions: n, fragments: f, strays, dataset_bytes: total, lancever_ms: median(tl), lance_ms: median(tk),
    limit_ms: median(tu),
    lancever_rss_kb: lvRss, lance_rss_kb: lkRss, lance_base_rss_kb: lkStats.base_rss_kb,
    versions_removed: lvJson.versions_removed, files_removed: lvRes.files.length, bytes_removed: lvRes.bytes, same_files: agree });
  rowsOut.push(`| ${n} x ${f >= 1000 ? f / 1000 + 'K' : f} | ${mb(total)} MB ` +
    `| ${median(tl).toFixed(0)} | ${median(tk).toFixed(0)} | ${(median(tk) / median(tl)).toFixed(1)}x ` +
    `| ${lvJson.versions_removed} / ${lvRes.files.length} / ${mb(lvRes.bytes)} MB ` +
    `| ${lkStats.versions_removed} / ${lkRes.files.length} / ${mb(lkRes.bytes)} MB | ${agree ? 'yes' : '**NO**'} ` +
    `| ${(lvRss / 1024).toFixed(0)} / ${(lkRss / 1024).toFixed(0)} ` +
    `| ${median(tu).toFixed(0)} | ${(median(tl) / median(tu)).toFixed(1)}x |`);
  console.error(`${n} x ${f}: lancever ${median(tl).toFixed(0)} ms, LanceDB ${median(tk).toFixed(0)} ms`);
}
fs.rmSync(jsonOut, { force: true });

const table = [
  `Cleanup, versions x fragments, median of ${runs} (${os.cpus().length} CPUs; fresh cp -a twin per run, ` +
  `warm page cache; ${strays} stray data files; lancever whole process, LanceDB 0.31.0 in a child process).`,
  '',
  '| versions x fragments | dataset | lancever ms | LanceDB ms | speed-up | lancever removed (versions / files / bytes) | LanceDB removed (versions / files / bytes) | same files | peak RSS MB lancever / LanceDB | deletion limit ms | lancever / limit |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...rowsOut,
].join('\n');
console.log(table);
fs.writeFileSync(path.join(outDir, 'results.md'), table + '\n');
fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify({ kind: 'cleanup', runs, strays, machine: machine(),
  date: new Date().toISOString(), seconds: Math.round((nowMs() - started) / 1000), cells }, null, 1) + '\n');
process.exit(bad ? 1 : 0);
