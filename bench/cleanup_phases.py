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

# Phases that run interleaved (the sweep's files and the old manifests behind its marks) are one
# span: a phase seen again merges every span since its first into one, named "a + b".
groups = []  # [names, start]
for ph, a in seen:
    k = next((g for g in range(len(groups)) if ph in groups[g][0]), None)
    if k is None:
        groups.append([[ph], a])
    else:
        for g in groups[k + 1:]:
            groups[k][0] += [n for n in g[0] if n not in groups[k][0]]
        del groups[k + 1:]
for i, (names, a) in enumerate(groups):
    b = groups[i + 1][1] if i + 1 < len(groups) else end
    sa, sb = at(a), at(b)
    du, ds = sb[1] - sa[1], sb[2] - sa[2]
    name = ' + '.join(names)
    print(f"{name:24s} {b - a:5.2f}s  user {du:5.2f} sys {ds:5.2f} cores {(du + ds) / max(b - a, 1e-9):4.2f}")
print(f"cleanup {end:.2f} s (exit {p.returncode})")
