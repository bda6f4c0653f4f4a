// A local S3-compatible server for the S3 tests and benchmarks: s3rver 3.7.1 (npm) on
// 127.0.0.1, behind a small HTTP wrapper (docs/lance-reference.md, "The LanceDB peers") that
//   * answers 412 PreconditionFailed to `PUT` with `If-None-Match: *` on a key that exists or
//     has a PUT in flight (s3rver ignores the header, so create-if-absent would silently
//     overwrite) — `strict` mode, the default;
//   * logs every request (method, path, query, status, some headers, time) for request-count
//     assertions;
//   * makes PUT atomic for readers (s3rver writes objects in place): per-key readers/writer lock;
//   * verifies AWS Signature V4 (s3rver 3.7.1 only checks that the access key exists);
//   * injects faults: `failNext(n, status)` answers the next n requests with `status`
//     (503 SlowDown, 500 InternalError, 429, 403, … or 'reset' to drop the connection),
//     `setDelay(ms)` delays every request.
//
// Library use (the server runs in this process: run lancever with an asynchronous spawn, not
// spawnSync, or the server cannot answer):
//   import { startS3, s3Env } from './s3server.mjs';
//   const s3 = await startS3();             // {strict: true}
//   s3.endpoint      'http://127.0.0.1:PORT'  (port chosen by the OS)
//   s3.dir           s3rver's storage directory: object `bucket/<key>` is the file
//                    `<dir>/bucket/<key>._S3rver_object` (s3.objectFile(key))
//   s3.requests()    copy of the log: [{method, path, key, query, status, ms, injected,
//                    ifNoneMatch, range, sigError?}]  (path: decoded URL path, key: path without '/')
//   s3.reset()       clears the log, pending faults and the delay
//   s3.failNext(n, status), s3.setDelay(ms)
//   s3.addCredential(akid, secret, {token, expiresAtMs})  temporary credentials (as STS, IMDS or a
//                    container endpoint would issue them): requests signed with them verify, must carry
//                    the token, and are answered 400 ExpiredToken after expiresAtMs (log: akid, expired)
//   s3.stop()        closes the servers and removes the directory (also done on process exit)
//   s3Env(s3)        AWS_* environment for lancever (and LanceDB) against this server
//   s3StorageOptions(s3)  LanceDB storageOptions (§6)
//
// CLI (manual use, benchmarks):
//   node s3server.mjs [--lax] [--port N] [--dir D] [--delay MS] [--no-signature-check]
// prints the endpoint and the environment to use, then stays up until SIGINT/SIGTERM. The log
// and the fault controls are reachable over HTTP on the same port:
//   GET  /__ctl/requests      log as JSON        POST /__ctl/reset
//   POST /__ctl/fail?n=2&status=503             POST /__ctl/delay?ms=20
// Only 127.0.0.1 is ever bound.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { walkFiles } from './files.mjs';
import { serverLifetime } from './servers.mjs';

const require = createRequire(import.meta.url);
let S3rver;
try {
  S3rver = require('s3rver');
  const v = JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve('s3rver')),
    '..', 'package.json'), 'utf8')).version;
  if (v !== '3.7.1') throw new Error(`expected s3rver 3.7.1, found ${v}`);
} catch (e) {
  console.error('FAIL: s3rver not installed (run tests/interop/setup.sh): ' + e.message);
  process.exit(1);
}

// s3rver 3.7.1 quirk: DeleteObjects (`POST ?delete`) deletes its keys concurrently, and each
// deletion then removes its parent directories while they look empty (readdir, then rmdir). Two
// keys of one directory (an index's two files) race: the loser's rmdir fails with ENOENT and the
// whole request answers 500 InternalError after the objects are gone. Clients retry and succeed,
// but the extra request makes request counts vary from run to run (test_crash.mjs kills lancever
// at its N-th request). S3 has no directories: here a directory that is already gone or no longer
// empty simply ends the tidy-up.
{
  const FilesystemStore = require('s3rver/lib/stores/filesystem.js');
  FilesystemStore.prototype.deleteObject = async function deleteObject(bucket, key) {
    for (const what of ['object', 'object.md5', 'metadata.json']) {
      await fs.promises.unlink(this.getResourcePath(bucket, key, what)).catch((e) => {
        if (e.code !== 'ENOENT') throw e;
      });
    }
    const dirs = key.split('/').slice(0, -1);
    for (; dirs.length; dirs.pop()) {
      try {
        await fs.promises.rmdir(path.join(this.getBucketPath(bucket), ...dirs));
      } catch (e) {
        if (e.code === 'ENOENT') continue;
        if (e.code === 'ENOTEMPTY' || e.code === 'EEXIST') break;
        throw e;
      }
    }
  };
}

// s3rver 3.7.1 quirk: PUT streams the body straight into the object's file, so a client that
// dies mid-upload leaves a truncated object (S3 stores nothing unless the whole body arrived;
// test_crash.mjs kills lancever mid-PUT). Here the body goes to a side file that is renamed
// over the object only once the request has ended complete.
{
  const FilesystemStore = require('s3rver/lib/stores/filesystem.js');
  const crypto = require('node:crypto');
  FilesystemStore.prototype.putObject = async function putObject(object) {
    const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
    await fs.promises.mkdir(path.dirname(objectPath), { recursive: true });
    const side = `${objectPath}.partial-${crypto.randomBytes(8).toString('hex')}`;
    let size, md5;
    try {
      if (Buffer.isBuffer(object.content)) {
        await fs.promises.writeFile(side, object.content);
        size = object.content.length;
        md5 = crypto.createHash('md5').update(object.content).digest('hex');
      } else {
        [size, md5] = await new Promise((resolve, reject) => {
          const src = object.content, hash = crypto.createHash('md5'), out = fs.createWriteStream(side);
          let n = 0, ended = false, failed = false;
          const fail = (e) => { if (!failed) { failed = true; out.destroy(); reject(e); } };
          src.on('data', (c) => {
            hash.update(c);
            n += c.length;
            if (!out.write(c)) { src.pause(); out.once('drain', () => src.resume()); }
          });
          src.on('end', () => { ended = true; out.end(); });
          src.on('error', fail);
          src.on('aborted', () => fail(new Error('upload aborted')));
          src.on('close', () => { if (!ended) fail(new Error('upload aborted')); });
          out.on('error', fail);
          out.on('finish', () => { if (ended && !failed) resolve([n, hash.digest('hex')]); });
        });
      }
      await fs.promises.rename(side, objectPath);
    } catch (e) {
      await fs.promises.rm(side, { force: true });
      throw e;
    }
    await this.putMetadata(object.bucket, object.key, object.metadata, md5);
    return { size, md5 };
  };
}

export const BUCKET = 'bucket';
export const ACCESS_KEY = 'S3RVER';
export const SECRET_KEY = 'S3RVER';
export const REGION = 'us-east-1';
const OBJECT_SUFFIX = '._S3rver_object'; // lib/stores/filesystem.js: '%s._S3rver_%s'

const ERRORS = {
  400: ['BadRequest', 'Injected bad request.'],
  403: ['AccessDenied', 'Injected access denied.'],
  404: ['NoSuchKey', 'Injected not found.'],
  429: ['SlowDown', 'Please reduce your request rate.'],
  500: ['InternalError', 'We encountered an internal error. Please try again.'],
  502: ['BadGateway', 'Injected bad gateway.'],
  503: ['SlowDown', 'Please reduce your request rate.'],
  504: ['GatewayTimeout', 'Injected gateway timeout.'],
};
// s3rver 3.7.1 checks only that a SigV4 request's access key exists ("Signature version 4
// calculation is unimplemeneted", lib/middleware/authentication.js), so the wrapper verifies
// AWS Signature V4 (Authorization header form) itself. Returns null if valid, else a reason.
// The payload hash is taken from x-amz-content-sha256 as sent (the body is not hashed).
const awsEncode = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
const hmac = (k, d) => crypto.createHmac('sha256', k).update(d).digest();
const sha256hex = (d) => crypto.createHash('sha256').update(d).digest('hex');
const safeDecode = (s) => { try { return decodeURIComponent(s); } catch { return s; } };
export function verifySigV4(req, secrets) {
  const auth = req.headers.authorization;
  if (!auth) return 'no Authorization header';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return `malformed Authorization header`;
  const [, akid, date, region, signedHeaders, signature] = m;
  const secret = secrets[akid];
  if (secret === undefined) return null; // unknown key: s3rver answers InvalidAccessKeyId
  const amzDate = req.headers['x-amz-date'];
  if (!amzDate || !amzDate.startsWith(date)) return 'x-amz-date missing or not matching the credential date';
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return 'host is not a signed header';
  const payload = req.headers['x-amz-content-sha256'];
  if (!payload) return 'no x-amz-content-sha256';
  const [rawPath, rawQuery = ''] = req.url.split(/\?(.*)/s);
  const query = rawQuery.split('&').filter((x) => x !== '').map((kv) => {
    const i = kv.indexOf('=');
    const k = i < 0 ? kv : kv.slice(0, i), v = i < 0 ? '' : kv.slice(i + 1);
    return [awsEncode(safeDecode(k)), awsEncode(safeDecode(v))];
  }).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`).join('&');
  const headers = names.map((n) => {
    const v = req.headers[n];
    if (v === undefined) return null;
    return `${n}:${String(v).trim().replace(/\s+/g, ' ')}\n`;
  });
  if (headers.includes(null)) return 'a signed header is missing';
  const kSigning = hmac(hmac(hmac(hmac('AWS4' + secret, date), region), 's3'), 'aws4_request');
  const canonicalPath = rawPath.split('/').map((seg) => awsEncode(safeDecode(seg))).join('/');
  for (const cpath of new Set([canonicalPath, rawPath])) {
    const canonical = [req.method, cpath, query, headers.join(''), signedHeaders, payload].join('\n');
    const sts = ['AWS4-HMAC-SHA256', amzDate, `${date}/${region}/s3/aws4_request`, sha256hex(canonical)].join('\n');
    if (crypto.timingSafeEqual(hmac(kSigning, sts), Buffer.from(signature, 'hex'))) return null;
  }
  return 'signature mismatch';
}

function sendError(res, status, code, message) {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/xml');
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code>` +
    `<Message>${message}</Message><RequestId>0</RequestId></Error>`);
}

export async function startS3({ strict = true, port = 0, dir = null, delay = 0, silent = true, checkSignatures = true } = {}) {
  const ownDir = !dir;
  dir = dir || fs.mkdtempSync(path.join(os.tmpdir(), 'lv-s3rver-'));
  const s3rver = new S3rver({
    address: '127.0.0.1', port: 0, directory: dir, silent,
    configureBuckets: [{ name: BUCKET }], vhostBuckets: false,
    allowMismatchedSignatures: false, resetOnClose: false,
  });
  await s3rver.configureBuckets();
  const mw = s3rver.getMiddleware();

  let log = [];
  const temp = new Map(); // akid -> {secret, token, expiresAtMs}: temporary credentials
  let faults = []; // pending injected statuses, one per request
  let delayMs = delay;
  const inflight = new Map(); // key -> number of PUTs in flight

  const objectFile = (key) => {
    const parts = key.split('/');
    const last = parts.pop();
    return path.join(dir, BUCKET, ...parts, last + OBJECT_SUFFIX);
  };
  const exists = (bucketKey) => {
    if (inflight.get(bucketKey)) return true;
    const [bucket, ...rest] = bucketKey.split('/');
    if (!rest.length) return false;
    const parts = rest; const last = parts.pop();
    return fs.existsSync(path.join(dir, bucket, ...parts, last + OBJECT_SUFFIX));
  };

  const locks = new Map(); // key -> {readers, writer, queue: [{mode, cb}]}
  function lockAcquire(key, mode, cb) {
    let l = locks.get(key);
    if (!l) { l = { readers: 0, writer: false, queue: [] }; locks.set(key, l); }
    l.queue.push({ mode, cb });
    pump(key, l);
  }
  function pump(key, l) {
    while (l.queue.length) {
      const { mode, cb } = l.queue[0];
      if (l.writer || (mode === 'w' && l.readers)) break; // FIFO: a waiting writer blocks later readers
      l.queue.shift();
      if (mode === 'w') l.writer = true; else l.readers++;
      cb(() => {
        if (mode === 'w') l.writer = false; else l.readers--;
        if (!l.writer && !l.readers && !l.queue.length) locks.delete(key); else pump(key, l);
      });
    }
  }

  function control(req, res, url) {
    const q = url.searchParams;
    const json = (o) => { res.setHeader('Content-Type', 'application/json'); res.end(JSON.stringify(o)); };
    req.resume();
    switch (url.pathname) {
      case '/__ctl/requests': return json(log);
      case '/__ctl/reset': api.reset(); return json({ ok: true });
      case '/__ctl/fail': api.failNext(Number(q.get('n') || 1), q.get('status') === 'reset' ? 'reset' : Number(q.get('status') || 503)); return json({ ok: true });
      case '/__ctl/delay': api.setDelay(Number(q.get('ms') || 0)); return json({ ok: true });
      default: res.statusCode = 404; return res.end();
    }
  }

  function handle(req, res) {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname.startsWith('/__ctl/')) return control(req, res, url);
    let p;
    try { p = decodeURIComponent(url.pathname); } catch { p = url.pathname; }
    const key = p.replace(/^\//, '');
    const entry = {
      method: req.method, path: p, key, query: url.search.replace(/^\?/, ''), status: null,
      ms: null, injected: false,
      ifNoneMatch: req.headers['if-none-match'] ?? null, range: req.headers.range ?? null,
    };
    const t0 = process.hrtime.bigint();
    log.push(entry);
    let done = false;
    const finish = () => {
      if (done) return; done = true;
      if (entry.status === null) entry.status = res.headersSent ? res.statusCode : 0;
      entry.ms = Number(process.hrtime.bigint() - t0) / 1e6;
    };
    res.on('finish', finish);
    res.on('close', finish);

    const go = () => {
      if (faults.length) {
        const st = faults.shift();
        entry.injected = true;
        if (st === 'reset') { entry.status = 0; req.socket.destroy(); return; }
        req.resume();
        const [code, msg] = ERRORS[st] || ['InjectedError', 'Injected error.'];
        return sendError(res, st, code, msg);
      }
      const akid = /Credential=([^/]+)\//.exec(req.headers.authorization || '')?.[1] ?? null;
      entry.akid = akid;
      const tc = akid ? temp.get(akid) : null;
      if (tc) {
        if (req.headers['x-amz-security-token'] !== tc.token) {
          entry.sigError = 'missing or wrong x-amz-security-token';
          req.resume();
          return sendError(res, 403, 'InvalidToken', 'The provided token is malformed or otherwise invalid.');
        }
        if (tc.expiresAtMs && Date.now() >= tc.expiresAtMs) {
          entry.expired = true;
          req.resume();
          return sendError(res, 400, 'ExpiredToken', 'The provided token has expired.');
        }
      }
      if (checkSignatures) {
        const secrets = { [ACCESS_KEY]: SECRET_KEY };
        if (tc) secrets[akid] = tc.secret;
        const why = verifySigV4(req, secrets);
        if (why) {
          entry.sigError = why;
          req.resume();
          return sendError(res, 403, 'SignatureDoesNotMatch',
            'The request signature we calculated does not match the signature you provided. (' + why + ')');
        }
      }
      // s3rver knows only its own key (and checks no more than that it exists): a verified
      // temporary key is handed on as that one.
      if (tc) req.headers.authorization = req.headers.authorization.replace(`Credential=${akid}/`, `Credential=${ACCESS_KEY}/`);
      // Check and mark in-flight in the same tick, so two racing creates cannot both pass.
      if (req.method === 'PUT' && !url.searchParams.has('uploadId')) {
        if (strict && req.headers['if-none-match'] === '*' && exists(key)) {
          req.resume();
          return sendError(res, 412, 'PreconditionFailed',
            'At least one of the pre-conditions you specified did not hold');
        }
        inflight.set(key, (inflight.get(key) || 0) + 1);
        let released = false;
        const release = () => {
          if (released) return; released = true;
          const n = inflight.get(key) - 1;
          if (n) inflight.set(key, n); else inflight.delete(key);
        };
        res.on('finish', release);
        res.on('close', release);
      }
      // s3rver writes an object in place (createWriteStream on the final path), so a GET racing
      // a PUT of the same key can see a torn object or fail with 500 InternalError; S3's PUT is
      // atomic. A per-key readers/writer lock restores that: GET/HEAD share, PUT/DELETE exclude.
      const isObject = key.includes('/') && !url.searchParams.has('uploads') && !url.searchParams.has('uploadId');
      const mode = !isObject ? null : (req.method === 'GET' || req.method === 'HEAD') ? 'r'
        : (req.method === 'PUT' || req.method === 'DELETE') ? 'w' : null;
      if (!mode) return mw(req, res);
      lockAcquire(key, mode, (unlock) => {
        let freed = false;
        const free = () => { if (!freed) { freed = true; unlock(); } };
        res.on('finish', free);
        res.on('close', free);
        mw(req, res);
      });
    };
    if (delayMs > 0) setTimeout(go, delayMs); else go();
  }

  const server = http.createServer(handle);
  server.keepAliveTimeout = 30000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const endpoint = `http://127.0.0.1:${server.address().port}`;
  const stop = serverLifetime(server, () => {
    if (ownDir && !process.env.LV_KEEP) fs.rmSync(dir, { recursive: true, force: true });
  });

  const api = {
    endpoint, dir, bucket: BUCKET, strict,
    objectFile,
    requests: () => log.map((e) => ({ ...e })),
    reset() { log = []; faults = []; delayMs = 0; },
    failNext(n = 1, status = 503) { for (let i = 0; i < n; i++) faults.push(status); },
    setDelay(ms) { delayMs = ms; },
    addCredential(akid, secret, { token = null, expiresAtMs = 0 } = {}) { temp.set(akid, { secret, token, expiresAtMs }); },
    expireCredential(akid) { const t = temp.get(akid); if (t) t.expiresAtMs = 1; },
    stop,
  };
  return api;
}

// Environment for lancever (and LanceDB's object_store) against `s3`.
export function s3Env(s3, extra = {}) {
  return {
    ...process.env,
    AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET_KEY,
    AWS_REGION: REGION, AWS_ENDPOINT_URL: s3.endpoint, AWS_ALLOW_HTTP: 'true',
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}

// LanceDB storageOptions (docs/lance-reference.md, "The LanceDB peers").
export function s3StorageOptions(s3) {
  return {
    awsAccessKeyId: ACCESS_KEY, awsSecretAccessKey: SECRET_KEY, awsEndpoint: s3.endpoint,
    awsRegion: REGION, allowHttp: 'true', virtualHostedStyleRequest: 'false',
  };
}

// Copies every object under `prefix` (no trailing '/') in s3rver's storage into `dest`,
// stripping the storage suffix; returns the sorted list of copied keys (relative to prefix).
export function copyPrefix(s3, prefix, dest) {
  const root = path.join(s3.dir, BUCKET, prefix);
  const keys = [];
  walkFiles(root, (r, p) => {
    if (!r.endsWith(OBJECT_SUFFIX)) return;
    const k = r.slice(0, -OBJECT_SUFFIX.length);
    fs.mkdirSync(path.join(dest, path.dirname(k)), { recursive: true });
    fs.copyFileSync(p, path.join(dest, k));
    keys.push(k);
  });
  return keys.sort();
}

// Keys (relative to prefix) of the objects s3rver currently stores under `prefix`.
export function listPrefix(s3, prefix) {
  const root = path.join(s3.dir, BUCKET, prefix);
  const keys = [];
  if (fs.existsSync(root))
    walkFiles(root, (r) => { if (r.endsWith(OBJECT_SUFFIX)) keys.push(r.slice(0, -OBJECT_SUFFIX.length)); });
  return keys.sort();
}

// ---------------------------------------------------------------- CLI
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = { strict: true };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--lax') opt.strict = false;
    else if (a === '--port') opt.port = Number(args[++i]);
    else if (a === '--dir') { opt.dir = path.resolve(args[++i]); fs.mkdirSync(opt.dir, { recursive: true }); }
    else if (a === '--delay') opt.delay = Number(args[++i]);
    else if (a === '--verbose') opt.silent = false;
    else if (a === '--no-signature-check') opt.checkSignatures = false;
    else { console.error(`usage: node s3server.mjs [--lax] [--port N] [--dir D] [--delay MS] [--no-signature-check] [--verbose]`); process.exit(2); }
  }
  const s3 = await startS3(opt);
  console.log(s3.endpoint);
  console.error(`s3rver 3.7.1 (${s3.strict ? 'strict: 412 on create-if-absent' : 'lax'}) at ${s3.endpoint}, ` +
    `bucket '${BUCKET}', storage ${s3.dir}\n` +
    `  export AWS_ACCESS_KEY_ID=${ACCESS_KEY} AWS_SECRET_ACCESS_KEY=${SECRET_KEY} AWS_REGION=${REGION} ` +
    `AWS_ENDPOINT_URL=${s3.endpoint} AWS_ALLOW_HTTP=true AWS_EC2_METADATA_DISABLED=true\n` +
    `  log: curl ${s3.endpoint}/__ctl/requests   (also /__ctl/reset, /__ctl/fail?n=&status=, /__ctl/delay?ms=)`);
  const bye = () => process.exit(0); // 'exit' handler closes the server and removes the directory
  process.on('SIGINT', bye);
  process.on('SIGTERM', bye);
  process.on('SIGHUP', bye);
}
