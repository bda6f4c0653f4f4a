// Fake AWS credential endpoints on 127.0.0.1 for the credential-chain tests: EC2 instance metadata
// (IMDSv2), a container credentials endpoint (ECS / EKS Pod Identity) and STS
// AssumeRoleWithWebIdentity.  Every credential a fake issues is registered with the test S3 server
// (s3server.mjs addCredential), with its expiry, so only fresh credentials are accepted there.
//   const f = await startFake(kind, s3, {lifetimeMs, mode})   kind: 'imds' | 'container' | 'sts'
//   f.url        base URL (imds: the endpoint; container: the full URI; sts: the endpoint)
//   f.calls      requests seen: [{method, path, headers, body}]
//   f.issued     credentials issued: [{akid, secret, token, expiresAtMs}]
//   f.mode       'ok' | 'hang' (accept, never answer) | 'garbage' (200 with junk) — settable
//   f.stop()
import crypto from 'node:crypto';
import http from 'node:http';

const ROLE = 'lancever-test-role';
export const WEB_TOKEN = 'eyJ-fake-web-identity-token';
export const CONTAINER_TOKEN = 'fake-container-authorization-token';

export async function startFake(kind, s3, { lifetimeMs = 3600000, mode = 'ok', serverLifetimeMs = 0 } = {}) {
  const f = { calls: [], issued: [], mode, url: null };
  let n = 0;
  const sockets = new Set();
  const issue = () => {
    n++;
    const c = {
      akid: `ASIA${kind.toUpperCase()}${String(n).padStart(4, '0')}`,
      secret: `secret-${kind}-${n}-${crypto.randomBytes(8).toString('hex')}`,
      token: `token-${kind}-${n}-${crypto.randomBytes(8).toString('hex')}`,
      expiresAtMs: Date.now() + lifetimeMs,
    };
    f.issued.push(c);
    // serverLifetimeMs: the store stops accepting them earlier than they say (revoked)
    s3.addCredential(c.akid, c.secret, { token: c.token, expiresAtMs: serverLifetimeMs ? Date.now() + serverLifetimeMs : c.expiresAtMs });
    return c;
  };
  const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const json = (c) => JSON.stringify({ Code: 'Success', Type: 'AWS-HMAC', AccessKeyId: c.akid,
    SecretAccessKey: c.secret, Token: c.token, Expiration: iso(c.expiresAtMs) });
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      f.calls.push({ method: req.method, path: req.url, headers: req.headers, body });
      if (f.mode === 'hang') return; // accept, never answer
      if (f.mode === 'garbage') { res.writeHead(200, { 'content-type': 'text/html' }); return res.end('<html>captive portal {"AccessKeyId":'); }
      const no = (st) => { res.writeHead(st); res.end(); };
      if (kind === 'imds') {
        if (req.method === 'PUT' && req.url === '/latest/api/token') {
          if (!req.headers['x-aws-ec2-metadata-token-ttl-seconds']) return no(400);
          return res.end('imds-session-token');
        }
        if (req.headers['x-aws-ec2-metadata-token'] !== 'imds-session-token') return no(401);
        if (req.url === '/latest/meta-data/iam/security-credentials/') return res.end(ROLE);
        if (req.url === `/latest/meta-data/iam/security-credentials/${ROLE}`) return res.end(json(issue()));
        return no(404);
      }
      if (kind === 'container') {
        if (req.url !== '/creds') return no(404);
        if (req.headers.authorization !== CONTAINER_TOKEN) return no(403);
        const c = issue();
        return res.end(JSON.stringify({ AccessKeyId: c.akid, SecretAccessKey: c.secret, Token: c.token, Expiration: iso(c.expiresAtMs) }));
      }
      // sts
      const q = new URLSearchParams(body);
      if (req.method !== 'POST' || q.get('Action') !== 'AssumeRoleWithWebIdentity' || !q.get('RoleArn')) return no(400);
      if (q.get('WebIdentityToken') !== WEB_TOKEN) {
        res.writeHead(400, { 'content-type': 'text/xml' });
        return res.end('<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>bad</Message></Error></ErrorResponse>');
      }
      const c = issue();
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(`<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult>` +
        `<Credentials><AccessKeyId>${c.akid}</AccessKeyId><SecretAccessKey>${c.secret}</SecretAccessKey>` +
        `<SessionToken>${c.token}</SessionToken><Expiration>${iso(c.expiresAtMs)}</Expiration></Credentials>` +
        `<SubjectFromWebIdentityToken>system:serviceaccount:ns:sa</SubjectFromWebIdentityToken></AssumeRoleWithWebIdentityResult>` +
        `<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`);
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  f.url = kind === 'container' ? `${base}/creds` : kind === 'sts' ? `${base}/` : base;
  f.stop = async () => { for (const s of sockets) s.destroy(); await new Promise((r) => server.close(r)); };
  process.on('exit', () => { for (const s of sockets) s.destroy(); server.close(); });
  return f;
}
