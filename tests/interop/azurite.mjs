// Azurite (the Azure Storage emulator, npm `azurite` 3.35.0 pinned in tests/interop/azurite/, its own
// package so that it installs apart from the LanceDB peers) for the az:// tests and benchmarks:
//   * starts azurite-blob on 127.0.0.1 with a port chosen by the OS, telemetry off, a scratch
//     directory, and stops it (and removes the directory) on stop() or at process exit;
//   * a small Blob REST client with Shared Key signing of its own (createContainer, put, list),
//     used to create containers and, where a test needs it, to upload objects;
//   * an optional delaying proxy in front of it (setDelay) for benchmarks, like s3server.mjs's.
// Only 127.0.0.1 is ever bound.  Library use:
//   import { startAzurite } from './azurite.mjs';
//   const az = await startAzurite();     // {endpoint, account, key, ...}
//   await az.createContainer('c');
//   az.env(extra)                        // AZURE_STORAGE_* environment for lancever
//   az.storageOptions()                  // LanceDB storageOptions (emulator)
//   az.requests()                        // proxy log: [{method, path, status, ms}]
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serverLifetime } from './servers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const AZURITE_VERSION = '3.35.0';
export const ACCOUNT = 'devstoreaccount1';
// The emulator's published key (Microsoft documents it for every Azurite/Storage Emulator install).
export const KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

const bin = path.join(here, 'azurite', 'node_modules', '.bin', 'azurite-blob');
function checkInstalled() {
  const pj = path.join(here, 'azurite', 'node_modules', 'azurite', 'package.json');
  if (!fs.existsSync(bin) || !fs.existsSync(pj)) {
    console.error('FAIL: azurite not installed (run tests/interop/setup.sh)');
    process.exit(1);
  }
  const v = JSON.parse(fs.readFileSync(pj, 'utf8')).version;
  if (v !== AZURITE_VERSION) { console.error(`FAIL: expected azurite ${AZURITE_VERSION}, found ${v}`); process.exit(1); }
}

// Shared Key signing (Blob service, version 2021-08-06), for the test's own requests.
function sign(method, urlPath, query, headers, key = KEY, account = ACCOUNT) {
  const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
  const len = h['content-length'] && h['content-length'] !== '0' ? h['content-length'] : '';
  const xms = Object.keys(h).filter((k) => k.startsWith('x-ms-')).sort().map((k) => `${k}:${h[k]}\n`).join('');
  const params = [...new URLSearchParams(query)].map(([k, v]) => [k.toLowerCase(), v]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const res = `/${account}${urlPath}` + params.map(([k, v]) => `\n${k}:${v}`).join('');
  const sts = [method, '', '', len, '', h['content-type'] || '', '', '', '', h['if-none-match'] || '', '', h.range || ''].join('\n') + '\n' + xms + res;
  return `SharedKey ${account}:${crypto.createHmac('sha256', Buffer.from(key, 'base64')).update(sts, 'utf8').digest('base64')}`;
}

export async function startAzurite({ silent = true } = {}) {
  checkInstalled();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-azurite-'));
  const child = spawn(bin, ['--blobHost', '127.0.0.1', '--blobPort', '0', '--location', dir,
    '--disableTelemetry', '--skipApiVersionCheck', ...(silent ? ['--silent'] : [])],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`azurite did not start: ${out}`)), 30000);
    const on = (d) => {
      out += d;
      const m = /listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (c) => { clearTimeout(timer); reject(new Error(`azurite exited ${c}: ${out}`)); });
  });
  child.removeAllListeners('exit');
  const direct = `http://127.0.0.1:${port}`;

  // The delaying, logging proxy (every request goes through it).
  let delayMs = 0, log = [], maxResults = 0;
  const proxy = http.createServer((req, res) => {
    const entry = { method: req.method, path: decodeURIComponent(req.url.split('?')[0]), query: req.url.split('?')[1] || '', status: null };
    log.push(entry);
    // setMaxResults(n): list pages of n blobs, to exercise pagination (only unsigned queries,
    // i.e. SAS requests, can be rewritten: Shared Key signs the query).
    let url = req.url;
    if (maxResults && /[?&]comp=list/.test(url)) url = url.replace(/([?&])maxresults=\d+/, `$1maxresults=${maxResults}`);
    const go = () => {
      const up = http.request({ host: '127.0.0.1', port, method: req.method, path: url, headers: req.headers }, (ur) => {
        entry.status = ur.statusCode;
        res.writeHead(ur.statusCode, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => { entry.status = 0; res.destroy(); });
      req.pipe(up);
    };
    if (delayMs > 0) setTimeout(go, delayMs); else go();
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${proxy.address().port}`;
  const stop = serverLifetime(proxy, () => {
    try { child.kill('SIGKILL'); } catch {}
    if (!process.env.LV_KEEP) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function rest(method, p, { query = '', body = null, headers = {} } = {}) {
    const urlPath = `/${ACCOUNT}${p}`;
    const hdr = { 'x-ms-date': new Date().toUTCString(), 'x-ms-version': '2021-08-06', ...headers };
    if (body !== null) hdr['content-length'] = String(Buffer.byteLength(body));
    hdr.authorization = sign(method, urlPath, query, hdr);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path: urlPath + (query ? `?${query}` : ''), headers: hdr }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      if (body !== null) req.write(body);
      req.end();
    });
  }
  const encPath = (k) => k.split('/').map(encodeURIComponent).join('/');

  const api = {
    endpoint, direct, account: ACCOUNT, key: KEY, dir,
    requests: () => log.map((e) => ({ ...e })),
    reset() { log = []; delayMs = 0; maxResults = 0; },
    setDelay(ms) { delayMs = ms; },
    setMaxResults(n) { maxResults = n; },
    // An account SAS (blob service; containers and objects; read, write, delete, list, add,
    // create) valid until 2030, signed with the emulator's key.
    accountSas() {
      const f = { sv: '2021-08-06', ss: 'b', srt: 'sco', sp: 'rwdlac', se: '2030-01-01T00:00:00Z', spr: 'https,http' };
      const sts = [ACCOUNT, f.sp, f.ss, f.srt, '', f.se, '', f.spr, f.sv, '', ''].join('\n');
      const sig = crypto.createHmac('sha256', Buffer.from(KEY, 'base64')).update(sts, 'utf8').digest('base64');
      return new URLSearchParams({ ...f, sig }).toString();
    },
    async createContainer(name) {
      const r = await rest('PUT', `/${name}`, { query: 'restype=container' });
      if (r.status !== 201 && r.status !== 409) throw new Error(`create container ${name}: HTTP ${r.status} ${r.body}`);
    },
    async put(container, key, data) {
      const r = await rest('PUT', `/${container}/${encPath(key)}`, { body: data, headers: { 'x-ms-blob-type': 'BlockBlob' } });
      if (r.status !== 201) throw new Error(`put ${key}: HTTP ${r.status} ${r.body}`);
    },
    async get(container, key) {
      const r = await rest('GET', `/${container}/${encPath(key)}`);
      return r.status === 200 ? r.body : null;
    },
    // Every blob name under prefix (no trailing '/'), sorted.
    async list(container, prefix = '') {
      const names = [];
      let marker = '';
      for (;;) {
        const q = new URLSearchParams({ restype: 'container', comp: 'list', prefix: prefix ? `${prefix}/` : '', ...(marker ? { marker } : {}) });
        const r = await rest('GET', `/${container}`, { query: q.toString() });
        if (r.status !== 200) throw new Error(`list: HTTP ${r.status}`);
        const x = r.body.toString('utf8');
        for (const m of x.matchAll(/<Blob><Name>([^<]*)<\/Name>/g)) names.push(m[1].replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").slice(prefix ? prefix.length + 1 : 0));
        const nm = /<NextMarker>([^<]+)<\/NextMarker>/.exec(x);
        if (!nm) break;
        marker = nm[1];
      }
      return names.sort();
    },
    // AZURE_STORAGE_* environment for lancever against this emulator (Shared Key, explicit endpoint).
    env(extra = {}) {
      const e = { ...process.env };
      for (const k of Object.keys(e)) if (k.startsWith('AZURE_') || k === 'AZURITE_BLOB_STORAGE_URL') delete e[k];
      return { ...e, AZURE_STORAGE_ACCOUNT_NAME: ACCOUNT, AZURE_STORAGE_ACCOUNT_KEY: KEY,
        AZURE_STORAGE_ENDPOINT: `${endpoint}/${ACCOUNT}`, AZURE_ALLOW_HTTP: 'true', ...extra };
    },
    // LanceDB storageOptions for the emulator (object_store: use_emulator + AZURITE_BLOB_STORAGE_URL).
    storageOptions() { return { azure_storage_use_emulator: 'true', azure_storage_account_name: ACCOUNT }; },
    stop,
  };
  return api;
}
