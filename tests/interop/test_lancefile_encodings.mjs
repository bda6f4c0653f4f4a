// lancever reads every data file the peer writes for the cases of lancefile_cases.mjs
// (scalar, string, constant, run, compressed and vector columns) in each file format
// version the peer writes (Lance 8: 2.0, 2.1; Lance 12: 2.0, 2.1 and its default 2.2):
// `lancever inspect --json` must give every cell LanceDB's query().toArrow() gives, in
// file order.  A column lancever cannot decode fails the test (it is named).
import fs from 'node:fs';
import path from 'node:path';
import { lancedb, scratch, lv, check, checkEq, finish, peerName, peerDataFormat } from './lib.mjs';
import { CASES, makeCase, cells } from './lancefile_cases.mjs';

export function inspectJson(file) {
  const r = lv(['inspect', '--json', file]);
  if (r.status !== 0) throw new Error(`inspect exited ${r.status}: ${r.stderr.trim()}`);
  // keep 64-bit integers exact: turn bare integers into strings before JSON.parse
  return JSON.parse(r.stdout.replace(/([{,])"([^"\\]*)":(-?\d+)(?=[,}])/g, '$1"$2":"$3"'));
}
const norm = (v) => (typeof v === 'number' && Number.isInteger(v) ? String(v) : v);

const versions = peerName === 'lance12' ? ['2.0', '2.1', '2.2'] : ['2.0', '2.1'];
const root = scratch('lv-lf-enc-');
const db = await lancedb.connect(root);
let files = 0;
for (const version of versions) {
  for (const name of Object.keys(CASES)) {
    const tag = `${peerName} v${version} ${name}`;
    const tn = `${name}_${version.replace('.', '_')}`;
    const opts = version === peerDataFormat ? {} : { storageOptions: { new_table_data_storage_version: version } };
    await db.createTable(tn, makeCase(name), opts);
    const tbl = await (await db.openTable(tn)).query().toArrow();
    const dir = path.join(root, `${tn}.lance`, 'data');
    const list = fs.readdirSync(dir).filter((f) => f.endsWith('.lance'));
    if (!check(list.length === 1, `${tag}: expected one data file, found ${list.length}`)) continue;
    const file = path.join(dir, list[0]);
    let ours;
    try { ours = inspectJson(file); } catch (e) { check(false, `${tag}: ${e.message}`); continue; }
    files++;
    checkEq(ours.version, version, `${tag}: file version`);
    checkEq(Number(ours.num_rows), tbl.numRows, `${tag}: num_rows`);
    for (const f of tbl.schema.fields) {
      const want = cells(tbl.getChild(f.name));
      let bad = 0, first = '';
      for (let r = 0; r < want.length; r++) {
        const got = ours.rows[r] ? norm(ours.rows[r][f.name]) : undefined;
        const exp = Array.isArray(want[r]) ? want[r] : norm(want[r]);
        if (JSON.stringify(got) !== JSON.stringify(exp) && !bad++)
          first = `row ${r}: ours ${JSON.stringify(got).slice(0, 120)} lance ${JSON.stringify(exp).slice(0, 120)}`;
      }
      check(bad === 0, `${tag} column ${f.name}: ${bad} of ${want.length} cells differ; ${first}`);
    }
    console.log(`  ok ${tag}: ${tbl.numRows} rows x ${tbl.numCols} columns, ${fs.statSync(file).size} bytes`);
  }
}
check(files === versions.length * Object.keys(CASES).length, `read ${files} files`);
finish('test_lancefile_encodings');
