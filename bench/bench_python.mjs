// Python history() on long histories, against LanceDB listVersions() on the same dataset, in
// the same run (issue 17).
//
//   node bench/bench_python.mjs [--sizes 10000] [--written 1000] [--runs N] [--out DIR] [--no-lancedb]
//
// For each size N of --sizes: a dataset of N versions x 1 fragment from bench/gen_dataset (cached in
// bench/out/datasets/, shared with bench_history.mjs); for each of --written: N versions written
// by pylance 14 (bench/gen_pylance.py: a create and N - 1 appends, cached there too).  Each is
// hard-linked into a scratch copy, timed in three states:
//   live         N live manifests, no checkpoint (LanceDB listVersions() is timed here too)
//   checkpoint   after `lancever checkpoint --max-entries N`: the same N versions from it
//   cleaned      after `lancever cleanup --retain-versions 16 --older-than 0s`: N recorded
//                versions, N - 16 of them known only from the checkpoint (LanceDB lists 16)
// In each state bench/bench_python.py (Debian's /usr/bin/python3 + python/ + the Release
// liblancever.so) times: the bare C call through ctypes, history() as a list of dicts, the
// Arrow path (history_stream() walked batch by batch through the capsule), to_pandas() and
// versions().  With LV_PYTHON unset, the Python is the Lance 14 peer's venv (LV_LANCE14_VENV,
// default <build>/venv-lance14, which bench/run.sh --python makes), and bench_python.py --pylance
// also times pylance 14's versions() and history() -> pyarrow.table / polars.DataFrame (live and
// checkpoint states; pylance is not timed after the cleanup, where it sees 16 versions).
// LV_BENCH_PYTHONPATH: another lancever package to time (default python/; e.g. an older tree).
// Writes DIR/results.json and DIR/results.md (default bench/out/python/).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  here, repo, bin, buildDir, tool, requireBinaries, parseArgs, run, lanceChild, machine, fms, fx, nowMs,
} from './lib.mjs';

const a = parseArgs();
const SIZES = a.list('--sizes', '10000').map(Number);
const WRITTEN = a.list('--written', '1000').map(Number);
const runs = Math.max(3, Number(a.get('--runs', 7)));
const noLance = a.has('--no-lancedb');
const outDir = path.resolve(a.get('--out', path.join(here, 'out', 'python')));
const dataDir = path.resolve(process.env.LV_BENCH_DATA || path.join(here, 'out', 'datasets'));
const venv = process.env.LV_LANCE14_VENV || path.join(buildDir, 'venv-lance14');
const python = process.env.LV_PYTHON || path.join(venv, 'bin', 'python');
const withLance = !process.env.LV_PYTHON;
const lib = path.join(buildDir, 'liblancever.so');
requireBinaries('gen_dataset', 'liblancever.so');
fs.mkdirSync(outDir, { recursive: true });
fs.mkdirSync(dataDir, { recursive: true });

async function py(work, pylance) {
  const env = { ...process.env, PYTHONPATH: process.env.LV_BENCH_PYTHONPATH || path.join(repo, 'python'), LANCEVER_LIBRARY: lib,
    PYTHONDONTWRITEBYTECODE: '1' };
  delete env.PYTHONHOME;
  const r = await run(python, [path.join(here, 'bench_python.py'), work, '--runs', String(runs),
    ...(pylance && withLance ? ['--pylance'] : [])], { env });
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

async function dataset(n, written) {
  const src = path.join(dataDir, written ? `pylance14_${n}v.lance` : `gen_1f_${n}v.lance`);
  if (!fs.existsSync(`${src}.complete`)) {
    fs.rmSync(src, { recursive: true, force: true });
    if (written) await run(python, [path.join(here, 'gen_pylance.py'), src, String(n)]);
    else await run(tool('gen_dataset'), [src, '--versions', String(n), '--fragments', '1']);
    fs.writeFileSync(`${src}.complete`, 'ok\n');
  }
  return src;
}

const results = [];
for (const [n, written] of [...WRITTEN.map((n) => [n, true]), ...SIZES.map((n) => [n, false])]) {
  const src = await dataset(n, written);
  const work = path.join(outDir, 'work.lance');
  fs.rmSync(work, { recursive: true, force: true });
  await run('cp', ['-al', src, work]);
  const r = { versions: n, source: written ? 'pylance 14' : 'gen_dataset' };
  try {
    if (!noLance) {
      const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-bench-py-'));
      fs.symlinkSync(work, path.join(parent, 't.lance'));
      try {
        r.lance = await lanceChild(['versions', parent, 't', String(n), '--runs', String(runs), '--budget-ms', '60000']);
      } finally { fs.rmSync(parent, { recursive: true, force: true }); }
    }
    r.live = await py(work, true);
    await run(bin, ['checkpoint', work, '--max-entries', String(n)]);
    r.checkpoint = await py(work, true);
    await run(bin, ['cleanup', work, '--retain-versions', '16', '--older-than', '0s', '--max-entries', String(n)]);
    r.cleaned = await py(work);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  results.push(r);
  console.error(`python ${n} (${r.source}): done`);
}

const lines = ['| versions | state | LanceDB listVersions ms | C call ms | history() dicts ms | Arrow stream ms | to_pandas ms | versions() ms | dicts vs LanceDB |',
  '|---:|---|---:|---:|---:|---:|---:|---:|---:|'];
for (const r of results)
  for (const st of ['live', 'checkpoint', 'cleaned']) {
    const p = r[st];
    const lance = st === 'live' && r.lance ? r.lance.median_ms : null;
    lines.push(`| ${r.versions} (${r.source}) | ${st} (${p.dicts.rows} rows, ${p.versions.rows} live) | ${fms(lance)} | ${fms(p.c_call.median_ms)} | `
      + `${fms(p.dicts.median_ms)} | ${fms(p.arrow.median_ms)} | ${fms(p.pandas.median_ms)} | ${fms(p.versions.median_ms)} | `
      + `${lance ? fx(lance, p.dicts.median_ms) + ' faster' : '-'} |`);
  }
if (withLance) {
  lines.push('', `pylance ${results[0]?.live?.pylance_version} against lancever on the same dataset (open + call, ms):`, '',
    '| versions | written by | state | pylance versions() | lancever versions() | ratio | rows built in Python | ratio | history() -> pa.table | history() -> polars | versions() == pylance\'s (ms: to the millisecond) |',
    '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of results)
    for (const st of ['live', 'checkpoint']) {
      const p = r[st];
      lines.push(`| ${r.versions} | ${r.source} | ${st === 'live' ? 'no checkpoint' : 'from a checkpoint'} | ${fms(p.pylance.median_ms)} | `
        + `${fms(p.versions.median_ms)}${p.accelerated ? '' : ' (no accelerator)'} | ${fx(p.pylance.median_ms, p.versions.median_ms)} | `
        + `${fms(p.versions_py.median_ms)} | ${fx(p.pylance.median_ms, p.versions_py.median_ms)} | ${fms(p.history_pa.median_ms)} | ${fms(p.history_pl.median_ms)} | ${p.equal_to_pylance} |`);
    }
}
const md = [`Python ${results[0]?.live?.version} (${results[0]?.live?.python}), medians of ${runs} runs; LanceDB 0.31.0 in Node, connect + openTable + listVersions(); machine: ${JSON.stringify(machine())}`, '', ...lines, ''].join('\n');
fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify({ machine: machine(), runs, results }, null, 1));
fs.writeFileSync(path.join(outDir, 'results.md'), md);
console.log(md);
