// A reader during a cleanup (issue 14): manifests that are listed but gone when read are
// skipped, and the CLI says so in one line on stderr, not one line per manifest; the --json
// reports that have room for warnings list each of them (kind manifest_vanished).
//
// Made deterministic with hostile_s3.mjs (a small S3 server on 127.0.0.1, started and
// stopped here): it serves demo/demo.lance and lists every manifest, but answers each GET
// of the manifests of versions 1..5 with 404 NoSuchKey, as a cleanup that removed them
// between the listing and the reads would.
import path from 'node:path';
import { check, checkEq, finish, lanceverBin, run, sourceDir } from './lib.mjs';
import { startHostile, errorXml, AKID, SECRET } from './hostile_s3.mjs';

const PREFIX = 'db/demo.lance';
const URI = `s3://bucket/${PREFIX}`;
const GONE = 5; // versions 1..GONE vanish
const s3 = await startHostile();
const env = {
  PATH: process.env.PATH, AWS_ACCESS_KEY_ID: AKID, AWS_SECRET_ACCESS_KEY: SECRET,
  AWS_ENDPOINT_URL: s3.endpoint, AWS_ALLOW_HTTP: 'true', AWS_REGION: 'us-east-1',
  AWS_EC2_METADATA_DISABLED: 'true',
};

const runLv = (args) => run(lanceverBin, args, { env, killAfterMs: 120000 });

const demo = path.join(sourceDir, 'demo/demo.lance');
s3.putDir(demo, PREFIX);
// V2 manifest names: {u64::MAX - version:020}.manifest
const MAX = 18446744073709551615n;
const gone = new Set();
for (let v = 1n; v <= BigInt(GONE); v++)
  gone.add(`${PREFIX}/_versions/${(MAX - v).toString().padStart(20, '0')}.manifest`);
s3.hook = (req, sock, h) => {
  if (req.method !== 'GET' || !gone.has(req.key)) return false;
  h.send(404, { 'Content-Type': 'application/xml' }, errorXml('NoSuchKey', 'The specified key does not exist.'));
  return true;
};

try {
  const vanishedLines = (stderr) => stderr.split('\n').filter((l) => /vanished/.test(l));

  const t = await runLv(['versions', URI]);
  check(t.status === 0, `versions: exit ${t.status}: ${t.stderr}`);
  const rows = t.stdout.split('\n').filter((l) => /^\s+\d+\s/.test(l)).map((l) => Number(l.trim().split(/\s+/)[0]));
  checkEq(rows, [6, 7, 8, 9, 10, 11, 12], 'versions: the live versions that could be read');
  const vl = vanishedLines(t.stderr);
  check(vl.length === 1, `versions: one line about the vanished manifests, got ${vl.length}:\n${t.stderr}`);
  check(/^lancever: warning: 5 manifests vanished while being read .*_versions\/\d{20}\.manifest \.\.\. _versions\/\d{20}\.manifest$/.test(vl[0] || ''),
    `versions: the line counts them and names the first and last: ${vl[0]}`);

  const j = await runLv(['versions', URI, '--json']);
  let arr = null;
  try { arr = JSON.parse(j.stdout); } catch (e) { check(false, `versions --json: not JSON: ${e.message}`); }
  if (arr) checkEq(arr.map((v) => v.version), [6, 7, 8, 9, 10, 11, 12], 'versions --json: the readable versions');
  check(vanishedLines(j.stderr).length === 1, `versions --json: one line on stderr, got:\n${j.stderr}`);

  const i = await runLv(['info', URI, '--json']);
  let info = null;
  try { info = JSON.parse(i.stdout); } catch (e) { check(false, `info --json: not JSON (exit ${i.status}): ${e.message}: ${i.stderr}`); }
  if (info && check(Array.isArray(info.warnings), `info --json: no "warnings" list: ${i.stdout.slice(0, 200)}`)) {
    const w = info.warnings.filter((x) => x.kind === 'manifest_vanished');
    checkEq(w.map((x) => x.path).sort(), [...gone].map((k) => k.slice(PREFIX.length + 1)).sort(),
      'info --json: one manifest_vanished warning per vanished manifest, with its path');
    check(w.every((x) => x.first === null && x.last === null && /vanished/.test(x.message)),
      `info --json: warning fields: ${JSON.stringify(w[0])}`);
  }

  const q = await runLv(['-q', 'versions', URI]);
  check(q.status === 0 && q.stderr === '', `versions -q: exit ${q.status}, stderr ${JSON.stringify(q.stderr)}`);
} finally {
  await s3.stop();
}
finish('test_cli_vanished');
