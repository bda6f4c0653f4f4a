"""Threads and processes.

* The GIL is released during library calls: while one thread is inside a long C call
  (history over thousands of manifests), another thread keeps running Python code.  The
  check is causal, not a timing threshold: the second thread must log progress strictly
  inside the middle of the first thread's C call.  The same check run through
  ctypes.PyDLL (which keeps the GIL) must see no progress there, which shows the check can
  fail.
* Two threads run history() on two datasets in parallel and get the sequential answers.
* After fork(): a child uses the Dataset it inherited (even one whose lock another thread
  held at fork time) and new ones; a multiprocessing pool (fork context) maps history()
  over several datasets.
"""

import ctypes
import multiprocessing
import os
import threading
import time

import pytest

import lancever
from lancever import _lib
from conftest import gen_dataset


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """5,000 manifests, no checkpoint: history() reads them all (tens of ms or more)."""
    return gen_dataset(tmp_path_factory.mktemp("gil") / "big.lance", 5000)


def progress_inside_call(lib, path):
    """Runs lv_history on `path` through `lib` in this thread while another thread logs
    time.perf_counter(); returns the other thread's samples in the middle 60% of the call."""
    ds = ctypes.c_void_p()
    err = _lib.LvError()
    assert lib.lv_dataset_open(ctypes.byref(ds), str(path).encode(), None, ctypes.byref(err)) == 0
    samples, stop = [], threading.Event()

    def spin():
        while not stop.is_set():
            samples.append(time.perf_counter())
    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.05)  # the spinner is running
    out = ctypes.c_void_p()
    t0 = time.perf_counter()
    rc = lib.lv_history(ctypes.byref(out), ds, None, ctypes.byref(err))
    t1 = time.perf_counter()
    stop.set()
    t.join()
    assert rc == 0, err.message
    lib.lv_version_list_free(out)
    lib.lv_dataset_free(ds)
    lo, hi = t0 + 0.2 * (t1 - t0), t1 - 0.2 * (t1 - t0)
    return sum(1 for s in samples if lo < s < hi), t1 - t0


def declare(lib):
    lib.lv_dataset_open.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_void_p,
                                    ctypes.POINTER(_lib.LvError)]
    lib.lv_history.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_void_p,
                               ctypes.POINTER(_lib.LvError)]
    lib.lv_version_list_free.argtypes = [ctypes.c_void_p]
    lib.lv_dataset_free.argtypes = [ctypes.c_void_p]
    return lib


def test_gil_is_released_during_calls(big):
    path = lancever.library_path()
    inside, took = progress_inside_call(declare(ctypes.CDLL(path)), big)
    assert inside > 0, f"no Python progress during a {took * 1000:.0f} ms library call"
    # Control: through PyDLL the GIL is held for the whole call, and the check sees it.
    held, took2 = progress_inside_call(declare(ctypes.PyDLL(path)), big)
    assert held == 0, f"{held} samples inside a GIL-holding call of {took2 * 1000:.0f} ms"


def test_package_calls_release_the_gil(big):
    """The same through the package: Dataset.history() (its C call) lets a spinner run."""
    ds = lancever.Dataset(big)
    samples, stop = [], threading.Event()
    calls = []
    real = _lib.lib().lv_history

    def traced(*a):
        t0 = time.perf_counter()
        rc = real(*a)
        calls.append((t0, time.perf_counter()))
        return rc

    def spin():
        while not stop.is_set():
            samples.append(time.perf_counter())
    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.05)
    _lib.lib().lv_history = traced
    try:
        h = ds.history()
    finally:
        _lib.lib().lv_history = real
        stop.set()
        t.join()
    assert len(h) == 5000 and len(calls) == 1
    t0, t1 = calls[0]
    lo, hi = t0 + 0.2 * (t1 - t0), t1 - 0.2 * (t1 - t0)
    assert any(lo < s < hi for s in samples)


def test_two_threads_in_parallel(tmp_path, big):
    small = gen_dataset(tmp_path / "small.lance", 300)
    want = {str(p): [r["version"] for r in lancever.Dataset(p).history()] for p in (big, small)}
    got, errors = {}, []

    def work(p):
        try:
            for _ in range(3):
                got[str(p)] = [r["version"] for r in lancever.Dataset(p).history()]
        except BaseException as e:
            errors.append(e)
    threads = [threading.Thread(target=work, args=(p,)) for p in (big, small)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == want
    # One Dataset shared by two threads: calls are serialized, answers stay right.
    ds = lancever.Dataset(small)
    out = []
    ts = [threading.Thread(target=lambda: out.append(len(ds.history()))) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert out == [300] * 4


def wait_child(pid, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return "hung"


def test_fork_child_uses_inherited_and_new_datasets(tmp_path, big):
    small = gen_dataset(tmp_path / "small.lance", 50)
    ds = lancever.Dataset(small)
    want = [r["version"] for r in ds.history()]
    # Another thread is inside a call on `ds` (holding its lock) when we fork.
    started = threading.Event()
    holder = threading.Thread(target=lambda: (started.set(), ds._lock.acquire(), time.sleep(0.5),
                                              ds._lock.release()))
    holder.start()
    started.wait()
    time.sleep(0.05)
    pid = os.fork()
    if pid == 0:  # child: only this thread exists now
        code = 1
        try:
            ok = [r["version"] for r in ds.history()] == want
            ok &= [r["version"] for r in lancever.Dataset(small).history()] == want
            ok &= len(lancever.Dataset(big).versions()) == 5000
            code = 0 if ok else 3
        finally:
            os._exit(code)
    holder.join()
    assert wait_child(pid) == 0
    assert [r["version"] for r in ds.history()] == want  # the parent is unaffected


def _history_len(path):
    return len(lancever.Dataset(path).history())


def test_multiprocessing_pool_fork(tmp_path):
    paths = [str(gen_dataset(tmp_path / f"t{i}.lance", 10 + i)) for i in range(6)]
    lancever.Dataset(paths[0]).history()  # the parent has used the library before forking
    with multiprocessing.get_context("fork").Pool(3) as pool:
        assert pool.map(_history_len, paths) == [10 + i for i in range(6)]
