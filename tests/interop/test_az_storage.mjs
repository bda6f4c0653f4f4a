// Runs the C storage test suite (tests/unit/test_storage.c) on the Azure backend against Azurite
// (azurite.mjs: started here on 127.0.0.1, reached through a logging proxy): test_storage with
// LV_TEST_AZ_URI=az://suite/t and the AZURE_STORAGE_* environment (Shared Key). Fails if the binary
// fails, if its output names no "az/" test (so the backend cannot be skipped silently), if any az/
// test fails, if no create-if-absent PUT was refused with 409/412, or if a listing was never paged.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startAzurite } from './azurite.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const buildDir = process.env.LANCEVER_BUILD_DIR || path.resolve(here, '../../build');
const bin = path.join(buildDir, 'tests', 'test_storage');
let failures = 0;
const fail = (m) => { failures++; console.error('  FAIL: ' + m); };
if (!fs.existsSync(bin)) {
  console.error(`FAIL: storage suite binary not found at ${bin} (set LANCEVER_BUILD_DIR)`);
  process.exit(1);
}

const az = await startAzurite();
await az.createContainer('suite');
console.log(`azurite at ${az.direct} (proxy ${az.endpoint})`);
const runSuite = (env) => new Promise((resolve) => {
  const p = spawn(bin, [], { env });
  let out = '';
  p.stdout.on('data', (d) => { out += d; process.stdout.write(d); });
  p.stderr.on('data', (d) => { out += d; process.stderr.write(d); });
  const timer = setTimeout(() => p.kill('SIGKILL'), 600000);
  p.on('close', (status, signal) => { clearTimeout(timer); resolve({ status, signal, out }); });
});

for (const mode of ['shared-key', 'sas']) {
console.log(`-- ${mode}${mode === 'sas' ? ' (list pages of 2 blobs)' : ''}`);
az.reset();
let env = az.env({ LV_TEST_AZ_URI: 'az://suite/t' });
if (mode === 'sas') {
  delete env.AZURE_STORAGE_ACCOUNT_KEY;
  env = { ...env, AZURE_STORAGE_SAS_TOKEN: az.accountSas() };
  az.setMaxResults(2);
}
const r = await runSuite(env);
const reqs = az.requests();
const count = {};
for (const q of reqs) { const k = `${q.method} ${q.status}`; count[k] = (count[k] || 0) + 1; }
console.log(`azurite saw ${reqs.length} requests: ${JSON.stringify(count)}`);

if (r.status !== 0) fail(`test_storage exited ${r.status}${r.signal ? ' (' + r.signal + ')' : ''}`);
const ok = [...r.out.matchAll(/^\[\s+OK\s+\] (az\/\S+)/gm)].map((m) => m[1]);
const failed = [...r.out.matchAll(/^\[\s+(?:FAILED|ERROR)\s+\] (az\/\S+)/gm)].map((m) => m[1]);
const ran = [...r.out.matchAll(/^\[\s+RUN\s+\] (az\/\S+)/gm)].map((m) => m[1]);
if (!ran.length) fail('the output names no "az/" test: the Azure backend did not run');
if (failed.length) fail(`az/ tests failed: ${[...new Set(failed)].join(', ')}`);
if (ran.length && ok.length !== ran.length) fail(`${ran.length} az/ tests ran, ${ok.length} passed`);
if (!reqs.some((q) => q.method === 'PUT' && (q.status === 409 || q.status === 412)))
  fail('no create-if-absent PUT was refused: create-if-absent not exercised');
if (reqs.some((q) => q.status === 403)) fail(`${reqs.filter((q) => q.status === 403).length} requests were refused (403): signing is wrong`);
if (mode === 'sas') {
  const paged = reqs.filter((q) => q.method === 'GET' && /comp=list/.test(q.query) && /marker=/.test(q.query));
  console.log(`list requests with a marker (page 2 and later): ${paged.length}`);
  if (!paged.length) fail('sas: no listing asked for a second page: pagination not exercised');
  if (!reqs.every((q) => /sig=/.test(q.query))) fail('sas: a request went without the SAS');
}
console.log(`${mode}: ${ok.length} az/ tests passed`);
}

await az.stop();
console.log(`test_az_storage: ${failures ? 0 : 2} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
