"""Issue 28's acceptance with the pylance 14 writer (watch_writer.py): 3 tables of one database
folder, compaction + cleanup_old_versions(older_than=0) every 10 commits of a table, one table
with Lance's auto-cleanup at interval 1; `lancever watch FOLDER` beside it records every version
on local disk (history lists 1..latest, no gap); on S3 (s3rver, started and stopped here) polling
slower than the writer reports its misses (the --metrics counters equal what history lacks) and
its lag, and with --min-interval below the commit spacing there is no miss.  Never skips."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.request

from conftest import LANCEVER, lv
from watch_writer import Writer

TABLES = ["t0.lance", "t1.lance", "t2.lance"]
HERE = os.path.dirname(os.path.abspath(__file__))


class Watch:
    """`lancever watch ARGS...` as a child; its stderr is collected in a file."""

    def __init__(self, args, env=None, tmp=None):
        self.log = open(os.path.join(tmp, f"watch-{time.monotonic_ns()}.log"), "w+")
        self.p = subprocess.Popen([LANCEVER, "watch", *args], stdout=subprocess.DEVNULL, stderr=self.log, env=env)

    def err(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def wait_for(self, pattern, timeout=20.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if re.search(pattern, self.err()):
                return
            assert self.p.poll() is None, f"watch exited {self.p.returncode} before {pattern}: {self.err()[-2000:]}"
            time.sleep(0.02)
        raise AssertionError(f"watch: no {pattern} within {timeout} s: {self.err()[-2000:]}")

    def discovered(self):
        for t in TABLES:
            self.wait_for(r"discover[^\n]*" + re.escape(t))

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(timeout=60)
        self.log.close()
        return rc


def history_versions(uri, env=None):
    r = lv("history", uri, "--json", env=env)
    return {int(v["version"]) for v in json.loads(r.stdout)}, r.stderr


def assert_complete(db, latest, env=None):
    for name, last in latest.items():
        got, err = history_versions(f"{db}/{name}.lance", env)
        lacking = sorted(set(range(1, last + 1)) - got)
        assert not lacking, f"{name}: history lacks {lacking} of 1..{last}\n{err}"


def test_watch_local_records_every_version(tmp_path):
    db = str(tmp_path / "db")
    w = Writer(db)
    watch = Watch([db, "--log-format", "json"], tmp=str(tmp_path))  # the defaults: inotify does it
    try:
        watch.discovered()
        # 50 ms between commits: with auto-cleanup at interval 1, older than 0 s, the watcher has
        # about that long to read a manifest before the next commit deletes it; 20 ms was missed
        # once (one version) on a 2-core machine running other tests at load 5-9
        r = w.commit(commits=60, spacing_ms=50)
        time.sleep(0.3)
    finally:
        rc = watch.stop()
    assert rc == 0, watch.err()[-2000:]
    assert r["optimizes"] == 6
    assert_complete(db, r["latest"])


class S3:
    """s3rver (tests/interop/s3server.mjs) in a child process, with the environment and
    storage options of lancever and pylance against it."""

    def __enter__(self):
        self.p = subprocess.Popen(["node", os.path.join(HERE, "..", "s3server.mjs")], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        ep = self.p.stdout.readline().strip()
        assert ep.startswith("http://"), f"s3server.mjs printed {ep!r}"
        self.env = dict(os.environ, AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
                        AWS_REGION="us-east-1", AWS_ENDPOINT_URL=ep, AWS_ALLOW_HTTP="true",
                        AWS_EC2_METADATA_DISABLED="true")
        self.so = {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_endpoint": ep,
                   "aws_region": "us-east-1", "allow_http": "true", "virtual_hosted_style_request": "false"}
        return self

    def __exit__(self, *exc):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=30)


def scrape(watch):
    """The --metrics samples: {(name, frozenset(labels)): value}."""
    url = re.search(r"metrics at (http://\S+/metrics)", watch.err())[1]
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            m = re.match(r'^(\w+)(?:\{(.*)\})? (\S+)$', line)
            labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m[2] or ""))
            out[(m[1], labels)] = float(m[3])
    return out


def test_watch_s3_reports_misses_and_lag(tmp_path):
    with S3() as s3:
        db = "s3://bucket/pyslow"
        w = Writer(db, storage_options=s3.so)
        watch = Watch([db + "/", "--flush", "200ms", "--min-interval", "1s", "--max-interval", "1s",
                       "--log-format", "json", "--metrics", "127.0.0.1:0"], env=s3.env, tmp=str(tmp_path))
        try:
            watch.wait_for(r"metrics at http")
            watch.discovered()
            r = w.commit(commits=30, spacing_ms=20)
            time.sleep(2.5)
            samples = scrape(watch)
        finally:
            rc = watch.stop()
        assert rc == 0, watch.err()[-2000:]
        lacking = 0
        for name, last in r["latest"].items():
            got, err = history_versions(f"{db}/{name}.lance", s3.env)
            miss = sorted(set(range(1, last + 1)) - got)
            lacking += len(miss)
            per = [v for (n, lab), v in samples.items()
                   if n == "lancever_watch_versions_missed_total" and ("table", f"{name}.lance") in lab]
            assert per == [len(miss)], f"{name}: missed counter {per}, history lacks {miss}\n{err}"
        assert lacking > 0, "polling every second beside 20 ms commits and auto-cleanup misses versions"
        assert samples[("lancever_watch_versions_missed_total", frozenset())] == lacking
        assert samples[("lancever_watch_lag_seconds_count", frozenset())] > 0
        assert samples[("lancever_watch_lag_seconds_sum", frozenset())] > 0


def test_watch_s3_no_miss_below_spacing(tmp_path):
    with S3() as s3:
        db = "s3://bucket/py"
        w = Writer(db, storage_options=s3.so)
        watch = Watch([db + "/", "--flush", "200ms", "--min-interval", "20ms", "--max-interval", "40ms",
                       "--log-format", "json"], env=s3.env, tmp=str(tmp_path))
        try:
            watch.discovered()
            r = w.commit(commits=30, spacing_ms=250)  # polls every 20-40 ms: a wide margin under load
            time.sleep(0.5)
        finally:
            rc = watch.stop()
        assert rc == 0, watch.err()[-2000:]
        assert_complete(db, r["latest"], s3.env)
