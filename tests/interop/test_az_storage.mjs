// Runs the C storage test suite (tests/unit/test_storage.c) on the Azure backend against Azurite
// (azurite.mjs: started here on 127.0.0.1, reached through a logging proxy): test_storage with
// LV_TEST_AZ_URI=az://suite/t and the AZURE_STORAGE_* environment (Shared Key). Fails if the binary
// fails, if its output names no "az/" test (so the backend cannot be skipped silently), if any az/
// test fails, if no create-if-absent PUT was refused with 409/412, or if a listing was never paged.
import { startAzurite } from './azurite.mjs';
import { runSuite, checkSuite, fail, failureCount } from './storage_suite.mjs';

const az = await startAzurite();
await az.createContainer('suite');
console.log(`azurite at ${az.direct} (proxy ${az.endpoint})`);
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
const ok = checkSuite(r, reqs, 'az', 'Azure', 'azurite');
if (!reqs.some((q) => q.method === 'PUT' && (q.status === 409 || q.status === 412)))
  fail('no create-if-absent PUT was refused: create-if-absent not exercised');
if (reqs.some((q) => q.status === 403)) fail(`${reqs.filter((q) => q.status === 403).length} requests were refused (403): signing is wrong`);
if (mode === 'sas') {
  const paged = reqs.filter((q) => q.method === 'GET' && /comp=list/.test(q.query) && /marker=/.test(q.query));
  console.log(`list requests with a marker (page 2 and later): ${paged.length}`);
  if (!paged.length) fail('sas: no listing asked for a second page: pagination not exercised');
  if (!reqs.every((q) => /sig=/.test(q.query))) fail('sas: a request went without the SAS');
}
console.log(`${mode}: ${ok} az/ tests passed`);
}

await az.stop();
console.log(`test_az_storage: ${failureCount() ? 0 : 2} passed, ${failureCount()} failed`);
process.exit(failureCount() ? 1 : 0);
