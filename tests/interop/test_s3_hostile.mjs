// Hostile S3 servers (issue 8): the lancever CLI against hostile_s3.mjs, a small S3 server on
// 127.0.0.1 that this test starts and stops, serving a real LanceDB dataset
// (tests/fixtures/lance8/t.lance plus a lancever checkpoint) and misbehaving on purpose.
//
// Positive controls first (the emulation must be faithful, or the hostile cases prove
// nothing): versions/history over the server = the same commands on the local copy, with
// one-page and two-keys-per-page listings and with a server that ignores Range; the C
// storage suite (tests/test_storage) passes against it, paginated and Range-ignoring.
//
// Then every hostile case must end with exit status 1 (no signal, no hang: a run over
// 60 s is killed and fails), a message naming the operation and the object, the secret key
// and session token never echoed, in an address space capped at 1 GiB (ulimit -v), with a
// peak RSS below 256 MiB as far as polling /proc (VmHWM) sees it. Limits are lowered through the environment so that stalls
// and retries cost seconds (see the LANCEVER_S3_* comment in src/lib/s3/s3.c): 2 tries,
// 1 MiB objects, 50 pages, a 2 s stall timeout for the stall case. The listing body limit
// (32 MiB) and the error body cut (64 KiB) are the built-in ones.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { check, checkEq, finish, lanceverBin, scratch, sourceDir } from './lib.mjs';
import { startHostile, head, errorXml, AKID, SECRET, TOKEN } from './hostile_s3.mjs';

const PREFIX = 'db/t.lance';       // with a checkpoint
const URI = `s3://bucket/${PREFIX}`;
const PLAIN = 's3://bucket/db/plain.lance'; // without: versions() reads every manifest
const RSS_LIMIT_KB = 256 * 1024;
// LV_HOSTILE_VMEM_KB=0 lifts the address-space cap (for a sanitizer build, whose shadow
// memory needs terabytes of address space; its RSS is larger too).
const VMEM_KB = Number(process.env.LV_HOSTILE_VMEM_KB ?? 1024 * 1024);
const HANG_MS = 60000;
const buildDir = process.env.LANCEVER_BUILD_DIR || path.dirname(lanceverBin);
const storageSuite = path.join(buildDir, 'tests', 'test_storage');

// ---------------------------------------------------------------- the dataset
const root = scratch('lv-hostile-');
const local = path.join(root, 't.lance');
fs.cpSync(path.join(sourceDir, 'tests/fixtures/lance8/t.lance'), local, { recursive: true });
const s3 = await startHostile();
console.log(`hostile S3 at ${s3.endpoint}`);
const baseEnv = {
  PATH: process.env.PATH,
  AWS_ACCESS_KEY_ID: AKID, AWS_SECRET_ACCESS_KEY: SECRET, AWS_SESSION_TOKEN: TOKEN,
  AWS_ENDPOINT_URL: s3.endpoint, AWS_ALLOW_HTTP: 'true', AWS_REGION: 'us-east-1',
  AWS_EC2_METADATA_DISABLED: 'true',
};
// For the hostile cases: fewer tries, small object and page limits; a short stall timeout
// only where a stall is the case (elsewhere a loaded CI machine could trip it).
const hostileEnv = {
  ...baseEnv,
  LANCEVER_S3_MAX_ATTEMPTS: '2', LANCEVER_S3_CONNECT_TIMEOUT_MS: '5000',
  LANCEVER_S3_MAX_OBJECT_BYTES: String(1 << 20), LANCEVER_S3_LIST_MAX_PAGES: '50',
};

// lancever (asynchronously: the server runs in this process), with its peak RSS as far as
// polling /proc sees it (a process that exits within the first poll reports 0). With
// `vmemKb`, the address space is capped (sh ulimit -v; two malloc arenas, so that
// threads' arena reservations stay small): memory that grew without bound would end in
// "out of memory", not in the expected message, whatever the polling saw.
function run(args, { env = baseEnv, bin = lanceverBin, timeout = HANG_MS, vmemKb = 0 } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p = vmemKb
      ? spawn('/bin/sh', ['-c', `ulimit -v ${vmemKb} && exec "$0" "$@"`, bin, ...args], { env: { ...env, MALLOC_ARENA_MAX: '2' } })
      : spawn(bin, args, { env });
    let stdout = '', stderr = '', hwm = 0, killed = false;
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p.pid}/status`, 'utf8'));
        if (m) hwm = Math.max(hwm, Number(m[1]));
      } catch { /* exited */ }
    }, 20);
    const timer = setTimeout(() => { killed = true; p.kill('SIGKILL'); }, timeout);
    p.on('close', (status, signal) => {
      clearTimeout(timer);
      clearInterval(poll);
      resolve({ status, signal, stdout, stderr, hwm, killed, ms: Date.now() - t0 });
    });
  });
}

const putDir = (dir, prefix) => s3.putDir(dir, prefix);

// A checkpoint, so that listing _checkpoints/, reading a checkpoint and the ranged identity
// probe of a manifest are exercised too.
{
  const r = await run(['checkpoint', local, '--json'], { env: { PATH: process.env.PATH } });
  check(r.status === 0, `local checkpoint: ${r.stderr}`);
}
putDir(path.join(sourceDir, 'tests/fixtures/lance8/t.lance'), 'db/plain.lance');
putDir(local, PREFIX);
const localJson = async (cmd) => {
  const r = await run([cmd, local, '--json'], { env: { PATH: process.env.PATH } });
  check(r.status === 0, `local ${cmd}: ${r.stderr}`);
  return JSON.parse(r.stdout || 'null');
};
// Only the 15 columns and the manifest facts that do not depend on where the files live.
const strip = (list) => (list || []).map(({ manifest_path, ...rest }) => ({ ...rest, manifest_path: manifest_path && path.basename(manifest_path) }));
const want = { versions: strip(await localJson('versions')), history: strip(await localJson('history')) };
check(want.versions.length === 6 && want.history.length === 6, 'the fixture has 6 versions');

// ---------------------------------------------------------------- positive controls
async function same(label, env = baseEnv) {
  for (const cmd of ['versions', 'history']) {
    const r = await run([cmd, URI, '--json', '--stats'], { env });
    if (!check(r.status === 0, `${label}: ${cmd} exited ${r.status} ${r.signal || ''}: ${r.stderr}`)) continue;
    checkEq(strip(JSON.parse(r.stdout)), want[cmd], `${label}: ${cmd} over S3 = local`);
    check(/answered from newest checkpoint/.test(r.stderr), `${label}: ${cmd} used the checkpoint: ${r.stderr}`);
  }
}
s3.reset();
await same('honest server');
s3.reset();
s3.pageSize = 2;
await same('honest server, 2 keys a page');
check(s3.requests().filter((q) => q.query.includes('continuation-token=')).length >= 2,
  'paginated listings followed continuation tokens');
s3.reset();
// A server ignoring Range: a ranged GET answered 200 with the whole object.
const ignoreRange = (req, sock, h) => {
  if (req.method !== 'GET' || !req.headers.range || !req.key) return false;
  const r = h.honest();
  if (r.status !== 206) return false;
  h.send(200, {}, s3.get(req.key));
  return true;
};
s3.hook = ignoreRange;
await same('server ignoring Range');
check(s3.requests().some((q) => q.range), 'ranged GETs were made');

// The C storage suite against the server: honest with 2-key pages, then ignoring Range.
async function storageSuite_(label) {
  if (!check(fs.existsSync(storageSuite), `storage suite binary not found at ${storageSuite}`)) return;
  const r = await run([], { bin: storageSuite, env: { ...baseEnv, LV_TEST_S3_URI: 's3://bucket/suite' }, timeout: 600000 });
  const ran = [...r.stdout.matchAll(/^\[\s+RUN\s+\] (s3\/\S+)/gm)].length;
  const ok = [...r.stdout.matchAll(/^\[\s+OK\s+\] (s3\/\S+)/gm)].length;
  check(r.status === 0 && ran > 0 && ok === ran,
    `${label}: storage suite exited ${r.status}, ${ok}/${ran} s3/ tests passed:\n${r.stdout.split('\n').filter((l) => /FAIL|ERROR|error/.test(l)).slice(0, 20).join('\n')}`);
  console.log(`${label}: storage suite ${ok}/${ran} s3/ tests passed`);
}
s3.reset();
s3.pageSize = 2;
await storageSuite_('storage suite, 2 keys a page');
s3.reset();
s3.hook = ignoreRange;
await storageSuite_('storage suite, Range ignored');

// ---------------------------------------------------------------- hostile cases
const isList = (req, dir) => req.method === 'GET' && req.key === '' && req.q.get('list-type') === '2' &&
  (req.q.get('prefix') || '').endsWith(`.lance/${dir}/`);
// Whole reads of manifests: plain GETs, and the footer-first first read (bytes=0-4194303; identity probes read 4 KiB).
const isManifest = (req) => req.method === 'GET' && req.key.includes('.lance/_versions/') && (!req.headers.range || req.headers.range === 'bytes=0-4194303');
const listXml = (inner, truncated = false, token = null) => '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name>' +
  `<IsTruncated>${truncated}</IsTruncated>${token ? `<NextContinuationToken>${token}</NextContinuationToken>` : ''}${inner}</ListBucketResult>`;
const contents = (key) => `<Contents><Key>${key}</Key><LastModified>2026-12-02T17:00:00.000Z</LastModified><Size>513</Size></Contents>`;
// Streams `chunk` until the client goes away (backpressure respected).
function stream(sock, headText, chunk) {
  sock.write(headText);
  const more = () => {
    while (!sock.destroyed && sock.write(chunk)) { /* fill the buffer */ }
    if (!sock.destroyed) sock.once('drain', more);
  };
  sock.on('error', () => {});
  more();
}
const stalled = new Set();

const cases = [
  {
    name: 'truncated manifest body (Content-Length 513, 100 bytes, close)',
    hook: (req, sock) => {
      if (!isManifest(req)) return false;
      sock.end(head(200, { 'Content-Length': 513 }) + '\r\n' + 'x'.repeat(100));
      return true;
    },
    err: /S3 GET _versions\/\d{20}\.manifest: .*(partial|Transferred)/i,
  },
  {
    name: 'truncated listing body',
    hook: (req, sock, h) => {
      if (!isList(req, '_versions')) return false;
      const body = h.honest().body;
      sock.end(head(200, { 'Content-Length': body.length }) + '\r\n' + body.slice(0, body.length >> 1));
      return true;
    },
    err: /S3 LIST _versions: .*(partial|Transferred)/i,
  },
  {
    name: 'listing that is not XML',
    hook: (req, sock, h) => isList(req, '_versions') && (h.send(200, {}, 'this is not XML at all'), true),
    err: /S3 LIST _versions: malformed XML/,
  },
  {
    name: 'listing with the wrong root element (an error document with status 200)',
    hook: (req, sock, h) => isList(req, '_versions') && (h.send(200, {}, errorXml('AccessDenied', 'no')), true),
    err: /S3 LIST _versions: root element <Error>, expected <ListBucketResult>/,
  },
  {
    name: 'listing that is an HTML page',
    hook: (req, sock, h) => isList(req, '_versions') && (h.send(200, { 'Content-Type': 'text/html' }, '<html><body>Please log in</body></html>'), true),
    err: /S3 LIST _versions: root element <html>/,
  },
  {
    name: 'listing with entity expansion (billion laughs)',
    hook: (req, sock, h) => {
      if (!isList(req, '_versions')) return false;
      let dtd = '<!ENTITY a0 "' + contents('db/t.lance/_versions/x').replace(/"/g, '&quot;') + '">';
      for (let i = 1; i < 10; i++) dtd += `<!ENTITY a${i} "${`&a${i - 1};`.repeat(10)}">`;
      h.send(200, {}, `<?xml version="1.0"?><!DOCTYPE ListBucketResult [${dtd}]><ListBucketResult>&a9;</ListBucketResult>`);
      return true;
    },
    err: /S3 LIST _versions: a document type declaration/,
  },
  {
    name: 'pagination that never ends (the same token again)',
    hook: (req, sock, h) => isList(req, '_versions') && (h.send(200, {}, listXml('', true, 'SAME')), true),
    err: /S3 LIST _versions: the server sent continuation token of page 1 again at page 2 \(pagination loop\)/,
  },
  {
    name: 'pagination cycling between tokens',
    hook: (req, sock, h) => {
      if (!isList(req, '_versions')) return false;
      const next = { null: 'A', A: 'B', B: 'C', C: 'A' }[req.q.get('continuation-token')];
      h.send(200, {}, listXml('', true, next));
      return true;
    },
    err: /S3 LIST _versions: .*again.*\(pagination loop\)/,
  },
  {
    name: 'pagination with ever new tokens',
    hook: (req, sock, h) => {
      if (!isList(req, '_versions')) return false;
      const n = Number(req.q.get('continuation-token') || 0) + 1;
      h.send(200, {}, listXml('', true, String(n)));
      return true;
    },
    err: /S3 LIST _versions: more than 50 pages \(LANCEVER_S3_LIST_MAX_PAGES/,
  },
  {
    name: 'endless listing body',
    hook: (req, sock) => {
      if (!isList(req, '_versions')) return false;
      stream(sock, head(200, { 'Transfer-Encoding': 'chunked' }) + '\r\n',
        (() => { const c = contents('db/t.lance/_versions/y.manifest').repeat(200); return `${c.length.toString(16)}\r\n${c}\r\n`; })());
      return true;
    },
    err: /S3 LIST _versions: the response is larger than 33554432 bytes/,
  },
  {
    name: 'endless manifest body (chunked, no length)',
    hook: (req, sock) => {
      if (!isManifest(req)) return false;
      const c = 'z'.repeat(65536);
      stream(sock, head(200, { 'Transfer-Encoding': 'chunked' }) + '\r\n', `${c.length.toString(16)}\r\n${c}\r\n`);
      return true;
    },
    err: /S3 GET _versions\/\d{20}\.manifest: the response is larger than 1048576 bytes/,
  },
  {
    name: 'huge Content-Length for a manifest',
    hook: (req, sock) => {
      if (!isManifest(req)) return false;
      sock.write(head(200, { 'Content-Length': '999999999999999' }) + '\r\n' + 'LANC');
      stalled.add(sock);
      return true;
    },
    err: /S3 GET _versions\/\d{20}\.manifest: the response is larger than 1048576 bytes/,
  },
  {
    name: 'garbage with status 200 for a manifest',
    hook: (req, sock, h) => isManifest(req) && (h.send(200, {}, Buffer.alloc(700, 0x5a)), true),
    err: /_versions\/\d{20}\.manifest/,
  },
  {
    name: 'listed key with ../ segments',
    hook: (req, sock, h) => isList(req, '_versions') && (h.send(200, {}, listXml(contents('db/plain.lance/_versions/../../../etc/18446744073709551614.manifest'))), true),
    err: /S3 LIST _versions: the server listed key 'db\/plain\.lance\/_versions\/\.\.\/\.\.\/\.\.\/etc\/18446744073709551614\.manifest', which is not a valid object path/,
    noRequest: /\.\./,
  },
  {
    name: 'listed key that is absolute',
    hook: (req, sock, h) => isList(req, '_versions') && (h.send(200, {}, listXml(contents('/etc/18446744073709551614.manifest'))), true),
    err: /S3 LIST _versions: the server listed key '\/etc\/18446744073709551614\.manifest', which is outside the requested prefix/,
    noRequest: /etc/,
  },
  {
    name: 'listed key of another prefix',
    hook: (req, sock, h) => isList(req, '_versions') && (h.send(200, {}, listXml(contents('db/other.lance/_versions/18446744073709551614.manifest'))), true),
    err: /S3 LIST _versions: the server listed key 'db\/other\.lance\/.*outside the requested prefix/,
    noRequest: /other\.lance/,
  },
  {
    name: 'listed key with a control character (tab)',
    hook: (req, sock, h) => isList(req, '_versions') && (h.send(200, {}, listXml(contents('db/plain.lance/_versions/a&#9;b.manifest'))), true),
    err: /S3 LIST _versions: the server listed key 'db\/plain\.lance\/_versions\/a\?b\.manifest', which is not a valid object path \(key: path contains a control character\)/,
  },
  {
    name: 'listed key with a NUL character reference',
    hook: (req, sock, h) => isList(req, '_versions') && (h.send(200, {}, listXml(contents('db/plain.lance/_versions/a&#0;.manifest'))), true),
    err: /S3 LIST _versions: malformed XML \(reference to invalid character number/,
  },
  {
    name: 'HTTP 404 with an endless body',
    hook: (req, sock) => {
      if (!isList(req, '_versions')) return false;
      const c = '<Error><Code>NoSuchBucket</Code></Error>'.repeat(1000);
      stream(sock, head(404, { 'Transfer-Encoding': 'chunked' }) + '\r\n', `${c.length.toString(16)}\r\n${c}\r\n`);
      return true;
    },
    err: /S3 LIST _versions: HTTP 404/,
  },
  {
    name: 'HTTP 500 with a 64 MiB body (retried)',
    hook: (req, sock) => {
      if (!isManifest(req)) return false;
      const c = Buffer.alloc(1 << 20, 0x41);
      sock.write(head(500, { 'Content-Length': 64 << 20 }) + '\r\n');
      let n = 0;
      const more = () => { while (!sock.destroyed && n < 64 && sock.write(c)) n++; if (!sock.destroyed && n < 64) sock.once('drain', () => { n++; more(); }); else sock.end(); };
      sock.on('error', () => {});
      more();
      return true;
    },
    err: /S3 GET _versions\/\d{20}\.manifest: HTTP 500 \(after retries: 2 attempts in /,
    minRequests: 2,
  },
  {
    name: 'server accepts and never answers (stall)',
    hook: (req, sock) => { if (!isList(req, '_versions')) return false; stalled.add(sock); return true; },
    env: { LANCEVER_S3_STALL_SECONDS: '2' },
    err: /S3 LIST _versions: (Timeout was reached|Operation too slow)/,
    minRequests: 2,
  },
  {
    name: 'server closes the connection without answering',
    hook: (req, sock) => isList(req, '_versions') && (sock.destroy(), true),
    err: /S3 LIST _versions: (Server returned nothing|Empty reply|Failure when receiving|Recv failure)/,
  },
  {
    name: 'endless response headers',
    hook: (req, sock) => {
      if (!isList(req, '_versions')) return false;
      stream(sock, 'HTTP/1.1 200 OK\r\n', 'X-Junk: ' + 'j'.repeat(1000) + '\r\n');
      return true;
    },
    err: /S3 LIST _versions: /,
  },
  {
    name: '206 for a different range than asked',
    hook: (req, sock, h) => {
      if (req.method !== 'GET' || !req.headers.range || !req.key.includes('/_versions/')) return false;
      const data = s3.get(req.key);
      h.send(206, { 'Content-Range': `bytes 5-${data.length - 1}/${data.length}` }, data.subarray(5));
      return true;
    },
    // manifests are read with ranged GETs (footer-first): a wrong range is an error naming one
    err: /S3 GET _versions\/\d{20}\.manifest: asked for bytes from 0, the server sent bytes from 5/,
  },
];

for (const c of cases) {
  s3.reset();
  s3.hook = c.hook;
  const r = await run(['versions', c.uri || PLAIN, '--stats'], { env: { ...hostileEnv, ...(c.env || {}) }, vmemKb: VMEM_KB });
  for (const s of stalled) s.destroy();
  stalled.clear();
  const reqs = s3.requests();
  const label = `${c.name} (${r.ms} ms, ${reqs.length} requests, peak RSS ${r.hwm} kB)`;
  console.log(`-- ${label}\n   ${(r.stderr.trim().split('\n').pop() || '').slice(0, 300)}`);
  check(!r.killed, `${c.name}: hung (killed after ${HANG_MS} ms)`);
  check(r.signal === null, `${c.name}: died of ${r.signal}`);
  const wantStatus = c.status ?? 1;
  check(r.status === wantStatus, `${c.name}: exit status ${r.status}, expected ${wantStatus}: ${r.stderr}`);
  check((c.err || c.out).test(r.stderr), `${c.name}: message does not match ${c.err || c.out}: ${r.stderr}`);
  check(!r.stderr.includes(SECRET) && !r.stdout.includes(SECRET) && !r.stderr.includes(TOKEN) && !r.stdout.includes(TOKEN),
    `${c.name}: a credential was echoed`);
  check(r.hwm < RSS_LIMIT_KB, `${c.name}: peak RSS ${r.hwm} kB (limit ${RSS_LIMIT_KB} kB)`);
  check(!/out of memory|LV_ENOMEM/.test(r.stderr), `${c.name}: ran out of memory under ulimit -v ${VMEM_KB}: ${r.stderr}`);
  if (wantStatus === 1) check(r.stdout === '', `${c.name}: output on stdout despite the error: ${r.stdout.slice(0, 200)}`);
  if (c.noRequest) check(!reqs.some((q) => q.key && c.noRequest.test(q.key)), `${c.name}: lancever requested a key it was fed: ${JSON.stringify(reqs.filter((q) => c.noRequest.test(q.key)))}`);
  if (c.minRequests) check(reqs.filter((q) => q.key === '' || q.key.includes('_versions/')).length >= c.minRequests, `${c.name}: not retried (${reqs.length} requests)`);
}

// Configuration errors name the variable.
{
  const r = await run(['versions', URI], { env: { ...hostileEnv, LANCEVER_S3_STALL_SECONDS: '0' } });
  check(r.status === 1 && /LANCEVER_S3_STALL_SECONDS: expected an integer from 1 to 3600/.test(r.stderr),
    `invalid LANCEVER_S3_STALL_SECONDS: exit ${r.status}: ${r.stderr}`);
  const r2 = await run(['versions', URI], { env: { ...hostileEnv, LANCEVER_S3_MAX_OBJECT_BYTES: 'lots' } });
  check(r2.status === 1 && /LANCEVER_S3_MAX_OBJECT_BYTES: expected an integer/.test(r2.stderr),
    `invalid LANCEVER_S3_MAX_OBJECT_BYTES: exit ${r2.status}: ${r2.stderr}`);
}

await s3.stop();
finish('test_s3_hostile');
