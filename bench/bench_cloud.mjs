// versions() from a checkpoint on Azure Blob Storage (Azurite) vs on S3 (s3rver): the same dataset
// (bench/gen_dataset, N versions x F fragments, checkpointed locally, then copied to both stores
// with bench/s3_upload), the same added latency per request (each server's test proxy delays every
// request by --delay ms), 16 newer versions added after the checkpoint for a "+16" tail, then two
// tags (_refs/tags/) for a "+16, 2 tags" case: a tagged dataset from a checkpoint still takes two
// request rounds (the tags listed with the first round, their files read with the checkpoint).
//
//   node bench/bench_cloud.mjs [--versions 64] [--fragments 1000] [--delay 20] [--runs 7] [--out DIR]
//
// For each store and case (checkpoint only; checkpoint + 16-version tail) it reports the median wall
// time of a whole `lancever versions` process (bench/rusage, --runs runs after a warm-up), the
// requests lancever counts (--stats) and the requests the server saw per call.  Issue 30 section 4's
// figure: the same process is timed first with no added latency (its start-up, requests, transfer
// and decoding), and the limit of two request rounds is 2 x --delay + that time; the goal is the
// delayed wall time within 1.25x of the limit.  Writes
// DIR/results.json (default bench/out/cloud/) and prints a markdown table.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { here, tool, requireBinaries, parseArgs, run, timeProcess, lvStats, machine, fms } from './lib.mjs';

const a = parseArgs();
const N = Number(a.get('--versions', 64));
const F = Number(a.get('--fragments', 1000));
const delay = Number(a.get('--delay', 20));
const runs = Number(a.get('--runs', 7));
const outDir = path.resolve(a.get('--out', path.join(here, 'out', 'cloud')));
requireBinaries('gen_dataset', 'rusage', 's3_upload');
fs.mkdirSync(outDir, { recursive: true });
const { startS3, s3Env } = await import('../tests/interop/s3server.mjs');
const { startAzurite } = await import('../tests/interop/azurite.mjs');

const started = Date.now();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-bench-cloud-'));
process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }));
const base = path.join(work, 't.lance'), tail = path.join(work, 'tail.lance');
await run(tool('gen_dataset'), [base, '--versions', String(N), '--fragments', String(F)]);
await run(path.join(path.dirname(tool('rusage')), 'lancever'), ['checkpoint', base]);
await run(tool('gen_dataset'), [tail, '--start', String(N + 1), '--versions', '16', '--fragments', String(F)]);
const tags = path.join(work, 'tags.lance');
fs.mkdirSync(path.join(tags, '_refs', 'tags'), { recursive: true });
for (const [name, v] of [['first', 1], ['newest', N + 16]])
  fs.writeFileSync(path.join(tags, '_refs', 'tags', `${name}.json`),
    JSON.stringify({ branch: null, version: v, manifestSize: 100, metadata: {} }, null, 2));

const s3 = await startS3({ delay: 0 });
const az = await startAzurite();
await az.createContainer('bench');
const stores = [
  { name: 's3rver', uri: 's3://bucket/bench/t.lance', env: s3Env(s3), server: s3 },
  { name: 'Azurite', uri: 'az://bench/bench/t.lance', env: az.env(), server: az },
];
const results = [];
for (const st of stores) {
  await run(tool('s3_upload'), [base, st.uri], { env: st.env });
  for (const kase of ['checkpoint', 'checkpoint + 16', 'checkpoint + 16, 2 tags']) {
    if (kase === 'checkpoint + 16') await run(tool('s3_upload'), [tail, st.uri], { env: st.env });
    if (kase === 'checkpoint + 16, 2 tags') await run(tool('s3_upload'), [tags, st.uri], { env: st.env });
    st.server.setDelay(0);
    const zero = await timeProcess(['versions', st.uri], { repeat: runs, env: st.env });
    st.server.reset();
    st.server.setDelay(delay);
    const stats = await lvStats(['versions', st.uri], { env: st.env });
    const seen = st.server.requests().length;
    const t = await timeProcess(['versions', st.uri], { repeat: runs, env: st.env });
    st.server.setDelay(0);
    const row = { store: st.name, case: kase, versions: N + (kase === 'checkpoint' ? 0 : 16), fragments: F,
      delay_ms: delay, wall_ms: t.median_ms, zero_latency_ms: zero.median_ms, limit_ms: 2 * delay + zero.median_ms,
      limit_ratio: t.median_ms / (2 * delay + zero.median_ms), tuned_ms: t.tuned?.median_ms, rung: stats.rung, requests: stats.requests,
      server_requests_per_call: seen, manifests_read: stats.manifests_read, bytes_read: stats.bytes_read };
    results.push(row);
    console.error(JSON.stringify(row));
  }
}
await s3.stop();
await az.stop();
fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify({ kind: 'cloud', machine: machine(), date: new Date().toISOString(),
  runs, delay_ms: delay, seconds: Math.round((Date.now() - started) / 1000), results }, null, 2));
console.log(`| store (${delay} ms/request) | case | versions x fragments | wall ms (median of ${runs}) | at 0 ms | limit: 2 x ${delay} + at 0 ms | vs limit | requests (lancever / server) | manifests read |`);
console.log('|---|---|---|---:|---:|---:|---:|---|---:|');
for (const r of results)
  console.log(`| ${r.store} | ${r.case} | ${r.versions} x ${F} | ${fms(r.wall_ms)} | ${fms(r.zero_latency_ms)} | ${fms(r.limit_ms)} | ${r.limit_ratio.toFixed(2)}x | ` +
    `${r.requests} / ${r.server_requests_per_call} | ${r.manifests_read} |`);
