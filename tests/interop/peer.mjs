// Loads the pinned test peer chosen by LV_PEER, without requiring the lancever
// binary, so dataset builders (datasets.mjs, make_demo.mjs, bench/) can run before
// the C project is built.  lib.mjs loads the same modules through the same require
// cache, so instances are shared.
//   LV_PEER=lance8  (default)  @lancedb/lancedb 0.31.0 = Lance 8.0.0   peers/lance8/
//   LV_PEER=lance12            @lancedb/lancedb 0.39.0 = Lance 12.0.0  peers/lance12/
// Each peer lives in its own directory (tests/interop/setup.sh installs both) with its
// own apache-arrow.  A peer that is missing or of another version FAILS the caller.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const interopDir = path.dirname(fileURLToPath(import.meta.url));
export const PEERS = {
  lance8: { lancedb: '0.31.0', lance: '8.0.0', lanceMajor: 8, dataFormat: '2.1' },
  lance12: { lancedb: '0.39.0', lance: '12.0.0', lanceMajor: 12, dataFormat: '2.2' },
};
export const peerName = process.env.LV_PEER || 'lance8';
const want = PEERS[peerName];
if (!want) {
  console.error(`FAIL: LV_PEER='${peerName}' is not a known peer (${Object.keys(PEERS).join(', ')})`);
  process.exit(1);
}
const peerDir = path.join(interopDir, 'peers', peerName);
const require = createRequire(path.join(peerDir, 'package.json'));

let lancedb, arrow;
try {
  arrow = require('apache-arrow');            // CommonJS load: see lib.mjs
  lancedb = require('@lancedb/lancedb');
} catch (e) {
  console.error(`FAIL: LanceDB peer ${peerName} not installed (run tests/interop/setup.sh): ` + e.message);
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
if (lancedbVersion !== want.lancedb) {
  console.error(`FAIL: peer ${peerName} expects @lancedb/lancedb ${want.lancedb}, found ${lancedbVersion}`);
  process.exit(1);
}
// The Lance version the peer writes into manifests (writer_version).
export const peerLanceVersion = want.lance;
export const peerLanceMajor = want.lanceMajor;
// The data storage version a table created with no option gets (manifest data_format).
export const peerDataFormat = want.dataFormat;
export const peerLabel = `${peerName} (@lancedb/lancedb ${lancedbVersion}, Lance ${want.lance})`;
// On stderr: some callers (python/tests/lance_peer.mjs, bench/) parse stdout.
if (!process.env.LV_PEER_QUIET) console.error(`peer: ${peerLabel}`);
export { lancedb, arrow, lancedbVersion };
