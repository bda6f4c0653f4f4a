// Shared helpers of the bench/ harness: locating the binaries, running them asynchronously
// (an in-process s3rver must keep answering while they run), timing with bench/rusage,
// in-process timing with bench/time_versions (each also under the issue's GLIBC_TUNABLES), LanceDB in a child process (bench/lance_child.mjs),
// the machine description, and number formatting.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..');
export const bin = process.env.LANCEVER_BIN || path.join(repo, 'build-bench/lancever');
export const buildDir = process.env.LANCEVER_BUILD_DIR || path.dirname(bin);
export const tool = (name) => path.join(buildDir, name);
export const U64_MAX = (1n << 64n) - 1n;

export function requireBinaries(...names) {
  for (const f of [bin, ...names.map(tool)])
    if (!fs.existsSync(f)) { console.error(`bench: ${f} not found (bash bench/run.sh builds it)`); process.exit(1); }
}

export function parseArgs(argv = process.argv.slice(2)) {
  return {
    has: (name) => argv.includes(name),
    get: (name, dflt) => { const i = argv.indexOf(name); return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt; },
    list: (name, dflt) => { const i = argv.indexOf(name); return (i >= 0 ? argv[i + 1] : dflt).split(',').filter(Boolean); },
  };
}

export const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

// Runs a command to completion; resolves {status, stdout, stderr, ms}; rejects on non-zero exit
// unless opts.allowFail.
export function run(cmd, argv, opts = {}) {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    // opts.discardStdout: output too big for a string (a 10M-version history) goes to /dev/null
    const p = spawn(cmd, argv, { env: opts.env || process.env, stdio: ['ignore', opts.discardStdout ? 'ignore' : 'pipe', 'pipe'] });
    let out = '', err = '';
    if (p.stdout) p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('error', reject);
    p.on('close', (code, sig) => {
      const r = { status: code === null ? 128 : code, stdout: out, stderr: err, ms: nowMs() - t0, signal: sig };
      if (r.status !== 0 && !opts.allowFail)
        reject(new Error(`${path.basename(cmd)} ${argv.join(' ')} exited ${r.status}${sig ? ` (${sig})` : ''}: ${err.slice(-2000)}`));
      else resolve(r);
    });
  });
}
const lastJson = (s) => JSON.parse(s.trim().split('\n').pop());

// Issue 30: every repeatable lancever measurement is also run with glibc's heap kept (the
// issue's GLIBC_TUNABLES), right after the default one; the result carries `tuned` (the same
// figures under those tunables) and `tuned_ratio` (default / tuned of the figure named by
// `tuned_of`).  The goal is every ratio within 1.3x.  Skipped when the caller's environment
// already sets GLIBC_TUNABLES, or with LV_BENCH_TUNED=0.
export const TUNABLES = 'glibc.malloc.trim_threshold=1000000000:glibc.malloc.mmap_threshold=1000000000';
const pairing = (env) => process.env.LV_BENCH_TUNED !== '0' && !(env || process.env).GLIBC_TUNABLES;
const tunedEnv = (env) => ({ ...(env || process.env), GLIBC_TUNABLES: TUNABLES });
function paired(r, t, keys) {
  r.tuned = Object.fromEntries(keys.concat(['maxrss_kb', 'minflt']).filter((k) => t[k] !== undefined).map((k) => [k, t[k]]));
  r.tuned_of = keys[0];
  r.tuned_ratio = r[keys[0]] / t[keys[0]];
  return r;
}
// A whole `lancever ARGS` process: median wall time of `repeat` runs after a warm-up, and the
// peak RSS (bench/rusage); then the same under TUNABLES.
export async function timeProcess(argv, { repeat = 5, env } = {}) {
  const once = async (e) => lastJson((await run(tool('rusage'), ['--repeat', String(repeat), '--', bin, ...argv], { env: e })).stdout);
  const r = await once(env);
  return pairing(env) ? paired(r, await once(tunedEnv(env)), ['median_ms']) : r;
}
// lv_dataset_open + lv_versions in-process (bench/time_versions): median, rung, peak RSS; then
// the same under TUNABLES.
export async function timeInProcess(uri, { repeat = 9, env } = {}) {
  const once = async (e) => lastJson((await run(tool('time_versions'), [uri, '--repeat', String(repeat)], { env: e })).stdout);
  const r = await once(env);
  return pairing(env) ? paired(r, await once(tunedEnv(env)), ['open_versions_ms', 'versions_ms']) : r;
}
// The `--stats` line of one lancever run: rung, manifests read, requests, bytes read.
export async function lvStats(argv, { env } = {}) {
  const r = await run(bin, [...argv, '--stats'], { env });
  const m = /answered from ([a-z ]+); manifests read (\d+).*requests (\d+), bytes read (\d+)/.exec(r.stderr);
  if (!m) throw new Error(`no --stats line from lancever ${argv.join(' ')}: ${r.stderr}`);
  return { rung: m[1], manifests_read: Number(m[2]), requests: Number(m[3]), bytes_read: Number(m[4]) };
}
// LanceDB 0.31.0 in a child process (bench/lance_child.mjs).
export async function lanceChild(args, { storageOptions, env } = {}) {
  const e = { ...(env || process.env) };
  if (storageOptions) e.LV_LANCE_STORAGE_OPTIONS = JSON.stringify(storageOptions);
  const r = await run(process.execPath, [path.join(here, 'lance_child.mjs'), ...args], { env: e });
  return lastJson(r.stdout);
}

// Removes versions > n of a dataset directory made by gen_dataset (manifests, their
// transaction files), every checkpoint, and rewrites the version hint.  Files are unlinked,
// never rewritten in place, so a hard-linked copy leaves its original intact.
export function truncateDataset(dir, n) {
  fs.rmSync(path.join(dir, '_checkpoints'), { recursive: true, force: true });
  for (const name of fs.readdirSync(path.join(dir, '_versions'))) {
    const m = /^(\d{20})\.manifest$/.exec(name);
    if (m && U64_MAX - BigInt(m[1]) > BigInt(n)) fs.rmSync(path.join(dir, '_versions', name));
  }
  for (const name of fs.readdirSync(path.join(dir, '_transactions')))
    if (Number(name.split('-')[0]) >= n) fs.rmSync(path.join(dir, '_transactions', name));
  const hint = path.join(dir, '_versions', 'latest_version_hint.json');
  fs.rmSync(hint, { force: true });
  fs.writeFileSync(hint, `{"version":${n}}`);
}

export function machine() {
  const cpus = os.cpus();
  const read = (f) => { try { return fs.readFileSync(f, 'utf8'); } catch { return ''; } };
  const osName = (/PRETTY_NAME="([^"]+)"/.exec(read('/etc/os-release')) || [])[1] || process.platform;
  const fsType = (() => {
    const mounts = read('/proc/mounts').split('\n').map((l) => l.split(' ')).filter((f) => f.length > 2);
    let best = null;
    for (const [, mnt, type] of mounts) if (repo.startsWith(mnt) && (!best || mnt.length > best[0].length)) best = [mnt, type];
    return best ? best[1] : '?';
  })();
  return {
    cpu: cpus[0] ? cpus[0].model.trim() : '?', cores: cpus.length,
    mem_gb: Math.round(os.totalmem() / 2 ** 30), os: osName, kernel: os.release(), fs: fsType,
    node: process.version, lancedb: '0.31.0 (Lance 8.0.0)',
  };
}

export const fk = (f) => (f >= 1000 && f % 1000 === 0 ? `${f / 1000}K` : String(f));
export const fms = (x) => (x === null || x === undefined ? '-' : x < 1 ? x.toFixed(3) : x < 10 ? x.toFixed(2) : x < 1000 ? x.toFixed(1) : x.toFixed(0));
export const fx = (a, b) => (a && b ? `${(a / b).toFixed(a / b < 10 ? 1 : 0)}x` : '-');
export const fmb = (kb) => (kb ? (kb / 1024).toFixed(kb < 10240 ? 1 : 0) : '-');
