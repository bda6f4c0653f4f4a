// Helpers of the `lancever watch` interop tests (test_watch.mjs, test_watch_s3.mjs) and of
// bench/bench_watch.mjs: start a watcher as a child process, wait for its log lines, stop it,
// read back each table's recorded history and the gaps history reports, and scrape --metrics.
// Invariants: nothing here changes a dataset; a helper that times out throws (the caller's test
// fails, never skips); every started watcher is killed at exit if still running.
import { spawn } from 'node:child_process';
import http from 'node:http';

const children = new Set();
process.on('exit', () => { for (const p of children) try { p.kill('SIGKILL'); } catch { /* gone */ } });

// Starts `lancever watch ARGS...`; returns {proc, out(), err(), waitFor(re, ms), stop(sig), exited}.
export function startWatch(bin, args, { env = process.env } = {}) {
  const proc = spawn(bin, ['watch', ...args], { env });
  children.add(proc);
  let stdout = '', stderr = '';
  const waiters = [];
  const poke = () => {
    for (const w of [...waiters]) {
      const m = w.re.exec(stderr);
      if (m) { waiters.splice(waiters.indexOf(w), 1); clearTimeout(w.timer); w.resolve(m); }
    }
  };
  proc.stdout.on('data', (d) => { stdout += d; });
  proc.stderr.on('data', (d) => { stderr += d; poke(); });
  const exited = new Promise((resolve) => proc.on('close', (status, signal) => {
    children.delete(proc);
    for (const w of waiters.splice(0)) { clearTimeout(w.timer); w.reject(new Error(`watch exited (${status ?? signal}) before ${w.re}: ${stderr.slice(-2000)}`)); }
    resolve({ status, signal, stdout, stderr });
  }));
  return {
    proc, exited,
    out: () => stdout, err: () => stderr,
    waitFor(re, ms = 20000) {
      return new Promise((resolve, reject) => {
        const w = { re, resolve, reject };
        w.timer = setTimeout(() => { waiters.splice(waiters.indexOf(w), 1); reject(new Error(`watch: no ${re} within ${ms} ms; stderr: ${stderr.slice(-2000)}`)); }, ms);
        waiters.push(w);
        poke();
      });
    },
    async stop(signal = 'SIGTERM') { proc.kill(signal); return exited; },
  };
}

// Waits until every table in `names` was reported discovered (text or JSON log lines).
export async function waitDiscovered(w, names, ms = 20000) {
  for (const n of names) await w.waitFor(new RegExp(`discover[^\\n]*${n.replace('.', '\\.')}`), ms);
}

// Versions recorded in TABLE's history, and the gaps its warnings name: {versions:Set, gaps:[{first,last,why}], stderr}.
// Asynchronous: an s3rver in this process must keep answering.
export function historyOf(bin, uri, { env = process.env } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(bin, ['history', uri, '--json'], { env });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (status) => {
      if (status !== 0) return reject(new Error(`history ${uri}: exit ${status}: ${err}`));
      const versions = new Set(JSON.parse(out).map((v) => Number(v.version)));
      const gaps = [];
      for (const m of err.matchAll(/versions? (\d+)(?:-(\d+))?: ([^\n]*)/g))
        gaps.push({ first: Number(m[1]), last: Number(m[2] ?? m[1]), why: m[3] });
      resolve({ versions, gaps, stderr: err });
    });
  });
}

// The versions of 1..latest that are not in `versions`.
export function missing(versions, latest) {
  const out = [];
  for (let v = 1; v <= latest; v++) if (!versions.has(v)) out.push(v);
  return out;
}

// Compresses [1,2,3,7] to "1-3,7" for messages.
export function ranges(list) {
  const out = [];
  for (let i = 0; i < list.length;) {
    let j = i;
    while (j + 1 < list.length && list[j + 1] === list[j] + 1) j++;
    out.push(i === j ? `${list[i]}` : `${list[i]}-${list[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

// GET url; resolves the body (rejects on a status other than 200).
export function httpGet(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: HTTP ${res.statusCode}`))));
    }).on('error', reject);
  });
}

// Parses the Prometheus text format into [{name, labels:{}, value}] (what the tests need of it).
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels = {};
    if (m[2]) for (const l of m[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

// The value of the series `name` whose labels include `want` ({} = the unlabelled total).
export function metric(samples, name, want = {}) {
  const hit = samples.find((s) => s.name === name &&
    (Object.keys(want).length ? Object.entries(want).every(([k, v]) => s.labels[k] === v) : Object.keys(s.labels).length === 0));
  return hit ? hit.value : undefined;
}
