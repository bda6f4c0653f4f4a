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
//       [--tables N] [--auto N] [--optimize-every N] [--python PY]
// prints {"latest": {table: version}, "commits": N, "optimizes": N, "ms": N} on stdout.
import { lancedb } from './peer.mjs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const defaultPython = process.env.LV_LANCE14_PYTHON ||
  path.resolve(here, '../../build/venv-lance14/bin/python');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// pylance storage options for the LanceDB ones (s3server.mjs's s3StorageOptions).
function pyOptions(o) {
  if (!o) return {};
  return { aws_access_key_id: o.awsAccessKeyId, aws_secret_access_key: o.awsSecretAccessKey,
    aws_endpoint: o.awsEndpoint, aws_region: o.awsRegion, allow_http: 'true',
    virtual_hosted_style_request: 'false' };
}

// Turns auto-cleanup on (interval 1, older than 0 s) with pylance 14: one new version.
export function enableAutoCleanup(uri, { python = defaultPython, storageOptions } = {}) {
  const code = 'import json,sys,lance\n' +
    'd = lance.dataset(sys.argv[1], storage_options=json.loads(sys.argv[2]) or None)\n' +
    'd.optimize.enable_auto_cleanup({"interval": 1, "older_than_seconds": 0})\n' +
    'print(lance.dataset(sys.argv[1], storage_options=json.loads(sys.argv[2]) or None).version)\n';
  const out = execFileSync(python, ['-c', code, uri, JSON.stringify(pyOptions(storageOptions))],
    { encoding: 'utf8' });
  return Number(out.trim());
}

// Runs the writer; `onCommit(table, version)` is called after every commit (optional).
export async function writeTables({ db: uri, tables = 3, commits = 60, spacingMs = 20, autoTables = 1,
  optimizeEvery = 10, storageOptions, python = defaultPython, onCommit } = {}) {
  const t0 = Date.now();
  const db = await lancedb.connect(uri, storageOptions ? { storageOptions } : {});
  const names = Array.from({ length: tables }, (_, i) => `t${i}`);
  const handles = [], perTable = names.map(() => 0);
  let optimizes = 0;
  for (const [i, name] of names.entries()) {
    handles.push(await db.createTable(name, [{ id: 0, v: 'x' }]));
    if (i < autoTables) {
      enableAutoCleanup(`${uri.replace(/\/$/, '')}/${name}.lance`, { python, storageOptions });
      handles[i] = await db.openTable(name);
    }
  }
  for (let c = 0; c < commits; c++) {
    const i = c % tables, t = handles[i];
    await t.add([{ id: c + 1, v: 'x' }]);
    if (onCommit) onCommit(names[i], await t.version());
    if (++perTable[i] % optimizeEvery === 0) {
      await t.optimize({ cleanupOlderThan: new Date() });
      optimizes++;
    }
    if (spacingMs > 0) await sleep(spacingMs);
  }
  const latest = {};
  for (const [i, name] of names.entries()) latest[name] = await handles[i].version();
  return { latest, commits, optimizes, ms: Date.now() - t0 };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const a = process.argv.slice(2), o = {};
  const num = (i) => { const n = Number(a[i]); if (!Number.isInteger(n) || n < 0) usage(); return n; };
  function usage() {
    console.error('usage: node watch_writer.mjs --db URI --commits N --spacing MS [--tables N] [--auto N] ' +
      '[--optimize-every N] [--python PY]');
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
      default: usage();
    }
  }
  if (!o.db) usage();
  console.log(JSON.stringify(await writeTables(o)));
}
