// Benchmark: versions() on S3 (s3rver on 127.0.0.1 with an injected per-request delay standing in
// for network latency), with and without a checkpoint, tails of 0/8/16, vs LanceDB listVersions()
// on the same bucket in the same run.
//   node bench/bench_s3.mjs [--delay MS] [--runs N] [--versions 32,128] [--fragments 1000]
// Datasets come from bench/gen_dataset (locally) and are uploaded with bench/s3_upload.
// lancever is timed as a whole process (spawned asynchronously: the server runs in this
// process); requests are counted by the server.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lancedb } from '../tests/interop/peer.mjs';
import { startS3, s3Env, s3StorageOptions } from '../tests/interop/s3server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const src = path.resolve(here, '..');
const bin = process.env.LANCEVER_BIN || path.join(src, 'build-bench/lancever');
const buildDir = process.env.LANCEVER_BUILD_DIR || path.dirname(bin);
const arg = (n, d) => { const i = process.argv.indexOf(n); return i > 0 ? process.argv[i + 1] : d; };
const delay = Number(arg('--delay', '20'));
const runs = Math.max(3, Number(arg('--runs', '5')));
const versionsList = arg('--versions', '32,128').split(',').map(Number);
const frags = Number(arg('--fragments', '1000'));
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };

const s3 = await startS3({ delay: 0 });
const env = s3Env(s3);
function run(argv) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const p = spawn(bin, argv, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code) => code === 0 ? resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, err })
      : reject(new Error(`lancever ${argv.join(' ')}: ${err}`)));
  });
}
async function timeLv(uri) {
  const t = [];
  let reqs = 0;
  for (let i = 0; i < runs; i++) { s3.reset(); s3.setDelay(delay); t.push((await run(['versions', uri])).ms); reqs = s3.requests().length; }
  s3.setDelay(0);
  return { ms: median(t), reqs };
}
async function timeLance(prefix) {
  const t = [];
  let reqs = 0;
  for (let i = 0; i < runs; i++) {
    s3.reset(); s3.setDelay(delay);
    const t0 = process.hrtime.bigint();
    const db = await lancedb.connect(`s3://bucket/${prefix}`, { storageOptions: s3StorageOptions(s3) });
    const tb = await db.openTable('t');
    await tb.listVersions();
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
    reqs = s3.requests().length;
    tb.close?.(); db.close?.();
  }
  s3.setDelay(0);
  return { ms: median(t), reqs };
}
function sh(cmd, argv) {
  const r = spawnSync(cmd, argv, { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const shAsync = (cmd, argv) => new Promise((res, rej) => {
  const p = spawn(cmd, argv, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let e = ''; p.stderr.on('data', (d) => { e += d; });
  p.on('close', (c) => c === 0 ? res() : rej(new Error(`${cmd}: ${e}`)));
});

const rows = [];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-bench-s3-'));
for (const n of versionsList) {
  const local = path.join(work, `d${n}/t.lance`);
  sh(path.join(buildDir, 'gen_dataset'), [local, '--versions', String(n), '--fragments', String(frags)]);
  const prefix = `b${n}`;
  const uri = `s3://bucket/${prefix}/t.lance`;
  await shAsync(path.join(buildDir, 's3_upload'), [local, uri]);
  const lance = await timeLance(prefix);
  const none = await timeLv(uri);
  await run(['checkpoint', uri]);
  const cp = await timeLv(uri);
  // tails: 8 and 16 versions past the checkpoint
  const tail = path.join(work, `tail${n}`);
  const out = {};
  for (const [k, count] of [[8, 8], [16, 8]]) {
    fs.rmSync(tail, { recursive: true, force: true });
    sh(path.join(buildDir, 'gen_dataset'), [tail, '--start', String(n + k - count + 1), '--versions', String(count), '--fragments', String(frags)]);
    await shAsync(path.join(buildDir, 's3_upload'), [tail, uri]);
    out[k] = await timeLv(uri);
  }
  rows.push({ n, lance, none, cp, t8: out[8], t16: out[16] });
  console.error(`${n} versions: LanceDB ${lance.ms.toFixed(0)} ms (${lance.reqs} req), none ${none.ms.toFixed(0)} (${none.reqs}), cp ${cp.ms.toFixed(0)} (${cp.reqs}), +8 ${out[8].ms.toFixed(0)} (${out[8].reqs}), +16 ${out[16].ms.toFixed(0)} (${out[16].reqs})`);
}
console.log(`\nversions() on S3 (s3rver, ${delay} ms added to every request, ${frags} fragments per manifest), median of ${runs}\n`);
console.log('| versions | LanceDB ms (requests) | no checkpoint ms (req) | checkpoint ms (req) | +8 tail ms (req) | +16 tail ms (req) | speedup vs LanceDB (checkpoint / +16) |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const f = (x) => `${x.ms.toFixed(0)} (${x.reqs})`;
  console.log(`| ${r.n} | ${f(r.lance)} | ${f(r.none)} | ${f(r.cp)} | ${f(r.t8)} | ${f(r.t16)} | ${(r.lance.ms / r.cp.ms).toFixed(1)}x / ${(r.lance.ms / r.t16.ms).toFixed(1)}x |`);
}
fs.rmSync(work, { recursive: true, force: true });
await s3.stop();
process.exit(0);
