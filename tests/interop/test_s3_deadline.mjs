// An S3 endpoint that accepts connections and never answers (issue 13): a command must not stay
// silent for minutes.  Against a TCP server on 127.0.0.1 that accepts and reads but never writes:
//  (a) with the defaults, `lancever versions` fails within the 30 s operation deadline (old code:
//      5 attempts x 30 s = 150 s), announces its retries on stderr ("retrying (attempt 2 of 5,
//      ... s left of 30 s)") and names the deadline in its error;
//  (b) storage option client_retry_timeout=3 (with LANCEVER_S3_STALL_SECONDS=1) makes it ~3 s;
//      LANCEVER_S3_DEADLINE_SECONDS=2 does the same from the environment;
//  (c) --quiet silences the retry notices, not the error.
import net from 'node:net';
import { check, finish, lanceverBin, run } from './lib.mjs';

const sockets = new Set();
const server = net.createServer((s) => { sockets.add(s); s.on('data', () => {}); s.on('close', () => sockets.delete(s)); });
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const endpoint = `http://127.0.0.1:${server.address().port}`;
const env = { ...process.env, AWS_ACCESS_KEY_ID: 'AKIDEADLINE', AWS_SECRET_ACCESS_KEY: 'deadline-secret',
  AWS_ENDPOINT_URL: endpoint, AWS_ALLOW_HTTP: 'true', AWS_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
for (const k of Object.keys(env)) if (k.startsWith('LANCEVER_S3_')) delete env[k];

const lv = (args, e = env) => run(lanceverBin, args, { env: e, killAfterMs: 200000 });
const retries = (r) => r.stderr.split('\n').filter((l) => /retrying \(attempt \d+ of \d+, [\d.]+ s left of \d+ s\)/.test(l));

const a = await lv(['versions', 's3://bucket/db/t.lance']);
console.log(`(a) defaults: exit ${a.status} in ${a.ms} ms; ${retries(a).length} retry notices\n${a.stderr}`);
check(a.status === 1, `(a) exit ${a.status}${a.signal ? ' ' + a.signal : ''}`);
check(a.ms < 45000, `(a) took ${a.ms} ms: more than the 30 s deadline allows`);
check(retries(a).length >= 1 && /of 30 s\)/.test(retries(a)[0] || ''), '(a) no retry notice naming the 30 s budget on stderr');
check(/deadline/.test(a.stderr.trim().split('\n').pop()), `(a) the error does not name the deadline: ${a.stderr}`);
check(!a.stderr.includes('deadline-secret'), '(a) the secret appears on stderr');

const b = await lv(['versions', 's3://bucket/db/t.lance', '--storage-option', 'client_retry_timeout=3'],
  { ...env, LANCEVER_S3_STALL_SECONDS: '1' });
console.log(`(b) client_retry_timeout=3: exit ${b.status} in ${b.ms} ms; ${retries(b).length} retry notices`);
check(b.status === 1 && b.ms < 8000, `(b) exit ${b.status} in ${b.ms} ms`);
check(retries(b).length >= 1 && /of 3 s\)/.test(retries(b)[0] || ''), `(b) retry notices: ${b.stderr}`);
const b2 = await lv(['versions', 's3://bucket/db/t.lance'], { ...env, LANCEVER_S3_STALL_SECONDS: '1', LANCEVER_S3_DEADLINE_SECONDS: '2' });
check(b2.status === 1 && b2.ms < 7000 && /the 2 s deadline/.test(b2.stderr), `(b) LANCEVER_S3_DEADLINE_SECONDS=2: exit ${b2.status} in ${b2.ms} ms: ${b2.stderr}`);

const c = await lv(['--quiet', 'versions', 's3://bucket/db/t.lance', '--storage-option', 'client_retry_timeout=3'],
  { ...env, LANCEVER_S3_STALL_SECONDS: '1' });
check(c.status === 1 && retries(c).length === 0 && /deadline/.test(c.stderr), `(c) --quiet: ${c.stderr}`);

for (const s of sockets) s.destroy();
server.close();
finish('test_s3_deadline');
