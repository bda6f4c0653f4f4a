// Branch names as Lance accepts them (issue 24, section 6): real Lance (both peers) creates
// branches with Unicode names ("ünï", "a/ünï", Devanagari with a vowel sign, a circled letter,
// digits of other scripts) and refuses others (an emoji, a combining mark alone after a letter,
// "..", "x.lock", "//", a "." segment).  For every candidate, lancever --branch accepts the name
// exactly when Lance created the branch, and then lists the versions LanceDB lists for it;
// "<root>/tree/<name>" opens the same branch (the root's refs apply: `tags` there lists it).
// On S3 (s3rver) too, where Lance 8 keys the branch's directory percent-encoded
// (tree/%C3%BCn%C3%AF/) and Lance 12 with the raw characters (tree/ünï/).
import path from 'node:path';
import { scratch, lv, run, lanceverBin, check, checkEq, finish, lancedb, peerLabel } from './lib.mjs';
import { rows } from './datasets.mjs';
import { startS3, s3Env, s3StorageOptions, listPrefix } from './s3server.mjs';

// Lance accepts these on both peers (checked when the test was written; the test fails if
// either side disagrees), and refuses the second list.
const ACCEPTED = ['ünï', 'a/ünï', 'कि', 'Ⓐ', 'aͅ', 'ǅ', '²', 'Ⅻ', '٣', 'ʰ', 'ß', '𝟘', 'ー',
  'ゝ', '〇', '.x', 'x.', '-x', '_x', 'a.b', 'a_b-c', 'x.LOCK', 'a.lock/b', 'a/b/c'];
const REFUSED = ['e🙂', 'x̃', '゛', 'a\u00adb', 'a\u200db', 'a b', 'a..b', 'x.lock', 'a//b', '/x',
  'x\\y', 'x@{', 'a/./b', '.', 'a:b', 'a~1'];

const parent = scratch('lv-branch-names-');
const db = await lancedb.connect(parent);
const t = await db.createTable('ds', rows(0, 3));   // v1
await t.add(rows(3, 3));                            // v2
const dir = path.join(parent, 'ds.lance');
const lanceSays = {};
const lanceVersions = {};
for (const name of [...ACCEPTED, ...REFUSED]) {
  try {
    const b = await (await t.branches()).create(name, undefined, 2);
    await b.add(rows(100, 2));
    lanceSays[name] = true;
    lanceVersions[name] = (await b.listVersions()).map((v) => Number(v.version));
  } catch (e) {
    lanceSays[name] = false;
  }
}
for (const name of ACCEPTED) check(lanceSays[name], `${peerLabel} creates branch '${name}'`);
for (const name of REFUSED) check(!lanceSays[name], `${peerLabel} refuses branch '${name}'`);

for (const name of [...ACCEPTED, ...REFUSED]) {
  const r = lv(['--branch', name, 'versions', dir, '--json']);
  if (lanceSays[name]) {
    check(r.status === 0, `--branch '${name}' (Lance made it) opens: ${r.stderr}`);
    const got = r.status === 0 ? JSON.parse(r.stdout).map((v) => v.version) : null;
    checkEq(got, lanceVersions[name], `--branch '${name}' lists LanceDB's versions of the branch`);
  } else {
    check(r.status === 1 && /invalid branch name/.test(r.stderr),
      `--branch '${name}' (Lance refused it) is refused as invalid: status ${r.status}, ${r.stderr}`);
  }
}

// <root>/tree/<name>: opened as the branch of <root>, not as a dataset of its own
for (const name of ['ünï', 'a/ünï', 'कि']) {
  if (!lanceSays[name]) continue;
  const p = path.join(dir, 'tree', name);
  const r = lv(['versions', p, '--json']);
  check(r.status === 0, `versions ${p} opens: ${r.stderr}`);
  checkEq(r.status === 0 ? JSON.parse(r.stdout).map((v) => v.version) : null, lanceVersions[name],
    `tree/${name} lists the branch's versions`);
  const tg = lv(['tags', p, '--json']);
  const names = tg.status === 0 ? JSON.parse(tg.stdout).branches.map((b) => b.name) : [];
  check(names.includes(name), `tags on tree/${name} reads the root's refs (the path is the branch): ${JSON.stringify(names)} ${tg.stderr}`);
}
// S3: both key layouts
process.env.AWS_EC2_METADATA_DISABLED = 'true';
const s3 = await startS3({ strict: true });
const s3db = await lancedb.connect('s3://bucket/db', { storageOptions: s3StorageOptions(s3) });
const st = await s3db.createTable('ds', rows(0, 3));
await st.add(rows(3, 3));
const s3Versions = {};
for (const name of ['ünï', 'a/ünï']) {
  const b = await (await st.branches()).create(name, undefined, 2);
  await b.add(rows(100, 2));
  s3Versions[name] = (await b.listVersions()).map((v) => Number(v.version));
}
const keys = await listPrefix(s3, 'db/ds.lance/tree');
console.log(`S3 branch directories: ${[...new Set(keys.map((k) => k.replace(/\/(_versions|data|_transactions)\/.*$/, '')))].join(', ')}`);
for (const name of ['ünï', 'a/ünï']) {
  const r = await run(lanceverBin, ['--branch', name, 'versions', 's3://bucket/db/ds.lance', '--json'], { env: s3Env(s3) });
  check(r.status === 0, `S3: --branch '${name}' opens: ${r.stderr}`);
  checkEq(r.status === 0 ? JSON.parse(r.stdout).map((v) => v.version) : null, s3Versions[name],
    `S3: --branch '${name}' lists LanceDB's versions of the branch`);
}
await s3.stop();

console.log(`branch names on ${peerLabel}: ${ACCEPTED.length} accepted, ${REFUSED.length} refused, lancever agrees`);
finish('test_branch_names');
