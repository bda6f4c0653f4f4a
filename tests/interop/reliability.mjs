// Shared helpers for the crash-safety and concurrency interop tests (test_crash.mjs,
// test_concurrency.mjs): a seeded PRNG, file listings with content hashes, an independent
// check of a checkpoint file's checksum (CRC-32C over the canonical row serialisation the
// docs/format.md describes, recomputed here from `lancever inspect --json`), manifest names ->
// versions, LanceDB reads of every version, and an HTTP tap in front of the S3 test server
// that can kill a client at its Nth mutating request or record what it wrote.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { lanceverBin, run } from './lib.mjs';
import { walkFiles } from './files.mjs';

// ---------------------------------------------------------------- seeded randomness

// mulberry32: a small 32-bit PRNG; the same seed gives the same sequence on every machine.
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
// `n` distinct items of `arr` chosen with `rng`, in their original order (all if n >= length).
export function sampleOrdered(rng, arr, n) {
  if (n >= arr.length) return arr.slice();
  const idx = arr.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, n).sort((a, b) => a - b).map((i) => arr[i]);
}

// ---------------------------------------------------------------- files

export const TMP_RE = /(^|\/)\.tmp-lancever-[0-9a-f]+$/;
// A checkpoint file's name (other names in _checkpoints/: `<name>.lock`, the merge lock).
export const CHECKPOINT_RE = /^\d{20}\.lance$/;
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex').slice(0, 16);

// Every regular file under dir: sorted [{path, size, hash}] (hash of the content for every
// file, so "same file set" means same names and same bytes).
export function fileSet(dir) {
  const out = [];
  walkFiles(dir, (r, p, e) => {
    if (!e.isFile()) return;
    const b = fs.readFileSync(p);
    out.push({ path: r, size: b.length, hash: sha(b) });
  });
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
export const fileKeys = (set) => set.map((f) => `${f.path} ${f.size} ${f.hash}`);

// A set difference of two fileSet()s, for messages: {missing: [...], extra: [...]}.
export function fileSetDiff(got, want) {
  const g = new Set(fileKeys(got)), w = new Set(fileKeys(want));
  return { missing: [...w].filter((k) => !g.has(k)), extra: [...g].filter((k) => !w.has(k)) };
}

export function copyDir(src, dst) {
  fs.cpSync(src, dst, { recursive: true, preserveTimestamps: true });
  return dst;
}

// Version numbers of the manifest names in a `_versions/` listing (V1 `N.manifest` and V2
// `{u64::MAX - N:020}.manifest`; detached `d…`, temporary and other names ignored).
const U64_MAX = (1n << 64n) - 1n;
export function manifestVersions(names) {
  const vs = new Set();
  for (const n of names) {
    const m = /^(\d+)\.manifest$/.exec(n);
    if (!m) continue;
    vs.add(m[1].length === 20 ? Number(U64_MAX - BigInt(m[1])) : Number(m[1]));
  }
  return vs;
}
export function localManifestVersions(dir) {
  const d = path.join(dir, '_versions');
  return manifestVersions(fs.existsSync(d) ? fs.readdirSync(d) : []);
}

// ---------------------------------------------------------------- checkpoint checksum

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82F63B78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();
export function crc32c(buf, crc = 0) {
  let c = ~crc >>> 0;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
const u64le = (x) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt.asUintN(64, BigInt(x))); return b; };

// The checksum a checkpoint with these rows (inspect --json rows) and dataset_created must
// carry: crc32c over created, the row count, and per row the nine fixed u64 fields, the three
// flags, read_version, then uuid / operation / properties as (present byte [, u64 length,
// bytes]).
export function checkpointChecksum(rows, created) {
  const parts = [u64le(created), u64le(rows.length)];
  const str = (s) => {
    if (s === null || s === undefined) return [Buffer.from([0])];
    const b = Buffer.from(s, 'utf8');
    return [Buffer.from([1]), u64le(b.length), b];
  };
  for (const r of rows) {
    for (const k of ['version', 'timestamp_millis', 'total_fragments', 'total_data_files',
      'total_files_size', 'total_deletion_files', 'total_data_file_rows', 'total_deletion_file_rows',
      'total_rows']) parts.push(u64le(r[k]));
    parts.push(Buffer.from([r.is_tagged ? 1 : 0, r.is_cleaned_up ? 1 : 0, r.read_version === null ? 0 : 1]));
    parts.push(u64le(r.read_version === null ? 0 : r.read_version));
    parts.push(...str(r.transaction_uuid), ...str(r.operation_type), ...str(r.transaction_properties));
  }
  return 'crc32c:' + crc32c(Buffer.concat(parts)).toString(16).padStart(8, '0');
}

// Runs `lancever inspect --json` on a checkpoint file (or its bytes) and checks it: 15 columns,
// versions strictly increasing, named for its newest version (if a name is given), checksum
// recomputed here. Returns {ok, why, rows, meta}.
export async function inspectCheckpoint(fileOrBytes, name = null, tmpDir = null) {
  let file = fileOrBytes;
  if (Buffer.isBuffer(fileOrBytes)) {
    file = path.join(tmpDir, `inspect-${process.pid}-${Math.random().toString(36).slice(2)}.lance`);
    fs.writeFileSync(file, fileOrBytes);
  }
  const r = await run(lanceverBin, ['inspect', file, '--json']);
  if (file !== fileOrBytes) fs.rmSync(file, { force: true });
  if (r.status !== 0) return { ok: false, why: `inspect exited ${r.status}: ${r.stderr.trim()}` };
  let j;
  try { j = JSON.parse(r.stdout); } catch (e) { return { ok: false, why: 'inspect output is not JSON: ' + e.message }; }
  if (j.schema.length !== 15) return { ok: false, why: `${j.schema.length} columns` };
  const rows = j.rows, meta = j.metadata || {};
  for (let i = 1; i < rows.length; i++)
    if (!(rows[i].version > rows[i - 1].version)) return { ok: false, why: `versions not increasing at row ${i}` };
  if (name !== null) {
    const want = String(rows.length ? rows[rows.length - 1].version : 0).padStart(20, '0') + '.lance';
    if (path.basename(name) !== want) return { ok: false, why: `named ${path.basename(name)}, newest row says ${want}` };
  }
  const sum = checkpointChecksum(rows, meta['lance:checkpoint:dataset_created']);
  if (meta['lancever:checksum'] !== sum) return { ok: false, why: `checksum ${meta['lancever:checksum']}, recomputed ${sum}` };
  return { ok: true, rows, meta };
}

// The version ranges of the segments a head's archive index names (its lancever:archive
// metadata: "lancever-archive 1 S THROUGH" then "FIRST LAST ROWS MIN MAX BYTES" lines).
export function indexedRanges(meta) {
  const text = (meta || {})['lancever:archive'];
  if (!text) return [];
  return text.split('\n').slice(1).filter((l) => /^\d+ \d+ /.test(l)).map((l) => l.split(' ').slice(0, 2).map(Number));
}

// Is checkpoint B (rows) the merge of A into something (every row of A is in B with the same
// immutable fields, and B's flags are A's or set)? docs/format.md's rule for replacing a file. A
// row may leave B only for a segment B's index names (`bMeta`: B's metadata).
export function rowsSupersede(a, b, bMeta = null) {
  const bm = new Map(b.map((r) => [r.version, r]));
  const ranges = indexedRanges(bMeta);
  for (const r of a) {
    const x = bm.get(r.version);
    if (!x && ranges.some(([f, l]) => f <= r.version && r.version <= l)) continue;
    if (!x) return `version ${r.version} dropped`;
    for (const k of Object.keys(r)) {
      if (k === 'is_cleaned_up' || k === 'is_tagged') {
        if (r[k] && !x[k]) return `version ${r.version}: ${k} cleared`;
      } else if (JSON.stringify(r[k]) !== JSON.stringify(x[k])) return `version ${r.version}: ${k} changed`;
    }
  }
  return null;
}

// ---------------------------------------------------------------- processes

// run() (asynchronous spawn) is lib.mjs's; re-exported for the tests that import it from here.
export { run };

// ---------------------------------------------------------------- LanceDB reads

export const rowsOf = (arr) => arr.map((r) => (typeof r.toJSON === 'function' ? r.toJSON() : r))
  .map((r) => ({ id: Number(r.id), val: r.val, name: r.name }))
  .sort((a, b) => a.id - b.id);

// Reads version v through table handle t; resolves {rows} or {error}.
export async function readVersion(t, v) {
  try {
    await t.checkout(v);
    return { rows: rowsOf(await t.query().toArray()) };
  } catch (e) {
    return { error: e.message.split('\n')[0].slice(0, 300) };
  }
}

// ---------------------------------------------------------------- S3 tap

// An HTTP proxy in front of the S3 test server, for lancever only (LanceDB talks to the server
// directly). Requests are forwarded byte for byte (the SigV4 signature covers the Host header
// the client sent, and the server checks it as received). `setHook(fn)`: fn(info, phase) is
// called with phase 'request' before forwarding and 'response' before relaying the answer;
// returning true drops the connection instead (the hook kills the client first). info:
// {method, key (bucket/…), query, body (Buffer), mutating, status (response phase)}.
export async function startTap(upstream) {
  const up = new URL(upstream);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let hook = null;
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url, 'http://x');
      let key = url.pathname.replace(/^\//, '');
      try { key = decodeURIComponent(key); } catch { /* keep raw */ }
      const info = {
        method: req.method, key, query: url.search.replace(/^\?/, ''), body: Buffer.concat(chunks),
        mutating: req.method === 'PUT' || req.method === 'POST' || req.method === 'DELETE', status: null,
      };
      if (hook && hook(info, 'request')) { req.socket.destroy(); return; }
      const preq = http.request({
        host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers, agent,
      }, (pres) => {
        const out = [];
        pres.on('data', (c) => out.push(c));
        pres.on('end', () => {
          info.status = pres.statusCode;
          if (hook && hook(info, 'response')) { req.socket.destroy(); return; }
          res.writeHead(pres.statusCode, pres.headers);
          res.end(Buffer.concat(out));
        });
        pres.on('error', () => req.socket.destroy());
      });
      preq.on('error', () => req.socket.destroy());
      preq.end(info.body);
    });
  });
  server.keepAliveTimeout = 30000;
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve, reject) => { server.once('error', reject); server.listen(0, '127.0.0.1', resolve); });
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    setHook(fn) { hook = fn; },
    async stop() {
      for (const s of sockets) s.destroy();
      agent.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
