// LanceDB writes, lancever reads, checkpoints and cleans, LanceDB reads back: on S3 (s3rver) and on
// Azure Blob Storage (Azurite, which LanceDB reaches through its emulator options
// azure_storage_use_emulator + AZURITE_BLOB_STORAGE_URL), under a path with the characters Lance
// percent-encodes in object keys (a space, non-ASCII) and with '+' and an already-encoded '%25'.
// For each store:
//  (a) LanceDB creates a table of 6 versions under <root>/dïr with space+plus%25/db; every key it
//      wrote starts with the prefix its Lance maps that name to: Lance 8 (LanceDB 0.31)
//      "d%C3%AFr%20with%20space+plus%25/db/", Lance 12 (0.39, without the space: see NAME)
//      "dïr+plus%/db/";
//  (b) `lancever versions --json` on the same URI (as the user typed it, raw characters) lists
//      LanceDB's versions with the same row counts; the percent-encoded spelling of the URI
//      reads the same dataset;
//  (c) `checkpoint` writes _checkpoints/ under that prefix; `versions --stats` answers from it;
//  (d) `cleanup --retain-versions 2` removes the 4 old manifests; LanceDB opens the table again,
//      counts its rows and lists exactly the 2 retained versions; `history` lists all 6 with the
//      4 old ones cleaned up;
//  (e) `info --verbose` names the credential source; unknown storage option and wrong
//      credentials fail cleanly; no secret in any output.
// Never skips: a missing peer, server or binary fails.
import { check, checkEq, finish, lanceverBin, run } from './lib.mjs';
import { lancedb, peerLanceMajor } from './peer.mjs';
import { startS3, s3Env, s3StorageOptions, SECRET_KEY } from './s3server.mjs';
import { startAzurite, KEY as AZ_KEY } from './azurite.mjs';

process.setMaxListeners(0);
process.env.AWS_EC2_METADATA_DISABLED = 'true';
// How Lance maps the URI's path to keys differs (src/lib/objstore/uri.h): Lance 8 keeps the URL
// path percent-encoded, Lance 12 decodes it to raw characters.  LanceDB 0.39 cannot use a name with
// a space on s3rver at all (its listing query carries the space as '+', and s3rver's signature
// check then fails with 403 SignatureDoesNotMatch), so the Lance 12 run leaves the space out.
const L12 = peerLanceMajor >= 12;
const NAME = L12 ? 'dïr+plus%25' : 'dïr with space+plus%25';
const KEY = L12 ? 'dïr+plus%' : 'd%C3%AFr%20with%20space+plus%25'; // the keys LanceDB writes
const ENCODED = L12 ? 'd%C3%AFr+plus%25' : KEY; // the same name percent-encoded in a URI

const lvA = (args, env, timeout = 120000) => run(lanceverBin, args, { env, killAfterMs: timeout });
const outputs = [];
async function lv(label, args, env) {
  const r = await lvA(args, env);
  outputs.push(r.stdout, r.stderr);
  return r;
}
async function lvJ(label, args, env) {
  const r = await lv(label, [...args, '--json'], env);
  if (!check(r.status === 0, `${label}: lancever ${args.join(' ')} exited ${r.status}: ${r.stderr}`)) return null;
  return JSON.parse(r.stdout);
}

async function scenario(store) {
  const { name, scheme, root, options, env, keys, secret, credRe, badEnv } = store;
  console.log(`-- ${name}`);
  const db = await lancedb.connect(`${scheme}://${root}/${NAME}/db`, { storageOptions: options });
  const t = await db.createTable('t', [{ id: 1, v: 'a' }, { id: 2, v: 'b' }]);
  for (let i = 0; i < 4; i++) await t.add([{ id: 10 + i, v: `r${i}` }]);
  await t.delete('id = 1');
  const lance = (await t.listVersions()).map((v) => Number(v.version));
  checkEq(lance, [1, 2, 3, 4, 5, 6], `${name}: LanceDB wrote 6 versions`);
  const written = await keys();
  check(written.length > 10 && written.every((k) => k.startsWith(`${KEY}/db/`)),
    `${name}: every key LanceDB wrote starts with ${KEY}/db/: ${written.slice(0, 3).join(', ')}`);

  const URI = `${scheme}://${root}/${NAME}/db/t.lance`;
  const v = await lvJ(`${name} versions`, ['versions', URI], env);
  checkEq(v && v.map((x) => x.version), lance, `${name}: lancever versions = LanceDB's`);
  checkEq(v && v[v.length - 1].total_rows, 5, `${name}: rows of the latest version`);
  const v2 = await lvJ(`${name} versions (encoded URI)`, ['versions', `${scheme}://${root}/${ENCODED}/db/t.lance`], env);
  checkEq(v2 && v2.map((x) => x.version), lance, `${name}: the percent-encoded URI reads the same dataset`);

  await lvJ(`${name} checkpoint`, ['checkpoint', URI], env);
  const after = await keys();
  check(after.some((k) => k.startsWith(`${KEY}/db/t.lance/_checkpoints/`) && /\d{20}\.lance$/.test(k)),
    `${name}: the checkpoint is stored under the encoded prefix`);
  const st = await lv(`${name} versions --stats`, ['versions', URI, '--stats'], env);
  check(st.status === 0 && /answered from newest checkpoint/.test(st.stderr), `${name}: versions from the checkpoint: ${st.stderr}`);

  const c = await lv(`${name} cleanup`, ['cleanup', URI, '--retain-versions', '2', '--json'], env);
  check(c.status === 0, `${name}: cleanup exited ${c.status}: ${c.stderr}`);
  const left = (await keys()).filter((k) => k.includes('/t.lance/_versions/'));
  checkEq(left.length, 2, `${name}: 2 manifests left after cleanup`);
  const t2 = await (await lancedb.connect(`${scheme}://${root}/${NAME}/db`, { storageOptions: options })).openTable('t');
  checkEq(await t2.countRows(), 5, `${name}: LanceDB counts the rows after our cleanup`);
  checkEq((await t2.listVersions()).map((x) => Number(x.version)), [5, 6], `${name}: LanceDB lists the retained versions`);
  const h = await lvJ(`${name} history`, ['history', URI], env);
  checkEq(h && h.map((x) => [x.version, x.is_cleaned_up]), [[1, true], [2, true], [3, true], [4, true], [5, false], [6, false]],
    `${name}: history keeps every version`);

  const info = await lv(`${name} info`, ['info', URI, '--verbose'], env);
  check(info.status === 0 && credRe.test(info.stdout), `${name}: info --verbose names the credential source: ${info.stdout}`);
  const bad = await lv(`${name} unknown option`, ['versions', URI, '--storage-option', 'no_such_option=1'], env);
  check(bad.status === 1 && /unknown storage option 'no_such_option'/.test(bad.stderr), `${name}: unknown option: ${bad.stderr}`);
  const wrong = await lv(`${name} wrong credentials`, ['versions', URI], badEnv);
  check(wrong.status === 1 && /HTTP 403/.test(wrong.stderr), `${name}: wrong credentials fail with 403: ${wrong.stderr}`);
  check(!outputs.some((o) => o.includes(secret)), `${name}: the secret appears in an output`);
}

const s3 = await startS3({ strict: true });
const s3env = s3Env(s3);
await scenario({
  name: 's3', scheme: 's3', root: 'bucket', options: s3StorageOptions(s3), env: s3env,
  keys: async () => { const { listPrefix } = await import('./s3server.mjs'); return listPrefix(s3, ''); },
  secret: SECRET_KEY, credRe: /credentials\s+environment \(AWS_ACCESS_KEY_ID\)/,
  badEnv: { ...s3env, AWS_SECRET_ACCESS_KEY: 'wrong-secret-0123456789' },
});
await s3.stop();

const az = await startAzurite();
await az.createContainer('lance');
process.env.AZURITE_BLOB_STORAGE_URL = az.endpoint; // read by LanceDB's object_store (emulator)
const wrongKey = Buffer.alloc(64, 7).toString('base64');
await scenario({
  name: 'azure', scheme: 'az', root: 'lance', options: az.storageOptions(), env: az.env(),
  keys: () => az.list('lance'), secret: AZ_KEY,
  credRe: /credentials\s+Shared Key from AZURE_STORAGE_ACCOUNT_KEY, account devstoreaccount1/,
  badEnv: az.env({ AZURE_STORAGE_ACCOUNT_KEY: wrongKey }),
});
check(!outputs.some((o) => o.includes(wrongKey)), 'azure: the wrong key appears in an output');
// the other Azure credential sources LanceDB users set: the emulator switch, a connection string
{
  const URI = `az://lance/${NAME}/db/t.lance`;
  const base = az.env();
  for (const k of ['AZURE_STORAGE_ACCOUNT_NAME', 'AZURE_STORAGE_ACCOUNT_KEY', 'AZURE_STORAGE_ENDPOINT']) delete base[k];
  const emu = await lv('azure emulator', ['info', URI, '--verbose'], { ...base, AZURE_STORAGE_USE_EMULATOR: 'true', AZURITE_BLOB_STORAGE_URL: az.endpoint });
  check(emu.status === 0 && /credentials\s+Shared Key from the storage emulator's published key/.test(emu.stdout), `azure emulator switch: ${emu.stdout}${emu.stderr}`);
  const cs = `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${AZ_KEY};BlobEndpoint=${az.endpoint}/devstoreaccount1;`;
  const conn = await lv('azure connection string', ['info', URI, '--verbose'], { ...base, AZURE_STORAGE_CONNECTION_STRING: cs });
  check(conn.status === 0 && /credentials\s+Shared Key from AZURE_STORAGE_CONNECTION_STRING \(AccountKey\)/.test(conn.stdout), `azure connection string: ${conn.stdout}${conn.stderr}`);
  const sas = await lv('azure sas', ['info', URI, '--verbose'], { ...base, AZURE_STORAGE_ACCOUNT_NAME: 'devstoreaccount1', AZURE_STORAGE_ENDPOINT: `${az.endpoint}/devstoreaccount1`, AZURE_STORAGE_SAS_TOKEN: az.accountSas() });
  check(sas.status === 0 && /credentials\s+SAS token from AZURE_STORAGE_SAS_TOKEN/.test(sas.stdout), `azure SAS: ${sas.stdout}${sas.stderr}`);
  const none = await lv('azure none', ['versions', URI], { ...base, AZURE_STORAGE_ACCOUNT_NAME: 'devstoreaccount1' });
  check(none.status === 1 && /no Azure credentials/.test(none.stderr), `azure without credentials: ${none.stderr}`);
  check(!outputs.some((o) => o.includes(AZ_KEY) || o.includes('sig=')), 'azure: a key or SAS signature appears in an output');
}
await az.stop();
finish('test_cloud_lancedb');
