// versions() benchmark grid, the Version Checkpointing proposal's table side by side with LanceDB.
//
//   node bench/bench_grid.mjs [--backend local|s3] [--versions 2,4,...,512] [--fragments 1000,10000,100000]
//        [--big 10000x1000] [--runs N] [--budget-ms B] [--delay MS] [--out DIR] [--no-lancedb] [--lance12]
// --lance12 (local disk only): LanceDB 0.39.0 (Lance 12, the lance12 interop peer) is timed on the
// same datasets too, as c.lance12 (a failure is recorded as c.lance12.error, not fatal).
//
// For every (versions N, fragments F) cell, on a dataset written by bench/gen_dataset (N versions, each
// with the same F fragments, ~84 bytes per fragment in the manifest like Lance's own), it measures:
//   lance        LanceDB 0.31.0 connect + openTable + listVersions() in a child process
//                (bench/lance_child.mjs): median of up to --runs after a warm-up, peak RSS
//   none         lancever without a checkpoint: every manifest read
//   cp_write     `lancever checkpoint` (one run: time, file size, peak RSS)
//   cp           lancever answered from the checkpoint
//   t8, t16      the checkpoint plus 8 / 16 newer versions (their manifests read)
// (cp also in-process with a steady heap: glibc's trimming of freed memory switched off, so
// the pages a call uses are not faulted in again by the next one)
// and for each lancever case: in-process time (bench/time_versions: lv_dataset_open + lv_versions,
// median of up to 9), whole-process time and peak RSS (bench/rusage: `lancever versions`, median
// of up to 5), and the `--stats` line (rung, manifests read, requests, bytes read).  Slow cases get
// fewer runs (at least 3 for lancever, 1 for LanceDB) so each stays near --budget-ms (default 30 s).
//
// --backend local: datasets on local disk (warm page cache).  Generated datasets are cached in
//   bench/out/datasets/ (a base of max(N) versions per F; each cell works on a hard-linked copy).
// --backend s3: s3rver on 127.0.0.1 (the test harness: SigV4 checked, atomic PUTs), --delay ms
//   (default 20) added by the server to every request as a stand-in for network latency; the base
//   is uploaded once per F and cut down from the largest N to the smallest.  LanceDB's request
//   count comes from the server log, lancever's from --stats.
// --big VxF[,VxF]: extra cells (e.g. 10,000 versions x 1K fragments).
// Writes DIR/results.json (default bench/out/grid-<backend>/) and prints a markdown table.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  here, bin, tool, requireBinaries, parseArgs, run, timeProcess, timeInProcess, lvStats, lanceChild,
  truncateDataset, machine, U64_MAX, fk, fms, fx, fmb, nowMs,
} from './lib.mjs';

const a = parseArgs();
const backend = a.get('--backend', 'local');
const VERSIONS = a.list('--versions', '2,4,8,16,32,64,128,256,512').map(Number).sort((x, y) => x - y);
const FRAGMENTS = a.list('--fragments', '1000,10000,100000').map(Number);
const BIG = a.list('--big', '').map((s) => s.split('x').map(Number));
const runs = Math.max(3, Number(a.get('--runs', 5)));
const budget = Number(a.get('--budget-ms', 30000));
const delay = Number(a.get('--delay', 20));
const noLance = a.has('--no-lancedb');
const lance12 = a.has('--lance12') && backend === 'local' && !noLance;
const outDir = path.resolve(a.get('--out', path.join(here, 'out', `grid-${backend}`)));
const dataDir = path.resolve(process.env.LV_BENCH_DATA || path.join(here, 'out', 'datasets'));
requireBinaries('gen_dataset', 'time_versions', 'rusage', 's3_upload');
if (!['local', 's3'].includes(backend)) { console.error('bench_grid: --backend local|s3'); process.exit(2); }
fs.mkdirSync(outDir, { recursive: true });
fs.mkdirSync(dataDir, { recursive: true });

// A cached base dataset of n versions x f fragments (never modified: cells use hard-linked copies).
async function base(n, f) {
  const dir = path.join(dataDir, `gen_${f}f_${n}v.lance`);
  const marker = `${dir}.complete`;
  if (!fs.existsSync(marker)) {
    fs.rmSync(dir, { recursive: true, force: true });
    const t = nowMs();
    await run(tool('gen_dataset'), [dir, '--versions', String(n), '--fragments', String(f)]);
    fs.writeFileSync(marker, 'ok\n');
    console.error(`generated ${path.basename(dir)} in ${((nowMs() - t) / 1000).toFixed(1)} s`);
  }
  return dir;
}
const manifestBytes = (dir) => fs.statSync(path.join(dir, '_versions',
  `${(U64_MAX - 1n).toString().padStart(20, '0')}.manifest`)).size;

// glibc tunables for the steady-heap variant: no trimming, no mmap for blocks under 32 MiB.
const STEADY_HEAP = 'glibc.malloc.trim_threshold=4294967296:glibc.malloc.mmap_threshold=33554432';

// Number of runs that keeps a case near the budget, given one run's time.
const fit = (ms, max, min) => Math.max(min, Math.min(max, Math.floor(budget / Math.max(ms, 1e-3))));

// The lancever measurements of one state of the dataset.
async function lvCase(uri, env) {
  const stats = await lvStats(['versions', uri], { env });
  const t0 = nowMs();
  await run(bin, ['versions', uri], { env });
  const once = nowMs() - t0;
  const inproc = await timeInProcess(uri, { repeat: fit(once, 9, 3), env });
  const proc = await timeProcess(['versions', uri], { repeat: fit(once, 5, 3), env });
  return { stats, inproc_ms: inproc.open_versions_ms, inproc_rss_kb: inproc.maxrss_kb,
    proc_ms: proc.median_ms, proc_rss_kb: proc.maxrss_kb, proc_runs: proc.runs,
    // default vs the issue's GLIBC_TUNABLES (lib.mjs), for report.mjs's tuned section
    tuned_pairs: [['in-process', inproc.open_versions_ms, inproc.tuned?.open_versions_ms],
      ['process', proc.median_ms, proc.tuned?.median_ms]].filter((x) => x[2]) };
}

async function measure(ctx, n, f) {
  const c = { versions: n, fragments: f, manifest_bytes: ctx.manifestBytes };
  if (!noLance) {
    ctx.beginLance?.();
    c.lance = await lanceChild(['versions', ctx.lanceUri, ctx.table, String(n), '--runs', String(runs),
      '--budget-ms', String(budget)], { storageOptions: ctx.storageOptions });
    if (ctx.endLance) c.lance.requests = ctx.endLance(c.lance.runs + 1);
    if (lance12)
      c.lance12 = await lanceChild(['versions', ctx.lanceUri, ctx.table, String(n), '--runs', String(runs), '--budget-ms', String(budget)],
        { env: { ...process.env, LV_PEER: 'lance12' } }).catch((e) => ({ error: e.message.slice(0, 300) }));
  }
  ctx.begin?.();
  c.none = await lvCase(ctx.uri, ctx.env);
  const outFile = path.join(os.tmpdir(), `lv-bench-cp-${process.pid}.json`);
  const w = JSON.parse((await run(tool('rusage'), ['--repeat', '1', '--warmup', '0', '--stdout', outFile, '--',
    bin, 'checkpoint', ctx.uri, '--json'], { env: ctx.env })).stdout.trim());
  const cj = JSON.parse(fs.readFileSync(outFile, 'utf8'));
  fs.rmSync(outFile, { force: true });
  c.cp_write = { ms: w.median_ms, rss_kb: w.maxrss_kb, bytes: cj.file_size, entries: cj.entries };
  c.cp = await lvCase(ctx.uri, ctx.env);
  // The same with a heap that stays allocated between calls (glibc returns freed memory at the
  // top of the heap above 128 KiB to the kernel, so each call faults it in again; a long-running
  // process with a raised trim threshold, or another allocator, does not pay that): lvCase's
  // tuned twin (lib.mjs), or a run of its own when the pairing is off.
  c.cp.inproc_steady_ms = c.cp.tuned_pairs.find((x) => x[0] === 'in-process')?.[2] ?? (await timeInProcess(ctx.uri, { repeat: 9,
    env: { ...(ctx.env || process.env), GLIBC_TUNABLES: STEADY_HEAP } })).open_versions_ms;
  ctx.end?.();
  await ctx.addTail(n + 1, 8);
  ctx.begin?.();
  c.t8 = await lvCase(ctx.uri, ctx.env);
  ctx.end?.();
  await ctx.addTail(n + 9, 8);
  ctx.begin?.();
  c.t16 = await lvCase(ctx.uri, ctx.env);
  ctx.end?.();
  const ok = c.cp.stats.rung === 'newest checkpoint' && c.cp.stats.manifests_read === 0 &&
    c.t16.stats.rung === 'newest checkpoint' && c.t16.stats.manifests_read === 16;
  if (!ok) throw new Error(`${n}x${f}: unexpected rungs: ${JSON.stringify([c.cp.stats, c.t16.stats])}`);
  console.error(`${backend} ${n} x ${fk(f)}: LanceDB ${fms(c.lance?.median_ms)} ms, none ${fms(c.none.inproc_ms)}, ` +
    `cp ${fms(c.cp.inproc_ms)}, +8 ${fms(c.t8.inproc_ms)}, +16 ${fms(c.t16.inproc_ms)} (in-process; ` +
    `process ${fms(c.none.proc_ms)} / ${fms(c.cp.proc_ms)})`);
  return c;
}

const cells = [];
const started = nowMs();

if (backend === 'local') {
  const work = path.join(outDir, 'work.lance');
  const cell = async (src, n, f) => {
    fs.rmSync(work, { recursive: true, force: true });
    await run('cp', ['-al', src, work]);
    truncateDataset(work, n);
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-bench-grid-'));
    fs.symlinkSync(work, path.join(parent, 't.lance'));
    const ctx = {
      uri: work, lanceUri: parent, table: 't', manifestBytes: manifestBytes(work),
      addTail: (from, count) => run(tool('gen_dataset'), [work, '--start', String(from), '--versions',
        String(count), '--fragments', String(f)]),
    };
    try { cells.push(await measure(ctx, n, f)); } finally {
      fs.rmSync(parent, { recursive: true, force: true });
      fs.rmSync(work, { recursive: true, force: true });
    }
  };
  for (const f of FRAGMENTS) {
    const src = await base(VERSIONS[VERSIONS.length - 1], f);
    for (const n of VERSIONS) await cell(src, n, f);
  }
  for (const [n, f] of BIG) await cell(await base(n, f), n, f);
} else {
  const { startS3, s3Env, s3StorageOptions, BUCKET } = await import('../tests/interop/s3server.mjs');
  const s3 = await startS3({ delay: 0 });
  const env = s3Env(s3);
  // Server-side removal of objects (s3rver keeps each object as files next to each other).
  const removeKey = (key) => {
    const parts = key.split('/'); const last = parts.pop();
    for (const sfx of ['object', 'object.md5', 'metadata.json'])
      fs.rmSync(path.join(s3.dir, BUCKET, ...parts, `${last}._S3rver_${sfx}`), { force: true });
  };
  const keysUnder = (prefix) => {
    const d = path.join(s3.dir, BUCKET, prefix);
    return fs.existsSync(d) ? fs.readdirSync(d).filter((x) => x.endsWith('._S3rver_object'))
      .map((x) => `${prefix}/${x.slice(0, -'._S3rver_object'.length)}`) : [];
  };
  const cutTo = (prefix, n) => {
    for (const k of keysUnder(`${prefix}/_checkpoints`)) removeKey(k);
    for (const k of keysUnder(`${prefix}/_versions`)) {
      const m = /\/(\d{20})\.manifest$/.exec(k);
      if (m && U64_MAX - BigInt(m[1]) > BigInt(n)) removeKey(k);
    }
    for (const k of keysUnder(`${prefix}/_transactions`))
      if (Number(path.basename(k).split('-')[0]) >= n) removeKey(k);
  };
  const upload = (dir, uri) => run(tool('s3_upload'), [dir, uri], { env });
  const tailDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-bench-tail-'));
  const group = async (src, f, ns, tag) => {
    const prefix = `${tag}/t.lance`;
    const uri = `s3://${BUCKET}/${prefix}`;
    s3.reset();
    const t = nowMs();
    await upload(src, uri);
    console.error(`uploaded ${path.basename(src)} in ${((nowMs() - t) / 1000).toFixed(1)} s`);
    for (const n of [...ns].sort((x, y) => y - x)) {
      cutTo(prefix, n);
      const ctx = {
        uri, env, lanceUri: `s3://${BUCKET}/${tag}`, table: 't', storageOptions: s3StorageOptions(s3),
        manifestBytes: manifestBytes(src),
        beginLance: () => { s3.reset(); s3.setDelay(delay); },
        endLance: (k) => { const r = s3.requests().length / k; s3.reset(); return r; },
        begin: () => { s3.reset(); s3.setDelay(delay); },
        end: () => { s3.reset(); },
        addTail: async (from, count) => {
          fs.rmSync(tailDir, { recursive: true, force: true });
          await run(tool('gen_dataset'), [tailDir, '--start', String(from), '--versions', String(count),
            '--fragments', String(f)]);
          await upload(tailDir, uri);
        },
      };
      cells.push(await measure(ctx, n, f));
    }
    for (const k of keysUnder(`${tag}/t.lance/_versions`).concat(keysUnder(`${tag}/t.lance/_transactions`),
      keysUnder(`${tag}/t.lance/_checkpoints`))) removeKey(k);
  };
  try {
    for (const f of FRAGMENTS) await group(await base(VERSIONS[VERSIONS.length - 1], f), f, VERSIONS, `g${f}`);
    for (const [n, f] of BIG) await group(await base(n, f), f, [n], `big${n}x${f}`);
  } finally {
    fs.rmSync(tailDir, { recursive: true, force: true });
    await s3.stop();
  }
}

const result = {
  kind: 'grid', backend, delay_ms: backend === 's3' ? delay : 0, runs, budget_ms: budget,
  machine: machine(), date: new Date().toISOString(), seconds: Math.round((nowMs() - started) / 1000),
  cells,
};
fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify(result, null, 1) + '\n');

const L = [`versions() on ${backend}${backend === 's3' ? ` (${delay} ms per request)` : ''}: in-process ms ` +
  '(lancever: lv_dataset_open + lv_versions; LanceDB: connect + openTable + listVersions)', '',
  '| versions | fragments | LanceDB | no checkpoint | checkpoint | +8 | +16 | vs LanceDB | vs no checkpoint | RSS MB LanceDB / lancever |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'];
for (const c of cells)
  L.push(`| ${c.versions} | ${fk(c.fragments)} | ${fms(c.lance?.median_ms)} | ${fms(c.none.inproc_ms)} | ` +
    `${fms(c.cp.inproc_ms)} | ${fms(c.t8.inproc_ms)} | ${fms(c.t16.inproc_ms)} | ${fx(c.lance?.median_ms, c.cp.inproc_ms)} | ` +
    `${fx(c.none.inproc_ms, c.cp.inproc_ms)} | ${fmb(c.lance?.maxrss_kb)} / ${fmb(c.none.proc_rss_kb)} |`);
console.log(L.join('\n'));
process.exit(0);
