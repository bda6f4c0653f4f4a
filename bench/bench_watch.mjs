// `lancever watch` (issue 28): capture lag, and the cost of idle tables.
//
//   node bench/bench_watch.mjs [--rates 10,100] [--tables 1,100] [--stores local,s3] [--seconds 5]
//                              [--delay 20] [--idle 1000] [--idle-s3 20] [--idle-seconds 30] [--out DIR]
//                              [--watch-args "--threads 16"]
//
// Lag cells (store x tables x commits/s): LanceDB 0.31 (the Node peer, in this process) appends
// one row per commit, round robin over the tables at the given total rate (at most one commit in
// flight per table; the achieved rate is reported), for --seconds, while `lancever watch FOLDER
// --log-format json --min-interval 10ms --max-interval 1s` runs beside it.  The lag of each
// `captured` event during the run (read time minus the commit time of the newest manifest read) gives p50/p99;
// history is then checked complete.  On S3 (s3rver in this process) every request is delayed by
// --delay ms, as bench_cloud.mjs does, once the tables exist.
// Idle: --idle copies of a one-version table in a local folder, watched with the default intervals:
// CPU (utime+stime from /proc over --idle-seconds after discovery) and RSS (VmRSS, VmHWM);
// --idle-s3 idle tables on s3rver (20 ms/request): requests per table per minute, counted by the
// server and by the watcher's --metrics.
// Writes DIR/results.json (default bench/out/watch/) and prints markdown tables.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { here, bin, requireBinaries, parseArgs, machine } from './lib.mjs';

process.env.LV_PEER_QUIET = '1';
const a = parseArgs();
const rates = a.list('--rates', '10,100').map(Number);
const tableCounts = a.list('--tables', '1,100').map(Number);
const stores = a.list('--stores', 'local,s3');
const seconds = Number(a.get('--seconds', 5));
const delay = Number(a.get('--delay', 20));
const idleN = Number(a.get('--idle', 1000));
const idleS3 = Number(a.get('--idle-s3', 20));
const idleSeconds = Number(a.get('--idle-seconds', 30));
const extra = a.get('--watch-args', '').split(' ').filter(Boolean); // e.g. "--threads 16"
const outDir = path.resolve(a.get('--out', path.join(here, 'out', 'watch')));
requireBinaries();
fs.mkdirSync(outDir, { recursive: true });
const { lancedb } = await import('../tests/interop/peer.mjs');
const { startS3, s3Env, s3StorageOptions } = await import('../tests/interop/s3server.mjs');
const { startWatch, historyOf, missing, httpGet, parseMetrics, metric } = await import('../tests/interop/watchlib.mjs');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-bench-watch-'));
process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => { if (!xs.length) return null; const s = [...xs].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

// The lag_ms of every `captured` event in a JSON log.
function lags(stderr) {
  const out = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    let o; try { o = JSON.parse(line); } catch { continue; }
    const kind = o.event ?? o.kind ?? o.msg;
    if (kind === 'captured' && o.lag_ms !== undefined) out.push(Number(o.lag_ms));
  }
  return out;
}

async function makeTables(uri, n, storageOptions) {
  const db = await lancedb.connect(uri, storageOptions ? { storageOptions } : {});
  const hs = [];
  for (let i = 0; i < n; i++) hs.push(await db.createTable(`t${i}`, [{ id: 0, v: 'x' }]));
  return hs;
}

// Commits at `rate` per second in total, round robin, for `ms`; one commit in flight per table.
async function drive(hs, rate, ms) {
  const busy = new Array(hs.length).fill(false);
  let sent = 0, done = 0, skipped = 0, i = 0;
  const t0 = Date.now(), inflight = [];
  while (Date.now() - t0 < ms) {
    const due = t0 + (sent + skipped) * (1000 / rate);
    if (due > Date.now()) await sleep(due - Date.now());
    const k = i++ % hs.length;
    if (busy[k]) { skipped++; continue; }
    busy[k] = true;
    sent++;
    inflight.push(hs[k].add([{ id: sent, v: 'x' }]).then(() => { busy[k] = false; done++; }));
  }
  await Promise.all(inflight);
  return { commits: done, achieved_per_s: done / ((Date.now() - t0) / 1000), skipped };
}

async function lagCell(store, nTables, rate, s3) {
  const uri = store === 'local' ? fs.mkdtempSync(path.join(work, 'lag-')) : `s3://bucket/lag-${nTables}-${rate}/`;
  const so = store === 's3' ? s3StorageOptions(s3) : undefined;
  const env = store === 's3' ? s3Env(s3) : process.env;
  const hs = await makeTables(uri, nTables, so);
  if (s3) s3.setDelay(store === 's3' ? delay : 0);
  const w = startWatch(bin, [uri, '--log-format', 'json', '--min-interval', '10ms', '--max-interval', '1s', ...extra], { env });
  await w.waitFor(new RegExp(`discover[^\\n]*t${nTables - 1}\\.lance`), 120000);
  await sleep(1500); // the versions that existed before the watcher are not lag
  const from = w.err().length;
  const d = await drive(hs, rate, seconds * 1000);
  await sleep(2000);
  const end = await w.stop('SIGTERM');
  if (s3) s3.setDelay(0);
  const l = lags(end.stderr.slice(from));
  let lacking = 0;
  for (let i = 0; i < Math.min(nTables, 5); i++) {
    const h = await historyOf(bin, store === 'local' ? path.join(uri, `t${i}.lance`) : `${uri}t${i}.lance`, { env });
    lacking += missing(h.versions, await hs[i].version()).length;
  }
  const row = { store, tables: nTables, rate_per_s: rate, ...d, delay_ms: store === 's3' ? delay : 0,
    lag_events: l.length, lag_p50_ms: pct(l, 0.5), lag_p99_ms: pct(l, 0.99), lag_max_ms: l.length ? Math.max(...l) : null,
    versions_lacking_in_history_first5: lacking, exit: end.status };
  console.error(JSON.stringify(row));
  return row;
}

function procStat(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const hz = 100; // USER_HZ on Linux
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number((new RegExp(`${k}:\\s+(\\d+)`).exec(st) || [])[1]);
  return { cpu_s: (Number(f[11]) + Number(f[12])) / hz, rss_kb: kb('VmRSS'), hwm_kb: kb('VmHWM'), threads: kb('Threads') };
}

async function idleLocal() {
  const db = fs.mkdtempSync(path.join(work, 'idle-'));
  await makeTables(db, 1, undefined);
  for (let i = 1; i < idleN; i++) fs.cpSync(path.join(db, 't0.lance'), path.join(db, `t${i}.lance`), { recursive: true });
  const w = startWatch(bin, [db, '--log-format', 'json']);
  const t0 = Date.now();
  await w.waitFor(new RegExp(`discover[^\\n]*t${idleN - 1}\\.lance`), 300000);
  const discoverMs = Date.now() - t0;
  await sleep(3000);
  const s0 = procStat(w.proc.pid);
  await sleep(idleSeconds * 1000);
  const s1 = procStat(w.proc.pid);
  const end = await w.stop('SIGTERM');
  const row = { case: 'idle local', tables: idleN, seconds: idleSeconds, discover_ms: discoverMs,
    cpu_percent: (100 * (s1.cpu_s - s0.cpu_s)) / idleSeconds, rss_mb: s1.rss_kb / 1024, peak_rss_mb: s1.hwm_kb / 1024,
    rss_kb_per_table: s1.rss_kb / idleN, threads: s1.threads, exit: end.status };
  console.error(JSON.stringify(row));
  return row;
}

async function idleS3Cell(s3) {
  const uri = 's3://bucket/idle/';
  await makeTables(uri, idleS3, s3StorageOptions(s3));
  s3.setDelay(delay);
  const w = startWatch(bin, [uri, '--log-format', 'json', '--metrics', '127.0.0.1:0'], { env: s3Env(s3) });
  await w.waitFor(/metrics at http/);
  await w.waitFor(new RegExp(`discover[^\\n]*t${idleS3 - 1}\\.lance`), 120000);
  await sleep(6000); // past the first back-off steps
  const url = /metrics at (http:\/\/\S+)/.exec(w.err())[1].replace(/"$/, '');
  const m0 = metric(parseMetrics(await httpGet(url)), 'lancever_watch_requests_total');
  s3.reset();
  s3.setDelay(delay);
  await sleep(idleSeconds * 1000);
  const seen = s3.requests().length;
  const m1 = metric(parseMetrics(await httpGet(url)), 'lancever_watch_requests_total');
  const end = await w.stop('SIGTERM');
  s3.setDelay(0);
  const perMin = 60 / idleSeconds / idleS3;
  const row = { case: 'idle s3', tables: idleS3, seconds: idleSeconds, delay_ms: delay,
    requests_per_table_per_min_server: seen * perMin, requests_per_table_per_min_watcher: (m1 - m0) * perMin, exit: end.status };
  console.error(JSON.stringify(row));
  return row;
}

const s3 = stores.includes('s3') || idleS3 > 0 ? await startS3({ delay: 0 }) : null;
const results = { machine: machine(), watch_args: extra, command: `node bench/bench_watch.mjs ${process.argv.slice(2).join(' ')}`.trim(), lag: [], idle: [] };
for (const store of stores)
  for (const n of tableCounts)
    for (const r of rates) results.lag.push(await lagCell(store, n, r, s3));
if (idleN > 0) results.idle.push(await idleLocal());
if (idleS3 > 0) results.idle.push(await idleS3Cell(s3));
if (s3) await s3.stop();
fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify(results, null, 2) + '\n');

const f = (x, d = 0) => (x === null || x === undefined || Number.isNaN(x) ? '-' : Number(x).toFixed(d));
console.log(`| store | tables | commits/s asked (achieved) | lag p50 ms | lag p99 ms | lag max ms | polls that captured | history complete |`);
console.log(`|---|---|---|---|---|---|---|---|`);
for (const r of results.lag)
  console.log(`| ${r.store}${r.delay_ms ? ` (${r.delay_ms} ms/request)` : ''} | ${r.tables} | ${r.rate_per_s} (${f(r.achieved_per_s, 1)}) | ${f(r.lag_p50_ms)} | ${f(r.lag_p99_ms)} | ${f(r.lag_max_ms)} | ${r.lag_events} | ${r.versions_lacking_in_history_first5 === 0 ? 'yes' : `no (${r.versions_lacking_in_history_first5} lacking)`} |`);
for (const r of results.idle) {
  if (r.case === 'idle local')
    console.log(`\nidle, local: ${r.tables} tables, CPU ${f(r.cpu_percent, 2)} % of one core over ${r.seconds} s, RSS ${f(r.rss_mb, 1)} MB ` +
      `(${f(r.rss_kb_per_table, 1)} KB/table, peak ${f(r.peak_rss_mb, 1)} MB), ${r.threads} threads, discovery ${r.discover_ms} ms`);
  else
    console.log(`idle, S3 (${r.delay_ms} ms/request): ${r.tables} tables, ${f(r.requests_per_table_per_min_server, 1)} requests per table per minute ` +
      `(server count; watcher's own count ${f(r.requests_per_table_per_min_watcher, 1)})`);
}
