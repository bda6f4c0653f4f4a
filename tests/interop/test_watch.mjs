// Issue 28's acceptance on local disk, against the LanceDB peer (LV_PEER): a writer commits to 3
// tables of one database folder, optimizes with cleanup of everything older than now every 10
// commits of a table, and one table has Lance's auto-cleanup at interval 1
// (watch_writer.mjs); `lancever watch FOLDER` running beside it must record every version
// (history lists 1..latest with no gap).  Then, at CLI level:
//  - kill -9 and restart: nothing flushed before the kill is lost; every version is either
//    recorded or inside a gap history reports with a reason; everything after the restart is
//    recorded; the restarted watcher reports misses.
//  - two watchers on the same folder at once: both exit 0, history is complete, check passes.
// The writer needs the Lance 14 venv (it turns auto-cleanup on: LanceDB cannot), CTest's
// fixture interop/lance14/venv.  Never skips.
import { lanceverBin, scratch, check, checkEq, finish, lv, peerName } from './lib.mjs';
import { createTables, commitTables } from './watch_writer.mjs';
import { startWatch, waitDiscovered, historyOf, missing, ranges } from './watchlib.mjs';
import path from 'node:path';

const TABLES = ['t0.lance', 't1.lance', 't2.lance'];
const FAST = ['--flush', '100ms', '--min-interval', '10ms', '--max-interval', '200ms', '--log-format', 'json'];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function complete(db, latest, label) {
  for (const [name, last] of Object.entries(latest)) {
    const h = await historyOf(lanceverBin, path.join(db, `${name}.lance`));
    const miss = missing(h.versions, last);
    check(miss.length === 0, `${label}: ${name}: history lacks versions ${ranges(miss)} of 1..${last}\n${h.stderr}`);
  }
}

// ---- 1. the acceptance: 100% on local disk ----
{
  const db = scratch('lv-watch-');
  const w = await createTables({ db });
  const watch = startWatch(lanceverBin, [db, '--log-format', 'json']); // the defaults: inotify does it
  await waitDiscovered(watch, TABLES);
  const r = await commitTables(w, { commits: 60, spacingMs: 20 });
  await sleep(300);
  const end = await watch.stop('SIGTERM');
  checkEq(end.status, 0, `acceptance: watch exits 0 on SIGTERM (stderr: ${end.stderr.slice(-1500)})`);
  check(r.optimizes === 6, `acceptance: the writer optimized 6 times (${r.optimizes})`);
  check(Object.values(r.latest).every((v) => v >= 22), `acceptance: every table has 20 commits and compactions: ${JSON.stringify(r.latest)}`);
  await complete(db, r.latest, `acceptance (${peerName})`);
  check(!/"event":"missed"|\bmissed [1-9]/.test(end.stderr), `acceptance: no miss in the log: ${end.stderr.slice(-1500)}`);
}

// ---- 2. kill -9 and restart ----
{
  const db = scratch('lv-watch-kill-');
  const w = await createTables({ db });
  let watch = startWatch(lanceverBin, [db, ...FAST]);
  await waitDiscovered(watch, TABLES);
  await commitTables(w, { commits: 15, spacingMs: 20 });
  await sleep(400); // > --flush: what was read is durable
  const killed = await watch.stop('SIGKILL');
  checkEq(killed.signal, 'SIGKILL', 'kill: the watcher died of SIGKILL');
  const before = {};
  for (const t of TABLES) before[t] = (await historyOf(lanceverBin, path.join(db, t))).versions;
  // While nobody watches: each table reaches its 10th commit, so optimize deletes everything older.
  await commitTables(w, { commits: 15, spacingMs: 5 });
  watch = startWatch(lanceverBin, [db, ...FAST]);
  await waitDiscovered(watch, TABLES);
  const restartLatest = {};
  for (const [i, n] of w.names.entries()) restartLatest[n] = await w.handles[i].version();
  const r = await commitTables(w, { commits: 15, spacingMs: 20 });
  await sleep(300);
  const end = await watch.stop('SIGTERM');
  checkEq(end.status, 0, `restart: watch exits 0 on SIGTERM (stderr: ${end.stderr.slice(-1500)})`);
  let gapped = 0;
  for (const [name, last] of Object.entries(r.latest)) {
    const t = `${name}.lance`, h = await historyOf(lanceverBin, path.join(db, t));
    const lost = [...before[t]].filter((v) => !h.versions.has(v));
    check(lost.length === 0, `restart: ${t}: versions recorded before the kill are gone: ${ranges(lost)}`);
    const unexplained = missing(h.versions, last).filter((v) => !h.gaps.some((g) => g.first <= v && v <= g.last));
    check(unexplained.length === 0, `restart: ${t}: versions ${ranges(unexplained)} neither recorded nor in a reported gap\n${h.stderr}`);
    const after = missing(h.versions, last).filter((v) => v > restartLatest[name]);
    check(after.length === 0, `restart: ${t}: versions after the restart not recorded: ${ranges(after)}`);
    check(h.gaps.every((g) => g.why.length > 0), `restart: ${t}: every gap has a reason: ${JSON.stringify(h.gaps)}`);
    gapped += missing(h.versions, last).length;
  }
  check(gapped > 0, 'restart: versions deleted while no watcher ran are reported as gaps (else the test cannot fail)');
  const stop = /"event":"stop"[^\n]*"missed":(\d+)/.exec(end.stderr);
  check(stop && Number(stop[1]) > 0, `restart: the restarted watcher's stop line counts its misses: ${end.stderr.slice(-1500)}`);
}

// ---- 3. two watchers on the same folder ----
{
  const db = scratch('lv-watch-two-');
  const w = await createTables({ db });
  const a = startWatch(lanceverBin, [db, ...FAST]);
  const b = startWatch(lanceverBin, [db, ...FAST]);
  await Promise.all([waitDiscovered(a, TABLES), waitDiscovered(b, TABLES)]);
  const r = await commitTables(w, { commits: 45, spacingMs: 20 });
  await sleep(300);
  const [ea, eb] = await Promise.all([a.stop('SIGTERM'), b.stop('SIGTERM')]);
  checkEq([ea.status, eb.status], [0, 0], `two watchers: both exit 0 (stderr a: ${ea.stderr.slice(-800)} b: ${eb.stderr.slice(-800)})`);
  await complete(db, r.latest, `two watchers (${peerName})`);
  for (const t of TABLES) {
    const c = lv(['check', path.join(db, t)]);
    checkEq(c.status, 0, `two watchers: check ${t} passes: ${c.stdout.slice(-600)}${c.stderr.slice(-600)}`);
  }
}

finish('test_watch');
