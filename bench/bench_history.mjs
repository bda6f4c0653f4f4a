// Long histories: checkpoint write, cleanup that keeps the history, as-of time travel.
//
//   node bench/bench_history.mjs [--sizes 10000,1000000] [--runs N] [--out DIR] [--no-lancedb] [--keep]
//
// For each size N: a dataset of N versions x 1 fragment from bench/gen_dataset (cached in
// bench/out/datasets/ unless N > 100,000 and no --keep: a million versions are 2 million files),
// then, on a hard-linked copy:
//   lance        LanceDB listVersions() on the N live manifests (child process; N <= 100,000)
//   none         lancever versions without a checkpoint (in-process and whole process)
//   cp_write     `lancever checkpoint --max-entries N` from scratch: time, bytes, bytes per
//                version (the proposal estimates ~200), peak RSS; median of --runs for N <= 10,000
//   cp           versions() from that checkpoint (in-process and whole process)
//   cleanup      `lancever cleanup --older-than 0s --retain-versions 16 --max-entries N`: the
//                checkpoint first (every version recorded), then N - 16 versions removed
//   history      `lancever history` afterwards: N versions, N - 16 of them cleaned up (process)
//   outputs      `lancever history --json`, `--format csv`, `--format arrow` on that history, each
//                written to a file: time and peak RSS (whole process; issue 29: every format
//                streams, the goal being csv and arrow at --json's peak)
//   timeline     lv_timeline_load (median) and 1,000,000 as-of lookups at random times, inclusive
//                and strict, checked against a linear scan (bench/time_versions --asof)
//   asof_cli     `lancever asof` as a whole process
// Writes DIR/results.json (default bench/out/history/).
import fs from 'node:fs';
import path from 'node:path';
import {
  here, bin, tool, requireBinaries, parseArgs, run, timeProcess, timeInProcess, lvStats, lanceChild,
  machine, fms, fmb, nowMs,
} from './lib.mjs';
import os from 'node:os';

const a = parseArgs();
const SIZES = a.list('--sizes', '10000,1000000').map(Number);
const runs = Math.max(3, Number(a.get('--runs', 5)));
const noLance = a.has('--no-lancedb');
const keep = a.has('--keep');
const outDir = path.resolve(a.get('--out', path.join(here, 'out', 'history')));
const dataDir = path.resolve(process.env.LV_BENCH_DATA || path.join(here, 'out', 'datasets'));
requireBinaries('gen_dataset', 'time_versions', 'rusage');
fs.mkdirSync(outDir, { recursive: true });
fs.mkdirSync(dataDir, { recursive: true });

// Records and cleaned-up records of a `history --json` file, read in chunks: each record has
// one "is_cleaned_up" key (a key may straddle two chunks, so a chunk keeps the previous tail).
async function countRecords(file) {
  const keys = { '"is_cleaned_up":true': 'cleaned', '"is_cleaned_up":false': 'live' };
  const n = { cleaned: 0, live: 0 };
  let tail = '';
  for await (const chunk of fs.createReadStream(file, { encoding: 'utf8' })) {
    const text = tail + chunk;
    for (const [k, name] of Object.entries(keys)) n[name] += text.split(k).length - 1;
    tail = text.slice(-24);
    for (const [k, name] of Object.entries(keys)) n[name] -= tail.split(k).length - 1;
  }
  for (const [k, name] of Object.entries(keys)) n[name] += tail.split(k).length - 1;
  return { records: n.cleaned + n.live, cleaned: n.cleaned };
}

async function rusageOnce(argv, outFile) {
  const r = await run(tool('rusage'), ['--repeat', '1', '--warmup', '0', '--stdout', outFile, '--', bin, ...argv]);
  return JSON.parse(r.stdout.trim());
}

const results = [];
const started = nowMs();
for (const n of SIZES) {
  const r = { versions: n };
  const src = path.join(dataDir, `gen_1f_${n}v.lance`);
  const marker = `${src}.complete`;
  if (!fs.existsSync(marker)) {
    fs.rmSync(src, { recursive: true, force: true });
    const t = nowMs();
    await run(tool('gen_dataset'), [src, '--versions', String(n), '--fragments', '1']);
    r.generate_s = (nowMs() - t) / 1000;
    fs.writeFileSync(marker, 'ok\n');
    console.error(`generated ${n} versions in ${r.generate_s.toFixed(1)} s`);
  }
  const work = path.join(outDir, 'work.lance');
  const jsonOut = path.join(os.tmpdir(), `lv-bench-hist-${process.pid}.json`);
  fs.rmSync(work, { recursive: true, force: true });
  await run('cp', ['-al', src, work]);
  try {
    if (!noLance && n <= 100000) {
      const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-bench-hist-'));
      fs.symlinkSync(work, path.join(parent, 't.lance'));
      try {
        r.lance = await lanceChild(['versions', parent, 't', String(n), '--runs', String(runs), '--budget-ms', '30000']);
      } finally { fs.rmSync(parent, { recursive: true, force: true }); }
    }
    const small = n <= 10000;
    r.none = { inproc: await timeInProcess(work, { repeat: small ? 9 : 3 }),
      proc: await timeProcess(['versions', work], { repeat: small ? 5 : 3 }) };
    // checkpoint from scratch
    const w = [];
    let cj = null, rss = 0;
    for (let i = 0; i < (small ? runs : 1); i++) {
      fs.rmSync(path.join(work, '_checkpoints'), { recursive: true, force: true });
      const x = await rusageOnce(['checkpoint', work, '--max-entries', String(n), '--json'], jsonOut);
      w.push(x.median_ms);
      rss = Math.max(rss, x.maxrss_kb);
      cj = JSON.parse(fs.readFileSync(jsonOut, 'utf8'));
    }
    w.sort((x, y) => x - y);
    r.cp_write = { ms: w[w.length >> 1], runs: w.length, rss_kb: rss, bytes: cj.file_size, entries: cj.entries,
      bytes_per_version: cj.file_size / cj.entries };
    r.cp = { inproc: await timeInProcess(work, { repeat: small ? 9 : 3 }),
      proc: await timeProcess(['versions', work], { repeat: small ? 5 : 3 }),
      stats: await lvStats(['versions', work]) };
    // cleanup keeping 16 versions, recording all of them
    const c = await rusageOnce(['cleanup', work, '--older-than', '0s', '--retain-versions', '16',
      '--max-entries', String(n), '--json'], jsonOut);
    const cl = JSON.parse(fs.readFileSync(jsonOut, 'utf8'));
    r.cleanup = { ms: c.median_ms, rss_kb: c.maxrss_kb, versions_removed: cl.versions_removed,
      versions_archived: cl.versions_archived, files_removed: cl.files_removed };
    r.history = await timeProcess(['history', work], { repeat: 3 });
    r.outputs = {};
    const historyJson = `${jsonOut}.history`;
    for (const [name, flags] of [['json', ['--json']], ['csv', ['--format', 'csv']], ['arrow', ['--format', 'arrow']]]) {
      const file = name === 'json' ? historyJson : jsonOut;
      const x = await rusageOnce(['history', work, ...flags], file);
      r.outputs[name] = { ms: x.median_ms, rss_kb: x.maxrss_kb, bytes: fs.statSync(file).size };
    }
    // Counted from the file as it streams: at 1,000,000 versions the JSON (~700 MB) is more
    // than one JavaScript string can hold.
    const h = await countRecords(historyJson);
    fs.rmSync(historyJson, { force: true });
    r.history_entries = h.records;
    r.history_cleaned = h.cleaned;
    if (r.history_entries !== n || r.history_cleaned !== n - 16)
      throw new Error(`history after cleanup: ${r.history_entries} entries, ${r.history_cleaned} cleaned up; expected ${n}, ${n - 16}`);
    r.after = { inproc: await timeInProcess(work, { repeat: 9 }), stats: await lvStats(['versions', work]) };
    r.timeline = JSON.parse((await run(tool('time_versions'), [work, '--asof', '--lookups', '1000000',
      '--repeat', String(small ? 9 : 3)])).stdout.trim().split('\n').pop());
    if (r.timeline.mismatches) throw new Error(`as-of mismatches: ${r.timeline.mismatches}`);
    r.asof_cli = await timeProcess(['asof', work, String(1700000000000 + 1000 * Math.floor(n / 2) + 500)], { repeat: 3 });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(jsonOut, { force: true });
    if (n > 100000 && !keep) { fs.rmSync(src, { recursive: true, force: true }); fs.rmSync(marker, { force: true }); }
  }
  results.push(r);
  console.error(`${n} versions: checkpoint write ${fms(r.cp_write.ms)} ms (${r.cp_write.bytes_per_version.toFixed(1)} B/version), ` +
    `cleanup ${fms(r.cleanup.ms)} ms, timeline load ${fms(r.timeline.load_ms)} ms, lookup ${r.timeline.lookup_ns.toFixed(1)} ns; ` +
    `history --json / csv / arrow ${['json', 'csv', 'arrow'].map((k) => `${fms(r.outputs[k].ms)} ms ${fmb(r.outputs[k].rss_kb)} MB`).join(' / ')}`);
}

fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify({ kind: 'history', runs, machine: machine(),
  date: new Date().toISOString(), seconds: Math.round((nowMs() - started) / 1000), sizes: results }, null, 1) + '\n');
const L = ['| versions | LanceDB listVersions ms | checkpoint write ms (B/version, RSS MB) | versions() from checkpoint ms | cleanup to 16 ms (RSS MB) | history ms (RSS MB) | timeline load ms (RSS MB) | as-of lookup ns |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|'];
for (const r of results)
  L.push(`| ${r.versions} | ${fms(r.lance?.median_ms)} | ${fms(r.cp_write.ms)} (${r.cp_write.bytes_per_version.toFixed(0)}, ${fmb(r.cp_write.rss_kb)}) | ` +
    `${fms(r.cp.inproc.open_versions_ms)} | ${fms(r.cleanup.ms)} (${fmb(r.cleanup.rss_kb)}) | ${fms(r.history.median_ms)} (${fmb(r.history.maxrss_kb)}) | ` +
    `${fms(r.timeline.load_ms)} (${fmb(r.timeline.maxrss_kb)}) | ${r.timeline.lookup_ns.toFixed(1)} |`);
L.push('', '| versions | history --json ms (RSS MB) | --format csv ms (RSS MB) | --format arrow ms (RSS MB) |', '|---:|---:|---:|---:|');
for (const r of results)
  L.push(`| ${r.versions} | ${['json', 'csv', 'arrow'].map((k) => `${fms(r.outputs[k].ms)} (${fmb(r.outputs[k].rss_kb)})`).join(' | ')} |`);
console.log(L.join('\n'));
process.exit(0);
