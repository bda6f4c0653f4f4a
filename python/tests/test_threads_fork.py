"""Threads and processes.

* The GIL is released during library calls, shown causally (no timing threshold): the
  dataset is an s3:// URI whose S3 endpoint is an HTTP server running in a Python thread of
  this process, so the library's call can only get its answer ("not a Lance dataset": the
  bucket is empty) if Python code runs while the call is in progress.  The same call made
  through ctypes.PyDLL, which keeps the GIL, gets no answer and fails on the stall timeout,
  which shows the check can fail.
* Two threads run history() on two datasets in parallel and get the sequential answers.
* After fork(): a child uses the Dataset it inherited (even one whose lock another thread
  held at fork time) and new ones; a multiprocessing pool (fork context) maps history()
  over several datasets.
"""

import ctypes
import http.server
import multiprocessing
import os
import threading
import time

import pytest

import lancever
from lancever import _lib
from conftest import gen_dataset

EMPTY_LISTING = (b'<?xml version="1.0" encoding="UTF-8"?>'
                 b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                 b"<Name>bucket</Name><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys>"
                 b"<IsTruncated>false</IsTruncated></ListBucketResult>")


class _EmptyBucket(http.server.BaseHTTPRequestHandler):
    """Answers every GET with an empty ListObjectsV2 page (and counts the requests)."""

    requests = 0

    def do_GET(self):
        type(self).requests += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(EMPTY_LISTING)))
        self.end_headers()
        self.wfile.write(EMPTY_LISTING)

    def log_message(self, *a):
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # the PyDLL control's client gives up before the answer: a broken pipe, expected


@pytest.fixture
def python_s3(monkeypatch):
    """An S3 endpoint served by a Python thread on 127.0.0.1 (a free port); yields its URL."""
    server = _QuietServer(("127.0.0.1", 0), _EmptyBucket)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example-secret")
    monkeypatch.setenv("LANCEVER_S3_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("LANCEVER_S3_STALL_SECONDS", "2")
    _EmptyBucket.requests = 0
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def raw_history(lib, uri, endpoint):
    """lv_dataset_open + lv_history through `lib`; returns (status, message)."""
    ds, out, err, storage = ctypes.c_void_p(), ctypes.c_void_p(), _lib.LvError(), ctypes.c_void_p()
    P = ctypes.POINTER
    lib.lv_storage_options_new.argtypes = [P(ctypes.c_void_p), ctypes.c_void_p]
    lib.lv_storage_options_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p]
    lib.lv_storage_options_free.argtypes = [ctypes.c_void_p]
    assert lib.lv_storage_options_new(ctypes.byref(storage), ctypes.byref(err)) == 0
    for k, v in ((b"aws_endpoint", endpoint.encode()), (b"aws_region", b"us-east-1"), (b"allow_http", b"true")):
        assert lib.lv_storage_options_set(storage, k, v, ctypes.byref(err)) == 0
    opts = _lib.new(_lib.OpenOptions, storage=storage.value)  # lv_open_options_init, then the field
    lib.lv_dataset_open.argtypes = [P(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.lv_history.argtypes = [P(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.lv_dataset_free.argtypes = [ctypes.c_void_p]
    assert lib.lv_dataset_open(ctypes.byref(ds), uri.encode(), ctypes.byref(opts), ctypes.byref(err)) == 0
    lib.lv_storage_options_free(storage)
    rc = lib.lv_history(ctypes.byref(out), ds, None, ctypes.byref(err))
    lib.lv_dataset_free(ds)
    return rc, err.message.decode()


def test_gil_is_released_during_calls(python_s3):
    path = lancever.library_path()
    rc, msg = raw_history(ctypes.CDLL(path), "s3://bucket/t.lance", python_s3)
    assert rc == lancever.NotFoundError.code and "not a Lance dataset" in msg, msg
    assert _EmptyBucket.requests > 0
    # Control: through PyDLL the GIL stays held, the server thread cannot answer, the call stalls.
    _EmptyBucket.requests = 0
    rc, msg = raw_history(ctypes.PyDLL(path), "s3://bucket/u.lance", python_s3)
    assert rc != 0 and "not a Lance dataset" not in msg, msg


def test_package_calls_release_the_gil(python_s3):
    """The same through the package: every Dataset call is a CDLL call."""
    ds = lancever.Dataset("s3://bucket/t.lance", storage_options={
        "endpoint": python_s3, "region": "us-east-1", "allow_http": "true"})
    for call in (ds.history, ds.versions, ds.history_stream):
        with pytest.raises(lancever.NotFoundError, match="not a Lance dataset"):
            call()
    with pytest.raises(lancever.NotFoundError):
        ds.cleanup_old_versions(retain_versions=1, dry_run=True)


def test_two_threads_in_parallel(tmp_path):
    big = gen_dataset(tmp_path / "big.lance", 3000)
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


def test_fork_child_uses_inherited_and_new_datasets(tmp_path):
    big = gen_dataset(tmp_path / "big.lance", 500)
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
            ok &= len(lancever.Dataset(big).versions()) == 500
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
