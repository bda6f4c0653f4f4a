// Interop test for the S3 backend (issue 6) against s3rver 3.7.1 on 127.0.0.1 (s3server.mjs:
// signatures checked, 412 on create-if-absent of an existing key, request log, fault
// injection). LanceDB 0.31.0 (Lance 8.0.0) writes a dataset to s3://bucket/db/t.lance; then
//  (a) `lancever versions/history/tags --json` on the s3:// URI = LanceDB's listVersions()
//      = the same commands on a local copy (s3rver's storage files, suffix stripped);
//  (b) `checkpoint` on S3 writes _checkpoints/<20 digits>.lance; a second one is
//      already_present through a 412 on `PUT If-None-Match: *`; `versions --stats` answers
//      from the newest checkpoint with 0 manifests read, in a small constant number of
//      requests (≤ 10, equal to the count --stats reports); two concurrent checkpoints both
//      succeed;
//  (c) `asof` on S3 = local;
//  (d) `cleanup --older-than 0s --no-error-if-tagged-old-versions` on S3 deletes the same keys
//      as on a twin local copy; LanceDB still reads every retained version from S3; history
//      lists every version with the right is_cleaned_up;
//  (e) faults: 503/500/connection reset before a request → retried, success; persistent 503
//      → clean failure naming 503; refused connections → clean failure; bad credentials →
//      clean failure naming 403; the secret and session token never appear in the output.
// Never skips: a missing peer, s3rver or binary fails.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { check, checkEq, finish, lanceVersion, pick, scratch, lanceverBin, run, openDir, SUMMARY_KEYS } from './lib.mjs';
// Requests the CLI adds to read the tag names when a version is tagged (issue 29).
const TAG_NAMES = 4;
import { lancedb } from './peer.mjs';
import { mixedSeven, rows } from './datasets.mjs';
import { startS3, s3Env, s3StorageOptions, copyPrefix, listPrefix, SECRET_KEY } from './s3server.mjs';
import { walkFiles } from './files.mjs';

process.setMaxListeners(0);
process.env.AWS_EC2_METADATA_DISABLED = 'true';
const root = scratch('lv-s3-');
const s3 = await startS3({ strict: true });
console.log(`s3rver at ${s3.endpoint}, storage ${s3.dir}`);
const env = s3Env(s3);
const PREFIX = 'db/t.lance';
const URI = `s3://bucket/${PREFIX}`;
const byVersion = (a, b) => a.version - b.version;

// lancever, asynchronously (the S3 server runs in this process); killed after `timeout` ms.
function lvA(args, { env: e = env, timeout = 120000 } = {}) {
  return run(lanceverBin, args, { env: e, killAfterMs: timeout });
}
async function lvJ(label, args, opts) {
  const r = await lvA([...args, '--json'], opts);
  if (!check(r.status === 0, `${label}: lancever ${args.join(' ')} exited ${r.status}${r.signal ? ' ' + r.signal : ''}: ${r.stderr}`))
    return null;
  try { return JSON.parse(r.stdout); } catch (e) {
    check(false, `${label}: ${args[0]} --json is not JSON: ${e.message}: ${r.stdout.slice(0, 200)}`);
    return null;
  }
}
const statsLine = (stderr) => {
  const line = stderr.split('\n').find((l) => l.startsWith('lancever: answered from ')) || '';
  const m = /^lancever: answered from ([a-z ]+); manifests read (\d+).*?requests (\d+)/.exec(line);
  return m ? { rung: m[1], manifestsRead: Number(m[2]), requests: Number(m[3]), line } : { line };
};
const summarize = (reqs) => {
  const c = {};
  for (const q of reqs) {
    const k = `${q.method} ${q.status}${q.injected ? ' (injected)' : ''}${q.ifNoneMatch ? ' If-None-Match:' + q.ifNoneMatch : ''}`;
    c[k] = (c[k] || 0) + 1;
  }
  return c;
};
const fmtReq = (q) => `${q.method} ${q.path}${q.query ? '?' + q.query : ''} -> ${q.status}` +
  `${q.injected ? ' (injected)' : ''}${q.ifNoneMatch ? ' If-None-Match=' + q.ifNoneMatch : ''}${q.range ? ' Range=' + q.range : ''}`;
let copies = 0;
// A local copy of the dataset as s3rver stores it now (mtimes preserved).
function localCopy(tag) {
  const dest = path.join(root, `copy${copies++}-${tag}.lance`);
  const keys = copyPrefix(s3, PREFIX, dest);
  for (const k of keys) {
    const st = fs.statSync(s3.objectFile(`${PREFIX}/${k}`));
    fs.utimesSync(path.join(dest, k), st.atime, st.mtime);
  }
  return dest;
}
const localFiles = (dir) => {
  const out = [];
  walkFiles(dir, (r) => out.push(r));
  return out.sort();
};
async function rowsAt(t, v) {
  await t.checkout(v);
  return (await t.query().toArray()).map((r) => ({ id: Number(r.id), val: r.val, name: r.name }))
    .sort((a, b) => a.id - b.id);
}
// Compares `lancever CMD --json` on S3 and on a local directory.
async function sameOnS3AndLocal(label, cmd, dir, extra = []) {
  const a = await lvJ(`${label} (s3)`, [cmd, URI, ...extra]);
  const b = await lvJ(`${label} (local)`, [cmd, dir, ...extra]);
  if (a && b) checkEq(a, b, `${label}: ${cmd} ${extra.join(' ')} on S3 vs local copy`);
  return a;
}

// ---------------------------------------------------------------- build with LanceDB on S3
const opts = { storageOptions: s3StorageOptions(s3) };
const db = await lancedb.connect('s3://bucket/db', opts);
const t = await mixedSeven(db, 't');                             // v1..v7
await t.add(rows(100, 3), { mode: 'overwrite' });                 // v8
await t.add(rows(200, 2));                                        // v9
checkEq(await t.version(), 9, 'LanceDB on S3: latest version after the writes');
const build = s3.requests();
console.log('LanceDB writes:', JSON.stringify(summarize(build)));
check(build.some((q) => q.method === 'PUT' && q.ifNoneMatch === '*' && q.path.includes('/_versions/')),
  'LanceDB committed manifests with PUT If-None-Match: * (s3rver wrapper saw none)');
checkEq(build.filter((q) => q.status === 403).map((q) => `${fmtReq(q)} ${q.sigError || ''}`), [],
  'LanceDB requests rejected (the wrapper verifies SigV4)');
let sigLog = []; // every request of the run but the deliberate bad-credential ones
const origReset = s3.reset;
s3.reset = () => { sigLog.push(...s3.requests()); origReset(); };
const lanceList = async (tbl) => (await tbl.listVersions()).map(lanceVersion).sort(byVersion);
const lanceS3 = await lanceList(t);
const rowsBefore = {};
for (const v of lanceS3) rowsBefore[v.version] = await rowsAt(t, v.version);
await t.checkoutLatest();

// ---------------------------------------------------------------- (a) versions/history/tags
{
  const L = '(a)';
  const dir = localCopy('a');
  check(!fs.existsSync(path.join(dir, 'latest_version_hint.json')), `${L}: LanceDB wrote no hint file on S3`);
  const lt = await openDir(dir);
  checkEq(await lanceList(lt), lanceS3, `${L}: LanceDB opens the local copy and lists the same versions`);
  checkEq(await lt.countRows(), await t.countRows(), `${L}: LanceDB row count local copy vs S3`);
  const vs = await sameOnS3AndLocal(L, 'versions', dir);
  const hs = await sameOnS3AndLocal(L, 'history', dir);
  const tg = await sameOnS3AndLocal(L, 'tags', dir);
  if (vs) checkEq(vs.map((v) => pick(v, SUMMARY_KEYS)), lanceS3, `${L}: versions on S3 vs LanceDB listVersions()`);
  if (hs) checkEq(hs.map((v) => pick(v, SUMMARY_KEYS)), lanceS3, `${L}: history on S3 vs LanceDB listVersions()`);
  if (tg) checkEq(tg.tags.map((x) => [x.name, x.version]), [['keep6', 6]], `${L}: tags on S3`);
  if (vs) checkEq(vs.map((v) => v.is_tagged), vs.map((v) => v.version === 6), `${L}: is_tagged`);
  // --threads 1 and --threads 64 give the same answer
  for (const th of ['1', '64']) {
    const v2 = await lvJ(`${L} --threads ${th}`, ['versions', URI, '--threads', th]);
    if (vs && v2) checkEq(v2, vs, `${L}: versions --threads ${th} on S3`);
  }
  // The CLI flags work instead of the environment.
  const { AWS_ENDPOINT_URL, AWS_ALLOW_HTTP, AWS_REGION, ...bare } = env;
  for (const [where, args] of [
    ['after the command', ['versions', URI, '--s3-endpoint', s3.endpoint, '--s3-region', 'us-east-1', '--s3-allow-http']],
    ['around the dataset', ['versions', '--s3-endpoint', s3.endpoint, URI, '--s3-allow-http', '--json', '--s3-region', 'us-east-1']],
    ['before the command', ['--s3-endpoint', s3.endpoint, '--s3-region', 'us-east-1', '--s3-allow-http', 'versions', URI]]]) {
    const v3 = await lvJ(`${L} --s3-* flags ${where}`, args, { env: bare });
    if (vs && v3) checkEq(v3, vs, `${L}: versions with --s3-endpoint/--s3-region/--s3-allow-http ${where} instead of AWS_*`);
  }
  const noHttp = await lvA(['versions', URI, '--json'], { env: { ...env, AWS_ALLOW_HTTP: 'false' } });
  check(noHttp.status !== 0 && /http/i.test(noHttp.stderr), `${L}: an http:// endpoint without allow-http is refused: exit ${noHttp.status} ${noHttp.stderr}`);
}

// ---------------------------------------------------------------- (b) checkpoint
const cpKey = (v) => `_checkpoints/${String(v).padStart(20, '0')}.lance`;
{
  const L = '(b)';
  s3.reset();
  const c1 = await lvJ(`${L} first checkpoint`, ['checkpoint', URI]);
  const log1 = s3.requests();
  if (c1) checkEq([c1.written, c1.already_present, c1.path, c1.latest_version], [true, false, cpKey(9), 9], `${L}: first checkpoint`);
  checkEq(listPrefix(s3, PREFIX).filter((k) => k.startsWith('_checkpoints/')), [cpKey(9)], `${L}: checkpoint object in the bucket`);
  const puts1 = log1.filter((q) => q.method === 'PUT' && q.key === `bucket/${PREFIX}/${cpKey(9)}`);
  checkEq(puts1.map((q) => [q.ifNoneMatch, q.status]), [['*', 200]], `${L}: checkpoint written with one PUT If-None-Match: *`);
  s3.reset();
  const c2 = await lvJ(`${L} second checkpoint`, ['checkpoint', URI]);
  const log2 = s3.requests();
  if (c2) checkEq([c2.already_present, c2.path, c2.new_entries], [true, cpKey(9), 0], `${L}: second checkpoint is already_present`);
  const puts2 = log2.filter((q) => q.method === 'PUT');
  console.log(`${L} second checkpoint requests:\n  ${log2.map(fmtReq).join('\n  ')}`);
  check(puts2.every((q) => q.ifNoneMatch === '*' && q.status === 412),
    `${L}: the second checkpoint never overwrote the object (every PUT is create-if-absent and got 412): ${puts2.map(fmtReq)}`);
  check(puts2.length > 0 || log2.some((q) => q.method === 'HEAD' || q.method === 'GET'),
    `${L}: second checkpoint found the existing object`);

  // versions --stats from the checkpoint, no tail: answered with 0 manifests and few requests.
  s3.reset();
  const r = await lvA(['versions', URI, '--json', '--stats']);
  const log = s3.requests();
  check(r.status === 0, `${L}: versions --stats exited ${r.status}: ${r.stderr}`);
  const st = statsLine(r.stderr);
  checkEq([st.rung, st.manifestsRead], ['newest checkpoint', 0], `${L}: versions --stats report (${st.line})`);
  console.log(`${L} versions from a checkpoint with no tail: ${log.length} requests ` +
    `(lancever --stats says ${st.requests}):\n  ${log.map(fmtReq).join('\n  ')}`);
  // (+ TAG_NAMES: with a tagged version, the tag names of the TAGS column and JSON "tags" are
  // read with lv_refs_load: the _versions, _refs/tags and _refs/branches listings and the tag
  // file; --stats counts them too)
  check(log.length <= 10 + TAG_NAMES, `${L}: versions from a checkpoint with no tail made ${log.length} requests (> ${10 + TAG_NAMES})`);
  checkEq(st.requests, log.length, `${L}: --stats request count vs the server's log`);
  check(!log.some((q) => q.method === 'GET' && /_versions\/\d{20}\.manifest$/.test(q.path) && !q.range),
    `${L}: no whole manifest read when answering from the checkpoint`);
  const dir = localCopy('b');
  for (const cmd of ['versions', 'history']) {
    const a = await sameOnS3AndLocal(`${L} after checkpoint`, cmd, dir);
    if (a) checkEq(a.map((v) => pick(v, SUMMARY_KEYS)), lanceS3, `${L}: ${cmd} from the checkpoint vs LanceDB`);
  }

  // A tail of 2 versions: still few requests, manifests read 2.
  await t.add(rows(300, 1));                                       // v10
  await t.add(rows(301, 1));                                       // v11
  s3.reset();
  const rt = await lvA(['versions', URI, '--json', '--stats']);
  const logt = s3.requests();
  const stt = statsLine(rt.stderr);
  checkEq([rt.status, stt.rung, stt.manifestsRead], [0, 'newest checkpoint', 2], `${L}: versions with a tail of 2 (${stt.line} ${rt.stderr})`);
  console.log(`${L} versions from a checkpoint with a tail of 2: ${logt.length} requests`);
  check(logt.length <= 12 + TAG_NAMES, `${L}: versions with a tail of 2 made ${logt.length} requests (> ${12 + TAG_NAMES}):\n  ${logt.map(fmtReq).join('\n  ')}`);

  // Two concurrent checkpoints of v11: both succeed, one object, the loser gets a 412.
  s3.reset();
  s3.setDelay(15); // widen the race window
  const [p1, p2] = await Promise.all([lvA(['checkpoint', URI, '--json']), lvA(['checkpoint', URI, '--json'])]);
  s3.setDelay(0);
  const logc = s3.requests();
  for (const [i, p] of [p1, p2].entries()) check(p.status === 0, `${L}: concurrent checkpoint ${i + 1} exited ${p.status}: ${p.stderr}`);
  const js = [p1, p2].filter((p) => p.status === 0).map((p) => JSON.parse(p.stdout));
  checkEq(js.map((j) => j.path), js.map(() => cpKey(11)), `${L}: concurrent checkpoints' paths`);
  const putsc = logc.filter((q) => q.method === 'PUT' && q.key === `bucket/${PREFIX}/${cpKey(11)}`);
  console.log(`${L} concurrent checkpoints: PUTs ${putsc.map((q) => `${q.status} If-None-Match=${q.ifNoneMatch}`).join(', ')}; ` +
    `already_present: ${js.map((j) => j.already_present).join(', ')}`);
  check(putsc.every((q) => q.ifNoneMatch === '*'), `${L}: concurrent checkpoint PUT without If-None-Match: *`);
  checkEq(putsc.filter((q) => q.status === 200).length, 1, `${L}: exactly one concurrent checkpoint PUT succeeded`);
  check(listPrefix(s3, PREFIX).includes(cpKey(11)), `${L}: checkpoint ${cpKey(11)} in the bucket`);
  const after = await lvA(['versions', URI, '--json', '--stats']);
  checkEq(statsLine(after.stderr).manifestsRead, 0, `${L}: versions after the concurrent checkpoints reads 0 manifests`);
}

// ---------------------------------------------------------------- (c) asof
{
  const L = '(c)';
  const dir = localCopy('c');
  const hs = await lvJ(`${L} history`, ['history', URI]);
  if (hs) {
    const times = new Set([hs[0].timestamp_millis - 1000]);
    for (const v of hs) for (const d of [-1, 0, 1]) times.add(v.timestamp_millis + d);
    times.add(Date.now() + 3600e3);
    for (const T of times) for (const strict of [false, true]) {
      const extra = [String(T), ...(strict ? ['--strict'] : [])];
      const a = await lvA(['asof', URI, ...extra, '--json']);
      const b = await lvA(['asof', dir, ...extra, '--json']);
      checkEq([a.status, a.stdout], [b.status, b.stdout], `${L}: asof ${extra.join(' ')} on S3 vs local (stderr s3: ${a.stderr.trim()})`);
    }
    const iso = new Date(hs[3].timestamp_millis).toISOString();
    const a = await lvJ(`${L} asof ISO`, ['asof', URI, iso]);
    if (a) checkEq(a.version && a.version.version, hs[3].version, `${L}: asof ${iso}`);
  }
}

// ---------------------------------------------------------------- (e) faults (before cleanup: dataset intact)
{
  const L = '(e)';
  const want = await lvJ(`${L} reference`, ['versions', URI]);
  for (const [n, status] of [[2, 503], [2, 500], [1, 429], [1, 'reset']]) {
    s3.reset();
    s3.failNext(n, status);
    const r = await lvA(['versions', URI, '--json']);
    const log = s3.requests();
    if (check(r.status === 0, `${L}: versions after failNext(${n}, ${status}) exited ${r.status}: ${r.stderr}\n  ${log.slice(0, 6).map(fmtReq).join('\n  ')}`))
      checkEq(JSON.parse(r.stdout), want, `${L}: versions after failNext(${n}, ${status})`);
    checkEq(log.filter((q) => q.injected).length, n, `${L}: injected faults consumed`);
    console.log(`${L} failNext(${n}, ${status}): ${r.ms} ms, ${log.length} requests`);
  }
  // Persistent 503: gives up, cleanly, naming the status.
  s3.reset();
  s3.failNext(1000, 503);
  const p = await lvA(['versions', URI, '--json']);
  const nreq = s3.requests().length;
  s3.reset();
  check(p.status !== 0 && !p.signal && p.status < 128, `${L}: persistent 503: exit ${p.status} ${p.signal}`);
  check(/503|SlowDown/.test(p.stderr), `${L}: persistent 503: message names the status: ${p.stderr}`);
  console.log(`${L} persistent 503: gave up after ${nreq} requests, ${p.ms} ms: ${p.stderr.trim()}`);
  check(nreq <= 50, `${L}: persistent 503: ${nreq} requests (unbounded retries?)`);

  const SECRET = 'sEcReT-DoNotPrint-7f3a9c';
  const TOKEN = 'ToKeN-DoNotPrint-41be02';
  // Refused connections: a port that was free a moment ago.
  const port = await new Promise((res) => { const srv = net.createServer().listen(0, '127.0.0.1', () => { const p = srv.address().port; srv.close(() => res(p)); }); });
  const rr = await lvA(['versions', URI, '--json'], { env: { ...env, AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`, AWS_SECRET_ACCESS_KEY: SECRET, AWS_SESSION_TOKEN: TOKEN } });
  check(rr.status !== 0 && !rr.signal && rr.status < 128, `${L}: refused connection: exit ${rr.status} ${rr.signal}`);
  check(rr.stderr.trim().length > 0 && rr.stdout === '', `${L}: refused connection: a message on stderr only: ${rr.stderr}`);
  check(!rr.stderr.includes(SECRET) && !rr.stdout.includes(SECRET), `${L}: refused connection: secret in the output`);
  check(!rr.stderr.includes(TOKEN) && !rr.stdout.includes(TOKEN), `${L}: refused connection: session token in the output`);
  console.log(`${L} refused connection: ${rr.ms} ms: ${rr.stderr.trim()}`);
  check(rr.ms < 60000, `${L}: refused connection took ${rr.ms} ms`);
  // Bad credentials: s3rver answers 403 (SignatureDoesNotMatch / InvalidAccessKeyId).
  for (const [what, e2] of [['wrong secret', { AWS_SECRET_ACCESS_KEY: SECRET, AWS_SESSION_TOKEN: TOKEN }],
    ['unknown access key', { AWS_ACCESS_KEY_ID: 'AKIAEXAMPLENOTTHERE', AWS_SECRET_ACCESS_KEY: SECRET }]]) {
    s3.reset();
    const rb = await lvA(['versions', URI, '--json'], { env: { ...env, ...e2 } });
    const log = s3.requests();
    s3.reset(); sigLog = sigLog.map((q) => (log.some((x) => x.path === q.path && x.query === q.query && x.sigError) && q.sigError ? { ...q, expectBadSig: true } : q));
    check(rb.status !== 0 && !rb.signal && rb.status < 128, `${L}: ${what}: exit ${rb.status} ${rb.signal}`);
    check(/403/.test(rb.stderr), `${L}: ${what}: message names HTTP 403: ${rb.stderr}`);
    check(!(rb.stderr + rb.stdout).includes(SECRET), `${L}: ${what}: secret in the output: ${rb.stderr}`);
    check(!(rb.stderr + rb.stdout).includes(TOKEN), `${L}: ${what}: session token in the output`);
    check(log.length >= 1 && log.every((q) => q.status === 403), `${L}: ${what}: server saw ${log.map(fmtReq)}`);
    // The first round (listings of _versions/, _checkpoints/, _refs/tags, _refs/branches) is sent
    // at once, so up to four requests see the 403; none may be repeated.
    const keys = log.map((q) => `${q.method} ${q.path}?${q.query}`);
    check(log.length <= 4 && new Set(keys).size === keys.length,
      `${L}: ${what}: a 403 is not retried (${log.length} requests: ${keys.join(', ')})`);
    console.log(`${L} ${what}: ${rb.stderr.trim()}`);
  }
  // Missing bucket → clean error.
  const nb = await lvA(['versions', 's3://no-such-bucket/x', '--json']);
  check(nb.status !== 0 && !nb.signal && nb.stderr.trim(), `${L}: missing bucket: exit ${nb.status}: ${nb.stderr}`);
  console.log(`${L} missing bucket: ${nb.stderr.trim()}`);
}

// ---------------------------------------------------------------- (d) cleanup
{
  const L = '(d)';
  const twin = localCopy('twin');
  const hBefore = await lvJ(`${L} history before`, ['history', URI]);
  const lanceAll = await lanceList(t);
  for (const v of lanceAll) if (!rowsBefore[v.version]) rowsBefore[v.version] = await rowsAt(t, v.version);
  await t.checkoutLatest();
  const keysBefore = listPrefix(s3, '');
  const twinBefore = localFiles(twin);
  checkEq(twinBefore, listPrefix(s3, PREFIX), `${L}: twin copy has every object`);
  const args = ['--older-than', '0s', '--no-error-if-tagged-old-versions', '--list'];
  s3.reset();
  const cs = await lvJ(`${L} cleanup on S3`, ['cleanup', URI, ...args]);
  const clog = s3.requests();
  const ct = await lvJ(`${L} cleanup on the twin`, ['cleanup', twin, ...args]);
  console.log(`${L} cleanup on S3: ${JSON.stringify(summarize(clog))}`);
  const keysAfter = listPrefix(s3, '');
  const deletedS3 = keysBefore.filter((k) => !keysAfter.includes(k));
  const twinAfter = localFiles(twin);
  const deletedTwin = twinBefore.filter((k) => !twinAfter.includes(k)).map((k) => `${PREFIX}/${k}`);
  check(deletedS3.length > 0, `${L}: cleanup on S3 deleted nothing`);
  checkEq(deletedS3, deletedTwin, `${L}: keys deleted on S3 vs files deleted on the twin`);
  checkEq(keysAfter.filter((k) => !keysBefore.includes(k)), [], `${L}: cleanup on S3 created objects`);
  if (cs && ct) {
    const strip = (j) => JSON.parse(JSON.stringify(j, (k, v) => (/(_ms|_millis|millis|seconds|elapsed|time)$/.test(k) && k !== 'timestamp_millis' ? undefined : v)));
    // files come in deletion order, which follows each store's listing order: compare as sets
    const byPath = (j) => ({ ...j, files: [...(j.files || [])].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) });
    checkEq(byPath(strip(cs)), byPath(strip(ct)), `${L}: cleanup --json on S3 vs twin`);
  }
  checkEq(clog.filter((q) => q.status >= 300 && q.status !== 404 && !(q.status === 412 && q.ifNoneMatch === '*')).map(fmtReq), [],
    `${L}: failed requests during cleanup`);
  const hAfter = await lvJ(`${L} history after`, ['history', URI]);
  const hTwin = await lvJ(`${L} history after (twin)`, ['history', twin]);
  if (hAfter && hTwin) checkEq(hAfter, hTwin, `${L}: history after cleanup on S3 vs twin`);
  // Which versions went: everything but the latest and the tagged v6.
  const latest = Math.max(...lanceAll.map((v) => v.version));
  const retained = lanceAll.map((v) => v.version).filter((v) => v === latest || v === 6);
  if (hAfter && hBefore) {
    checkEq(hAfter.map((v) => v.version), hBefore.map((v) => v.version), `${L}: history still lists every version`);
    checkEq(hAfter.map((v) => [v.version, v.is_cleaned_up]), hBefore.map((v) => [v.version, !retained.includes(v.version)]),
      `${L}: history is_cleaned_up after cleanup`);
    checkEq(hAfter.map((v) => pick(v, SUMMARY_KEYS)), hBefore.map((v) => pick(v, SUMMARY_KEYS)), `${L}: history counters unchanged`);
  }
  const vAfter = await lvJ(`${L} versions after`, ['versions', URI]);
  if (vAfter) checkEq(vAfter.map((v) => v.version), retained, `${L}: versions after cleanup`);
  // LanceDB reads every retained version from S3 (fresh connection).
  const db2 = await lancedb.connect('s3://bucket/db', opts);
  const t2 = await db2.openTable('t');
  checkEq((await lanceList(t2)).map((v) => v.version), retained, `${L}: LanceDB listVersions() on S3 after cleanup`);
  for (const v of retained) {
    try { checkEq(await rowsAt(t2, v), rowsBefore[v], `${L}: LanceDB rows of retained v${v} on S3`); } catch (e) {
      check(false, `${L}: LanceDB cannot read retained v${v} from S3: ${e.message.slice(0, 300)}`);
    }
  }
  await t2.checkoutLatest();
  await t2.add(rows(400, 1));
  checkEq(await t2.countRows(), rowsBefore[latest].length + 1, `${L}: LanceDB appends after cleanup`);
  const vv = await lvJ(`${L} versions after append`, ['versions', URI]);
  if (vv) checkEq(vv.map((v) => v.version), [...retained, latest + 1], `${L}: versions after cleanup + append`);
}

sigLog.push(...s3.requests());
const badSig = sigLog.filter((q) => q.sigError && !q.expectBadSig);
checkEq(badSig.map((q) => `${fmtReq(q)}: ${q.sigError}`), [], 'requests whose SigV4 signature did not verify');
console.log(`SigV4 verified on ${sigLog.filter((q) => !q.sigError && !q.path.startsWith('/__ctl')).length} requests in all`);
await s3.stop();
finish('test_s3');
