// The AWS credential chain against fakes on 127.0.0.1 (awsfakes.mjs: IMDSv2, a container
// endpoint, STS AssumeRoleWithWebIdentity) and the test S3 server (s3server.mjs), which accepts
// a temporary key only with its session token and only until it expires (400 ExpiredToken).
// LanceDB 0.31 writes s3://bucket/db/t.lance (10 versions); then, with HOME in a scratch
// directory and no AWS_* credentials in the environment unless a case sets them, for every
// source in the SDK order:
//   storage options, environment, shared credentials file, [profile x] of the config file (its
//   region and endpoint_url used), credential_process, web identity (env and profile), container
//   credentials (with the authorization token), EC2 IMDSv2:
//   `lancever info --verbose` succeeds, names that source, and the server saw requests signed
//   by the credentials that source issued;
// precedence (options over environment over files), AWS_PROFILE naming a missing profile;
// expiry: temporary credentials of 2 s refreshed during one long cleanup (300 ms per request),
// for web identity and credential_process: the source was asked again, no request was refused;
// revoked early: the server expires a container credential after 1 s though it claims an hour,
// S3 answers ExpiredToken, lancever fetches new ones and goes on;
// hangs: IMDS, STS, container and credential_process that never answer fail within seconds
// (IMDS: its 1 s timeout; others: storage option client_retry_timeout=2) with a clear message;
// garbage: each source answering junk fails with a message naming the source;
// no secret, session token or web identity token in any output.
import fs from 'node:fs';
import path from 'node:path';
import { check, finish, scratch, lanceverBin, run } from './lib.mjs';
import { lancedb } from './peer.mjs';
import { startS3, s3StorageOptions, ACCESS_KEY, SECRET_KEY, REGION } from './s3server.mjs';
import { startFake, WEB_TOKEN, CONTAINER_TOKEN } from './awsfakes.mjs';

process.setMaxListeners(0);
const s3 = await startS3({ strict: true });
const URI = 's3://bucket/db/t.lance';
{
  const db = await lancedb.connect('s3://bucket/db', { storageOptions: s3StorageOptions(s3) });
  const t = await db.createTable('t', [{ id: 0 }]);
  for (let i = 1; i < 10; i++) await t.add([{ id: i }]);
}
const home = scratch('lv-awscred-');
fs.mkdirSync(path.join(home, '.aws'));
const outputs = [];
const secrets = [SECRET_KEY === 'S3RVER' ? null : SECRET_KEY, WEB_TOKEN, CONTAINER_TOKEN].filter(Boolean);

// A clean environment: no AWS_* from the caller, HOME in the scratch directory.
function baseEnv(extra = {}) {
  const e = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AWS_')) e[k] = v;
  return { ...e, HOME: home, AWS_ENDPOINT_URL: s3.endpoint, AWS_ALLOW_HTTP: 'true', AWS_REGION: REGION,
    AWS_EC2_METADATA_DISABLED: 'true', ...extra };
}
async function lv(args, env, timeout = 120000) {
  const r = await run(lanceverBin, args, { env, killAfterMs: timeout });
  outputs.push(r.stdout, r.stderr);
  return r;
}
const credLine = (r) => (/^credentials\s+(.*)$/m.exec(r.stdout) || [])[1] || '';
const files = (creds, config) => {
  fs.writeFileSync(path.join(home, '.aws', 'credentials'), creds ?? '');
  fs.writeFileSync(path.join(home, '.aws', 'config'), config ?? '');
};
// Requests the server saw since the last reset, by access key.
const signedBy = (akid) => s3.requests().filter((q) => q.akid === akid && q.status >= 200 && q.status < 300).length;

async function source(label, env, wantRe, akids, extraArgs = []) {
  s3.reset();
  const r = await lv(['info', URI, '--verbose', ...extraArgs], env);
  check(r.status === 0, `${label}: info exited ${r.status}: ${r.stderr}`);
  check(wantRe.test(credLine(r)), `${label}: credential source is "${credLine(r)}", expected ${wantRe}`);
  const ids = typeof akids === 'function' ? akids() : akids;
  const used = ids.map(signedBy).reduce((a, b) => a + b, 0);
  check(used > 0, `${label}: the server saw no request signed with ${ids.join(', ')}: ${JSON.stringify(s3.requests().slice(0, 3))}`);
  return r;
}

// 1-4: static sources and their order
files('', '');
await source('storage options', baseEnv({ AWS_ACCESS_KEY_ID: 'AKIAWRONG', AWS_SECRET_ACCESS_KEY: 'wrong' }),
  /^storage options \(aws_access_key_id\)$/, [ACCESS_KEY],
  ['--storage-option', `aws_access_key_id=${ACCESS_KEY}`, '--storage-option', `aws_secret_access_key=${SECRET_KEY}`]);
files(`[default]\naws_access_key_id = AKIAFILE\naws_secret_access_key = file-secret\n`, '');
await source('environment over files', baseEnv({ AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET_KEY }),
  /^environment \(AWS_ACCESS_KEY_ID\)$/, [ACCESS_KEY]);
files(`# comment\n[other]\naws_access_key_id = AKIAOTHER\naws_secret_access_key = x\n\n[default]\naws_access_key_id = ${ACCESS_KEY}\naws_secret_access_key = ${SECRET_KEY}\n`, '');
await source('shared credentials file', baseEnv(), /^shared credentials file .*\/\.aws\/credentials, profile default$/, [ACCESS_KEY]);
files('', `[default]\nregion = eu-west-1\n\n[profile dev]\naws_access_key_id = ${ACCESS_KEY}\naws_secret_access_key = ${SECRET_KEY}\nregion = ${REGION}\nendpoint_url = ${s3.endpoint}\ns3 =\n  addressing_style = path\n`);
{
  const env = baseEnv({ AWS_PROFILE: 'dev' });
  delete env.AWS_ENDPOINT_URL; // the profile's endpoint_url must be used
  delete env.AWS_REGION;
  await source('config file profile (region, endpoint_url)', env, /^shared config file .*\/\.aws\/config, profile dev$/, [ACCESS_KEY]);
  const r = await lv(['versions', URI], baseEnv({ AWS_PROFILE: 'nope' }));
  check(r.status === 1 && /AWS profile 'nope' not found/.test(r.stderr), `missing profile: ${r.stderr}`);
}

// 5: credential_process, with expiring credentials refreshed during a long cleanup
const procDir = scratch('lv-awsproc-');
const counter = path.join(procDir, 'count');
fs.writeFileSync(counter, '');
// The process issues a new temporary key each run and registers it with the server through a file.
const procScript = path.join(procDir, 'creds.mjs');
fs.writeFileSync(procScript, `
import fs from 'node:fs';
const mode = process.argv[2] || 'ok';
if (mode === 'hang') setInterval(() => {}, 1000);
else if (mode === 'garbage') console.log('this is not JSON');
else {
  fs.appendFileSync(${JSON.stringify(counter)}, 'x');
  const n = fs.readFileSync(${JSON.stringify(counter)}, 'utf8').length;
  const c = { Version: 1, AccessKeyId: 'ASIAPROC' + String(n).padStart(4, '0'), SecretAccessKey: 'proc-secret-' + n,
    SessionToken: 'proc-token-' + n, Expiration: new Date(Date.now() + Number(process.env.PROC_LIFETIME_MS || 3600000)).toISOString() };
  fs.writeFileSync(${JSON.stringify(path.join(procDir, 'last.json'))}, JSON.stringify(c));
  console.log(JSON.stringify(c));
}`);
// The server learns of each issued process credential by polling last.json.
let lastSeen = '';
const poll = setInterval(() => {
  try {
    const t = fs.readFileSync(path.join(procDir, 'last.json'), 'utf8');
    if (t !== lastSeen) { lastSeen = t; const c = JSON.parse(t); s3.addCredential(c.AccessKeyId, c.SecretAccessKey, { token: c.SessionToken, expiresAtMs: Date.parse(c.Expiration) }); }
  } catch {}
}, 5);
files('', `[profile proc]\ncredential_process = ${process.execPath} ${procScript}\n`);
await source('credential_process', baseEnv({ AWS_PROFILE: 'proc' }), /^credential_process of profile proc \(.*\/\.aws\/config\), temporary credentials expiring \d{4}-/, ['ASIAPROC0001']);

async function longCleanup(label, env, countIssued) {
  // a fresh copy of the dataset's history is not needed: cleanup with --dry-run reads every manifest
  // and lists everything; 300 ms per request makes it outlast the 2 s credentials several times
  s3.reset();
  s3.setDelay(300);
  const before = countIssued();
  const r = await lv(['cleanup', URI, '--retain-versions', '1', '--dry-run', '--json'], env, 300000);
  s3.setDelay(0);
  const refused = s3.requests().filter((q) => q.status === 403 || q.status === 400).length;
  const issued = countIssued() - before;
  console.log(`   ${label}: ${s3.requests().length} requests in ${r.ms} ms, ${issued} credentials fetched, ${refused} refused`);
  check(r.status === 0, `${label}: long cleanup exited ${r.status}: ${r.stderr}`);
  check(r.ms > 2500, `${label}: the cleanup took ${r.ms} ms, shorter than the credentials' lifetime: the test proves nothing`);
  check(issued >= 2, `${label}: credentials fetched ${issued} time(s) during a ${r.ms} ms operation with 2 s credentials: not refreshed`);
  check(refused === 0, `${label}: ${refused} requests refused (expired credentials used)`);
}
await longCleanup('credential_process refresh', baseEnv({ AWS_PROFILE: 'proc', PROC_LIFETIME_MS: '2000' }),
  () => fs.readFileSync(counter, 'utf8').length);

// 6: web identity (environment, then a profile), refreshed during a long cleanup
const tokenFile = path.join(home, 'web-token');
fs.writeFileSync(tokenFile, WEB_TOKEN + '\n');
const sts = await startFake('sts', s3, { lifetimeMs: 2000 });
const webEnv = baseEnv({ AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile, AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/lv', AWS_ENDPOINT_URL_STS: sts.url });
files('', '');
await source('web identity', webEnv, /^web identity \(AWS_WEB_IDENTITY_TOKEN_FILE\): STS AssumeRoleWithWebIdentity at .*, role arn:aws:iam::123456789012:role\/lv/, () => sts.issued.map((c) => c.akid));
check(sts.calls.length >= 1 && new URLSearchParams(sts.calls[0].body).get('WebIdentityToken') === WEB_TOKEN, 'web identity: STS got the token from the file');
await longCleanup('web identity refresh', webEnv, () => sts.issued.length);
files('', `[profile irsa]\nrole_arn = arn:aws:iam::123456789012:role/p\nweb_identity_token_file = ${tokenFile}\n`);
await source('web identity (profile)', baseEnv({ AWS_PROFILE: 'irsa', AWS_ENDPOINT_URL_STS: sts.url }), /^web identity \(profile irsa\)/, () => sts.issued.map((c) => c.akid));
files('', '');

// 7: container credentials with an authorization token; revoked early -> ExpiredToken -> refetch
const ctr = await startFake('container', s3, { lifetimeMs: 3600000, serverLifetimeMs: 1000 });
const ctrEnv = baseEnv({ AWS_CONTAINER_CREDENTIALS_FULL_URI: ctr.url, AWS_CONTAINER_AUTHORIZATION_TOKEN: CONTAINER_TOKEN });
await source('container', ctrEnv, /^container credentials at http:\/\/127\.0\.0\.1:\d+\/creds/, ['ASIACONTAINER0001']);
{
  s3.reset();
  s3.setDelay(300);
  const before = ctr.issued.length;
  const r = await lv(['cleanup', URI, '--retain-versions', '1', '--dry-run'], ctrEnv, 300000);
  s3.setDelay(0);
  const expired = s3.requests().filter((q) => q.expired).length;
  console.log(`   container revoked early: ${ctr.issued.length - before} fetched, ${expired} ExpiredToken answers, ${r.ms} ms`);
  check(r.status === 0, `container revoked early: exited ${r.status}: ${r.stderr}`);
  check(expired >= 1 && ctr.issued.length - before >= 2, 'container revoked early: no ExpiredToken seen or no refetch after it');
}
const ctrNoTok = await lv(['versions', URI], baseEnv({ AWS_CONTAINER_CREDENTIALS_FULL_URI: ctr.url }));
check(ctrNoTok.status === 1 && /container credentials at .*HTTP 403/.test(ctrNoTok.stderr), `container without its token: ${ctrNoTok.stderr}`);
const ctrFar = await lv(['versions', URI], baseEnv({ AWS_CONTAINER_CREDENTIALS_FULL_URI: 'http://10.9.8.7/creds' }));
check(ctrFar.status === 1 && /must be https, or http to a loopback/.test(ctrFar.stderr), `container on a non-loopback http URL: ${ctrFar.stderr}`);

// 8: EC2 IMDSv2
const imds = await startFake('imds', s3);
const imdsEnv = baseEnv({ AWS_EC2_METADATA_DISABLED: 'false', AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.url });
await source('EC2 IMDSv2', imdsEnv, /^EC2 instance metadata \(IMDSv2\) at http:\/\/127\.0\.0\.1:\d+, temporary credentials expiring/, ['ASIAIMDS0001']);
check(imds.calls[0] && imds.calls[0].method === 'PUT' && imds.calls[0].path === '/latest/api/token', 'IMDS: the session token was asked for first');
const none = await lv(['versions', URI], baseEnv());
check(none.status === 1 && /no AWS credentials/.test(none.stderr), `no source at all: ${none.stderr}`);

// hangs and garbage: clear errors, quickly
const quick = ['--storage-option', 'client_retry_timeout=2'];
async function bad(label, env, re, maxMs, args = []) {
  const r = await lv(['versions', URI, ...args], env, 60000);
  console.log(`   ${label}: exit ${r.status} in ${r.ms} ms: ${r.stderr.trim().split('\n').pop()}`);
  check(r.status === 1, `${label}: exit ${r.status}${r.signal ? ' ' + r.signal : ''}`);
  check(re.test(r.stderr), `${label}: message does not match ${re}: ${r.stderr}`);
  check(r.ms < maxMs, `${label}: took ${r.ms} ms (more than ${maxMs})`);
}
imds.mode = 'hang';
await bad('IMDS hangs', imdsEnv, /no AWS credentials.*EC2 instance metadata did not provide them/, 10000);
imds.mode = 'garbage';
await bad('IMDS garbage', imdsEnv, /EC2 instance metadata .*(not a JSON object|not a token|role name is not valid)/, 10000);
sts.mode = 'hang';
await bad('STS hangs', webEnv, /web identity .*(deadline|Timeout)/, 15000, quick);
sts.mode = 'garbage';
await bad('STS garbage', webEnv, /web identity .*(root element|malformed XML)/, 10000);
ctr.mode = 'hang';
await bad('container hangs', ctrEnv, /container credentials .*(deadline|Timeout)/, 15000, quick);
ctr.mode = 'garbage';
await bad('container garbage', ctrEnv, /container credentials .*not a JSON object/, 10000);
files('', `[profile hang]\ncredential_process = ${process.execPath} ${procScript} hang\n[profile junk]\ncredential_process = ${process.execPath} ${procScript} garbage\n[profile fail]\ncredential_process = false\n`);
await bad('credential_process hangs', baseEnv({ AWS_PROFILE: 'hang' }), /credential_process of profile hang .*no answer within the deadline/, 15000, quick);
await bad('credential_process garbage', baseEnv({ AWS_PROFILE: 'junk' }), /credential_process of profile junk .*not a JSON object/, 10000);
await bad('credential_process fails', baseEnv({ AWS_PROFILE: 'fail' }), /credential_process of profile fail .*exited with status 1/, 10000);
files('', `[profile sso]\nsso_session = corp\nsso_account_id = 1\n`);
await bad('SSO profile', baseEnv({ AWS_PROFILE: 'sso' }), /IAM Identity Center \(SSO\), which lancever does not support; set credential_process/, 10000);

clearInterval(poll);
const issuedSecrets = [...sts.issued, ...ctr.issued, ...imds.issued].flatMap((c) => [c.secret, c.token]);
for (let i = 1; i <= fs.readFileSync(counter, 'utf8').length; i++) issuedSecrets.push(`proc-secret-${i}`, `proc-token-${i}`);
const leaked = [...secrets, ...issuedSecrets].filter((s) => outputs.some((o) => o.includes(s)));
check(leaked.length === 0, `secrets in the output: ${leaked.length} (${leaked.slice(0, 2).map((s) => s.slice(0, 12) + '...').join(', ')})`);
await Promise.all([sts.stop(), ctr.stop(), imds.stop()]);
await s3.stop();
finish('test_aws_credentials');
