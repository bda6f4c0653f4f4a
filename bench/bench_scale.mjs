// History at scale (issue 18): 1M and 10M recorded versions, and versions() beside its physical limit.
//
//   node bench/bench_scale.mjs [--sizes 1000000,10000000|0] [--live 1000000] [--no-limit] [--keep] [--out DIR]
//
// Part 1, for each size N (bench/gen_dataset; cached in bench/out/datasets/ with --keep): the last
// --live versions (default: all of N up to 1M) have manifests, the rest are recorded history written
// by lancever's own checkpoint writer (gen_dataset --recorded).  On a hard-linked copy:
//   checkpoint   `lancever checkpoint` from that state: time, peak RSS, bytes written (head + segments)
//   reads        head-only versions() (in-process: fresh handle, and one handle with its cache;
//                process; stats), full `lancever history` (time, peak RSS), --limit 100, --since (the
//                last 1000), lv_version_as_of from a cold handle (load + lookup) and `lancever asof`:
//                once with every live version live, once after the cleanup (16 live)
//   incremental  +100 versions, then `lancever checkpoint`: time, bytes written (before and after
//                the cleanup)
//   cleanup      `lancever cleanup --older-than 0s --retain-versions 16`: time, peak RSS
//   expire       on a second copy made after the checkpoint: `lancever expire --retain-versions 16`
// Part 2 (versions() in a long-running process): 2 and 512 x 1K fragments, 1,000 LanceDB-written versions
// and 10,000 x 1 fragment, each checkpointed; bench/limit_baseline (list, read the checkpoint whole,
// 4 KiB of the newest manifest) beside bench/time_versions (fresh handle each call; one handle, the
// cache; one handle with glibc's heap trimming off, as a comparison only: GLIBC_TUNABLES), and
// the whole `lancever versions --json` process beside `limit_baseline --write` (the same I/O and
// the same number of bytes written, into a file, both timed by bench/rusage).
// Writes DIR/results.json (default bench/out/scale/).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lancedb } from '../tests/interop/peer.mjs';
import { here, bin, tool, requireBinaries, parseArgs, run, timeProcess, timeInProcess, lvStats, machine, fms, fmb, nowMs } from './lib.mjs';

const a = parseArgs();
const SIZES = a.list('--sizes', '1000000,10000000').map(Number).filter((n) => n > 0); // --sizes 0: part 2 only
const LIVE = Number(a.get('--live', 1000000));
const keep = a.has('--keep');
const outDir = path.resolve(a.get('--out', path.join(here, 'out', 'scale')));
const dataDir = path.resolve(process.env.LV_BENCH_DATA || path.join(here, 'out', 'datasets'));
requireBinaries('gen_dataset', 'time_versions', 'rusage', 'limit_baseline');
fs.mkdirSync(outDir, { recursive: true });
fs.mkdirSync(dataDir, { recursive: true });
const BASE_MS = 1700000000000;
const jsonOut = path.join(os.tmpdir(), `lv-bench-scale-${process.pid}.json`);

async function rusageJson(argv) {
  const r = await run(tool('rusage'), ['--repeat', '1', '--warmup', '0', '--stdout', jsonOut, '--', bin, ...argv]);
  const t = JSON.parse(r.stdout.trim().split('\n').pop());
  let j = null;
  try { j = JSON.parse(fs.readFileSync(jsonOut, 'utf8')); } catch { j = null; }
  return { ms: t.median_ms, rss_kb: t.maxrss_kb, json: j };
}
const copy = async (src, dst) => { fs.rmSync(dst, { recursive: true, force: true }); await run('cp', ['-al', src, dst]); };
const statsOf = async (argv) => {
  const r = await run(bin, [...argv, '--stats'], { allowFail: false, discardStdout: true });
  const m = /manifests read (\d+), segments read (\d+).*requests (\d+), bytes read (\d+)/.exec(r.stderr);
  return m ? { manifests_read: +m[1], segments_read: +m[2], requests: +m[3], bytes_read: +m[4] } : null;
};

async function dataset(n) {
  const live = Math.min(n, LIVE);
  const dir = path.join(dataDir, `scale_${n}v_${live}live.lance`), marker = `${dir}.complete`;
  if (fs.existsSync(marker)) return { dir, live, generate_s: JSON.parse(fs.readFileSync(marker, 'utf8')).generate_s };
  fs.rmSync(dir, { recursive: true, force: true });
  const t = nowMs();
  await run(tool('gen_dataset'), [dir, '--versions', String(live), '--start', String(n - live + 1), '--fragments', '1',
    ...(live < n ? ['--recorded'] : [])]);
  const generate_s = (nowMs() - t) / 1000;
  fs.writeFileSync(marker, JSON.stringify({ generate_s }));
  console.error(`generated ${n} versions (${live} with manifests) in ${generate_s.toFixed(1)} s`);
  return { dir, live, generate_s };
}

/* versions(), history (full, --limit, --since) and as-of on the dataset as it is. */
async function reads(work, n) {
  const r = {};
  r.versions_inproc = await timeInProcess(work, { repeat: 21 });
  r.versions_proc = await timeProcess(['versions', work], { repeat: 5 });
  r.versions_stats = await statsOf(['versions', work]);
  r.history = await timeProcess(['history', work], { repeat: 3 });
  r.history_stats = await statsOf(['history', work]);
  r.history_limit = await timeProcess(['history', work, '--limit', '100'], { repeat: 5 });
  r.history_limit_stats = await statsOf(['history', work, '--limit', '100']);
  r.history_since = await timeProcess(['history', work, '--since', String(n - 999)], { repeat: 5 });
  const mid = BASE_MS + 1000 * Math.floor(n / 2) + 500;
  r.asof = JSON.parse((await run(tool('time_versions'), [work, '--asof-at', String(mid), '--repeat', '21'])).stdout.trim());
  if (r.asof.version !== Math.floor(n / 2)) throw new Error(`asof answered ${r.asof.version}, expected ${Math.floor(n / 2)}`);
  r.asof_proc = await timeProcess(['asof', work, String(mid)], { repeat: 5 });
  return r;
}

/* `lancever checkpoint` after new versions: time, RSS, bytes written. */
async function incremental(work) {
  const inc = await rusageJson(['checkpoint', work, '--json']);
  return { ms: inc.ms, rss_kb: inc.rss_kb, bytes: inc.json.file_size + inc.json.segment_bytes,
    head_bytes: inc.json.file_size, segment_bytes: inc.json.segment_bytes, segments_written: inc.json.segments_written };
}

async function scaleCase(n) {
  const { dir, live, generate_s } = await dataset(n);
  const r = { versions: n, live, generate_s };
  const work = path.join(outDir, 'work.lance'), work2 = path.join(outDir, 'work2.lance');
  await copy(dir, work);
  try {
    const cp = await rusageJson(['checkpoint', work, '--json']);
    r.checkpoint = { ms: cp.ms, rss_kb: cp.rss_kb, head_bytes: cp.json.file_size, segment_bytes: cp.json.segment_bytes,
      segments_written: cp.json.segments_written, recorded: cp.json.recorded_versions };
    await copy(work, work2);
    r.live_state = await reads(work, n);
    // the +100 incremental checkpoint with every live version still live (the head holds max_entries copies)
    await run(tool('gen_dataset'), [work, '--versions', '100', '--start', String(n + 1), '--fragments', '1']);
    r.incremental_live = await incremental(work);
    const cl = await rusageJson(['cleanup', work, '--older-than', '0s', '--retain-versions', '16', '--json']);
    r.cleanup = { ms: cl.ms, rss_kb: cl.rss_kb, versions_removed: cl.json.versions_removed, recorded: cl.json.versions_archived };
    const h = JSON.parse((await run(bin, ['history', work, '--json', '--limit', '1'])).stdout);
    if (!h.length || h[0].version !== n + 100) throw new Error('history after cleanup lacks the newest version');
    // after the cleanup: 16 live versions, the rest history
    await run(tool('gen_dataset'), [work, '--versions', '100', '--start', String(n + 101), '--fragments', '1']);
    r.incremental = await incremental(work);
    r.cleaned_state = await reads(work, n);
    const ex = await rusageJson(['expire', work2, '--retain-versions', '16', '--json']);
    r.expire = { ms: ex.ms, rss_kb: ex.rss_kb, versions_removed: ex.json.versions_removed };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(work2, { recursive: true, force: true });
    if (!keep && n > 1000000) { fs.rmSync(dir, { recursive: true, force: true }); fs.rmSync(`${dir}.complete`, { force: true }); }
  }
  const c = r.cleaned_state;
  console.error(`${n}: checkpoint ${fms(r.checkpoint.ms)} ms, history ${fms(c.history.median_ms)} ms (${fmb(c.history.maxrss_kb)} MB), ` +
    `asof ${fms(c.asof.asof_ms)} ms, +100 ${fms(r.incremental.ms)} ms / ${r.incremental.bytes} B, cleanup ${fms(r.cleanup.ms)} ms ` +
    `(${fmb(r.cleanup.rss_kb)} MB), expire ${fms(r.expire.ms)} ms (${fmb(r.expire.rss_kb)} MB)`);
  return r;
}

// ---- part 2: versions() beside the limit baseline ----
async function lancedbDataset(versions) {
  const name = `appends_${versions}`, dir = path.join(dataDir, `${name}.lance`), marker = path.join(dataDir, `${name}.complete`);
  if (fs.existsSync(marker) && fs.existsSync(dir)) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  const db = await lancedb.connect(dataDir);
  const t = await db.createTable(name, [{ id: 0, val: 0, name: 'r0' }]);
  for (let i = 1; i < versions; i++) await t.add([{ id: i, val: i * 1.5, name: 'r' + i }]);
  fs.writeFileSync(marker, `${versions}\n`);
  return dir;
}

async function limitCase(label, dir) {
  const work = path.join(outDir, 'limit.lance');
  await copy(dir, work);
  try {
    fs.rmSync(path.join(work, '_checkpoints'), { recursive: true, force: true });
    await run(bin, ['checkpoint', work]);
    const limit = JSON.parse((await run(tool('limit_baseline'), [work, '--repeat', '201'])).stdout.trim());
    const lv = await timeInProcess(work, { repeat: 201 });
    const notrim = lv.tuned || {}; // the same under the GLIBC_TUNABLES (lib.mjs)
    const limit2 = JSON.parse((await run(tool('limit_baseline'), [work, '--repeat', '201'])).stdout.trim());
    // the whole `lancever versions --json` process against a process doing the same I/O and
    // writing the same bytes (limit_baseline --write), both into a file, both timed by rusage
    const sink = path.join(outDir, 'limit.out');
    await run(tool('rusage'), ['--repeat', '1', '--warmup', '0', '--stdout', sink, '--', bin, 'versions', work, '--json']);
    const bytes = fs.statSync(sink).size;
    const rus = async (argv) => JSON.parse((await run(tool('rusage'), ['--repeat', '21', '--stdout', sink, '--', ...argv])).stdout.trim().split('\n').pop());
    const proc = await rus([bin, 'versions', work, '--json']);
    const base = await rus([tool('limit_baseline'), work, '--write', String(bytes)]);
    fs.rmSync(sink, { force: true });
    return { case: label, versions: lv.versions, limit_ms: Math.min(limit.median_ms, limit2.median_ms), fresh_ms: lv.open_versions_ms,
      cached_ms: lv.versions_ms, notrim_fresh_ms: notrim.open_versions_ms, notrim_cached_ms: notrim.versions_ms,
      json_bytes: bytes, proc_ms: proc.median_ms, proc_rss_kb: proc.maxrss_kb, proc_minflt: proc.minflt,
      proc_limit_ms: base.median_ms, proc_limit_rss_kb: base.maxrss_kb,
      tuned_pairs: [['fresh handle', lv.open_versions_ms, notrim.open_versions_ms], ['cached handle', lv.versions_ms, notrim.versions_ms]]
        .filter((x) => x[2]) };
  } finally { fs.rmSync(work, { recursive: true, force: true }); }
}

const started = nowMs();
const results = { kind: 'scale', machine: machine(), date: new Date().toISOString(), sizes: [], limit: [] };
for (const n of SIZES) results.sizes.push(await scaleCase(n));
if (!a.has('--no-limit')) {
  const gen = async (v, f) => {
    const d = path.join(dataDir, `gen_${f}f_${v}v.lance`);
    if (!fs.existsSync(`${d}.complete`)) {
      fs.rmSync(d, { recursive: true, force: true });
      await run(tool('gen_dataset'), [d, '--versions', String(v), '--fragments', String(f)]);
      fs.writeFileSync(`${d}.complete`, 'ok\n');
    }
    return d;
  };
  results.limit.push(await limitCase('2 x 1K fragments', await gen(2, 1000))); // issue 30 section 4's smallest size
  results.limit.push(await limitCase('512 x 1K fragments', await gen(512, 1000)));
  results.limit.push(await limitCase('1,000 (LanceDB-written)', await lancedbDataset(1000)));
  results.limit.push(await limitCase('10,000 x 1 fragment', await gen(10000, 1)));
}
results.seconds = Math.round((nowMs() - started) / 1000);
fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify(results, null, 1) + '\n');
fs.rmSync(jsonOut, { force: true });
console.error(`scale: ${results.seconds} s`);
process.exit(0);
