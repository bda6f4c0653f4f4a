"""The pylance 14 writer of issue 28's acceptance test (test_watch.py; the Node peers' twin is
tests/interop/watch_writer.mjs): commits to several tables of one database folder (a local
directory or s3://), one single-row append per commit, round robin, `spacing_ms` apart; every
`optimize_every` commits of a table it compacts it and runs cleanup_old_versions(older_than=0),
which deletes every manifest but the newest (docs/lance-reference.md, "Who deletes versions");
the first `auto_tables` tables are created with Lance's auto-cleanup, interval 1, older than 0 s.
Invariant: `latest` holds every table's newest version; nothing here reads lancever's output.

CLI (bench, by hand):
  python watch_writer.py --db URI --commits N --spacing MS [--tables N] [--auto N] [--optimize-every N]
prints {"latest": {table: version}, "commits": N, "optimizes": N, "ms": N} on stdout.
"""
import argparse
import datetime
import json
import time

import lance
import pyarrow as pa


def _row(i):
    return pa.table({"id": pa.array([i], pa.int64()), "v": pa.array(["x"])})


def write_tables(db, tables=3, commits=60, spacing_ms=20, auto_tables=1, optimize_every=10,
                 storage_options=None, on_commit=None):
    t0 = time.monotonic()
    root = db.rstrip("/")
    names = [f"t{i}" for i in range(tables)]
    uris = [f"{root}/{n}.lance" for n in names]
    per_table = [0] * tables
    optimizes = 0
    for i, uri in enumerate(uris):
        auto = {"interval": 1, "older_than_seconds": 0} if i < auto_tables else None
        lance.write_dataset(_row(0), uri, mode="create", storage_options=storage_options,
                            auto_cleanup_options=auto)
    latest = {}
    for c in range(commits):
        i = c % tables
        ds = lance.write_dataset(_row(c + 1), uris[i], mode="append", storage_options=storage_options)
        latest[names[i]] = ds.version
        if on_commit:
            on_commit(names[i], ds.version)
        per_table[i] += 1
        if per_table[i] % optimize_every == 0:
            ds.optimize.compact_files()
            ds = lance.dataset(uris[i], storage_options=storage_options)
            ds.cleanup_old_versions(older_than=datetime.timedelta(0))
            optimizes += 1
        if spacing_ms > 0:
            time.sleep(spacing_ms / 1000)
    for n, uri in zip(names, uris):
        latest[n] = lance.dataset(uri, storage_options=storage_options).version
    return {"latest": latest, "commits": commits, "optimizes": optimizes,
            "ms": int((time.monotonic() - t0) * 1000)}


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--db", required=True)
    p.add_argument("--commits", type=int, default=60)
    p.add_argument("--spacing", type=int, default=20)
    p.add_argument("--tables", type=int, default=3)
    p.add_argument("--auto", type=int, default=1)
    p.add_argument("--optimize-every", type=int, default=10)
    a = p.parse_args()
    print(json.dumps(write_tables(a.db, a.tables, a.commits, a.spacing, a.auto, a.optimize_every)))
