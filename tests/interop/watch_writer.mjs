// The writer of issue 28's acceptance test (test_watch.mjs) and of bench/bench_watch.mjs:
// a LanceDB peer (LV_PEER, peer.mjs) commits to several tables of one database folder
// (local directory or s3://), one single-row append per commit, round robin, `spacingMs` apart;
// every `optimizeEvery` commits of a table it runs optimize({cleanupOlderThan: now}) on it
// (compaction + deletion of every older manifest: docs/lance-reference.md, "Who deletes
// versions"), and the first `autoTables` tables get Lance's auto-cleanup with interval 1 and
// older_than 0s (LanceDB cannot set a table's config, so pylance 14 writes that one commit:
// `python` is the Lance 14 venv's interpreter).  Invariants: every version a table ever had is
// counted in the result (`latest`), and nothing here reads lancever's output.
//
// CLI (bench, by hand):
//   LV_PEER=lance8 node watch_writer.mjs --db DIR|s3://bucket/p --commits N --spacing MS
//       [--tables N] [--auto N] [--optimize-every N] [--cleanup-slack MS] [--python PY]
// prints {"latest": {table: version}, "commits": N, "optimizes": N, "ms": N} on stdout.
import { lancedb } from './peer.mjs';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const defaultPython = process.env.LV_LANCE14_PYTHON ||
  path.join(process.env.LANCEVER_BUILD_DIR || path.resolve(here, '../../build'), 'venv-lance14/bin/python');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// pylance storage options for the LanceDB ones (s3server.mjs's s3StorageOptions).
function pyOptions(o) {
  if (!o) return {};
  return { aws_access_key_id: o.awsAccessKeyId, aws_secret_access_key: o.awsSecretAccessKey,
    aws_endpoint: o.awsEndpoint, aws_region: o.awsRegion, allow_http: 'true',
    virtual_hosted_style_request: 'false' };
}

// Turns auto-cleanup on (interval 1, older than 0 s) with pylance 14: one new version.
// Asynchronous: an s3rver in this process must keep answering while Python writes to it.
export function enableAutoCleanup(uri, { python = defaultPython, storageOptions } = {}) {
  const code = 'import json,sys,lance\n' +
    'd = lance.dataset(sys.argv[1], storage_options=json.loads(sys.argv[2]) or None)\n' +
    'd.optimize.enable_auto_cleanup({"interval": 1, "older_than_seconds": 0})\n' +
    'print(lance.dataset(sys.argv[1], storage_options=json.loads(sys.argv[2]) or None).version)\n';
  return new Promise((resolve, reject) => {
    execFile(python, ['-c', code, uri, JSON.stringify(pyOptions(storageOptions))], { encoding: 'utf8', timeout: 120000 },
      (e, out, err) => (e ? reject(new Error(`${python}: enabling auto-cleanup on ${uri}: ${e.message} ${err}`)) : resolve(Number(out.trim()))));
  });
}

// Creates the tables (version 1; version 2 on an auto-cleanup table): returns the writer state.
export async function createTables({ db: uri, tables = 3, autoTables = 1, storageOptions, python = defaultPython } = {}) {
  const db = await lancedb.connect(uri, storageOptions ? { storageOptions } : {});
  const names = Array.from({ length: tables }, (_, i) => `t${i}`);
  const handles = [];
  for (const [i, name] of names.entries()) {
    handles.push(await db.createTable(name, [{ id: 0, v: 'x' }]));
    if (i < autoTables) {
      await enableAutoCleanup(`${uri.replace(/\/$/, '')}/${name}.lance`, { python, storageOptions });
      handles[i] = await db.openTable(name);
    }
  }
  return { uri, names, handles, perTable: names.map(() => 0), commits: 0, optimizes: 0 };
}

// Commits `commits` times round robin, `spacingMs` between any two calls that make versions
// (an optimize is one: its compaction commits versions); every `optimizeEvery` commits of a
// table, optimize with cleanupOlderThan = now - cleanupSlackMs (0: everything older than now;
// LanceDB 0.31 then deletes the compaction's first version milliseconds after writing it).
// `onCommit(table, version, n)` is awaited after every commit (optional).
export async function commitTables(w, { commits = 60, spacingMs = 20, optimizeEvery = 10, cleanupSlackMs = 0,
  onCommit } = {}) {
  const t0 = Date.now();
  for (let c = 0; c < commits; c++) {
    const i = w.commits % w.names.length, t = w.handles[i];
    await t.add([{ id: w.commits + 1, v: 'x' }]);
    w.commits++;
    if (onCommit) await onCommit(w.names[i], await t.version(), w.commits);
    if (spacingMs > 0) await sleep(spacingMs);
    if (++w.perTable[i] % optimizeEvery === 0) {
      await t.optimize({ cleanupOlderThan: new Date(Date.now() - cleanupSlackMs) });
      w.optimizes++;
      if (spacingMs > 0) await sleep(spacingMs);
    }
  }
  const latest = {};
  for (const [i, name] of w.names.entries()) latest[name] = await w.handles[i].version();
  return { latest, commits: w.commits, optimizes: w.optimizes, ms: Date.now() - t0 };
}

export async function writeTables(o = {}) {
  return commitTables(await createTables(o), o);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const a = process.argv.slice(2), o = {};
  const num = (i) => { const n = Number(a[i]); if (!Number.isInteger(n) || n < 0) usage(); return n; };
  function usage() {
    console.error('usage: node watch_writer.mjs --db URI --commits N --spacing MS [--tables N] [--auto N] ' +
      '[--optimize-every N] [--cleanup-slack MS] [--python PY]');
    process.exit(2);
  }
  for (let i = 0; i < a.length; i++) {
    switch (a[i]) {
      case '--db': o.db = a[++i]; break;
      case '--commits': o.commits = num(++i); break;
      case '--spacing': o.spacingMs = num(++i); break;
      case '--tables': o.tables = num(++i); break;
      case '--auto': o.autoTables = num(++i); break;
      case '--optimize-every': o.optimizeEvery = num(++i); break;
      case '--python': o.python = a[++i]; break;
      case '--cleanup-slack': o.cleanupSlackMs = num(++i); break;
      default: usage();
    }
  }
  if (!o.db) usage();
  console.log(JSON.stringify(await writeTables(o)));
}
