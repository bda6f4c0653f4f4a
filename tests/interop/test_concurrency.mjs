// Concurrency of lancever with itself and with a LanceDB writer (issue 8), on local disk and on
// S3 (s3rver behind the test wrapper): for a fixed number of rounds, at the same time,
//   * a LanceDB 0.31.0 writer commits batches of rows with known ids (appends, plus deletes and
//     updates of known id ranges, a compaction (optimize) every 12 rounds and a tag every 10),
//     keeping a model of the rows of every version it committed;
//   * 4 loops of `lancever cleanup --older-than 0s --retain-versions K` (K = 2, 3, 5, 8), each
//     with its own archive segment size (5, 4, the default, 7) and max entries;
//   * 2 loops of `lancever checkpoint` (segments of 5 and of 4 with --max-files 3);
//   * 1 loop of `lancever history --json`, each answer checked: versions 1..n with no gap,
//     n at least the writer's version when the call started, a version never comes back to life
//     after being reported cleaned up, and each version's fields never change;
//   * a watcher recording every checkpoint file's bytes as it appears (local: polling
//     _checkpoints/; S3: the PUT bodies, through a tap in front of the server).
// At the end:
//   * no lost rows: the latest version has exactly the rows the writer committed, and every
//     version LanceDB lists reads back with the rows the model says it had;
//   * no lost history: `lancever history` lists 1..latest, is_cleaned_up exactly where the
//     manifest is gone; `lancever versions` = LanceDB's listVersions(); tagged versions live;
//   * no conflicting checkpoints: every checkpoint file (on disk at the end, and every version
//     of every file seen during the run) parses, is named for its newest row and passes its
//     checksum (recomputed here); two different contents under one name only as the merge rule
//     allows (the later one has every row of the earlier with the same fields, flags only set:
//     merges run under a lock, so one never drops another's flags); nothing but checkpoint
//     files is left in _checkpoints/ (merge locks released, no temporaries);
//   * no errors but the documented ones: a cleanup may stop because a manifest it planned with
//     was removed by another cleanup ("vanished during cleanup"); everything else fails.
// Rounds: LV_CONC_ROUNDS (default 40 local, 16 S3); LV_CRASH_FULL=1 or LV_CONC_FULL=1: 200 / 60.
// LV_CONC_SEED changes the writer's seed (default 5). Never skips.
const SEGMENT_RE = /^(archive\/)?\d{20}-\d{20}\.lance$/;
import fs from 'node:fs';
import path from 'node:path';
import { check, checkEq, finish, scratch, lanceverBin, openDir, lanceVersion, pick, SUMMARY_KEYS } from './lib.mjs';
import { lancedb } from './peer.mjs';
import { rows } from './datasets.mjs';
import { startS3, s3Env, s3StorageOptions, listPrefix, BUCKET } from './s3server.mjs';
import {
  prng, inspectCheckpoint, rowsSupersede, CHECKPOINT_RE, localManifestVersions, manifestVersions, run, readVersion,
  rowsOf, startTap,
} from './reliability.mjs';

process.setMaxListeners(0);
process.env.AWS_EC2_METADATA_DISABLED = 'true';
const FULL = process.env.LV_CONC_FULL === '1' || process.env.LV_CRASH_FULL === '1';
const SEED = Number(process.env.LV_CONC_SEED || 5);
const ROUNDS_LOCAL = Number(process.env.LV_CONC_ROUNDS || (FULL ? 200 : 40));
const ROUNDS_S3 = Number(process.env.LV_CONC_ROUNDS_S3 || (FULL ? 60 : 16));
const root = scratch('lv-conc-');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const CLEANUP_RETAIN = [2, 3, 5, 8];
// Writers with different archive settings (issue 24, case 3): each cleanup and checkpoint loop
// seals segments of its own size, so racing merges must fold overlapping indexes.
const CLEANUP_ARCHIVE = [['--segment-rows', '5', '--max-entries', '20'], ['--segment-rows', '4', '--max-entries', '15'],
  [], ['--segment-rows', '7', '--max-entries', '30']];
const CHECKPOINT_ARGS = [['--segment-rows', '5', '--max-entries', '20'], ['--max-files', '3', '--segment-rows', '4', '--max-entries', '15']];
// Errors a loop may end with: a cleanup whose plan was overtaken by another cleanup stops
// before deleting anything it has not re-checked, and says so.
const DOCUMENTED = [
  ['cleanup', /manifest \S+ vanished during cleanup \(a concurrent cleanup\?\); aborting/],
];

// ---------------------------------------------------------------- the writer

// Commits `rounds` operations through table handle `t`; returns {modelAt: {v: rows}, tags, latest}.
async function writer(t, rounds, rng, state) {
  const model = new Map();
  const snap = () => [...model.values()].sort((a, b) => a.id - b.id).map((r) => ({ ...r }));
  for (const r of rows(0, 10)) model.set(r.id, { ...r });
  let v = await t.version();
  const modelAt = { [v]: snap() };
  const tags = {};
  let next = 10;
  for (let i = 0; i < rounds; i++) {
    const ids = [...model.keys()].sort((a, b) => a - b);
    let op;
    if (i % 12 === 11) {
      // Compaction (with LanceDB's own prune, cutoff far in the past: it removes nothing).
      // LanceDB's prune reads every manifest it listed and fails on one a lancever cleanup
      // removed meanwhile (Lance's cleanup does not expect a concurrent one): tolerated, and
      // counted, only after the compaction itself has committed (2 versions).
      op = 'optimize';
      try {
        await t.optimize({ cleanupOlderThan: new Date(0) });
      } catch (e) {
        await t.checkoutLatest();
        const after = await t.version();
        if (!/not found/i.test(e.message) || after !== v + 2) throw e;
        state.lancePruneErrors.push(e.message.split('\n')[0].slice(0, 200));
      }
    } else if (i % 6 === 5 && ids.length > 8) {
      const lo = ids[Math.floor(rng() * (ids.length - 3))];
      op = `delete id >= ${lo} AND id < ${lo + 3}`;
      await t.delete(`id >= ${lo} AND id < ${lo + 3}`);
      for (const id of ids) if (id >= lo && id < lo + 3) model.delete(id);
    } else if (i % 6 === 2 && ids.length > 8) {
      const lo = ids[Math.floor(rng() * (ids.length - 5))];
      op = `update id >= ${lo} AND id < ${lo + 5}`;
      await t.update({ where: `id >= ${lo} AND id < ${lo + 5}`, valuesSql: { val: 'val + 1' } });
      for (const id of ids) if (id >= lo && id < lo + 5) model.get(id).val += 1;
    } else {
      const n = 1 + Math.floor(rng() * 8);
      op = `append ${n}`;
      await t.add(rows(next, n));
      for (const r of rows(next, n)) model.set(r.id, { ...r });
      next += n;
    }
    const nv = await t.version();
    // optimize commits ReserveFragments + Rewrite (+ CreateIndex with an index), or nothing
    // if there is nothing to compact: the rows stay the same.
    if (op === 'optimize' ? nv < v || nv > v + 3 : nv !== v + 1)
      throw new Error(`writer: ${op} went from version ${v} to ${nv}`);
    for (let k = v + 1; k <= nv; k++) modelAt[k] = snap();
    v = nv;
    state.committed = v;
    if (i % 10 === 9) {
      await (await t.tags()).create(`w${v}`, v);
      tags[`w${v}`] = v;
    }
  }
  return { modelAt, tags, latest: v };
}

// ---------------------------------------------------------------- one campaign

// `ds`: {label, target (path or s3:// URI), env, open(), manifests(), checkpointFiles(),
// startWatch(onFile) -> stop()}.
async function campaign(ds, rounds) {
  const L = `[${ds.label}]`;
  const t0 = Date.now();
  const state = { committed: 0, stop: false, lancePruneErrors: [] };
  const counts = { cleanup: 0, checkpoint: 0, history: 0, errors: {}, unexpected: 0 };
  const seen = new Map(); // checkpoint name -> [Buffer] distinct contents in the order seen
  const stopWatch = ds.startWatch((name, bytes) => {
    const list = seen.get(name) || [];
    if (!list.some((b) => b.equals(bytes))) list.push(bytes);
    seen.set(name, list);
  });
  const histState = new Map(); // version -> {fields, cleaned}
  const loop = async (kind, args) => {
    while (!state.stop) {
      const committedBefore = state.committed;
      const r = await run(lanceverBin, args, { env: ds.env });
      counts[kind]++;
      if (r.status !== 0 || r.signal) {
        const doc = DOCUMENTED.find(([k, re]) => k === kind && re.test(r.stderr));
        if (doc) counts.errors[doc[1].source] = (counts.errors[doc[1].source] || 0) + 1;
        else { counts.unexpected++; check(false, `${L} ${args.slice(0, 1).concat(args.slice(2)).join(' ')}: exit ${r.status}${r.signal ? ' ' + r.signal : ''}: ${r.stderr.trim()}`); }
        continue;
      }
      if (kind !== 'history') continue;
      let h;
      try { h = JSON.parse(r.stdout); } catch (e) { check(false, `${L} history output is not JSON: ${e.message}`); continue; }
      const vs = h.map((x) => x.version);
      const n = vs.length ? vs[vs.length - 1] : 0;
      checkEq(vs, Array.from({ length: n }, (_, i) => i + 1), `${L} a concurrent history call lists 1..${n} without gaps`);
      check(n >= committedBefore, `${L} a concurrent history call ends at ${n}, but ${committedBefore} was committed before it started`);
      for (const x of h) {
        const fields = JSON.stringify(pick(x, [...SUMMARY_KEYS, 'transaction_uuid', 'read_version', 'operation_type', 'transaction_properties']));
        const prev = histState.get(x.version);
        if (prev) {
          check(prev.fields === fields, `${L} history v${x.version} changed between calls:\n    ${prev.fields}\n    ${fields}`);
          check(!(prev.cleaned && !x.is_cleaned_up), `${L} history v${x.version} came back to life after being reported cleaned up`);
        }
        histState.set(x.version, { fields, cleaned: x.is_cleaned_up || (prev && prev.cleaned) });
      }
    }
  };
  // The writer's handle is opened before the loops start.
  const t = await ds.open();
  const loops = [
    ...CLEANUP_RETAIN.map((k, i) => loop('cleanup', ['cleanup', ds.target, '--older-than', '0s', '--retain-versions', String(k),
      ...CLEANUP_ARCHIVE[i], '--no-error-if-tagged-old-versions', '--json'])),
    ...CHECKPOINT_ARGS.map((a) => loop('checkpoint', ['checkpoint', ds.target, ...a, '--json'])),
    loop('history', ['history', ds.target, '--json']),
  ];
  let w;
  try {
    w = await writer(t, rounds, prng(SEED), state);
  } catch (e) {
    check(false, `${L} the LanceDB writer failed: ${e.message}`);
  }
  state.stop = true;
  await Promise.all(loops);
  await stopWatch();
  const tw = Date.now();
  if (!w) return;

  // ---- no lost rows
  const t2 = await ds.open();
  const latest = await t2.version();
  checkEq(latest, w.latest, `${L} latest version`);
  const lr = rowsOf(await t2.query().toArray());
  checkEq(lr, w.modelAt[w.latest], `${L} latest rows = the rows the writer committed`);
  const listed = await t2.listVersions();
  const lvs = listed.map((x) => Number(x.version)).sort((a, b) => a - b);
  let readable = 0;
  for (const v of lvs) {
    const r = await readVersion(t2, v);
    if (check(!r.error, `${L} v${v} is listed but unreadable: ${r.error}`)) {
      checkEq(r.rows, w.modelAt[v], `${L} rows of retained v${v}`);
      readable++;
    }
  }
  for (const [name, v] of Object.entries(w.tags)) check(lvs.includes(v), `${L} tagged version ${v} (${name}) was removed`);
  // ---- no lost history
  const live = await ds.manifests();
  const hr = await run(lanceverBin, ['history', ds.target, '--json'], { env: ds.env });
  if (check(hr.status === 0, `${L} final history: ${hr.stderr}`)) {
    const h = JSON.parse(hr.stdout);
    checkEq(h.map((x) => x.version), Array.from({ length: latest }, (_, i) => i + 1), `${L} history lists 1..${latest}`);
    for (const x of h)
      check(x.is_cleaned_up === !live.has(x.version), `${L} history v${x.version} is_cleaned_up=${x.is_cleaned_up}, manifest ${live.has(x.version) ? 'present' : 'gone'}`);
  }
  const vr = await run(lanceverBin, ['versions', ds.target, '--json'], { env: ds.env });
  if (check(vr.status === 0, `${L} final versions: ${vr.stderr}`))
    checkEq(JSON.parse(vr.stdout).map((x) => pick(x, SUMMARY_KEYS)),
      listed.map((x) => pick(lanceVersion(x), SUMMARY_KEYS)).sort((a, b) => a.version - b.version), `${L} lancever versions = LanceDB listVersions()`);
  // ---- checkpoints
  // Every writer released its merge lock; no temporaries are left.
  checkEq(await ds.otherFiles(), [], `${L} files other than checkpoints in _checkpoints/ at the end`);
  const final = await ds.checkpointFiles();
  check(final.length > 0, `${L} no checkpoint file at the end`);
  for (const [name, bytes] of final) {
    const r = await inspectCheckpoint(bytes, name, root);
    check(r.ok, `${L} final checkpoint ${name}: ${r.why}`);
    const list = seen.get(name) || [];
    if (!list.some((b) => b.equals(bytes))) list.push(bytes);
    seen.set(name, list);
  }
  let observed = 0, replaced = 0;
  for (const [name, list] of seen) {
    const decoded = [];
    for (const b of list) {
      observed++;
      const r = await inspectCheckpoint(b, name, root);
      if (check(r.ok, `${L} checkpoint ${name} as written during the run: ${r.why}`)) decoded.push(r);
    }
    for (let i = 1; i < decoded.length; i++) {
      replaced++;
      const why = rowsSupersede(decoded[i - 1].rows, decoded[i].rows, decoded[i].meta);
      check(why === null, `${L} ${name} was rewritten with different content that is not a merge of the earlier one: ${why}`);
    }
  }
  const errs = Object.entries(counts.errors).map(([k, n]) => `${n} x /${k}/`).join(', ') || 'none';
  console.log(`${L} ${rounds} writer rounds -> version ${latest} (${Object.keys(w.tags).length} tags), in ${((tw - t0) / 1000).toFixed(1)} s ` +
    `alongside ${counts.cleanup} cleanups, ${counts.checkpoint} checkpoints, ${counts.history} history calls; ` +
    `documented errors: ${errs}; unexpected errors: ${counts.unexpected}; ` +
    `LanceDB optimize() prune failures on a manifest a lancever cleanup removed meanwhile (after its compaction committed): ${state.lancePruneErrors.length}; ` +
    `${lvs.length} versions retained, ${readable} read back; ${seen.size} checkpoint names, ${observed} distinct contents seen, ${replaced} replacements`);
  return { rounds, latest, ...counts, secs: (tw - t0) / 1000 };
}

// ---------------------------------------------------------------- local disk

{
  const parent = path.join(root, 'local');
  fs.mkdirSync(parent);
  const db = await lancedb.connect(parent);
  await db.createTable('w', rows(0, 10));
  const dir = path.join(parent, 'w.lance');
  const cpDir = path.join(dir, '_checkpoints');
  await campaign({
    label: 'local',
    target: dir,
    env: process.env,
    open: () => openDir(dir),
    manifests: async () => localManifestVersions(dir),
    otherFiles: async () => fs.readdirSync(cpDir).filter((n) => !CHECKPOINT_RE.test(n) && n !== 'archive')
      .concat(fs.existsSync(path.join(cpDir, 'archive')) ? fs.readdirSync(path.join(cpDir, 'archive')).filter((n) => !SEGMENT_RE.test(n)) : []),
    checkpointFiles: async () => fs.readdirSync(cpDir).filter((n) => CHECKPOINT_RE.test(n))
      .map((n) => [n, fs.readFileSync(path.join(cpDir, n))]),
    startWatch(onFile) {
      let stop = false;
      const done = (async () => {
        while (!stop) {
          let names = [];
          try { names = fs.readdirSync(cpDir); } catch { /* not yet */ }
          for (const n of names) {
            if (!CHECKPOINT_RE.test(n)) continue;
            try { onFile(n, fs.readFileSync(path.join(cpDir, n))); } catch { /* pruned meanwhile */ }
          }
          await sleep(5);
        }
      })();
      return async () => { stop = true; await done; };
    },
  }, ROUNDS_LOCAL);
}

// ---------------------------------------------------------------- S3

{
  const s3 = await startS3({ strict: true });
  const tap = await startTap(s3.endpoint);
  const opts = { storageOptions: s3StorageOptions(s3) };
  const db = await lancedb.connect(`s3://${BUCKET}/db`, opts);
  await db.createTable('w', rows(0, 10));
  const prefix = 'db/w.lance';
  await campaign({
    label: 'S3',
    target: `s3://${BUCKET}/${prefix}`,
    env: s3Env({ endpoint: tap.endpoint }),
    open: async () => (await lancedb.connect(`s3://${BUCKET}/db`, opts)).openTable('w'),
    manifests: async () => manifestVersions(listPrefix(s3, `${prefix}/_versions`)),
    otherFiles: async () => listPrefix(s3, `${prefix}/_checkpoints`).filter((k) => !CHECKPOINT_RE.test(k) && !SEGMENT_RE.test(k)),
    checkpointFiles: async () => listPrefix(s3, `${prefix}/_checkpoints`).filter((k) => CHECKPOINT_RE.test(k))
      .map((k) => [k, fs.readFileSync(s3.objectFile(`${prefix}/_checkpoints/${k}`))]),
    startWatch(onFile) {
      tap.setHook((info, phase) => {
        const m = /\/_checkpoints\/([^/]+)$/.exec(info.key);
        if (phase === 'response' && info.method === 'PUT' && m && CHECKPOINT_RE.test(m[1]) && info.status === 200) onFile(m[1], info.body);
        return false;
      });
      return async () => tap.setHook(null);
    },
  }, ROUNDS_S3);
  await tap.stop();
  await s3.stop();
}

finish('test_concurrency');
