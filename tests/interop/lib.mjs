// Shared helpers for interop tests: load the real LanceDB peer chosen by LV_PEER
// (peer.mjs: lance8 = 0.31.0 / Lance 8.0.0, lance12 = 0.39.0 / Lance 12.0.0),
// run the lancever CLI (or any command, also asynchronously: run), make scratch directories, and assert.
import { lancedb, arrow, peerName, peerLabel, peerLanceVersion, peerLanceMajor, peerDataFormat } from './peer.mjs';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const sourceDir = process.env.LANCEVER_SOURCE_DIR || path.resolve(here, '../..');
export const lanceverBin = process.env.LANCEVER_BIN || path.join(sourceDir, 'build/lancever');

// The peer (LanceDB + its apache-arrow, loaded as CommonJS, version-checked,
// failing rather than skipping when missing) comes from peer.mjs.
export { lancedb, arrow, peerName, peerLabel, peerLanceVersion, peerLanceMajor, peerDataFormat };

if (!fs.existsSync(lanceverBin)) {
  console.error(`FAIL: lancever binary not found at ${lanceverBin}`);
  process.exit(1);
}

export function scratch(prefix = 'lv-interop-') {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.on('exit', () => { if (!process.env.LV_KEEP) fs.rmSync(d, { recursive: true, force: true }); });
  return d;
}

// Runs lancever with args; returns {status, stdout, stderr}.
export function lv(args, opts = {}) {
  const r = spawnSync(lanceverBin, args, { encoding: 'utf8', maxBuffer: 1 << 30, ...opts });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Spawns a process asynchronously; resolves {status, signal, stdout, stderr, ms}. `onSpawn`
// gets the child (to kill it); `killAfterMs` sends SIGKILL after that delay.
export function run(cmd, args, { env, onSpawn, killAfterMs } = {}) {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const p = spawn(cmd, args, { env: env || process.env });
    let stdout = '', stderr = '', timer = null;
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    if (killAfterMs !== undefined) timer = setTimeout(() => p.kill('SIGKILL'), killAfterMs);
    if (onSpawn) onSpawn(p);
    p.on('close', (status, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, ms: Number(process.hrtime.bigint() - t0) / 1e6 });
    });
  });
}

// Runs lancever and parses --json stdout; throws with stderr on failure.
export function lvJson(args, opts = {}) {
  const r = lv(args, opts);
  if (r.status !== 0) throw new Error(`lancever ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// Opens a dataset directory with LanceDB by linking it into a scratch parent.
export async function openDir(dir) {
  const parent = scratch('lv-open-');
  fs.symlinkSync(path.resolve(dir), path.join(parent, 'ds.lance'));
  const db = await lancedb.connect(parent);
  return db.openTable('ds');
}

let failures = 0, passes = 0;
export function check(cond, msg) {
  if (cond) { passes++; return true; }
  failures++;
  console.error('  FAIL: ' + msg);
  return false;
}
export function checkEq(a, b, msg) {
  const sa = JSON.stringify(a), sb = JSON.stringify(b);
  return check(sa === sb, `${msg}\n    got:      ${sa}\n    expected: ${sb}`);
}
// Prints the closing line CI reads and exits non-zero on any failure.
export function finish(name) {
  console.log(`ran against peer ${peerLabel}`);
  console.log(`${name}: ${passes} passed, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}

// Normalises a LanceDB listVersions() entry to our JSON field names.
export function lanceVersion(v) {
  const m = v.metadata;
  return {
    version: Number(v.version),
    timestamp_millis: v.timestamp.getTime(),
    total_fragments: Number(m.total_fragments),
    total_data_files: Number(m.total_data_files),
    total_files_size: Number(m.total_files_size),
    total_deletion_files: Number(m.total_deletion_files),
    total_data_file_rows: Number(m.total_data_file_rows),
    total_deletion_file_rows: Number(m.total_deletion_file_rows),
    total_rows: Number(m.total_rows),
  };
}
// A LanceDB listVersions() entry as JSON would carry it: `versions --json` records are a
// superset of it (version, timestamp as ISO 8601 UTC, metadata: the counters as strings).
export function lanceRecord(v) {
  return { version: Number(v.version), timestamp: v.timestamp.toISOString(), metadata: { ...v.metadata } };
}
export const LANCEDB_KEYS = ['version', 'timestamp', 'metadata'];
export const SUMMARY_KEYS = ['version', 'timestamp_millis', 'total_fragments', 'total_data_files',
  'total_files_size', 'total_deletion_files', 'total_data_file_rows', 'total_deletion_file_rows',
  'total_rows'];
export function pick(o, keys = SUMMARY_KEYS) {
  const r = {}; for (const k of keys) r[k] = o[k]; return r;
}
