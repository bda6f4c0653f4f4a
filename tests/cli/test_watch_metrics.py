#!/usr/bin/env python3
"""`lancever watch --metrics`: the Prometheus endpoint, scraped while watch runs (CTest cli/watch_metrics).

    test_watch_metrics.py LANCEVER DEMO.lance

A copy of the demo dataset, in a directory whose name needs label escaping (a quote and a
backslash), starts with its newest manifests held aside; watch runs on it with --metrics on a
free loopback port; the held manifests are put back one by one (as commits would appear); the
scrapes must follow: captured == the versions history then records, missed == errors == 0,
requests > 0, the lag histogram well formed (cumulative buckets, +Inf == _count), the unlabelled
total equal to the sum of the tables, the content type of format 0.0.4; 404 and 405 for other
paths and methods; a bad address is a usage error (2).  Only the standard library; no timing
assertion (waits are bounded polls).  Every scrape is also read by prometheus_client's parser
(the reference implementation of the format; Debian's python3-prometheus-client), which must
accept it and agree on every sample.  Exits 1 on any failure.
"""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

LV, DEMO = sys.argv[1], sys.argv[2]
fails = 0


def check(cond, msg):
    global fails
    if not cond:
        fails += 1
        print("FAIL:", msg)
    return cond


def parse(text):
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        assert m, f"not a sample line: {line!r}"
        labels = {k: re.sub(r'\\(.)', lambda c: "\n" if c[1] == "n" else c[1], v)
                  for k, v in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m[2] or "")}
        out.append((m[1], labels, float(m[3])))
    return out


def value(samples, name, **want):
    for n, labels, v in samples:
        if n == name and (labels == want if not want else all(labels.get(k) == x for k, x in want.items())):
            return v
    return None


tmp = tempfile.mkdtemp(prefix="lv-watch-metrics-")
watch = None
try:
    ds = os.path.join(tmp, 'we"ird\\dir', "d.lance")
    shutil.copytree(DEMO, ds)
    vdir, held = os.path.join(ds, "_versions"), os.path.join(tmp, "held")
    os.mkdir(held)
    names = sorted(n for n in os.listdir(vdir) if n.endswith(".manifest"))  # V2 names: newest first
    for n in names[:4]:
        os.rename(os.path.join(vdir, n), os.path.join(held, n))

    bad = subprocess.run([LV, "watch", ds, "--once", "--metrics", "nohost:port"], capture_output=True, text=True)
    check(bad.returncode == 2, f"--metrics nohost:port: exit {bad.returncode} (want 2): {bad.stderr}")

    log = open(os.path.join(tmp, "watch.log"), "w+")
    watch = subprocess.Popen([LV, "watch", ds, "--metrics", "127.0.0.1:0", "--flush", "100ms", "--min-interval",
                              "10ms", "--max-interval", "100ms"], stdout=subprocess.DEVNULL, stderr=log)

    def err():
        log.flush()
        with open(log.name) as f:
            return f.read()

    url = None
    for _ in range(500):
        m = re.search(r"metrics at (http://\S+/metrics)", err())
        if m:
            url = m[1]
            break
        if watch.poll() is not None:
            break
        time.sleep(0.02)
    if not check(url, f"watch printed no metrics address: {err()[-1500:]}"):
        sys.exit(1)

    def scrape():
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.headers.get("Content-Type", ""), r.read().decode("utf-8")

    def wait_captured(n):
        samples = []
        for _ in range(500):
            ctype, text = scrape()
            samples = parse(text)
            if value(samples, "lancever_watch_versions_captured_total") == n:
                break
            time.sleep(0.02)
        return ctype, text, samples

    live = len(names) - 4
    ctype, text, samples = wait_captured(live)
    check(value(samples, "lancever_watch_versions_captured_total") == live,
          f"first scrape: captured {value(samples, 'lancever_watch_versions_captured_total')}, want {live}")
    for n in reversed(names[:4]):  # oldest held first, as commits come
        os.rename(os.path.join(held, n), os.path.join(vdir, n))
        time.sleep(0.05)
    ctype, text, samples = wait_captured(len(names))
    same = lambda v: "NaN" if v != v else v  # noqa: E731  (NaN: no lag observed yet)
    ref = sorted((s.name, tuple(sorted(s.labels.items())), same(s.value))
                 for f in text_string_to_metric_families(text) for s in f.samples)
    ours = sorted((n, tuple(sorted(lab.items())), same(v)) for n, lab, v in samples)
    check(ref == ours, f"prometheus_client reads the exposition differently: {set(ref) ^ set(ours)}")
    for method, path, want in (("GET", "/nothing", 404), ("POST", "/metrics", 405)):
        c = http.client.HTTPConnection(url.split("/")[2], timeout=10)
        c.request(method, path, body=b"x" if method == "POST" else None)
        st = c.getresponse().status
        check(st == want, f"{method} {path}: HTTP {st}, want {want}")
        c.close()
    watch.send_signal(signal.SIGTERM)
    rc = watch.wait(timeout=60)
    check(rc == 0, f"watch exit {rc} after SIGTERM: {err()[-1500:]}")

    hist = subprocess.run([LV, "history", ds, "--json"], capture_output=True, text=True)
    recorded = len(json.loads(hist.stdout)) if hist.returncode == 0 else -1
    check(ctype.startswith("text/plain; version=0.0.4"), f"content type {ctype!r}")
    check(value(samples, "lancever_watch_versions_captured_total") == recorded == len(names),
          f"captured {value(samples, 'lancever_watch_versions_captured_total')}, history records {recorded}, manifests {len(names)}")
    check(value(samples, "lancever_watch_tables") == 1, "one table")
    for name, want in (("lancever_watch_versions_missed_total", 0), ("lancever_watch_errors_total", 0)):
        check(value(samples, name) == want, f"{name} = {value(samples, name)}, want {want}")
    check((value(samples, "lancever_watch_requests_total") or 0) > 0, "requests counted")
    target = ds
    per = [s for s in samples if s[0] == "lancever_watch_versions_captured_total" and s[1]]
    check(len(per) == 1 and per[0][1].get("target") == target and per[0][1].get("table") == "",
          f"the table's labels: {per} (target {target!r})")
    check('target="' + target.replace("\\", "\\\\").replace('"', '\\"') + '"' in text, "the target label is escaped")
    for name in ("lancever_watch_versions_captured_total", "lancever_watch_requests_total"):
        check(sum(v for n, lab, v in samples if n == name and lab) == value(samples, name),
              f"{name}: the total is the sum of the tables")
    buckets = [(lab["le"], v) for n, lab, v in samples if n == "lancever_watch_lag_seconds_bucket" and "target" not in lab]
    counts = [v for _, v in buckets]
    check(buckets and buckets[-1][0] == "+Inf" and counts == sorted(counts), f"total lag buckets cumulative: {buckets}")
    check(counts and counts[-1] == value(samples, "lancever_watch_lag_seconds_count") > 0, "+Inf bucket == _count > 0")

finally:
    if watch and watch.poll() is None:
        watch.kill()
        watch.wait()
    shutil.rmtree(tmp, ignore_errors=True)
print(f"test_watch_metrics: {'FAILED' if fails else 'passed'}")
sys.exit(1 if fails else 0)
