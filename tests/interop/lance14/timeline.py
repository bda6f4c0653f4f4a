"""Synthetic history times for Lance 14 datasets built by pylance (issue 25, twin tests).

pylance's cleanup compares manifest timestamps with its own wall clock and file mtimes with
now - 7 days; it has no clock to set.  So a dataset is built at full speed, each commit's new
files recorded, and then history is moved back in time: commit k's manifest timestamp (field 7,
google.protobuf.Timestamp seconds, patched in place at the same varint length) becomes
now - ages[k], and the files commit k created get that time as mtime (a second earlier).
Invariants: file names and sizes are untouched; only the manifests' seconds and mtimes change,
so both peers see the same, stable history, and cutoffs hours apart cannot be blurred by the
milliseconds between the two cleanups.  A copy must keep mtimes (shutil.copytree, copy2).
"""
import os
import struct
import time


def walk(root, skip=()):
    """Every file below root, as a set of '/'-separated relative paths."""
    out = set()
    for d, _, files in os.walk(root):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
            if not any(rel.startswith(s) for s in skip):
                out.add(rel)
    return out


def _varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def _enc(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def patch_manifest_seconds(path, seconds):
    """Sets the manifest's timestamp seconds (Manifest field 7, Timestamp field 1) in place."""
    b = bytearray(open(path, "rb").read())
    assert b[-4:] == b"LANC", path
    pos = struct.unpack_from("<Q", b, len(b) - 16)[0]
    n = struct.unpack_from("<I", b, pos)[0]
    i, end = pos + 4, pos + 4 + n
    while i < end:
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            _, i = _varint(b, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            ln, i = _varint(b, i)
            if num == 7:
                j = i
                while j < i + ln:
                    k2, j = _varint(b, j)
                    old_at = j
                    _, j = _varint(b, j)
                    if k2 == (1 << 3):
                        enc = _enc(seconds)
                        assert len(enc) == j - old_at, "timestamp varint length would change"
                        b[old_at:j] = enc
                        with open(path, "wb") as f:
                            f.write(b)
                        return
            i += ln
        else:
            raise AssertionError(f"{path}: wire type {wire}")
    raise AssertionError(f"{path}: no timestamp")


class Timeline:
    """Records the files each commit adds; age() moves them back afterwards."""

    SKIP = ("_refs/",)

    def __init__(self, root):
        self.root = root
        self.seen = set()
        self.events = []  # (label, [new files])

    def mark(self, label):
        now = walk(self.root, self.SKIP)
        new = sorted(p for p in now - self.seen if not p.endswith("latest_version_hint.json"))
        self.seen = now
        self.events.append((label, new))

    def age(self, ages, now=None):
        """ages[k]: seconds before now for event k (one per mark())."""
        assert len(ages) == len(self.events), (len(ages), [e[0] for e in self.events])
        now = now or time.time()
        for (label, files), a in zip(self.events, ages):
            t = int(now - a)
            for rel in files:
                p = os.path.join(self.root, rel)
                if rel.endswith(".manifest") and "/_versions/" in "/" + rel:
                    patch_manifest_seconds(p, t)
                    os.utime(p, (t, t))
                else:
                    os.utime(p, (t - 1, t - 1))
