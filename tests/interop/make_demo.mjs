// Regenerates the shipped demo dataset with real Lance (LanceDB 0.31.0 = Lance 8.0.0):
//   node tests/interop/make_demo.mjs [OUT_DIR]      (default: <repo>/demo)
// writes OUT_DIR/demo.lance (any previous one is replaced).  Its versions:
//   v1  Overwrite         createTable, 5 rows (id double, val double, name string)
//   v2  Append            5 rows
//   v3  Append            5 rows
//   v4  Delete            id < 3
//   v5  Update            val = val * 2 where id > 10
//   v6  CreateIndex       btree index on id                       <- tag "indexed"
//   v7  Append            5 rows
//   v8  ReserveFragments  optimize(): compaction, read from v7
//   v9  Rewrite           optimize(): compaction, read from v7
//   v10 CreateIndex       optimize(): index optimisation, read v9 <- tag "compacted"
//   v11 Overwrite         3 rows (drops the index)
//   v12 Append            2 rows
// optimize() runs with cleanupOlderThan = 1970, so it prunes nothing and every
// version stays live; the tags are created afterwards.  The hint file
// _versions/latest_version_hint.json is kept (real local datasets have it); the
// empty `__manifest` namespace table LanceDB 0.31 writes into OUT_DIR is removed.
import fs from 'node:fs';
import path from 'node:path';
import { interopDir } from './peer.mjs';
import { demo, DEMO_EXPECTATIONS, removeNamespaceTable } from './datasets.mjs';

const out = path.resolve(process.argv[2] || path.join(interopDir, '../../demo'));
const target = path.join(out, 'demo.lance');
fs.mkdirSync(out, { recursive: true });
const hadNamespace = fs.existsSync(path.join(out, '__manifest'));
fs.rmSync(target, { recursive: true, force: true });
const { dir, expectations } = await demo(out, 'demo');
if (!hadNamespace) removeNamespaceTable(out);

const want = JSON.stringify(DEMO_EXPECTATIONS.versions), got = JSON.stringify(expectations.versions);
if (want !== got) {
  console.error(`make_demo: LanceDB did not produce the documented versions\n got:  ${got}\n want: ${want}`);
  process.exit(1);
}
let bytes = 0, files = 0;
const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) {
  const p = path.join(d, e.name);
  if (e.isDirectory()) walk(p); else { files++; bytes += fs.statSync(p).size; } } };
walk(dir);
if (bytes > 200 * 1024) { console.error(`make_demo: ${dir} is ${bytes} bytes (> 200 KB)`); process.exit(1); }
console.log(`make_demo: wrote ${dir}: ${expectations.versions.length} versions, ${files} files, ${bytes} bytes`);
