"""Commit times that test the naive local datetimes of versions() against pylance 14's own
arithmetic: the reference formulas and the cases (random, DST changes, the epoch, second
boundaries).  Imported by the subprocess checks of test_dataset.py (the package's Python rows)
and test_rows_accel.py (the C accelerator), which run under several TZ values."""

import random
from datetime import datetime, timedelta


def pylance(ns):
    """pylance 14's versions(): lance/dataset.py, float arithmetic and all."""
    return datetime.fromtimestamp(ns // 1e9) + timedelta(microseconds=(ns % 1e9) // 1e3)


def from_ms(ms):
    """A checkpoint row's time (ms only), as a naive local datetime."""
    return datetime.fromtimestamp(ms // 1000) + timedelta(milliseconds=ms % 1000)


def cases(seed):
    """(ns, ms): 20,000 random values of each plus the edges."""
    rnd = random.Random(seed)
    edges = [1699162200, 1710054000, 1730613600, 0, -1, 1733355699]  # US DST changes, the epoch
    ns = [rnd.randrange(-2 * 10**18, 4 * 10**18) for _ in range(20000)]
    ns += [s * (b + d) * 10**9 + s * f for b in edges for d in range(-3, 4) for s in (1, -1)
           for f in (0, 1, 255, 256, 999, 500_000_000, 999_999_744, 999_999_999)]
    ms = [rnd.randrange(-8 * 10**12, 8 * 10**12) for _ in range(20000)]
    ms += [b * 1000 + d for b in edges for d in range(-2000, 2000, 7)]
    return ns, ms
