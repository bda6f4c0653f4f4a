// The C storage test suite (tests/unit/test_storage.c) run against a test server, for
// test_s3_storage.mjs and test_az_storage.mjs: the binary ($LANCEVER_BUILD_DIR/tests/
// test_storage; missing is a failure), one run with its output echoed, and the checks every
// backend's run must pass: the binary succeeded, its output names tests of the backend
// (`tag`/, so the backend cannot be skipped silently), and every one of them passed.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const buildDir = process.env.LANCEVER_BUILD_DIR || path.resolve(here, '../../build');
const bin = path.join(buildDir, 'tests', 'test_storage');
if (!fs.existsSync(bin)) {
  console.error(`FAIL: storage suite binary not found at ${bin} (set LANCEVER_BUILD_DIR)`);
  process.exit(1);
}

let failures = 0;
export const fail = (m) => { failures++; console.error('  FAIL: ' + m); };
export const failureCount = () => failures;

// One run of the suite with `env`: {status, signal, out} (stdout and stderr, also echoed).
export function runSuite(env) {
  return new Promise((resolve) => {
    const p = spawn(bin, [], { env });
    let out = '';
    p.stdout.on('data', (d) => { out += d; process.stdout.write(d); });
    p.stderr.on('data', (d) => { out += d; process.stderr.write(d); });
    const timer = setTimeout(() => p.kill('SIGKILL'), 600000);
    p.on('close', (status, signal) => { clearTimeout(timer); resolve({ status, signal, out }); });
  });
}

// Checks run `r` whose server saw `reqs` ({method, status}) for the backend `tag` ("s3", "az",
// named `what` in messages); returns how many `tag`/ tests passed.
export function checkSuite(r, reqs, tag, what, server) {
  const count = {};
  for (const q of reqs) { const k = `${q.method} ${q.status}`; count[k] = (count[k] || 0) + 1; }
  console.log(`${server} saw ${reqs.length} requests: ${JSON.stringify(count)}`);
  if (r.status !== 0) fail(`test_storage exited ${r.status}${r.signal ? ' (' + r.signal + ')' : ''}`);
  const names = (state) => [...r.out.matchAll(new RegExp(`^\\[\\s+(?:${state})\\s+\\] (${tag}\\/\\S+)`, 'gm'))].map((m) => m[1]);
  const ok = names('OK'), failed = names('FAILED|ERROR'), ran = names('RUN');
  if (!ran.length) fail(`the output names no "${tag}/" test: the ${what} backend did not run`);
  if (failed.length) fail(`${tag}/ tests failed: ${[...new Set(failed)].join(', ')}`);
  if (ran.length && ok.length !== ran.length)
    fail(`${ran.length} ${tag}/ tests ran, ${ok.length} passed: ${ran.filter((n) => !ok.includes(n)).join(', ')}`);
  return ok.length;
}
