// Runs the C storage test suite (tests/unit/test_storage.c) on the S3 backend: starts s3rver
// (s3server.mjs: SigV4 verified, 412 on create-if-absent of an existing or in-flight key) and
// runs $LANCEVER_BUILD_DIR/tests/test_storage with LV_TEST_S3_URI=s3://bucket/suite and the
// AWS_* environment. Fails if the binary fails, if its output names no "s3/" test (so the S3
// backend cannot be skipped silently), if any s3/ test fails, or if the server saw a request
// whose signature did not verify.
import { startS3, s3Env } from './s3server.mjs';
import { runSuite, checkSuite, fail, failureCount } from './storage_suite.mjs';

const s3 = await startS3({ strict: true });
console.log(`s3rver at ${s3.endpoint}`);
const env = s3Env(s3, { LV_TEST_S3_URI: 's3://bucket/suite' });
const r = await runSuite(env);
const reqs = s3.requests();
const okS3 = checkSuite(r, reqs, 's3', 'S3', 'server');
if (!reqs.length) fail('the S3 server received no request');
const badSig = reqs.filter((q) => q.sigError);
if (badSig.length) fail(`${badSig.length} requests failed SigV4 verification, e.g. ${badSig[0].method} ${badSig[0].path}?${badSig[0].query}: ${badSig[0].sigError}`);
const creates = reqs.filter((q) => q.method === 'PUT' && q.ifNoneMatch === '*');
console.log(`create-if-absent PUTs: ${creates.length} (${creates.filter((q) => q.status === 412).length} answered 412)`);
if (!creates.some((q) => q.status === 412)) fail('no create-if-absent PUT was answered 412: create-if-absent not exercised');

await s3.stop();
console.log(`test_s3_storage: ${okS3} s3/ tests passed, ${failureCount()} failures`);
process.exit(failureCount() ? 1 : 0);
