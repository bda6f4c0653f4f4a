// A store that lies on the write path (issue 24, case 1), through the lancever CLI and its S3
// backend: hostile_s3.mjs on 127.0.0.1 (started and stopped here) serves a dataset whose
// versions 1..600 are recorded only in lancever's head checkpoint and archive segments, plus
// 100 live versions (601..700), and lies about writes under _checkpoints/:
//   drop       PUT answered 200, nothing stored
//   truncate   PUT answered 200, the first half stored
//   late       PUT stored, but GET/HEAD of that key answer 404 for the next 2 requests
//   never      PUT stored, but GET/HEAD of that key answer 404 from then on
//   unlisted   PUT stored, but ListObjectsV2 never shows keys written during the run
// Each mode runs with `cleanup --older-than 0s --retain-versions 3`, `expire` and
// `checkpoint`, each on a fresh copy. Every run must end with nothing deleted that history
// does not hold: after it, the honest server's `history` lists 1..700 without a gap
// warning; a run that fails exits 1, names a _checkpoints/ file and deleted no manifest. An
// honest control run first (it must delete 97 manifests: the test proves something).
// The dataset is synthetic (bench's gen_dataset writes Lance 8 manifests; lancever records
// 1..600): this test is about what lancever does with the store, so it runs once, no peer.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync, spawn } from 'node:child_process';
import { startHostile, AKID, SECRET } from './hostile_s3.mjs';

const bin = process.env.LANCEVER_BIN;
const buildDir = process.env.LANCEVER_BUILD_DIR;
let failures = 0, checks = 0;
const fail = (m) => { failures++; console.error(`FAIL: ${m}`); };
const check = (c, m) => { checks++; if (!c) fail(m); };
if (!bin || !buildDir || !fs.existsSync(bin)) { console.error('FAIL: LANCEVER_BIN / LANCEVER_BUILD_DIR not set'); process.exit(1); }
const gen = path.join(buildDir, 'gen_dataset');
if (!fs.existsSync(gen)) { console.error(`FAIL: ${gen} missing`); process.exit(1); }

const LIVE_FROM = 600, LAST = 700;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-writepath-'));
const local = path.join(root, 'ds');
// 1..600, a local cleanup records 1..599 in a head (600) and segments of 100 and removes them,
// then 601..700 are committed: the runs below write a new head (700), as in the issue's repro
let r = spawnSync(gen, [local, '--versions', '600', '--fragments', '1'], { encoding: 'utf8' });
if (r.status === 0)
  r = spawnSync(bin, ['cleanup', local, '--before-version', String(LIVE_FROM), '--older-than', '0s',
    '--segment-rows', '100', '--max-entries', '250'], { encoding: 'utf8' });
if (r.status === 0)
  r = spawnSync(gen, [local, '--start', '601', '--versions', '100', '--fragments', '1'], { encoding: 'utf8' });
if (r.status !== 0) { console.error(`FAIL: preparing the dataset: ${r.stderr}`); process.exit(1); }
const s3 = await startHostile();
const env = {
  PATH: process.env.PATH, AWS_ACCESS_KEY_ID: AKID, AWS_SECRET_ACCESS_KEY: SECRET,
  AWS_ENDPOINT_URL: s3.endpoint, AWS_ALLOW_HTTP: 'true', AWS_REGION: 'us-east-1',
  AWS_EC2_METADATA_DISABLED: 'true', LANCEVER_S3_MAX_ATTEMPTS: '2',
};
let n = 0;
function runLv(args) {
  return new Promise((resolve) => {
    const p = spawn(bin, args, { env });
    let out = '', errs = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { errs += d; });
    const t = setTimeout(() => p.kill('SIGKILL'), 120000);
    p.on('close', (status) => { clearTimeout(t); resolve({ status, stdout: out, stderr: errs }); });
  });
}
const isCp = (req, prefix) => req.key.startsWith(`${prefix}/_checkpoints/`);

// The lies: each returns a hook for one run on `prefix`.
const MODES = {
  honest: () => null,
  drop: (prefix) => (req, sock, h) => {
    if (req.method !== 'PUT' || !isCp(req, prefix)) return false;
    h.send(200, {}, '');
    return true;
  },
  truncate: (prefix) => (req, sock, h) => {
    if (req.method !== 'PUT' || !isCp(req, prefix)) return false;
    s3.put(req.key, req.body.subarray(0, req.body.length >> 1));
    h.send(200, {}, '');
    return true;
  },
  late: (prefix) => hideAfterPut(prefix, 2),
  never: (prefix) => hideAfterPut(prefix, Infinity),
  unlisted: (prefix) => {
    const fresh = new Set();
    return (req, sock, h) => {
      if (req.method === 'PUT' && isCp(req, prefix)) fresh.add(req.key);
      if (req.method !== 'GET' || req.key !== '' || req.q.get('list-type') !== '2') return false;
      const r = h.honest();
      let body = r.body;
      for (const k of fresh) body = body.replace(new RegExp(`<Contents><Key>${k.replace(/[.]/g, '\\.')}</Key>.*?</Contents>`), '');
      h.send(r.status, r.headers, body);
      return true;
    };
  },
};
function hideAfterPut(prefix, reads) {
  const hidden = new Map(); // key -> reads left
  return (req, sock, h) => {
    if (req.method === 'PUT' && isCp(req, prefix)) {
      const r = h.honest(); // stored (or refused: 412), then hidden only if stored
      if (r.status === 200) hidden.set(req.key, reads);
      h.send(r.status, r.headers, r.body);
      return true;
    }
    if ((req.method === 'GET' || req.method === 'HEAD') && (hidden.get(req.key) ?? 0) > 0) {
      hidden.set(req.key, hidden.get(req.key) - 1);
      h.send(404, { 'Content-Type': 'application/xml' }, req.method === 'HEAD' ? '' : '<Error><Code>NoSuchKey</Code></Error>');
      return true;
    }
    return false;
  };
}
const COMMANDS = {
  cleanup: (uri) => ['cleanup', uri, '--older-than', '0s', '--retain-versions', '3', '--segment-rows', '100', '--max-entries', '250'],
  expire: (uri) => ['expire', uri, '--older-than', '0s', '--retain-versions', '3', '--segment-rows', '100', '--max-entries', '250'],
  checkpoint: (uri) => ['checkpoint', uri, '--segment-rows', '100', '--max-entries', '250'],
};
const manifests = (prefix) => s3.keys().filter((k) => k.startsWith(`${prefix}/_versions/`) && k.endsWith('.manifest')).length;

const tally = {};
for (const [mode, make] of Object.entries(MODES)) {
  for (const [cmd, argv] of Object.entries(COMMANDS)) {
    const prefix = `w${n++}/ds`;
    s3.putDir(local, prefix);
    const uri = `s3://bucket/${prefix}`;
    const before = manifests(prefix);
    s3.hook = make(prefix);
    const res = await runLv(argv(uri));
    s3.hook = null;
    const after = manifests(prefix);
    const label = `${mode} x ${cmd}`;
    check(res.status === 0 || res.status === 1, `${label}: exit ${res.status} (${res.stderr.slice(0, 300)})`);
    if (res.status !== 0) {
      check(after === before, `${label}: failed but deleted ${before - after} manifests`);
      check(/_checkpoints\//.test(res.stderr), `${label}: the error names no checkpoint file: ${res.stderr.slice(0, 300)}`);
    }
    const h = await runLv(['history', uri, '--json']);
    let rows = [];
    try { rows = JSON.parse(h.stdout); } catch { fail(`${label}: history --json: ${h.stderr.slice(0, 300)}`); }
    const vs = rows.map((x) => x.version);
    check(vs.length === LAST && vs.every((v, i) => v === i + 1), `${label}: history has ${vs.length} rows, not 1..${LAST}`);
    check(!/no record|gap/i.test(h.stderr), `${label}: history warns: ${h.stderr.slice(0, 300)}`);
    check(!rows.some((x) => x.version < LIVE_FROM && !x.is_cleaned_up), `${label}: a removed version is not marked cleaned up`);
    check(after !== 3 || !rows.some((x) => x.version < LAST - 2 && !x.is_cleaned_up), `${label}: a version cleaned now is not marked cleaned up`);
    tally[label] = `exit ${res.status}, manifests ${before} -> ${after}, history ${vs.length} rows`;
    console.log(`${label}: ${tally[label]}${res.status ? ` | ${res.stderr.trim().split('\n').pop().slice(0, 160)}` : ''}`);
    if (mode === 'honest' && cmd !== 'checkpoint') check(after === 3, `${label}: the control deleted ${before - after}, not ${before - 3}`);
    if (mode === 'honest' || mode === 'late') check(res.status === 0, `${label}: exit ${res.status}: ${res.stderr.slice(0, 300)}`);
    if ((mode === 'drop' || mode === 'truncate' || mode === 'never') && cmd !== 'checkpoint')
      check(res.status === 1 && after === before, `${label}: the lie was not caught (exit ${res.status}, ${before - after} deleted)`);
  }
}
await s3.stop();
fs.rmSync(root, { recursive: true, force: true });
console.log(`test_s3_writepath: ${checks - failures} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
