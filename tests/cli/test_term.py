#!/usr/bin/env python3
"""The terminal rows of issue 29 (src/cli/term.c): the pager and colour.

    test_term.py LANCEVER DEMO_DATASET GEN_DATASET

On a pseudo-terminal (python's pty module) a listing goes through the pager -- a fake pager
script that records that it ran, its arguments' environment (LESS) and its input -- and never
when stdout is a pipe or a file, nor with --no-pager; $LANCEVER_PAGER wins over $PAGER; a pager
that quits before reading everything ends lancever with status 0 and nothing on stderr;
--color=always|never|auto and NO_COLOR.  Prints "N passed, M failed"; exits 1 on a failure.
"""
import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile

LV, SRC, GEN = sys.argv[1], sys.argv[2], sys.argv[3]
T = tempfile.mkdtemp(prefix="lv-term-test.")
BIG = os.path.join(T, "big.lance")  # 400 versions: history --json is ~370 kB, more than a pipe holds
subprocess.run([GEN, BIG, "--versions", "400", "--fragments", "2"], check=True, capture_output=True)
DS = os.path.join(T, "ds.lance")
shutil.copytree(SRC, DS)
RAN = os.path.join(T, "ran")
FAKE = os.path.join(T, "fake-pager.sh")
with open(FAKE, "w") as f:
    # records that it ran and the LESS it was given, then shows its input
    f.write('#!/bin/sh\necho "ran LESS=${LESS-unset}" >> "%s"\ncat\n' % RAN)
QUIT = os.path.join(T, "quit-pager.sh")
with open(QUIT, "w") as f:
    # a user who quits at once: input closed unread, the pager still on screen a moment
    f.write('#!/bin/sh\necho ran >> "%s"\nexec 0<&-\nsleep 0.5\n' % RAN)

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s %s" % (name, detail))


def env_with(**kw):
    """The environment without the user's pager and colour settings (pager: cat, none)."""
    e = {k: v for k, v in os.environ.items()
         if k not in ("LANCEVER_PAGER", "PAGER", "LESS", "NO_COLOR", "TERM")}
    e["TERM"] = "xterm"
    e["LANCEVER_PAGER"] = "cat"
    for k, v in kw.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return e


def drain(master):
    """Everything written to a pseudo-terminal until its last writer is gone (or 20 s pass
    with nothing new)."""
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 20)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer of the terminal has gone
            break
        if not chunk:
            break
        out += chunk
    return out


def on_pty(args, env, stderr_pty=True):
    """Runs lancever with stdout (and stderr) on a pseudo-terminal: (status, output, stderr)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([LV] + args, stdin=subprocess.DEVNULL, stdout=slave,
                         stderr=slave if stderr_pty else subprocess.PIPE, env=env)
    os.close(slave)
    out = drain(master)
    err = p.stderr.read() if not stderr_pty else b""
    st = p.wait(timeout=30)
    os.close(master)
    return st, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def ran():
    if not os.path.exists(RAN):
        return []
    with open(RAN) as f:
        lines = f.read().splitlines()
    os.unlink(RAN)
    return lines


pager = "sh " + FAKE
# 1. a terminal: the pager runs, sees the listing, and LESS defaults to FRX
st, out, _ = on_pty(["versions", DS], env_with(LANCEVER_PAGER=pager))
r = ran()
check("pager-on-tty", st == 0 and r == ["ran LESS=FRX"] and "VERSION" in out, (st, r, out[:200]))
# 2. the user's LESS is left alone; $PAGER is used when $LANCEVER_PAGER is unset
st, out, _ = on_pty(["history", DS], env_with(LANCEVER_PAGER=None, PAGER=pager, LESS="S"))
r = ran()
check("pager-PAGER-LESS", st == 0 and r == ["ran LESS=S"] and "VERSION" in out, (st, r))
# 3. $LANCEVER_PAGER wins over $PAGER
st, out, _ = on_pty(["versions", DS], env_with(LANCEVER_PAGER=pager, PAGER="false"))
check("pager-LANCEVER_PAGER-first", st == 0 and ran() == ["ran LESS=FRX"], st)
# 4. --no-pager (a global option: anywhere), "cat" and "" mean none
for name, args, env in (
        ("no-pager", ["versions", DS, "--no-pager"], env_with(LANCEVER_PAGER=pager)),
        ("no-pager-first", ["--no-pager", "show", DS, "3"], env_with(LANCEVER_PAGER=pager)),
        ("pager-cat", ["versions", DS], env_with(LANCEVER_PAGER="cat", PAGER=pager)),
        ("pager-PAGER-cat", ["versions", DS], env_with(LANCEVER_PAGER=None, PAGER="cat")),
        ("pager-empty", ["versions", DS], env_with(LANCEVER_PAGER="", PAGER=pager))):
    st, out, _ = on_pty(args, env)
    r = ran()
    check(name, st == 0 and r == [] and "version" in out.lower(), (st, r, out[:200]))
# 5. not a listing: no pager (checkpoint), and cleanup only for --dry-run / --explain
st, out, _ = on_pty(["info", DS], env_with(LANCEVER_PAGER=pager))
check("no-pager-info", st == 0 and ran() == [], st)
st, out, _ = on_pty(["cleanup", DS, "--dry-run", "--retain-versions", "3",
                     "--no-error-if-tagged-old-versions"], env_with(LANCEVER_PAGER=pager))
r = ran()
check("pager-cleanup-dry-run", st == 0 and len(r) == 1, (st, r, out[:300]))
# 6. stdout a pipe or a file: never a pager, even with stderr on a terminal
for name, dest in (("pipe", subprocess.PIPE), ("file", open(os.path.join(T, "out"), "wb"))):
    p = subprocess.run([LV, "versions", DS], stdout=dest, stderr=subprocess.PIPE,
                       env=env_with(LANCEVER_PAGER=pager))
    r = ran()
    check("no-pager-" + name, p.returncode == 0 and r == [], (p.returncode, r))
# 7. the pager quits without reading: status 0, no message (before term.c's SIGPIPE handler, 141)
big = ["history", BIG, "--json"]
st, out, err = on_pty(big, env_with(LANCEVER_PAGER="sh " + QUIT), stderr_pty=False)
r = ran()
check("pager-quit-early", st == 0 and err == "" and r == ["ran"], (st, err, r))
# 8. --format arrow to a terminal is refused although the pager would make stdout a pipe
st, out, _ = on_pty(["versions", DS, "--format", "arrow"], env_with(LANCEVER_PAGER=pager))
check("arrow-tty-refused", st == 2 and "redirect stdout" in out, (st, out[:200]))
ran()

# colour
ESC = "\x1b["
p = subprocess.run([LV, "--color=always", "versions", DS, "--bad"], capture_output=True, text=True,
                   env=env_with())
check("color-always-error-red", p.returncode == 2 and p.stderr.startswith(ESC + "31m"), repr(p.stderr[:40]))
p = subprocess.run([LV, "--color", "never", "versions", DS, "--bad"], capture_output=True, text=True,
                   env=env_with())
check("color-never", p.returncode == 2 and ESC not in p.stderr, repr(p.stderr[:40]))
p = subprocess.run([LV, "--color=sometimes", "versions", DS], capture_output=True, text=True,
                   env=env_with())
check("color-bad-value", p.returncode == 2 and "--color wants auto, always or never" in p.stderr, p.stderr)
# auto: a pipe gets none
p = subprocess.run([LV, "versions", DS, "--bad"], capture_output=True, text=True, env=env_with())
check("color-auto-pipe", p.returncode == 2 and ESC not in p.stderr, repr(p.stderr[:40]))
# auto on a terminal: red; NO_COLOR: none; NO_COLOR loses to --color=always
st, out, _ = on_pty(["versions", DS, "--bad"], env_with())
check("color-auto-tty", st == 2 and ESC + "31m" in out, repr(out[:60]))
st, out, _ = on_pty(["versions", DS, "--bad"], env_with(NO_COLOR="1"))
check("color-NO_COLOR", st == 2 and ESC not in out, repr(out))
st, out, _ = on_pty(["--color=always", "versions", DS, "--bad"], env_with(NO_COLOR="1"))
check("color-always-beats-NO_COLOR", st == 2 and ESC + "31m" in out, repr(out[:60]))
# cleaned-up rows dimmed in history; the others not
subprocess.run([LV, "cleanup", DS, "--retain-versions", "4", "--older-than", "0s", "-q",
                "--no-error-if-tagged-old-versions"],
               capture_output=True, check=False)
p = subprocess.run([LV, "history", DS, "--color=always"], capture_output=True, text=True)
rows = p.stdout.splitlines()[1:]
dim = [r for r in rows if r.startswith(ESC + "2m")]
check("color-cleaned-dimmed", p.returncode == 0 and dim and all("  yes" in r for r in dim)
      and all("  yes" not in r for r in rows if r not in dim), p.stdout[:600])
# warnings yellow (a tag file that is not JSON is skipped with a warning)
BR = os.path.join(T, "broken.lance")
shutil.copytree(SRC, BR)
with open(os.path.join(BR, "_refs", "tags", "broken.json"), "w") as f:
    f.write("not json")
p = subprocess.run([LV, "--color=always", "tags", BR], capture_output=True, text=True, env=env_with())
check("color-warning-yellow", p.returncode == 0 and p.stderr.startswith(ESC + "33mlancever: warning: ")
      and p.stderr.rstrip("\n").endswith(ESC + "0m"), repr(p.stderr[:200]))
p = subprocess.run([LV, "tags", BR], capture_output=True, text=True, env=env_with())
check("color-warning-auto-pipe", p.returncode == 0 and p.stderr.startswith("lancever: warning: "), repr(p.stderr[:80]))
p = subprocess.run([LV, "history", DS, "--color=never"], capture_output=True, text=True)
check("color-never-history", p.returncode == 0 and ESC not in p.stdout, p.stdout[:200])

# display width: a tag named ünïcode-日本 (13 characters, 15 columns) does not shift the tags
# table, under a UTF-8 locale or LC_ALL=C (width.c's own table: no locale needed)
import unicodedata


def cols(text):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


WDS = os.path.join(T, "wide.lance")
shutil.copytree(SRC, WDS)
with open(os.path.join(SRC, "_refs", "tags", "indexed.json")) as f:
    tag = f.read()
for name in ("%C3%BCn%C3%AFcode-%E6%97%A5%E6%9C%AC", "e%CC%81t%CC%81e%CC%81", "plain"):
    with open(os.path.join(WDS, "_refs", "tags", name + ".json"), "w") as f:
        f.write(tag)
for loc in ("C.UTF-8", "C"):
    p = subprocess.run([LV, "tags", WDS], capture_output=True, env=env_with(LC_ALL=loc))
    lines = p.stdout.decode().splitlines()
    at = {cols(l[:l.index(" 6 ")]) for l in lines if " 6 " in l}
    check("width-tags-" + loc, p.returncode == 0 and len(lines) >= 5 and len(at) == 1, (at, lines))
# sizes: readable in text, raw with --bytes (a global option), raw in JSON always
GB = os.path.join(T, "sized.lance")
subprocess.run([GEN, GB, "--versions", "2", "--fragments", "2000"], check=True, capture_output=True)
p = subprocess.run([LV, "versions", GB], capture_output=True, text=True)
check("size-readable", p.returncode == 0 and "SIZE" in p.stdout and " 1.9 MB" in p.stdout, p.stdout)
p = subprocess.run([LV, "--bytes", "versions", GB], capture_output=True, text=True)
raw = p.stdout.splitlines()[1].split()[6] if p.returncode == 0 else ""
p2 = subprocess.run([LV, "versions", GB, "--json"], capture_output=True, text=True)
import json
js = json.loads(p2.stdout) if p2.returncode == 0 else []
check("size-bytes", raw.isdigit() and js and int(raw) == js[0]["total_files_size"], (raw, p.stdout[:300]))
p = subprocess.run([LV, "versions", GB, "--json", "--bytes"], capture_output=True, text=True)
check("size-json-raw", p.stdout == p2.stdout, p.stdout[:200])
p = subprocess.run([LV, "show", WDS, "3"], capture_output=True, text=True)
check("size-show", "data files               3 (2.8 kB)" in p.stdout and "manifest size            583 B" in p.stdout, p.stdout)
p = subprocess.run([LV, "show", WDS, "3", "--bytes"], capture_output=True, text=True)
check("size-show-bytes", "(2763 bytes)" in p.stdout and "manifest size            583 bytes" in p.stdout, p.stdout)

# progress: cleanup's phases with percent, rate and ETA on a terminal (a delete rate limit makes
# it last ~1.5 s), JSON lines with --progress=json, nothing when piped, --quiet or never
def fresh(n):
    d = os.path.join(T, "prog%d.lance" % n)
    subprocess.run([GEN, d, "--versions", "400", "--fragments", "2"], check=True, capture_output=True)
    return d


CL = ["cleanup", None, "--retain-versions", "10", "--delete-rate-limit", "300"]


def cl(d):
    return [d if a is None else a for a in CL]


st, out, _ = on_pty(cl(fresh(1)), env_with())
check("progress-tty", st == 0 and "removing old manifests" in out and "%" in out and "/s" in out
      and "ETA" in out and "\r\x1b[K" in out, repr(out[-600:]))
last = out.split("\r\x1b[K")[-1]
check("progress-tty-cleared", "removing old manifests" not in last, repr(last[:200]))
p = subprocess.run([LV] + cl(fresh(2)), capture_output=True, text=True, env=env_with())
check("progress-piped-none", p.returncode == 0 and "\r" not in p.stderr and "removing" not in p.stderr, repr(p.stderr[:200]))
st, out, _ = on_pty(["--quiet"] + cl(fresh(3)), env_with())
check("progress-quiet-none", st == 0 and "removing old manifests" not in out, repr(out[:300]))
st, out, _ = on_pty(["--progress=never"] + cl(fresh(4)), env_with())
check("progress-never-none", st == 0 and "removing old manifests" not in out, repr(out[:300]))
p = subprocess.run([LV, "--progress", "json"] + cl(fresh(5)), capture_output=True, text=True, env=env_with())
recs = []
bad_lines = []
for line in p.stderr.splitlines():
    try:
        recs.append(json.loads(line))
    except ValueError:
        bad_lines.append(line)
keys = {"phase", "done", "total", "percent", "rate", "eta_s", "elapsed_ms"}
rm = [r for r in recs if r["phase"] == "removing old manifests"]
check("progress-json", p.returncode == 0 and not bad_lines and recs and all(set(r) == keys for r in recs)
      and rm and rm[-1]["done"] == rm[-1]["total"] == 390 and rm[-1]["percent"] == 100.0
      and any(r["rate"] and r["eta_s"] is not None and r["eta_s"] > 0 for r in rm)
      and recs[-1]["phase"] == "done", (bad_lines, recs[-3:]))
p = subprocess.run([LV, "--progress=sometimes", "versions", DS], capture_output=True, text=True)
check("progress-bad-value", p.returncode == 2 and "--progress wants auto, json or never" in p.stderr, p.stderr)
# quick work (a checkpoint of 12 versions) draws no ticker on a terminal
st, out, _ = on_pty(["checkpoint", WDS], env_with())
check("progress-quick-checkpoint-silent", st == 0 and "\x1b[K" not in out, repr(out))

# the ticker (work without steps: history to a file) and the steps of checkpoint and check:
# phase, cleared at the end; LANCEVER_PROGRESS_DELAY_MS=0 draws at once (the default waits
# 500 ms, so quick work draws nothing)
def err_on_pty(args, env):
    """stdout to a file, stderr on a pseudo-terminal: (status, what the terminal got)."""
    master, slave = pty.openpty()
    with open(os.path.join(T, "ticker.out"), "wb") as out:
        p = subprocess.Popen([LV] + args, stdin=subprocess.DEVNULL, stdout=out, stderr=slave, env=env)
        os.close(slave)
        got = drain(master)
        st = p.wait(timeout=30)
    os.close(master)
    return st, got.decode("utf-8", "replace")


now = env_with(LANCEVER_PROGRESS_DELAY_MS="0")
st, got = err_on_pty(["history", DS, "--json"], now)
check("ticker-history-to-file", st == 0 and "reading history" in got and got.endswith("\r\x1b[K"), repr(got))
st, got = err_on_pty(["history", DS, "--json"], env_with())
check("ticker-quick-silent", st == 0 and got == "", repr(got))
st, got = err_on_pty(["checkpoint", WDS], now)
check("ticker-checkpoint", st == 0 and "writing checkpoint" in got and got.endswith("\r\x1b[K"), repr(got))
st, got = err_on_pty(["check", WDS], now)
check("ticker-check", st in (0, 1) and "checking" in got, repr(got))
st, out, _ = on_pty(["history", DS], now)
check("ticker-not-beside-a-table", st == 0 and "reading history" not in out, repr(out[:200]))
p = subprocess.run([LV, "--progress=json", "history", DS, "--json"], capture_output=True, text=True, env=now)
recs = [json.loads(l) for l in p.stderr.splitlines()]
check("ticker-json", p.returncode == 0 and recs and recs[0]["phase"] == "reading history"
      and recs[-1]["phase"] == "done" and recs[-1]["done"] == 12, p.stderr)
p = subprocess.run([LV, "history", DS, "--json"], capture_output=True, text=True, env=now)
check("ticker-piped-none", p.returncode == 0 and p.stderr == "", repr(p.stderr))

# checkpoint and check report steps (issue 29): percent and rate on a terminal, JSON lines whose
# done only grows within a phase, each counted phase ending at 100%, "done" last
def gen(n, name):
    d = os.path.join(T, name)
    subprocess.run([GEN, d, "--versions", str(n), "--fragments", "1"], check=True, capture_output=True)
    return d


CP2K = gen(2000, "cp2k.lance")
st, got = err_on_pty(["checkpoint", CP2K], now)
check("steps-checkpoint-tty", st == 0 and "reading manifests" in got and "/2000" in got and "%" in got
      and "/s" in got and "verifying" in got and got.endswith("\r\x1b[K"), repr(got[-400:]))
st, got = err_on_pty(["check", CP2K], now)
check("steps-check-tty", st == 0 and "checking manifests" in got and "2000/2000 100%" in got
      and got.endswith("\r\x1b[K"), repr(got[-400:]))
p = subprocess.run([LV, "check", CP2K], capture_output=True, text=True, env=now)
check("steps-check-piped-none", p.returncode == 0 and p.stderr == "", repr(p.stderr[:200]))


def steps_json(args, counted):
    """Runs with --progress=json: (status, records, problems with the contract)."""
    p = subprocess.run([LV, "--progress=json"] + args, capture_output=True, text=True, env=env_with())
    bad = []
    try:
        recs = [json.loads(l) for l in p.stderr.splitlines()]
    except ValueError as e:
        return p.returncode, [], ["not JSON: %s %r" % (e, p.stderr[:300])]
    for a, b in zip(recs, recs[1:]):
        if a["phase"] == b["phase"] and a["total"] == b["total"] and b["done"] < a["done"]:
            bad.append("done went back: %r -> %r" % (a, b))
    for r in recs:
        if r["total"] is not None and not (0 <= r["done"] <= r["total"]):
            bad.append("done beyond total: %r" % r)
    for ph in counted:
        last = [r for r in recs if r["phase"] == ph]
        if not last or last[-1]["done"] != last[-1]["total"] or last[-1]["percent"] != 100.0:
            bad.append("%s does not end at 100%%: %r" % (ph, last[-1:]))
    if not recs or recs[-1]["phase"] != "done":
        bad.append("not ended by done: %r" % recs[-1:])
    return p.returncode, recs, bad


st, recs, bad = steps_json(["checkpoint", gen(2000, "cp2k-json.lance")],
                           ["reading manifests", "writing checkpoint", "verifying"])
rm = [r for r in recs if r["phase"] == "reading manifests"]
check("steps-checkpoint-json", st == 0 and not bad and recs[0]["phase"] == "listing"
      and rm and rm[-1]["total"] == 2000, (bad, recs[:3]))
st, recs, bad = steps_json(["check", CP2K], ["checking manifests", "checking checkpoints"])
cm = [r for r in recs if r["phase"] == "checking manifests"]
check("steps-check-json", st == 0 and not bad and cm and cm[-1]["total"] == 2000, (bad, recs[:3]))

# a run that fails after drawing clears its line before the error (main printed the error after
# "reading manifests 12/12 100% 4.0k/s", on the same line)
TAGGED = os.path.join(T, "tagged.lance")
shutil.copytree(SRC, TAGGED)
st, out, _ = on_pty(["cleanup", TAGGED, "--older-than", "0s"], now)
i = out.find("lancever: 2 tagged version(s)")
check("steps-cleared-before-error", st == 1 and i > 0 and out[:i].endswith("\r\x1b[K"), repr(out[:300]))

shutil.rmtree(T)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
