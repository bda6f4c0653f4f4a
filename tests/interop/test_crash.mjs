// Crash safety of `lancever cleanup` and `lancever checkpoint` (issue 8): the CLI is killed
// with SIGKILL at many points of a run on real LanceDB-built datasets (LanceDB 0.31.0 =
// Lance 8.0.0), and after every kill:
//  (a) LanceDB opens the dataset and reads every version that must still exist (everything
//      the uninterrupted run keeps: newer than the cut, tagged, branch bases; and while no file
//      has been deleted yet, every version) with the rows read before the kill; a version
//      the run was removing may be unreadable only once deletions have begun; branches read;
//  (b) `lancever history --json` lists every version that existed before, with
//      is_cleaned_up exactly where the manifest is gone and every other field unchanged;
//      `lancever versions --json` equals LanceDB's listVersions(); every checkpoint file on
//      disk parses and passes its checksum (recomputed here, reliability.mjs);
//  (c) a rerun of the same command succeeds and converges: the file set (names and bytes,
//      checkpoint files included, so a checkpoint rerun is byte-identical) and the history
//      equal those of an uninterrupted run on a twin copy. A merge lock a kill left behind
//      must be gone after the rerun (its holder is dead). A temporary file a kill left
//      behind (possible only between naming a replacement and renaming it over a checkpoint)
//      must be in _checkpoints/ and gone after it is aged an hour and a checkpoint runs.
//
// Kill points, local disk: deterministic, with strace's fault injection. An uninterrupted run
// under `strace -f -e trace=<mutating syscalls>` lists its K mutating syscalls (write, fsync,
// link, rename, unlink, mkdir and their *at forms). strace counts `when=N` per syscall and per
// thread, so kill point i (the k-th call of syscall S) is `-e inject=S:signal=SIGKILL:when=k`;
// the test checks that every such call comes from the main thread (worker threads only read)
// and that the killed run's last traced call is the expected one. The signal is delivered on
// entry: the call itself does not happen. Plus seeded random time-based kills.
// S3 (s3rver behind the test wrapper): a tap (reliability.mjs) in front of the server kills
// lancever at its N-th mutating request (PUT/POST/DELETE), either before forwarding it or after
// the server has executed it but before the answer reaches the client; plus time-based kills.
//
// CI runs a sample of the kill points per case: the first and last call, every link/rename
// and the first deletion, plus a seeded sample up to LV_CRASH_POINTS (default 8), and 2 timed
// kills; on S3 every mutating request and 4 requests of any kind. LV_CRASH_FULL=1 runs every
// kill point of every case (every request on S3), more datasets and commands and 12 timed kills
// per case. LV_CRASH_SEED changes the seed (default 8). Never skips: a missing strace, peer or
// binary fails. (Development: LV_CRASH_ONLY=local|s3, LV_CRASH_CASE=<label substring>.)
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  check, checkEq, finish, scratch, lanceverBin, openDir, lanceVersion, pick, SUMMARY_KEYS,
} from './lib.mjs';
import { lancedb } from './peer.mjs';
import { SCENARIOS, demo, mixedSeven, rows } from './datasets.mjs';
import { startS3, s3Env, s3StorageOptions, listPrefix, BUCKET } from './s3server.mjs';
import {
  prng, sampleOrdered, fileSet, fileSetDiff, copyDir, TMP_RE, CHECKPOINT_RE, localManifestVersions,
  manifestVersions, inspectCheckpoint, run, readVersion, rowsOf, startTap,
} from './reliability.mjs';

process.setMaxListeners(0);
process.env.AWS_EC2_METADATA_DISABLED = 'true';
const FULL = process.env.LV_CRASH_FULL === '1';
const SEED = Number(process.env.LV_CRASH_SEED || 8);
const rng = prng(SEED);
const root = scratch('lv-crash-');
const strace = ['/usr/bin/strace', '/bin/strace'].find((p) => fs.existsSync(p));
if (!strace) {
  console.error('FAIL: strace is needed for the deterministic kill points (tests/install-deps.sh installs it)');
  process.exit(1);
}
// Per case in CI: this many syscall kill points and timed kills. FULL: every kill point.
const CI_POINTS = Number(process.env.LV_CRASH_POINTS || 8);
const TIMED = FULL ? 12 : 2;
const SYSCALLS = ['write', 'pwrite64', 'fsync', 'fdatasync', 'link', 'linkat', 'rename', 'renameat',
  'renameat2', 'unlink', 'unlinkat', 'mkdir', 'mkdirat'];
const CP_FIELDS = ['version', 'timestamp_millis', 'total_fragments', 'total_data_files',
  'total_files_size', 'total_deletion_files', 'total_data_file_rows', 'total_deletion_file_rows',
  'total_rows', 'is_tagged', 'is_cleaned_up', 'transaction_uuid', 'read_version', 'operation_type',
  'transaction_properties'];
const cpFields = (h) => Object.fromEntries(CP_FIELDS.filter((k) => k !== 'is_cleaned_up').map((k) => [k, h[k]]));

const totals = {
  cases: 0, killPoints: 0, syscallKills: 0, timedKills: 0, timedCompleted: 0, runs: 0,
  doomedUnreadable: 0, tempsLeft: 0, locksLeft: 0, s3Cases: 0, s3KillPoints: 0, s3RequestKills: 0, s3AnyKills: 0, s3AnyCompleted: 0, s3TimedKills: 0, s3TimedCompleted: 0,
};
const failuresAt = [];
// Wall time per phase (printed at the end, to keep the CI cost visible).
const phase = {};
const timed = async (name, f) => {
  const t = process.hrtime.bigint();
  try { return await f(); } finally { phase[name] = (phase[name] || 0) + Number(process.hrtime.bigint() - t) / 1e6; }
};
// check/checkEq (lib.mjs), counting failures per case.
let nFail = 0;
const failCount = () => nFail;
const ok = (c, m) => { const r = check(c, m); if (!r) nFail++; return r; };
const okEq = (a, b, m) => { const r = checkEq(a, b, m); if (!r) nFail++; return r; };
const t0 = Date.now();

// ---------------------------------------------------------------- helpers

function lvSync(args) {
  totals.runs++;
  const r = spawnSync(lanceverBin, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}
// Asynchronous (runs alongside LanceDB's reads).
async function lvJsonAsync(label, args) {
  totals.runs++;
  const r = await run(lanceverBin, [...args, '--json']);
  if (!ok(r.status === 0, `${label}: lancever ${args.join(' ')} exited ${r.status}: ${r.stderr}`)) return null;
  try { return JSON.parse(r.stdout); } catch (e) { ok(false, `${label}: not JSON: ${e.message}`); return null; }
}
function lvJsonSync(label, args) {
  const r = lvSync([...args, '--json']);
  if (!ok(r.status === 0, `${label}: lancever ${args.join(' ')} exited ${r.status}: ${r.stderr}`)) return null;
  try { return JSON.parse(r.stdout); } catch (e) { ok(false, `${label}: not JSON: ${e.message}`); return null; }
}
// `lancever <cmd> <dir> <args...>`
const cmdLine = (cmd, dir) => [cmd[0], dir, ...cmd.slice(1)];

// One line of `strace -o` output -> {pid, name, text}; text is the call with the dataset
// path, temporary names, descriptor numbers and the return value normalised away (write's
// buffer is dropped). Descriptor numbers are not the call's identity: the local backend keeps
// some directories open between reads for a time (src/lib/storage/local_dircache.c), so which
// number an unlinkat's directory gets depends on timing.
function parseTrace(text, dir) {
  const out = [];
  const count = new Map();
  let main = null;
  for (const line of text.split('\n')) {
    const m = /^(\d+)\s+([a-z0-9_]+)\((.*)$/.exec(line);
    if (!m) continue; // "<... resumed>", "+++ exited", "--- SIG"
    const pid = Number(m[1]);
    if (main === null) main = pid;
    const name = m[2];
    const key = `${pid} ${name}`;
    const k = (count.get(key) || 0) + 1;
    count.set(key, k);
    let args = m[3].replace(/\s*<unfinished \.\.\.>$/, '').replace(/\)\s+=\s+.*$/, '');
    args = args.split(dir).join('DS').replace(/\.tmp-lancever-[0-9a-f]+/g, '.tmp-lancever-X');
    if (name === 'write' || name === 'pwrite64') args = args.split(',')[0];
    args = args.replace(/(^|, )\d+(?=,|$)/g, '$1FD').replace(/\/proc\/self\/fd\/\d+/g, '/proc/self/fd/FD');
    out.push({ pid, name, k, main: pid === main, text: `${name}(${args})` });
  }
  return out;
}

// Version -> rows, as LanceDB reads them; branches' latest rows.
async function lanceSnapshot(open, branchNames = []) {
  const t = await open();
  const listed = await t.listVersions();
  const versions = listed.map((v) => Number(v.version)).sort((a, b) => a - b);
  const out = { versions, rows: {}, summaries: listed.map((v) => pick(lanceVersion(v), SUMMARY_KEYS)), branches: {} };
  for (const v of versions) {
    const r = await readVersion(t, v);
    if (r.error) throw new Error(`reference read of v${v} failed: ${r.error}`);
    out.rows[v] = r.rows;
  }
  for (const b of branchNames) {
    const bt = await (await t.branches()).checkout(b);
    out.branches[b] = rowsOf(await bt.query().toArray());
  }
  return out;
}

// ---------------------------------------------------------------- the checks

// (a) and (b) after a kill. `env` = {open, history(), versions(), manifests(), checkpoints()}
// abstracts local disk vs S3. `deletionStarted`: some file of the original dataset (other than
// checkpoint files) is gone.
async function checkKilledState(c, L, env, deletionStarted) {
  const all = c.ref.versions;
  const allSet = new Set(all);
  // lancever's answers and the checkpoint checks run alongside LanceDB's reads.
  const live = await env.manifests();
  const histP = timed('history', () => env.history());
  const versP = timed('versions', () => env.versions());
  const cpsP = env.checkpoints().then((cps) => Promise.all(cps.map(async ([name, bytes]) =>
    [name, await timed('inspect', () => inspectCached(bytes, name))])));
  // (a) LanceDB
  const tl0 = process.hrtime.bigint();
  let t;
  try { t = await env.open(); } catch (e) { ok(false, `${L}: LanceDB cannot open the dataset: ${e.message}`); return; }
  let listedRaw;
  try { listedRaw = await t.listVersions(); } catch (e) { ok(false, `${L}: LanceDB listVersions failed: ${e.message}`); return; }
  const listed = listedRaw.map((v) => Number(v.version)).sort((a, b) => a - b);
  ok(listed.every((v) => allSet.has(v)), `${L}: LanceDB lists versions that did not exist: ${listed}`);
  const missingKept = all.filter((v) => !c.doomed.has(v) && !listed.includes(v));
  okEq(missingKept, [], `${L}: versions the run keeps that LanceDB no longer lists`);
  for (const v of listed) {
    const r = await readVersion(t, v);
    if (r.rows) okEq(r.rows, c.ref.rows[v], `${L}: rows of v${v}`);
    else if (c.doomed.has(v) && deletionStarted) totals.doomedUnreadable++;
    else ok(false, `${L}: v${v} is listed but unreadable (${c.doomed.has(v) ? 'being removed, but no file had been deleted yet' : 'kept by the run'}): ${r.error}`);
  }
  for (const [b, want] of Object.entries(c.ref.branches)) {
    try {
      const bt = await (await t.branches()).checkout(b);
      okEq(rowsOf(await bt.query().toArray()), want, `${L}: rows of branch ${b}`);
    } catch (e) { ok(false, `${L}: branch ${b} unreadable: ${e.message.slice(0, 300)}`); }
  }
  phase.lancedb = (phase.lancedb || 0) + Number(process.hrtime.bigint() - tl0) / 1e6;
  // (b) history and versions
  const hist = await histP;
  if (hist) {
    okEq(hist.map((h) => h.version), c.ref.hist.map((h) => h.version), `${L}: history lists every version`);
    const ref = new Map(c.ref.hist.map((h) => [h.version, h]));
    for (const h of hist) {
      ok(h.is_cleaned_up === !live.has(h.version),
        `${L}: history v${h.version} is_cleaned_up=${h.is_cleaned_up} but the manifest is ${live.has(h.version) ? 'there' : 'gone'}`);
      if (ref.has(h.version)) okEq(cpFields(h), cpFields(ref.get(h.version)), `${L}: history v${h.version} fields`);
    }
  }
  const vers = await versP;
  if (vers) {
    okEq(vers.map((v) => pick(v, SUMMARY_KEYS)), listedRaw.map((v) => pick(lanceVersion(v), SUMMARY_KEYS))
      .sort((a, b) => a.version - b.version), `${L}: lancever versions = LanceDB listVersions()`);
  }
  for (const [name, r] of await cpsP) {
    ok(r.ok, `${L}: checkpoint ${name} left by the killed run is unusable: ${r.why}`);
  }
}

// inspectCheckpoint, once per distinct (name, content): most kills leave the same file.
const inspected = new Map();
async function inspectCached(fileOrBytes, name) {
  const bytes = Buffer.isBuffer(fileOrBytes) ? fileOrBytes : fs.readFileSync(fileOrBytes);
  const key = name + ' ' + crypto.createHash('sha256').update(bytes).digest('hex');
  if (!inspected.has(key)) inspected.set(key, await inspectCheckpoint(bytes, name, root));
  return inspected.get(key);
}

// (c) after the rerun: same files (names and bytes) and history as the uninterrupted twin.
// Temporary files are looked at separately (afterKill: the ones a kill may leave).
function checkConverged(c, L, files, hist) {
  const d = fileSetDiff(files.filter((f) => !TMP_RE.test(f.path)), c.twin.files);
  okEq(d, { missing: [], extra: [] }, `${L}: file set after the rerun vs the uninterrupted run`);
  if (hist) okEq(hist, c.twin.hist, `${L}: history after the rerun vs the uninterrupted run`);
}

// ---------------------------------------------------------------- local cases

function localEnv(dir) {
  return {
    open: () => openDir(dir),
    history: () => lvJsonAsync('history', ['history', dir]),
    versions: () => lvJsonAsync('versions', ['versions', dir]),
    manifests: async () => localManifestVersions(dir),
    checkpoints: async () => {
      const d = path.join(dir, '_checkpoints');
      if (!fs.existsSync(d)) return [];
      return fs.readdirSync(d).filter((n) => CHECKPOINT_RE.test(n)).map((n) => [n, path.join(d, n)]);
    },
  };
}

let copyIdx = 0;
const freshCopy = (src) => copyDir(src, path.join(root, `run-${copyIdx++}.lance`));
const dropCopy = (dir) => { if (!process.env.LV_KEEP) fs.promises.rm(dir, { recursive: true, force: true }).catch(() => {}); };

// A checkpoint of `dir` as it was at version v: newer manifests are moved aside meanwhile.
function checkpointAt(dir, v) {
  const vd = path.join(dir, '_versions');
  const aside = path.join(root, `aside-${copyIdx++}`);
  fs.mkdirSync(aside);
  const moved = [];
  for (const n of fs.readdirSync(vd)) {
    const vs = manifestVersions([n]);
    if (vs.size && [...vs][0] > v) { fs.renameSync(path.join(vd, n), path.join(aside, n)); moved.push(n); }
  }
  const r = lvSync(['checkpoint', dir, '--json']);
  for (const n of moved) fs.renameSync(path.join(aside, n), path.join(vd, n));
  fs.rmSync(aside, { recursive: true });
  if (r.status !== 0) throw new Error(`checkpoint at v${v}: ${r.stderr}`);
}

// Stray files of every kind Lance's cleanup rules look at, some older than 7 days.
function addStrays(dir) {
  const old = 10 * 86400e3, hour = 3600e3, now = Date.now();
  for (const [p, age] of [
    ['data/stray-old.lance', old], ['data/stray-new.lance', 0], ['_deletions/0-1-999.arrow', old],
    ['_transactions/99-00000000-0000-0000-0000-000000000000.txn', old],
    ['_indices/11111111-2222-3333-4444-555555555555/page_data.lance', old],
    ['_indices/11111111-2222-3333-4444-666666666666/page_data.lance', hour],
    ['_versions/.tmp_stray_old', old],
  ]) {
    const f = path.join(dir, p);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, 'stray ' + p);
    fs.utimesSync(f, (now - age) / 1000, (now - age) / 1000);
  }
}

async function runLocalCase(c) {
  totals.cases++;
  const L0 = `[${c.label}]`;
  const fails0 = failCount();
  // Reference (before any kill): LanceDB's view, history, files.
  c.ref = await lanceSnapshot(() => openDir(c.pristine), c.branches || []);
  c.ref.hist = lvJsonSync(`${L0} reference history`, ['history', c.pristine]);
  c.pristineFiles = fileSet(c.pristine);
  // The uninterrupted run on a twin, traced: its kill points and its end state.
  const twin = freshCopy(c.pristine);
  const log = path.join(root, 'trace.txt');
  const tr = spawnSync(strace, ['-f', '-qq', '-o', log, '-e', `trace=${SYSCALLS.join(',')}`,
    lanceverBin, ...cmdLine(c.cmd, twin)], { encoding: 'utf8' });
  totals.runs++;
  if (!ok(tr.status === 0, `${L0} uninterrupted run exited ${tr.status}: ${tr.stderr}`)) return;
  const events = parseTrace(fs.readFileSync(log, 'utf8'), twin);
  const offMain = events.filter((e) => !e.main);
  okEq(offMain.map((e) => e.text), [], `${L0} mutating syscalls outside the main thread (kill points would not be deterministic)`);
  c.twin = { files: fileSet(twin), hist: lvJsonSync(`${L0} twin history`, ['history', twin]) };
  const after = await lanceSnapshot(() => openDir(twin));
  c.doomed = new Set(c.ref.versions.filter((v) => !after.versions.includes(v)));
  if (c.expectRemoved !== undefined) ok(c.doomed.size === c.expectRemoved || (c.expectRemoved === '>0' && c.doomed.size > 0),
    `${L0} the uninterrupted run removed ${c.doomed.size} versions, expected ${c.expectRemoved}`);
  // The same command without strace: same end state (determinism), and its duration.
  const plain = freshCopy(c.pristine);
  const pr = await run(lanceverBin, cmdLine(c.cmd, plain));
  totals.runs++;
  const plainMs = pr.ms;
  ok(pr.status === 0, `${L0} plain run exited ${pr.status}: ${pr.stderr}`);
  okEq(fileSetDiff(fileSet(plain), c.twin.files), { missing: [], extra: [] }, `${L0} plain run vs traced run end state`);
  dropCopy(plain);
  dropCopy(twin);

  if (c.expectSyscall) ok(events.some((e) => c.expectSyscall.test(e.name)), `${L0} the run makes no ${c.expectSyscall} call`);
  const K = events.length;
  totals.killPoints += K;
  // CI: always the first and last call, every link/rename (naming a file) and the first
  // deletion; a seeded sample of the others up to CI_POINTS. FULL: every call.
  let chosen = events.map((e, i) => i);
  if (!FULL && K > CI_POINTS) {
    const firstDel = events.findIndex((e) => /^unlink/.test(e.name) && !/tmp-lancever/.test(e.text));
    const must = new Set([0, K - 1, ...chosen.filter((i) => /^(link|rename)/.test(events[i].name))]);
    if (firstDel >= 0) must.add(firstDel);
    const rest = chosen.filter((i) => !must.has(i));
    chosen = [...must, ...sampleOrdered(rng, rest, Math.max(0, CI_POINTS - must.size))].sort((a, b) => a - b);
  }
  for (const i of chosen) {
    const ev = events[i];
    const L = `${L0} kill at syscall ${i + 1}/${K} ${ev.text}`;
    const dir = await timed('copy', () => freshCopy(c.pristine));
    const klog = path.join(root, 'kill.txt');
    const r = await timed('killed run', () => spawnSync(strace, ['-f', '-qq', '-o', klog, '-e', `trace=${ev.name}`,
      '-e', `inject=${ev.name}:signal=SIGKILL:when=${ev.k}`, lanceverBin, ...cmdLine(c.cmd, dir)], { encoding: 'utf8' }));
    totals.runs++;
    totals.syscallKills++;
    const seen = parseTrace(fs.readFileSync(klog, 'utf8'), dir);
    ok(r.signal === 'SIGKILL' || r.status === 137, `${L}: not killed (exit ${r.status}, ${r.signal}): ${r.stderr}`);
    okEq(seen.length ? seen[seen.length - 1].text : null, ev.text, `${L}: the killed call`);
    await afterKill(c, L, dir);
  }
  // Seeded time-based kills (no strace): uniformly over 80% of the plain run's duration as
  // measured from here (process start and exit make up the rest).
  for (let j = 0; j < TIMED; j++) {
    const delay = Math.round(rng() * plainMs * 8) / 10;
    const L = `${L0} timed kill after ${delay} ms`;
    const dir = freshCopy(c.pristine);
    const r = await run(lanceverBin, cmdLine(c.cmd, dir), { killAfterMs: delay });
    totals.runs++;
    if (r.signal === 'SIGKILL') totals.timedKills++;
    else { totals.timedCompleted++; ok(r.status === 0, `${L}: exited ${r.status}: ${r.stderr}`); }
    await afterKill(c, L, dir);
  }
  const nf = failCount() - fails0;
  if (nf) failuresAt.push(`${c.label}: ${nf}`);
  console.log(`${L0} ${K} kill points, ${chosen.length} syscall kills, ${TIMED} timed kills; ` +
    `${c.doomed.size} versions removed by the run; failures ${nf}`);
}

async function afterKill(c, L, dir) {
  const now = new Set(fileSet(dir).map((f) => f.path));
  totals.locksLeft += [...now].filter((p) => p.endsWith('.lance.lock')).length;
  const deletionStarted = c.pristineFiles.some((f) => !now.has(f.path) && !f.path.startsWith('_checkpoints/'));
  await checkKilledState(c, L, localEnv(dir), deletionStarted);
  const rr = await timed('rerun', () => lvSync(cmdLine(c.cmd, dir)));
  if (ok(rr.status === 0, `${L}: rerun exited ${rr.status}: ${rr.stderr}`)) {
    let files = fileSet(dir);
    checkConverged(c, L, files, await timed('history', () => lvJsonSync(`${L} rerun history`, ['history', dir])));
    // A temporary file can outlive a kill only between linking a replacement under its
    // temporary name and renaming it over the target (a checkpoint merge). It is swept by a
    // later create in _checkpoints/ once an hour old: age it, run `lancever checkpoint`.
    const tmp = files.filter((f) => TMP_RE.test(f.path));
    if (tmp.length) {
      totals.tempsLeft += tmp.length;
      okEq(tmp.map((f) => path.dirname(f.path)), tmp.map(() => '_checkpoints'), `${L}: temporary files outside _checkpoints/`);
      const old = (Date.now() - 2 * 3600e3) / 1000;
      for (const f of tmp) fs.utimesSync(path.join(dir, f.path), old, old);
      const r = lvSync(['checkpoint', dir, '--json']);
      ok(r.status === 0, `${L}: checkpoint after aging temporaries: ${r.stderr}`);
      files = fileSet(dir);
      okEq(files.filter((f) => TMP_RE.test(f.path)).map((f) => f.path), [], `${L}: temporary files an hour old are swept by the next checkpoint`);
      checkConverged(c, `${L} (after the sweep)`, files, null);
    }
  }
  dropCopy(dir);
}


// ---------------------------------------------------------------- build and run (local)

const built = path.join(root, 'built');
const names = FULL ? ['ten_writes', 'compaction', 'branches', 'restore', 'v1_names', 'stable_row_ids', 'storage_2_0', 'concurrent']
  : ['ten_writes', 'compaction', 'branches', 'restore', 'v1_names'];
const ds = {};
for (const n of names) ds[n] = await SCENARIOS[n](built, n);
if (FULL) ds.demo = await demo(built, 'demo');
const tb = Date.now();

const CLEAN = ['cleanup', '--older-than', '0s', '--no-error-if-tagged-old-versions', '--json', '--list'];
const cases = [];
let pristineIdx = 0;
function pristine(name, prep) {
  const dir = copyDir(ds[name].dir, path.join(root, `pristine-${pristineIdx++}-${name}.lance`));
  if (prep) prep(dir);
  return dir;
}
for (const n of Object.keys(ds)) {
  const br = Object.keys(ds[n].expectations.branches || {});
  cases.push({ label: `${n} cleanup --older-than 0s`, pristine: pristine(n), cmd: CLEAN, branches: br, expectRemoved: '>0' });
  if (FULL || n === 'ten_writes' || n === 'branches')
    cases.push({ label: `${n} checkpoint`, pristine: pristine(n), cmd: ['checkpoint', '--json'], branches: br, expectRemoved: 0 });
  if (FULL || n === 'restore')
    cases.push({ label: `${n} cleanup --retain-versions 3`, pristine: pristine(n),
      cmd: ['cleanup', '--retain-versions', '3', '--no-error-if-tagged-old-versions', '--json'], branches: br, expectRemoved: '>0' });
}
// Strays of every kind, removed by Lance's rules (--delete-unverified: also the young ones).
for (const extra of FULL ? [[], ['--delete-unverified']] : [['--delete-unverified']])
  cases.push({ label: `compaction + strays cleanup ${extra.join(' ')}`, pristine: pristine('compaction', addStrays),
    cmd: [...CLEAN, ...extra], expectRemoved: '>0' });
// Earlier checkpoints: the cleanup's checkpoint merges them and prunes the oldest.
cases.push({ label: 'ten_writes with checkpoints at v3, v6: cleanup', pristine: pristine('ten_writes', (d) => { checkpointAt(d, 3); checkpointAt(d, 6); }),
  cmd: CLEAN, expectRemoved: '>0' });
cases.push({ label: 'ten_writes with checkpoints at v3, v6: checkpoint --max-files 1', pristine: pristine('ten_writes', (d) => { checkpointAt(d, 3); checkpointAt(d, 6); }),
  cmd: ['checkpoint', '--max-files', '1', '--json'], expectRemoved: 0 });
// A checkpoint of the same state already exists (`lancever checkpoint`, then cleanup): the
// cleanup's checkpoint has the same name and more is_cleaned_up flags, so it replaces the file
// (merge; written under a temporary name, then renamed over it).
cases.push({ label: 'ten_writes checkpointed, then cleanup (checkpoint merge)', pristine: pristine('ten_writes', (d) => {
  const r = lvSync(['checkpoint', d, '--json']);
  if (r.status !== 0) throw new Error('prep checkpoint: ' + r.stderr);
}), cmd: CLEAN, expectRemoved: '>0', expectSyscall: /^rename/ });
// Sealing archive segments (issue 18): tiny segments, so every run seals several; and expire
// (manifests only, history first).
const SEAL = ['--segment-rows', '2', '--max-entries', '3'];
cases.push({ label: 'ten_writes checkpoint sealing segments', pristine: pristine('ten_writes'),
  cmd: ['checkpoint', ...SEAL, '--json'], expectRemoved: 0 });
cases.push({ label: 'ten_writes cleanup sealing segments', pristine: pristine('ten_writes'),
  cmd: [...CLEAN, ...SEAL], expectRemoved: '>0' });
cases.push({ label: 'ten_writes expire --retain-versions 2 sealing segments', pristine: pristine('ten_writes'),
  cmd: ['expire', '--retain-versions', '2', '--no-error-if-tagged-old-versions', ...SEAL, '--json'], expectRemoved: '>0' });
cases.push({ label: 'restore expire --keep-one-per 1d', pristine: pristine('restore'),
  cmd: ['expire', '--older-than', '0s', '--keep-one-per', '1d', '--no-error-if-tagged-old-versions', ...SEAL, '--json'],
  expectRemoved: '>0' }); /* one per day kept: the newest */
// A checkpoint after a cleanup and two more commits: the file holds cleaned-up rows and a tail.
{
  const dir = pristine('restore', (d) => {
    const r = lvSync(['cleanup', d, '--before-version', '5', '--json']);
    if (r.status !== 0) throw new Error('prep cleanup: ' + r.stderr);
  });
  const t = await openDir(dir);
  await t.add(rows(500, 2));
  await t.add(rows(600, 1));
  cases.push({ label: 'restore after cleanup + 2 appends: checkpoint', pristine: dir, cmd: ['checkpoint', '--json'], expectRemoved: 0 });
  cases.push({ label: 'restore after cleanup + 2 appends: cleanup --older-than 0s', pristine: dir, cmd: CLEAN, expectRemoved: '>0' });
}

console.log(`test_crash: seed ${SEED}, ${FULL ? 'FULL campaign (every kill point)' : `CI sample (${CI_POINTS} syscall kill points per case)`}, ` +
  `${cases.length} local cases; datasets built in ${((tb - t0) / 1000).toFixed(1)} s`);
// LV_CRASH_ONLY=local|s3 runs one half (for development; CI runs both).
const ONLY = process.env.LV_CRASH_ONLY || '';
// LV_CRASH_CASE=substring: only the local cases whose label contains it (development).
const pick1 = process.env.LV_CRASH_CASE || '';
if (ONLY !== 's3') for (const c of cases) if (c.label.includes(pick1)) await runLocalCase(c);
const tl = Date.now();

// ---------------------------------------------------------------- S3

if (ONLY !== 'local') await runS3();

const te = Date.now();
console.log(`test_crash totals: local ${totals.cases} cases, ${totals.killPoints} kill points, ` +
  `${totals.syscallKills} syscall kills, ${totals.timedKills} timed kills (+${totals.timedCompleted} runs finished before the timer), ` +
  `${totals.doomedUnreadable} reads of a version being removed failed after its files had begun to go (allowed), ` +
  `${totals.tempsLeft} temporary files left by a kill (swept once an hour old), ` +
  `${totals.locksLeft} merge locks left by a kill (broken by the rerun: holder dead); ` +
  `S3 ${totals.s3Cases} cases, ${totals.s3KillPoints} mutating requests, ${totals.s3RequestKills} request kills ` +
  `(${totals.s3AnyKills} at requests of any kind; ${totals.s3AnyCompleted} runs made fewer requests than the kill point), ` +
  `${totals.s3TimedKills} timed kills (+${totals.s3TimedCompleted} finished first); ${totals.runs} lancever runs; ` +
  `local ${((tl - tb) / 1000).toFixed(1)} s, S3 ${((te - tl) / 1000).toFixed(1)} s, total ${((te - t0) / 1000).toFixed(1)} s`);
console.log('wall time by phase (s): ' + Object.entries(phase).map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}`).join(', '));
if (failuresAt.length) console.log('failures by case: ' + failuresAt.join('; '));
finish('test_crash');

// ---------------------------------------------------------------- S3 cases

// Every object under `prefix` as s3rver stores it: sorted [{path, size, hash}] like fileSet().
function s3FileSet(s3, prefix) {
  return listPrefix(s3, prefix).map((k) => {
    const b = fs.readFileSync(s3.objectFile(`${prefix}/${k}`));
    return { path: k, size: b.length, hash: crypto.createHash('sha256').update(b).digest('hex').slice(0, 16) };
  });
}

async function runS3() {
  const s3 = await startS3({ strict: true });
  const tap = await startTap(s3.endpoint);
  const direct = s3Env(s3);
  const viaTap = s3Env({ endpoint: tap.endpoint });
  const opts = { storageOptions: s3StorageOptions(s3) };
  const connect = () => lancedb.connect(`s3://${BUCKET}/db`, opts);
  const uri = (name) => `s3://${BUCKET}/db/${name}.lance`;
  const prefixOf = (name) => `db/${name}.lance`;
  const storeDir = (name) => path.join(s3.dir, BUCKET, 'db', `${name}.lance`);
  const lvS3 = async (label, args) => {
    const r = await run(lanceverBin, [...args, '--json'], { env: direct });
    totals.runs++;
    if (!ok(r.status === 0, `${label}: lancever ${args.join(' ')} exited ${r.status}: ${r.stderr}`)) return null;
    try { return JSON.parse(r.stdout); } catch (e) { ok(false, `${label}: not JSON: ${e.message}`); return null; }
  };

  // A dataset built by LanceDB on S3: appends, delete, update, btree index, tag, compaction.
  const db = await connect();
  const t = await mixedSeven(db, 'base');                            // v1..v7
  await t.optimize({ cleanupOlderThan: new Date(0) });               // v8 v9 (v10 index)
  await t.delete('id = 16');
  await t.add(rows(100, 3));
  let copies = 0;
  const copyOf = (src) => {
    const name = `c${copies++}`;
    fs.cpSync(storeDir(src), storeDir(name), { recursive: true, preserveTimestamps: true });
    return name;
  };
  const drop = (name) => { if (!process.env.LV_KEEP) fs.rmSync(storeDir(name), { recursive: true, force: true }); };
  const envOf = (name) => ({
    open: async () => (await connect()).openTable(name),
    history: () => lvS3(`${name} history`, ['history', uri(name)]),
    versions: () => lvS3(`${name} versions`, ['versions', uri(name)]),
    manifests: async () => manifestVersions(listPrefix(s3, `${prefixOf(name)}/_versions`)),
    checkpoints: async () => listPrefix(s3, `${prefixOf(name)}/_checkpoints`).filter((k) => CHECKPOINT_RE.test(k))
      .map((k) => [k, fs.readFileSync(s3.objectFile(`${prefixOf(name)}/_checkpoints/${k}`))]),
  });
  // Runs the case's command on copy `name` through the tap; `hook(info, phase, child)`.
  const runTap = async (c, name, hook) => {
    let child = null;
    tap.setHook(hook ? (info, phase) => hook(info, phase, child) : null);
    const r = await run(lanceverBin, cmdLine(c.cmd, uri(name)), { env: viaTap, onSpawn: (p) => { child = p; } });
    tap.setHook(null);
    totals.runs++;
    return r;
  };
  const reqText = (info, name) => `${info.method} ${info.key.split(prefixOf(name)).join('DS')}${info.query ? '?' + info.query : ''}`;

  const cases = [
    { label: 'S3 cleanup --older-than 0s', cmd: CLEAN, expectRemoved: '>0' },
    { label: 'S3 checkpoint', cmd: ['checkpoint', '--json'], expectRemoved: 0 },
    // The same state checkpointed first: the cleanup's checkpoint replaces it under the merge
    // lock (create lock, read, PUT, delete lock: kill points on each).
    { label: 'S3 checkpointed, then cleanup (checkpoint merge)', cmd: CLEAN, expectRemoved: '>0', prep: ['checkpoint', '--json'] },
  ];
  if (FULL) cases.push({ label: 'S3 cleanup --retain-versions 3', cmd: ['cleanup', '--retain-versions', '3', '--no-error-if-tagged-old-versions', '--json'], expectRemoved: '>0' });
  for (const c of cases) {
    totals.s3Cases++;
    const L0 = `[${c.label}]`;
    const fails0 = failCount();
    const src = copyOf('base');
    if (c.prep) {
      const r = await run(lanceverBin, cmdLine(c.prep, uri(src)), { env: direct });
      if (!ok(r.status === 0, `${L0} preparation ${c.prep.join(' ')}: ${r.stderr}`)) continue;
    }
    c.ref = await lanceSnapshot(async () => (await connect()).openTable(src));
    c.ref.hist = await lvS3(`${L0} reference history`, ['history', uri(src)]);
    c.pristineFiles = s3FileSet(s3, prefixOf(src));
    // Uninterrupted twin through the tap: its mutating requests are the kill points.
    const twin = copyOf(src);
    const seq = [];
    let nreq = 0;
    const tr = await runTap(c, twin, (info, ph) => {
      if (ph === 'request') nreq++;
      if (info.mutating && ph === 'response') seq.push(reqText(info, twin) + ` -> ${info.status}`);
      return false;
    });
    if (!ok(tr.status === 0, `${L0} uninterrupted run exited ${tr.status}: ${tr.stderr}`)) continue;
    c.twin = { files: s3FileSet(s3, prefixOf(twin)), hist: await lvS3(`${L0} twin history`, ['history', uri(twin)]) };
    const after = await lanceSnapshot(async () => (await connect()).openTable(twin));
    c.doomed = new Set(c.ref.versions.filter((v) => !after.versions.includes(v)));
    if (c.expectRemoved === '>0') ok(c.doomed.size > 0, `${L0} the uninterrupted run removed no version`);
    drop(twin);
    const K = seq.length;
    totals.s3KillPoints += K;
    const afterKillS3 = async (L, name) => {
      const now = new Set(listPrefix(s3, prefixOf(name)));
      totals.locksLeft += [...now].filter((p) => p.endsWith('.lance.lock')).length;
      const deletionStarted = c.pristineFiles.some((f) => !now.has(f.path) && !f.path.startsWith('_checkpoints/'));
      await checkKilledState(c, L, envOf(name), deletionStarted);
      const rr = await run(lanceverBin, cmdLine(c.cmd, uri(name)), { env: direct });
      totals.runs++;
      if (ok(rr.status === 0, `${L}: rerun exited ${rr.status}: ${rr.stderr}`))
        checkConverged(c, L, s3FileSet(s3, prefixOf(name)), await lvS3(`${L} rerun history`, ['history', uri(name)]));
      drop(name);
    };
    // Kill at mutating request i, before the server sees it or after it executed it.
    for (let i = 1; i <= K; i++) {
      for (const when of ['before', 'after']) {
        const name = copyOf(src);
        const L = `${L0} kill ${when} request ${i}/${K} ${seq[i - 1]}`;
        let n = 0, hit = null;
        const r = await runTap(c, name, (info, phase, child) => {
          if (!info.mutating) return false;
          if (phase === 'request') info.idx = ++n;
          if (info.idx !== i || phase !== (when === 'before' ? 'request' : 'response')) return false;
          hit = reqText(info, name);
          child.kill('SIGKILL');
          return true;
        });
        totals.s3RequestKills++;
        ok(r.signal === 'SIGKILL', `${L}: not killed (exit ${r.status}): ${r.stderr}`);
        okEq(hit, seq[i - 1].replace(/ -> \d+$/, ''), `${L}: the request it was killed at`);
        await afterKillS3(L, name);
      }
    }
    // Kill at the N-th request of any kind (reads run in parallel, so which request is N-th
    // varies, and so can the number of requests by one or two: a run that ends before its N-th
    // is counted as finished, not killed): a seeded sample, all in FULL.
    const anyN = FULL ? Array.from({ length: nreq }, (_, i) => i + 1)
      : sampleOrdered(rng, Array.from({ length: nreq }, (_, i) => i + 1), 4);
    for (const i of anyN) {
      const name = copyOf(src);
      const L = `${L0} kill before request ${i}/${nreq} (any kind)`;
      let n = 0;
      const r = await runTap(c, name, (info, ph, child) => {
        if (ph !== 'request' || ++n !== i) return false;
        child.kill('SIGKILL');
        return true;
      });
      if (r.signal === 'SIGKILL') {
        totals.s3RequestKills++;
        totals.s3AnyKills++;
      } else {
        totals.s3AnyCompleted++;
        ok(r.status === 0 && n < i, `${L}: exited ${r.status} after ${n} requests: ${r.stderr}`);
      }
      await afterKillS3(L, name);
    }
    // Seeded time-based kills.
    const pn = copyOf(src);
    const pr = await run(lanceverBin, cmdLine(c.cmd, uri(pn)), { env: direct });
    ok(pr.status === 0, `${L0} plain run exited ${pr.status}: ${pr.stderr}`);
    drop(pn);
    for (let j = 0; j < TIMED * 2; j++) {
      const delay = Math.round(rng() * pr.ms * 10) / 10;
      const name = copyOf(src);
      const L = `${L0} timed kill after ${delay} ms`;
      const r = await run(lanceverBin, cmdLine(c.cmd, uri(name)), { env: direct, killAfterMs: delay });
      totals.runs++;
      if (r.signal === 'SIGKILL') totals.s3TimedKills++;
      else { totals.s3TimedCompleted++; ok(r.status === 0, `${L}: exited ${r.status}: ${r.stderr}`); }
      await afterKillS3(L, name);
    }
    drop(src);
    const nf = failCount() - fails0;
    if (nf) failuresAt.push(`${c.label}: ${nf}`);
    console.log(`${L0} ${nreq} requests, ${K} mutating (${seq.join(', ')}); ${2 * K} kills at mutating requests, ` +
      `${anyN.length} at requests of any kind, ${TIMED * 2} timed kills; ` +
      `${c.doomed.size} versions removed by the run; failures ${nf}`);
  }
  await tap.stop();
  await s3.stop();
}
