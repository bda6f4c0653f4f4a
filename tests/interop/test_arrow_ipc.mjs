// Interop test for `--format arrow` (Arrow IPC stream) and `--format csv`: the
// output of `lancever versions|history|tags|cleanup --dry-run` is read back by an
// independent Arrow implementation (apache-arrow 18.1.0 for JS, tableFromIPC)
// and compared cell by cell with the same command's --json output, with the
// schema's types and nullability checked against lancever/arrow.h; `versions`
// is also compared with LanceDB's listVersions().  Datasets are written by real
// Lance (LanceDB 0.31.0); history gets cleaned-up rows (a cleanup) and a gap (a
// cleanup without checkpoint).  Batches are forced small
// (LANCEVER_ARROW_BATCH_ROWS) so that multi-batch streams are read too.
// Never skips: a missing peer or binary fails (lib.mjs).
import {
  lv, lvJson, openDir, check, checkEq, finish, lanceVersion, pick, scratch, arrow,
} from './lib.mjs';
import { tenWrites, branches, rows } from './datasets.mjs';

const U = 'Uint64', T = 'Timestamp[ms, UTC]', B = 'Bool', S = 'Utf8';
// name, type, nullable (lancever/arrow.h)
const VERSION_SCHEMA = [
  ['version', U, false], ['timestamp_millis', T, false], ['total_fragments', U, false],
  ['total_data_files', U, false], ['total_files_size', U, false], ['total_deletion_files', U, false],
  ['total_data_file_rows', U, false], ['total_deletion_file_rows', U, false], ['total_rows', U, false],
  ['is_tagged', B, false], ['is_cleaned_up', B, false], ['transaction_uuid', S, true],
  ['read_version', U, true], ['operation_type', S, true], ['transaction_properties', S, false],
  ['manifest_path', S, true], ['manifest_size', U, true], ['writer_library', S, true],
  ['writer_version', S, true], ['data_format', S, true], ['branch', S, true], ['num_indices', U, true],
  ['tags', S, true], // the CLI's: the library's 22 columns plus the tag names (format_tags.c)
];
const REF_SCHEMA = [['kind', S, false], ['name', S, false], ['version', U, false], ['branch', S, true],
  ['manifest_size', U, false], ['created_at', S, true]];
const FILE_SCHEMA = [['path', S, false], ['kind', S, false], ['size_bytes', U, false], ['version', U, true], ['reason', S, false]];

function typeName(t) {
  if (t.typeId === arrow.Type.Int) return (t.isSigned ? 'Int' : 'Uint') + t.bitWidth;
  if (t.typeId === arrow.Type.Bool) return 'Bool';
  if (t.typeId === arrow.Type.Utf8) return 'Utf8';
  if (t.typeId === arrow.Type.Timestamp) return `Timestamp[${['s', 'ms', 'us', 'ns'][t.unit]}, ${t.timezone}]`;
  return 'other:' + String(t);
}

// Runs lancever with --format arrow; returns the apache-arrow Table (or null after a failure).
function readArrow(label, args, batchRows) {
  const env = { ...process.env, LANCEVER_ARROW_BATCH_ROWS: String(batchRows) };
  const r = lv([...args, '--format', 'arrow'], { encoding: 'buffer', env });
  if (!check(r.status === 0, `${label}: exit ${r.status}: ${r.stderr}`)) return null;
  try {
    return arrow.tableFromIPC(r.stdout);
  } catch (e) {
    check(false, `${label}: apache-arrow cannot read the stream: ${e.message}`);
    return null;
  }
}

function checkSchema(label, table, want, kind) {
  const got = table.schema.fields.map((f) => [f.name, typeName(f.type), f.nullable]);
  checkEq(got, want, `${label}: schema (name, type, nullable)`);
  checkEq(table.schema.metadata.get('lancever:kind'), kind, `${label}: schema metadata lancever:kind`);
}

// A cell as plain JSON: BigInt -> Number (all values here are < 2^53), Utf8 as is.
function plain(v) {
  return typeof v === 'bigint' ? Number(v) : v;
}

function tableRows(table) {
  const names = table.schema.fields.map((f) => f.name);
  const out = [];
  for (let i = 0; i < table.numRows; i++) {
    const row = {};
    for (const n of names) row[n] = plain(table.getChild(n).get(i));
    out.push(row);
  }
  return out;
}

// What a version column holds for a --json row (rows without a live manifest have no
// manifest keys in JSON: null in Arrow; transaction_properties is JSON text in Arrow).
function expectVersionCell(j, name) {
  if (name === 'transaction_properties') return JSON.stringify(j.transaction_properties);
  if (name === 'tags') return j.tags.length ? j.tags.join(',') : null;
  if (!(name in j)) return null;
  return j[name];
}

function compareVersions(label, table, json, minBatches) {
  check(table.batches.length >= minBatches, `${label}: ${table.batches.length} batches, want >= ${minBatches}`);
  const got = tableRows(table);
  checkEq(got.length, json.length, `${label}: row count`);
  for (let i = 0; i < Math.min(got.length, json.length); i++)
    for (const [name] of VERSION_SCHEMA) {
      let g = got[i][name];
      if (name === 'transaction_properties' && g !== null) g = JSON.stringify(JSON.parse(g));
      checkEq(g, expectVersionCell(json[i], name), `${label} row ${i} (v${json[i].version}) ${name}`);
    }
}

// RFC 4180 parser (quoted fields, doubled quotes); a quoted empty field is '' and an
// unquoted empty one null, as format_csv.c writes them.
function parseCsv(text) {
  const out = [];
  let row = [], i = 0;
  while (i < text.length) {
    let v;
    if (text[i] === '"') {
      let s = '';
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') { s += '"'; i += 2; } else if (text[i] === '"') { i++; break; } else s += text[i++];
      }
      v = s;
    } else {
      let j = i;
      while (j < text.length && text[j] !== ',' && text[j] !== '\n') j++;
      v = j === i ? null : text.slice(i, j);
      i = j;
    }
    row.push(v);
    if (text[i] === ',') i++;
    else if (text[i] === '\n') { out.push(row); row = []; i++; }
  }
  return out;
}

// CSV rows vs the Arrow table (same columns): every cell as text.
function compareCsv(label, args, table) {
  const r = lv([...args, '--format', 'csv']);
  if (!check(r.status === 0, `${label}: csv exit ${r.status}: ${r.stderr}`)) return;
  const csv = parseCsv(r.stdout);
  const names = table.schema.fields.map((f) => f.name);
  checkEq(csv[0], names, `${label}: csv header`);
  const want = tableRows(table).map((row) => names.map((n) => (row[n] === null ? null : String(row[n]))));
  checkEq(csv.slice(1), want, `${label}: csv rows`);
}

function versionCase(label, dir, cmd, batchRows, lanceList) {
  const json = lvJson([cmd, dir, '--json']);
  const table = readArrow(`${label} ${cmd}`, [cmd, dir], batchRows);
  if (!table) return;
  checkSchema(`${label} ${cmd}`, table, VERSION_SCHEMA, cmd);
  compareVersions(`${label} ${cmd}`, table, json, Math.ceil(json.length / batchRows));
  const gaps = JSON.parse(table.schema.metadata.get('lancever:gaps'));
  check(Array.isArray(gaps), `${label} ${cmd}: lancever:gaps is a JSON array`);
  if (lanceList) {
    const ours = tableRows(table).map((r) => pick(r));
    checkEq(ours, lanceList.map(lanceVersion), `${label} ${cmd}: Arrow rows vs LanceDB listVersions()`);
  }
  compareCsv(`${label} ${cmd}`, [cmd, dir], table);
  return { table, gaps };
}

function tagsCase(label, dir) {
  const json = lvJson(['tags', dir, '--json']);
  const table = readArrow(`${label} tags`, ['tags', dir], 2);
  if (!table) return;
  checkSchema(`${label} tags`, table, REF_SCHEMA, 'refs');
  const want = [
    ...json.tags.map((t) => ({ kind: 'tag', name: t.name, version: t.version, branch: t.branch,
      manifest_size: t.manifest_size, created_at: t.created_at })),
    ...json.branches.map((b) => ({ kind: 'branch', name: b.name, version: b.parent_version,
      branch: b.parent_branch,
      created_at: b.create_at ? new Date(b.create_at * 1000).toISOString().replace('.000Z', 'Z') : null })),
  ];
  const got = tableRows(table);
  for (const g of got) if (g.kind === 'branch') delete g.manifest_size; // not in the branch JSON
  checkEq(got, want, `${label} tags: Arrow rows vs --json`);
  compareCsv(`${label} tags`, ['tags', dir], table);
}

function cleanupDryRunCase(label, dir, policy) {
  const json = lvJson(['cleanup', dir, ...policy, '--dry-run', '--json']);
  const table = readArrow(`${label} cleanup`, ['cleanup', dir, ...policy, '--dry-run'], 3);
  if (!table) return;
  checkSchema(`${label} cleanup`, table, FILE_SCHEMA, 'cleanup_files');
  checkEq(tableRows(table), json.files, `${label} cleanup --dry-run: Arrow rows vs --json`);
  const md = table.schema.metadata;
  checkEq([md.get('lancever:dry_run'), Number(md.get('lancever:versions_removed')),
    Number(md.get('lancever:versions_total')), Number(md.get('lancever:files_removed')),
    Number(md.get('lancever:bytes_removed'))],
  ['true', json.versions_removed, json.versions_total, json.files_removed, json.bytes_removed],
  `${label} cleanup --dry-run: totals in the schema metadata`);
  check(json.files.length > 0, `${label} cleanup --dry-run: some files would go`);
  compareCsv(`${label} cleanup`, ['cleanup', dir, ...policy, '--dry-run'], table);
}

const parent = scratch('lv-arrow-');
const ten = await tenWrites(parent);
const br = await branches(parent);

// ten_writes: live versions against LanceDB, then a cleanup dry run.
const t = await openDir(ten.dir);
for (const n of [1, 3, 64]) versionCase(`ten_writes/${n}`, ten.dir, 'versions', n, await t.listVersions());
const policy = ['--retain-versions', '3', '--no-error-if-tagged-old-versions'];
cleanupDryRunCase('ten_writes', ten.dir, policy);

// History with cleaned-up rows (checkpoint written first) and a gap (a later cleanup
// without a checkpoint removes versions nothing recorded).
lvJson(['cleanup', ten.dir, ...policy, '--json']);
for (let i = 0; i < 3; i++) await t.add(rows(500 + i, 1));
lvJson(['cleanup', ten.dir, '--retain-versions', '1', '--no-error-if-tagged-old-versions',
  '--no-checkpoint', '--json']);
for (const n of [1, 4, 1000]) {
  const res = versionCase(`ten_writes/${n}`, ten.dir, 'history', n, null);
  if (!res) continue;
  const cleaned = tableRows(res.table).filter((r) => r.is_cleaned_up);
  check(cleaned.length >= 5 && cleaned.every((r) => r.manifest_path === null),
    `ten_writes history: ${cleaned.length} cleaned-up rows, manifest columns null`);
  checkEq(res.gaps, [[11, 12]], 'ten_writes history: the gap in lancever:gaps');
}
versionCase('ten_writes', ten.dir, 'versions', 2, await t.listVersions());
tagsCase('ten_writes', ten.dir);

// branches: tags on two branches and branch rows; a branch's versions.
tagsCase('branches', br.dir);
versionCase('branches', br.dir, 'history', 2, null);
versionCase('branches feat', `${br.dir}/tree/feat`, 'versions', 2, null);

// Errors: --format on a command without it, an unknown format, conflicting formats.
checkEq(lv(['show', ten.dir, '1', '--format', 'csv']).status, 2, 'show --format: usage error');
checkEq(lv(['history', ten.dir, '--format', 'xml']).status, 2, 'unknown format: usage error');
checkEq(lv(['history', ten.dir, '--json', '--format', 'arrow']).status, 2, '--json + --format arrow');
checkEq(lv(['history', ten.dir, '--format', 'json']).stdout, lv(['history', ten.dir, '--json']).stdout,
  '--format json is --json');
finish('test_arrow_ipc');
