// Runs the C storage test suite (tests/unit/test_storage.c) on the S3 backend: starts s3rver
// (s3server.mjs: SigV4 verified, 412 on create-if-absent of an existing or in-flight key) and
// runs $LANCEVER_BUILD_DIR/tests/test_storage with LV_TEST_S3_URI=s3://bucket/suite and the
// AWS_* environment. Fails if the binary fails, if its output names no "s3/" test (so the S3
// backend cannot be skipped silently), if any s3/ test fails, or if the server saw a request
// whose signature did not verify.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startS3, s3Env } from './s3server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const buildDir = process.env.LANCEVER_BUILD_DIR || path.resolve(here, '../../build');
const bin = path.join(buildDir, 'tests', 'test_storage');
let failures = 0;
const fail = (m) => { failures++; console.error('  FAIL: ' + m); };
if (!fs.existsSync(bin)) {
  console.error(`FAIL: storage suite binary not found at ${bin} (set LANCEVER_BUILD_DIR)`);
  process.exit(1);
}

const s3 = await startS3({ strict: true });
console.log(`s3rver at ${s3.endpoint}`);
const env = s3Env(s3, { LV_TEST_S3_URI: 's3://bucket/suite' });
const r = await new Promise((resolve) => {
  const p = spawn(bin, [], { env });
  let out = '';
  p.stdout.on('data', (d) => { out += d; process.stdout.write(d); });
  p.stderr.on('data', (d) => { out += d; process.stderr.write(d); });
  const timer = setTimeout(() => p.kill('SIGKILL'), 600000);
  p.on('close', (status, signal) => { clearTimeout(timer); resolve({ status, signal, out }); });
});

const reqs = s3.requests();
const count = {};
for (const q of reqs) { const k = `${q.method} ${q.status}`; count[k] = (count[k] || 0) + 1; }
console.log(`server saw ${reqs.length} requests: ${JSON.stringify(count)}`);

if (r.status !== 0) fail(`test_storage exited ${r.status}${r.signal ? ' (' + r.signal + ')' : ''}`);
const okS3 = [...r.out.matchAll(/^\[\s+OK\s+\] (s3\/\S+)/gm)].map((m) => m[1]);
const failedS3 = [...r.out.matchAll(/^\[\s+(?:FAILED|ERROR)\s+\] (s3\/\S+)/gm)].map((m) => m[1]);
const ranS3 = [...r.out.matchAll(/^\[\s+RUN\s+\] (s3\/\S+)/gm)].map((m) => m[1]);
if (!ranS3.length) fail('the output names no "s3/" test: the S3 backend did not run');
if (failedS3.length) fail(`s3/ tests failed: ${[...new Set(failedS3)].join(', ')}`);
if (ranS3.length && okS3.length !== ranS3.length)
  fail(`${ranS3.length} s3/ tests ran, ${okS3.length} passed: ${ranS3.filter((n) => !okS3.includes(n)).join(', ')}`);
if (!reqs.length) fail('the S3 server received no request');
const badSig = reqs.filter((q) => q.sigError);
if (badSig.length) fail(`${badSig.length} requests failed SigV4 verification, e.g. ${badSig[0].method} ${badSig[0].path}?${badSig[0].query}: ${badSig[0].sigError}`);
const creates = reqs.filter((q) => q.method === 'PUT' && q.ifNoneMatch === '*');
console.log(`create-if-absent PUTs: ${creates.length} (${creates.filter((q) => q.status === 412).length} answered 412)`);
if (!creates.some((q) => q.status === 412)) fail('no create-if-absent PUT was answered 412: create-if-absent not exercised');

await s3.stop();
console.log(`test_s3_storage: ${okS3.length} s3/ tests passed, ${failures} failures`);
process.exit(failures ? 1 : 0);
