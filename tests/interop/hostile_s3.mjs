// A small S3-compatible server on 127.0.0.1 that can turn hostile, for test_s3_hostile.mjs.
//
// Written on raw TCP (node:net) rather than node:http so that it can send anything at all:
// bodies shorter than their Content-Length, endless bodies and headers, no answer, garbage.
// Honest behaviour is just enough S3 for lancever and the C storage suite: path-style
// requests to one bucket, SigV4 verified (verifySigV4 from s3server.mjs), ListObjectsV2
// (prefix, delimiter, continuation tokens, a configurable page size), GET with Range, HEAD,
// PUT with If-None-Match: * (412 when the key exists), DELETE, DeleteObjects. Every request
// gets "Connection: close".
//
//   const s3 = await startHostile();
//   s3.endpoint                      'http://127.0.0.1:PORT'
//   s3.put(key, buffer)              stores an object (key below the bucket)
//   s3.putDir(dir, prefix)           stores every file below dir as prefix/<relative path>, with its mtime
//   s3.pageSize = 2                  keys per ListObjectsV2 page (default 1000)
//   s3.hook = (req, sock, h) => bool a scenario: return true if it answered req itself;
//                                    h.send(status, headers, body) / h.honest() help
//   s3.requests()                    [{method, key, query, range}] since the last reset()
//   s3.reset()                       clears the log and the hook, page size back to 1000
//   s3.stop()                        closes every socket and the server
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { verifySigV4 } from './s3server.mjs';
import { walkFiles } from './files.mjs';

export const BUCKET = 'bucket';
export const AKID = 'HOSTILETESTKEY';
export const SECRET = 'hostile-secret-MUST-NOT-APPEAR-4c1d';
export const TOKEN = 'hostile-session-token-MUST-NOT-APPEAR-77e0';

const xmlEscape = (s) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }[c]));
const xmlUnescape = (s) => s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e]));
const STATUS = { 200: 'OK', 204: 'No Content', 206: 'Partial Content', 403: 'Forbidden', 404: 'Not Found',
  412: 'Precondition Failed', 416: 'Range Not Satisfiable', 500: 'Internal Server Error' };

export function errorXml(code, message) {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>0</RequestId></Error>`;
}

// The head of a response, as raw text.
export function head(status, headers = {}) {
  let h = `HTTP/1.1 ${status} ${STATUS[status] || 'Whatever'}\r\n`;
  for (const [k, v] of Object.entries(headers)) h += `${k}: ${v}\r\n`;
  return h;
}

export async function startHostile() {
  const objects = new Map(); // key -> { data: Buffer, mtime: Date }
  let log = [];
  const sockets = new Set();
  const api = { pageSize: 1000, hook: null };

  function send(sock, status, headers, body = '') {
    const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
    sock.end(Buffer.concat([Buffer.from(head(status, { 'Content-Length': b.length, Connection: 'close', ...headers }) + '\r\n'), b]));
  }

  function listing(q) {
    const prefix = q.get('prefix') || '';
    const delim = q.get('delimiter');
    const after = q.get('continuation-token') ? Buffer.from(q.get('continuation-token'), 'base64url').toString() : null;
    const keys = [...objects.keys()].filter((k) => k.startsWith(prefix)).sort();
    const items = []; // {key} or {prefix}
    const seen = new Set();
    for (const k of keys) {
      const rest = k.slice(prefix.length);
      const i = delim ? rest.indexOf(delim) : -1;
      if (i >= 0) {
        const p = prefix + rest.slice(0, i + 1);
        if (!seen.has(p)) { seen.add(p); items.push({ prefix: p, sort: p }); }
      } else {
        items.push({ key: k, sort: k });
      }
    }
    const todo = items.filter((it) => after === null || it.sort > after);
    const page = todo.slice(0, api.pageSize);
    const truncated = todo.length > page.length;
    let x = '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
      `<Name>${BUCKET}</Name><Prefix>${xmlEscape(prefix)}</Prefix><KeyCount>${page.length}</KeyCount>` +
      `<MaxKeys>${api.pageSize}</MaxKeys><IsTruncated>${truncated}</IsTruncated>`;
    if (truncated) x += `<NextContinuationToken>${Buffer.from(page[page.length - 1].sort).toString('base64url')}</NextContinuationToken>`;
    for (const it of page) {
      if (it.key !== undefined) {
        const o = objects.get(it.key);
        x += `<Contents><Key>${xmlEscape(it.key)}</Key><LastModified>${o.mtime.toISOString()}</LastModified>` +
          `<ETag>"0"</ETag><Size>${o.data.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
      } else {
        x += `<CommonPrefixes><Prefix>${xmlEscape(it.prefix)}</Prefix></CommonPrefixes>`;
      }
    }
    return x + '</ListBucketResult>';
  }

  // The honest answer to a request: { status, headers, body }.
  function honest(req) {
    const { method, key, q } = req;
    const xml = { 'Content-Type': 'application/xml' };
    if (key === '' && method === 'GET' && q.get('list-type') === '2')
      return { status: 200, headers: xml, body: listing(q) };
    if (key === '' && method === 'POST' && q.has('delete')) {
      const body = req.body.toString();
      const quiet = /<Quiet>true<\/Quiet>/.test(body);
      let x = '<?xml version="1.0" encoding="UTF-8"?>\n<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">';
      for (const m of body.matchAll(/<Key>([^<]*)<\/Key>/g)) {
        const k = xmlUnescape(m[1]);
        objects.delete(k);
        if (!quiet) x += `<Deleted><Key>${xmlEscape(k)}</Key></Deleted>`;
      }
      return { status: 200, headers: xml, body: x + '</DeleteResult>' };
    }
    const o = objects.get(key);
    if (method === 'GET' || method === 'HEAD') {
      if (!o) return { status: 404, headers: xml, body: method === 'HEAD' ? '' : errorXml('NoSuchKey', 'The specified key does not exist.') };
      const lm = { 'Last-Modified': o.mtime.toUTCString() };
      if (method === 'HEAD') return { status: 200, headers: { ...lm, 'Content-Length': o.data.length }, body: null };
      const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range || '');
      if (!m) return { status: 200, headers: lm, body: o.data };
      const a = Number(m[1]), b = m[2] === '' ? o.data.length - 1 : Math.min(Number(m[2]), o.data.length - 1);
      if (a >= o.data.length) return { status: 416, headers: xml, body: errorXml('InvalidRange', 'The requested range is not satisfiable') };
      return { status: 206, headers: { ...lm, 'Content-Range': `bytes ${a}-${b}/${o.data.length}` }, body: o.data.subarray(a, b + 1) };
    }
    if (method === 'PUT') {
      if (req.headers['if-none-match'] === '*' && o) return { status: 412, headers: xml, body: errorXml('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold') };
      objects.set(key, { data: req.body, mtime: new Date() });
      return { status: 200, headers: {}, body: '' };
    }
    if (method === 'DELETE') { objects.delete(key); return { status: 204, headers: {}, body: '' }; }
    return { status: 400, headers: xml, body: errorXml('BadRequest', 'Not supported here.') };
  }

  function respond(req, sock) {
    log.push({ method: req.method, key: req.key, query: req.rawQuery, range: req.headers.range || null });
    const h = {
      send: (status, headers, body) => send(sock, status, headers, body),
      honest: () => honest(req),
    };
    if (api.hook && api.hook(req, sock, h)) return;
    const why = verifySigV4(req, { [AKID]: SECRET });
    if (why) return send(sock, 403, { 'Content-Type': 'application/xml' }, errorXml('SignatureDoesNotMatch', why));
    const r = honest(req);
    if (r.body === null) { // HEAD: headers only
      sock.end(head(r.status, { Connection: 'close', ...r.headers }) + '\r\n');
      return;
    }
    send(sock, r.status, r.headers, r.body);
  }

  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    let buf = Buffer.alloc(0);
    let req = null;
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (!req) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) { if (buf.length > 65536) sock.destroy(); return; }
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
        buf = buf.subarray(end + 4);
        const [method, url] = lines[0].split(' ');
        const headers = {};
        for (const l of lines.slice(1)) {
          const i = l.indexOf(':');
          if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const [rawPath, rawQuery = ''] = url.split(/\?(.*)/s);
        let p;
        try { p = decodeURIComponent(rawPath); } catch { p = rawPath; }
        const parts = p.replace(/^\//, '').split('/');
        if (parts[0] !== BUCKET) { send(sock, 404, {}, errorXml('NoSuchBucket', 'No such bucket')); return; }
        req = { method, url, headers, rawQuery, q: new URLSearchParams(rawQuery), key: parts.slice(1).join('/'),
          need: Number(headers['content-length'] || 0) };
      }
      if (buf.length < req.need) return;
      req.body = buf.subarray(0, req.need);
      const r = req;
      req = null;
      respond(r, sock);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  api.endpoint = `http://127.0.0.1:${server.address().port}`;
  api.put = (key, data, mtime = new Date()) => objects.set(key, { data: Buffer.from(data), mtime });
  api.putDir = (dir, prefix) => {
    walkFiles(dir, (r, p) => api.put(`${prefix}/${r}`, fs.readFileSync(p), fs.statSync(p).mtime));
  };
  api.get = (key) => objects.get(key)?.data;
  api.keys = () => [...objects.keys()].sort();
  api.requests = () => log.map((e) => ({ ...e }));
  api.reset = () => { log = []; api.hook = null; api.pageSize = 1000; };
  api.stop = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  return api;
}
