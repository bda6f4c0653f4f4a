"""The pylance 14 writer of issue 28's acceptance test (test_watch.py; the Node peers' twin is
tests/interop/watch_writer.mjs): commits to several tables of one database folder (a local
directory or s3://), one single-row append per commit, round robin, `spacing_ms` between any two
calls that make or delete versions; every `optimize_every` commits of a table it compacts it and runs cleanup_old_versions(older_than=0),
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


class Writer:
    """The tables of one database folder and what was committed to them."""

    def __init__(self, db, tables=3, auto_tables=1, storage_options=None):
        self.storage_options = storage_options
        self.names = [f"t{i}" for i in range(tables)]
        self.uris = [f"{db.rstrip('/')}/{n}.lance" for n in self.names]
        self.per_table = [0] * tables
        self.commits = self.optimizes = 0
        for i, uri in enumerate(self.uris):
            auto = {"interval": 1, "older_than_seconds": 0} if i < auto_tables else None
            lance.write_dataset(_row(0), uri, mode="create", storage_options=storage_options,
                                auto_cleanup_options=auto)

    def commit(self, commits=60, spacing_ms=20, optimize_every=10, on_commit=None):
        """`spacing_ms` between any two calls that make or delete versions; returns the summary."""
        t0 = time.monotonic()
        so = self.storage_options
        pause = lambda: time.sleep(spacing_ms / 1000) if spacing_ms > 0 else None  # noqa: E731
        for _ in range(commits):
            i = self.commits % len(self.uris)
            ds = lance.write_dataset(_row(self.commits + 1), self.uris[i], mode="append", storage_options=so)
            self.commits += 1
            if on_commit:
                on_commit(self.names[i], ds.version, self.commits)
            pause()
            self.per_table[i] += 1
            if self.per_table[i] % optimize_every == 0:
                ds.optimize.compact_files()
                pause()
                lance.dataset(self.uris[i], storage_options=so).cleanup_old_versions(
                    older_than=datetime.timedelta(0))
                self.optimizes += 1
                pause()
        latest = {n: lance.dataset(u, storage_options=so).version for n, u in zip(self.names, self.uris)}
        return {"latest": latest, "commits": self.commits, "optimizes": self.optimizes,
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
    w = Writer(a.db, a.tables, a.auto)
    print(json.dumps(w.commit(a.commits, a.spacing, a.optimize_every)))
