// Loads the pinned test peer (LanceDB 0.31.0 = Lance 8.0.0, apache-arrow 18.1.0)
// without requiring the lancever binary, so dataset builders (datasets.mjs,
// make_demo.mjs, bench/) can run before the C project is built.  lib.mjs loads
// the same modules through the same require cache, so instances are shared.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const interopDir = path.dirname(fileURLToPath(import.meta.url));

let lancedb, arrow;
try {
  arrow = require('apache-arrow');            // CommonJS load: see lib.mjs
  lancedb = require('@lancedb/lancedb');
} catch (e) {
  console.error('FAIL: LanceDB peer not installed (run tests/interop/setup.sh): ' + e.message);
  process.exit(1);
}
// '@lancedb/lancedb/package.json' is not in the package's "exports": walk up
// from its resolved entry point to its package.json instead.
function packageVersion(name) {
  for (let d = path.dirname(require.resolve(name)); d !== path.dirname(d); d = path.dirname(d)) {
    const p = path.join(d, 'package.json');
    if (fs.existsSync(p)) { const j = JSON.parse(fs.readFileSync(p, 'utf8')); if (j.name === name) return j.version; }
  }
  return 'unknown';
}
const lancedbVersion = packageVersion('@lancedb/lancedb');
if (lancedbVersion !== '0.31.0') {
  console.error(`FAIL: expected @lancedb/lancedb 0.31.0, found ${lancedbVersion}`);
  process.exit(1);
}
export { lancedb, arrow, lancedbVersion };
