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
             naive local timestamp, metadata of strings)
Prints one JSON line: {case: {"median_ms", "ms": [...]}, "rows": N, "live": L}.
"""

import ctypes
import json
import statistics
import sys
import time

import lancever
from lancever import _arrow, _lib


def c_call(path):
    lib = _lib.lib()
    ds = ctypes.c_void_p()
    out = ctypes.c_void_p()
    err = _lib.LvError()
    opts = _lib.OpenOptions(_lib.OPEN_OPTIONS_VERSION, 0, None,
                            _lib.StorageOptions(_lib.STORAGE_OPTIONS_VERSION, None, None, False, 0))
    assert lib.lv_dataset_open(ctypes.byref(ds), path.encode(), ctypes.byref(opts), ctypes.byref(err)) == 0
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


def main():
    path = sys.argv[1]
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 7
    out = {"python": sys.executable, "version": sys.version.split()[0],
           "library": lancever.library_path()}
    for name, fn in (("c_call", c_call), ("dicts", dicts), ("arrow", arrow), ("pandas", pandas),
                     ("versions", versions)):
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
