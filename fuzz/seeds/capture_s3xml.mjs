// Captures real S3 XML response bodies from s3rver 3.7.1 (tests/interop/s3server.mjs) as seeds
// for fuzz/corpora/s3xml: ListObjectsV2 pages (with and without delimiter, paginated with
// max-keys, empty), DeleteObjects results (quiet and verbose, with missing keys) and error
// bodies (NoSuchKey, NoSuchBucket, SignatureDoesNotMatch). LanceDB 0.31.0 writes the dataset.
//   node --openssl-legacy-provider fuzz/seeds/capture_s3xml.mjs OUT_DIR   (from the repository root;
//   s3rver 3.7.1 makes continuation tokens with DES, which OpenSSL 3 only has in its legacy provider)
import fs from 'node:fs';
import path from 'node:path';
import { startS3, s3StorageOptions } from '../../tests/interop/s3server.mjs';
import { lancedb } from '../../tests/interop/peer.mjs';
import { rows } from '../../tests/interop/datasets.mjs';

const out = process.argv[2];
if (!out) { console.error('usage: node capture_s3xml.mjs OUT_DIR'); process.exit(2); }
fs.mkdirSync(out, { recursive: true });
process.env.AWS_EC2_METADATA_DISABLED = 'true';

const s3 = await startS3({ checkSignatures: false });
const db = await lancedb.connect('s3://bucket/db', { storageOptions: s3StorageOptions(s3) });
const t = await db.createTable('t', rows(0, 5));
await t.add(rows(5, 5));
await t.delete('id < 2');
await (await t.tags()).create('v2', 2);
await t.add(rows(10, 3));

async function req(method, p, body) {
  const r = await fetch(s3.endpoint + p, { method, body });
  return [r.status, Buffer.from(await r.arrayBuffer())];
}
const save = (name, [status, b]) => {
  fs.writeFileSync(path.join(out, name), b);
  console.log(`${name}: HTTP ${status}, ${b.length} bytes`);
};
const enc = encodeURIComponent;
save('list_delimiter.xml', await req('GET', `/bucket?list-type=2&prefix=${enc('db/t.lance/')}&delimiter=%2F`));
save('list_recursive.xml', await req('GET', `/bucket?list-type=2&prefix=${enc('db/t.lance/')}`));
save('list_versions.xml', await req('GET', `/bucket?list-type=2&prefix=${enc('db/t.lance/_versions/')}&delimiter=%2F`));
save('list_empty.xml', await req('GET', `/bucket?list-type=2&prefix=${enc('nothing/')}&delimiter=%2F`));
// pagination: two keys a page, following NextContinuationToken
let token = null;
for (let page = 0; page < 3; page++) {
  const r = await req('GET', `/bucket?list-type=2&max-keys=2&prefix=${enc('db/t.lance/_versions/')}` +
    (token ? `&continuation-token=${enc(token)}` : ''));
  save(`list_page${page}.xml`, r);
  const m = /<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(r[1].toString());
  if (!m) break;
  token = m[1];
}
save('error_nosuchkey.xml', await req('GET', '/bucket/db/t.lance/_versions/missing.manifest'));
save('error_nosuchbucket.xml', await req('GET', '/nobucket?list-type=2&prefix='));
const del = (quiet, keys) => '<?xml version="1.0" encoding="UTF-8"?><Delete>' +
  (quiet ? '<Quiet>true</Quiet>' : '') + keys.map((k) => `<Object><Key>${k}</Key></Object>`).join('') + '</Delete>';
const txns = (await req('GET', `/bucket?list-type=2&prefix=${enc('db/t.lance/_transactions/')}`))[1].toString();
const txnKeys = [...txns.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);
save('delete_verbose.xml', await req('POST', '/bucket?delete', del(false, [txnKeys[0], 'db/t.lance/missing.txn'])));
save('delete_quiet.xml', await req('POST', '/bucket?delete', del(true, [txnKeys[1], 'db/t.lance/missing2.txn'])));
await s3.stop();

// a server that checks signatures: its 403 body for an unsigned request
const strict = await startS3({ checkSignatures: true });
const r = await fetch(strict.endpoint + '/bucket?list-type=2&prefix=', {
  headers: { Authorization: 'AWS4-HMAC-SHA256 Credential=S3RVER/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00' } });
save('error_signature.xml', [r.status, Buffer.from(await r.arrayBuffer())]);
await strict.stop();
process.exit(0);
