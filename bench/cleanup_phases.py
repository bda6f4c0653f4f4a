# Runs CMD (a `lancever cleanup ... --progress json`), samples its CPU time from /proc every
# 50 ms, and prints each progress phase's wall time, user and system CPU and cores, then the
# total.  Used by bench/cleanup_limit.sh.
#   python3 cleanup_phases.py CMD...
import json, os, subprocess, sys, threading, time

cmd = sys.argv[1:]
tick = os.sysconf('SC_CLK_TCK')
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
samples = []

def sample():
    while p.poll() is None:
        try:
            f = open(f'/proc/{p.pid}/stat').read().rsplit(')', 1)[1].split()
            samples.append((time.monotonic() - t0, int(f[11]) / tick, int(f[12]) / tick))
        except OSError:
            pass
        time.sleep(0.05)

th = threading.Thread(target=sample)
th.start()
report = []
reader = threading.Thread(target=lambda: report.append(p.stdout.read()))
reader.start()
seen = []
for line in p.stderr:
    if line.startswith('{'):
        ph = json.loads(line).get('phase')
        if not seen or seen[-1][0] != ph:
            seen.append([ph, time.monotonic() - t0])
p.wait()
th.join()
reader.join()
end = time.monotonic() - t0

def at(t):
    best = (0, 0, 0)
    for s in samples:
        if s[0] <= t:
            best = s
    return best

for i, (ph, a) in enumerate(seen):
    b = seen[i + 1][1] if i + 1 < len(seen) else end
    sa, sb = at(a), at(b)
    du, ds = sb[1] - sa[1], sb[2] - sa[2]
    print(f"{ph:24s} {b - a:5.2f}s  user {du:5.2f} sys {ds:5.2f} cores {(du + ds) / max(b - a, 1e-9):4.2f}")
print(f"cleanup {end:.2f} s (exit {p.returncode})")
