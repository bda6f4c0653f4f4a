// One LanceDB 0.31.0 measurement in a process of its own, so that its peak memory (RSS) is the
// case's own.  Used by the bench/ harness; prints one JSON line on stdout.
//
//   node bench/lance_child.mjs versions URI TABLE EXPECT [--runs N] [--budget-ms B]
//       connect(URI) + openTable(TABLE) + listVersions(), one untimed warm-up, then
//       min(N, max(1, floor(B / warm-up ms))) timed runs (default N 5, B 60000), each a
//       fresh connection.  Fails unless listVersions() returns EXPECT versions.  Also reports
//       same_handle_ms: the median of as many listVersions() calls on one opened table.
//   node bench/lance_child.mjs cleanup URI TABLE
//       connect + openTable + optimize({cleanupOlderThan: now + 1 s, deleteUnverified: true}),
//       once; fails if optimize() committed a version (i.e. compacted something).
//
// Storage options (for s3://) come from the LV_LANCE_STORAGE_OPTIONS environment variable
// (a JSON object).  Output:
//   {"runs":N,"ms":[...],"median_ms":M,"warmup_ms":W,"maxrss_kb":K,"base_rss_kb":B,...}
// where base_rss_kb is this process's peak RSS after loading LanceDB and before the first
// connection: Node and the LanceDB module alone.
import { lancedb } from '../tests/interop/peer.mjs';

const [cmd, uri, table, expectArg, ...rest] = process.argv.slice(2);
const opt = (name, dflt) => { const i = rest.indexOf(name); return i >= 0 ? Number(rest[i + 1]) : dflt; };
const storageOptions = process.env.LV_LANCE_STORAGE_OPTIONS
  ? JSON.parse(process.env.LV_LANCE_STORAGE_OPTIONS) : undefined;
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const baseRss = process.resourceUsage().maxRSS;

async function open() {
  const db = await lancedb.connect(uri, storageOptions ? { storageOptions } : undefined);
  return { db, t: await db.openTable(table) };
}

async function versions() {
  const expect = Number(expectArg);
  const runs = opt('--runs', 5), budget = opt('--budget-ms', 60000);
  const once = async () => {
    const { db, t } = await open();
    const n = (await t.listVersions()).length;
    t.close?.(); db.close?.();
    if (n !== expect) throw new Error(`LanceDB listed ${n} versions of ${uri}/${table}, expected ${expect}`);
  };
  let a = nowMs();
  await once();
  const warm = nowMs() - a;
  const k = Math.min(runs, Math.max(1, Math.floor(budget / Math.max(warm, 1e-3))));
  const ms = [];
  for (let i = 0; i < k; i++) { a = nowMs(); await once(); ms.push(nowMs() - a); }
  const { db, t } = await open();
  const same = [];
  for (let i = 0; i < k; i++) { a = nowMs(); await t.listVersions(); same.push(nowMs() - a); }
  t.close?.(); db.close?.();
  return { runs: k, ms, median_ms: median(ms), warmup_ms: warm, same_handle_ms: median(same) };
}

async function cleanup() {
  const a = nowMs();
  const { db, t } = await open();
  const v = await t.version();
  const s = await t.optimize({ cleanupOlderThan: new Date(Date.now() + 1000), deleteUnverified: true });
  const ms = nowMs() - a;
  if (await t.version() !== v) throw new Error('LanceDB optimize committed a version (compaction ran)');
  t.close?.(); db.close?.();
  return { runs: 1, ms: [ms], median_ms: ms, bytes_removed: Number(s.prune.bytesRemoved),
    versions_removed: Number(s.prune.oldVersionsRemoved) };
}

try {
  const r = cmd === 'versions' ? await versions() : cmd === 'cleanup' ? await cleanup() : null;
  if (!r) throw new Error(`unknown command ${cmd}`);
  console.log(JSON.stringify({ ...r, maxrss_kb: process.resourceUsage().maxRSS, base_rss_kb: baseRss }));
  process.exit(0);
} catch (e) {
  console.error(`lance_child: ${e.message}`);
  process.exit(1);
}
