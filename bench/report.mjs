// Turns the harness's results (bench/out/*/results.json) into bench/RESULTS.md and PNG charts
// (bench/charts/, drawn with gnuplot), with the proposal's figures alongside and the issue's
// acceptance ratios computed from the same run.
//   node bench/report.mjs [--in DIR] [--md FILE] [--charts DIR] [--command "..."]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { here, repo, parseArgs, fk, fms, fx, fmb } from './lib.mjs';
import { PROPOSAL_LOCAL, PROPOSAL_S3, PROPOSAL_S3_TAIL, proposalRow } from './proposal.mjs';

const a = parseArgs();
const inDir = path.resolve(a.get('--in', path.join(here, 'out')));
const mdPath = path.resolve(a.get('--md', path.join(here, 'RESULTS.md')));
const chartDir = path.resolve(a.get('--charts', path.join(here, 'charts')));
const command = a.get('--command', 'bash bench/run.sh --all');
const load = (name) => { const p = path.join(inDir, name, 'results.json');
  return fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, 'utf8')) : null; };
const local = load('grid-local'), s3 = load('grid-s3'), hist = load('history'), clean = load('cleanup'),
  vers = load('versions'), scale = load('scale'), cloud = load('cloud');
for (const g of [local, s3]) if (g) g.cells.sort((x, y) => x.fragments - y.fragments || x.versions - y.versions);
const any = local || s3 || hist || clean || vers || scale || cloud;
if (!any) { console.error(`report: no results under ${inDir}`); process.exit(1); }
fs.mkdirSync(chartDir, { recursive: true });

const git = (...x) => { try { return execFileSync('git', ['-C', repo, ...x], { encoding: 'utf8' }).trim(); } catch { return '?'; } };
const L = [];
const P = (...x) => L.push(...x);
const ok = (b) => (b ? 'met' : '**not met**');
const mainCells = (g) => g.cells.filter((c) => c.versions <= 512);
const FR = (g) => [...new Set(mainCells(g).map((c) => c.fragments))];
const byF = (g, f) => mainCells(g).filter((c) => c.fragments === f).sort((x, y) => x.versions - y.versions);

// ---------------------------------------------------------------- acceptance
const acc = [];
if (local) {
  const withP = mainCells(local).filter((c) => c.lance && proposalRow(PROPOSAL_LOCAL, c.versions, c.fragments));
  const beat = withP.filter((c) => c.lance.median_ms / c.cp.inproc_ms >= proposalRow(PROPOSAL_LOCAL, c.versions, c.fragments)[4]);
  const worst = withP.map((c) => ({ c, r: (c.lance.median_ms / c.cp.inproc_ms) / proposalRow(PROPOSAL_LOCAL, c.versions, c.fragments)[4] }))
    .sort((x, y) => x.r - y.r)[0];
  acc.push(['Checkpointed versions() at least the proposal\'s local speedup (vs Lance\'s own versions(): LanceDB listVersions)',
    `${beat.length} of ${withP.length} cells${worst ? `; smallest margin ${worst.r.toFixed(1)}x the proposal's (${worst.c.versions} x ${fk(worst.c.fragments)})` : ''}`,
    ok(withP.length && beat.length === withP.length)]);
  for (const f of FR(local)) {
    const cs = byF(local, f);
    if (cs.length < 2) continue;
    const t = cs.map((c) => c.cp.inproc_ms);
    const spread = Math.max(...t) / Math.min(...t);
    const tp = cs.map((c) => c.cp.proc_ms);
    const ts = cs.map((c) => c.cp.inproc_steady_ms).filter((x) => x);
    const sp = (v) => `${fms(Math.min(...v))}-${fms(Math.max(...v))} ms: ${(Math.max(...v) / Math.min(...v)).toFixed(2)}x`;
    acc.push([`Flat within 2x from ${cs[0].versions} to ${cs[cs.length - 1].versions} versions, ${fk(f)} fragments (checkpoint, in-process)`,
      `${sp(t)}; steady heap ${ts.length === cs.length ? sp(ts) : '-'}; whole process ${sp(tp)}`,
      ok(spread <= 2)]);
  }
  const nc = mainCells(local).filter((c) => c.lance).map((c) => ({ c, r: c.lance.median_ms / c.none.inproc_ms })).sort((x, y) => x.r - y.r);
  if (nc.length)
    acc.push(['No-checkpoint path at least 5x faster than LanceDB (every cell, in-process)',
      `smallest ${nc[0].r.toFixed(1)}x (${nc[0].c.versions} x ${fk(nc[0].c.fragments)}), largest ${nc[nc.length - 1].r.toFixed(0)}x`, ok(nc[0].r >= 5)]);
}
if (s3) {
  const rows = mainCells(s3).map((c) => ({ c, p: proposalRow(PROPOSAL_S3_TAIL, c.versions, c.fragments) })).filter((x) => x.p);
  if (rows.length) {
    const r = rows.map(({ c, p }) => {
      const theirs = (p[4] - p[2]) / p[2], ours = Math.max(c.t16.inproc_ms - c.cp.inproc_ms, 0) / c.cp.inproc_ms;
      return { c, theirs, ours, better: theirs / Math.max(ours, 1e-9) };
    }).sort((x, y) => x.better - y.better);
    acc.push(['S3, 16-version tail: relative cost of the tail ((+16 - checkpoint) / checkpoint) at least 10x smaller than the proposal\'s',
      `worst ${r[0].better.toFixed(1)}x smaller (${r[0].c.versions} x ${fk(r[0].c.fragments)}: ours ${(100 * r[0].ours).toFixed(0)}%, proposal ${(100 * r[0].theirs).toFixed(0)}%), ${rows.length} cells`,
      ok(r[0].better >= 10)]);
  }
  const sp = mainCells(s3).filter((c) => c.lance).map((c) => c.lance.median_ms / c.cp.inproc_ms);
  if (sp.length)
    acc.push(['S3 checkpointed versions() vs LanceDB on the same server', `${Math.min(...sp).toFixed(1)}x-${Math.max(...sp).toFixed(0)}x`, 'reported']);
}
if (hist) {
  for (const h of hist.sizes)
    acc.push([`As-of after loading ${h.versions.toLocaleString('en-US')} recorded versions: lookup <= 1 us`,
      `${h.timeline.lookup_ns.toFixed(0)} ns per lookup, load ${fms(h.timeline.load_ms)} ms, ${h.timeline.mismatches} mismatches in ${h.timeline.checked * 2} checked`,
      ok(h.timeline.lookup_ns <= 1000 && !h.timeline.mismatches)]);
  const h10 = hist.sizes.find((h) => h.versions === 10000);
  if (h10) acc.push(['Checkpoint size at 10,000 entries (proposal: ~200 B/version)',
    `${h10.cp_write.bytes_per_version.toFixed(1)} B/version (${h10.cp_write.bytes.toLocaleString('en-US')} bytes), written in ${fms(h10.cp_write.ms)} ms`,
    ok(h10.cp_write.bytes_per_version <= 200)]);
}
if (clean) {
  const sp = clean.cells.map((c) => c.lance_ms / c.lancever_ms);
  acc.push(['Cleanup vs LanceDB\'s own on twin copies (same files deleted)',
    `${Math.min(...sp).toFixed(1)}x-${Math.max(...sp).toFixed(1)}x faster; same files in ${clean.cells.filter((c) => c.same_files).length} of ${clean.cells.length}`,
    ok(clean.cells.every((c) => c.same_files))]);
}

// ---------------------------------------------------------------- issue 30: default vs tuned glibc
// Every measurement lib.mjs paired with the issue's GLIBC_TUNABLES (objects with tuned_of, and
// the grid's tuned_pairs), found by walking each results.json; plus the Lance file bench's two runs.
const TUNED_GOAL = 1.3;
const tunedRows = [];
function cellLabel(o, i) {
  if (o && typeof o === 'object') {
    if (o.case && o.store) return `${o.store} ${o.case}`;
    if (o.case) return String(o.case);
    if (o.versions !== undefined && o.fragments !== undefined) return `${o.versions.toLocaleString('en-US')} x ${fk(o.fragments)}`;
    if (o.versions !== undefined) return `${o.versions.toLocaleString('en-US')} versions`;
  }
  return String(i);
}
function walkTuned(bench, o, where) {
  if (!o || typeof o !== 'object') return;
  if (Array.isArray(o)) { o.forEach((x, i) => walkTuned(bench, x, [...where, cellLabel(x, i)])); return; }
  if (o.tuned_of && o.tuned && o.tuned[o.tuned_of]) tunedRows.push({ bench, where: where.join(' / '), d: o[o.tuned_of], t: o.tuned[o.tuned_of] });
  if (Array.isArray(o.tuned_pairs))
    for (const [what, d, t] of o.tuned_pairs) tunedRows.push({ bench, where: [...where, what].join(' / '), d, t });
  for (const [k, v] of Object.entries(o)) if (k !== 'tuned' && k !== 'tuned_pairs' && k !== 'machine') walkTuned(bench, v, [...where, k]);
}
for (const [name, r] of [['grid-local', local], ['grid-s3', s3], ['history', hist], ['versions', vers], ['scale', scale], ['cloud', cloud]])
  if (r) walkTuned(name, r, []);
// the Lance file bench's two tables, default and tuned (run.sh's lancefile() writes both)
const lfRows = (f) => { const p = path.join(inDir, 'lancefile', f);
  if (!fs.existsSync(p)) return null;
  return fs.readFileSync(p, 'utf8').split('\n').filter((l) => /^\| 2\.\d/.test(l)).map((l) => l.split('|').map((x) => x.trim()).filter(Boolean)); };
const lfDef = lfRows('results.md'), lfTun = lfRows('results-tuned.md');
if (lfDef && lfTun)
  lfDef.forEach((r, i) => {
    const t = lfTun[i];
    if (!t) return;
    // throughput: the time ratio is tuned MB/s over default MB/s
    tunedRows.push({ bench: 'lancefile', where: `${r[0]} write (MB/s ${r[4]} vs ${t[4]})`, d: 1 / Number(r[4]), t: 1 / Number(t[4]), mbps: true });
    tunedRows.push({ bench: 'lancefile', where: `${r[0]} read (MB/s ${r[5]} vs ${t[5]})`, d: 1 / Number(r[5]), t: 1 / Number(t[5]), mbps: true });
  });
for (const r of tunedRows) r.ratio = r.d / r.t;
if (tunedRows.length) {
  const over = tunedRows.filter((r) => r.ratio > TUNED_GOAL).sort((x, y) => y.ratio - x.ratio);
  acc.push([`Every figure within ${TUNED_GOAL}x of the same figure with the issue's GLIBC_TUNABLES (issue 30 section 1)`,
    `${tunedRows.length - over.length} of ${tunedRows.length} within; ` +
    (over.length ? `${over.length} over, worst ${over[0].ratio.toFixed(2)}x (${over[0].bench}: ${over[0].where})` : 'none over'), ok(!over.length)]);
}
if (scale && scale.limit.length) {
  for (const l of scale.limit) {
    acc.push([`versions() from a checkpoint, fresh handle, within 2x of the limit baseline: ${l.case}`,
      `${fms(l.fresh_ms)} ms vs ${fms(l.limit_ms)} ms: ${(l.fresh_ms / l.limit_ms).toFixed(2)}x`, ok(l.fresh_ms / l.limit_ms <= 2)]);
    if (l.proc_ms)
      acc.push([`Whole \`lancever versions --json\` process within 2x of a process doing the same I/O and writing the same bytes: ${l.case}`,
        `${fms(l.proc_ms)} ms vs ${fms(l.proc_limit_ms)} ms (${(l.json_bytes / 1e6).toFixed(1)} MB written): ${(l.proc_ms / l.proc_limit_ms).toFixed(2)}x`,
        ok(l.proc_ms / l.proc_limit_ms <= 2)]);
  }
}
if (cloud) {
  for (const r of cloud.results.filter((x) => x.limit_ms))
    acc.push([`${r.store}, ${r.case}: within 1.25x of 2 x ${r.delay_ms} ms + the same process at 0 ms added latency`,
      `${fms(r.wall_ms)} ms vs ${fms(r.limit_ms)} ms: ${r.limit_ratio.toFixed(2)}x`, ok(r.limit_ratio <= 1.25)]);
}

// ---------------------------------------------------------------- charts
const gp = [];
const dat = (name, rows) => { const p = path.join(os.tmpdir(), `lv-report-${process.pid}-${name}.dat`);
  fs.writeFileSync(p, rows.map((r) => r.join(' ')).join('\n') + '\n'); gp.push(p); return p; };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];
function plot(file, script, size = '1100,700') {
  const s = path.join(os.tmpdir(), `lv-report-${process.pid}.gp`);
  fs.writeFileSync(s, `set terminal pngcairo size ${size} font "DejaVu Sans,11"\nset output "${file}"\n` +
    'set grid\nset logscale x 2\nset logscale y 10\nset key outside right top\nset format y "%g"\n' + script);
  try { execFileSync('gnuplot', [s], { stdio: ['ignore', 'ignore', 'pipe'] }); } finally { fs.rmSync(s, { force: true }); }
}
const charts = [];
function speedupChart(g, proposal, name, title) {
  const lines = [];
  FR(g).forEach((f, i) => {
    const cs = byF(g, f).filter((c) => c.lance);
    if (!cs.length) return;
    const d1 = dat(`${name}-o-${f}`, cs.map((c) => [c.versions, c.lance.median_ms / c.cp.inproc_ms]));
    lines.push(`"${d1}" using 1:2 with linespoints lw 2 pt 7 lc rgb "${COLORS[i]}" title "lancever, ${fk(f)} fragments"`);
    const pr = proposal.filter((r) => r[1] === f).sort((x, y) => x[0] - y[0]);
    if (pr.length) {
      const d2 = dat(`${name}-p-${f}`, pr.map((r) => [r[0], r[4]]));
      lines.push(`"${d2}" using 1:2 with linespoints lw 1 dt 2 pt 6 lc rgb "${COLORS[i]}" title "proposal, ${fk(f)} fragments"`);
    }
  });
  if (!lines.length) return;
  const file = path.join(chartDir, `${name}.png`);
  plot(file, `set title "${title}"\nset xlabel "versions"\nset ylabel "speedup of versions() from a checkpoint (x)"\nplot ${lines.join(', \\\n  ')}\n`);
  charts.push([name, title]);
}
function timeChart(g, name, title) {
  const fr = FR(g);
  if (!fr.length) return;
  let s = `set multiplot layout 1,${fr.length} title "${title}"\nset key inside left top font ",9"\nset xlabel "versions"\nset ylabel "ms"\n`;
  for (const f of fr) {
    const cs = byF(g, f);
    const series = [['LanceDB listVersions', (c) => c.lance?.median_ms], ['no checkpoint', (c) => c.none.inproc_ms],
      ['checkpoint', (c) => c.cp.inproc_ms], ['checkpoint + 8', (c) => c.t8.inproc_ms], ['checkpoint + 16', (c) => c.t16.inproc_ms]];
    const parts = [];
    series.forEach(([label, get], i) => {
      const rows = cs.filter((c) => get(c)).map((c) => [c.versions, get(c)]);
      if (rows.length) parts.push(`"${dat(`${name}-${f}-${i}`, rows)}" using 1:2 with linespoints lw 2 pt 7 lc rgb "${COLORS[i]}" title "${label}"`);
    });
    s += `set title "${fk(f)} fragments per manifest"\nplot ${parts.join(', \\\n  ')}\n`;
  }
  s += 'unset multiplot\n';
  const file = path.join(chartDir, `${name}.png`);
  plot(file, s, `${500 * fr.length},520`);
  charts.push([name, title]);
}
let chartError = null;
try {
  if (local) { speedupChart(local, PROPOSAL_LOCAL, 'local-speedup', 'versions(): speedup from a checkpoint vs no checkpoint, local disk');
    timeChart(local, 'local-time', 'versions() response time, local disk (in-process)'); }
  if (s3) { speedupChart(s3, PROPOSAL_S3, 's3-speedup', `versions(): speedup from a checkpoint vs no checkpoint, S3 (${s3.delay_ms} ms/request)`);
    timeChart(s3, 's3-time', `versions() response time, S3 (s3rver, ${s3.delay_ms} ms added per request)`); }
  if (scale && scale.sizes.length) {
    const series = [['checkpoint from nothing', (x) => x.checkpoint.ms], ['versions() in-process (all live)', (x) => x.live_state.versions_inproc.open_versions_ms],
      ['history (all live)', (x) => x.live_state.history.median_ms], ['versions() in-process (16 live)', (x) => x.cleaned_state.versions_inproc.open_versions_ms],
      ['history (16 live)', (x) => x.cleaned_state.history.median_ms], ['as-of, cold handle (16 live)', (x) => x.cleaned_state.asof.asof_ms],
      ['+100 incremental checkpoint (16 live)', (x) => x.incremental.ms], ['cleanup to 16', (x) => x.cleanup.ms]];
    const C2 = [...COLORS, '#8c564b', '#e377c2', '#7f7f7f'];
    const parts = series.map(([label, get], i) => `"${dat(`scale-${i}`, scale.sizes.map((x) => [x.versions, get(x)]))}" using 1:2 with linespoints lw 2 pt 7 lc rgb "${C2[i]}" title "${label}"`);
    plot(path.join(chartDir, 'scale.png'), 'set logscale x 10\nset title "History at scale: time against recorded versions (one fragment per version)"\n' +
      `set xlabel "recorded versions"\nset ylabel "ms"\nplot ${parts.join(', \\\n  ')}\n`);
    charts.push(['scale', 'History at scale: time against recorded versions']);
  }
} catch (e) { chartError = e.message; }
for (const p of gp) fs.rmSync(p, { force: true });

// ---------------------------------------------------------------- markdown
const m = any.machine;
P('# Benchmark results', '',
  `Produced by \`${command}\` (bench/run.sh → bench/*.mjs → bench/report.mjs) on ${any.date.slice(0, 10)} at commit ` +
  `\`${git('rev-parse', '--short', 'HEAD')}\`${git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/charts', ':!bench/RESULTS.md') ? ' (with local changes)' : ''}. ` +
  'Every figure below comes from that one run; LanceDB is measured in the same run on the same files.', '',
  '## Machine', '', '| | |', '|---|---|',
  `| CPU | ${m.cpu}, ${m.cores} cores |`, `| memory | ${m.mem_gb} GiB |`, `| OS | ${m.os}, Linux ${m.kernel} |`,
  `| file system | ${m.fs} (warm page cache) |`, `| Node.js | ${m.node} |`, `| LanceDB | ${m.lancedb} |`,
  `| lancever | Release build (-O3), bench/ binaries |`,
  `| load | 1-minute load average ${os.loadavg()[0].toFixed(1)} when the report was written (${m.cores} cores) |`, '',
  ...(process.env.LV_BENCH_NOTE ? [process.env.LV_BENCH_NOTE, ''] : []),
  'How to read the figures: "in-process" is `lv_dataset_open` + `lv_versions` inside one process (bench/time_versions), ' +
  'comparable with LanceDB\'s `connect` + `openTable` + `listVersions()` timed inside its Node process ' +
  '(bench/lance_child.mjs, one process per case so its peak RSS is the case\'s own; Node + LanceDB alone ' +
  `take ~${local?.cells?.[0]?.lance ? fmb(local.cells[0].lance.base_rss_kb) : '?'} MB). "Process" is a whole \`lancever\` run timed with bench/rusage ` +
  '(fork to exit, peak RSS from wait4). Medians; slow cases get fewer runs (counts in results.json). ' +
  'The proposal\'s figures come from its Rust implementation on an Apple M3 Pro (local) and Volcengine TOS (S3), ' +
  'so absolute times differ; its speedups are against Lance\'s own versions(), which is what LanceDB\'s listVersions() runs.', '');
if (acc.length) {
  P('## Acceptance (issues 7 and 30)', '', '| goal | measured | |', '|---|---|---|');
  for (const [g, v, r] of acc) P(`| ${g} | ${v} | ${r} |`);
  P('');
}
if (chartError) P(`Charts could not be drawn: ${chartError}`, '');
for (const [name, title] of charts) P(`![${title}](charts/${name}.png)`, '');

function gridTable(g, proposal, label) {
  P(`## versions() on ${label}`, '');
  if (g.backend === 's3')
    P(`s3rver on 127.0.0.1 behind the test harness (SigV4 verified, atomic PUTs), ${g.delay_ms} ms added by the server to every ` +
      'request as a stand-in for network latency (not `tc netem`). Requests per call in parentheses (lancever: its own count; ' +
      'LanceDB: the server log).', '');
  P('Datasets from `bench/gen_dataset`: N versions, each manifest with the same F fragments (~84 bytes each, like Lance\'s own), ' +
    'an inline transaction, V2 names. In-process milliseconds. "Steady heap": the same call with glibc\'s trimming of ' +
    'freed heap memory switched off (GLIBC_TUNABLES), as in a long-running process whose heap stays allocated; by default ' +
    'glibc hands freed memory above 128 KiB back to the kernel after every call and the next call faults it in again, ' +
    'which on this virtual machine costs several microseconds per 4 KiB page:', '');
  const s3c = g.backend === 's3';
  const l12 = g.cells.some((c) => c.lance12);
  P(`| versions | fragments | manifest KB | LanceDB |${l12 ? ' LanceDB 0.39 (Lance 12) |' : ''} no checkpoint | checkpoint | checkpoint, steady heap | +8 tail | +16 tail | vs LanceDB |${l12 ? ' vs Lance 12 |' : ''} proposal | vs no checkpoint |`,
    `|---:|---:|---:|---:|${l12 ? '---:|' : ''}---:|---:|---:|---:|---:|---:|${l12 ? '---:|' : ''}---:|---:|`);
  const rq = (x, r) => (s3c && r !== undefined ? `${fms(x)} (${Math.round(r)})` : fms(x));
  for (const c of g.cells) {
    const p = proposalRow(proposal, c.versions, c.fragments);
    const c12 = l12 ? ` ${c.lance12?.error ? 'failed' : fms(c.lance12?.median_ms)} |` : '';
    P(`| ${c.versions.toLocaleString('en-US')} | ${fk(c.fragments)} | ${(c.manifest_bytes / 1024).toFixed(0)} | ${rq(c.lance?.median_ms, c.lance?.requests)} |${c12} ` +
      `${rq(c.none.inproc_ms, c.none.stats.requests)} | ${rq(c.cp.inproc_ms, c.cp.stats.requests)} | ${fms(c.cp.inproc_steady_ms)} | ${rq(c.t8.inproc_ms, c.t8.stats.requests)} | ` +
      `${rq(c.t16.inproc_ms, c.t16.stats.requests)} | ${fx(c.lance?.median_ms, c.cp.inproc_ms)} |${l12 ? ` ${fx(c.lance12?.median_ms, c.cp.inproc_ms)} |` : ''} ${p ? `${p[4]}x` : '-'} | ${fx(c.none.inproc_ms, c.cp.inproc_ms)} |`);
  }
  P('', 'Whole `lancever versions` process (ms) and peak RSS (MB); LanceDB\'s RSS is its whole Node process; checkpoint write = `lancever checkpoint` from nothing:', '',
    '| versions | fragments | no checkpoint ms | checkpoint ms | +16 tail ms | RSS LanceDB | RSS no checkpoint | RSS checkpoint | checkpoint write ms (bytes, RSS) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const c of g.cells)
    P(`| ${c.versions.toLocaleString('en-US')} | ${fk(c.fragments)} | ${fms(c.none.proc_ms)} | ${fms(c.cp.proc_ms)} | ${fms(c.t16.proc_ms)} | ` +
      `${fmb(c.lance?.maxrss_kb)} | ${fmb(c.none.proc_rss_kb)} | ${fmb(c.cp.proc_rss_kb)} | ${fms(c.cp_write.ms)} (${c.cp_write.bytes.toLocaleString('en-US')}, ${fmb(c.cp_write.rss_kb)}) |`);
  P('');
}
if (local) gridTable(local, PROPOSAL_LOCAL, 'local disk');
if (s3) gridTable(s3, PROPOSAL_S3, 'S3 (s3rver)');
if (s3) {
  const rows = mainCells(s3).map((c) => ({ c, p: proposalRow(PROPOSAL_S3_TAIL, c.versions, c.fragments) })).filter((x) => x.p);
  if (rows.length) {
    P('### The 16-version tail on S3, next to the proposal\'s', '',
      'The proposal reads the manifests newer than the checkpoint one after another; lancever reads them in parallel. ' +
      'Relative tail cost = (+16 − checkpoint) / checkpoint:', '',
      '| base versions | fragments | proposal checkpoint / +16 ms | proposal tail cost | lancever checkpoint / +16 ms | lancever tail cost | smaller by |',
      '|---:|---:|---:|---:|---:|---:|---:|');
    for (const { c, p } of rows) {
      const th = (p[4] - p[2]) / p[2], ou = Math.max(c.t16.inproc_ms - c.cp.inproc_ms, 0) / c.cp.inproc_ms;
      P(`| ${c.versions} | ${fk(c.fragments)} | ${p[2]} / ${p[4]} | ${(100 * th).toFixed(0)}% | ${fms(c.cp.inproc_ms)} / ${fms(c.t16.inproc_ms)} | ` +
        `${(100 * ou).toFixed(0)}% | ${(th / Math.max(ou, 1e-9)).toFixed(1)}x |`);
    }
    P('');
  }
}
if (hist) {
  P('## Long histories: checkpoint write, cleanup, as-of', '',
    'N versions × 1 fragment (bench/gen_dataset); `lancever checkpoint --max-entries N` from nothing; then `lancever cleanup ' +
    '--older-than 0s --retain-versions 16 --max-entries N` (checkpoint first, then N − 16 versions removed, history kept); ' +
    'then the timeline is loaded and 1,000,000 as-of lookups run at random times (inclusive and strict), checked against a linear scan.', '',
    '| versions | LanceDB listVersions ms | versions() no checkpoint / checkpoint ms | checkpoint write ms | bytes per version | write RSS MB | cleanup to 16 ms (RSS MB) | history ms (RSS MB) | timeline load ms (RSS MB) | as-of lookup ns | `lancever asof` ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const h of hist.sizes)
    P(`| ${h.versions.toLocaleString('en-US')} | ${fms(h.lance?.median_ms)} | ${fms(h.none.inproc.open_versions_ms)} / ${fms(h.cp.inproc.open_versions_ms)} | ` +
      `${fms(h.cp_write.ms)} | ${h.cp_write.bytes_per_version.toFixed(1)} | ${fmb(h.cp_write.rss_kb)} | ${fms(h.cleanup.ms)} (${fmb(h.cleanup.rss_kb)}) | ` +
      `${fms(h.history.median_ms)} (${fmb(h.history.maxrss_kb)}) | ${fms(h.timeline.load_ms)} (${fmb(h.timeline.maxrss_kb)}) | ${h.timeline.lookup_ns.toFixed(1)} | ${fms(h.asof_cli.median_ms)} |`);
  P('', 'LanceDB is not run on a million live manifests (it would read them one by one for many minutes).', '');
  if (hist.sizes.some((h) => h.outputs)) {
    P('`lancever history` on that history (N versions, N − 16 cleaned up) written to a file in each output format, ' +
      'whole process (bench/rusage): every format streams, so csv and arrow should peak where --json does (issue 29).', '',
      '| versions | `--json` ms (peak RSS MB) | `--format csv` ms (peak RSS MB) | `--format arrow` ms (peak RSS MB) |',
      '|---:|---:|---:|---:|');
    for (const h of hist.sizes.filter((x) => x.outputs))
      P(`| ${h.versions.toLocaleString('en-US')} | ` +
        ['json', 'csv', 'arrow'].map((k) => `${fms(h.outputs[k].ms)} (${fmb(h.outputs[k].rss_kb)})`).join(' | ') + ' |');
    P('');
  }
}
if (clean) {
  P('## Cleanup vs LanceDB\'s own cleanup (twin copies)', '',
    `bench/gen_dataset datasets whose fragments point at one real data file, plus ${clean.strays} stray data files; each run on fresh \`cp -a\` twins: ` +
    '`lancever cleanup --older-than 0s --delete-unverified` (whole process) vs LanceDB `optimize({cleanupOlderThan, deleteUnverified: true})` ' +
    '(connect + open + optimize in its process; it compacts nothing here, checked). The sets of deleted files are compared on every run.', '',
    '| versions × fragments | dataset MB | lancever ms | LanceDB ms | speedup | removed (versions / files / MB) | same files | peak RSS MB lancever / LanceDB |',
    '|---|---:|---:|---:|---:|---|---|---:|');
  for (const c of clean.cells)
    P(`| ${c.versions} × ${fk(c.fragments)} | ${(c.dataset_bytes / 1048576).toFixed(1)} | ${fms(c.lancever_ms)} | ${fms(c.lance_ms)} | ${fx(c.lance_ms, c.lancever_ms)} | ` +
      `${c.versions_removed} / ${c.files_removed} / ${(c.bytes_removed / 1048576).toFixed(1)} | ${c.same_files ? 'yes' : '**no**'} | ${fmb(c.lancever_rss_kb)} / ${fmb(c.lance_rss_kb)} |`);
  P('');
}
if (vers) {
  P('## versions() on datasets LanceDB wrote itself (no checkpoint)', '',
    '| case | manifests MiB (largest KB) | LanceDB ms (same handle) | lancever in-process ms | lancever process ms (--threads 1) | speedup in-process / process | RSS MB LanceDB / lancever |',
    '|---|---:|---:|---:|---:|---:|---:|');
  for (const r of vers.cases)
    P(`| ${r.case} | ${(r.manifest_bytes / 1048576).toFixed(1)} (${(r.max_manifest_bytes / 1024).toFixed(0)}) | ${fms(r.lance.median_ms)} (${fms(r.lance.same_handle_ms)}) | ` +
      `${fms(r.inproc.open_versions_ms)} | ${fms(r.proc.median_ms)} (${fms(r.proc1.median_ms)}) | ${fx(r.lance.median_ms, r.inproc.open_versions_ms)} / ` +
      `${fx(r.lance.median_ms, r.proc.median_ms)} | ${fmb(r.lance.maxrss_kb)} / ${fmb(r.proc.maxrss_kb)} |`);
  P('');
}
const lfPath = path.join(inDir, 'lancefile', 'results.md');
if (fs.existsSync(lfPath))
  P('## Lance file layer', '', 'bench/lancefile_bench: the 15-column checkpoint schema written and read with lancever\'s own Lance ' +
    'file writer/reader (throughput in MB/s of file bytes, and minor page faults of one write and of one read, median):', '', fs.readFileSync(lfPath, 'utf8').trim(), '');
if (scale && scale.sizes.length) {
  P('## History at scale (issue 18)', '',
    'bench/bench_scale.mjs: N recorded versions × 1 fragment; the newest `live` have manifests, the rest are history written by lancever\'s ' +
    'own checkpoint writer (bench/gen_dataset --recorded). On a hard-linked copy: `lancever checkpoint` from that state, the reads with every ' +
    'live version live, +100 versions and an incremental checkpoint, `lancever cleanup --retain-versions 16`, the reads again, +100 and a checkpoint ' +
    'again; `lancever expire --retain-versions 16` on a second copy. Times in ms (peak RSS in MB); versions() in-process on a fresh handle; as-of: ' +
    'lv_version_as_of on a cold handle (load + lookup) and the whole `lancever asof` process.', '',
    '| versions (live) | checkpoint ms (RSS; head + segments bytes) | state | versions() in-process / process | history (RSS) | history --limit 100 | history --since last 1000 | as-of cold / process | +100 checkpoint ms (bytes) |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|');
  for (const x of scale.sizes) {
    const st = (label, r, inc) => P(`| ${label === 'all live' ? `${x.versions.toLocaleString('en-US')} (${x.live.toLocaleString('en-US')})` : ''} | ` +
      `${label === 'all live' ? `${fms(x.checkpoint.ms)} (${fmb(x.checkpoint.rss_kb)}; ${(x.checkpoint.head_bytes + x.checkpoint.segment_bytes).toLocaleString('en-US')})` : ''} | ` +
      `${label} | ${fms(r.versions_inproc.open_versions_ms)} / ${fms(r.versions_proc.median_ms)} | ${fms(r.history.median_ms)} (${fmb(r.history.maxrss_kb)}) | ` +
      `${fms(r.history_limit.median_ms)} | ${fms(r.history_since.median_ms)} | ${fms(r.asof.asof_ms)} / ${fms(r.asof_proc.median_ms)} | ${fms(inc.ms)} (${inc.bytes.toLocaleString('en-US')}) |`);
    st('all live', x.live_state, x.incremental_live);
    st('16 live (after cleanup)', x.cleaned_state, x.incremental);
  }
  P('', '| versions | cleanup to 16 ms (RSS MB) | versions removed | expire to 16 ms (RSS MB) | versions() reads (all live): manifests / segments / requests | history reads (16 live): segments / bytes |',
    '|---:|---:|---:|---:|---|---|');
  for (const x of scale.sizes)
    P(`| ${x.versions.toLocaleString('en-US')} | ${fms(x.cleanup.ms)} (${fmb(x.cleanup.rss_kb)}) | ${x.cleanup.versions_removed.toLocaleString('en-US')} | ` +
      `${fms(x.expire.ms)} (${fmb(x.expire.rss_kb)}) | ${x.live_state.versions_stats ? `${x.live_state.versions_stats.manifests_read} / ${x.live_state.versions_stats.segments_read} / ${x.live_state.versions_stats.requests}` : '-'} | ` +
      `${x.cleaned_state.history_stats ? `${x.cleaned_state.history_stats.segments_read} / ${x.cleaned_state.history_stats.bytes_read.toLocaleString('en-US')}` : '-'} |`);
  P('');
}
if (scale && scale.limit.length) {
  P('## versions() against its limit (issue 30 section 4)', '',
    'Checkpointed datasets. In-process: bench/limit_baseline (list `_versions/`, `_checkpoints/` and `_refs/tags/` (reading its tag files), read the checkpoint whole and 4 KiB of ' +
    'the newest manifest, nothing decoded; the better of two medians of 201) beside bench/time_versions (median of 201): a fresh handle per call, ' +
    'one handle with its cache, and the fresh handle under the issue\'s GLIBC_TUNABLES. Process: the whole `lancever versions --json` beside ' +
    '`limit_baseline --write BYTES` (the same I/O, then as many bytes written to stdout), both writing into a file, timed by bench/rusage (median of 21).', '',
    '| case | limit ms | fresh handle ms | vs limit | cached handle ms | fresh, tuned glibc ms | JSON MB | `versions --json` process ms (RSS MB) | same-I/O-and-bytes process ms | vs limit |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const l of scale.limit)
    P(`| ${l.case} | ${fms(l.limit_ms)} | ${fms(l.fresh_ms)} | ${fx(l.fresh_ms, l.limit_ms)} | ${fms(l.cached_ms)} | ${fms(l.notrim_fresh_ms)} | ` +
      `${l.json_bytes ? (l.json_bytes / 1e6).toFixed(2) : '-'} | ${fms(l.proc_ms)} (${fmb(l.proc_rss_kb)}) | ${fms(l.proc_limit_ms)} | ${l.proc_ms ? (l.proc_ms / l.proc_limit_ms).toFixed(2) + 'x' : '-'} |`);
  P('');
}
if (cloud) {
  P('## S3 and Azure from a checkpoint against two request rounds (issue 30 section 4)', '',
    `bench/bench_cloud.mjs: ${cloud.results[0]?.versions ?? '?'} versions × ${fk(cloud.results[0]?.fragments ?? 0)} fragments, checkpointed, copied to s3rver and Azurite; ` +
    `each server's test proxy adds ${cloud.delay_ms} ms to every request. The whole \`lancever versions\` process (median of ${cloud.runs}). The limit of two ` +
    `request rounds (both listings at once, then the checkpoint and the tail in parallel) is 2 × ${cloud.delay_ms} ms plus the same process with no added ` +
    'latency (which holds the transfer, the start-up, the decoding and the servers\' own work: s3rver and Azurite run in the bench\'s Node process ' +
    'and are the larger part of it). Goal: within 1.25x. The two figures are taken one after the other, so on a loaded machine the difference ' +
    '(the latency actually paid, in request rounds) is noisy and can even come out below 2.', '',
    '| store | case | wall ms | at 0 ms added | limit ms | vs limit | latency paid: (wall − at 0 ms) / delay | requests (lancever / server) | manifests read | bytes read |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---:|');
  for (const r of cloud.results)
    P(`| ${r.store} | ${r.case} | ${fms(r.wall_ms)} | ${fms(r.zero_latency_ms)} | ${fms(r.limit_ms)} | ${r.limit_ratio ? r.limit_ratio.toFixed(2) + 'x' : '-'} | ` +
      `${r.zero_latency_ms ? ((r.wall_ms - r.zero_latency_ms) / r.delay_ms).toFixed(1) + ' rounds' : '-'} | ` +
      `${r.requests} / ${r.server_requests_per_call} | ${r.manifests_read} | ${r.bytes_read.toLocaleString('en-US')} |`);
  P('');
}
const pyPath = path.join(inDir, 'python', 'results.md');
if (fs.existsSync(pyPath))
  P('## Python: lancever beside pylance 14 (issue 27)', '', 'bench/bench_python.mjs in the same run (the Lance 14 peer\'s venv):', '',
    fs.readFileSync(pyPath, 'utf8').trim().replaceAll(`${repo}/`, ''), ''); // paths relative to the repository
if (tunedRows.length) {
  const over = tunedRows.filter((r) => r.ratio > TUNED_GOAL).sort((x, y) => y.ratio - x.ratio);
  P('## Default glibc against the issue\'s GLIBC_TUNABLES (issue 30 section 1)', '',
    'Every repeatable lancever measurement above ran twice in this run, back to back: with the default environment and with ' +
    '`GLIBC_TUNABLES=glibc.malloc.trim_threshold=1000000000:glibc.malloc.mmap_threshold=1000000000` (glibc keeps its heap instead of mapping ' +
    'and unmapping large blocks on every call). Ratio = default time / tuned time (for the Lance file layer, tuned MB/s / default MB/s); ' +
    `the goal is every ratio within ${TUNED_GOAL}x with no environment tuning. One-shot steps that change the dataset (checkpoint writes, cleanup, expire) ` +
    'are not repeated. On a loaded machine a single ratio can move by ±20% either way: look at the cells over the goal again before reading much into one.', '');
  const by = {};
  for (const r of tunedRows) (by[r.bench] ||= []).push(r.ratio);
  P('| bench | cells | median ratio | worst ratio | over ' + TUNED_GOAL + 'x |', '|---|---:|---:|---:|---:|');
  for (const [b, rs] of Object.entries(by)) {
    const sr = [...rs].sort((x, y) => x - y);
    P(`| ${b} | ${rs.length} | ${sr[sr.length >> 1].toFixed(2)}x | ${sr[sr.length - 1].toFixed(2)}x | ${rs.filter((x) => x > TUNED_GOAL).length} |`);
  }
  P('', over.length ? `Cells over ${TUNED_GOAL}x:` : `No cell is over ${TUNED_GOAL}x.`, '');
  if (over.length) {
    P('| bench | cell | default | tuned | ratio |', '|---|---|---:|---:|---:|');
    for (const r of over) P(`| ${r.bench} | ${r.where} | ${r.mbps ? `${(1 / r.d).toFixed(0)} MB/s` : `${fms(r.d)} ms`} | ${r.mbps ? `${(1 / r.t).toFixed(0)} MB/s` : `${fms(r.t)} ms`} | ${r.ratio.toFixed(2)}x |`);
    P('');
  }
  P('<details><summary>Every cell</summary>', '', '| bench | cell | default | tuned | ratio |', '|---|---|---:|---:|---:|');
  for (const r of tunedRows) P(`| ${r.bench} | ${r.where} | ${r.mbps ? `${(1 / r.d).toFixed(0)} MB/s` : `${fms(r.d)} ms`} | ${r.mbps ? `${(1 / r.t).toFixed(0)} MB/s` : `${fms(r.t)} ms`} | ${r.ratio.toFixed(2)}x |`);
  P('', '</details>', '');
}
// ---------------------------------------------------------------- README headline (bench/out/headline.md)
{
  const H = [];
  const pick = (g, ns) => mainCells(g).filter((c) => ns.includes(c.versions));
  if (local) {
    H.push('| local disk | versions × fragments | LanceDB ms | lancever, no checkpoint | from checkpoint | + 16-version tail | speedup vs LanceDB | proposal\'s speedup |',
      '|---|---|---:|---:|---:|---:|---:|---:|');
    for (const c of pick(local, [2, 32, 512])) {
      const p = proposalRow(PROPOSAL_LOCAL, c.versions, c.fragments);
      H.push(`| | ${c.versions} × ${fk(c.fragments)} | ${fms(c.lance?.median_ms)} | ${fms(c.none.inproc_ms)} | ${fms(c.cp.inproc_ms)} | ` +
        `${fms(c.t16.inproc_ms)} | ${fx(c.lance?.median_ms, c.cp.inproc_ms)} | ${p ? `${p[4]}x` : '-'} |`);
    }
    for (const c of local.cells.filter((x) => x.versions > 512))
      H.push(`| | ${c.versions.toLocaleString('en-US')} × ${fk(c.fragments)} | ${fms(c.lance?.median_ms)} | ${fms(c.none.inproc_ms)} | ${fms(c.cp.inproc_ms)} | ` +
        `${fms(c.t16.inproc_ms)} | ${fx(c.lance?.median_ms, c.cp.inproc_ms)} | - |`);
  }
  if (s3) {
    H.push('', `| S3 (${s3.delay_ms} ms/request) | versions × fragments | LanceDB ms (requests) | no checkpoint | from checkpoint | + 16-version tail | speedup vs LanceDB | proposal\'s speedup |`,
      '|---|---|---:|---:|---:|---:|---:|---:|');
    for (const c of pick(s3, [2, 32, 512])) {
      const p = proposalRow(PROPOSAL_S3, c.versions, c.fragments);
      const r = (x, q) => `${fms(x)} (${Math.round(q)})`;
      H.push(`| | ${c.versions} × ${fk(c.fragments)} | ${c.lance ? r(c.lance.median_ms, c.lance.requests) : '-'} | ${r(c.none.inproc_ms, c.none.stats.requests)} | ` +
        `${r(c.cp.inproc_ms, c.cp.stats.requests)} | ${r(c.t16.inproc_ms, c.t16.stats.requests)} | ${fx(c.lance?.median_ms, c.cp.inproc_ms)} | ${p ? `${p[4]}x` : '-'} |`);
    }
  }
  if (acc.length) {
    H.push('', '| goal (issue 7) | measured | |', '|---|---|---|');
    for (const [g, v, r] of acc) H.push(`| ${g} | ${v} | ${r} |`);
  }
  fs.writeFileSync(path.join(inDir, 'headline.md'), H.join('\n') + '\n');
}

const secs = [local, s3, hist, clean, vers, scale, cloud].filter(Boolean).map((x) => `${x.kind}${x.backend ? `-${x.backend}` : ''} ${Math.round(x.seconds / 60)} min`);
P(`Harness time: ${secs.join(', ')}.`);
fs.writeFileSync(mdPath, L.join('\n') + '\n');
console.log(`report: wrote ${path.relative(process.cwd(), mdPath)} and ${charts.length} chart(s) in ${path.relative(process.cwd(), chartDir)}`);
