// The Node peer of the Python interop tests (run from tests/interop, where the pinned
// LanceDB 0.31.0 is installed):
//   node lance_peer.mjs build PARENT   builds every scenario of tests/interop/datasets.mjs with
//                                      LanceDB; prints {name: {dir, list, expectations}}
//   node lance_peer.mjs list DIR       prints LanceDB's listVersions() of a dataset directory
// `list` entries: {version, timestamp_millis, metadata} (metadata as LanceDB gives it: strings).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lancedb } from '../../tests/interop/peer.mjs';
import { buildAll, removeNamespaceTable } from '../../tests/interop/datasets.mjs';

async function listDir(dir) {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'lv-py-peer-'));
  try {
    fs.symlinkSync(path.resolve(dir), path.join(parent, 'ds.lance'));
    const t = await (await lancedb.connect(parent)).openTable('ds');
    const list = await t.listVersions();
    return list.map((v) => ({ version: Number(v.version), timestamp_millis: v.timestamp.getTime(),
      metadata: v.metadata }));
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
}

const [cmd, arg] = process.argv.slice(2);
if (cmd === 'build') {
  const built = await buildAll(arg);
  removeNamespaceTable(arg);
  const out = {};
  for (const b of built) out[b.name] = { dir: b.dir, list: await listDir(b.dir), expectations: b.expectations };
  process.stdout.write(JSON.stringify(out));
} else if (cmd === 'list') {
  process.stdout.write(JSON.stringify(await listDir(arg)));
} else {
  console.error('usage: node lance_peer.mjs build PARENT | list DIR');
  process.exit(2);
}
