"""Issue 28's acceptance with the pylance 14 writer (watch_writer.py): 3 tables of one database
folder, compaction + cleanup_old_versions(older_than=0) every 10 commits of a table, one table
with Lance's auto-cleanup at interval 1; `lancever watch FOLDER` beside it records every version
on local disk (history lists 1..latest, no gap), and on S3 (s3rver, started and stopped here)
reports no miss with --min-interval below the commit spacing.  Never skips."""
import json
import os
import re
import signal
import subprocess
import time

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
        r = w.commit(commits=60, spacing_ms=20)
        time.sleep(0.3)
    finally:
        rc = watch.stop()
    assert rc == 0, watch.err()[-2000:]
    assert r["optimizes"] == 6
    assert_complete(db, r["latest"])


def test_watch_s3_no_miss_below_spacing(tmp_path):
    s3 = subprocess.Popen(["node", os.path.join(HERE, "..", "s3server.mjs")], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    try:
        endpoint = s3.stdout.readline().strip()
        assert endpoint.startswith("http://"), f"s3server.mjs printed {endpoint!r}"
        env = dict(os.environ, AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER", AWS_REGION="us-east-1",
                   AWS_ENDPOINT_URL=endpoint, AWS_ALLOW_HTTP="true", AWS_EC2_METADATA_DISABLED="true")
        so = {"aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER", "aws_endpoint": endpoint,
              "aws_region": "us-east-1", "allow_http": "true", "virtual_hosted_style_request": "false"}
        db = "s3://bucket/py"
        w = Writer(db, storage_options=so)
        watch = Watch([db + "/", "--flush", "200ms", "--min-interval", "20ms", "--max-interval", "40ms",
                       "--log-format", "json"], env=env, tmp=str(tmp_path))
        try:
            watch.discovered()
            r = w.commit(commits=30, spacing_ms=150)
            time.sleep(0.5)
        finally:
            rc = watch.stop()
        assert rc == 0, watch.err()[-2000:]
        assert_complete(db, r["latest"], env)
    finally:
        s3.send_signal(signal.SIGINT)
        s3.wait(timeout=30)
