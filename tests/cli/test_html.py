#!/usr/bin/env python3
"""history --format html (src/cli/format_html.c) loaded in headless Chromium (Debian's chromium,
tests/debian-packages.txt):

    test_html.py LANCEVER DEMO_DATASET GEN_DATASET ARTIFACT_DIR

The page is self-contained (no network: no src=, <link>, url(), @import, or http(s) address but
the SVG namespace); Chromium loads it with no console message (a page with a script error is
checked first to be seen, so the check can fail); the DOM Chromium built has one mark per version
(12 for the demo dataset, the inline script's count in the title agrees), tags labelled,
cleaned-up versions and a gap shaded; a 5,000-version history is binned (at most 2,000 marks, the marks'
version ranges cover every version once) and the page stays small.  Screenshots are saved in
ARTIFACT_DIR (history-demo.png, history-binned.png).  Chromium missing: the test fails.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LV, SRC, GEN, ART = sys.argv[1:5]
os.makedirs(ART, exist_ok=True)
T = tempfile.mkdtemp(prefix="lv-html-test.")
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s %s" % (name, str(detail)[:800]))


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    print("FAIL chromium is not installed (tests/debian-packages.txt, test group)")
    sys.exit(1)


def chromium(path, *args):
    """(dom, console messages) of the page at path."""
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--user-data-dir=" + os.path.join(T, "profile"), "--enable-logging=stderr",
                        "--v=0", "--window-size=1280,700", *args, "file://" + path],
                       capture_output=True, text=True, timeout=120)
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l]
    return p.stdout, console


def page(ds, name, *extra):
    out = os.path.join(T, name + ".html")
    with open(out, "w") as f:
        p = subprocess.run([LV, "history", ds, "--format", "html", *extra], stdout=f,
                           stderr=subprocess.PIPE, text=True)
    with open(out) as f:
        return p.returncode, f.read(), out


def self_contained(html):
    bad = re.findall(r'(?i)\bsrc\s*=|<link\b|url\(|@import|https?://(?!www\.w3\.org/2000/svg")[^\s"]*', html)
    return bad


# the check can fail: a script error is seen on the console
bad = os.path.join(T, "bad.html")
with open(bad, "w") as f:
    f.write("<html><body><script>undefinedFunction();</script></body></html>")
_, console = chromium(bad, "--dump-dom")
check("console-errors-are-seen", any("undefinedFunction" in l for l in console), console)

# the demo: 12 versions, tags indexed (6) and compacted (10), then with cleaned-up versions
DS = os.path.join(T, "demo.lance")
shutil.copytree(SRC, DS)
st, html, path = page(DS, "demo")
check("demo-status", st == 0, st)
check("demo-self-contained", not self_contained(html), self_contained(html))
dom, console = chromium(path, "--dump-dom")
check("demo-no-console", console == [], console)
marks = re.findall(r'<circle class="mark[^"]*" data-v0="(\d+)" data-v1="(\d+)"', dom)
check("demo-one-mark-per-version", [int(a) for a, b in marks] == list(range(1, 13))
      and all(a == b for a, b in marks), marks)
check("demo-script-counts-12", "(12 marks)</title>" in dom, dom[:300])
check("demo-hover-titles", len(re.findall(r"<title>v\d+ 2026-12-02T", dom)) == 12, "")
check("demo-tags", ">indexed (v6)<" in dom and ">compacted (v10)<" in dom, "")
_, console = chromium(path, "--screenshot=" + os.path.join(ART, "history-demo.png"))
check("demo-screenshot", os.path.getsize(os.path.join(ART, "history-demo.png")) > 10000, "")

subprocess.run([LV, "cleanup", DS, "--retain-versions", "4", "--older-than", "0s", "-q",
                "--no-error-if-tagged-old-versions"], capture_output=True)
st, html, path = page(DS, "cleaned")
dom, console = chromium(path, "--dump-dom")
check("cleaned-shaded", st == 0 and console == [] and dom.count('<rect class="cleaned"') >= 1
      and "cleaned up: v1-" in dom, (st, console))
check("cleaned-marks-still-12", len(re.findall(r'<circle class="mark', dom)) == 12, "")
st, html, path = page(DS, "since", "--since", "indexed")
check("since-indexed", st == 0 and len(re.findall(r'<circle class="mark', html)) == 7, st)

# a gap (versions 5-7: manifests gone before any checkpoint) is shaded, and the 17 recorded
# versions have a mark each
GAP = os.path.join(T, "gap.lance")
subprocess.run([GEN, GAP, "--versions", "20", "--fragments", "2"], check=True, capture_output=True)
for v in (5, 6, 7):
    os.unlink(os.path.join(GAP, "_versions", "%d.manifest" % (2**64 - 1 - v)))
st, html, path = page(GAP, "gap")
dom, console = chromium(path, "--dump-dom")
check("gap-shaded", st == 0 and console == [] and dom.count('<rect class="gap"') == 1
      and "gap: no record of v5-7" in dom, (st, console))
check("gap-marks", len(re.findall(r'<circle class="mark', dom)) == 17, "")

# a large history is binned: 5,000 versions in at most 2,000 marks covering each version once
BIG = os.path.join(T, "big.lance")
subprocess.run([GEN, BIG, "--versions", "5000", "--fragments", "2"], check=True, capture_output=True)
st, html, path = page(BIG, "big")
dom, console = chromium(path, "--dump-dom")
marks = [(int(a), int(b)) for a, b in re.findall(r'data-v0="(\d+)" data-v1="(\d+)"', dom)]
covered = sorted(v for a, b in marks for v in range(a, b + 1))
check("binned", st == 0 and console == [] and 0 < len(marks) <= 2000 and covered == list(range(1, 5001)),
      (st, console, len(marks)))
check("binned-small", len(html) < 1_000_000, len(html))
chromium(path, "--screenshot=" + os.path.join(ART, "history-binned.png"))

# usage: html is history's; not with --reverse
p = subprocess.run([LV, "versions", DS, "--format", "html"], capture_output=True, text=True)
check("html-versions-refused", p.returncode == 2 and "--format html is history's" in p.stderr, p.stderr)
p = subprocess.run([LV, "history", DS, "--format", "html", "--reverse"], capture_output=True, text=True)
check("html-reverse-refused", p.returncode == 2, p.stderr)

shutil.rmtree(T, ignore_errors=True)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
