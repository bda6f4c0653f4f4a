// Issue 28's acceptance on S3 (s3rver, started and stopped here), against the LanceDB peer
// (LV_PEER): the writer of watch_writer.mjs on s3://bucket/db/ with `lancever watch` beside it.
//  a. Polling slower than the writer (--min/--max-interval 1 s, commits 20 ms apart, the
//     auto-cleanup table deletes a manifest one commit after the next): the watcher reports its
//     misses (the --metrics total equals the versions history lacks, each in a gap with a
//     reason) and its lag (the histogram has observations, the total lag is positive).
//  b. --min-interval below the commit spacing (20 ms polls, 150 ms spacing, --max-interval
//     40 ms): no miss, history 1..latest complete.  The cleanup cutoff is "older than the
//     spacing" here: with "older than now", LanceDB 0.31 deletes its compaction's first
//     version milliseconds after writing it, which no poll interval can promise to see
//     (local disk sees it through inotify: test_watch.mjs).
// Needs the Lance 14 venv (CTest fixture interop/lance14/venv).  Never skips.
import { lanceverBin, check, checkEq, finish, peerName } from './lib.mjs';
import { startS3, s3Env, s3StorageOptions } from './s3server.mjs';
import { createTables, commitTables } from './watch_writer.mjs';
import { startWatch, waitDiscovered, historyOf, missing, ranges, httpGet, parseMetrics, metric } from './watchlib.mjs';

process.env.AWS_EC2_METADATA_DISABLED = 'true';
const s3 = await startS3({ strict: true });
const env = s3Env(s3);
const storageOptions = s3StorageOptions(s3);
const TABLES = ['t0.lance', 't1.lance', 't2.lance'];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function scrape(watch) {
  const m = /metrics at (http:\/\/[^\s"]+)/.exec(watch.err());
  if (!check(m, `the watcher printed its metrics address: ${watch.err().slice(-800)}`)) return [];
  return parseMetrics(await httpGet(m[1]));
}

// ---- a. slow polling: misses and lag reported ----
{
  const db = 's3://bucket/slow/';
  const w = await createTables({ db, storageOptions });
  const watch = startWatch(lanceverBin, [db, '--flush', '200ms', '--min-interval', '1s', '--max-interval', '1s',
    '--log-format', 'json', '--metrics', '127.0.0.1:0'], { env });
  await watch.waitFor(/metrics at http/);
  await waitDiscovered(watch, TABLES);
  const r = await commitTables(w, { commits: 30, spacingMs: 20 });
  await sleep(2500); // two polls after the last commit: every live manifest read, flushed
  const samples = await scrape(watch);
  const end = await watch.stop('SIGTERM');
  if (process.env.LV_DEBUG) console.error(end.stderr.split('\n').filter((l) => /miss|captured|gap/.test(l)).join('\n'));
  checkEq(end.status, 0, `slow: watch exits 0 on SIGTERM (stderr: ${end.stderr.slice(-1500)})`);
  let gaps = 0;
  for (const [name, last] of Object.entries(r.latest)) {
    const h = await historyOf(lanceverBin, `${db}${name}.lance`, { env });
    const miss = missing(h.versions, last);
    if (process.env.LV_DEBUG) console.error(name, last, [...h.versions].join(','), h.stderr);
    const unexplained = miss.filter((v) => !h.gaps.some((g) => g.first <= v && v <= g.last && g.why.length));
    check(unexplained.length === 0, `slow: ${name}: versions ${ranges(unexplained)} neither recorded nor in a gap with a reason\n${h.stderr}`);
    gaps += miss.length;
    const per = metric(samples, 'lancever_watch_versions_missed_total', { table: `${name}.lance` });
    checkEq(per, miss.length, `slow: ${name}: the per-table missed counter equals the versions history lacks (${ranges(miss)})`);
  }
  check(gaps > 0, `slow (${peerName}): polling every second beside 20 ms commits misses versions (else this test cannot fail)`);
  checkEq(metric(samples, 'lancever_watch_versions_missed_total'), gaps, 'slow: the total missed counter equals the gaps');
  check(metric(samples, 'lancever_watch_lag_seconds_count') > 0, 'slow: the lag histogram has observations');
  check(metric(samples, 'lancever_watch_lag_seconds_sum') > 0, 'slow: the lag sum is positive');
  check(metric(samples, 'lancever_watch_requests_total') > 0, 'slow: requests are counted');
}

// ---- b. polling faster than the writer: no miss ----
{
  const db = 's3://bucket/fast/';
  const w = await createTables({ db, storageOptions });
  const watch = startWatch(lanceverBin, [db, '--flush', '200ms', '--min-interval', '20ms', '--max-interval', '40ms',
    '--log-format', 'json', '--metrics', '127.0.0.1:0'], { env });
  await watch.waitFor(/metrics at http/);
  await waitDiscovered(watch, TABLES);
  const r = await commitTables(w, { commits: 30, spacingMs: 150, cleanupSlackMs: 150 });
  await sleep(500);
  const samples = await scrape(watch);
  const end = await watch.stop('SIGTERM');
  checkEq(end.status, 0, `fast: watch exits 0 on SIGTERM (stderr: ${end.stderr.slice(-1500)})`);
  checkEq(metric(samples, 'lancever_watch_versions_missed_total'), 0, 'fast: no version missed');
  for (const [name, last] of Object.entries(r.latest)) {
    const h = await historyOf(lanceverBin, `${db}${name}.lance`, { env });
    const miss = missing(h.versions, last);
    check(miss.length === 0, `fast (${peerName}): ${name}: history lacks ${ranges(miss)} of 1..${last}\n${h.stderr}`);
  }
}

await s3.stop();
finish('test_watch_s3');
