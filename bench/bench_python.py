"""Times the lancever Python package on one dataset (run by bench/bench_python.mjs with
Debian's /usr/bin/python3; PYTHONPATH=python/, LANCEVER_LIBRARY=the Release library).

    python3 bench/bench_python.py DATASET --runs N

Each case opens a fresh Dataset and is timed with time.perf_counter (median of N runs
after one warm-up):
  c_call     lv_history through ctypes, nothing converted (the library's own cost)
  dicts      Dataset.history(): the list of dicts (pylance's shape plus lancever's columns)
  arrow      Dataset.history_stream() and a C-level walk of every record batch through
             the capsule (what pyarrow.table() would start from; no per-row Python objects)
  pandas     Dataset.history().to_pandas()
  versions   Dataset.versions(): the live versions as pylance 14 returns them (version,
             naive local timestamp, metadata of strings), rows built by the C accelerator
             lancever._rows when the build made it ("accelerated" says)
  versions_py  the same with the rows built in Python (the accelerator set aside)
With --pylance (the Lance 14 peer's venv: pylance 14, pyarrow, polars), also:
  pylance     lance.dataset(path).versions() (pylance 14.0.2; open included, as for lancever)
  history_pa  pyarrow.table(Dataset.history().arrow())
  history_pl  polars.DataFrame(Dataset.history().arrow())
and, before timing, a check that lancever's versions() == pylance's (exit 1 if not).
Prints one JSON line: {case: {"median_ms", "ms": [...], "rows": N}, ...}.
"""

import ctypes
import json
import statistics
import sys
import time

import lancever
from lancever import _accel, _arrow, _lib


def c_call(path):
    lib = _lib.lib()
    ds = ctypes.c_void_p()
    out = ctypes.c_void_p()
    err = _lib.LvError()
    # no options: the defaults (works with the packages and libraries before and after issue 26)
    assert lib.lv_dataset_open(ctypes.byref(ds), path.encode(), None, ctypes.byref(err)) == 0
    assert lib.lv_history(ctypes.byref(out), ds, None, ctypes.byref(err)) == 0, err.message
    n = lib.lv_version_list_count(out)
    lib.lv_version_list_free(out)
    lib.lv_dataset_free(ds)
    return n


def dicts(path):
    return len(lancever.Dataset(path).history())


def arrow(path):
    cap = lancever.Dataset(path).history_stream().__arrow_c_stream__()
    rows, _ = _arrow.walk_batches(_arrow.stream_from_capsule(cap))
    return rows


def pandas(path):
    return len(lancever.Dataset(path).history().to_pandas())


def versions(path):
    return len(lancever.Dataset(path).versions())


def versions_py(path):
    """versions() with the rows built in Python (the C accelerator lancever._rows set aside)."""
    saved = _accel._module
    _accel._module = None
    try:
        return len(lancever.Dataset(path).versions())
    finally:
        _accel._module = saved


def pylance(path):
    import lance
    return len(lance.dataset(path).versions())


def history_pa(path):
    import pyarrow as pa
    return pa.table(lancever.Dataset(path).history().arrow()).num_rows


def history_pl(path):
    import polars as pl
    return pl.DataFrame(lancever.Dataset(path).history().arrow()).height


def _to_ms(rows):
    return [dict(r, timestamp=r["timestamp"].replace(microsecond=r["timestamp"].microsecond // 1000 * 1000))
            for r in rows]


def check_equal(path):
    """"exact" when lancever's versions() == pylance's; "ms" when equal once pylance's times
    are cut to the millisecond (rows a checkpoint answers: it keeps ms); else exit 1."""
    import lance
    theirs, ours = lance.dataset(path).versions(), lancever.Dataset(path).versions()
    if ours == theirs:
        return "exact"
    theirs = _to_ms(theirs)
    if ours == theirs:
        return "ms"
    bad = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    print(f"bench_python: versions() differs from pylance's at row {bad} "
          f"({len(ours)} vs {len(theirs)} rows)", file=sys.stderr)
    sys.exit(1)


def main():
    path = sys.argv[1]
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 7
    with_lance = "--pylance" in sys.argv
    out = {"python": sys.executable, "version": sys.version.split()[0],
           "library": lancever.library_path(), "accelerated": _accel.accelerated()}
    cases = [("c_call", c_call), ("dicts", dicts), ("arrow", arrow), ("pandas", pandas),
             ("versions", versions), ("versions_py", versions_py)]
    if with_lance:
        import lance
        out["pylance_version"] = lance.__version__
        out["equal_to_pylance"] = check_equal(path)
        cases += [("pylance", pylance), ("history_pa", history_pa), ("history_pl", history_pl)]
    for name, fn in cases:
        n = fn(path)  # warm-up
        ms = []
        for _ in range(runs):
            t = time.perf_counter()
            assert fn(path) == n
            ms.append((time.perf_counter() - t) * 1000)
        out[name] = {"median_ms": statistics.median(ms), "ms": ms, "rows": n}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
